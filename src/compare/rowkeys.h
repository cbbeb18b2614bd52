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
int tl_rowkeys_settle(tl_table *const *t, const char *const *tags, size_t n, const char **keys, size_t *nkeys,
                      int exact, const char *sheet, tl_error *err);

#endif
