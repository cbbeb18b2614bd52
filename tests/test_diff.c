/*
 * test_diff.c - the morphology-aware diff (TRACES.md §5-§6), phase by phase, on small
 * trees built by hand whose answers were worked out by hand (the comments say how).
 */
#include "testutil.h"

#include "diff/diff.h"
#include "write/csv_write.h"

#include <math.h>

/* ---- a tree builder ---------------------------------------------------------------- */

typedef struct tb {
    tl_trace *t;
    size_t cap;
} tb;

static tb tb_new(void)
{
    tb b = {tl_xcalloc(1, sizeof(tl_trace)), 0};
    tl_arena_init(&b.t->arena);
    b.t->threads = tl_xcalloc(1, sizeof *b.t->threads); /* every event on thread (0, 0) */
    b.t->nthreads = 1;
    return b;
}

/* Add an event (in ts order within a parent); returns its index.  UIDs are the index
 * plus 100, so that an index taken for a UID shows. */
static uint32_t tb_add(tb *b, int kind, const char *name, double ts, double dur, uint32_t parent)
{
    tl_trace *t = b->t;
    TL_GROW(t->ev, b->cap, t->nev + 1);
    tl_tev *e = &t->ev[t->nev];
    memset(e, 0, sizeof *e);
    e->name = tl_arena_strdup(&t->arena, name);
    e->ts = ts;
    e->dur = dur;
    e->uid = (uint32_t)t->nev + 100;
    e->kind = (uint8_t)kind;
    e->parent = parent;
    e->ref = 0; /* thread 0; no aux record: no stream, no link id, no shapes */
    if (kind == TL_TEV_RUNTIME && (!strcmp(name, "cudaGraphLaunch") || !strcmp(name, "hipGraphLaunch")))
        e->flags |= TL_TEV_GRAPH_LAUNCH;
    return (uint32_t)t->nev++;
}

#define OP(b, name, ts, dur, parent) tb_add(b, TL_TEV_CPU_OP, name, ts, dur, parent)
#define RT(b, name, ts, dur, parent) tb_add(b, TL_TEV_RUNTIME, name, ts, dur, parent)
#define KN(b, name, ts, dur, parent) tb_add(b, TL_TEV_KERNEL, name, ts, dur, parent)
#define NONE TL_TEV_NONE

/* Children, GPU lists, flags and roots, as the loader makes them (TRACES.md §2). */
static tl_trace *tb_finish(tb *b)
{
    tl_trace *t = b->t;
    size_t n = t->nev;
    uint32_t *nkids = tl_xcalloc(n + 1, sizeof *nkids), *ngpu = tl_xcalloc(n + 1, sizeof *ngpu);
    for (size_t e = 0; e < n; e++) {
        if (t->ev[e].parent != NONE)
            nkids[t->ev[e].parent]++;
        if (tl_tev_is_gpu(&t->ev[e]) && t->ev[e].parent != NONE)
            for (uint32_t p = t->ev[e].parent; p != NONE; p = t->ev[p].parent)
                ngpu[p]++;
    }
    size_t total = 0;
    for (size_t e = 0; e < n; e++)
        total += nkids[e] + ngpu[e];
    t->idx = tl_xmalloc((total + 1) * sizeof *t->idx);
    size_t at = 0;
    for (size_t e = 0; e < n; e++) {
        t->ev[e].child0 = (uint32_t)at;
        at += nkids[e];
        t->ev[e].gpu0 = (uint32_t)at;
        at += ngpu[e];
    }
    t->nidx = total;
    for (size_t e = 0; e < n; e++) {
        uint32_t p = t->ev[e].parent;
        if (p != NONE)
            t->idx[t->ev[p].child0 + t->ev[p].nchild++] = (uint32_t)e;
        if (tl_tev_is_gpu(&t->ev[e]) && p != NONE) {
            t->ev[e].flags |= TL_TEV_LINKED;
            for (; p != NONE; p = t->ev[p].parent)
                t->idx[t->ev[p].gpu0 + t->ev[p].ngpu++] = (uint32_t)e;
        }
    }
    t->roots = tl_xmalloc((n + 1) * sizeof *t->roots);
    for (size_t e = 0; e < n; e++) {
        tl_tev *ev = &t->ev[e];
        if (!tl_tev_is_gpu(ev))
            ev->flags |= TL_TEV_IN_TREE;
        if (!tl_tev_is_gpu(ev) && ev->ngpu == 0)
            ev->flags |= TL_TEV_NON_GPU_PATH;
        if (ev->kind == TL_TEV_CPU_OP) {
            t->ncpu_ops++;
            int below = 0;
            for (uint32_t p = ev->parent; p != NONE; p = t->ev[p].parent)
                below |= t->ev[p].kind == TL_TEV_CPU_OP;
            if (!below) {
                ev->flags |= TL_TEV_CPU_ROOT;
                size_t k = t->nroots++;
                while (k > 0 && t->ev[t->roots[k - 1]].ts > ev->ts) {
                    t->roots[k] = t->roots[k - 1];
                    k--;
                }
                t->roots[k] = (uint32_t)e;
            }
        }
    }
    free(nkids);
    free(ngpu);
    return t;
}

static char *tree_text(const tl_diff *d)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    assert_int_equal(tl_diff_write_tree(d, f), 0);
    fclose(f);
    return buf;
}

static void assert_tree(const tl_diff *d, const char *want)
{
    char *got = tree_text(d);
    if (strcmp(got, want) != 0)
        fprintf(stderr, "tree:\n%s\nwanted:\n%s\n", got, want);
    assert_string_equal(got, want);
    free(got);
}

static char *csv_of(tl_table *t)
{
    tl_buf b = {0};
    tl_csv_format(t, &b);
    tl_table_free(t);
    return (char *)tl_buf_cstr(&b);
}

/* The unique-args summary made `rows` rows at a time (its header once) is the whole
 * table's text, `whole`. */
