/*
 * memreport.c - a report built in memory (see memreport.h).
 */
#include "run/memreport.h"

#include <stdlib.h>
#include <string.h>

typedef struct mem_sheet {
    const char *name;
    tl_table *table;
} mem_sheet;

typedef struct mem_report {
    tl_arena arena; /* the sheets' names and strings */
    mem_sheet *sheets;
    size_t n, cap;
    tl_builder b;
    const char *building; /* the sheet begun, or NULL */
} mem_report;

static long find(const mem_report *m, const char *sheet)
{
    for (size_t i = 0; i < m->n; i++)
        if (!strcmp(m->sheets[i].name, sheet))
            return (long)i;
    return -1;
}

static int mem_has_sheet(const tl_report *r, const char *sheet) { return find(r->impl, sheet) >= 0; }

tl_table *tl_table_copy(const tl_table *t)
{
    tl_table *c = tl_table_new();
    c->nrows = t->nrows;
    c->ncols = t->ncols;
    c->cols = tl_xcalloc(t->ncols ? t->ncols : 1, sizeof *c->cols);
    for (size_t i = 0; i < t->ncols; i++) {
        c->cols[i] = t->cols[i];
        c->cols[i].cells = tl_xmalloc((t->nrows ? t->nrows : 1) * sizeof *c->cols[i].cells);
        if (t->nrows)
            memcpy(c->cols[i].cells, t->cols[i].cells, t->nrows * sizeof *c->cols[i].cells);
        if (t->float_texts) /* a formatted float's len is an offset into the texts, not copied */
            for (size_t r = 0; r < t->nrows; r++)
                if (c->cols[i].cells[r].kind == TL_FLOAT)
                    c->cols[i].cells[r].len = 0;
    }
    return c;
}

static tl_table *mem_read_sheet(tl_report *r, const char *sheet, tl_arena *arena, tl_error *err)
{
    (void)arena; /* the strings stay in the report's own arena, which outlives the tables */
    mem_report *m = r->impl;
    long i = find(m, sheet);
    if (i < 0) {
        tl_error_set(err, "%s: no sheet '%s'", r->path, sheet);
        return NULL;
    }
    return tl_table_copy(m->sheets[i].table);
}

static void mem_close(tl_report *r)
{
    mem_report *m = r->impl;
    if (!m)
        return;
    if (m->building)
        tl_builder_abort(&m->b);
    for (size_t i = 0; i < m->n; i++)
        tl_table_free(m->sheets[i].table);
    free(m->sheets);
    tl_arena_free(&m->arena);
    free(m);
    r->impl = NULL;
}

static const tl_report_ops mem_ops = {mem_has_sheet, mem_read_sheet, mem_close, NULL};

void tl_mem_report_open(tl_report *r, const char *name)
{
    tl_report_init(r, name);
    r->kind = "memory";
    r->ops = &mem_ops;
    mem_report *m = tl_xcalloc(1, sizeof *m);
    tl_arena_init(&m->arena);
    r->impl = m;
}

const char *tl_mem_report_text(tl_report *r, const char *s, size_t n)
{
    mem_report *m = r->impl;
    return tl_arena_strndup(&m->arena, s, n);
}

tl_builder *tl_mem_report_begin_sheet(tl_report *r, const char *sheet, const char *const *names, size_t ncols)
{
    mem_report *m = r->impl;
    if (m->building)
        tl_builder_abort(&m->b);
    m->building = tl_arena_strdup(&m->arena, sheet);
    tl_builder_init(&m->b, &m->arena);
    const char **copies = tl_xcalloc(ncols ? ncols : 1, sizeof *copies);
    for (size_t i = 0; i < ncols; i++)
        copies[i] = names[i] ? tl_arena_strdup(&m->arena, names[i]) : NULL;
    tl_builder_header(&m->b, copies, ncols);
    free(copies);
    return &m->b;
}

int tl_mem_report_end_sheet(tl_report *r, tl_error *err)
{
    mem_report *m = r->impl;
    const char *name = m->building;
    if (!name) {
        tl_error_set(err, "%s: no sheet begun", r->path);
        return -1;
    }
    m->building = NULL;
    if (m->b.too_big) {
        tl_builder_abort(&m->b);
        tl_error_set(err, "%s: sheet '%s' is too big (more than %zu columns or %zu cells)", r->path, name,
                     (size_t)TL_TABLE_MAX_COLS, (size_t)TL_TABLE_MAX_CELLS);
        return -1;
    }
    if (find(m, name) >= 0) {
        tl_builder_abort(&m->b);
        tl_error_set(err, "%s: sheet '%s' given twice", r->path, name);
        return -1;
    }
    tl_table *t = tl_builder_finish(&m->b);
    TL_GROW(m->sheets, m->cap, m->n + 1);
    m->sheets[m->n].name = name;
    m->sheets[m->n++].table = t;
    return 0;
}

int tl_mem_report_put_sheet(tl_report *r, const char *sheet, tl_table *t, tl_error *err)
{
    mem_report *m = r->impl;
    if (find(m, sheet) >= 0) {
        tl_table_free(t);
        tl_error_set(err, "%s: sheet '%s' given twice", r->path, sheet);
        return -1;
    }
    TL_GROW(m->sheets, m->cap, m->n + 1);
    m->sheets[m->n].name = sheet;
    m->sheets[m->n++].table = t;
    return 0;
}
