/*
 * efficiency.c - the summary's efficiency lines (see efficiency.h).
 */
#include "summary/efficiency.h"

#include "base/jsonw.h"
#include "compare/groups.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define COUNT(a) (sizeof(a) / sizeof *(a))

/* A row's columns, in unified_perf_summary and in the family sheets. */
typedef struct sheet_cols {
    const char *gflops, *mb, *calls;
} sheet_cols;
static const sheet_cols unified_cols = {"GFLOPS", "Data Moved (MB)", "operation_count"};
static const sheet_cols family_cols = {"GFLOPS_first", "Data Moved (MB)_first", "name_count"};

/* The families modelled on the matrix units (PERF §3.5's maf `matrix`): named by the
 * unified op category or the sheet, for the rows whose Compute Spec is empty (a dtype the
 * precision table lacks). */
static const char *const matrix_families[] = {"GEMM", "SDPA", "CONV", "GroupedGEMM"};

static int is_matrix(const char *spec, const char *family)
{
    if (spec && strncmp(spec, "matrix", 6) == 0)
        return 1;
    if (spec && strncmp(spec, "vector", 6) == 0)
        return 0;
    for (size_t i = 0; family && i < COUNT(matrix_families); i++)
        if (strncmp(family, matrix_families[i], strlen(matrix_families[i])) == 0)
            return 1;
    return 0;
}

/* The peak TFLOPS/s of a Compute Spec: the description is plain data, read here as is. */
static double peak_tflops(const tl_gpu_arch *a, const char *spec)
{
    for (size_t i = 0; spec && *spec && i < a->npeaks && i < TL_GPU_ARCH_MAX_PEAKS; i++)
        if (strcmp(a->peak[i].spec, spec) == 0)
            return a->peak[i].tflops;
    return NAN;
}

static const tl_cell *cell_of(const tl_table *t, long col, size_t r)
{
    return col >= 0 ? &t->cols[col].cells[r] : NULL;
}

/* A cell's number, NaN when it has none (missing, text, or an absent column). */
static double num_of(const tl_table *t, long col, size_t r)
{
    const tl_cell *c = cell_of(t, col, r);
    if (!c || c->kind == TL_MISSING || c->kind == TL_STR || c->kind == TL_BOOL)
        return NAN;
    return tl_cell_number(c);
}

static const char *str_of(const tl_table *t, long col, size_t r)
{
    const tl_cell *c = cell_of(t, col, r);
    return c && c->kind == TL_STR ? c->v.s : NULL;
}

/* ---- one sheet's sums per op name -------------------------------------------------- */

/* The sums of every op name of one perf sheet of one report (names without a modelled
 * row are kept too, with no rows: a _bwd sheet defers to any sheet that has the name). */
typedef struct sheet_sums {
    size_t report;
    const char *sheet;
    tl_strmap names;   /* name -> index into side[] */
    tl_eff_side *side;
    size_t n, cap;
} sheet_sums;

struct tl_eff_cache {
    const tl_gpu_arch *arch, *arch_var; /* report 0's, the others' */
    tl_arena arena;    /* names and sheet names */
    sheet_sums *sheets;
    size_t n, cap;
};

static int is_perf_sheet(const char *sheet)
{
    if (strcmp(sheet, "unified_perf_summary") == 0)
        return 1;
    for (size_t i = 0; tl_perf_sheet(i); i++)
        if (strcmp(sheet, tl_perf_sheet(i)) == 0)
            return 1;
    return 0;
}

/* Add the rows of perf sheet `t` (unified_perf_summary when `unified`) to `ss`, names
 * copied into `arena`. */