static void check_slices(const tl_diff *d, size_t rows, const char *whole)
{
    tl_buf b = {0};
    size_t from = 0, end = tl_diff_unique_args_groups(d), slices = 0;
    do {
        char *part = csv_of(tl_diff_unique_args_slice(d, &from, rows));
        const char *body = slices++ ? strchr(part, '\n') + 1 : part;
        tl_buf_adds(&b, body);
        free(part);
    } while (from < end);
    assert_string_equal(tl_buf_cstr(&b), whole);
    assert_true(slices >= 1);
    tl_buf_free(&b);
}

static void check_all_slices(const tl_diff *d, const char *whole)
{
    for (size_t rows = 1; rows <= 4; rows++)
        check_slices(d, rows, whole);
    check_slices(d, 1000, whole);
}

/* ---- names -------------------------------------------------------------------------- */

static void norm(const char *in, int strip, const char *want)
{
    tl_buf b = {0};
    tl_diff_normalize(in, strlen(in), strip, &b);
    assert_string_equal(tl_buf_cstr(&b), want);
    tl_buf_free(&b);
}

static void test_normalize(void **state)
{
    (void)state;
    norm("at 0x7f3aB9 and 0x12", 0, "at 0xXXXX and 0xXXXX");
    norm("0x", 0, "0x");                          /* no hex digit: left as is */
    norm("0xg1", 0, "0xg1");
    norm("x.py(123): fwd", 0, "x.py: fwd");
    norm("x.py(): fwd", 0, "x.py(): fwd");        /* \d+ needs a digit */
    norm("/a/b/c.py(12): fwd", 1, "c.py");       /* ": fwd" dropped, then the basename */
    norm("a: b c", 1, "a: b c");                  /* the last token is not right after ": " */
    norm("nn.Module: Linear_0", 1, "nn.Module");
    norm("f: x\n", 1, "f\n");                     /* "$" matches before a final newline */
    norm("hipModuleLaunchKernel", 0, "__kernel_launch__");
    norm("cuLaunchKernel", 1, "__kernel_launch__");
    norm("hipLaunchKernel", 0, "hipLaunchKernel"); /* not equated with cudaLaunchKernel */
    tl_buf b = {0};
    tl_diff_strip_digits("aten::add(12) (x) f(3", &b);
    assert_string_equal(tl_buf_cstr(&b), "aten::add (x) f(3");
    tl_buf_clear(&b);
    tl_diff_py_repr("it's", &b);
    tl_buf_addc(&b, ' ');
    tl_diff_py_repr("a\\b'\"", &b);
    assert_string_equal(tl_buf_cstr(&b), "\"it's\" 'a\\\\b\\'\"'");
    tl_buf_free(&b);
}

/* ---- Wagner-Fischer ---------------------------------------------------------------- */

static void test_wf(void **state)
{
    (void)state;
    tl_diff_op ops[16];
    int chunked = 0;
    /* [A B C] vs [A C]: B deleted */
    uint32_t a1[] = {1, 2, 3}, b1[] = {1, 3};
    size_t n = tl_diff_wf(a1, 3, b1, 2, 0, ops, &chunked);
    assert_int_equal(n, 3);
    assert_true(ops[0].kind == TL_DIFF_MATCH && ops[0].i == 0 && ops[0].j == 0);
    assert_true(ops[1].kind == TL_DIFF_DELETE && ops[1].i == 1);
    assert_true(ops[2].kind == TL_DIFF_MATCH && ops[2].i == 2 && ops[2].j == 1);
    /* [A B] vs [A X]: a substitution comes out as delete then insert (backtracking from
     * (2,2): dp[2][2] = 1 != dp[1][2] + 1 = 2, so insert X; at (2,1) dp = 1 = dp[1][1] + 1,
     * so delete B; then the match) */
    uint32_t a2[] = {1, 2}, b2[] = {1, 9};
    n = tl_diff_wf(a2, 2, b2, 2, 0, ops, &chunked);
    assert_int_equal(n, 3);
    assert_true(ops[0].kind == TL_DIFF_MATCH);
    assert_true(ops[1].kind == TL_DIFF_DELETE && ops[1].i == 1);
    assert_true(ops[2].kind == TL_DIFF_INSERT && ops[2].j == 1);
    /* [A] vs [A A]: equal names at the end match first: A matches the second A */
    uint32_t a3[] = {1}, b3[] = {1, 1};
    n = tl_diff_wf(a3, 1, b3, 2, 0, ops, &chunked);
    assert_int_equal(n, 2);
    assert_true(ops[0].kind == TL_DIFF_INSERT && ops[0].j == 0);
    assert_true(ops[1].kind == TL_DIFF_MATCH && ops[1].i == 0 && ops[1].j == 1);
    assert_int_equal(chunked, 0);
    /* a common tail is left out of the table: equal lists need no cells at all */
    uint32_t a4[] = {1, 2, 3, 4}, b4[] = {1, 2, 3, 4};
    n = tl_diff_wf(a4, 4, b4, 4, 4, ops, &chunked);
    assert_int_equal(n, 4);
    assert_int_equal(chunked, 0);
    /* [A B C D] vs [B A D C]: no common tail, 16 cells > 4: chunks [A B]|[B A] and
     * [C D]|[D C]; in each, backtracking matches the last equal pair only:
     * [A B] vs [B A]: (2,2) B!=A, dp=2, dp[1][2]=1 -> 2 == 2: delete B; (1,2) A==A match;
     * (0,1) insert B.  So: insert B(0), match A(0,1), delete B(1), then the same shifted. */
    uint32_t a5[] = {1, 2, 3, 4}, b5[] = {2, 1, 4, 3};
    n = tl_diff_wf(a5, 4, b5, 4, 4, ops, &chunked);
    assert_int_equal(chunked, 1);
    assert_int_equal(n, 6);
    assert_true(ops[0].kind == TL_DIFF_INSERT && ops[0].j == 0);
    assert_true(ops[1].kind == TL_DIFF_MATCH && ops[1].i == 0 && ops[1].j == 1);
    assert_true(ops[2].kind == TL_DIFF_DELETE && ops[2].i == 1);
    assert_true(ops[3].kind == TL_DIFF_INSERT && ops[3].j == 2);
    assert_true(ops[4].kind == TL_DIFF_MATCH && ops[4].i == 2 && ops[4].j == 3);
    assert_true(ops[5].kind == TL_DIFF_DELETE && ops[5].i == 3);
}

