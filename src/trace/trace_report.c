/*
 * trace_report.c - a trace opened as a report (table/report.h, kind "trace").
 *
 * The trace is loaded and its sheets built once, on a helper thread started at opening,
 * so that the traces of one comparison load at the same time (tl_trace_report_wait joins
 * it; every other entry point waits too).  A sheet read from it is made again from its
 * text, through the same table builder the CSV reader uses: a TraceLens report read
 * back from the CSVs the reference writes is what the comparison was specified on
 * (SPEC §1 column typing), and this way a trace's sheets are exactly that, whatever
 * text a cell holds.  A text cell of a sheet read so points at the report's own copy
 * (freed when the report is closed, as the arenas it reads into are): a sheet's texts
 * are never held twice.
 */
#include "trace/trace_report.h"

#include "base/numfmt.h"
#include "base/progress.h"
#include "base/thread.h"
#include "trace/infer.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct trace_impl {
    char *path;
    tl_trace *t;
    tl_results sheets;
    tl_arena arena; /* the sheets' own strings */
    pthread_t thread;
    int running;    /* the helper thread is to be joined */
    int rc;         /* the load's result, and its error */
    tl_error err;
    tl_trace_sheets_fn build; /* the sheet builder: tl_trace_sheets unless a layer above gives one */
    void *build_ctx;
    int infer;      /* read as the inference generator reads it (INFERENCE.md §4) */
    char *capture_dir;
    tl_infer_opts io;
    tl_sheet_opts so;
    tl_trace_infer_sheets_fn build_infer; /* inference mode's builder; NULL: the basic sheets */
    tl_cancel *cancel; /* the run's: stops the load */
    pthread_mutex_t mu; /* guards `loaded` */
    pthread_cond_t cv;
    int loaded;         /* the load is over (t is the trace, or NULL): the sheets may not be */
} trace_impl;

static int basic_sheets(const tl_trace *t, void *ctx, tl_arena *arena, tl_results *out, tl_error *err)
{
    (void)ctx;
    return tl_trace_sheets(t, arena, out, err);
}

static void *load_job(void *arg)
{
    trace_impl *im = arg;
    const char *was = tl_reading(im->path); /* the sheets too: out of memory names the trace */
    if (im->infer) {
        tl_infer_stats st;
        im->t = tl_infer_load(im->path, &im->io, &st, &im->err);
        if (im->t && im->capture_dir && st.nlaunch) {
            tl_buf line = {0};
            tl_infer_summary(im->t, &st, &line);
            tl_note("%s", tl_buf_cstr(&line));
            tl_buf_free(&line);
        }
    } else {
        im->t = tl_trace_load_cancel(im->path, TL_LOAD_COUNTED, im->cancel, &im->err);
    }
    tl_trace_readers_add(-1); /* counted at the opening */
    if (im->t && !im->capture_dir)
        tl_infer_capture_hint(im->t, im->path);
    pthread_mutex_lock(&im->mu);
    im->loaded = 1;
    pthread_cond_broadcast(&im->cv);
    pthread_mutex_unlock(&im->mu);
    if (!im->t)
        im->rc = -1;
    else if (im->infer && im->build_infer)
        im->rc = im->build_infer(im->t, &im->so, &im->io, &im->arena, &im->sheets, &im->err);
    else if (im->infer)
        im->rc = tl_trace_sheets_opts(im->t, &im->so, &im->arena, &im->sheets, &im->err);
    else
        im->rc = im->build(im->t, im->build_ctx, &im->arena, &im->sheets, &im->err);
    tl_reading(was);
    return NULL;
}

/* Wait for the load; its result. */
static int ready(trace_impl *im)
{
    if (im->running) {
        tl_thread_join(im->thread, NULL);
        im->running = 0;
    }
    return im->rc;
}

static const tl_result *find(const tl_report *r, const char *sheet)
{
    trace_impl *im = r->impl;
    if (!im || ready(im) != 0)
        return NULL;
    for (size_t i = 0; i < im->sheets.n; i++)
        if (strcmp(im->sheets.items[i].name, sheet) == 0)
            return &im->sheets.items[i];
    return NULL;
}

static int has_sheet(const tl_report *r, const char *sheet) { return find(r, sheet) != NULL; }

/* The sheet's cells are freed; its texts stay in the report's arena, where the tables
 * read from it point (read_sheet). */
