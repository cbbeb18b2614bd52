/*
 * tracediff.c - the run's part of the morphology-aware diff (see tracediff.h).
 */
#include "run/tracediff.h"

#include "base/progress.h"
#include "base/thread.h"
#include "io/direct_out.h"
#include "write/csv_write.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void tl_run_diff_wait(tl_run_diff *cd)
{
    if (cd->running) {
        tl_thread_join(cd->th, NULL);
        cd->running = 0;
    }
}

/* Wait for the alignment; its outcome in warnings or *err. */
static int diff_join(tl_run_diff *cd, tl_error *err)
{
    if (cd->running)
        tl_progress("aligning the call trees");
    tl_run_diff_wait(cd);
    if (cd->joined)
        return 0;
    cd->joined = 1;
    tl_timing.compare += cd->secs;
    if (!cd->d) {
        /* a GPU-only trace has no call tree: its sheets still compare */
        if (cd->required || (cd->t[0] && tl_cancelled(cd->t[0]->cancel))) {
            *err = cd->derr;
            return -1;
        }
        tl_warn("%s; no lca_summary or diff_stats", cd->derr.msg);
        return 0;
    }
    const tl_diff_stats *st = tl_diff_stats_of(cd->d);
    if (st->wf_chunked)
        tl_warn("%zu children lists too long to align whole were aligned in chunks (TRACES.md §5 bounds)",
                st->wf_chunked);
    if (cd->dir && st->tree_depth > TL_DIFF_TREE_MAX_INDENT + 1)
        tl_warn("the merged tree is %zu levels deep: merged_tree_output.txt indents the first %d, and marks "
                "deeper lines with how many levels more, \"(+N) \"", st->tree_depth, TL_DIFF_TREE_MAX_INDENT);
    if (st->disambig_skipped)
        tl_warn("%zu repeated op names had too many candidate pairs to disambiguate; kept as aligned",
                st->disambig_skipped);
    return 0;
}

/* A worksheet holds 1,048,575 rows below its header. */
#define SHEET_MAX_ROWS 1048575u

static int put_table(const tl_sink *sink, const char *name, tl_table *t, const char *file, tl_error *err)
{
    if (t->nrows > SHEET_MAX_ROWS) {
        /* the workbook cannot hold it, and the CSV directory mirrors the workbook: the
         * whole table is in --tracediff-dir's files */
        tl_warn("%s has %zu rows, more than a worksheet holds: left out of the workbook and the CSV "
                "directory (--tracediff-dir writes it whole)", name, t->nrows);
        tl_table_free(t);
        return 0;
    }
    tl_result r = {name, t, NULL, t->nrows, t->ncols, file};
    return sink->put(sink->ctx, &r, err);
}


static const char *const dir_files[] = {"diff_stats.csv", "diff_stats_unique_args_summary.csv", "lca_summary.csv",
                                        "merged_tree_output.txt", "cpu_op_map.json", "cpu_op_map_trace1.json",
                                        "cpu_op_map_trace2.json"};
#define NFILES (sizeof dir_files / sizeof *dir_files)
_Static_assert(NFILES == sizeof((tl_run_diff *)0)->paths / sizeof(char *), "a path for each file");

/* Their indices: the three cpu_op maps follow F_MAPS. */
enum { F_STATS, F_UNIQUE, F_LCA, F_TREE, F_MAPS };

/* A file's name as the user gave the directory (for messages), not its temporary's. */
static void shown_name(char *buf, size_t n, const char *dir, int file)
{
    snprintf(buf, n, "%s/%s", dir, dir_files[file]);
}

/* Write file `file` of the directory `dir` (its temporary paths[file]) from a table, a
 * buffer or (neither) the tree. */