static void sums_add(sheet_sums *ss, const tl_table *t, int unified, const tl_gpu_arch *arch, tl_arena *arena)
{
    const sheet_cols *sc = unified ? &unified_cols : &family_cols;
    long name = tl_table_find(t, "name"), time = tl_table_find(t, "Kernel Time (µs)_sum");
    if (name < 0)
        return;
    long gflops = tl_table_find(t, sc->gflops), mb = tl_table_find(t, sc->mb), calls = tl_table_find(t, sc->calls);
    long spec = tl_table_find(t, "Compute Spec");
    long category = unified ? tl_table_find(t, "op category") : -1;
    double bw = arch ? arch->mem_bw_gbps : NAN;
    for (size_t r = 0; r < t->nrows; r++) {
        const char *n = str_of(t, name, r);
        if (!n)
            continue;
        const tl_strmap_slot *found = tl_strmap_find(&ss->names, n);
        size_t k;
        if (found) {
            k = found->value;
        } else {
            k = ss->n;
            TL_GROW(ss->side, ss->cap, ss->n + 1);
            ss->side[ss->n++] = (tl_eff_side){0};
            tl_strmap_get(&ss->names, tl_arena_strdup(arena, n))->value = k;
        }
        double us = num_of(t, time, r), g = num_of(t, gflops, r), m = num_of(t, mb, r), c = num_of(t, calls, r);
        if (isnan(us) || isnan(g))
            continue; /* no model, or its evaluation failed (PERF §7.3): no work to divide */
        if (isnan(c))
            c = 1;
        tl_eff_side *a = &ss->side[k];
        const char *sp = str_of(t, spec, r);
        a->rows++;
        a->matrix |= is_matrix(sp, unified ? str_of(t, category, r) : ss->sheet);
        a->gflops += g * c;
        a->flops_us += us;
        double peak = arch ? peak_tflops(arch, sp) : NAN;
        if (peak > 0) {
            /* (GFLOPS·1e9 / (peak·1e12))·1e6 µs per call, as PERF §8's compute time */
            a->cpeak_us += g * c / peak * 1e3;
            a->cpeak_base_us += us;
        }
        if (!isnan(m)) {
            a->mb += m * c;
            a->bytes_us += us;
            if (bw > 0) {
                /* (bytes / (bw·1e9))·1e6 µs, bytes = MB·2^20 (PERF §3.4's MB) */
                a->mpeak_us += m * c * 1048576.0 / (bw * 1e3);
                a->mpeak_base_us += us;
            }
        }
    }
}

static sheet_sums *cache_find(const tl_eff_cache *c, size_t report, const char *sheet)
{
    for (size_t i = 0; c && i < c->n; i++)
        if (c->sheets[i].report == report && strcmp(c->sheets[i].sheet, sheet) == 0)
            return &c->sheets[i];
    return NULL;
}

tl_eff_cache *tl_eff_cache_new(const tl_gpu_arch *arch) { return tl_eff_cache_new_sides(arch, NULL); }

tl_eff_cache *tl_eff_cache_new_sides(const tl_gpu_arch *arch, const tl_gpu_arch *arch_variant)
{
    tl_eff_cache *c = tl_xcalloc(1, sizeof *c);
    c->arch = arch;
    c->arch_var = arch_variant ? arch_variant : arch;
    tl_arena_init(&c->arena);
    return c;
}

void tl_eff_cache_free(tl_eff_cache *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->n; i++) {
        tl_strmap_clear(&c->sheets[i].names);
        free(c->sheets[i].side);
    }
    free(c->sheets);
    tl_arena_free(&c->arena);
    free(c);
}

void tl_eff_cache_observe(void *ctx, size_t report, const char *sheet, const tl_table *t)
{
    tl_eff_cache *c = ctx;
    if (!is_perf_sheet(sheet) || cache_find(c, report, sheet))
        return;
    TL_GROW(c->sheets, c->cap, c->n + 1);
    sheet_sums *ss = &c->sheets[c->n++];
    *ss = (sheet_sums){.report = report, .sheet = tl_arena_strdup(&c->arena, sheet)};
    sums_add(ss, t, strcmp(sheet, "unified_perf_summary") == 0, report ? c->arch_var : c->arch, &c->arena);
}

