/*
 * rowkeys.h - SPEC §2 step 0, inside compare/: which keys a sheet's rows are paired on
 * (the group's own, extended with the sheet's row-key columns while keys repeat), and the
 * refusal of a merge too large for a worksheet, decided before anything is merged.
 */
#ifndef TL_ROWKEYS_H
#define TL_ROWKEYS_H

#include "table/table.h"

/*
 * Extend keys[0..*nkeys) (room for TL_ROW_KEYS_N more) with tl_row_keys while the keys
 * repeat within some table t[0..n) (unless `exact`, the --tracelens-keys pairing): each
 * candidate that every table has, in order, is kept when it tells some repeated rows
 * apart.  Warns (naming `sheet` and each report by tags[i]) when keys still repeat.
 * Returns 0, or -1 with *err set when the merge would make more than TL_SHEET_MAX_ROWS
 * rows or TL_MERGE_MAX_CELLS cells (the count is exact: a key in a rows of one report and
 * b of another makes a * b rows).
 */
/*
 * The name of the column tl_rowkeys_settle adds, when keys still repeat (and not `exact`),
 * to every table and to the keys (last): each row's place (0, 1, ...) among the rows of
 * its key value in its own table, in row order, so that the merge pairs the k-th row of a
 * value with the k-th (SPEC §2 step 0).  The merge removes it again.
 */
extern const char tl_rowkeys_ordinal[];

int tl_rowkeys_settle(tl_table *const *t, const char *const *tags, size_t n, const char **keys, size_t *nkeys,
                      int exact, const char *sheet, tl_error *err);

#endif