static int write_one(const tl_diff *d, char *const *paths, const char *dir, int file, const tl_table *table,
                     const tl_buf *text, tl_error *err)
{
    char shown[4096];
    shown_name(shown, sizeof shown, dir, file);
    if (table) {
        int rc = tl_csv_write_file(table, paths[file], err);
        if (rc != 0)
            tl_error_rename_path(err, paths[file], shown);
        return rc;
    }
    FILE *f = tl_direct_fopen(paths[file]);
    int bad = !f;
    if (f && text)
        bad |= text->len && fwrite(text->data, 1, text->len, f) != text->len;
    else if (f)
        bad |= tl_diff_write_tree(d, f) != 0;
    if (f && fclose(f) != 0)
        bad = 1;
    if (bad) {
        tl_error_set(err, "%s: cannot write: %s", shown, strerror(errno));
        return -1;
    }
    return 0;
}

const char *const *tl_run_diff_files(size_t *n)
{
    *n = NFILES;
    return dir_files;
}

/* Rows of the unique-args summary made and written at a time: a few MB of cells, reused
 * (the whole table would be hundreds of MB of new pages for a large pair). */
#define UNIQUE_ARGS_SLICE 16384

/* The unique-args summary, written as it is made: no sheet needs it, so it is neither held
 * through the sheets' comparison nor ever held whole. */
static void write_unique_args(tl_run_diff *cd)
{
    tl_csv_file *w = tl_csv_open(cd->paths[F_UNIQUE], &cd->werr);
    if (w) {
        size_t from = 0, end = tl_diff_unique_args_groups(cd->d);
        int header = 1;
        do {
            tl_table *t = tl_diff_unique_args_slice(cd->d, &from, UNIQUE_ARGS_SLICE);
            tl_csv_append(w, t, header);
            header = 0;
            tl_table_free(t);
        } while (from < end);
        cd->wrc = tl_csv_close(w, &cd->werr);
    } else {
        cd->wrc = -1;
    }
    if (cd->wrc != 0) {
        char shown[4096];
        shown_name(shown, sizeof shown, tl_output_target(cd->dir), F_UNIQUE);
        tl_error_rename_path(&cd->werr, cd->paths[F_UNIQUE], shown);
    }
}

/* diff_stats, then the unique-args summary written: beside lca_summary, the longest to
 * make, so that the two threads end about together. */
static void *stats_and_unique_args(void *arg)
{
    tl_run_diff *cd = arg;
    cd->stats = tl_diff_stats_table(cd->d, &cd->arena2);
    if (cd->dir)
        write_unique_args(cd);
    return NULL;
}

/* The helper thread's work: the alignment and the tables made from it (nothing here
 * touches what the main thread uses meanwhile: the traces are only read). */
static void *align_thread(void *arg)
{
    tl_run_diff *cd = arg;
    double t0 = tl_now();
    /* the unique-args groups and the cpu_op maps are the directory's alone */
    tl_diff_opts opts = {0};
    opts.no_groups = !cd->dir;
    if (cd->t[0] && cd->t[1])
        cd->d = tl_diff_run(cd->t[0], cd->t[1], &opts, &cd->derr);
    else
        tl_error_set(&cd->derr, "a trace to align is missing");
    if (cd->d) {
        /* the run's thread only waits for this one now: lca_summary is made here while a
         * second thread makes diff_stats and writes the unique-args summary */
        pthread_t th;
        int threaded = tl_thread_create(&th, stats_and_unique_args, cd) == 0;
        cd->lca = tl_diff_lca_table(cd->d, &cd->arena);
        if (threaded)
            tl_thread_join(th, NULL);
        else
            stats_and_unique_args(cd);
    }
    cd->secs = tl_now() - t0;
    return NULL;
}

int tl_run_diff_align(tl_run_diff *cd, tl_trace *t1, tl_trace *t2, int required, tl_output *dir, tl_error *err)
{
    (void)err;
    cd->t[0] = t1;
    cd->t[1] = t2;
    cd->required = required;
    cd->dir = dir;
    for (size_t i = 0; dir && i < NFILES; i++) /* tracked for the clean-up: here, not on the helper */
        cd->paths[i] = tl_output_add(dir, dir_files[i]);
    tl_arena_init(&cd->arena);
    tl_arena_init(&cd->arena2);
    /* the diff runs beside the sheets' comparison: on a second core it costs no time */
    cd->running = tl_thread_create(&cd->th, align_thread, cd) == 0;
    if (!cd->running)
        align_thread(cd);
    cd->started = 1;
    return 0;
}