/* The sums of `sheet` of report `r`: from the cache, else read now (and kept in it).
 * NULL when the sheet cannot be read (warned about). */
static sheet_sums *sums_of(tl_eff_cache *c, tl_report *reports, size_t r, const char *sheet)
{
    sheet_sums *ss = cache_find(c, r, sheet);
    if (ss)
        return ss;
    tl_arena arena;
    tl_arena_init(&arena);
    tl_error err = {0};
    tl_table *t = tl_report_read_sheet(&reports[r], sheet, &arena, &err);
    if (!t) {
        tl_warn("%s: sheet '%s' left out of the efficiency lines: %s", reports[r].path, sheet, err.msg);
    } else {
        tl_eff_cache_observe(c, r, sheet, t);
        tl_table_free(t);
        ss = cache_find(c, r, sheet);
    }
    tl_arena_free(&arena);
    return ss;
}

static void side_add(tl_eff_side *a, const tl_eff_side *b)
{
    a->rows += b->rows;
    a->matrix |= b->matrix;
    a->gflops += b->gflops;
    a->flops_us += b->flops_us;
    a->mb += b->mb;
    a->bytes_us += b->bytes_us;
    a->cpeak_us += b->cpeak_us;
    a->cpeak_base_us += b->cpeak_base_us;
    a->mpeak_us += b->mpeak_us;
    a->mpeak_base_us += b->mpeak_base_us;
}

double tl_eff_rate(const tl_eff_side *s, int memory)
{
    if (memory)
        return s->bytes_us > 0 ? s->mb * 1048576.0 / 1e12 / (s->bytes_us / 1e6) : NAN;
    return s->flops_us > 0 ? (s->gflops / 1e3) / (s->flops_us / 1e6) : NAN;
}

double tl_eff_pct_of_peak(const tl_eff_side *s, int memory)
{
    double at_peak = memory ? s->mpeak_us : s->cpeak_us, took = memory ? s->mpeak_base_us : s->cpeak_base_us;
    return took > 0 ? 100 * at_peak / took : NAN;
}

/* ---- building ------------------------------------------------------------------------- */

typedef struct name_set {
    tl_strmap map;
    size_t n;
} name_set;

static void want(name_set *w, const char *name)
{
    if (!name || !*name)
        return;
    tl_strmap_slot *s = tl_strmap_get(&w->map, name);
    if (s->value == 0)
        s->value = ++w->n; /* 1-based while collecting: 0 means new */
}

/* Add report r's figures for the names in `names` to acc[].  The source's name, or NULL. */
static const char *read_report(tl_eff_cache *c, tl_report *reports, size_t r, const tl_strmap *names,
                               tl_eff_side *acc)
{
    /* by index while collecting: reading a sheet adds to the cache, which may move it */
    sheet_sums *use[64];
    size_t at[64], nuse = 0;
    const char *source = NULL;
    if (tl_report_has_sheet(&reports[r], "unified_perf_summary")) {
        sheet_sums *ss = sums_of(c, reports, r, "unified_perf_summary");
        if (ss)
            at[nuse++] = (size_t)(ss - c->sheets);
        source = nuse ? "unified_perf_summary" : NULL;
    } else {
        for (size_t i = 0; tl_perf_sheet(i) && nuse < 64; i++) {
            if (!tl_report_has_sheet(&reports[r], tl_perf_sheet(i)))
                continue;
            sheet_sums *ss = sums_of(c, reports, r, tl_perf_sheet(i));
            if (ss)
                at[nuse++] = (size_t)(ss - c->sheets);
        }
        source = nuse ? "perf sheets" : NULL;
    }
    for (size_t k = 0; k < nuse; k++)
        use[k] = &c->sheets[at[k]];
    for (size_t i = 0; i < names->cap; i++) {
        const char *name = names->slots[i].key;
        if (!name)
            continue;
        tl_eff_side *a = &acc[names->slots[i].value];
        for (size_t k = 0; k < nuse; k++) {
            const tl_strmap_slot *in = tl_strmap_find(&use[k]->names, name);
            if (!in)
                continue;
            /* a _bwd sheet's backward rows carry their forward op's name (PERF §6): from
             * one, only the names no other sheet has (convolution_backward) */
            size_t len = strlen(use[k]->sheet);
            int bwd = len > 4 && strcmp(use[k]->sheet + len - 4, "_bwd") == 0, elsewhere = 0;
            for (size_t o = 0; bwd && o < nuse && !elsewhere; o++) {
                size_t ol = strlen(use[o]->sheet);
                elsewhere = !(ol > 4 && strcmp(use[o]->sheet + ol - 4, "_bwd") == 0) &&
                            tl_strmap_find(&use[o]->names, name) != NULL;
            }
            if (!elsewhere)
                side_add(a, &use[k]->side[in->value]);
        }
    }
    return source;
}

