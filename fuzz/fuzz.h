/*
 * fuzz.h - the fuzz targets' entry points.
 *
 * Each fuzz/fuzz_<target>.c defines tl_fuzz_<target>() and, unless TL_FUZZ_NO_MAIN is
 * defined, libFuzzer's LLVMFuzzerTestOneInput() calling it.  tests/test_regressions.c
 * includes all of them with TL_FUZZ_NO_MAIN, so that every input a fuzzer ever crashed on
 * (fuzz/regressions/<target>/) and every seed (fuzz/corpus/<target>/) is replayed
 * through exactly the code the fuzzer ran, by `make test`, under ASan + UBSan too.
 *
 * A target returns 0; it aborts (through a sanitizer or TL_FUZZ_CHECK) on a finding.
 */
#ifndef TL_FUZZ_H
#define TL_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "table/table.h"

int tl_fuzz_csv(const uint8_t *data, size_t size);
int tl_fuzz_xlsx(const uint8_t *data, size_t size);
int tl_fuzz_compare(const uint8_t *data, size_t size);
int tl_fuzz_trace(const uint8_t *data, size_t size);
int tl_fuzz_capture(const uint8_t *data, size_t size);
int tl_fuzz_open(const uint8_t *data, size_t size);
int tl_fuzz_run(const uint8_t *data, size_t size);
int tl_fuzz_ranks(const uint8_t *data, size_t size);

/* An invariant of the code under test: a violation is a finding, like a crash. */
#define TL_FUZZ_CHECK(cond)                                                                    \
    do {                                                                                       \
        if (!(cond)) {                                                                         \
            fprintf(stderr, "%s:%d: invariant violated: %s\n", __FILE__, __LINE__, #cond);     \
            abort();                                                                           \
        }                                                                                      \
    } while (0)

/* The invariants every table keeps; `fresh` for a table just read (before any merge):
 * its column names are unique and each column's cells agree with its type. */
static inline int tl_fuzz_cmp_name(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static inline void tl_fuzz_check_table(const tl_table *t, int fresh)
{
    TL_FUZZ_CHECK(t != NULL);
    TL_FUZZ_CHECK(t->ncols == 0 || t->cols != NULL);
    for (size_t c = 0; c < t->ncols; c++) {
        const tl_column *col = &t->cols[c];
        TL_FUZZ_CHECK(col->name != NULL);
        TL_FUZZ_CHECK(t->nrows == 0 || col->cells != NULL);
        TL_FUZZ_CHECK(col->type <= TL_COL_STR);
        for (size_t r = 0; r < t->nrows; r++) {
            const tl_cell *cell = &col->cells[r];
            TL_FUZZ_CHECK(cell->kind <= TL_STR);
            if (cell->kind == TL_STR) {
                TL_FUZZ_CHECK(cell->v.s != NULL);
                TL_FUZZ_CHECK(tl_cell_len(cell) == strlen(cell->v.s));
            }
            if (fresh && col->type == TL_COL_NUM)
                TL_FUZZ_CHECK(cell->kind == TL_MISSING || cell->kind == TL_INT ||
                              cell->kind == TL_FLOAT);
            if (fresh && col->type == TL_COL_BOOL)
                TL_FUZZ_CHECK(cell->kind == TL_MISSING || cell->kind == TL_BOOL);
        }
    }
    if (fresh && t->ncols > 1) {
        const char **names = malloc(t->ncols * sizeof *names);
        TL_FUZZ_CHECK(names != NULL);
        for (size_t c = 0; c < t->ncols; c++)
            names[c] = t->cols[c].name;
        qsort(names, t->ncols, sizeof *names, tl_fuzz_cmp_name);
        for (size_t c = 1; c < t->ncols; c++)
            TL_FUZZ_CHECK(strcmp(names[c - 1], names[c]) != 0);
        free(names);
    }
}

#ifdef TL_FUZZ_NO_MAIN
#define TL_FUZZ_ENTRY(fn)
#else
#define TL_FUZZ_ENTRY(fn)                                                                      \
    int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);                              \
    int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) { return fn(data, size); }
#endif

#endif