/* The tree text and the maps, written by a helper thread while the CSVs are. */
typedef struct text_job {
    const tl_diff *d;
    char **paths;
    const char *dir;
    tl_error err;
    int rc;
} text_job;

static void *write_texts(void *arg)
{
    text_job *j = arg;
    j->rc = write_one(j->d, j->paths, j->dir, F_TREE, NULL, NULL, &j->err);
    tl_buf b = {0};
    for (int i = 0; i < 3 && j->rc == 0; i++) {
        tl_diff_cpu_op_map_json(j->d, i, &b); /* no final newline, as json.dump */
        j->rc = write_one(j->d, j->paths, j->dir, F_MAPS + i, NULL, &b, &j->err);
    }
    tl_buf_free(&b);
    return NULL;
}

/* The TraceDiff files but the unique-args summary (the helper's): diff_stats,
 * lca_summary, the tree and the maps. */
static int write_dir(tl_run_diff *cd, tl_error *err)
{
    const char *dir = tl_output_target(cd->dir);
    text_job job = {cd->d, cd->paths, dir, {0}, 0};
    pthread_t th;
    int threaded = tl_thread_create(&th, write_texts, &job) == 0;
    int rc = write_one(cd->d, cd->paths, dir, F_STATS, cd->stats, NULL, err);
    if (rc == 0)
        rc = write_one(cd->d, cd->paths, dir, F_LCA, cd->lca, NULL, err);
    if (threaded)
        tl_thread_join(th, NULL);
    else
        write_texts(&job);
    if (rc == 0 && job.rc != 0) {
        *err = job.err;
        rc = -1;
    }
    if (rc == 0 && cd->wrc != 0) {
        *err = cd->werr;
        rc = -1;
    }
    return rc;
}

/* Give table *t to the sink (or free it after a failure): the sink owns it from here. */
static int give_table(const tl_sink *sink, const char *name, tl_table **t, const char *file, int rc, tl_error *err)
{
    if (rc == 0 && put_table(sink, name, *t, file, err) != 0)
        rc = -1;
    else if (rc != 0)
        tl_table_free(*t);
    *t = NULL;
    return rc;
}

int tl_run_diff_put(tl_run_diff *cd, const tl_sink *sink, tl_error *err)
{
    if (!cd->started)
        return 0;
    if (diff_join(cd, err) != 0)
        return -1;
    if (!cd->d)
        return 0;
    double t0 = tl_now();
    int rc = 0;
    /* diff_stats and lca_summary are the same text in the directory and in the CSV
     * directory: formatted once (their doubles, too, for the workbook as well), written
     * once, and copied */
    if (cd->dir) {
        tl_table_format_floats(cd->stats);
        tl_table_format_floats(cd->lca);
        rc = write_dir(cd, err);
    }
    tl_timing.write_csv += tl_now() - t0;
    /* lca_summary first, as the workbook orders them */
    rc = give_table(sink, "lca_summary", &cd->lca, cd->dir ? cd->paths[F_LCA] : NULL, rc, err);
    return give_table(sink, "diff_stats", &cd->stats, cd->dir ? cd->paths[F_STATS] : NULL, rc, err);
}

const tl_diff *tl_run_diff_result(tl_run_diff *cd)
{
    tl_error ignored = {0};
    if (cd->started && !cd->joined)
        diff_join(cd, &ignored);
    return cd->d;
}

void tl_run_diff_free(tl_run_diff *cd)
{
    tl_run_diff_wait(cd); /* a run that failed before it needed the diff */
    tl_table_free(cd->stats);
    tl_table_free(cd->lca);
    for (size_t i = 0; i < NFILES; i++)
        free(cd->paths[i]);
    tl_diff_free(cd->d);
    if (cd->started) {
        tl_arena_free(&cd->arena);
        tl_arena_free(&cd->arena2);
    }
    memset(cd, 0, sizeof *cd);
}
