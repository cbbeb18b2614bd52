/*
 * sink.c - results streamed into the workbook and the CSV directory (see sink.h).
 */
#define _GNU_SOURCE /* copy_file_range */
#include "write/sink.h"

#include "write/csv_write.h"
#include "io/output.h"
#include "base/pool.h"
#include "base/progress.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The threads that render the workbook while the caller reads, compares and writes the
 * CSVs (and helps when it has to wait).  On two cores one is right: with two, the
 * extra thread competed with the reading and cost more CPU than it saved. */
#define TL_OUT_THREADS 1

struct tl_out {
    tl_output *xlsx;         /* the workbook */
    tl_output *csv;          /* the CSV directory, or NULL */
    const char *xlsx_tmp;    /* the workbook's temporary name */
    tl_pool *pool;           /* writes the workbook's sheets */
    tl_xlsx_writer *xw;      /* the workbook's writer */
    tl_results results;      /* every result, in order */
    tl_table **pending;      /* tables being written, oldest first, freed once synced */
    size_t *pending_index;   /* the result number of each */
    size_t npending, pcap;
    tl_csv_file *part_csv;   /* the CSV of the result being given in parts */
    size_t part_rows;        /* its records given so far (0: no result in parts open) */
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
    o->pool = tl_pool_new(TL_OUT_THREADS);
    o->xlsx = tl_output_new(xlsx, 0, err);
    if (!o->xlsx)
        return tl_out_free(o), NULL;
    o->xlsx_tmp = tl_output_temp(o->xlsx);
    if (csv_dir && !(o->csv = tl_output_new(csv_dir, 1, err)))
        return tl_out_free(o), NULL;
    o->xw = tl_xlsx_writer_open(o->xlsx_tmp, summary_first, o->pool, err);
    if (!o->xw) {
        name_output(err, o->xlsx_tmp, tl_output_target(o->xlsx));
        return tl_out_free(o), NULL;
    }
    return o;
}

/* All n bytes written (retried on EINTR and short writes); 0 or -1. */
static int write_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t k = write(fd, p, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

/*
 * dst made a copy of src: by the kernel (copy_file_range: no pass through this process,
 * and a shared extent on file systems that can share them), else read and written in
 * 1 MiB blocks.  Returns 0, or -1 with *err set.
 */
static int copy_file(const char *src, const char *dst, tl_error *err)
{
    int in = open(src, O_RDONLY | O_CLOEXEC), out = -1, rc = -1;
    struct stat st;
    if (in < 0 || fstat(in, &st) != 0) {
        tl_error_set(err, "%s: cannot read: %s", src, strerror(errno));
        goto done;
    }
    out = open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (out < 0) {
        tl_error_set(err, "%s: cannot create: %s", dst, strerror(errno));
        goto done;
    }
    off_t left = st.st_size;
    while (left > 0) {
        ssize_t k = copy_file_range(in, NULL, out, NULL, (size_t)left, 0);
        if (k <= 0)
            break; /* not across these file systems, or not at all: copied by hand below */
        left -= k;
    }
    char *buf = left > 0 ? tl_xmalloc((size_t)1 << 20) : NULL;
    while (left > 0) {
        ssize_t k = read(in, buf, (size_t)1 << 20);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0 || write_all(out, buf, (size_t)k) != 0)
            break;
        left -= k;
    }
    free(buf);
    if (left > 0)
        tl_error_set(err, "%s: write error: %s", dst, strerror(errno));
    else
        rc = 0;
done:
    if (in >= 0)
        close(in);
    if (out >= 0 && close(out) != 0 && rc == 0) {
        tl_error_set(err, "%s: write error: %s", dst, strerror(errno));
        rc = -1;
    }
    return rc;
}

/*
 * dst made the same file as src: a second name for it (a hard link: no byte copied, where
 * a copy of the 1 GB pair's diff_stats and lca_summary wrote 400 MB more), else a copy
 * (another file system, or one without links).  The commit gives either name the mode of
 * a file it replaces without touching the other's (io/output.h).
 */
static int share_file(const char *src, const char *dst, tl_error *err)
{
    if (link(src, dst) == 0)
        return 0;
    return copy_file(src, dst, err);
}

/* Where result `name`'s CSV is staged in the CSV directory (malloc'd), or NULL with *err
 * set when the name cannot be a file's. */
static char *csv_path(tl_out *o, const char *name, tl_error *err)
{
    if (strchr(name, '/')) {
        tl_error_set(err, "result '%s' cannot be a file name (a tag holds '/')", name);
        return NULL;
    }
    char *file = tl_xmalloc(strlen(name) + 5);
    sprintf(file, "%s.csv", name);
    char *path = tl_output_add(o->csv, file);
    free(file);
    return path;
}

