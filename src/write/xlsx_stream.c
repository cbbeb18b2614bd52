/*
 * xlsx_stream.c - the workbook written a result at a time (tl_xlsx_writer_*, see
 * xlsx_write.h), and the whole book at once (tl_xlsx_write) as that writer given every
 * result.
 */
#include "write/xlsx_internal.h"

#include "base/pool.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the streaming writer -------------------------------------------------------------- */

/*
 * Each added result becomes jobs of the caller's pool (pool.h), one per piece of its
 * records: render the piece and compress it into a blob of its own; the last piece to end
 * stores the blobs in the zip, in order, as the sheet's one entry (never joined first).
 * The pool's threads take jobs oldest first while the caller goes on (reading and
 * comparing the next sheets), and the
 * caller takes the newest when it waits in sync(), so sheets are stored in any order:
 * readers find parts through the central directory, and a sheet's file name, not its
 * place in the zip, says where it goes.  Results are numbered sheet1.xml, sheet2.xml,
 * ... as they come, from sheet2.xml when a summary will lead the book: the summary, made
 * last, is sheet1.xml then.  The zip and the failure are shared under `mu`; the rest is
 * the caller's.
 */
typedef struct stream_sheet stream_sheet;

/* A run of a sheet's records: one job.  A sheet added whole is cut into pieces of its
 * one table; a sheet added in parts (tl_xlsx_writer_add_part) has a piece per part, each
 * with a table of its own, freed once rendered. */
typedef struct sheet_piece {
    stream_sheet *sh;
    size_t k;             /* its place among the sheet's pieces */
    tl_table *own;        /* a part's table (NULL: a piece of the sheet's whole table) */
    size_t first;         /* a part's first record in the sheet */
} sheet_piece;

struct stream_sheet {
    tl_xlsx_writer *w;
    tl_result res;        /* a copy: the caller's may move (a sheet in parts: its first part's) */
    size_t index;         /* 0, 1, ... in the order added */
    size_t file;          /* its part: xl/worksheets/sheet<file>.xml */
    size_t job;           /* the pool's job count once its last piece was queued */
    colinfo *ci;          /* its columns (NULL for an empty result) */
    size_t npieces, left; /* left: pieces not done yet, under the writer's `mu` */
    sheet_piece *pieces;  /* a sheet added whole: its pieces */
    sheet_piece **parts;  /* a sheet added in parts: each part's piece, as they come */
    size_t total, given;  /* a sheet in parts: its records in all, and in the parts given */
    int complete;         /* every piece is queued (under `mu`) */
    tl_zip_blob *blobs;   /* each piece, compressed */
    size_t blobcap, pieces_cap;
};

/*
 * Cells per piece.  A big sheet is rendered and compressed in pieces, each a job, so
 * that the caller helping at the end of the run (and the pool's threads) can share even
 * the last sheet; ~10 MB of XML each, large enough that a piece's fresh DEFLATE history
 * costs nothing measurable.
 */
#define XL_PIECE_CELLS 250000


struct tl_xlsx_writer {
    char *path;
    tl_zip *z;
    tl_pool *pool;
    render_state *states; /* one per pool slot: each thread's compressor and buffer */
    int nstates;
    int summary_first;
    size_t piece_cells;   /* cells per piece (0: XL_PIECE_CELLS) */
    stream_sheet **sheets;
    sheet_job *jobs;      /* what close() needs of each sheet */
    const char **names;
    size_t n, cap;
    pthread_mutex_t mu;   /* the zip, the pieces' countdown, `failed` and `werr` */
    int failed;
    tl_error werr;        /* the first failure */
};

