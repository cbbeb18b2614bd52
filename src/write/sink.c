/*
 * sink.c - results streamed into the workbook and the CSV directory (see sink.h).
 */
#include "write/sink.h"

#include "write/csv_write.h"
#include "io/output.h"
#include "base/pool.h"
#include "base/progress.h"

#include <stdlib.h>
#include <string.h>

/* The threads that render the workbook while the caller reads, compares and writes the
 * CSVs (and helps when it has to wait).  On two cores one is right: with two, the
 * extra thread competed with the reading and cost more CPU than it saved. */
#define TL_OUT_THREADS 1

struct tl_out {
    char *xlsx, *xlsx_tmp;   /* the workbook and its temporary name */
    char *csv_dir, *csv_tmp; /* the CSV directory and its temporary twin, or NULL */
    char **files;            /* the CSV files written, by name */
    size_t nfiles, fcap;
    tl_pool *pool;           /* writes the workbook's sheets */
    tl_xlsx_writer *xw;      /* the workbook's writer */
    tl_results results;      /* every result, in order */
    tl_table **pending;      /* tables being written, oldest first, freed once synced */
    size_t *pending_index;   /* the result number of each */
    size_t npending, pcap;
    int finished;
};

/* The results the summary reads: small, and kept to the end. */
static int kept_for_summary(const char *name)
{
    return !strcmp(name, "gpu_timeline") || !strcmp(name, "ops_summary") || !strcmp(name, "kernel_summary");
}

/* The writers name the file they write, which is the temporary one: name the output. */
static void name_output(tl_error *err, const char *tmp, const char *target)
{
    size_t n = strlen(tmp), m = strlen(target), len = strlen(err->msg);
    if (strncmp(err->msg, tmp, n) != 0 || len - n + m >= sizeof err->msg)
        return;
    memmove(err->msg + m, err->msg + n, len - n + 1);
    memcpy(err->msg, target, m);
}

tl_out *tl_out_open(const char *xlsx, const char *csv_dir, int summary_first, tl_error *err)
{
    tl_out *o = tl_xcalloc(1, sizeof *o);
    o->xlsx = tl_xstrdup(xlsx);
    o->pool = tl_pool_new(TL_OUT_THREADS);
    o->xlsx_tmp = tl_output_temp_file(xlsx, err);
    if (!o->xlsx_tmp)
        return tl_out_free(o), NULL;
    if (csv_dir) {
        o->csv_dir = tl_xstrdup(csv_dir);
        o->csv_tmp = tl_output_temp_dir(csv_dir, err);
        if (!o->csv_tmp)
            return tl_out_free(o), NULL;
    }
    o->xw = tl_xlsx_writer_open(o->xlsx_tmp, summary_first, o->pool, err);
    if (!o->xw) {
        name_output(err, o->xlsx_tmp, o->xlsx);
        return tl_out_free(o), NULL;
    }
    return o;
}

static int write_csv(tl_out *o, const tl_result *r, tl_error *err)
{
    if (strchr(r->name, '/')) {
        tl_error_set(err, "result '%s' cannot be a file name (a tag holds '/')", r->name);
        return -1;
    }
    TL_GROW(o->files, o->fcap, o->nfiles + 1);
    char *file = tl_xmalloc(strlen(r->name) + 5);
    sprintf(file, "%s.csv", r->name);
    o->files[o->nfiles++] = file;
    char *path = tl_xmalloc(strlen(o->csv_tmp) + strlen(file) + 2);
    sprintf(path, "%s/%s", o->csv_tmp, file);
    tl_output_track(path);
    int rc = tl_csv_write_file(r->table, path, err);
    if (rc != 0)
        name_output(err, o->csv_tmp, o->csv_dir);
    free(path);
    return rc;
}

