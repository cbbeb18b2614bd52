/*
 * tlcompare_mpi.c - tlcompare's comparison of distributed runs over MPI:
 * `mpirun -np P tlcompare-mpi RUN_A RUN_B ...` with tlcompare's options.  Process 0 (the
 * root) runs the comparison; each time it reads a run of rank traces it tells every
 * process the run's rank files, process p reads the ranks i with i % P == p (on -j
 * threads), reduces each to its facts at once and sends the root those facts, packed
 * (never the traces); the root compares and writes, the same bytes as `tlcompare` on one
 * machine.  Runs given as per-rank reports are read by the root alone (they are small).
 *
 * Every process opens its rank files itself: they must be at the same paths on every
 * node.  Built by `make mpi`, not by the normal build.
 */
#include "base/util.h"
#include "io/output.h"
#include "mpi/mpi_share.h"
#include "ranks/ranks.h"
#include "run/compare.h"
#include "run/compare_args.h"
#include "summary/summary.h"

#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef TL_VERSION
#define TL_VERSION "dev"
#endif

enum { ROOT = TL_MPI_ROOT, EXIT_USAGE = 2, EXIT_REGRESSION = 3 };

/* What the root broadcasts: 'R' and a run's rank files (NUL-separated) to read, or 'D' when
 * the comparison has read every run. */

/* The root's read of a run (tl_compare_opts.read_ranks): the paths told, its own share
 * read, the others' gathered. */
static int read_spread(tl_rank_set *s, int jobs, void *ctx, tl_error *err)
{
    int np = *(const int *)ctx;
    tl_buf b = {0};
    tl_buf_add(&b, "R", 1);
    for (size_t i = 0; i < s->n; i++)
        tl_buf_add(&b, s->paths[i], strlen(s->paths[i]) + 1);
    tl_mpi_bcast_bytes(&b, ROOT);
    tl_buf_free(&b);
    tl_ranks_read_part(s, jobs, ROOT, (size_t)np);
    if (tl_mpi_gather_shares(s, np, err) < 0)
        return -1;
    return tl_ranks_read_failed(s, err);
}

/* A process other than the root: read its share of each run the root names, until 'D'. */
static void serve(int me, int np, int jobs)
{
    tl_buf b = {0};
    for (;;) {
        tl_mpi_bcast_bytes(&b, me);
        if (b.len == 0 || b.data[0] != 'R')
            break;
        tl_rank_set s = {0};
        for (size_t i = 1; i < b.len; i++)
            s.n += b.data[i] == 0;
        s.paths = tl_xcalloc(s.n ? s.n : 1, sizeof *s.paths);
        for (size_t i = 0, at = 1; i < s.n; i++) {
            s.paths[i] = tl_xstrdup(b.data + at);
            at += strlen(b.data + at) + 1;
        }
        s.want_ops = 1;
        tl_ranks_read_part(&s, jobs, (size_t)me, (size_t)np);
        tl_buf out = {0};
        tl_mpi_pack_share(&s, me, np, &out);
        tl_mpi_send_bytes(&out);
        tl_buf_free(&out);
        tl_rank_set_free(&s);
    }
    tl_buf_free(&b);
}

/* argv through tlcompare's option table and its check: 0 to run, else the exit status
 * (after --help or --version: 0 with *done set).  Only the root says anything. */
static int parse(int argc, char **argv, tl_compare_args *a, int me, int *done)
{
    tl_error err = {0};
    int rc = tl_opts_parse_argv(&tl_compare_tool, argc, argv, a, &err);
    if (rc == 0 && (a->help || a->version)) {
        if (me == ROOT) {
            tl_buf help = {0};
            if (a->help)
                tl_opts_help(&tl_compare_tool, &help);
            else
                tl_buf_printf(&help, "tlcompare-mpi %s\n", TL_VERSION);
            fputs(tl_buf_cstr(&help), stdout);
            tl_buf_free(&help);
        }
        *done = 1;
        return 0;
    }
    tl_quiet = a->quiet || me != ROOT;
    if (rc == 0)
        rc = tl_compare_args_check(a, &err);
    if (rc != 0 && me == ROOT)
        fprintf(stderr, "tlcompare-mpi: %s%s\n", err.msg, rc == TL_RUN_USAGE ? " (see 'tlcompare --help')" : "");
    return rc == TL_RUN_USAGE ? EXIT_USAGE : rc ? 1 : 0;
}

/* The root: the comparison run, the workers released, the answer printed.  The exit status. */
static int root_run(tl_compare_args *a, int np)
{
    tl_output_install_cleanup();
    a->run.read_ranks = read_spread;
    a->run.read_ranks_ctx = &np;
    tl_comparison cmp;
    int rc = tl_compare_run(&a->run, &cmp);
    tl_buf done = {0};
    tl_buf_add(&done, "D", 1);
    tl_mpi_bcast_bytes(&done, ROOT);
    tl_buf_free(&done);
    if (rc == TL_RUN_USAGE) {
        fprintf(stderr, "tlcompare-mpi: %s%s\n", cmp.err.msg, cmp.usage_hint ? " (see 'tlcompare --help')" : "");
        rc = EXIT_USAGE;
    } else if (rc != TL_RUN_OK && rc != TL_RUN_REGRESSION) {
        tl_output_cleanup();
        fprintf(stderr, "tlcompare-mpi: %s\n", cmp.err.msg[0] ? cmp.err.msg : "failed");
        rc = 1;
    } else {
        if (!a->quiet) {
            tl_buf b = {0};
            tl_comparison_summary_text(&cmp, 0, &b);
            fwrite(b.data ? b.data : "", 1, b.len, stdout);
            tl_buf_free(&b);
            printf("\nWrote %s: %zu result sheets\n", a->run.output ? a->run.output : "nothing", cmp.results->n);
        }
        if (rc == TL_RUN_REGRESSION) {
            tl_summary_print_violations(cmp.summary, stderr);
            rc = EXIT_REGRESSION;
        }
    }
    tl_comparison_free(&cmp);
    if (fflush(stdout) != 0 && rc == 0)
        rc = 1;
    return rc;
}

int main(int argc, char **argv)
{
    int me, np;
    tl_mpi_begin("tlcompare-mpi", &argc, &argv, &me, &np);
    tl_compare_args a;
    tl_compare_args_init(&a);
    int done = 0, rc = parse(argc, argv, &a, me, &done);
    if (rc == 0 && !done) {
        if (me == ROOT)
            rc = root_run(&a, np);
        else
            serve(me, np, a.run.jobs);
        /* the exit status is the root's alone: mpirun ends the others when one exits
         * non-zero, and the root, still finishing, would say it was interrupted */
        MPI_Barrier(MPI_COMM_WORLD);
    }
    tl_compare_args_free(&a);
    MPI_Finalize();
    return rc;
}