static void render_piece_job(void *arg, int worker)
{
    sheet_piece *pc = arg;
    stream_sheet *sh = pc->sh;
    tl_xlsx_writer *w = sh->w;
    render_state *st = &w->states[worker];
    pthread_mutex_lock(&w->mu);
    int failed = w->failed;
    pthread_mutex_unlock(&w->mu);

    tl_zip_blob blob = {0};
    if (!failed) { /* after a failure the workbook is lost anyway: only count down */
        if (!st->comp)
            st->comp = tl_zip_compressor_new(TL_ZIP_LEVEL);
        int selected = !w->summary_first && sh->index == 0;
        tl_buf_clear(&st->xml);
        tl_zip_stream_begin(st->comp, &blob);
        int last;
        if (!sh->ci) {
            tl_render_empty(&st->xml, selected);
            last = 1;
        } else if (pc->own) {
            tl_result part = sh->res;
            part.table = pc->own;
            tl_render_sheet_rows(&part, sh->ci, selected, pc->first, sh->total, 0, pc->own->nrows, &st->xml,
                                 st->comp);
            last = pc->first + pc->own->nrows == sh->total;
        } else {
            size_t nrows = sh->res.table->nrows;
            size_t r0 = nrows * pc->k / sh->npieces, r1 = nrows * (pc->k + 1) / sh->npieces;
            tl_render_sheet_rows(&sh->res, sh->ci, selected, 0, nrows, r0, r1, &st->xml, st->comp);
            last = pc->k + 1 == sh->npieces;
        }
        tl_xb_flush(&st->xml, st->comp);
        if (last)
            tl_zip_stream_finish(st->comp);
        else
            tl_zip_stream_finish_piece(st->comp);
    }
    tl_table_free(pc->own); /* a part: rendered, or never to be */
    pc->own = NULL;

    pthread_mutex_t *outer = tl_oom_lock(&w->mu);
    sh->blobs[pc->k] = blob;
    if (--sh->left == 0 && sh->complete) {
        /* the sheet's last piece to end stores the sheet, its pieces in order */
        tl_error err = {0};
        if (!w->failed && tl_write_sheet_pieces(w->z, sh->file, sh->blobs, sh->npieces, &err) != 0) {
            w->failed = 1;
            w->werr = err;
        }
        for (size_t k = 0; k < sh->npieces; k++)
            tl_zip_blob_free(&sh->blobs[k]); /* when not written */
    }
    tl_oom_unlock(&w->mu, outer);
}

tl_xlsx_writer *tl_xlsx_writer_open(const char *path, int summary_first, tl_pool *pool, tl_error *err)
{
    tl_xlsx_writer *w = tl_xcalloc(1, sizeof *w);
    w->path = tl_xstrdup(path);
    w->summary_first = summary_first;
    w->z = tl_zip_create(path, err);
    if (!w->z) {
        free(w->path);
        free(w);
        return NULL;
    }
    w->pool = pool;
    w->nstates = tl_pool_slots(pool);
    w->states = tl_render_states_new(w->nstates);
    pthread_mutex_init(&w->mu, NULL);
    return w;
}

/* A new sheet of `nrows` records for result r (its columns from r's table), in the
 * writer's order. */
static stream_sheet *sheet_new(tl_xlsx_writer *w, const tl_result *r, size_t nrows)
{
    if (w->n == w->cap) {
        w->cap = w->cap ? 2 * w->cap : 64;
        w->sheets = tl_xrealloc(w->sheets, w->cap * sizeof *w->sheets);
        w->jobs = tl_xrealloc(w->jobs, w->cap * sizeof *w->jobs);
        w->names = tl_xrealloc(w->names, w->cap * sizeof *w->names);
    }
    stream_sheet *sh = tl_xcalloc(1, sizeof *sh);
    sh->w = w;
    sh->res = *r;
    sh->index = w->n;
    sh->file = w->n + (w->summary_first ? 2 : 1); /* sheet1.xml: the summary, when it leads */
    sh->ci = tl_result_is_empty(r) ? NULL : tl_sheet_columns(r);
    sh->total = nrows;
    w->sheets[w->n] = sh;
    w->names[w->n] = r->name;
    w->jobs[w->n] = (sheet_job){.kind = SHEET_RESULT, .file = sh->file, .nrows = nrows, .ncols = r->table->ncols};
    w->n++;
    return sh;
}