static int forget(tl_report *r, const char *sheet)
{
    trace_impl *im = r->impl;
    int freed = 0;
    if (!im || ready(im) != 0)
        return 0;
    for (size_t i = 0; i < im->sheets.n; i++) {
        if (im->sheets.items[i].table && strcmp(im->sheets.items[i].name, sheet) == 0) {
            tl_table_free(im->sheets.items[i].table);
            im->sheets.items[i].table = NULL;
            freed = 1;
        }
    }
    return freed;
}

/*
 * The texts of `src`'s numbers that `out` (made from src row for row, column for
 * column) still holds as text, in a column typed text by some other cell, copied into
 * `arena`: they were made in a scratch arena.
 */
static void keep_number_texts(tl_table *out, const tl_table *src, tl_arena *arena)
{
    for (size_t c = 0; c < out->ncols && c < src->ncols; c++) {
        if (out->cols[c].type == TL_COL_NUM)
            continue; /* every cell a number: no text kept */
        tl_cell *cells = out->cols[c].cells;
        const tl_cell *from = src->cols[c].cells;
        for (size_t r = 0; r < out->nrows && r < src->nrows; r++)
            if (cells[r].kind == TL_STR && (from[r].kind == TL_INT || from[r].kind == TL_FLOAT))
                cells[r] = tl_cell_strn(tl_arena_strndup(arena, cells[r].v.s, tl_cell_len(&cells[r])),
                                        tl_cell_len(&cells[r]));
    }
}

static tl_table *read_sheet(tl_report *r, const char *sheet, tl_arena *arena, tl_error *err)
{
    const tl_result *res = find(r, sheet);
    trace_impl *im = r->impl;
    if (!res && im && im->rc != 0) {
        tl_error_set(err, "%s", im->err.msg);
        return NULL;
    }
    if (!res) {
        tl_error_set(err, "%s: no sheet '%s' in the report built from this trace", r->path, sheet);
        return NULL;
    }
    const tl_table *t = res->table;
    if (!t) {
        tl_error_set(err, "%s: sheet '%s' was already read, and let go", r->path, sheet);
        return NULL;
    }
    tl_builder b;
    tl_builder_init(&b, arena);
    const char **names = tl_xmalloc((t->ncols ? t->ncols : 1) * sizeof *names);
    for (size_t c = 0; c < t->ncols; c++)
        names[c] = t->cols[c].name;
    tl_builder_header(&b, names, t->ncols);
    free(names);
    tl_builder_reserve(&b, t->nrows); /* the rows are known: no doubling, no slack */
    /* A number's text is only for the builder to type its column by; the texts live in
     * an arena of their own, freed once the table is made (keep_number_texts moves the
     * few a text column keeps), so that a sheet's numbers never sit in memory twice. */
    tl_arena nums;
    tl_arena_init(&nums);
    char num[TL_NUMFMT_MAX];
    for (size_t row = 0; row < t->nrows; row++) {
        for (size_t c = 0; c < t->ncols; c++) {
            const tl_cell *x = &t->cols[c].cells[row];
            size_t n;
            switch (x->kind) {
            case TL_STR:
                /* the sheet's own text, which lives as long as the report does */
                tl_builder_cell(&b, c, tl_cell_strn(x->v.s, tl_cell_len(x)));
                break;
            case TL_INT:
                n = tl_fmt_int(x->v.i, num);
                tl_builder_cell(&b, c, tl_cell_strn(tl_arena_strndup(&nums, num, n), n));
                break;
            case TL_FLOAT:
                n = tl_fmt_double(x->v.f, num);
                tl_builder_cell(&b, c, tl_cell_strn(tl_arena_strndup(&nums, num, n), n));
                break;
            case TL_BOOL:
                tl_builder_cell(&b, c, tl_cell_str(x->v.b ? "True" : "False"));
                break;
            default:
                tl_builder_cell(&b, c, tl_cell_missing());
            }
        }
        tl_builder_end_row(&b, 1);
    }
    tl_table *out = tl_builder_finish(&b);
    keep_number_texts(out, t, arena);
    tl_arena_free(&nums);
    return out;
}

static void close_trace(tl_report *r)
{
    trace_impl *im = r->impl;
    if (!im)
        return;
    ready(im);
    tl_results_free(&im->sheets);
    tl_arena_free(&im->arena);
    tl_trace_free(im->t);
    pthread_mutex_destroy(&im->mu);
    pthread_cond_destroy(&im->cv);
    free(im->path);
    free(im->capture_dir);
    free(im);
    r->impl = NULL;
}

