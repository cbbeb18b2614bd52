/*
 * report.c - one report run (see report.h): the trace loaded (attributed through its
 * capture folder), its sheets built, the selections applied, the outputs written.
 */
#include "run/report.h"

#include "io/output.h"
#include "perf/gpu_arch.h"
#include "perf/perf.h"
#include "run/compare.h"
#include "run/memreport.h"
#include "run/page.h"
#include "summary/page.h"
#include "trace/infer.h"
#include "trace/steps.h"
#include "trace/trace_report.h"
#include "write/csv_write.h"
#include "write/sink.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void tl_run_report_opts_init(tl_run_report_opts *o)
{
    memset(o, 0, sizeof *o);
    o->topk_ops = -1;
}

/* The option that only selects what is shown: the first rows of ops_unique_args. */
static int apply_selections(const tl_run_report_opts *o, const tl_trace *t, tl_results *res, tl_error *err)
{
    for (size_t i = 0; i < res->n; i++) {
        tl_result *r = &res->items[i];
        if (o->topk_ops >= 0 && !strcmp(r->name, "ops_unique_args") && r->table->nrows > (size_t)o->topk_ops)
            r->table->nrows = r->nrows = (size_t)o->topk_ops;
    }
    return 0;
}

/* The caller's flag is set: "interrupted" into *err. */
static int stop_asked(tl_cancel *cancel, tl_error *err)
{
    if (!tl_cancelled(cancel))
        return 0;
    tl_error_set(err, "interrupted");
    return 1;
}

/* The CSVs of `res` in `dir`, committed together with more[0..nmore) (written already). */
static int write_csvs_with(const tl_results *res, const char *dir, tl_output *const *more, size_t nmore,
                           tl_cancel *cancel, tl_error *err)
{
    for (size_t i = 0; i < res->n; i++) {
        if (strchr(res->items[i].name, '/')) {
            tl_error_set(err, "result '%s' cannot be a file name (a tag holds '/')", res->items[i].name);
            return -1;
        }
    }
    tl_output *out = tl_output_new(dir, 1, err);
    if (!out)
        return -1;
    int rc = 0;
    for (size_t i = 0; i < res->n && rc == 0; i++) {
        char *name = tl_xmalloc(strlen(res->items[i].name) + 5);
        sprintf(name, "%s.csv", res->items[i].name);
        char *file = tl_output_add(out, name);
        rc = stop_asked(cancel, err) ? -1 : tl_csv_write_file(res->items[i].table, file, err);
        free(file);
        free(name);
    }
    if (rc == 0 && stop_asked(cancel, err))
        rc = -1;
    if (rc == 0) {
        tl_output *all[2] = {out, nmore ? more[0] : NULL};
        rc = tl_output_commit(all, 1 + (nmore > 0), err);
    }
    tl_output_free(out);
    return rc;
}

int tl_run_write_csvs(const tl_results *res, const char *dir, tl_cancel *cancel, tl_error *err)
{
    return write_csvs_with(res, dir, NULL, 0, cancel, err);
}

/* The page of the report (--html) into its output's temporary file. */
static int write_page(tl_output *h, const tl_results *res, const tl_trace *t, const char *trace,
                      const tl_gpu_arch *arch, tl_error *err)
{
    char *tag = tl_path_stem(trace);
    size_t n = strlen(tag);
    /* the tag tlcompare gives a trace: its name without .json(.gz) and .pt.trace */
    for (const char *suffix[] = {".json", ".pt.trace"}, **sx = suffix; sx < suffix + 2; sx++) {
        size_t k = strlen(*sx);
        if (n >= k && !strcmp(tag + n - k, *sx))
            tag[n -= k] = '\0';
    }
    /* its steps, as the comparison of two traces measures them */
    tl_steps steps;
    tl_trace_steps(t, &steps);
    tl_run_page pg;
    tl_run_page_init(&pg);
    const tl_page_bar_set *set = tl_run_page_report_steps(&pg, &steps, tag);
    tl_buf page = {0};
    tl_report_html(res, tag, arch, set, set ? 1 : 0, &page);
    tl_run_page_free(&pg);
    tl_steps_free(&steps);
    FILE *f = fopen(tl_output_temp(h), "wb");
    int bad = !f || fwrite(page.data ? page.data : "", 1, page.len, f) != page.len;
    if (f && fclose(f) != 0)
        bad = 1;
    if (bad)
        tl_error_set(err, "%s: cannot write: %s", tl_output_target(h), strerror(errno));
    tl_buf_free(&page);
    free(tag);
    return bad ? -1 : 0;
}

