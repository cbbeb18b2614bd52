/*
 * dist_answer.c - a comparison of runs' answer first (dist_answer.h): how the slowest rank,
 * the ranks alone, the collectives and the straggler moved, said as the summary's lines,
 * its JSON "runs" object and the summary sheet's first block; the runs' gate.
 */
#include "run/dist_answer.h"

#include "base/jsonw.h"
#include "base/stats.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the answer first ------------------------------------------------------------------ */

/* How a time moved between two runs of one world size, rank i paired with rank i:
 * job-wide, a t-test of the ranks' changes; alone, a rank whose change lies outside the
 * prediction interval of the other ranks' changes (Bonferroni over the ranks) and is 0.5% of
 * its time or more.  The comparison's error rate is shared: half for the ops' verdicts, a
 * quarter for each of these two statements. */
typedef struct moved {
    double median, mean, lo, hi; /* of the changes (ms); lo..hi the job-wide interval */
    int job_wide;                /* 1 when the job-wide change is significant */
    size_t *alone, nalone;       /* the ranks that moved alone */
} moved;

/* Mean and sample standard deviation of v[0..n) without v[skip] (skip >= n: none). */
static void mean_sd(const double *v, size_t n, size_t skip, double *mean, double *sd)
{
    double sum = 0, sq = 0;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (i != skip)
            sum += v[i], k++;
    *mean = k ? sum / (double)k : NAN;
    for (size_t i = 0; i < n; i++)
        if (i != skip)
            sq += (v[i] - *mean) * (v[i] - *mean);
    *sd = k > 1 ? sqrt(sq / (double)(k - 1)) : NAN;
}

static void ranks_moved(const double *a, const double *b, size_t n, double conf, moved *m)
{
    memset(m, 0, sizeof *m);
    m->alone = tl_xcalloc(n ? n : 1, sizeof *m->alone);
    if (n < 3)
        return;
    double *dlt = tl_xcalloc(n, sizeof *dlt);
    for (size_t i = 0; i < n; i++)
        dlt[i] = b[i] - a[i];
    m->median = tl_dist_median(dlt, n);
    double alpha = (1 - conf) / 4, sd;
    /* a floor under the spread: ranks with identical times (no noise at all) */
    double floor_ms = 1e-3 * tl_dist_median(a, n);
    mean_sd(dlt, n, n, &m->mean, &sd);
    double se = (sd > floor_ms ? sd : floor_ms) / sqrt((double)n);
    double t = tl_t_quantile(1 - alpha / 2, (double)(n - 1));
    m->lo = m->mean - t * se, m->hi = m->mean + t * se;
    m->job_wide = (m->lo > 0 || m->hi < 0) && fabs(m->mean) > 1e-9;
    double tq = tl_t_quantile(1 - alpha / (2 * (double)n), (double)(n - 2));
    for (size_t i = 0; i < n; i++) {
        double mo, so;
        mean_sd(dlt, n, i, &mo, &so);
        so = so > floor_ms ? so : floor_ms;
        double off = dlt[i] - mo;
        if (fabs(off) > tq * so * sqrt(1 + 1.0 / (double)(n - 1)) && fabs(off) >= 0.005 * a[i])
            m->alone[m->nalone++] = i;
    }
    free(dlt);
}

/* The collective whose bus bandwidth changed most (of `coll`, the merged sheet), beyond 5%:
 * its row, or -1. */
static long top_collective(const tl_table *coll, const char *tag, double *pct)
{
    if (!coll)
        return -1;
    char name[160];
    snprintf(name, sizeof name, "bus bw (GB/s)_mean__%s_pct", tag);
    long pc = tl_table_find(coll, name);
    long best = -1;
    for (size_t r = 0; pc >= 0 && r < coll->nrows; r++) {
        double p = tl_column_number_at(&coll->cols[pc], r);
        if (!isnan(p) && fabs(p) >= 5 && (best < 0 || fabs(p) > fabs(*pct)))
            best = (long)r, *pct = p;
    }
    return best;
}