static int write_csv(tl_out *o, const tl_result *r, tl_error *err)
{
    char *path = csv_path(o, r->name, err);
    if (!path)
        return -1;
    int rc = r->csv_file ? share_file(r->csv_file, path, err) : tl_csv_write_file(r->table, path, err);
    if (rc != 0)
        name_output(err, tl_output_temp(o->csv), tl_output_target(o->csv));
    free(path);
    return rc;
}

/* Result r in the list of every result, in order. */
static tl_result *record(tl_out *o, const tl_result *r)
{
    TL_GROW(o->results.items, o->results.cap, o->results.n + 1);
    tl_result *kept = &o->results.items[o->results.n++];
    *kept = *r;
    return kept;
}

static int out_put(void *ctx, const tl_result *r, tl_error *err)
{
    tl_out *o = ctx;
    tl_progress("writing %s", r->name);
    /* Recorded first, so that the table is freed whatever happens next. */
    tl_result *kept = record(o, r);
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
        name_output(err, o->xlsx_tmp, tl_output_target(o->xlsx));
        return -1;
    }
    t0 = tl_now();
    int rc = o->csv ? write_csv(o, r, err) : 0;
    tl_timing.write_csv += tl_now() - t0;
    return rc;
}

/* The part's records appended to its result's CSV (opened with the first part). */
static int csv_part(tl_out *o, const tl_result *r, int first, tl_error *err)
{
    if (first) {
        char *path = csv_path(o, r->name, err);
        if (!path)
            return -1;
        o->part_csv = tl_csv_open(path, err);
        free(path);
        if (!o->part_csv) {
            name_output(err, tl_output_temp(o->csv), tl_output_target(o->csv));
            return -1;
        }
    }
    tl_csv_append(o->part_csv, r->table, first);
    return 0;
}

int tl_out_put_part(tl_out *o, const tl_result *r, size_t total, tl_error *err)
{
    int first = o->part_rows == 0;
    size_t nrows = r->table->nrows;
    if (first) {
        tl_progress("writing %s", r->name);
        tl_result *kept = record(o, r);
        kept->table = NULL;
        kept->nrows = total;
        kept->ncols = r->table->ncols;
    }
    double t0 = tl_now();
    tl_table_format_floats(r->table);
    tl_timing.format += tl_now() - t0;
    /* the CSV first: the workbook's thread frees the table once it has rendered it */
    t0 = tl_now();
    int rc = o->csv ? csv_part(o, r, first, err) : 0;
    tl_timing.write_csv += tl_now() - t0;
    if (rc != 0) {
        tl_table_free(r->table);
        return -1;
    }
    o->part_rows += nrows;
    int last = o->part_rows >= total;
    if (last)
        o->part_rows = 0;
    if (tl_xlsx_writer_add_part(o->xw, r, total, err) != 0) {
        name_output(err, o->xlsx_tmp, tl_output_target(o->xlsx));
        return -1;
    }
    if (last && o->part_csv) {
        rc = tl_csv_close(o->part_csv, err);
        o->part_csv = NULL;
        if (rc != 0)
            name_output(err, tl_output_temp(o->csv), tl_output_target(o->csv));
    }
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
        name_output(err, o->xlsx_tmp, tl_output_target(o->xlsx));
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
    tl_progress("finishing %s", tl_output_target(o->xlsx));
    double t0 = tl_now();
    int rc;
    rc = tl_xlsx_writer_close(o->xw, summary, err);
    o->xw = NULL;
    if (rc != 0)
        name_output(err, o->xlsx_tmp, tl_output_target(o->xlsx));
    free_pending(o, (size_t)-1);
    tl_timing.write_xlsx += tl_now() - t0;
    o->finished = rc == 0;
    return rc;
}

int tl_out_commit(tl_out *o, tl_error *err) { return tl_out_commit_with(o, NULL, 0, err); }

int tl_out_commit_with(tl_out *o, tl_output *const *more, size_t nmore, tl_error *err)
{
    if (!o->finished) {
        tl_error_set(err, "%s: not finished", tl_output_target(o->xlsx));
        return -1;
    }
    tl_output **all = tl_xmalloc((nmore + 2) * sizeof *all);
    size_t n = 0;
    all[n++] = o->xlsx;
    if (o->csv)
        all[n++] = o->csv;
    for (size_t i = 0; i < nmore; i++)
        all[n++] = more[i];
    int rc = tl_output_commit(all, n, err);
    free(all);
    return rc;
}

void tl_out_free(tl_out *o)
{
    if (!o)
        return;
    /* the jobs first: they read the tables */
    tl_xlsx_writer_abort(o->xw);
    tl_pool_free(o->pool, 1);
    tl_csv_close(o->part_csv, NULL);
    free_pending(o, (size_t)-1);
    free(o->pending);
    free(o->pending_index);
    tl_results_free(&o->results);
    tl_output_free(o->xlsx);
    tl_output_free(o->csv);
    free(o);
}