static int has_perf_sheets(const tl_report *r)
{
    if (tl_report_has_sheet(r, "unified_perf_summary"))
        return 1;
    for (size_t i = 0; tl_perf_sheet(i); i++)
        if (tl_report_has_sheet(r, tl_perf_sheet(i)))
            return 1;
    return 0;
}

static void add_items(tl_eff_list *l, size_t *cap, tl_strmap *listed, const tl_summary_item *items, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        tl_strmap_slot *s = tl_strmap_get(listed, items[i].name);
        if (s->value)
            continue;
        s->value = 1;
        TL_GROW(l->items, *cap, l->n + 1);
        l->items[l->n++] = (tl_eff_item){.name = items[i].name, .op1 = items[i].name, .op2 = items[i].name};
    }
}

/* Fill the rates of an item from the two sides; 0 when a side has no figures (a line
 * "120 TFLOPS/s -> -" compares nothing: it is left out). */
static int settle(tl_eff_item *it)
{
    if (!it->side[0].rows || !it->side[1].rows)
        return 0;
    /* the baseline's family decides, when it has the op */
    it->memory_bound = !(it->side[0].rows ? it->side[0].matrix : it->side[1].matrix);
    for (int k = 0; k < 2; k++) {
        double rate = it->side[k].rows ? tl_eff_rate(&it->side[k], it->memory_bound) : NAN;
        double pct = it->side[k].rows ? tl_eff_pct_of_peak(&it->side[k], it->memory_bound) : NAN;
        *(k ? &it->rate.var : &it->rate.base) = rate;
        *(k ? &it->pct_of_peak.var : &it->pct_of_peak.base) = pct;
    }
    return 1;
}

/* Keep the items that have figures on both sides. */
static void keep_modelled(tl_eff_list *l)
{
    size_t k = 0;
    for (size_t i = 0; i < l->n; i++)
        if (settle(&l->items[i]))
            l->items[k++] = l->items[i];
    l->n = k;
}

