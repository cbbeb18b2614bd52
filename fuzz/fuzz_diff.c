/*
 * fuzz_diff.c - the morphology-aware diff on two arbitrary traces.
 *
 * Input: the JSON text of two traces separated by the first NUL byte (a NUL can never
 * be part of a JSON text that reads); with no NUL, the trace is compared with itself.
 * Both are loaded as tlcompare loads them and, when both load, aligned with small bounds
 * (so that the chunked Wagner-Fischer and the disambiguation budget run too), and every
 * output is made: the three tables, the tree text, the cpu_op maps.  The merged tree and
 * the rows must point at real events of the right kinds, and the tables be well formed.
 */
#include "fuzz.h"

#include "diff/diff.h"
#include "write/csv_write.h"

/* The diff without the unique-args groups (a run without the morphology diff's files):
 * the same rows and LCAs as the whole diff d, no groups, no maps. */
static void no_groups_check(const tl_diff *d, const tl_trace *t1, const tl_trace *t2, const tl_diff_opts *o)
{
    tl_diff_opts o2 = *o;
    o2.no_groups = 1;
    tl_error err = {0};
    tl_diff *d2 = tl_diff_run(t1, t2, &o2, &err);
    TL_FUZZ_CHECK(d2 != NULL);
    TL_FUZZ_CHECK(tl_diff_unique_args_groups(d2) == 0);
    size_t n, n2;
    const tl_diff_row *r = tl_diff_rows(d, &n), *r2 = tl_diff_rows(d2, &n2);
    TL_FUZZ_CHECK(n == n2);
    for (size_t i = 0; i < n; i++)
        TL_FUZZ_CHECK(r[i].gpu == r2[i].gpu && r[i].cpu == r2[i].cpu && r[i].lca == r2[i].lca &&
                      r[i].side == r2[i].side && !memcmp(&r[i].busy, &r2[i].busy, sizeof r[i].busy) &&
                      !r[i].lca_name == !r2[i].lca_name && (!r[i].lca_name || !strcmp(r[i].lca_name, r2[i].lca_name)));
    const tl_diff_lca *l = tl_diff_lcas(d, &n), *l2 = tl_diff_lcas(d2, &n2);
    TL_FUZZ_CHECK(n == n2);
    for (size_t i = 0; i < n; i++)
        TL_FUZZ_CHECK(l[i].id == l2[i].id && !strcmp(l[i].name, l2[i].name) && l[i].n1 == l2[i].n1 && l[i].n2 == l2[i].n2);
    tl_buf j = {0};
    tl_diff_cpu_op_map_json(d2, 0, &j);
    TL_FUZZ_CHECK(j.len == 0);
    tl_buf_free(&j);
    tl_diff_free(d2);
}

int tl_fuzz_diff(const uint8_t *data, size_t size);

/* The unique-args summary made a slice at a time (as --tracediff-dir writes it) is the
 * whole table's text. */
static void dffz_check_slices(const tl_diff *d, const tl_table *whole)
{
    tl_buf w = {0}, s = {0}, part = {0};
    tl_csv_format(whole, &w);
    size_t from = 0, end = tl_diff_unique_args_groups(d);
    int first = 1;
    do {
        tl_table *t = tl_diff_unique_args_slice(d, &from, 3);
        part.len = 0;
        tl_csv_format(t, &part);
        tl_table_free(t);
        const char *p = tl_buf_cstr(&part), *nl = strchr(p, '\n');
        TL_FUZZ_CHECK(nl != NULL);
        tl_buf_adds(&s, first ? p : nl + 1);
        first = 0;
    } while (from < end);
    TL_FUZZ_CHECK(s.len == w.len && memcmp(tl_buf_cstr(&s), tl_buf_cstr(&w), w.len) == 0);
    tl_buf_free(&w);
    tl_buf_free(&s);
    tl_buf_free(&part);
}

