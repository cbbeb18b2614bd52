/*
 * collreport.c - one multi-rank collective report run (run/collreport.h).
 */
#include "run/collreport.h"

#include "run/compare.h"
#include "run/report.h"
#include "write/csv_write.h"
#include "write/sink.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void tl_run_ranks_init(tl_run_ranks *r)
{
    memset(r, 0, sizeof *r);
    tl_arena_init(&r->arena);
    r->status = TL_RUN_FAILED;
}

int tl_run_ranks_build(const tl_run_ranks_opts *o, tl_run_ranks *r)
{
    tl_run_ranks_init(r);
    if (tl_ranks_find(&o->r, &r->set, &r->err) < 0)
        return r->status;
    tl_ranks_read_part(&r->set, o->r.jobs, 0, 1);
    return tl_run_ranks_finish(o, r);
}

/* A sheet's name and size in r->results (its table is not kept: it is written). */
static void record(tl_results *res, const char *name, const tl_table *t, size_t piece)
{
    if (piece > 0) {
        res->items[res->n - 1].nrows += t->nrows;
        return;
    }
    TL_GROW(res->items, res->cap, res->n + 1);
    tl_result *r = &res->items[res->n++];
    memset(r, 0, sizeof *r);
    r->name = name;
    r->nrows = t->nrows;
    r->ncols = t->ncols;
}

/* ---- the CSV directory alone: each sheet written as it comes, nccl_long in pieces ---- */

/* The rows of nccl_long written at a time: a few hundred KB of cells, whatever the ranks. */
#define LONG_PIECE_ROWS 1024

typedef struct csv_dir_out {
    tl_output *out;
    tl_csv_file *cur; /* the sheet being written */
    tl_results *res;
} csv_dir_out;

static int csv_sheet(void *ctx, const char *name, tl_table *t, size_t piece, int last, size_t total, tl_error *err)
{
    (void)total;
    csv_dir_out *d = ctx;
    record(d->res, name, t, piece);
    if (piece == 0) {
        tl_buf file = {0};
        tl_buf_printf(&file, "%s.csv", name);
        char *path = tl_output_add(d->out, tl_buf_cstr(&file));
        d->cur = tl_csv_open(path, err);
        free(path);
        tl_buf_free(&file);
    }
    if (d->cur)
        tl_csv_append(d->cur, t, piece == 0);
    tl_table_free(t);
    if (!d->cur)
        return -1;
    if (!last)
        return 0;
    int rc = tl_csv_close(d->cur, err);
    d->cur = NULL;
    return rc;
}

static int write_csv_dir(const tl_run_ranks_opts *o, tl_run_ranks *r)
{
    csv_dir_out d = {tl_output_new(o->csv_dir, 1, &r->err), NULL, &r->results};
    if (!d.out)
        return -1;
    tl_ranks_out to = {csv_sheet, &d, LONG_PIECE_ROWS};
    int rc = tl_ranks_sheets_to(&r->set, &o->r, &r->arena, &to, &r->err);
    if (d.cur)
        tl_csv_close(d.cur, NULL);
    if (rc == 0)
        rc = tl_output_commit(&d.out, 1, &r->err);
    tl_output_free(d.out);
    return rc;
}

/* ---- a workbook (and the CSVs beside it): each sheet to the writer as it is made ---- */

typedef struct book_out {
    tl_out *out;
    tl_sink sink;
    tl_results *res;
} book_out;

static int book_sheet(void *ctx, const char *name, tl_table *t, size_t piece, int last, size_t total, tl_error *err)
{
    book_out *b = ctx;
    record(b->res, name, t, piece);
    tl_result r = {.name = name, .table = t, .nrows = t->nrows, .ncols = t->ncols};
    /* nccl_long, in parts: never whole in memory (the sink holds two parts at most) */
    if (!(piece == 0 && last))
        return tl_out_put_part(b->out, &r, total, err);
    /* the sheets before this one are in the workbook once synced, and their tables freed:
     * at most two sheets are held, the one being written and the one just made */
    return b->sink.put(b->sink.ctx, &r, err) != 0 || b->sink.sync(b->sink.ctx, b->res->n - 1, err) != 0 ? -1 : 0;
}

static int write_book(const tl_run_ranks_opts *o, tl_run_ranks *r)
{
    if (o->csv_dir && tl_output_same_target(r->output, o->csv_dir)) {
        tl_error_set(&r->err, "the workbook and the CSV directory both name '%s'; give each output its own path",
                     r->output);
        return -1;
    }
    tl_out *out = tl_out_open(r->output, o->csv_dir, 0, &r->err);
    if (!out)
        return -1;
    book_out b = {out, tl_out_sink(out), &r->results};
    tl_ranks_out to = {book_sheet, &b, LONG_PIECE_ROWS};
    int rc = tl_ranks_sheets_to(&r->set, &o->r, &r->arena, &to, &r->err);
    if (rc == 0)
        rc = tl_out_finish(out, NULL, &r->err);
    if (rc == 0)
        rc = tl_out_commit(out, &r->err);
    tl_out_free(out);
    return rc;
}

int tl_run_ranks_finish(const tl_run_ranks_opts *o, tl_run_ranks *r)
{
    if (tl_ranks_read_failed(&r->set, &r->err) < 0)
        return r->status;
    if (o->output) {
        r->output = tl_xstrdup(o->output);
    } else if (!o->csv_dir) {
        char *dir = tl_ranks_default_dir(&o->r, &r->set);
        tl_buf b = {0};
        tl_buf_printf(&b, "%s/nccl_analysis_report.xlsx", dir);
        r->output = tl_xstrdup(tl_buf_cstr(&b));
        tl_buf_free(&b);
        free(dir);
    }
    /* the sheets are written as they are made, not held together: nccl_long alone has a
     * row per collective and rank */
    if ((r->output ? write_book(o, r) : write_csv_dir(o, r)) < 0)
        return r->status;
    return r->status = TL_RUN_OK;
}

void tl_run_ranks_free(tl_run_ranks *r)
{
    tl_results_free(&r->results);
    free(r->output);
    tl_rank_set_free(&r->set);
    tl_arena_free(&r->arena);
    memset(r, 0, sizeof *r);
}