void tl_efficiency_build(tl_efficiency *e, const tl_summary *s, tl_report *reports, size_t n,
                         const tl_eff_options *opt, tl_arena *arena)
{
    memset(e, 0, sizeof *e);
    const tl_gpu_arch *arch = opt ? opt->gpu_arch : NULL;
    e->nreports = n;
    e->nvariants = s->nvariants;
    const tl_gpu_arch *var = opt && opt->gpu_arch_variant ? opt->gpu_arch_variant : arch;
    e->gpu = !arch || !arch->name[0]     ? NULL
             : var == arch || !strcmp(var->name, arch->name) ? tl_arena_strdup(arena, arch->name)
                                                              : tl_arena_printf(arena, "%s -> %s", arch->name, var->name);
    e->source = tl_xcalloc(n ? n : 1, sizeof *e->source);
    e->variants = tl_xcalloc(s->nvariants ? s->nvariants : 1, sizeof *e->variants);

    /* the op names the summary lists, in its order, per variant */
    for (size_t v = 0; v < s->nvariants; v++) {
        const tl_variant_summary *vs = &s->variants[v];
        tl_strmap listed = {0};
        size_t cap = 0;
        add_items(&e->variants[v], &cap, &listed, vs->regressions, vs->nregressions);
        add_items(&e->variants[v], &cap, &listed, vs->improvements, vs->nimprovements);
        add_items(&e->variants[v], &cap, &listed, vs->only_base, vs->nonly_base);
        add_items(&e->variants[v], &cap, &listed, vs->only_var, vs->nonly_var);
        tl_strmap_clear(&listed);
    }
    /* an LCA line takes each side's op when it has figures, else the LCA's own name */
    if (s->lca) {
        e->lca.items = tl_xcalloc(s->lca->ntop ? s->lca->ntop : 1, sizeof *e->lca.items);
        for (size_t i = 0; i < s->lca->ntop; i++) {
            const tl_lca_item *li = &s->lca->top[i];
            e->lca.items[e->lca.n++] = (tl_eff_item){.name = li->lca, .op1 = li->ops1, .op2 = li->ops2};
        }
    }
    name_set w = {0};
    for (size_t v = 0; v < s->nvariants; v++)
        for (size_t i = 0; i < e->variants[v].n; i++)
            want(&w, e->variants[v].items[i].name);
    for (size_t i = 0; i < e->lca.n; i++) {
        want(&w, e->lca.items[i].name);
        want(&w, e->lca.items[i].op1);
        want(&w, e->lca.items[i].op2);
    }
    if (w.n == 0 || n == 0) {
        /* nothing listed: only say whether the reports have perf sheets */
        for (size_t r = 0; r < n; r++)
            e->any_source |= has_perf_sheets(&reports[r]);
        tl_strmap_clear(&w.map);
        return;
    }
    for (size_t i = 0; i < w.map.cap; i++)
        if (w.map.slots[i].key)
            w.map.slots[i].value--;
    tl_eff_side *acc = tl_xcalloc(n * w.n, sizeof *acc);
    tl_eff_cache *own = opt && opt->cache ? NULL : tl_eff_cache_new_sides(arch, opt ? opt->gpu_arch_variant : NULL), *cache = own ? own : opt->cache;
    for (size_t r = 0; r < n; r++) {
        e->source[r] = read_report(cache, reports, r, &w.map, acc + r * w.n);
        e->any_source |= e->source[r] != NULL;
    }
    tl_eff_cache_free(own);
#define SIDE(r, name) (acc[(r) * w.n + tl_strmap_find(&w.map, (name))->value])
    for (size_t v = 0; v < s->nvariants && v + 1 < n; v++) {
        for (size_t i = 0; i < e->variants[v].n; i++) {
            tl_eff_item *it = &e->variants[v].items[i];
            it->side[0] = SIDE(0, it->name);
            it->side[1] = SIDE(v + 1, it->name);
        }
        keep_modelled(&e->variants[v]);
    }
    for (size_t i = 0; i < e->lca.n && n > 1; i++) {
        tl_eff_item *it = &e->lca.items[i];
        const char *op[2] = {it->op1, it->op2};
        for (int k = 0; k < 2; k++) {
            if (!op[k] || !*op[k] || !SIDE(k, op[k]).rows)
                op[k] = it->name;
            it->side[k] = *op[k] ? SIDE(k, op[k]) : (tl_eff_side){0};
        }
        it->op1 = op[0];
        it->op2 = op[1];
    }
#undef SIDE
    keep_modelled(&e->lca);
    free(acc);
    tl_strmap_clear(&w.map);
}

void tl_efficiency_free(tl_efficiency *e)
{
    if (!e)
        return;
    free(e->source);
    for (size_t v = 0; e->variants && v < e->nvariants; v++)
        free(e->variants[v].items);
    free(e->variants);
    free(e->lca.items);
    memset(e, 0, sizeof *e);
}