/* The order CPython 3.11 iterates these sets in (printed by list({...}) there). */
static void test_pyset_order(void **state)
{
    (void)state;
    uint32_t p[9][2] = {{3, 0}, {0, 3}, {1, 1}, {2, 5}, {7, 2}, {4, 4}, {5, 1}, {6, 6}, {0, 9}};
    uint32_t want[9][2] = {{4, 4}, {1, 1}, {0, 3}, {0, 9}, {5, 1}, {3, 0}, {7, 2}, {6, 6}, {2, 5}};
    tl_diff_pyset_order(p, 9);
    assert_memory_equal(p, want, sizeof want);
    uint32_t q[40][2];
    for (uint32_t i = 0; i < 40; i++) {
        q[i][0] = i;
        q[i][1] = 39 - i;
    }
    uint32_t want2[12][2] = {{15, 24}, {31, 8}, {0, 39}, {23, 16}, {6, 33}, {22, 17},
                             {7, 32}, {24, 15}, {14, 25}, {30, 9}, {38, 1}, {5, 34}};
    tl_diff_pyset_order(q, 40); /* two resizes on the way */
    assert_memory_equal(q, want2, sizeof want2);
}

/* ---- the phases on whole trees -------------------------------------------------------- */

/* Phase 2's positional rule: equal counts and no launch pair up whatever the names. */
static void test_positional(void **state)
{
    (void)state;
    tb b1 = tb_new(), b2 = tb_new();
    uint32_t p = OP(&b1, "aten::_convolution", 0, 100, NONE);
    uint32_t m = OP(&b1, "aten::miopen_convolution", 1, 50, p);
    uint32_t l = RT(&b1, "hipExtModuleLaunchKernel", 2, 5, m);
    KN(&b1, "igemm_fwd", 1000, 30, l);
    p = OP(&b2, "aten::_convolution", 0, 100, NONE);
    m = OP(&b2, "aten::cudnn_convolution", 1, 50, p);
    l = RT(&b2, "cudaLaunchKernel", 2, 5, m);
    KN(&b2, "cutlass_fprop", 1000, 20, l);
    tl_trace *t1 = tb_finish(&b1), *t2 = tb_finish(&b2);
    tl_error err = {0};
    tl_diff *d = tl_diff_run(t1, t2, NULL, &err);
    assert_non_null(d);
    /* _convolution: [miopen] vs [cudnn] by position; below, [hipExt..] vs [cuda..] hold
     * launches: Wagner-Fischer, no equal name: a delete and an insert */
    assert_tree(d, "\xe2\x94\x94\xe2\x94\x80\xe2\x94\x80 aten::_convolution\n"
                   "    \xe2\x94\x94\xe2\x94\x80\xe2\x94\x80 combined: aten::miopen_convolution | aten::cudnn_convolution\n"
                   "        \xe2\x94\x9c\xe2\x94\x80\xe2\x94\x80 >> trace1: hipExtModuleLaunchKernel\n"
                   "        \xe2\x94\x82   \xe2\x94\x94\xe2\x94\x80\xe2\x94\x80 >> trace1: igemm_fwd\n"
                   "        \xe2\x94\x94\xe2\x94\x80\xe2\x94\x80 << trace2: cudaLaunchKernel\n"
                   "            \xe2\x94\x94\xe2\x94\x80\xe2\x94\x80 << trace2: cutlass_fprop\n");
    /* the LCA is the combined convolution (id 1), named "n1 | n2" */
    size_t nl;
    const tl_diff_lca *lc = tl_diff_lcas(d, &nl);
    assert_int_equal(nl, 1);
    assert_int_equal(lc[0].id, 1);
    assert_string_equal(lc[0].lca_name, "aten::miopen_convolution | aten::cudnn_convolution");
    assert_true(lc[0].time1 == 30.0 && lc[0].time2 == 20.0);
    tl_diff_free(d);
    tl_trace_free(t1);
    tl_trace_free(t2);
}

/* The timesformer convolution (TRACES.md §5.1 item 3): phase 3 replaces
 * miopen_convolution by its children, so add_ meets add_ and the LCA of the MIOpen
 * kernels and of cudnn_convolution is aten::_convolution. */
static void conv_pair(tl_trace **t1, tl_trace **t2)
{
    tb b1 = tb_new(), b2 = tb_new();
    uint32_t p = OP(&b1, "aten::_convolution", 0, 100, NONE);
    uint32_t m = OP(&b1, "aten::miopen_convolution", 1, 90, p);
    for (int i = 0; i < 3; i++) {
        uint32_t l = RT(&b1, "hipExtModuleLaunchKernel", 2 + 10 * i, 5, m);
        KN(&b1, i == 1 ? "igemm_fwd" : "batched_transpose", 1000 + 100 * i, 50, l);
    }
    uint32_t a = OP(&b1, "aten::add_", 40, 10, m);
    uint32_t l = RT(&b1, "hipLaunchKernel", 41, 5, a);
    KN(&b1, "add_kernel_rocm", 1400, 10, l);
    *t1 = tb_finish(&b1);

    p = OP(&b2, "aten::_convolution", 0, 100, NONE);
    m = OP(&b2, "aten::cudnn_convolution", 1, 30, p);
    l = RT(&b2, "cudaLaunchKernel", 2, 5, m);
    KN(&b2, "cutlass_fprop", 1000, 40, l);
    l = RT(&b2, "cudaLaunchKernel", 10, 5, m);
    KN(&b2, "nhwcToNchw", 1030, 20, l); /* overlaps the first: busy 50, not 60 */
    a = OP(&b2, "aten::add_", 40, 10, p);
    l = RT(&b2, "cudaLaunchKernel", 41, 5, a);
    KN(&b2, "add_kernel_cuda", 1100, 5, l);
    *t2 = tb_finish(&b2);
}