int tl_xlsx_writer_add(tl_xlsx_writer *w, const tl_result *r, tl_error *err)
{
    const tl_table *t = r->table;
    if (!tl_result_fits(r, w->path, err))
        return -1;
    stream_sheet *sh = sheet_new(w, r, t->nrows);
    size_t cells = sh->ci ? t->nrows * t->ncols : 0;
    sh->npieces = cells / (w->piece_cells ? w->piece_cells : XL_PIECE_CELLS) + 1;
    if (sh->npieces > t->nrows)
        sh->npieces = t->nrows ? t->nrows : 1;
    sh->left = sh->npieces;
    sh->complete = 1;
    sh->pieces = tl_xcalloc(sh->npieces, sizeof *sh->pieces);
    sh->blobs = tl_xcalloc(sh->npieces, sizeof *sh->blobs);
    for (size_t k = 0; k < sh->npieces; k++) {
        sh->pieces[k] = (sheet_piece){sh, k, NULL, 0};
        sh->job = tl_pool_add(w->pool, render_piece_job, &sh->pieces[k]);
    }
    return 0;
}

int tl_xlsx_writer_add_part(tl_xlsx_writer *w, const tl_result *r, size_t total, tl_error *err)
{
    stream_sheet *sh = w->n ? w->sheets[w->n - 1] : NULL;
    if (!sh || sh->complete) { /* the sheet's first part */
        if (!tl_sheet_fits(r->name, total, r->table->ncols, w->path, err)) {
            tl_table_free(r->table);
            return -1;
        }
        sh = sheet_new(w, r, total);
        sh->res.table = NULL; /* each part's table is its piece's */
    }
    size_t nrows = r->table->nrows;
    if (nrows > sh->total - sh->given || r->table->ncols != w->jobs[sh->index].ncols) {
        /* the sheet's dimension and columns are its first part's: a part beyond them
         * would make a sheet that says one size and holds another */
        tl_error_set(err, "%s: a part of result '%s' (%zu rows x %zu columns) does not fit: %zu of its %zu rows "
                          "given, %zu columns", w->path, r->name, nrows, r->table->ncols, sh->given, sh->total,
                     w->jobs[sh->index].ncols);
        tl_table_free(r->table);
        return -1;
    }
    sheet_piece *pc = tl_xcalloc(1, sizeof *pc);
    *pc = (sheet_piece){sh, sh->npieces, r->table, sh->given};
    pthread_mutex_t *outer = tl_oom_lock(&w->mu); /* the jobs of earlier parts store their blobs meanwhile */
    TL_GROW(sh->blobs, sh->blobcap, sh->npieces + 1);
    sh->blobs[sh->npieces] = (tl_zip_blob){0};
    TL_GROW(sh->parts, sh->pieces_cap, sh->npieces + 1);
    sh->parts[sh->npieces++] = pc;
    sh->left++;
    sh->given += nrows;
    sh->complete = sh->given >= total;
    tl_oom_unlock(&w->mu, outer);
    size_t before = sh->job;
    sh->job = tl_pool_add(w->pool, render_piece_job, pc);
    /* At most two parts in memory: the one just given and the one before, which the pool
     * renders meanwhile (the caller helping when it is behind). */
    if (sh->npieces > 1)
        tl_pool_wait(w->pool, before);
    return 0;
}

int tl_xlsx_writer_sync(tl_xlsx_writer *w, size_t upto, tl_error *err)
{
    if (upto > w->n)
        upto = w->n;
    if (upto > 0)
        tl_pool_wait(w->pool, w->sheets[upto - 1]->job);
    pthread_mutex_lock(&w->mu);
    int failed = w->failed;
    if (failed)
        tl_error_set(err, "%s", w->werr.msg);
    pthread_mutex_unlock(&w->mu);
    return failed ? -1 : 0;
}