/* ---- rendering ------------------------------------------------------------------------ */

static const char *unit(const tl_eff_item *it)
{
    return it->memory_bound ? "TB/s" : "TFLOPS/s";
}

/* A rate, to about three digits ("612.3", "63.6", "2.90", "0.044", "0.00131", "-"). */
static void fmt_rate(char *buf, size_t n, double v)
{
    double a = fabs(v);
    if (isnan(v))
        snprintf(buf, n, "-");
    else if (a >= 10 || a == 0)
        snprintf(buf, n, "%.1f", v);
    else if (a >= 1)
        snprintf(buf, n, "%.2f", v);
    else if (a >= 0.01)
        snprintf(buf, n, "%.3f", v);
    else
        snprintf(buf, n, "%.3g", v);
}

static void fmt_peak(char *buf, size_t n, double v)
{
    if (isnan(v))
        snprintf(buf, n, "-");
    else
        snprintf(buf, n, "%.1f%%", v);
}

/* What the figures are from, for the section's title. */
static const char *sources(const tl_efficiency *e)
{
    const char *first = NULL;
    for (size_t r = 0; r < e->nreports; r++) {
        if (!e->source[r])
            continue;
        if (first && strcmp(first, e->source[r]) != 0)
            return "unified_perf_summary or the perf sheets";
        first = e->source[r];
    }
    return first ? first : "the perf sheets";
}

/* A name on the terminal: its control characters never reach it, and past NAME_MAX bytes
 * it is cut (not inside a UTF-8 character) and ends in "...". */
#define NAME_MAX_BYTES 60
static void put_name(FILE *out, const char *name, int width)
{
    size_t len = strlen(name), keep = len;
    if (len > NAME_MAX_BYTES) {
        keep = NAME_MAX_BYTES - 3;
        while (keep > 0 && (name[keep] & 0xC0) == 0x80)
            keep--;
    }
    for (size_t i = 0; i < keep; i++)
        fputc((unsigned char)name[i] < 0x20 || name[i] == 0x7f ? '?' : name[i], out);
    int n = (int)keep;
    if (keep < len) {
        fputs("...", out);
        n += 3;
    }
    for (; n < width; n++)
        fputc(' ', out);
}

void tl_efficiency_print(const tl_efficiency *e, const tl_eff_list *l, const char *base, const char *tag, FILE *out,
                         int color)
{
    if (!e || !e->any_source || !l->n)
        return;
    const char *bold = color ? "\033[1m" : "", *dim = color ? "\033[2m" : "", *off = color ? "\033[0m" : "";
    int width = 0;
    for (size_t i = 0; i < l->n; i++) {
        size_t len = strlen(l->items[i].name);
        if ((int)len > width)
            width = len > NAME_MAX_BYTES ? NAME_MAX_BYTES : (int)len;
    }
    fprintf(out, "  %sachieved (%s -> %s, from %s%s%s)%s\n", bold, base, tag, sources(e), e->gpu ? "; % of " : "",
            e->gpu ? e->gpu : "", off);
    for (size_t i = 0; i < l->n; i++) {
        const tl_eff_item *it = &l->items[i];
        char b[32], v[32], pc[32];
        fmt_rate(b, sizeof b, it->rate.base);
        fmt_rate(v, sizeof v, it->rate.var);
        double d = tl_delta_pct(it->rate);
        if (isnan(d))
            snprintf(pc, sizeof pc, "-");
        else
            snprintf(pc, sizeof pc, "%+.1f%%", d);
        fputs("    ", out);
        put_name(out, it->name, width);
        fprintf(out, "  %9s -> %-9s %-8s %s%7s%s", b, v, unit(it), dim, pc, off);
        if (e->gpu) {
            char pb[32], pv[32];
            fmt_peak(pb, sizeof pb, it->pct_of_peak.base);
            fmt_peak(pv, sizeof pv, it->pct_of_peak.var);
            fprintf(out, "  %s -> %s of peak", pb, pv);
        }
        if (strcmp(it->op1, it->name) || strcmp(it->op2, it->name)) {
            fprintf(out, "  %s(", dim);
            put_name(out, it->op1, 0);
            fputs(" vs ", out);
            put_name(out, it->op2, 0);
            fprintf(out, ")%s", off);
        }
        fputc('\n', out);
    }
}