static void test_reconcile(void **state)
{
    (void)state;
    tl_trace *t1, *t2;
    conv_pair(&t1, &t2);
    tl_error err = {0};
    tl_diff *d = tl_diff_run(t1, t2, NULL, &err);
    assert_non_null(d);
    /* [miopen] vs [cudnn, add_]: Wagner-Fischer deletes miopen, inserts both; add_ is
     * among miopen's GPU children, so miopen is replaced by [L, L, L, add_]; against
     * [cudnn, add_] Wagner-Fischer matches the common tail add_, then backtracks
     * [L L L] vs [cudnn] to del L0, ins cudnn, del L1, del L2; phase 4 aligns those again
     * (launches and a cpu_op with launches do not collapse) to the same; the ops are the
     * match first, then the rest: add_ gets merged id 1. */
    const char *want =
        "\xe2\x94\x94\xe2\x94\x80\xe2\x94\x80 aten::_convolution\n"
        "    \xe2\x94\x9c\xe2\x94\x80\xe2\x94\x80 aten::add_\n"
        "    \xe2\x94\x82   \xe2\x94\x9c\xe2\x94\x80\xe2\x94\x80 >> trace1: hipLaunchKernel\n"
        "    \xe2\x94\x82   \xe2\x94\x82   \xe2\x94\x94\xe2\x94\x80\xe2\x94\x80 >> trace1: add_kernel_rocm\n"
        "    \xe2\x94\x82   \xe2\x94\x94\xe2\x94\x80\xe2\x94\x80 << trace2: cudaLaunchKernel\n"
        "    \xe2\x94\x82       \xe2\x94\x94\xe2\x94\x80\xe2\x94\x80 << trace2: add_kernel_cuda\n"
        "    \xe2\x94\x9c\xe2\x94\x80\xe2\x94\x80 >> trace1: hipExtModuleLaunchKernel\n"
        "    \xe2\x94\x82   \xe2\x94\x94\xe2\x94\x80\xe2\x94\x80 >> trace1: batched_transpose\n"
        "    \xe2\x94\x9c\xe2\x94\x80\xe2\x94\x80 >> trace1: hipExtModuleLaunchKernel\n"
        "    \xe2\x94\x82   \xe2\x94\x94\xe2\x94\x80\xe2\x94\x80 >> trace1: igemm_fwd\n"
        "    \xe2\x94\x9c\xe2\x94\x80\xe2\x94\x80 >> trace1: hipExtModuleLaunchKernel\n"
        "    \xe2\x94\x82   \xe2\x94\x94\xe2\x94\x80\xe2\x94\x80 >> trace1: batched_transpose\n"
        "    \xe2\x94\x94\xe2\x94\x80\xe2\x94\x80 << trace2: aten::cudnn_convolution\n"
        "        \xe2\x94\x9c\xe2\x94\x80\xe2\x94\x80 << trace2: cudaLaunchKernel\n"
        "        \xe2\x94\x82   \xe2\x94\x94\xe2\x94\x80\xe2\x94\x80 << trace2: cutlass_fprop\n"
        "        \xe2\x94\x94\xe2\x94\x80\xe2\x94\x80 << trace2: cudaLaunchKernel\n"
        "            \xe2\x94\x94\xe2\x94\x80\xe2\x94\x80 << trace2: nhwcToNchw\n";
    assert_tree(d, want);
    /* diff_stats: _convolution is the LCA of the 3 MIOpen kernels and cudnn's 2; add_
     * the LCA of its own kernels.  Rows in walk order: _convolution's trace1 rows, its
     * trace2 rows, then add_'s. */
    size_t nr;
    const tl_diff_row *r = tl_diff_rows(d, &nr);
    assert_int_equal(nr, 3 + 2 + 1 + 1);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(r[i].side, 0);
        assert_int_equal(r[i].lca, 0);
        assert_true(r[i].busy == 150.0); /* [1000,1050] [1100,1150] [1200,1250] */
    }
    assert_int_equal(r[3].side, 1);
    assert_true(r[3].busy == 50.0); /* [1000,1040] and [1030,1050] overlap */
    assert_string_equal(r[0].lca_name, "aten::_convolution");
    size_t nl;
    const tl_diff_lca *lc = tl_diff_lcas(d, &nl);
    assert_int_equal(nl, 2);
    assert_string_equal(lc[0].lca_name, "aten::_convolution");
    assert_string_equal(lc[0].name1, "aten::miopen_convolution");
    assert_string_equal(lc[0].name2, "aten::cudnn_convolution");
    assert_int_equal(lc[0].n1, 3);
    assert_int_equal(lc[0].n2, 2);
    /* the unique-args summary: miopen and cudnn share an LCA, have no common suffix or
     * prefix, and one module each ("root"): both are renamed "root" (TRACES.md §6) */
    tl_arena a;
    tl_arena_init(&a);
    char *csv = csv_of(tl_diff_unique_args_table(d, &a));
    assert_non_null(strstr(csv, "igemm_fwd,1,root,"));
    assert_non_null(strstr(csv, "cutlass_fprop,1,root,"));
    /* add_ vs add_ needs no rename */
    assert_non_null(strstr(csv, "add_kernel_cuda,1,aten::add_,"));
    free(csv);
    tl_buf j = {0};
    tl_diff_cpu_op_map_json(d, 1, &j);
    assert_string_equal(tl_buf_cstr(&j), "{\n  \"aten::add_\": [\n    \"add_kernel_rocm\"\n  ],\n"
                                         "  \"aten::miopen_convolution\": [\n    \"batched_transpose\",\n"
                                         "    \"igemm_fwd\"\n  ]\n}");
    tl_buf_free(&j);
    tl_arena_free(&a);
    tl_diff_free(d);
    tl_trace_free(t1);
    tl_trace_free(t2);
}