static int out_put(void *ctx, const tl_result *r, tl_error *err)
{
    tl_out *o = ctx;
    tl_progress("writing %s", r->name);
    /* Recorded first, so that the table is freed whatever happens next. */
    TL_GROW(o->results.items, o->results.cap, o->results.n + 1);
    tl_result *kept = &o->results.items[o->results.n++];
    *kept = *r;
    if (!kept_for_summary(r->name)) {
        size_t cap = o->pcap;
        TL_GROW(o->pending, o->pcap, o->npending + 1);
        TL_GROW(o->pending_index, cap, o->npending + 1);
        o->pending_index[o->npending] = o->results.n - 1;
        o->pending[o->npending++] = r->table;
        kept->table = NULL;
    }
    /* Each double is formatted once, here, for both writers: this also takes that work
     * off the workbook's thread, the busier one. */
    double t0 = tl_now();
    tl_table_format_floats(r->table);
    tl_timing.format += tl_now() - t0;
    /* The pool's thread renders this table into the workbook while the CSV is written
     * here, from the same table while it is still in the cache (a CSV job on another
     * thread, later, cost more CPU than it saved). */
    if (o->xw && tl_xlsx_writer_add(o->xw, r, err) != 0) {
        name_output(err, o->xlsx_tmp, o->xlsx);
        return -1;
    }
    t0 = tl_now();
    int rc = o->csv_tmp ? write_csv(o, r, err) : 0;
    tl_timing.write_csv += tl_now() - t0;
    return rc;
}

/* Free the pending tables of results before number `upto`. */
static void free_pending(tl_out *o, size_t upto)
{
    size_t k = 0;
    while (k < o->npending && o->pending_index[k] < upto)
        tl_table_free(o->pending[k++]);
    if (k == 0)
        return;
    memmove(o->pending, o->pending + k, (o->npending - k) * sizeof *o->pending);
    memmove(o->pending_index, o->pending_index + k, (o->npending - k) * sizeof *o->pending_index);
    o->npending -= k;
}

/* Wait until the first `upto` results are in the workbook (helping meanwhile); free
 * their tables. */
static int out_sync(void *ctx, size_t upto, tl_error *err)
{
    tl_out *o = ctx;
    double t0 = tl_now();
    int rc = o->xw ? tl_xlsx_writer_sync(o->xw, upto, err) : 0;
    tl_timing.write_xlsx += tl_now() - t0;
    if (rc != 0)
        name_output(err, o->xlsx_tmp, o->xlsx);
    free_pending(o, upto);
    return rc;
}

tl_sink tl_out_sink(tl_out *o)
{
    return (tl_sink){out_put, out_sync, o};
}

const tl_results *tl_out_results(const tl_out *o) { return &o->results; }

int tl_out_finish(tl_out *o, const tl_summary_sheet *summary, tl_error *err)
{
    tl_progress("finishing %s", o->xlsx);
    double t0 = tl_now();
    int rc;
    rc = tl_xlsx_writer_close(o->xw, summary, err);
    o->xw = NULL;
    if (rc != 0)
        name_output(err, o->xlsx_tmp, o->xlsx);
    free_pending(o, (size_t)-1);
    tl_timing.write_xlsx += tl_now() - t0;
    o->finished = rc == 0;
    return rc;
}

int tl_out_commit(tl_out *o, tl_error *err)
{
    if (!o->finished) {
        tl_error_set(err, "%s: not finished", o->xlsx);
        return -1;
    }
    if (tl_output_commit_file(o->xlsx_tmp, o->xlsx, err) != 0)
        return -1;
    if (o->csv_tmp &&
        tl_output_commit_dir(o->csv_tmp, o->csv_dir, (const char *const *)o->files, o->nfiles, err) != 0)
        return -1;
    return 0;
}

void tl_out_free(tl_out *o)
{
    if (!o)
        return;
    /* the jobs first: they read the tables */
    tl_xlsx_writer_abort(o->xw);
    tl_pool_free(o->pool, 1);
    free_pending(o, (size_t)-1);
    free(o->pending);
    free(o->pending_index);
    tl_results_free(&o->results);
    for (size_t i = 0; i < o->nfiles; i++)
        free(o->files[i]);
    free(o->files);
    free(o->xlsx);
    free(o->xlsx_tmp);
    free(o->csv_dir);
    free(o->csv_tmp);
    free(o);
}
