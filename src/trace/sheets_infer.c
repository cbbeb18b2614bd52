/*
 * sheets_infer.c - the inference layout of ops_summary and ops_summary_by_category, and
 * the launchers' call stacks and parent modules (INFERENCE.md §3.2-§3.4).
 *
 * The sums, the sort and the percentages are TRACES.md §4.1's (Kahan group sums, numpy's
 * quicksort descending, pairwise column total), so that the numbers agree to the bit.
 */
#include "trace/sheets_infer.h"

#include "trace/jscan.h"
#include "trace/pdnum.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A module name in a call stack is cut to this many characters, and ".." added. */
#define STACK_NAME_MAX 256

static void add_repr_cut(tl_buf *b, const char *s)
{
    size_t len = strlen(s), cut = len, chars = 0;
    for (size_t q = 0; q < len; q++) {
        if (((unsigned char)s[q] & 0xc0) != 0x80) {
            if (chars == STACK_NAME_MAX) {
                cut = q;
                break;
            }
            chars++;
        }
    }
    if (cut == len) {
        tl_py_str_repr(b, s, len);
        return;
    }
    char *tmp = tl_xmalloc(cut + 3);
    memcpy(tmp, s, cut);
    memcpy(tmp + cut, "..", 3);
    tl_py_str_repr(b, tmp, cut + 2);
    free(tmp);
}

/* parent_module: the module name with every `_<digits>` taken out. */
static const char *strip_numbers(tl_arena *a, const char *s, size_t n)
{
    char *o = tl_arena_alloc(a, n + 1);
    size_t w = 0;
    for (size_t i = 0; i < n;) {
        if (s[i] == '_' && i + 1 < n && s[i + 1] >= '0' && s[i + 1] <= '9') {
            i++;
            while (i < n && s[i] >= '0' && s[i] <= '9')
                i++;
            continue;
        }
        o[w++] = s[i++];
    }
    o[w] = 0;
    return o;
}

void tl_sh_module_build(const tl_trace *t, const uint32_t *ev, size_t n, tl_arena *a, tl_sh_module *m)
{
    m->n = n;
    m->parent_module = tl_xmalloc((n ? n : 1) * sizeof *m->parent_module);
    m->call_stack = tl_xmalloc((n ? n : 1) * sizeof *m->call_stack);
    tl_buf b = {0}, second = {0};
    for (size_t i = 0; i < n; i++) {
        const tl_tev *e = &t->ev[ev[i]];
        tl_buf_clear(&b);
        tl_buf_addc(&b, '[');
        tl_py_str_repr(&b, e->name, strlen(e->name));
        int have_second = 0;
        for (uint32_t p = e->parent; p != TL_TEV_NONE; p = t->ev[p].parent) {
            const char *nm = t->ev[p].name;
            if (!strstr(nm, "nn.Module"))
                continue;
            tl_buf_add(&b, ", ", 2);
            add_repr_cut(&b, nm);
            if (!have_second) {
                /* the element as the list holds it (cut), for parent_module */
                size_t len = strlen(nm), cut = len, chars = 0;
                for (size_t q = 0; q < len; q++) {
                    if (((unsigned char)nm[q] & 0xc0) != 0x80) {
                        if (chars == STACK_NAME_MAX) {
                            cut = q;
                            break;
                        }
                        chars++;
                    }
                }
                tl_buf_clear(&second);
                tl_buf_add(&second, nm, cut);
                if (cut < len)
                    tl_buf_add(&second, "..", 2);
                have_second = 1;
            }
        }
        tl_buf_addc(&b, ']');
        m->call_stack[i] = tl_arena_strndup(a, b.data, b.len);
        m->parent_module[i] = have_second ? strip_numbers(a, second.data ? second.data : "", second.len) : "NA";
    }
    tl_buf_free(&b);
    tl_buf_free(&second);
}

void tl_sh_module_free(tl_sh_module *m)
{
    free(m->parent_module);
    free(m->call_stack);
    memset(m, 0, sizeof *m);
}

/* ---- the two summaries ---------------------------------------------------------------------- */

typedef struct keyed {
    const char *k1, *k2;
    size_t row;
} keyed;

static int keyed_cmp(const void *x, const void *y)
{
    const keyed *a = x, *b = y;
    int c = strcmp(a->k1, b->k1);
    if (!c)
        c = strcmp(a->k2, b->k2);
    return c ? c : a->row < b->row ? -1 : a->row > b->row;
}


static void put_f(tl_table *t, size_t c, size_t r, double v)
{
    t->cols[c].cells[r] = isnan(v) ? tl_cell_missing() : tl_cell_float(v);
}