static int cancelled(const tl_run_report_opts *o, tl_error *err) { return stop_asked(o->cancel, err); }

int tl_run_report_build(const tl_run_report_opts *o, tl_run_report *r)
{
    memset(r, 0, sizeof *r);
    tl_arena_init(&r->arena);
    tl_error *err = &r->err;
    const char *xlsx = o->output;
    const char *clash = xlsx && tl_output_same_target(xlsx, o->trace)                    ? xlsx
                        : tl_output_dir_holds(o->csv_dir, NULL, 0, ".csv", o->trace)      ? o->csv_dir
                        : xlsx && o->csv_dir && tl_output_same_target(xlsx, o->csv_dir) ? o->csv_dir
                        : o->html && tl_output_same_target(o->html, o->trace)             ? o->html
                        : o->html && xlsx && tl_output_same_target(o->html, xlsx)         ? o->html
                        : o->html && o->csv_dir && tl_output_same_target(o->html, o->csv_dir) ? o->html
                                                                                          : NULL;
    if (clash) {
        int on_trace = tl_output_same_target(clash, o->trace);
        tl_error_set(err, "the output '%s' would overwrite %s; refusing", clash,
                     on_trace ? "the input trace" : clash == o->html && o->csv_dir && tl_output_same_target(clash, o->csv_dir)
                                                     ? "the CSV directory" : "the workbook");
        r->usage_hint = 1;
        return r->status = TL_RUN_USAGE;
    }
    r->status = TL_RUN_FAILED;
    tl_gpu_arch arch;
    if (o->gpu_arch && tl_gpu_arch_load(o->gpu_arch, &arch, err) != 0)
        return r->status;
    tl_reading(o->trace); /* out of memory names the trace, while it is read and its sheets made */
    tl_sheet_opts so = {0};
    so.inference = o->capture_dir || o->inference || o->parent_module;
    so.parent_module = o->parent_module;
    so.num_kernels = o->num_kernels;
    so.include_unlinked = o->unlinked;
    so.no_coll_analysis = o->no_coll;
    tl_infer_opts io = {o->capture_dir, o->parent_module || o->call_stack, o->pseudo_ops, o->call_stack, o->cancel, 0};
    tl_infer_stats st = {0};
    int infer = so.inference || o->call_stack || o->pseudo_ops;
    tl_out *out = NULL;
    tl_output *html = NULL;
    if (o->html && !(html = tl_output_new(o->html, 0, err)))
        goto fail;
    r->trace = infer ? tl_infer_load(o->trace, &io, &st, err) : tl_trace_load_cancel(o->trace, 0, o->cancel, err);
    if (!r->trace)
        goto fail;
    if (cancelled(o, err))
        goto cancel;
    if ((infer ? tl_perf_infer_report_sheets(r->trace, &so, &io, &r->arena, &r->results, err)
               : tl_perf_report_sheets_layout(r->trace, &so, o->gpu_arch ? &arch : NULL, &r->arena, &r->results, err)) != 0 ||
        apply_selections(o, r->trace, &r->results, err) != 0)
        goto fail;
    if (cancelled(o, err))
        goto cancel;
    tl_reading(NULL);
    if (!o->capture_dir && o->capture_hint)
        tl_infer_capture_hint(r->trace, o->trace);
    tl_results *res = &r->results;
    if (html && write_page(html, res, r->trace, o->trace, o->gpu_arch ? &arch : NULL, err) != 0)
        goto stop;
    if (xlsx) {
        out = tl_out_open(xlsx, o->csv_dir, 0, err);
        if (!out)
            goto fail;
        tl_sink sink = tl_out_sink(out);
        for (size_t i = 0; i < res->n; i++) {
            if (cancelled(o, err))
                goto stop;
            int bad = sink.put(sink.ctx, &res->items[i], err) != 0;
            res->items[i].table = NULL; /* the sink's now, whatever happened */
            if (bad)
                goto stop;
        }
        if (cancelled(o, err))
            goto stop;
        if (tl_out_finish(out, NULL, err) != 0 || tl_out_commit_with(out, &html, html ? 1 : 0, err) != 0)
            goto stop;
        tl_out_free(out);
        out = NULL;
    } else if (o->csv_dir) {
        if (write_csvs_with(res, o->csv_dir, &html, html ? 1 : 0, o->cancel, err) != 0)
            goto stop;
        for (size_t i = 0; i < res->n; i++) {
            tl_table_free(res->items[i].table);
            res->items[i].table = NULL;
        }
    } else if (html && tl_output_commit(&html, 1, err) != 0) {
        goto stop;
    }
    tl_output_free(html);
    if (o->capture_dir && st.nlaunch)
        tl_infer_summary(r->trace, &st, &r->infer_line);
    tl_trace_uncancel(r->trace); /* kept past the run, whose flag may not live as long */
    return r->status = TL_RUN_OK;
stop:
    tl_out_free(out); /* nothing half-written stays behind */
    tl_output_free(html);
    html = NULL;
    if (cancelled(o, err))
        goto cancel;
fail:
    tl_output_free(html);
    if (tl_cancelled(o->cancel))
        goto cancel; /* the load or a sheet stopped on the flag */
    tl_reading(NULL);
    if (!err->msg[0])
        tl_error_set(err, "failed");
    return r->status = TL_RUN_FAILED;
cancel:
    tl_reading(NULL);
    tl_error_set(err, "interrupted");
    return r->status = TL_RUN_CANCELLED;
}

