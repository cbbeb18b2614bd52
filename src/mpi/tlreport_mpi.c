/*
 * tlreport_mpi.c - tlreport's multi-rank collective report over MPI (MULTIRANK.md):
 * `mpirun -np P tlreport-mpi --trace_pattern ... --world_size N ...` with tlreport's
 * options.  Process 0 (the root) finds the rank files and tells the others their paths;
 * process p reads the ranks i with i % P == p (on -j threads), reduces each to its facts
 * at once and sends the root those facts, packed (never the traces); the root makes the
 * sheets and writes them, the same bytes as `tlreport` on one machine.
 *
 * Every process opens its rank files itself: they must be at the same paths on every
 * node (a shared file system, or staged there).  Built by `make mpi`, not by the normal
 * build.
 */
#include "base/util.h"
#include "io/output.h"
#include "mpi/mpi_share.h"
#include "ranks/ranks.h"
#include "run/compare.h"
#include "run/collreport.h"
#include "run/report_args.h"

#include <mpi.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef TL_VERSION
#define TL_VERSION "dev"
#endif

enum { ROOT = TL_MPI_ROOT };

/* ---- the rank set: found by the root, its paths told to every process ------------------- */

/* The root's find, broadcast: a status byte, then the error or the paths (NUL-separated).
 * Returns 0 with s filled on every process, or -1 with *err (on every process). */
static int share_set(const tl_ranks_opts *o, tl_rank_set *s, int me, tl_error *err)
{
    tl_buf b = {0};
    if (me == ROOT) {
        int rc = tl_ranks_find(o, s, err);
        tl_buf_add(&b, rc < 0 ? "E" : "P", 1);
        if (rc < 0)
            tl_buf_adds(&b, err->msg);
        else
            for (size_t i = 0; i < s->n; i++)
                tl_buf_add(&b, s->paths[i], strlen(s->paths[i]) + 1);
    }
    tl_mpi_bcast_bytes(&b, me);
    int failed = b.len == 0 || b.data[0] == 'E';
    if (me != ROOT && failed)
        tl_error_set(err, "%.*s", b.len > 1 ? (int)(b.len - 1) : 0, b.data + 1);
    if (me != ROOT && !failed) {
        size_t n = 0;
        for (size_t i = 1; i < b.len; i++)
            n += b.data[i] == 0;
        memset(s, 0, sizeof *s);
        s->n = n;
        s->paths = tl_xcalloc(n ? n : 1, sizeof *s->paths);
        for (size_t i = 0, at = 1; i < n; i++) {
            s->paths[i] = tl_xstrdup(b.data + at);
            at += strlen(b.data + at) + 1;
        }
    }
    tl_buf_free(&b);
    return failed ? -1 : 0;
}

/* ---- main --------------------------------------------------------------------------------- */

static int parse(int argc, char **argv, tl_report_args *a, int me, int *done)
{
    tl_buf out = {0};
    tl_error err = {0};
    int rc = tl_opts_cli(&tl_report_tool, "tlreport-mpi", TL_VERSION, argc, argv, a, &out, &err);
    if (rc == 0 && !a->ranks.mode) {
        tl_error_set(&err, "tlreport-mpi reads rank sets (--trace_pattern, --trace_glob, --trace_dir, --ranks); "
                           "use tlreport for one trace");
        rc = TL_RUN_USAGE;
    }
    if (rc > 0)
        tl_opts_error_line(&tl_report_tool, "tlreport-mpi", rc, &err, &out);
    if (me == ROOT)
        fputs(tl_buf_cstr(&out), rc > 0 ? stderr : stdout);
    tl_buf_free(&out);
    *done = rc == TL_OPTS_SHOWN;
    return rc == TL_OPTS_SHOWN ? 0 : rc == TL_RUN_USAGE ? 2 : rc ? 1 : 0;
}

/* The root: the others' shares gathered, the report made and written.  0 or 1. */
static int root_finish(const tl_report_args *a, tl_rank_set *set, int np)
{
    tl_run_ranks_opts ro = {a->ranks, a->output, a->csv_dir};
    tl_run_ranks r;
    tl_run_ranks_init(&r);
    r.set = *set;
    memset(set, 0, sizeof *set);
    int bad = tl_mpi_gather_shares(&r.set, np, &r.err) < 0;
    int rc = !bad && tl_run_ranks_finish(&ro, &r) == TL_RUN_OK ? 0 : 1;
    if (rc) {
        tl_output_cleanup();
        fprintf(stderr, "tlreport-mpi: %s\n", r.err.msg[0] ? r.err.msg : "failed");
    } else if (!a->quiet) {
        for (size_t i = 0; i < r.results.n; i++)
            printf("Wrote sheet '%s' with %zu rows \xC3\x97 %zu columns\n", r.results.items[i].name,
                   r.results.items[i].nrows, r.results.items[i].ncols);
        if (r.output)
            printf("Wrote %s\n", r.output);
    }
    tl_run_ranks_free(&r);
    if (fflush(stdout) != 0)
        rc = 1;
    return rc;
}

int main(int argc, char **argv)
{
    int me, np;
    tl_mpi_begin("tlreport-mpi", &argc, &argv, &me, &np);
    tl_report_args a;
    tl_report_args_init(&a);
    int done = 0, rc = parse(argc, argv, &a, me, &done);
    if (rc == 0 && !done) {
        if (me == ROOT)
            tl_output_install_cleanup();
        tl_rank_set set;
        tl_error err = {0};
        if (share_set(&a.ranks, &set, me, &err) < 0) {
            if (me == ROOT)
                fprintf(stderr, "tlreport-mpi: %s\n", err.msg);
            rc = 1;
        } else {
            tl_ranks_read_part(&set, a.ranks.jobs, (size_t)me, (size_t)np);
            if (me == ROOT) {
                rc = root_finish(&a, &set, np);
            } else {
                tl_buf b = {0};
                tl_mpi_pack_share(&set, me, np, &b);
                tl_mpi_send_bytes(&b);
                tl_buf_free(&b);
            }
            tl_rank_set_free(&set);
        }
        MPI_Bcast(&rc, 1, MPI_INT, ROOT, MPI_COMM_WORLD); /* every process exits as the root */
    }
    tl_report_args_free(&a);
    MPI_Finalize();
    return rc;
}