/* Phase 3's third rule: a deleted and an inserted wrapper with the same children names
 * are both replaced by their children.  [X Z] vs [Y Q R] has no equal name; X and Y both
 * hold [A B], so the lists become [A B Z] vs [A B Q R]: A and B meet (Wagner-Fischer:
 * match A, match B, del Z, ins Q, ins R), and X and Y leave the merged tree. */
static uint32_t wrapped(tb *b, const char *wrapper, uint32_t parent)
{
    uint32_t w = OP(b, wrapper, 1, 29, parent);
    uint32_t a = OP(b, "A", 2, 8, w);
    KN(b, "ka", 500, 5, RT(b, "LA", 3, 1, a));
    uint32_t x = OP(b, "B", 12, 8, w);
    KN(b, "kb", 600, 5, RT(b, "LB", 13, 1, x));
    return w;
}

static void test_reconcile_equal_lists(void **state)
{
    (void)state;
    tb b1 = tb_new(), b2 = tb_new();
    uint32_t p = OP(&b1, "P", 0, 100, NONE);
    wrapped(&b1, "X", p);
    uint32_t z = OP(&b1, "Z", 40, 10, p);
    KN(&b1, "kz", 700, 5, RT(&b1, "LZ", 41, 1, z));
    p = OP(&b2, "P", 0, 100, NONE);
    wrapped(&b2, "Y", p);
    uint32_t q = OP(&b2, "Q", 40, 10, p);
    KN(&b2, "kq", 700, 5, RT(&b2, "LQ", 41, 1, q));
    uint32_t r = OP(&b2, "R", 60, 10, p);
    KN(&b2, "kr", 800, 5, RT(&b2, "LR", 61, 1, r));
    tl_trace *t1 = tb_finish(&b1), *t2 = tb_finish(&b2);
    tl_error err = {0};
    tl_diff *d = tl_diff_run(t1, t2, NULL, &err);
    assert_tree(d, "\xe2\x94\x94\xe2\x94\x80\xe2\x94\x80 P\n"
                   "    \xe2\x94\x9c\xe2\x94\x80\xe2\x94\x80 A\n"
                   "    \xe2\x94\x82   \xe2\x94\x94\xe2\x94\x80\xe2\x94\x80 LA\n"
                   "    \xe2\x94\x82       \xe2\x94\x94\xe2\x94\x80\xe2\x94\x80 ka\n"
                   "    \xe2\x94\x9c\xe2\x94\x80\xe2\x94\x80 B\n"
                   "    \xe2\x94\x82   \xe2\x94\x94\xe2\x94\x80\xe2\x94\x80 LB\n"
                   "    \xe2\x94\x82       \xe2\x94\x94\xe2\x94\x80\xe2\x94\x80 kb\n"
                   "    \xe2\x94\x9c\xe2\x94\x80\xe2\x94\x80 >> trace1: Z\n"
                   "    \xe2\x94\x82   \xe2\x94\x94\xe2\x94\x80\xe2\x94\x80 >> trace1: LZ\n"
                   "    \xe2\x94\x82       \xe2\x94\x94\xe2\x94\x80\xe2\x94\x80 >> trace1: kz\n"
                   "    \xe2\x94\x9c\xe2\x94\x80\xe2\x94\x80 << trace2: Q\n"
                   "    \xe2\x94\x82   \xe2\x94\x94\xe2\x94\x80\xe2\x94\x80 << trace2: LQ\n"
                   "    \xe2\x94\x82       \xe2\x94\x94\xe2\x94\x80\xe2\x94\x80 << trace2: kq\n"
                   "    \xe2\x94\x94\xe2\x94\x80\xe2\x94\x80 << trace2: R\n"
                   "        \xe2\x94\x94\xe2\x94\x80\xe2\x94\x80 << trace2: LR\n"
                   "            \xe2\x94\x94\xe2\x94\x80\xe2\x94\x80 << trace2: kr\n");
    tl_diff_free(d);
    tl_trace_free(t1);
    tl_trace_free(t2);
}

/* The tables of the convolution pair, worked out by hand: the unique-args summary groups
 * the two batched_transpose rows (same op, busy time and LCA: count 2, sum 100), sorts by
 * the sum, largest first, and renames miopen/cudnn_convolution (one LCA, no common
 * suffix, prefix or containment, one module each) to "root"; lca_summary sorts by
 * trace1's time (150 then 10 of 160: 93.75% and 6.25%) against trace2's 50 and 5 of 55. */
