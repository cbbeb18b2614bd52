/*
 * lca.c - the summary's comparison by lowest common op (see lca.h).
 */
#include "summary/lca.h"

#include "base/jsonw.h"
#include "base/numfmt.h"
#include "base/sort.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static double pct_change(double a, double b) { return a > 0 ? (b - a) / a * 100.0 : NAN; }

static int by_first(size_t a, size_t b, void *ctx)
{
    const tl_lca_item *it = ctx;
    return it[a].first < it[b].first ? -1 : it[a].first > it[b].first;
}

static int by_abs_delta(size_t a, size_t b, void *ctx)
{
    const tl_lca_item *it = ctx;
    double x = fabs(it[a].delta_ms), y = fabs(it[b].delta_ms);
    return x > y ? -1 : x < y ? 1 : 0;
}

typedef struct sig_ctx {
    const tl_lca_item *it;
} sig_ctx;

/* LCAs alike: the same LCA name over the same ops on each side. */
static int by_signature(size_t a, size_t b, void *ctx)
{
    const tl_lca_item *it = ((const sig_ctx *)ctx)->it;
    int r = strcmp(it[a].lca, it[b].lca);
    if (!r)
        r = strcmp(it[a].ops1, it[b].ops1);
    if (!r)
        r = strcmp(it[a].ops2, it[b].ops2);
    return r;
}

void tl_lca_summary_build(tl_lca_summary *s, const tl_diff *d, const char *tag1, const char *tag2, size_t top,
                          double gate_pct, double gate_min_ms, tl_arena *arena)
{
    memset(s, 0, sizeof *s);
    s->tag1 = tag1;
    s->tag2 = tag2;
    s->gate_on = gate_pct >= 0;
    s->gate_pct = gate_pct;
    s->gate_min_ms = gate_min_ms;
    size_t n;
    const tl_diff_lca *l = tl_diff_lcas(d, &n);
    s->nlcas = n;
    tl_lca_item *all = tl_xmalloc((n ? n : 1) * sizeof *all);
    for (size_t i = 0; i < n; i++) {
        tl_lca_item *it = &all[i];
        memset(it, 0, sizeof *it);
        it->lca = l[i].lca_name ? l[i].lca_name : "";
        it->ops1 = l[i].name1;
        it->ops2 = l[i].name2;
        it->n1 = l[i].n1;
        it->n2 = l[i].n2;
        it->ms1 = l[i].time1 / 1e3;
        it->ms2 = l[i].time2 / 1e3;
        it->count = 1;
    }
    /* A model repeats its layers: the twelve softmaxes of twelve blocks are one line
     * (x12), their times added, in the order their first one comes. */
    size_t *ord = tl_xmalloc((n ? n : 1) * sizeof *ord);
    for (size_t i = 0; i < n; i++)
        ord[i] = i;
    sig_ctx sc = {all};
    tl_sort_rows(ord, n, by_signature, &sc);
    tl_lca_item *groups = tl_xmalloc((n ? n : 1) * sizeof *groups);
    size_t ng = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i + 1, first = ord[i];
        tl_lca_item g = all[ord[i]];
        for (; j < n && by_signature(ord[i], ord[j], &sc) == 0; j++) {
            const tl_lca_item *x = &all[ord[j]];
            g.n1 += x->n1;
            g.n2 += x->n2;
            g.ms1 += x->ms1;
            g.ms2 += x->ms2;
            g.count++;
            if (ord[j] < first)
                first = ord[j];
        }
        g.first = first;
        groups[ng++] = g;
        i = j;
    }
    for (size_t i = 0; i < ng; i++) {
        tl_lca_item *g = &groups[i];
        g->delta_ms = g->ms2 - g->ms1;
        g->pct = pct_change(g->ms1, g->ms2);
        s->nslower += g->delta_ms > 0;
        s->nfaster += g->delta_ms < 0;
    }
    s->ngroups = ng;
    /* largest change first; equal changes in the order of lca_summary */
    for (size_t i = 0; i < ng; i++)
        ord[i] = i;
    tl_sort_rows(ord, ng, by_first, groups);
    size_t *o2 = tl_xmalloc((ng ? ng : 1) * sizeof *o2);
    memcpy(o2, ord, ng * sizeof *o2);
    tl_sort_rows(o2, ng, by_abs_delta, groups);
    s->ntop = ng < top ? ng : top;
    s->top = tl_xmalloc((s->ntop ? s->ntop : 1) * sizeof *s->top);
    for (size_t i = 0; i < s->ntop; i++)
        s->top[i] = groups[o2[i]];
    if (s->gate_on) {
        s->violations = tl_xmalloc((ng ? ng : 1) * sizeof *s->violations);
        for (size_t i = 0; i < ng; i++) {
            const tl_lca_item *it = &groups[o2[i]];
            if (it->ms1 >= gate_min_ms && it->ms1 > 0 && it->pct > gate_pct)
                s->violations[s->nviolations++] = *it;
        }
    }
    (void)arena;
    free(o2);
    free(ord);
    free(groups);
    free(all);
}

