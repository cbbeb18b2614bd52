/*
 * result.h - the results of a comparison (or the sheets of a built report): named tables
 * with what the workbook hides, and the sink they stream into as they are made.
 */
#ifndef TL_RESULT_H
#define TL_RESULT_H

#include "table/table.h"

/* One result sheet of the comparison. */
typedef struct tl_result {
    const char *name;                  /* e.g. "GEMM_intersect_mi300" (arena) */
    tl_table *table;
    const char *const *hidden_suffixes; /* columns hidden in the workbook: NULL-terminated */
    size_t nrows, ncols;               /* its size (the table may be freed once written) */
    const char *csv_file;              /* NULL, or a file that holds this result's CSV text
                                          already, byte for byte: a CSV directory gets
                                          that file under a second name (or a copy)
                                          instead of the table written again */
} tl_result;

typedef struct tl_results {
    tl_result *items;
    size_t n, cap;
} tl_results;

void tl_results_free(tl_results *r);

/* Append table t as result `name` (both now the results'; nothing hidden), its size
 * taken from the table. */
void tl_results_add(tl_results *out, const char *name, tl_table *t);

/* 1 when the workbook hides column `name` of result `r`. */
int tl_result_hides(const tl_result *r, const char *name);

/*
 * Where results go, one at a time and in SPEC order, as soon as each is made: writing
 * them while the comparison goes on keeps only one group's tables in memory at a time.
 */
typedef struct tl_sink {
    /* Take result r (its table is the sink's from now on).  Returns 0 or -1 (err set). */
    int (*put)(void *ctx, const tl_result *r, tl_error *err);
    /* The memory of the first `upto` results is about to be reused: finish with their
     * tables.  Returns 0 or -1 (err set). */
    int (*sync)(void *ctx, size_t upto, tl_error *err);
    void *ctx;
} tl_sink;

/* A sink that appends every result to a tl_results (sync does nothing). */
tl_sink tl_results_sink(tl_results *out);

#endif