static void test_tables(void **state)
{
    (void)state;
    tl_trace *t1, *t2;
    conv_pair(&t1, &t2);
    tl_error err = {0};
    tl_diff *d = tl_diff_run(t1, t2, NULL, &err);
    tl_arena a;
    tl_arena_init(&a);
    char *csv = csv_of(tl_diff_unique_args_table(d, &a));
    assert_string_equal(csv,
                        "name,operation_count,cpu_op_name,cpu_op_uid,source,Input Dims,Input Strides,Input type,"
                        "Concrete Inputs,busy_time,lowest_common_ancestor_name,nn_module_stack,nn_module_parent,"
                        "kernel_time_mean,kernel_time_sum\n"
                        "batched_transpose,2,root,101,trace1,,,,,150.0,aten::_convolution,root,root,50.0,100.0\n"
                        "igemm_fwd,1,root,101,trace1,,,,,150.0,aten::_convolution,root,root,50.0,50.0\n"
                        "cutlass_fprop,1,root,101,trace2,,,,,50.0,aten::_convolution,root,root,40.0,40.0\n"
                        "nhwcToNchw,1,root,101,trace2,,,,,50.0,aten::_convolution,root,root,20.0,20.0\n"
                        "add_kernel_rocm,1,aten::add_,108,trace1,,,,,10.0,aten::add_,root,root,10.0,10.0\n"
                        "add_kernel_cuda,1,aten::add_,106,trace2,,,,,5.0,aten::add_,root,root,5.0,5.0\n");
    check_all_slices(d, csv);
    free(csv);
    csv = csv_of(tl_diff_lca_table(d, &a));
    assert_string_equal(csv,
                        "name,lowest_common_ancestor_name,lowest_common_ancestor_id,nn_module_stack,nn_module_parent,"
                        "Input Dims,Input type,Input Strides,Concrete Inputs,kernel_time_trace1_us,"
                        "kernel_time_trace2_us,num_kernels_trace1,num_kernels_trace2,kernel_names_trace1,"
                        "kernel_names_trace2,speedup (trace2/trace1),delta_us (trace2 - trace1),"
                        "pct_of_trace1_total (%),cumulative_pct_trace1 (%),pct_of_trace2_total (%)\n"
                        "aten::miopen_convolution,aten::_convolution,0,root,root,,,,,150.0,50.0,3,2,"
                        "\"['batched_transpose', 'igemm_fwd', 'batched_transpose']\","
                        "\"['cutlass_fprop', 'nhwcToNchw']\",0.3333333333333333,-100.0,93.75,93.75,90.9090909090909\n"
                        "aten::add_,aten::add_,1,root,root,,,,,10.0,5.0,1,1,['add_kernel_rocm'],['add_kernel_cuda'],"
                        "0.5,-5.0,6.25,100.0,9.090909090909092\n");
    free(csv);
    /* each side's map: the op names before the renaming */
    tl_buf j = {0};
    tl_diff_cpu_op_map_json(d, 2, &j);
    assert_string_equal(tl_buf_cstr(&j), "{\n  \"aten::add_\": [\n    \"add_kernel_cuda\"\n  ],\n"
                                         "  \"aten::cudnn_convolution\": [\n    \"cutlass_fprop\",\n"
                                         "    \"nhwcToNchw\"\n  ]\n}");
    tl_diff_cpu_op_map_json(d, 0, &j);
    assert_non_null(strstr(tl_buf_cstr(&j), "\"root\": {\n    \"trace1\": {\n      \"kernels\": [\n"
                                            "        \"batched_transpose\",\n        \"igemm_fwd\"\n      ],"));
    tl_buf_free(&j);
    tl_arena_free(&a);
    tl_diff_free(d);
    tl_trace_free(t1);
    tl_trace_free(t2);
}

/* A diff that leaves the unique-args summary and the cpu_op maps out (no_groups: a run
 * without the morphology diff's files) has no groups and empty maps, and the very
 * diff_stats and lca_summary of the whole diff. */
static void test_no_groups(void **state)
{
    (void)state;
    tl_trace *t1, *t2;
    conv_pair(&t1, &t2);
    tl_error err = {0};
    tl_diff *all = tl_diff_run(t1, t2, NULL, &err);
    tl_diff_opts o = {0};
    o.no_groups = 1;
    tl_diff *part = tl_diff_run(t1, t2, &o, &err);
    assert_non_null(all);
    assert_non_null(part);
    assert_int_equal(tl_diff_unique_args_groups(all), 4 + 2);
    assert_int_equal(tl_diff_unique_args_groups(part), 0);
    tl_buf j = {0};
    for (int which = 0; which <= 2; which++) {
        tl_diff_cpu_op_map_json(part, which, &j);
        assert_int_equal(j.len, 0);
        tl_diff_cpu_op_map_json(all, which, &j);
        assert_true(j.len > 0);
    }
    tl_buf_free(&j);
    tl_arena a;
    tl_arena_init(&a);
    char *x = csv_of(tl_diff_stats_table(all, &a)), *y = csv_of(tl_diff_stats_table(part, &a));
    assert_string_equal(x, y);
    assert_non_null(strstr(x, "igemm_fwd,aten::miopen_convolution,"));
    free(x);
    free(y);
    x = csv_of(tl_diff_lca_table(all, &a));
    y = csv_of(tl_diff_lca_table(part, &a));
    assert_string_equal(x, y);
    free(x);
    free(y);
    tl_arena_free(&a);
    tl_diff_free(part);
    tl_diff_free(all);
    tl_trace_free(t1);
    tl_trace_free(t2);
}

/* Phase 1: one side's single child is a wrapper; it is walked down to the node with
 * several GPU children, which takes the merged node's place on that side. */
static void test_collapse(void **state)
{
    (void)state;
    tb b1 = tb_new(), b2 = tb_new();
    uint32_t p = OP(&b1, "P", 0, 100, NONE);
    uint32_t w = OP(&b1, "W", 1, 90, p);
    uint32_t x = OP(&b1, "X", 2, 10, w);
    KN(&b1, "kx", 500, 5, RT(&b1, "L", 3, 1, x));
    uint32_t y = OP(&b1, "Y", 20, 10, w);
    KN(&b1, "ky", 600, 5, RT(&b1, "L", 21, 1, y));
    p = OP(&b2, "P", 0, 100, NONE);
    x = OP(&b2, "X", 2, 10, p);
    KN(&b2, "kx", 500, 5, RT(&b2, "L", 3, 1, x));
    y = OP(&b2, "Y", 20, 10, p);
    KN(&b2, "ky", 600, 7, RT(&b2, "L", 21, 1, y));
    tl_trace *t1 = tb_finish(&b1), *t2 = tb_finish(&b2);
    tl_error err = {0};
    tl_diff *d = tl_diff_run(t1, t2, NULL, &err);
    /* [W] vs [X, Y]: W has two GPU children, so trace1's side of the root becomes W */
    assert_tree(d, "\xe2\x94\x94\xe2\x94\x80\xe2\x94\x80 combined: W | P\n"
                   "    \xe2\x94\x9c\xe2\x94\x80\xe2\x94\x80 X\n"
                   "    \xe2\x94\x82   \xe2\x94\x94\xe2\x94\x80\xe2\x94\x80 L\n"
                   "    \xe2\x94\x82       \xe2\x94\x94\xe2\x94\x80\xe2\x94\x80 kx\n"
                   "    \xe2\x94\x94\xe2\x94\x80\xe2\x94\x80 Y\n"
                   "        \xe2\x94\x94\xe2\x94\x80\xe2\x94\x80 L\n"
                   "            \xe2\x94\x94\xe2\x94\x80\xe2\x94\x80 ky\n");
    /* kernels matched with kernels are LCAs (ids 3 and 6): one row a side each */
    size_t nr;
    const tl_diff_row *r = tl_diff_rows(d, &nr);
    assert_int_equal(nr, 4);
    assert_int_equal(r[0].lca, 3);
    assert_int_equal(r[2].lca, 6);
    assert_true(r[3].busy == 7.0);
    assert_int_equal(tl_diff_identical(d), 0);
    /* the partner map: trace1's P was merged with trace2's P (before the collapse) */
    assert_int_equal(tl_diff_partner(d, 1, 0), 0);
    tl_diff_free(d);
    tl_trace_free(t1);
    tl_trace_free(t2);
}