void tl_lca_summary_free(tl_lca_summary *s)
{
    free(s->top);
    free(s->violations);
    memset(s, 0, sizeof *s);
}

/* A name on the terminal: no control characters. */
static void put_name(FILE *out, const char *s)
{
    for (const char *c = s; *c; c++)
        fputc((unsigned char)*c < 0x20 || *c == 0x7f ? '?' : *c, out);
}

/* "5 kernels of aten::miopen_convolution 0.334 ms" (the op left out when it is the LCA) */
static void print_side(FILE *out, const tl_lca_item *it, int side)
{
    size_t n = side ? it->n2 : it->n1;
    const char *ops = side ? it->ops2 : it->ops1;
    fprintf(out, "%zu kernel%s", n, n == 1 ? "" : "s");
    if (*ops && strcmp(ops, it->lca) != 0) {
        fputs(" of ", out);
        put_name(out, ops);
    }
    fprintf(out, " %.3f ms", side ? it->ms2 : it->ms1);
}

void tl_lca_summary_print(const tl_lca_summary *s, FILE *out, int color)
{
    if (!s->nlcas)
        return;
    const char *bold = color ? "\x1b[1m" : "", *off = color ? "\x1b[0m" : "";
    fprintf(out, "\n%s%s vs %s by lowest common op%s (%zu aligned, %zu distinct: %zu slower, %zu faster)\n", bold,
            s->tag2, s->tag1, off, s->nlcas, s->ngroups, s->nslower, s->nfaster);
    for (size_t i = 0; i < s->ntop; i++) {
        const tl_lca_item *it = &s->top[i];
        const char *tint = !color ? "" : it->delta_ms > 0 ? "\x1b[31m" : it->delta_ms < 0 ? "\x1b[32m" : "";
        fputs("  ", out);
        put_name(out, it->lca);
        if (it->count > 1)
            fprintf(out, " (x%zu)", it->count);
        fputs(": ", out);
        print_side(out, it, 0);
        fputs(" vs ", out);
        print_side(out, it, 1);
        fprintf(out, ", %s%+.3f ms", tint, it->delta_ms);
        if (isnan(it->pct))
            fprintf(out, ", new%s\n", color ? off : "");
        else
            fprintf(out, ", %+.1f%%%s\n", it->pct, color ? off : "");
    }
}

void tl_lca_summary_print_violations(const tl_lca_summary *s, FILE *out)
{
    enum { MAX_LINES = 20 };
    for (size_t i = 0; i < s->nviolations; i++) {
        const tl_lca_item *it = &s->violations[i];
        if (i == MAX_LINES) {
            fprintf(out, "tlcompare: regression: %s: and %zu more lowest common ops (--summary-json lists them all)\n",
                    s->tag2, s->nviolations - MAX_LINES);
            break;
        }
        fprintf(out, "tlcompare: regression: %s lowest common op ", s->tag2);
        put_name(out, it->lca);
        if (it->count > 1)
            fprintf(out, " (x%zu)", it->count);
        fprintf(out, ": %.3f ms -> %.3f ms (%+.1f%%, limit %g%%)\n", it->ms1, it->ms2, it->pct, s->gate_pct);
    }
}

/* Markdown text: `|` and backticks would end the cell or the code span. */
static void md_code(tl_buf *b, const char *s)
{
    tl_buf_addc(b, '`');
    for (const char *c = s; *c; c++) {
        if (*c == '|')
            tl_buf_adds(b, "\\|");
        else if (*c == '`' || (unsigned char)*c < 0x20)
            tl_buf_addc(b, '\'');
        else
            tl_buf_addc(b, *c);
    }
    tl_buf_addc(b, '`');
}

static void md_side(tl_buf *b, const tl_lca_item *it, int side)
{
    size_t n = side ? it->n2 : it->n1;
    const char *ops = side ? it->ops2 : it->ops1;
    tl_buf_printf(b, "%zu kernel%s", n, n == 1 ? "" : "s");
    if (*ops && strcmp(ops, it->lca) != 0) {
        tl_buf_adds(b, " of ");
        md_code(b, ops);
    }
    tl_buf_printf(b, ", %.3f ms", side ? it->ms2 : it->ms1);
}