/* Let every queued sheet's job end (quickly: a failed writer renders nothing). */
static void writer_stop(tl_xlsx_writer *w)
{
    pthread_mutex_lock(&w->mu);
    w->failed = 1;
    pthread_mutex_unlock(&w->mu);
    if (w->n > 0)
        tl_pool_wait(w->pool, w->sheets[w->n - 1]->job);
}

static void writer_free(tl_xlsx_writer *w)
{
    for (size_t i = 0; i < w->n; i++) {
        free(w->sheets[i]->ci);
        free(w->sheets[i]->pieces);
        for (size_t k = 0; w->sheets[i]->parts && k < w->sheets[i]->npieces; k++) {
            tl_table_free(w->sheets[i]->parts[k]->own);
            free(w->sheets[i]->parts[k]);
        }
        free(w->sheets[i]->parts);
        for (size_t k = 0; w->sheets[i]->blobs && k < w->sheets[i]->npieces; k++)
            tl_zip_blob_free(&w->sheets[i]->blobs[k]); /* a sheet never stored */
        free(w->sheets[i]->blobs);
        free(w->sheets[i]);
    }
    free(w->sheets);
    free(w->jobs);
    free(w->names);
    tl_render_states_free(w->states, w->nstates);
    pthread_mutex_destroy(&w->mu);
    free(w->path);
    free(w);
}

void tl_xlsx_writer_abort(tl_xlsx_writer *w)
{
    if (!w)
        return;
    writer_stop(w);
    tl_zip_abort(w->z);
    writer_free(w);
}

int tl_xlsx_writer_close(tl_xlsx_writer *w, const tl_summary_sheet *sum, tl_error *err)
{
    if (tl_xlsx_writer_sync(w, (size_t)-1, err) != 0) {
        tl_xlsx_writer_abort(w);
        return -1;
    }
    /* a sheet given in parts that never reached its rows would be a part the book names
     * and does not hold */
    for (size_t i = 0; i < w->n; i++)
        if (!w->sheets[i]->complete) {
            tl_error_set(err, "%s: result '%s' was given %zu of its %zu rows", w->path, w->names[i],
                         w->sheets[i]->given, w->sheets[i]->total);
            tl_xlsx_writer_abort(w);
            return -1;
        }

    /* The book in tab order: the summary (if any), then the results. */
    book bk = {0};
    bk.tabs = tl_tab_names(w->names, w->n);
    if (sum) {
        tl_summary_plan_init(&bk.plan, sum);
        bk.has_summary = 1;
        bk.has_chart = sum->chart != NULL;
        if (!tl_summary_fits(&bk.plan, w->path, err)) {
            tl_summary_plan_free(&bk.plan);
            tl_tab_names_free(bk.tabs, w->n);
            tl_xlsx_writer_abort(w);
            return -1;
        }
        bk.summary_tab = tl_summary_tab(sum->name, bk.tabs, w->n);
    }
    bk.nsheets = w->n + (size_t)bk.has_summary;
    if (bk.nsheets == 0)
        bk.nsheets = 1;
    bk.jobs = tl_xcalloc(bk.nsheets, sizeof *bk.jobs);
    size_t k = 0, summary_file = w->summary_first ? 1 : w->n + 1;
    if (bk.has_summary)
        bk.jobs[k] = (sheet_job){.kind = SHEET_SUMMARY, .tab = bk.summary_tab, .file = summary_file}, k++;
    for (size_t i = 0; i < w->n; i++) {
        bk.jobs[k] = w->jobs[i];
        bk.jobs[k].tab = bk.tabs[i];
        k++;
    }
    if (k == 0)
        bk.jobs[k] = (sheet_job){.kind = SHEET_EMPTY, .tab = "Sheet1", .file = 1}, k++;

    int rc = 0;
    tl_buf b = {0};
    char name[64];
    if (bk.has_summary || w->n == 0) {
        /* the summary (or the one empty sheet) is rendered here, the threads being done */
        tl_zip_compressor *comp = tl_zip_compressor_new(TL_ZIP_LEVEL);
        tl_render_job(&bk, 0, &b, comp, &bk.jobs[0].blob);
        tl_zip_compressor_free(comp);
        rc = tl_write_sheet(w->z, &bk.jobs[0], err);
        tl_buf_clear(&b);
    }
    tl_part_content_types(&bk, &b);
    rc = rc ? rc : tl_add_part(w->z, "[Content_Types].xml", &b, err);
    tl_part_root_rels(&b);
    rc = rc ? rc : tl_add_part(w->z, "_rels/.rels", &b, err);
    tl_part_app(&b);
    rc = rc ? rc : tl_add_part(w->z, "docProps/app.xml", &b, err);
    tl_part_core(&b);
    rc = rc ? rc : tl_add_part(w->z, "docProps/core.xml", &b, err);
    tl_part_workbook(&bk, &b);
    rc = rc ? rc : tl_add_part(w->z, "xl/workbook.xml", &b, err);
    tl_part_workbook_rels(&bk, &b);
    rc = rc ? rc : tl_add_part(w->z, "xl/_rels/workbook.xml.rels", &b, err);
    tl_part_styles(&b);
    rc = rc ? rc : tl_add_part(w->z, "xl/styles.xml", &b, err);
    if (bk.has_chart && rc == 0) {
        tl_part_rels_one(&b, "drawing", "../drawings/drawing1.xml");
        snprintf(name, sizeof name, "xl/worksheets/_rels/sheet%zu.xml.rels", summary_file);
        rc = rc ? rc : tl_add_part(w->z, name, &b, err);
        tl_render_drawing(&bk.plan, &b);
        rc = rc ? rc : tl_add_part(w->z, "xl/drawings/drawing1.xml", &b, err);
        tl_part_rels_one(&b, "chart", "../charts/chart1.xml");
        rc = rc ? rc : tl_add_part(w->z, "xl/drawings/_rels/drawing1.xml.rels", &b, err);
        tl_render_chart(&bk.plan, bk.summary_tab, &b);
        rc = rc ? rc : tl_add_part(w->z, "xl/charts/chart1.xml", &b, err);
    }
    tl_buf_free(&b);
    if (rc == 0)
        rc = tl_zip_close(w->z, err);
    else
        tl_zip_abort(w->z);

    if (bk.has_summary)
        tl_summary_plan_free(&bk.plan);
    free(bk.summary_tab);
    free(bk.jobs);
    tl_tab_names_free(bk.tabs, w->n);
    writer_free(w);
    return rc ? -1 : 0;
}