static const tl_report_ops trace_ops = {has_sheet, read_sheet, close_trace, forget};

static int open_impl(tl_report *r, const char *path, tl_trace_sheets_fn build, void *ctx,
                     const tl_trace_infer_spec *spec, tl_trace_infer_sheets_fn build_infer, tl_cancel *cancel,
                     tl_error *err)
{
    tl_report_init(r, path);
    r->kind = "trace";
    r->ops = &trace_ops;
    trace_impl *im = tl_xcalloc(1, sizeof *im);
    tl_arena_init(&im->arena);
    pthread_mutex_init(&im->mu, NULL);
    pthread_cond_init(&im->cv, NULL);
    im->path = tl_xstrdup(path);
    im->build = build;
    im->build_ctx = ctx;
    im->build_infer = build_infer;
    im->cancel = spec ? spec->cancel : cancel;
    if (spec) {
        im->infer = 1;
        im->capture_dir = spec->capture_dir ? tl_xstrdup(spec->capture_dir) : NULL;
        im->io.capture_dir = im->capture_dir;
        im->io.python = spec->parent_module || spec->call_stack;
        im->io.pseudo_ops = spec->pseudo_ops;
        im->io.call_stack = spec->call_stack;
        im->io.cancel = spec->cancel;
        im->so.inference = 1;
        im->so.parent_module = spec->parent_module;
        im->so.num_kernels = spec->num_kernels;
    }
    r->impl = im;
    im->io.load_flags = TL_LOAD_COUNTED;
    tl_trace_readers_add(1); /* before the thread starts: see TL_LOAD_COUNTED */
    if (tl_thread_create(&im->thread, load_job, im) == 0) {
        im->running = 1;
        return 0;
    }
    load_job(im); /* no thread: load here */
    if (im->rc != 0)
        tl_error_set(err, "%s", im->err.msg);
    return im->rc;
}

int tl_trace_report_open(tl_report *r, const char *path, tl_error *err)
{
    return open_impl(r, path, basic_sheets, NULL, NULL, NULL, NULL, err);
}

int tl_trace_report_open_with(tl_report *r, const char *path, tl_trace_sheets_fn build, void *ctx, tl_error *err)
{
    return open_impl(r, path, build, ctx, NULL, NULL, NULL, err);
}

int tl_trace_report_open_cancel_with(tl_report *r, const char *path, tl_trace_sheets_fn build, void *ctx,
                                     tl_cancel *cancel, tl_error *err)
{
    return open_impl(r, path, build, ctx, NULL, NULL, cancel, err);
}

int tl_trace_report_open_infer(tl_report *r, const char *path, const tl_trace_infer_spec *spec, tl_error *err)
{
    return open_impl(r, path, basic_sheets, NULL, spec, NULL, NULL, err);
}

int tl_trace_report_open_infer_with(tl_report *r, const char *path, const tl_trace_infer_spec *spec,
                                    tl_trace_infer_sheets_fn build, tl_error *err)
{
    return open_impl(r, path, basic_sheets, NULL, spec, build, NULL, err);
}

int tl_trace_report_wait(tl_report *r, tl_error *err)
{
    if (!r || r->ops != &trace_ops || !r->impl)
        return 0;
    trace_impl *im = r->impl;
    if (ready(im) != 0) {
        tl_error_set(err, "%s", im->err.msg);
        return -1;
    }
    return 0;
}

tl_trace *tl_trace_report_trace(tl_report *r)
{
    if (!r || r->ops != &trace_ops || !r->impl)
        return NULL;
    trace_impl *im = r->impl;
    ready(im);
    return im->t;
}

/* The wait is timed so that a load that unwound (out of memory in a run that catches it)
 * is seen: it never says it is loaded, and tl_oom_check unwinds this thread in turn. */
tl_trace *tl_trace_report_loaded(tl_report *r)
{
    if (!r || r->ops != &trace_ops || !r->impl)
        return NULL;
    trace_impl *im = r->impl;
    pthread_mutex_lock(&im->mu);
    while (!im->loaded) {
        struct timespec until = tl_deadline_ms(20);
        pthread_cond_timedwait(&im->cv, &im->mu, &until);
        if (!im->loaded) {
            pthread_mutex_unlock(&im->mu);
            tl_oom_check();
            pthread_mutex_lock(&im->mu);
        }
    }
    pthread_mutex_unlock(&im->mu);
    return im->t;
}