void tl_lca_summary_markdown(const tl_lca_summary *s, tl_buf *b)
{
    if (!s->nlcas)
        return;
    tl_buf_printf(b, "\n**By lowest common op** (%zu aligned, %zu distinct: %zu slower, %zu faster)\n\n", s->nlcas,
                  s->ngroups, s->nslower, s->nfaster);
    tl_buf_adds(b, "| lowest common op | ");
    md_code(b, s->tag1);
    tl_buf_adds(b, " | ");
    md_code(b, s->tag2);
    tl_buf_adds(b, " | delta (ms) | delta % |\n|---|---|---|---:|---:|\n");
    for (size_t i = 0; i < s->ntop; i++) {
        const tl_lca_item *it = &s->top[i];
        tl_buf_adds(b, "| ");
        md_code(b, it->lca);
        if (it->count > 1)
            tl_buf_printf(b, " (x%zu)", it->count);
        tl_buf_adds(b, " | ");
        md_side(b, it, 0);
        tl_buf_adds(b, " | ");
        md_side(b, it, 1);
        tl_buf_printf(b, " | %+.3f | ", it->delta_ms);
        if (isnan(it->pct))
            tl_buf_adds(b, "new |\n");
        else
            tl_buf_printf(b, "%+.1f%% |\n", it->pct);
    }
}

static void js_item(tl_buf *b, const tl_lca_item *it)
{
    tl_buf_adds(b, "{\"lca\": ");
    tl_json_str(b, it->lca);
    tl_buf_printf(b, ", \"count\": %zu", it->count);
    for (int side = 0; side < 2; side++) {
        tl_buf_adds(b, side ? ", \"variant\": {\"ops\": " : ", \"baseline\": {\"ops\": ");
        tl_json_str(b, side ? it->ops2 : it->ops1);
        tl_buf_printf(b, ", \"kernels\": %zu, \"ms\": ", side ? it->n2 : it->n1);
        tl_json_num(b, side ? it->ms2 : it->ms1);
        tl_buf_addc(b, '}');
    }
    tl_buf_adds(b, ", \"delta_ms\": ");
    tl_json_num(b, it->delta_ms);
    tl_buf_adds(b, ", \"pct\": ");
    tl_json_num(b, it->pct);
    tl_buf_addc(b, '}');
}

void tl_lca_summary_json(const tl_lca_summary *s, tl_buf *b)
{
    tl_buf_adds(b, "{\"baseline\": ");
    tl_json_str(b, s->tag1);
    tl_buf_adds(b, ", \"variant\": ");
    tl_json_str(b, s->tag2);
    tl_buf_printf(b, ", \"count\": %zu, \"distinct\": %zu, \"slower\": %zu, \"faster\": %zu,\n    \"top\": [",
                  s->nlcas, s->ngroups, s->nslower, s->nfaster);
    for (size_t i = 0; i < s->ntop; i++) {
        tl_buf_adds(b, i ? ",\n      " : "\n      ");
        js_item(b, &s->top[i]);
    }
    tl_buf_adds(b, s->ntop ? "\n    ],\n    \"violations\": [" : "],\n    \"violations\": [");
    for (size_t i = 0; i < s->nviolations; i++) {
        tl_buf_adds(b, i ? ",\n      " : "\n      ");
        js_item(b, &s->violations[i]);
    }
    tl_buf_adds(b, s->nviolations ? "\n    ]}" : "]}");
}

tl_table *tl_lca_summary_table(const tl_lca_summary *s, tl_arena *a)
{
    const char *cols[] = {"lowest common op", "count",
                          tl_arena_printf(a, "%s ops", s->tag1),
                          tl_arena_printf(a, "%s kernels", s->tag1),
                          tl_arena_printf(a, "%s (ms)", s->tag1),
                          tl_arena_printf(a, "%s ops", s->tag2),
                          tl_arena_printf(a, "%s kernels", s->tag2),
                          tl_arena_printf(a, "%s (ms)", s->tag2),
                          "delta (ms)",
                          "delta %"};
    tl_table *t = tl_table_new();
    t->nrows = s->ntop;
    for (size_t c = 0; c < sizeof cols / sizeof *cols; c++)
        tl_table_add_column(t, tl_arena_strdup(a, cols[c]));
    for (size_t i = 0; i < s->ntop; i++) {
        const tl_lca_item *it = &s->top[i];
        t->cols[0].cells[i] = tl_cell_str(it->lca);
        t->cols[1].cells[i] = tl_cell_int((int64_t)it->count);
        t->cols[2].cells[i] = tl_cell_str(it->ops1);
        t->cols[3].cells[i] = tl_cell_int((int64_t)it->n1);
        t->cols[4].cells[i] = tl_cell_float(it->ms1);
        t->cols[5].cells[i] = tl_cell_str(it->ops2);
        t->cols[6].cells[i] = tl_cell_int((int64_t)it->n2);
        t->cols[7].cells[i] = tl_cell_float(it->ms2);
        t->cols[8].cells[i] = tl_cell_float(it->delta_ms);
        t->cols[9].cells[i] = isnan(it->pct) ? tl_cell_missing() : tl_cell_float(it->pct);
    }
    t->cols[8].role = t->cols[9].role = TL_ROLE_DIFF;
    return t;
}