/* ---- the whole book at once ---------------------------------------------------------- */

/* The whole workbook at once: the streaming writer above, given every result. */
int tl_xlsx_write(const tl_results *results, const tl_xlsx_write_opts *opts, const char *path,
                  tl_error *err)
{
    /* what cannot be written is refused before the file is made */
    const tl_summary_sheet *sum = opts ? opts->summary : NULL;
    for (size_t i = 0; i < results->n; i++)
        if (!tl_result_fits(&results->items[i], path, err))
            return -1;
    if (sum) {
        summary_plan plan;
        tl_summary_plan_init(&plan, sum);
        int fits = tl_summary_fits(&plan, path, err);
        tl_summary_plan_free(&plan);
        if (!fits)
            return -1;
    }

    int threads = opts && opts->threads > 0 ? opts->threads : 2;
    if (threads > XL_MAX_THREADS)
        threads = XL_MAX_THREADS;
    tl_pool *pool = tl_pool_new(threads - 1); /* the caller renders too, in close() */
    tl_xlsx_writer *w = tl_xlsx_writer_open(path, sum != NULL, pool, err);
    int rc = w ? 0 : -1;
    if (w)
        w->piece_cells = opts ? opts->piece_cells : 0;
    for (size_t i = 0; i < results->n && rc == 0; i++)
        rc = tl_xlsx_writer_add(w, &results->items[i], err);
    if (rc == 0)
        rc = tl_xlsx_writer_close(w, sum, err);
    else if (w)
        tl_xlsx_writer_abort(w);
    tl_pool_free(pool, rc != 0);
    return rc;
}
