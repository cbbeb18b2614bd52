/*
 * ranks.c - one multi-rank collective report run (run/ranks.h).
 */
#include "run/ranks.h"

#include "run/compare.h"
#include "run/report.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int tl_run_ranks_build(const tl_run_ranks_opts *o, tl_run_ranks *r)
{
    memset(r, 0, sizeof *r);
    tl_arena_init(&r->arena);
    r->status = TL_RUN_FAILED;
    if (tl_ranks_find(&o->r, &r->set, &r->err) < 0 || tl_ranks_read(&r->set, o->r.jobs, &r->err) < 0 ||
        tl_ranks_sheets(&r->set, &o->r, &r->arena, &r->results, &r->err) < 0)
        return r->status;
    if (o->output) {
        r->output = tl_xstrdup(o->output);
    } else if (!o->csv_dir) {
        char *dir = tl_ranks_default_dir(&o->r, &r->set);
        r->output = tl_xstrdup(dir);
        tl_buf b = {0};
        tl_buf_printf(&b, "%s/nccl_analysis_report.xlsx", dir);
        free(r->output);
        r->output = tl_xstrdup(tl_buf_cstr(&b));
        tl_buf_free(&b);
        free(dir);
    }
    if (tl_run_write_kept(&r->results, r->output, o->csv_dir, 0, NULL, NULL, &r->err) < 0)
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