/* The disambiguation: Wagner-Fischer pairs A with the first A of trace2 (the match at
 * the end of the backtracking), but the BFS signatures say trace1's A is trace2's
 * second A.  Worked out in the comments of disambig_pair. */
static void disambig_pair(tl_trace **t1, tl_trace **t2)
{
    tb b1 = tb_new(), b2 = tb_new();
    uint32_t p = OP(&b1, "P", 0, 100, NONE);
    uint32_t a = OP(&b1, "A", 1, 10, p);
    KN(&b1, "kx", 500, 5, RT(&b1, "X", 2, 1, a));
    uint32_t b = OP(&b1, "B", 20, 10, p);
    KN(&b1, "kb", 600, 5, RT(&b1, "LB", 21, 1, b));
    *t1 = tb_finish(&b1);
    p = OP(&b2, "P", 0, 100, NONE);
    a = OP(&b2, "A", 1, 10, p);
    KN(&b2, "ky", 500, 5, RT(&b2, "Y", 2, 1, a));
    a = OP(&b2, "A", 20, 10, p);
    KN(&b2, "kx", 600, 5, RT(&b2, "X", 21, 1, a));
    uint32_t c = OP(&b2, "C", 40, 10, p);
    KN(&b2, "kc", 700, 5, RT(&b2, "LC", 41, 1, c));
    *t2 = tb_finish(&b2);
}

static void test_disambiguate(void **state)
{
    (void)state;
    tl_trace *t1, *t2;
    disambig_pair(&t1, &t2);
    tl_error err = {0};
    tl_diff *d = tl_diff_run(t1, t2, NULL, &err);
    /* [A B] vs [A A C]: WF gives match(0,0) del(1) ins(1) ins(2); A's signatures:
     * trace1 A [(X) (kx) ()], trace2 A0 [(Y) (ky) ()], A1 [(X) (kx) ()]: (0,1) scores
     * (3,0), the best: the ops become del B, ins C, match(0,1), ins A0.  Phase 4 pairs
     * nothing more. */
    assert_tree(d, "\xe2\x94\x94\xe2\x94\x80\xe2\x94\x80 P\n"
                   "    \xe2\x94\x9c\xe2\x94\x80\xe2\x94\x80 A\n"
                   "    \xe2\x94\x82   \xe2\x94\x94\xe2\x94\x80\xe2\x94\x80 X\n"
                   "    \xe2\x94\x82       \xe2\x94\x94\xe2\x94\x80\xe2\x94\x80 kx\n"
                   "    \xe2\x94\x9c\xe2\x94\x80\xe2\x94\x80 >> trace1: B\n"
                   "    \xe2\x94\x82   \xe2\x94\x94\xe2\x94\x80\xe2\x94\x80 >> trace1: LB\n"
                   "    \xe2\x94\x82       \xe2\x94\x94\xe2\x94\x80\xe2\x94\x80 >> trace1: kb\n"
                   "    \xe2\x94\x9c\xe2\x94\x80\xe2\x94\x80 << trace2: C\n"
                   "    \xe2\x94\x82   \xe2\x94\x94\xe2\x94\x80\xe2\x94\x80 << trace2: LC\n"
                   "    \xe2\x94\x82       \xe2\x94\x94\xe2\x94\x80\xe2\x94\x80 << trace2: kc\n"
                   "    \xe2\x94\x94\xe2\x94\x80\xe2\x94\x80 << trace2: A\n"
                   "        \xe2\x94\x94\xe2\x94\x80\xe2\x94\x80 << trace2: Y\n"
                   "            \xe2\x94\x94\xe2\x94\x80\xe2\x94\x80 << trace2: ky\n");
    /* merged ids in pre-order: P 0, A 1, X 2, kx 3, B 4 ...; P is an LCA (one-sided GPU
     * children), and the matched kx (both kernels) another: rows kb | kc ky, then kx kx */
    size_t nr;
    const tl_diff_row *r = tl_diff_rows(d, &nr);
    assert_int_equal(nr, 5);
    assert_int_equal(r[0].side, 0);
    assert_int_equal(r[0].lca, 0);
    assert_int_equal(r[1].side, 1);
    assert_int_equal(r[2].side, 1);
    assert_int_equal(r[3].lca, 3);
    assert_int_equal(r[4].lca, 3);
    size_t nl;
    const tl_diff_lca *lc = tl_diff_lcas(d, &nl);
    assert_int_equal(nl, 2);
    assert_string_equal(lc[0].name2, "A | C"); /* distinct ops, sorted, joined */
    assert_true(lc[0].time2 == 10.0);          /* [700,705] and [500,505] */
    tl_diff_free(d);

    /* With no pair budget the name keeps Wagner-Fischer's matching: A with A0 */
    tl_diff_opts o = {0, 1, 0};
    d = tl_diff_run(t1, t2, &o, &err);
    assert_int_equal(tl_diff_stats_of(d)->disambig_skipped, 1);
    char *got = tree_text(d);
    assert_non_null(strstr(got, ">> trace1: X\n"));
    assert_non_null(strstr(got, "<< trace2: Y\n"));
    free(got);
    tl_diff_free(d);
    tl_trace_free(t1);
    tl_trace_free(t2);
}

/* children_with_missing: a name GPU-path on one side only brings the other side's
 * non-GPU child of that name into the alignment. */