static void md_code(tl_buf *b, const char *s)
{
    tl_buf_addc(b, '`');
    for (; *s; s++) {
        if (*s == '|')
            tl_buf_addc(b, '\\');
        tl_buf_addc(b, *s == '`' ? '\'' : *s == '\n' || *s == '\r' ? ' ' : *s);
    }
    tl_buf_addc(b, '`');
}

static void md_text(tl_buf *b, const char *s)
{
    for (; *s; s++) {
        if (*s == '|')
            tl_buf_addc(b, '\\');
        tl_buf_addc(b, *s == '\n' || *s == '\r' ? ' ' : *s);
    }
}

void tl_efficiency_markdown(const tl_efficiency *e, const tl_eff_list *l, const char *base, const char *tag,
                            tl_buf *b)
{
    if (!e || !e->any_source || !l->n)
        return;
    tl_buf_printf(b, "\n**Achieved** (from %s%s%s)\n\n| op | ", sources(e), e->gpu ? "; % of " : "", e->gpu ? e->gpu : "");
    md_text(b, base);
    tl_buf_adds(b, " | ");
    md_text(b, tag);
    tl_buf_adds(b, " | unit | delta % |");
    if (e->gpu) {
        tl_buf_adds(b, " ");
        md_text(b, base);
        tl_buf_adds(b, " % of peak | ");
        md_text(b, tag);
        tl_buf_adds(b, " % of peak |");
    }
    tl_buf_adds(b, e->gpu ? "\n|---|---:|---:|---|---:|---:|---:|\n" : "\n|---|---:|---:|---|---:|\n");
    for (size_t i = 0; i < l->n; i++) {
        const tl_eff_item *it = &l->items[i];
        char x[32], y[32];
        tl_buf_adds(b, "| ");
        md_code(b, it->name);
        if (strcmp(it->op1, it->name) || strcmp(it->op2, it->name)) {
            tl_buf_adds(b, " (");
            md_code(b, it->op1);
            tl_buf_adds(b, " vs ");
            md_code(b, it->op2);
            tl_buf_adds(b, ")");
        }
        fmt_rate(x, sizeof x, it->rate.base);
        fmt_rate(y, sizeof y, it->rate.var);
        tl_buf_printf(b, " | %s | %s | %s | ", x, y, unit(it));
        double d = tl_delta_pct(it->rate);
        if (isnan(d))
            tl_buf_adds(b, "-");
        else
            tl_buf_printf(b, "%+.1f%%", d);
        if (e->gpu) {
            fmt_peak(x, sizeof x, it->pct_of_peak.base);
            fmt_peak(y, sizeof y, it->pct_of_peak.var);
            tl_buf_printf(b, " | %s | %s", x, y);
        }
        tl_buf_adds(b, " |\n");
    }
}

static void js_pair(tl_buf *b, tl_delta d)
{
    tl_buf_adds(b, "{\"baseline\": ");
    tl_json_num(b, d.base);
    tl_buf_adds(b, ", \"variant\": ");
    tl_json_num(b, d.var);
    tl_buf_adds(b, ", \"pct\": ");
    tl_json_num(b, tl_delta_pct(d));
    tl_buf_adds(b, "}");
}