static void dffz_check(const tl_diff *d, const tl_trace *t1, const tl_trace *t2)
{
    size_t nn, nr, nroots, nl;
    const tl_diff_node *nodes = tl_diff_nodes(d, &nn);
    const uint32_t *roots = tl_diff_roots(d, &nroots), *kids = tl_diff_kids(d);
    size_t nkids = 0;
    for (size_t i = 0; i < nn; i++) {
        const tl_diff_node *x = &nodes[i];
        TL_FUZZ_CHECK(x->ev1 == TL_TEV_NONE || x->ev1 < t1->nev);
        TL_FUZZ_CHECK(x->ev2 == TL_TEV_NONE || x->ev2 < t2->nev);
        TL_FUZZ_CHECK(x->ev1 != TL_TEV_NONE || x->ev2 != TL_TEV_NONE);
        TL_FUZZ_CHECK(x->type == (x->ev1 == TL_TEV_NONE ? TL_DIFF_TRACE2 : x->ev2 == TL_TEV_NONE ? TL_DIFF_TRACE1 : TL_DIFF_COMBINED));
        if ((size_t)x->kid0 + x->nkid > nkids)
            nkids = (size_t)x->kid0 + x->nkid;
    }
    for (size_t i = 0; i < nkids; i++)
        TL_FUZZ_CHECK(kids[i] < nn);
    TL_FUZZ_CHECK(nroots > 0);
    for (size_t i = 0; i < nroots; i++)
        TL_FUZZ_CHECK(roots[i] < nn);
    const tl_diff_row *rows = tl_diff_rows(d, &nr);
    for (size_t i = 0; i < nr; i++) {
        const tl_trace *t = rows[i].side ? t2 : t1;
        TL_FUZZ_CHECK(rows[i].gpu < t->nev && tl_tev_is_gpu(&t->ev[rows[i].gpu]));
        TL_FUZZ_CHECK(rows[i].cpu < t->nev && t->ev[rows[i].cpu].kind == TL_TEV_CPU_OP);
        TL_FUZZ_CHECK(rows[i].lca == UINT32_MAX || rows[i].lca < nn);
        /* a union of intervals is never negative, unless an event's own length is */
        TL_FUZZ_CHECK(rows[i].busy >= 0 || rows[i].busy != rows[i].busy || t1->nnegative || t2->nnegative);
    }
    const tl_diff_lca *l = tl_diff_lcas(d, &nl);
    size_t counted = 0;
    for (size_t i = 0; i < nl; i++) {
        TL_FUZZ_CHECK(l[i].id < nn);
        counted += l[i].n1 + l[i].n2;
    }
    TL_FUZZ_CHECK(counted <= nr);
}

int tl_fuzz_diff(const uint8_t *data, size_t size)
{
    tl_quiet = 1;
    const uint8_t *nul = memchr(data, 0, size);
    size_t n1 = nul ? (size_t)(nul - data) : size;
    const uint8_t *b = nul ? nul + 1 : data;
    size_t n2 = nul ? size - n1 - 1 : size;
    tl_error err = {0};
    tl_trace *t1 = tl_trace_load_mem(data, n1, "a.json", &err);
    tl_trace *t2 = t1 ? tl_trace_load_mem(b, n2, "b.json", &err) : NULL;
    if (t1 && t2) {
        tl_diff_opts o = {1 << 12, 1 << 8, 0};
        tl_diff *d = tl_diff_run(t1, t2, &o, &err);
        if (d) {
            dffz_check(d, t1, t2);
            tl_arena a;
            tl_arena_init(&a);
            tl_table *tabs[3] = {tl_diff_stats_table(d, &a), tl_diff_unique_args_table(d, &a), tl_diff_lca_table(d, &a)};
            dffz_check_slices(d, tabs[1]);
            for (int i = 0; i < 3; i++) {
                tl_fuzz_check_table(tabs[i], 1);
                tl_table_free(tabs[i]);
            }
            FILE *f = fopen("/dev/null", "w");
            TL_FUZZ_CHECK(f != NULL);
            TL_FUZZ_CHECK(tl_diff_write_tree(d, f) == 0);
            fclose(f);
            tl_buf j = {0};
            for (int i = 0; i < 3; i++) {
                tl_diff_cpu_op_map_json(d, i, &j);
                TL_FUZZ_CHECK(j.len >= 2 && j.data[0] == '{' && j.data[j.len - 1] == '}');
            }
            tl_buf_free(&j);
            tl_arena_free(&a);
            no_groups_check(d, t1, t2, &o);
            tl_diff_free(d);
        } else {
            TL_FUZZ_CHECK(err.set && err.msg[0]);
        }
    } else {
        TL_FUZZ_CHECK(err.set && err.msg[0]);
    }
    tl_trace_free(t1);
    tl_trace_free(t2);
    return 0;
}

#ifndef TL_FUZZ_NO_MAIN
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) { return tl_fuzz_diff(data, size); }
#endif