/* The text of cell (col name, row) of t: a number or a string, into buf. */
static const char *cell_text(const tl_table *t, const char *name, size_t row, char *buf, size_t n)
{
    long c = tl_table_find(t, name);
    buf[0] = '\0';
    if (c < 0)
        return buf;
    const tl_cell *x = &t->cols[c].cells[row];
    if (x->kind == TL_STR)
        snprintf(buf, n, "%s", x->v.s);
    else if (x->kind == TL_INT)
        snprintf(buf, n, "%lld", (long long)x->v.i);
    else if (x->kind == TL_FLOAT)
        snprintf(buf, n, "%.6g", x->v.f);
    return buf;
}

static double cell_num(const tl_table *t, const char *tag, const char *column, size_t row)
{
    char name[200];
    snprintf(name, sizeof name, "%s::%s", tag, column);
    long c = tl_table_find(t, name);
    return c < 0 ? NAN : tl_column_number_at(&t->cols[c], row);
}

static double pct_of(double a, double b) { return a > 0 ? 100 * (b - a) / a : NAN; }

/* One line of text and Markdown, the same words. */
static void say(tl_dist_lead *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(tl_dist_lead *l, const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    tl_buf_printf(&l->text, "  %s\n", line);
    tl_buf_printf(&l->md, "- %s\n", line);
}

/* Ops that moved on one rank only (ranks_ops: op, rank, its times and diff), per variant,
 * on total_direct_kernel_time_ms; lines for the summary. */
static void ops_alone(const struct tl_dist *d, tl_dist_lead *l, size_t k, double conf)
{
    const dist_run *A = &d->runs[0], *B = &d->runs[k];
    size_t n = A->set.n;
    if (!d->have_ops || B->set.n != n)
        return;
    if (!l->rank_ops) {
        l->rank_ops = tl_table_new();
        static const char *const cols[] = {"name", "rank", "variant", "baseline_ms", "variant_ms", "diff_ms", "pct"};
        for (size_t c = 0; c < 7; c++)
            tl_table_add_column(l->rank_ops, cols[c]);
        for (size_t c = 0; c < 7; c++)
            l->rank_ops->cols[c].type = c < 1 || c == 2 ? TL_COL_STR : TL_COL_NUM;
    }
    size_t listed = 0;
    for (size_t j = 0; j < d->nops; j++) {
        const char *op = d->ops[j];
        const double *va = A->op_ms + d->op_first[j] * n, *vb = B->op_ms + d->op_first[j] * n;
        int all = 1;
        for (size_t i = 0; i < n && all; i++)
            all = !isnan(va[i]) && !isnan(vb[i]);
        if (!all)
            continue;
        moved m;
        ranks_moved(va, vb, n, conf, &m);
        if (m.nalone == 1 && !m.job_wide && fabs(vb[m.alone[0]] - va[m.alone[0]]) >= 0.01) {
            size_t i = m.alone[0];
            tl_table *t = l->rank_ops;
            size_t row = t->nrows;
            for (size_t c = 0; c < t->ncols; c++) {
                t->cols[c].cells = tl_xrealloc(t->cols[c].cells, (row + 1) * sizeof *t->cols[c].cells);
                t->cols[c].cells[row] = tl_cell_missing();
            }
            t->cols[0].cells[row] = tl_cell_strn(op, strlen(op));
            t->cols[1].cells[row] = tl_cell_int((int64_t)i);
            t->cols[2].cells[row] = tl_cell_strn(B->tag, strlen(B->tag));
            tl_dist_put_num(&t->cols[3], row, va[i]);
            tl_dist_put_num(&t->cols[4], row, vb[i]);
            tl_dist_put_num(&t->cols[5], row, vb[i] - va[i]);
            tl_dist_put_num(&t->cols[6], row, pct_of(va[i], vb[i]));
            t->nrows++;
            if (listed++ < 5)
                say(l, "%s moved on rank %zu only: %.3f -> %.3f ms (%+.1f%%)", op, i, va[i], vb[i], pct_of(va[i], vb[i]));
        }
        free(m.alone);
    }
    if (listed > 5)
        say(l, "... %zu ops moved on one rank only (sheet %s)", listed, TL_DIST_SHEET_RANK_OPS);
}

/* What the summary says of one variant against the baseline. */
typedef struct answer {
    const dist_run *A, *B;
    int paired;
    double *ba, *bb;      /* busy time per rank */
    size_t sa, sb;        /* the slowest ranks */
    double d_ms, d_pct;   /* the slowest rank's busy time, its change */
    moved m;
    const char *verdict;
    double mca, mcb, mea, meb; /* compute and exposed communication, the median rank */
    long cr;              /* the collective whose bus bandwidth changed most (row of coll), or -1 */
    double cpct, bwa, bwb;
    char cname[96], cpg[64], cdt[32], cnel[32];
    const char *no_coll;  /* no collective sheets: why (NULL: there are) */
    long ga, gb;          /* the stragglers, or -1 */
    const char *change;   /* none, appeared, vanished, same, moved */
    int gate_busy, gate_coll; /* the gate failed on the slowest rank, on the collective */
} answer;

/* The numbers of variant k against the baseline (free with answer_free). */
static void answer_make(const struct tl_dist *d, const tl_compare_opts *o, const tl_table *coll, size_t k,
                        double conf, answer *x)
{
    memset(x, 0, sizeof *x);
    const dist_run *A = x->A = &d->runs[0], *B = x->B = &d->runs[k];
    x->paired = A->set.n == B->set.n;
    x->ba = tl_dist_rank_values(A, "busy_time"), x->bb = tl_dist_rank_values(B, "busy_time");
    x->sa = tl_dist_argmax(x->ba, A->set.n), x->sb = tl_dist_argmax(x->bb, B->set.n);
    x->d_ms = x->bb[x->sb] - x->ba[x->sa], x->d_pct = pct_of(x->ba[x->sa], x->bb[x->sb]);
    x->verdict = "within noise";
    x->m.alone = tl_xcalloc(1, sizeof *x->m.alone);
    if (x->paired) {
        free(x->m.alone);
        ranks_moved(x->ba, x->bb, A->set.n, conf, &x->m);
        int slow_alone = 0;
        for (size_t j = 0; j < x->m.nalone; j++)
            slow_alone |= x->m.alone[j] == x->sb || x->m.alone[j] == x->sa;
        if (x->m.job_wide)
            x->verdict = x->m.mean > 0 ? "slower, job-wide" : "faster, job-wide";
        else if (slow_alone)
            x->verdict = x->d_ms > 0 ? "slower, on the rank(s) named below only" : "faster, on the rank(s) named below only";
    }
    double *ca = tl_dist_rank_values(A, "computation_time"), *cb = tl_dist_rank_values(B, "computation_time");
    double *ea = tl_dist_rank_values(A, "exposed_comm_time"), *eb = tl_dist_rank_values(B, "exposed_comm_time");
    x->mca = tl_dist_median(ca, A->set.n), x->mcb = tl_dist_median(cb, B->set.n);
    x->mea = tl_dist_median(ea, A->set.n), x->meb = tl_dist_median(eb, B->set.n);
    free(ca), free(cb), free(ea), free(eb);
    x->cr = top_collective(coll, B->tag, &x->cpct);
    if (x->cr >= 0) {
        size_t r = (size_t)x->cr;
        x->bwa = cell_num(coll, A->tag, "bus bw (GB/s)_mean", r);
        x->bwb = cell_num(coll, B->tag, "bus bw (GB/s)_mean", r);
        cell_text(coll, "Collective name", r, x->cname, sizeof x->cname);
        cell_text(coll, "Process Group Name", r, x->cpg, sizeof x->cpg);
        cell_text(coll, "dtype", r, x->cdt, sizeof x->cdt);
        cell_text(coll, "In msg nelems", r, x->cnel, sizeof x->cnel);
    } else if (!coll) {
        x->no_coll = A->no_coll ? A->no_coll : B->no_coll ? B->no_coll : "no collective pairs";
    }
    x->ga = A->straggler, x->gb = B->straggler;
    x->change = x->ga < 0 && x->gb < 0 ? "none"
                : x->ga < 0            ? "appeared"
                : x->gb < 0            ? "vanished"
                : x->ga == x->gb       ? "same"
                                       : "moved";
}

static void answer_free(answer *x)
{
    free(x->m.alone);
    free(x->ba);
    free(x->bb);
}

/* The gate's violations of x at pct, a line each (as printed after "regression: "), into
 * b; x's gate flags set. */
static void answer_violations(answer *x, double pct, tl_buf *b)
{
    x->gate_coll = pct >= 0 && x->cr >= 0 && -x->cpct > pct;
    x->gate_busy = pct >= 0 && x->d_pct > pct && strncmp(x->verdict, "slower", 6) == 0;
    if (x->gate_coll)
        tl_buf_printf(b, "%s collective %s, group %s, %s, %s elements: bus bw %.2f -> %.2f GB/s (%+.1f%%, limit -%g%%)\n",
                      x->B->tag, x->cname, x->cpg, x->cdt, x->cnel, x->bwa, x->bwb, x->cpct, pct);
    if (x->gate_busy)
        tl_buf_printf(b, "%s slowest rank's busy time: %.3f ms (rank %zu) -> %.3f ms (rank %zu) (%+.1f%%, limit %g%%)\n",
                      x->B->tag, x->ba[x->sa], x->sa, x->bb[x->sb], x->sb, x->d_pct, pct);
}

int tl_dist_gate(const tl_dist_lead *l, double pct, tl_buf *violations)
{
    size_t before = violations->len;
    for (size_t i = 0; i < l->nanswers; i++) {
        answer x = l->answers[i];
        answer_violations(&x, pct, violations);
    }
    return violations->len > before;
}

/* The summary's lines of x (text and Markdown), ops that moved alone among them. */
static void answer_say(const struct tl_dist *d, tl_dist_lead *l, const tl_compare_opts *o, const answer *x, size_t k,
                       double conf)
{
    const dist_run *A = x->A, *B = x->B;
    tl_buf_printf(&l->text, "\n%s -> %s: runs of %zu and %zu ranks%s\n", A->tag, B->tag, A->set.n, B->set.n,
                  x->paired ? ", rank i paired with rank i" : "; ranks are not paired (the aggregates are compared)");
    tl_buf_printf(&l->md, "%s## runs: %s -> %s (%zu vs %zu ranks%s)\n\n", k > 1 ? "\n" : "", A->tag, B->tag, A->set.n,
                  B->set.n, x->paired ? ", rank i paired with rank i" : ", ranks not paired");
    say(l, "slowest rank's busy time: %s rank %zu %.3f ms -> %s rank %zu %.3f ms (%+.3f ms, %+.1f%%): %s%s", A->tag,
        x->sa, x->ba[x->sa], B->tag, x->sb, x->bb[x->sb], x->d_ms, x->d_pct, x->verdict,
        x->paired ? "" : " (ranks not paired: no verdict)");
    if (x->paired && x->m.job_wide)
        say(l, "every rank: busy time %+.3f ms on average (%.3f to %.3f ms, %g%%)", x->m.mean, x->m.lo, x->m.hi,
            100 * conf);
    for (size_t j = 0; j < x->m.nalone; j++) {
        size_t r = x->m.alone[j];
        say(l, "rank %zu only: busy time %.3f -> %.3f ms (%+.1f%%); the other ranks %+.3f ms (median)", r, x->ba[r],
            x->bb[r], pct_of(x->ba[r], x->bb[r]), x->m.median);
    }
    say(l, "compute (median rank) %.3f -> %.3f ms (%+.1f%%); exposed communication %.3f -> %.3f ms (%+.1f%%)", x->mca,
        x->mcb, pct_of(x->mca, x->mcb), x->mea, x->meb, pct_of(x->mea, x->meb));
    if (x->cr >= 0) {
        say(l, "collective that changed most: %s, group %s, %s, %s elements: bus bw %.2f -> %.2f GB/s (%+.1f%%)",
            x->cname, x->cpg, x->cdt, x->cnel, x->bwa, x->bwb, x->cpct);
        if (x->gate_coll)
            say(l, "gate failed: this bus bandwidth dropped %.1f%%, more than %g%%", -x->cpct, o->fail_pct);
    } else if (!x->no_coll) {
        say(l, "collectives: no bus bandwidth changed by 5%% or more");
    } else {
        say(l, "collectives are not compared: %s", x->no_coll);
    }
    if (x->ga >= 0 || x->gb >= 0) {
        char sa_s[32] = "none", sb_s[32] = "none";
        if (x->ga >= 0)
            snprintf(sa_s, sizeof sa_s, "rank %ld", x->ga);
        if (x->gb >= 0)
            snprintf(sb_s, sizeof sb_s, "rank %ld", x->gb);
        say(l, "straggler %s: %s -> %s", x->change, sa_s, sb_s);
    }
    ops_alone(d, l, k, conf);
    if (x->gate_busy)
        say(l, "gate failed: the slowest rank's busy time is %.1f%% slower, more than %g%%", x->d_pct, o->fail_pct);
}

static void json_pair(tl_buf *b, const char *key, double x, double y)
{
    tl_buf_printf(b, ", \"%s\": [", key);
    tl_json_num(b, x);
    tl_buf_adds(b, ", ");
    tl_json_num(b, y);
    tl_buf_adds(b, "]");
}

/* The "runs" JSON object of x (schema: man/tlcompare.1); `viol` its gate violations. */
static void answer_json(tl_buf *j, const answer *x, size_t k, const char *viol)
{
    tl_buf_adds(j, k > 1 ? ", {" : "{");
    tl_buf_adds(j, "\"baseline\": ");
    tl_json_str(j, x->A->tag);
    tl_buf_adds(j, ", \"variant\": ");
    tl_json_str(j, x->B->tag);
    tl_buf_printf(j, ", \"world_size\": [%zu, %zu], \"paired\": %s, \"slowest_rank\": [%zu, %zu]", x->A->set.n,
                  x->B->set.n, x->paired ? "true" : "false", x->sa, x->sb);
    json_pair(j, "slowest_busy_ms", x->ba[x->sa], x->bb[x->sb]);
    tl_buf_adds(j, ", \"slowest_busy_pct\": ");
    tl_json_num(j, x->d_pct);
    tl_buf_adds(j, ", \"verdict\": ");
    tl_json_str(j, x->verdict);
    tl_buf_adds(j, ", \"ranks_moved_alone\": [");
    for (size_t i = 0; i < x->m.nalone; i++)
        tl_buf_printf(j, "%s%zu", i ? ", " : "", x->m.alone[i]);
    tl_buf_adds(j, "]");
    json_pair(j, "compute_ms", x->mca, x->mcb);
    json_pair(j, "exposed_comm_ms", x->mea, x->meb);
    tl_buf_adds(j, ", \"top_collective\": ");
    if (x->cr >= 0) {
        tl_buf_adds(j, "{\"collective\": ");
        tl_json_str(j, x->cname);
        tl_buf_adds(j, ", \"process_group\": ");
        tl_json_str(j, x->cpg);
        tl_buf_adds(j, ", \"dtype\": ");
        tl_json_str(j, x->cdt);
        tl_buf_printf(j, ", \"in_msg_nelems\": %s, \"bus_bw_pct\": ", x->cnel[0] ? x->cnel : "null");
        tl_json_num(j, x->cpct);
        tl_buf_adds(j, "}");
    } else {
        tl_buf_adds(j, "null");
    }
    tl_buf_adds(j, ", \"collectives_compared\": ");
    tl_buf_adds(j, x->no_coll ? "false" : "true");
    tl_buf_printf(j, ", \"straggler\": {\"baseline\": %ld, \"variant\": %ld, \"change\": \"%s\"}", x->ga, x->gb,
                  x->change);
    tl_buf_adds(j, ", \"gate_violations\": [");
    for (const char *l = viol; *l;) {
        const char *e = strchr(l, '\n');
        size_t n = e ? (size_t)(e - l) : strlen(l);
        char *line = tl_xmalloc(n + 1);
        memcpy(line, l, n);
        line[n] = '\0';
        tl_buf_adds(j, l == viol ? "" : ", ");
        tl_json_str(j, line);
        free(line);
        l += n + (e != NULL);
    }
    tl_buf_adds(j, "]}");
}

/* A row of the lead table: what, the two sides' values (ints: whole numbers), their diff
 * and percentage when `diff`, a note (NULL: none). */
static void lead_row(tl_table *t, tl_arena *a, const char *what, double x, double y, int ints, int diff,
                     const char *note)
{
    size_t r = t->nrows++;
    for (size_t c = 0; c < t->ncols; c++) {
        t->cols[c].cells = tl_xrealloc(t->cols[c].cells, t->nrows * sizeof *t->cols[c].cells);
        t->cols[c].cells[r] = tl_cell_missing();
    }
    const char *w = tl_arena_strdup(a, what);
    t->cols[0].cells[r] = tl_cell_strn(w, strlen(w));
    for (int s = 0; s < 2; s++) {
        double v = s ? y : x;
        if (!isnan(v))
            t->cols[1 + s].cells[r] = ints ? tl_cell_int((int64_t)v) : tl_cell_float(v);
    }
    if (diff) {
        tl_dist_put_num(&t->cols[3], r, y - x);
        tl_dist_put_num(&t->cols[4], r, pct_of(x, y));
    }
    if (note) {
        const char *n = tl_arena_strdup(a, note);
        t->cols[5].cells[r] = tl_cell_strn(n, strlen(n));
    }
}

/* The summary sheet's block of x: the same answer as the lines, as a table. */
static tl_table *answer_table(struct tl_dist *d, const answer *x, const char *viol)
{
    tl_arena *a = &d->arena;
    tl_table *t = tl_table_new();
    const char *cols[] = {"runs", x->A->tag, x->B->tag, "delta", "delta %", "note"};
    for (size_t c = 0; c < 6; c++) {
        tl_table_add_column(t, cols[c]);
        t->cols[c].type = c == 0 || c == 5 ? TL_COL_STR : TL_COL_NUM;
    }
    t->cols[3].role = t->cols[4].role = TL_ROLE_DIFF;
    lead_row(t, a, "world size", (double)x->A->set.n, (double)x->B->set.n, 1, 0,
             x->paired ? "rank i paired with rank i" : "ranks not paired: the aggregates are compared");
    lead_row(t, a, "slowest rank", (double)x->sa, (double)x->sb, 1, 0, x->sa == x->sb ? "same" : "changed");
    lead_row(t, a, "slowest rank's busy time (ms)", x->ba[x->sa], x->bb[x->sb], 0, 1, x->verdict);
    for (size_t j = 0; j < x->m.nalone; j++) {
        size_t r = x->m.alone[j];
        lead_row(t, a, tl_arena_printf(a, "rank %zu busy time (ms)", r), x->ba[r], x->bb[r], 0, 1,
                 "moved alone (the other ranks did not)");
    }
    lead_row(t, a, "compute, median rank (ms)", x->mca, x->mcb, 0, 1, NULL);
    lead_row(t, a, "exposed communication, median rank (ms)", x->mea, x->meb, 0, 1, NULL);
    if (x->cr >= 0)
        lead_row(t, a, "bus bw of the collective that changed most (GB/s)", x->bwa, x->bwb, 0, 1,
                 tl_arena_printf(a, "%s, group %s, %s, %s elements", x->cname, x->cpg, x->cdt, x->cnel));
    else
        lead_row(t, a, "collectives", NAN, NAN, 0, 0,
                 x->no_coll ? tl_arena_printf(a, "not compared: %s", x->no_coll) : "no bus bandwidth changed by 5% or more");
    lead_row(t, a, "straggler (rank)", x->ga >= 0 ? (double)x->ga : NAN, x->gb >= 0 ? (double)x->gb : NAN, 1, 0,
             x->change);
    for (const char *l = viol; *l;) {
        const char *e = strchr(l, '\n');
        size_t n = e ? (size_t)(e - l) : strlen(l);
        lead_row(t, a, "gate failed", NAN, NAN, 0, 0, tl_arena_printf(a, "%.*s", (int)n, l));
        l += n + (e != NULL);
    }
    return t;
}

/* The summary's first lines, JSON object and sheet blocks for the runs, per variant; returns
 * 1 when the runs' gate fails (the slowest rank's busy time, or a collective's bus
 * bandwidth, worse by more than the gate's percentage and beyond the noise). */
int tl_dist_build_lead(struct tl_dist *d, tl_dist_lead *l, const tl_compare_opts *o)
{
    double conf = o->confidence > 0 ? o->confidence : 0.95;
    const tl_table *coll = NULL;
    for (size_t i = 0; i < d->extra.n; i++)
        if (strcmp(d->extra.items[i].name, TL_DIST_SHEET_COLL) == 0)
            coll = d->extra.items[i].table;
    l->n = d->nruns - 1;
    l->tables = tl_xcalloc(l->n ? l->n : 1, sizeof *l->tables);
    l->titles = tl_xcalloc(l->n ? l->n : 1, sizeof *l->titles);
    l->answers = tl_xcalloc(l->n ? l->n : 1, sizeof *l->answers);
    l->nanswers = l->n;
    tl_buf_adds(&l->json, "[");
    for (size_t k = 1; k < d->nruns; k++) {
        answer *xp = &l->answers[k - 1], x;
        answer_make(d, o, coll, k, conf, xp);
        tl_buf viol = {0};
        answer_violations(xp, o->fail_pct, &viol);
        x = *xp;
        answer_say(d, l, o, &x, k, conf);
        answer_json(&l->json, &x, k, tl_buf_cstr(&viol));
        l->tables[k - 1] = answer_table(d, &x, tl_buf_cstr(&viol));
        l->titles[k - 1] = tl_arena_printf(&d->arena, "%s -> %s: the runs (%zu vs %zu ranks)", x.A->tag, x.B->tag,
                                   x.A->set.n, x.B->set.n);
        tl_buf_adds(&l->violations, tl_buf_cstr(&viol));
        tl_buf_free(&viol);
    }
    tl_buf_adds(&l->json, "]");
    return l->violations.len > 0;
}

void tl_dist_lead_free(tl_dist_lead *l)
{
    for (size_t i = 0; i < l->nanswers; i++)
        answer_free(&l->answers[i]);
    free(l->answers);
    tl_table_free(l->rank_ops);
    tl_buf_free(&l->text);
    tl_buf_free(&l->md);
    tl_buf_free(&l->json);
    tl_buf_free(&l->violations);
    for (size_t i = 0; i < l->n; i++)
        tl_table_free(l->tables[i]);
    free(l->tables);
    free(l->titles);
}
