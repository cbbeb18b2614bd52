/*
 * compare.h - comparing one sheet across reports (SPEC §2): prefix, outer merge, diff,
 * column order, row order, and the three-way split.
 */
#ifndef TL_COMPARE_H
#define TL_COMPARE_H

#include "table/table.h"

/* The merge refuses to make more rows than this (duplicate keys multiply: n x m rows),
 * or more cells (rows x columns) than TL_MERGE_MAX_CELLS (16 bytes each: 4 GiB). */
#define TL_MERGE_MAX_ROWS ((size_t)2000000)
#define TL_MERGE_MAX_CELLS ((size_t)1 << 28)

/* What one worksheet holds below its header row (Excel: 1,048,576 rows).  The merged size
 * is estimated from the key counts before anything is built, and a merge larger than a
 * worksheet is refused at once: its results could not be written anyway. */
#define TL_SHEET_MAX_ROWS ((size_t)1048575)

typedef struct tl_compare_spec {
    const char *sheet;         /* the sheet's name, for messages */
    const char *const *keys;   /* merge keys, in order */
    size_t nkeys;
    const char *const *diffs;  /* tracked metrics ("diff columns"), in order */
    size_t ndiffs;
    int tracelens_keys;        /* 1: the keys above only (no row-key step, SPEC §2 step 0) */
} tl_compare_spec;

/* The columns the row-key step (SPEC §2 step 0) adds to the keys while they repeat, in
 * this order; TL_ROW_KEYS_N of them. */
#define TL_ROW_KEYS_N 6
extern const char *const tl_row_keys[TL_ROW_KEYS_N];

/*
 * Steps 0-4 of SPEC §2 over tables[0..n) (baseline first), tagged tags[0..n).
 * The tables are consumed (freed), whatever the outcome.  A key or metric that some
 * report lacks is left out with a warning.  Unless spec->tracelens_keys, the keys are
 * extended by tl_row_keys while they repeat within a table (a warning when they still
 * do).  Returns the merged table, whose columns carry their role and tag (table.h), or
 * NULL with *err set (no keys left, or the merge would exceed TL_SHEET_MAX_ROWS rows,
 * TL_MERGE_MAX_ROWS or TL_MERGE_MAX_CELLS).
 */
tl_table *tl_compare(tl_table **tables, const char *const *tags, size_t n,
                     const tl_compare_spec *spec, tl_arena *arena, tl_error *err);

/* Step 5: order the rows by column `col`, descending, missing (and non-numeric) last,
 * ties in their present order. */
void tl_sort_desc(tl_table *t, size_t col);

typedef enum tl_split_kind {
    TL_SPLIT_INTERSECT,     /* <name>_intersect_<t> */
    TL_SPLIT_ONLY_BASELINE, /* <name>_only_baseline_<t> */
    TL_SPLIT_ONLY_VARIANT,  /* <name>_only_variant_<t> */
} tl_split_kind;

/*
 * One result of the split (SPEC §2, "Splitting") for variant number `variant` (>= 1):
 * the rows selected on the presence of the first diff column m0, the columns of the
 * baseline and/or the variant, ordered by the sort column, then every all-missing
 * column dropped.  base_m0/var_m0 and base_sort/var_sort are column indexes in `merged`.
 * `merged` is not changed.
 */
tl_table *tl_split(const tl_table *merged, tl_split_kind kind, int variant, size_t base_m0,
                   size_t var_m0, size_t base_sort, size_t var_sort);

/*
 * Free the cells of `merged`'s columns that no split after (kind, variant) reads, when
 * the splits are made in the order intersect, only_baseline, only_variant, variant by
 * variant up to `last_variant`: a variant's own and diff columns once its only_variant
 * split is made, the baseline's once the last variant's only_baseline split is.  The
 * keys and base_m0 (every split selects rows by it) stay.  A column freed so has NULL
 * cells; the table is freed whole as before.  The merged table and its splits are then
 * never all held at once.
 */
void tl_split_release(tl_table *merged, tl_split_kind kind, int variant, int last_variant, size_t base_m0);

#endif