static void js_side(tl_buf *b, const tl_eff_side *s, int memory)
{
    if (!s->rows) {
        tl_buf_adds(b, "null");
        return;
    }
    tl_buf_printf(b, "{\"rows\": %zu, \"gflops\": ", s->rows);
    tl_json_num(b, s->gflops);
    tl_buf_adds(b, ", \"data_moved_mb\": ");
    tl_json_num(b, s->bytes_us > 0 ? s->mb : NAN);
    tl_buf_adds(b, ", \"kernel_time_us\": ");
    tl_json_num(b, memory ? s->bytes_us : s->flops_us);
    tl_buf_adds(b, "}");
}

void tl_efficiency_json(const tl_efficiency *e, const tl_eff_list *l, const char *key, const char *indent, tl_buf *b)
{
    if (!e || !e->any_source)
        return;
    tl_buf_printf(b, ",\n%s\"%s\": [", indent, key);
    for (size_t i = 0; i < l->n; i++) {
        const tl_eff_item *it = &l->items[i];
        tl_buf_printf(b, "%s\n%s  {\"name\": ", i ? "," : "", indent);
        tl_json_str(b, it->name);
        tl_buf_adds(b, ", \"ops\": [");
        tl_json_str(b, it->op1);
        tl_buf_adds(b, ", ");
        tl_json_str(b, it->op2);
        tl_buf_printf(b, "], \"unit\": \"%s\", \"rate\": ", unit(it));
        js_pair(b, it->rate);
        tl_buf_adds(b, ", \"pct_of_peak\": ");
        if (e->gpu)
            js_pair(b, it->pct_of_peak);
        else
            tl_buf_adds(b, "null");
        tl_buf_adds(b, ", \"baseline\": ");
        js_side(b, &it->side[0], it->memory_bound);
        tl_buf_adds(b, ", \"variant\": ");
        js_side(b, &it->side[1], it->memory_bound);
        tl_buf_adds(b, "}");
    }
    tl_buf_printf(b, l->n ? "\n%s]" : "]", l->n ? indent : "");
}

static tl_cell num_cell(double v) { return isnan(v) ? tl_cell_missing() : tl_cell_float(v); }

tl_table *tl_efficiency_table(const tl_efficiency *e, const tl_eff_list *l, const char *base, const char *tag,
                              tl_arena *a)
{
    if (!e || !e->any_source || !l->n)
        return NULL;
    const char *cols[] = {"op", "unit", tl_arena_strdup(a, base), tl_arena_strdup(a, tag), "delta %",
                          tl_arena_printf(a, "%s %% of peak", base), tl_arena_printf(a, "%s %% of peak", tag),
                          tl_arena_printf(a, "%s op", base), tl_arena_printf(a, "%s op", tag)};
    size_t ncols = e->gpu ? 7 : 5, lca = 0;
    for (size_t i = 0; i < l->n; i++)
        lca |= strcmp(l->items[i].op1, l->items[i].name) || strcmp(l->items[i].op2, l->items[i].name);
    tl_table *t = tl_table_new();
    t->nrows = l->n;
    for (size_t c = 0; c < 9; c++) {
        if (c >= ncols && c < 7)
            continue;
        if (c >= 7 && !lca)
            break;
        tl_table_add_column(t, cols[c]);
    }
    for (size_t i = 0; i < l->n; i++) {
        const tl_eff_item *it = &l->items[i];
        size_t c = 0;
        t->cols[c++].cells[i] = tl_cell_str(it->name);
        t->cols[c++].cells[i] = tl_cell_str(unit(it));
        t->cols[c++].cells[i] = num_cell(it->rate.base);
        t->cols[c++].cells[i] = num_cell(it->rate.var);
        t->cols[c++].cells[i] = num_cell(tl_delta_pct(it->rate));
        if (e->gpu) {
            t->cols[c++].cells[i] = num_cell(it->pct_of_peak.base);
            t->cols[c++].cells[i] = num_cell(it->pct_of_peak.var);
        }
        if (lca) {
            t->cols[c++].cells[i] = tl_cell_str(it->op1);
            t->cols[c++].cells[i] = tl_cell_str(it->op2);
        }
    }
    return t;
}