static tl_table *summary(const tl_sh_rows *r, int by_cat, const tl_sheet_opts *o, const tl_sh_module *mod, tl_arena *arena)
{
    size_t n = r->n;
    keyed *kv = tl_xmalloc((n ? n : 1) * sizeof *kv);
    for (size_t i = 0; i < n; i++)
        kv[i] = (keyed){by_cat ? r->cat[i] : r->name[i], o->parent_module ? mod->parent_module[i] : "", i};
    qsort(kv, n, sizeof *kv, keyed_cmp); /* groups in key order, members in launcher order */
    size_t *start = tl_xmalloc((n + 1) * sizeof *start), ng = 0;
    for (size_t i = 0; i < n; i++)
        if (i == 0 || strcmp(kv[i].k1, kv[i - 1].k1) != 0 || strcmp(kv[i].k2, kv[i - 1].k2) != 0)
            start[ng++] = i;
    start[ng] = n;
    double *dsum = tl_xmalloc((ng ? ng : 1) * sizeof *dsum), *ssum = tl_xmalloc((ng ? ng : 1) * sizeof *ssum);
    for (size_t g = 0; g < ng; g++) {
        tl_kahan kd = {0}, ks = {0};
        for (size_t q = start[g]; q < start[g + 1]; q++) {
            tl_kahan_add(&kd, r->direct[kv[q].row]);
            tl_kahan_add(&ks, r->subtree[kv[q].row]);
        }
        dsum[g] = kd.sum;
        ssum[g] = ks.sum;
    }
    size_t *ord = tl_xmalloc((ng ? ng : 1) * sizeof *ord);
    tl_pd_sort_desc(dsum, ng, ord);
    double *ms = tl_xmalloc((ng ? ng : 1) * sizeof *ms);
    for (size_t i = 0; i < ng; i++)
        ms[i] = dsum[ord[i]] / 1000;
    double total = tl_np_sum(ms, ng), cum = 0;

    const char *cols[12];
    size_t nc = 0;
    cols[nc++] = by_cat ? "op category" : "name";
    if (o->parent_module)
        cols[nc++] = "parent_module";
    size_t c_d = 0, c_s = 0, c_cnt2 = 0, c_ms, c_count, c_cats = 0, c_cs = 0;
    if (by_cat) {
        c_count = nc;
        cols[nc++] = "Count";
        if (o->parent_module)
            cols[c_cs = nc++] = "call_stack_first";
        c_ms = nc;
        cols[nc++] = "total_direct_kernel_time_ms";
    } else {
        cols[c_d = nc++] = "total_direct_kernel_time_sum";
        cols[c_s = nc++] = "total_subtree_kernel_time_sum";
        cols[c_cnt2 = nc++] = "total_subtree_kernel_time_count";
        cols[c_ms = nc++] = "total_direct_kernel_time_ms";
        cols[c_count = nc++] = "Count";
        cols[c_cats = nc++] = "Categories";
        if (o->parent_module)
            cols[c_cs = nc++] = "call_stack_first";
    }
    size_t c_pct = nc;
    cols[nc++] = "Percentage (%)";
    cols[nc++] = "Cumulative Percentage (%)";
    tl_table *tb = tl_table_new();
    tb->nrows = ng;
    for (size_t c = 0; c < nc; c++)
        tl_table_add_column(tb, cols[c]);
    tl_buf b = {0};
    for (size_t row = 0; row < ng; row++) {
        size_t g = ord[row], cnt = start[g + 1] - start[g];
        const keyed *first = &kv[start[g]];
        double pct = ms[row] / total * 100;
        cum += pct;
        tb->cols[0].cells[row] = tl_cell_str(first->k1);
        if (o->parent_module)
            tb->cols[1].cells[row] = tl_cell_str(first->k2);
        tb->cols[c_count].cells[row] = tl_cell_int((int64_t)cnt);
        put_f(tb, c_ms, row, ms[row]);
        if (!by_cat) {
            put_f(tb, c_d, row, dsum[g]);
            put_f(tb, c_s, row, ssum[g]);
            tb->cols[c_cnt2].cells[row] = tl_cell_int((int64_t)cnt);
            const char **cv = tl_xmalloc(cnt * sizeof *cv);
            for (size_t q = 0; q < cnt; q++)
                cv[q] = r->cat[kv[start[g] + q].row];
            tl_buf_clear(&b);
            tl_py_sorted_set_repr(&b, cv, cnt);
            free(cv);
            tb->cols[c_cats].cells[row] = tl_cell_str(tl_arena_strndup(arena, b.data, b.len));
        }
        if (o->parent_module)
            tb->cols[c_cs].cells[row] = tl_cell_str(mod->call_stack[first->row]);
        put_f(tb, c_pct, row, pct);
        put_f(tb, c_pct + 1, row, cum);
    }
    tl_buf_free(&b);
    free(kv);
    free(start);
    free(dsum);
    free(ssum);
    free(ord);
    free(ms);
    return tb;
}

void tl_sh_infer_summaries(const tl_sh_rows *r, const tl_sheet_opts *o, const tl_sh_module *mod, tl_arena *arena,
                           tl_table **by_cat, tl_table **by_name)
{
    *by_cat = summary(r, 1, o, mod, arena);
    *by_name = summary(r, 0, o, mod, arena);
}