void tl_run_report_free(tl_run_report *r)
{
    tl_results_free(&r->results);
    tl_buf_free(&r->infer_line);
    tl_trace_free(r->trace);
    tl_arena_free(&r->arena);
    memset(r, 0, sizeof *r);
}

int tl_run_report_write(const tl_run_report *r, const char *xlsx, const char *csv_dir, tl_cancel *cancel,
                        tl_error *err)
{
    const tl_results *res = &r->results;
    for (size_t i = 0; i < res->n; i++) {
        if (!res->items[i].table) {
            tl_error_set(err, "the report's sheets were written, not kept");
            return -1;
        }
    }
    return tl_run_write_kept(res, xlsx, csv_dir, 0, NULL, cancel, err);
}

int tl_run_write_kept(const tl_results *res, const char *xlsx, const char *csv_dir, int summary_first,
                      const tl_summary_sheet *summary, tl_cancel *cancel, tl_error *err)
{
    if (xlsx && csv_dir && tl_output_same_target(xlsx, csv_dir)) {
        tl_error_set(err, "the workbook and the CSV directory both name '%s'; give each output its own path", xlsx);
        return -1;
    }
    if (!xlsx)
        return csv_dir ? tl_run_write_csvs(res, csv_dir, cancel, err) : 0;
    tl_out *out = tl_out_open(xlsx, csv_dir, summary_first, err);
    if (!out)
        return -1;
    tl_sink sink = tl_out_sink(out);
    int rc = 0;
    for (size_t i = 0; i < res->n && rc == 0; i++) {
        tl_result c = res->items[i];
        if (stop_asked(cancel, err)) {
            rc = -1;
            break;
        }
        c.table = tl_table_copy(c.table); /* the writer frees what it is given */
        rc = sink.put(sink.ctx, &c, err);
    }
    if (rc == 0)
        rc = tl_out_finish(out, summary, err);
    if (rc == 0 && stop_asked(cancel, err))
        rc = -1;
    if (rc == 0)
        rc = tl_out_commit(out, err);
    tl_out_free(out);
    return rc;
}