static void test_missing(void **state)
{
    (void)state;
    tb b1 = tb_new(), b2 = tb_new();
    uint32_t p = OP(&b1, "P", 0, 100, NONE);
    uint32_t a = OP(&b1, "A", 1, 10, p);
    KN(&b1, "ka", 500, 5, RT(&b1, "L", 2, 1, a));
    OP(&b1, "Z", 20, 10, p); /* no GPU work, nothing names it: left out */
    p = OP(&b2, "P", 0, 100, NONE);
    OP(&b2, "A", 1, 10, p); /* no GPU work here, but trace1's A has */
    uint32_t c = OP(&b2, "C", 20, 10, p);
    KN(&b2, "kc", 600, 5, RT(&b2, "L", 21, 1, c));
    tl_trace *t1 = tb_finish(&b1), *t2 = tb_finish(&b2);
    tl_error err = {0};
    tl_diff *d = tl_diff_run(t1, t2, NULL, &err);
    /* lists [A] vs [A(non-GPU), C]: WF matches A, inserts C */
    assert_tree(d, "\xe2\x94\x94\xe2\x94\x80\xe2\x94\x80 P\n"
                   "    \xe2\x94\x9c\xe2\x94\x80\xe2\x94\x80 A\n"
                   "    \xe2\x94\x82   \xe2\x94\x94\xe2\x94\x80\xe2\x94\x80 >> trace1: L\n"
                   "    \xe2\x94\x82       \xe2\x94\x94\xe2\x94\x80\xe2\x94\x80 >> trace1: ka\n"
                   "    \xe2\x94\x94\xe2\x94\x80\xe2\x94\x80 << trace2: C\n"
                   "        \xe2\x94\x94\xe2\x94\x80\xe2\x94\x80 << trace2: L\n"
                   "            \xe2\x94\x94\xe2\x94\x80\xe2\x94\x80 << trace2: kc\n");
    /* A is combined but its trace2 side is not on the GPU path: not an LCA; its
     * trace1-only child L emits its rows with A (id 1) as the LCA */
    size_t nr;
    const tl_diff_row *r = tl_diff_rows(d, &nr);
    assert_int_equal(nr, 2);
    assert_int_equal(r[0].lca, 0); /* kc under P: P is an LCA for C */
    assert_int_equal(r[0].side, 1);
    assert_int_equal(r[1].lca, 1);
    assert_string_equal(r[1].lca_name, "A");
    tl_diff_free(d);
    tl_trace_free(t1);
    tl_trace_free(t2);
}

/* A trace against itself: the identical-traces form. */
static void test_identical(void **state)
{
    (void)state;
    tl_trace *t1, *t2;
    conv_pair(&t1, &t2);
    tl_error err = {0};
    tl_diff *d = tl_diff_run(t1, t1, NULL, &err);
    assert_int_equal(tl_diff_identical(d), 1);
    tl_arena a;
    tl_arena_init(&a);
    char *csv = csv_of(tl_diff_stats_table(d, &a));
    assert_null(strstr(csv, "source"));
    assert_null(strstr(csv, "trace2"));
    /* every kernel matched with itself is its own LCA: 4 rows, one per kernel */
    size_t lines = 0;
    for (char *p = csv; *p; p++)
        lines += *p == '\n';
    assert_int_equal(lines, 1 + 4);
    free(csv);
    /* trace 2's groups left out of the unique-args summary, slice by slice too */
    csv = csv_of(tl_diff_unique_args_table(d, &a));
    assert_null(strstr(csv, "trace2"));
    check_all_slices(d, csv);
    free(csv);
    /* lca_summary still has both sides, equal */
    csv = csv_of(tl_diff_lca_table(d, &a));
    assert_non_null(strstr(csv, ",1.0,0.0,"));
    free(csv);
    tl_buf j = {0};
    tl_diff_cpu_op_map_json(d, 0, &j);
    assert_null(strstr(tl_buf_cstr(&j), "trace1"));
    assert_non_null(strstr(tl_buf_cstr(&j), "\"aten::add_\": {\n    \"kernels\": [\n      \"add_kernel_rocm\"\n    ],"));
    tl_buf_free(&j);
    tl_arena_free(&a);
    tl_diff_free(d);
    tl_trace_free(t1);
    tl_trace_free(t2);
}

/* Roots pair by position, extras alone; a trace without cpu ops cannot be aligned. */
static void test_roots(void **state)
{
    (void)state;
    tb b1 = tb_new(), b2 = tb_new();
    OP(&b1, "R1", 0, 1, NONE);
    OP(&b1, "R2", 5, 1, NONE);
    OP(&b2, "R1", 0, 1, NONE);
    tl_trace *t1 = tb_finish(&b1), *t2 = tb_finish(&b2);
    tl_error err = {0};
    tl_diff *d = tl_diff_run(t1, t2, NULL, &err);
    assert_tree(d, "\xe2\x94\x9c\xe2\x94\x80\xe2\x94\x80 R1\n"
                   "\xe2\x94\x94\xe2\x94\x80\xe2\x94\x80 >> trace1: R2\n");
    size_t nr;
    tl_diff_rows(d, &nr);
    assert_int_equal(nr, 0);
    tl_diff_free(d);
    tb b3 = tb_new();
    KN(&b3, "k", 0, 1, NONE);
    tl_trace *t3 = tb_finish(&b3);
    assert_null(tl_diff_run(t1, t3, NULL, &err));
    assert_non_null(strstr(err.msg, "no CPU op"));
    tl_trace_free(t1);
    tl_trace_free(t2);
    tl_trace_free(t3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_normalize),  cmocka_unit_test(test_wf),       cmocka_unit_test(test_pyset_order),
        cmocka_unit_test(test_positional), cmocka_unit_test(test_reconcile), cmocka_unit_test(test_reconcile_equal_lists),
        cmocka_unit_test(test_tables),     cmocka_unit_test(test_no_groups),  cmocka_unit_test(test_collapse),
        cmocka_unit_test(test_disambiguate), cmocka_unit_test(test_missing), cmocka_unit_test(test_identical),
        cmocka_unit_test(test_roots),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
