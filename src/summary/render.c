/*
 * render.c - the summary as a person reads it (see summary.h): the terminal text, the
 * Markdown for a pull request, the JSON for scripts, and the workbook's summary sheet.
 *
 * Each form is made from the tl_summary alone, so all of them say the same thing.
 */
#include "summary/summary.h"

#include "summary/comparable.h"
#include "summary/efficiency.h"
#include "summary/verdict.h"

#include "base/jsonw.h"
#include "base/numfmt.h"
#include "base/sort.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the terminal --------------------------------------------------------------------- */

typedef struct paint {
    const char *bold, *red, *green, *dim, *off;
} paint;

static paint colours(int on)
{
    if (on)
        return (paint){"\033[1m", "\033[31m", "\033[32m", "\033[2m", "\033[0m"};
    return (paint){"", "", "", "", ""};
}

/* Red when the time grew, green when it shrank. */
static const char *tint(const paint *p, double delta)
{
    return delta > 0 ? p->red : delta < 0 ? p->green : "";
}

static void fmt_ms(char *buf, size_t n, double v)
{
    if (isnan(v))
        snprintf(buf, n, "-");
    else
        snprintf(buf, n, "%.3f", v);
}

static void fmt_pct(char *buf, size_t n, double v)
{
    if (isnan(v))
        snprintf(buf, n, "-");
    else if (fabs(v) >= 99999.95) /* "+4.8e+05%": the column's 9 characters */
        snprintf(buf, n, "%+.1e%%", v);
    else
        snprintf(buf, n, "%+.1f%%", v);
}

static void fmt_count(char *buf, size_t n, tl_delta c)
{
    double last = isnan(c.var) ? c.base : c.var;
    const char *unit = last == 1 ? "call" : "calls";
    if (isnan(c.base) && isnan(c.var))
        snprintf(buf, n, "-");
    else if (isnan(c.var) || isnan(c.base) || c.base == c.var)
        snprintf(buf, n, "%.0f %s", last, unit);
    else
        snprintf(buf, n, "%.0f -> %.0f %s", c.base, c.var, unit);
}

/* Long kernel names are cut for the terminal (the workbook has them whole). */
static void short_name(char *buf, size_t n, const char *name)
{
    size_t len = strlen(name);
    if (len < n) {
        memcpy(buf, name, len + 1);
    } else {
        size_t keep = n - 4;
        while (keep > 0 && (name[keep] & 0xC0) == 0x80)
            keep--; /* do not cut a UTF-8 character in two */
        memcpy(buf, name, keep);
        memcpy(buf + keep, "...", 4);
    }
    /* a name is data: its control characters (ESC, line breaks) must not reach the terminal */
    for (char *p = buf; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            *p = '?';
}

/* A time per call, in µs below 1 ms ("12.3 µs", "1.234 ms"); `sign`: with its sign. */
static void fmt_per_call(char *buf, size_t n, double ms, int sign)
{
    double a = fabs(ms);
    if (isnan(ms))
        snprintf(buf, n, "-");
    else if (ms == 0)
        snprintf(buf, n, "0");
    else if (a < 0.01)
        snprintf(buf, n, sign ? "%+.2f \xc2\xb5s" : "%.2f \xc2\xb5s", ms * 1000);
    else if (a < 1)
        snprintf(buf, n, sign ? "%+.1f \xc2\xb5s" : "%.1f \xc2\xb5s", ms * 1000);
    else
        snprintf(buf, n, sign ? "%+.3f ms" : "%.3f ms", ms);
}

/* "12.3 µs -> 13.1 µs per call (+0.8 µs)", or "" without counts on both sides. */
static void fmt_per_call_change(char *buf, size_t n, tl_delta pc)
{
    if (isnan(pc.base) || isnan(pc.var)) {
        buf[0] = '\0';
        return;
    }
    char b[32], v[32], d[32];
    fmt_per_call(b, sizeof b, pc.base, 0);
    fmt_per_call(v, sizeof v, pc.var, 0);
    fmt_per_call(d, sizeof d, tl_delta_is_noise(pc) ? 0 : pc.var - pc.base, 1);
    snprintf(buf, n, "%s -> %s per call (%s)", b, v, d);
}

static void print_items(FILE *out, const paint *p, const char *title, const tl_summary_item *items, size_t n,
                        int per_iteration)
{
    if (!n)
        return;
    fprintf(out, "  %s%s%s\n", p->bold, title, p->off);
    for (size_t i = 0; i < n; i++) {
        char d[32], pc[32], pm[32], cnt[64], name[64], per[128];
        tl_delta shown = tl_item_shown(&items[i], per_iteration);
        double delta = shown.var - shown.base;
        snprintf(d, sizeof d, "%+.3f ms", delta);
        fmt_pct(pc, sizeof pc, tl_delta_pct(shown));
        tl_verdict_fmt_pm(&items[i], pm, sizeof pm);
        fmt_count(cnt, sizeof cnt, items[i].count);
        short_name(name, sizeof name, items[i].name);
        fmt_per_call_change(per, sizeof per, items[i].per_call_ms);
        fprintf(out, "    %s%14s %9s%s%s%s  %-60s %s%-18s%s %s\n", tint(p, delta), d, pc, pm[0] ? " " : "", pm,
                p->off, name, p->dim, cnt, p->off, per);
    }
}

/* "about half as many", "about 2.0x as many": the iterations of the variant. */
static void fmt_ratio(char *buf, size_t n, double r)
{
    if (fabs(r - 0.5) <= 0.05)
        snprintf(buf, n, "about half as many");
    else if (fabs(r - 2) <= 0.1)
        snprintf(buf, n, "about twice as many");
    else
        snprintf(buf, n, "about %.2fx as many", r);
}

/* The iterations note, or "" when the call counts agree. */
static void iterations_note(char *buf, size_t n, const tl_summary *s, const tl_variant_summary *v)
{
    if (isnan(v->call_ratio)) {
        buf[0] = '\0';
        return;
    }
    char r[64];
    fmt_ratio(r, sizeof r, v->call_ratio);
    snprintf(buf, n, "the call counts differ across the board (%s has %.2fx the calls of %s): the variant ran %s "
                     "iterations; %ss are judged and ordered by their time per call%s",
             v->tag, v->call_ratio, s->baseline, r, s->item, s->gate_on ? ", the gate's busy time per iteration" : "");
}

/* After gpu_timeline's row k: the busy time's interval and verdict (" ±0.4% within
 * noise"), or "" (another row, or untested). */
static void busy_verdict(char *buf, size_t n, const tl_variant_summary *v, int k)
{
    buf[0] = '\0';
    if (k != TL_TL_BUSY || v->busy.verdict == TL_VERDICT_NONE)
        return;
    char pm[32];
    tl_verdict_fmt_pm(&v->busy, pm, sizeof pm);
    snprintf(buf, n, "%s%s %s", pm[0] ? " " : "", pm, tl_verdict_name(v->busy.verdict));
}

static void print_one_sided(FILE *out, const char *item, const char *tag, size_t count,
                            const tl_summary_item *items, size_t n, int base_side)
{
    if (!count)
        return;
    fprintf(out, "  only in %s: %zu %s%s", tag, count, item, count == 1 ? "" : "s");
    for (size_t i = 0; i < n && i < 3; i++) {
        char name[64];
        short_name(name, sizeof name, items[i].name);
        fprintf(out, "%s %s (%.3f ms)", i ? "," : "; largest:", name,
                base_side ? items[i].time_ms.base : items[i].time_ms.var);
    }
    fputc('\n', out);
}

void tl_summary_print(const tl_summary *s, FILE *out, int color)
{
    paint p = colours(color);
    if (s->comp && s->comp->known) {
        tl_buf line = {0};
        tl_comparability_line(s->comp, &line);
        fprintf(out, "\n%s%s%s\n", s->comp->comparable ? "" : p.bold, tl_buf_cstr(&line), s->comp->comparable ? "" : p.off);
        tl_buf_free(&line);
    }
    if (s->lead_text)
        fputs(s->lead_text, out);
    for (size_t vi = 0; vi < s->nvariants; vi++) {
        const tl_variant_summary *v = &s->variants[vi];
        int items = v->nregressions || v->nimprovements || v->only_base_count || v->only_var_count;
        if (!v->has_timeline && !items && !s->source)
            continue; /* nothing the summary reads was compared (--sheets roofline): no empty block */
        fprintf(out, "\n%s%s -> %s%s", p.bold, s->baseline, v->tag, p.off);
        if (s->source)
            fprintf(out, " %s(%ss from %s)%s", p.dim, s->item, s->source, p.off);
        fputc('\n', out);
        if (v->has_timeline) {
            /* a column as wide as its tag, so that a long tag keeps the table aligned */
            int wb = (int)strlen(s->baseline) > 14 ? (int)strlen(s->baseline) : 14;
            int wv = (int)strlen(v->tag) > 14 ? (int)strlen(v->tag) : 14;
            fprintf(out, "  %-22s %*s %*s %14s %9s\n", "GPU time (ms)", wb, s->baseline, wv, v->tag, "delta", "%");
            for (int k = 0; k < TL_TL_N; k++) {
                tl_delta d = v->timeline[k];
                if (isnan(d.base) && isnan(d.var))
                    continue;
                char b[32], x[32], dl[32], pc[32];
                fmt_ms(b, sizeof b, d.base);
                fmt_ms(x, sizeof x, d.var);
                snprintf(dl, sizeof dl, "%+.3f", d.var - d.base);
                if (isnan(d.var - d.base))
                    strcpy(dl, "-");
                fmt_pct(pc, sizeof pc, tl_delta_pct(d));
                char verdict[64];
                busy_verdict(verdict, sizeof verdict, v, k);
                fprintf(out, "  %-22s %*s %*s %s%14s %9s%s%s\n", tl_timeline_rows[k], wb, b, wv, x,
                        tint(&p, d.var - d.base), dl, pc, p.off, verdict);
            }
        }
        char note[512];
        iterations_note(note, sizeof note, s, v);
        if (note[0])
            fprintf(out, "  %snote: %s%s\n", p.bold, note, p.off);
        char title[160];
        int per_it = !isnan(v->call_ratio);
        const char *label = per_it ? "; delta per iteration: time per call x the baseline's calls" : "";
        snprintf(title, sizeof title, "top regressions (%s slower%s)", v->tag, label);
        print_items(out, &p, title, v->regressions, v->nregressions, per_it);
        snprintf(title, sizeof title, "top improvements (%s faster%s)", v->tag, label);
        print_items(out, &p, title, v->improvements, v->nimprovements, per_it);
        print_one_sided(out, s->item, s->baseline, v->only_base_count, v->only_base, v->nonly_base, 1);
        print_one_sided(out, s->item, v->tag, v->only_var_count, v->only_var, v->nonly_var, 0);
        if (s->source && !items && v->within_noise)
            fprintf(out, "  no changes larger than the noise\n");
        else if (s->source && !items)
            fprintf(out, "  no changes%s: every %s takes the same time in both\n",
                    s->min_delta_ms > 0 || s->min_delta_pct > 0 ? " above the --min-delta floors" : "", s->item);
        if (s->eff)
            tl_efficiency_print(s->eff, &s->eff->variants[vi], s->baseline, v->tag, out, color);
        char line[512];
        tl_verdict_line(s, v, line, sizeof line);
        if (line[0])
            fprintf(out, "  %s%s%s\n", p.dim, line, p.off);
    }
    if (s->lca)
        tl_lca_summary_print(s->lca, out, color);
    if (s->lca && s->eff)
        tl_efficiency_print(s->eff, &s->eff->lca, s->lca->tag1, s->lca->tag2, out, color);
    if (s->gate_on)
        fprintf(out, "\ngate: %s%s%s (more than %g%% slower: busy time, or any %s of at least %g ms)\n",
                s->gate_failed ? p.red : p.green, s->gate_failed ? "FAILED" : "passed", p.off, s->gate_pct,
                s->item, s->gate_min_ms);
}

void tl_summary_print_violations(const tl_summary *s, FILE *out)
{
    for (size_t vi = 0; vi < s->nvariants; vi++) {
        const tl_variant_summary *v = &s->variants[vi];
        /* A big report can fail on thousands of ops: the first ones tell the story. */
        enum { MAX_LINES = 20 };
        for (size_t i = 0; i < v->nviolations; i++) {
            const tl_violation *x = &v->violations[i];
            if (i == MAX_LINES) {
                fprintf(out, "tlcompare: regression: %s: and %zu more (--summary-json lists them all)\n", v->tag,
                        v->nviolations - MAX_LINES);
                break;
            }
            fprintf(out, "tlcompare: regression: %s %s%s", v->tag, x->is_op ? s->item : "", x->is_op ? " " : "");
            for (const char *c = x->what; *c; c++) /* no control characters of a name on the terminal */
                fputc((unsigned char)*c < 0x20 || *c == 0x7f ? '?' : *c, out);
            fprintf(out, ": %.3f ms -> %.3f ms%s (%+.1f%%, limit %g%%)\n", x->base_ms, x->var_ms,
                    x->per_iteration ? " per iteration" : "", x->pct, s->gate_pct);
        }
    }
    if (s->lca)
        tl_lca_summary_print_violations(s->lca, out);
    for (const char *l = s->lead_violations; l && *l;) {
        const char *e = strchr(l, '\n');
        int n = e ? (int)(e - l) : (int)strlen(l);
        fputs("tlcompare: regression: ", out);
        for (int i = 0; i < n; i++) /* no control characters of a name on the terminal */
            fputc((unsigned char)l[i] < 0x20 || l[i] == 0x7f ? '?' : l[i], out);
        fputc('\n', out);
        l += n + (e != NULL);
    }
}

/* Where item it's largest call happened on side k: "step 7 @ 1751410836123456.0 µs", "@ ... µs"
 * outside every step, "-" where the side has none. */
static void fmt_where(char *buf, size_t n, const tl_summary_item *it, int k)
{
    if (isnan(it->peak_ts[k]))
        snprintf(buf, n, "-");
    else if (it->peak_step[k] >= 0)
        snprintf(buf, n, "step %lld @ %.1f \xc2\xb5s", (long long)it->peak_step[k], it->peak_ts[k]);
    else
        snprintf(buf, n, "@ %.1f \xc2\xb5s", it->peak_ts[k]);
}

/* ---- Markdown ------------------------------------------------------------------------- */

/* Text in a Markdown table cell: only '|' and line breaks would break the table. */
static void md_text(tl_buf *b, const char *s)
{
    for (; *s; s++) {
        if (*s == '|')
            tl_buf_addc(b, '\\');
        tl_buf_addc(b, *s == '\n' || *s == '\r' ? ' ' : *s);
    }
}

/* An op or kernel name, as code so that underscores and stars stay literal. */
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

static void md_num(tl_buf *b, double v, const char *fmt)
{
    if (isnan(v))
        tl_buf_adds(b, "-");
    else
        tl_buf_printf(b, fmt, v);
}

static void md_items(tl_buf *b, const char *title, const char *item, const char *base, const char *tag,
                     const tl_summary_item *items, size_t n, int located, int per_iteration)
{
    if (!n)
        return;
    tl_buf_printf(b, "\n**%s**\n\n| %s | %s (ms) | %s (ms) | delta (ms) | delta %% | calls | per call |%s\n"
                     "|---|---:|---:|---:|---:|---|---|%s\n", title, item, base, tag,
                  located ? " largest call (step @ trace time) |" : "", located ? "---|" : "");
    for (size_t i = 0; i < n; i++) {
        char cnt[64];
        fmt_count(cnt, sizeof cnt, items[i].count);
        tl_buf_adds(b, "| ");
        md_code(b, items[i].name);
        tl_delta shown = tl_item_shown(&items[i], per_iteration);
        tl_buf_adds(b, " | ");
        md_num(b, shown.base, "%.3f");
        tl_buf_adds(b, " | ");
        md_num(b, shown.var, "%.3f");
        tl_buf_adds(b, " | ");
        md_num(b, shown.var - shown.base, "%+.3f");
        tl_buf_adds(b, " | ");
        md_num(b, tl_delta_pct(shown), "%+.1f%%");
        char pm[32];
        tl_verdict_fmt_pm(&items[i], pm, sizeof pm);
        if (pm[0])
            tl_buf_printf(b, " %s", pm);
        char per[128];
        fmt_per_call_change(per, sizeof per, items[i].per_call_ms);
        tl_buf_printf(b, " | %s | %s |", cnt, per[0] ? per : "-");
        if (located) {
            char w0[96], w1[96];
            fmt_where(w0, sizeof w0, &items[i], 0);
            fmt_where(w1, sizeof w1, &items[i], 1);
            tl_buf_printf(b, " %s \xe2\x86\x92 %s |", w0, w1);
        }
        tl_buf_adds(b, "\n");
    }
}

/* "- only in TAG: N ops; largest: `a` (1.000 ms), ..." (as on the terminal). */
static void md_one_sided(tl_buf *b, const char *item, const char *tag, size_t count, const tl_summary_item *items,
                         size_t n, int base_side)
{
    if (!count)
        return;
    tl_buf_adds(b, "- only in ");
    md_text(b, tag);
    tl_buf_printf(b, ": %zu %s%s", count, item, count == 1 ? "" : "s");
    for (size_t i = 0; i < n && i < 3; i++) {
        tl_buf_adds(b, i ? ", " : "; largest: ");
        md_code(b, items[i].name);
        tl_buf_printf(b, " (%.3f ms)", base_side ? items[i].time_ms.base : items[i].time_ms.var);
    }
    tl_buf_adds(b, "\n");
}

void tl_summary_markdown(const tl_summary *s, tl_buf *b)
{
    if (s->comp && s->comp->known) {
        tl_buf line = {0};
        tl_comparability_line(s->comp, &line);
        tl_buf_adds(b, s->comp->comparable ? "" : "**");
        md_text(b, tl_buf_cstr(&line));
        tl_buf_adds(b, s->comp->comparable ? "\n\n" : "**\n\n");
        tl_buf_free(&line);
    }
    if (s->lead_md)
        tl_buf_adds(b, s->lead_md);
    for (size_t vi = 0; vi < s->nvariants; vi++) {
        const tl_variant_summary *v = &s->variants[vi];
        tl_buf_adds(b, vi ? "\n## " : "## ");
        md_text(b, s->baseline);
        tl_buf_adds(b, " -> ");
        md_text(b, v->tag);
        tl_buf_adds(b, "\n");
        if (v->has_timeline) {
            tl_buf_adds(b, "\n| GPU time (ms) | ");
            md_text(b, s->baseline);
            tl_buf_adds(b, " | ");
            md_text(b, v->tag);
            tl_buf_adds(b, " | delta | delta % |\n|---|---:|---:|---:|---:|\n");
            for (int k = 0; k < TL_TL_N; k++) {
                tl_delta d = v->timeline[k];
                if (isnan(d.base) && isnan(d.var))
                    continue;
                tl_buf_adds(b, "| ");
                md_text(b, tl_timeline_rows[k]);
                tl_buf_adds(b, " | ");
                md_num(b, d.base, "%.3f");
                tl_buf_adds(b, " | ");
                md_num(b, d.var, "%.3f");
                tl_buf_adds(b, " | ");
                md_num(b, d.var - d.base, "%+.3f");
                tl_buf_adds(b, " | ");
                md_num(b, tl_delta_pct(d), "%+.1f%%");
                char verdict[64];
                busy_verdict(verdict, sizeof verdict, v, k);
                tl_buf_printf(b, "%s |\n", verdict);
            }
        }
        char note[512];
        iterations_note(note, sizeof note, s, v);
        if (note[0])
            tl_buf_printf(b, "\n**Note:** %s.\n", note);
        int per_it = !isnan(v->call_ratio);
        md_items(b, per_it ? "Top regressions (per iteration: time per call x the baseline's calls)" : "Top regressions",
                 s->item, s->baseline, v->tag, v->regressions, v->nregressions, s->located, per_it);
        md_items(b, per_it ? "Top improvements (per iteration: time per call x the baseline's calls)" : "Top improvements",
                 s->item, s->baseline, v->tag, v->improvements, v->nimprovements, s->located, per_it);
        if (v->only_base_count || v->only_var_count)
            tl_buf_adds(b, "\n");
        md_one_sided(b, s->item, s->baseline, v->only_base_count, v->only_base, v->nonly_base, 1);
        md_one_sided(b, s->item, v->tag, v->only_var_count, v->only_var, v->nonly_var, 0);
        if (s->eff)
            tl_efficiency_markdown(s->eff, &s->eff->variants[vi], s->baseline, v->tag, b);
        char line[512];
        tl_verdict_line(s, v, line, sizeof line);
        if (line[0])
            tl_buf_printf(b, "\n_%s._\n", line);
        /* the first ones (the largest in the baseline): a pull request comment has a size
           limit, and a big report can have thousands; the JSON lists them all */
        for (size_t i = 0; i < v->nviolations && i < TL_SUMMARY_TOP; i++) {
            const tl_violation *x = &v->violations[i];
            tl_buf_printf(b, "%s- gate: %s%s", i ? "" : "\n", x->is_op ? s->item : "", x->is_op ? " " : "");
            md_code(b, x->what);
            tl_buf_printf(b, " is %+.1f%% slower (limit %g%%)\n", x->pct, s->gate_pct);
        }
        if (v->nviolations > TL_SUMMARY_TOP)
            tl_buf_printf(b, "- gate: and %zu more\n", v->nviolations - TL_SUMMARY_TOP);
    }
    if (s->lca)
        tl_lca_summary_markdown(s->lca, b);
    if (s->lca && s->eff)
        tl_efficiency_markdown(s->eff, &s->eff->lca, s->lca->tag1, s->lca->tag2, b);
    if (s->gate_on)
        tl_buf_printf(b, "\nGate: **%s** (limit %g%%, %ss of at least %g ms).\n", s->gate_failed ? "failed" : "passed",
                      s->gate_pct, s->item, s->gate_min_ms);
}

/* ---- JSON ----------------------------------------------------------------------------- */

static void js_delta(tl_buf *b, tl_delta d)
{
    tl_buf_adds(b, "{\"baseline\": ");
    tl_json_num(b, d.base);
    tl_buf_adds(b, ", \"variant\": ");
    tl_json_num(b, d.var);
    tl_buf_adds(b, ", \"delta\": ");
    tl_json_num(b, d.var - d.base);
    tl_buf_adds(b, ", \"pct\": ");
    tl_json_num(b, tl_delta_pct(d));
    tl_buf_adds(b, "}");
}

/* A count: an integer when it is one. */
static void js_count(tl_buf *b, double v)
{
    if (isfinite(v) && v == floor(v) && fabs(v) < 9007199254740992.0)
        tl_buf_printf(b, "%.0f", v);
    else
        tl_json_num(b, v);
}

static void js_count_delta(tl_buf *b, tl_delta d)
{
    tl_buf_adds(b, "{\"baseline\": ");
    js_count(b, d.base);
    tl_buf_adds(b, ", \"variant\": ");
    js_count(b, d.var);
    tl_buf_adds(b, ", \"delta\": ");
    js_count(b, d.var - d.base);
    tl_buf_adds(b, ", \"pct\": ");
    tl_json_num(b, tl_delta_pct(d));
    tl_buf_adds(b, "}");
}

/* ', "where": [{"step": 7, "ts_us": ...}, ...]': where the largest call happened on each
 * side (null for a side without the op; step null outside every step). */
static void js_where(tl_buf *b, const tl_summary_item *it)
{
    tl_buf_adds(b, ", \"where\": [");
    for (int k = 0; k < 2; k++) {
        tl_buf_adds(b, k ? ", " : "");
        if (isnan(it->peak_ts[k])) {
            tl_buf_adds(b, "null");
            continue;
        }
        if (it->peak_step[k] >= 0)
            tl_buf_printf(b, "{\"step\": %lld, \"ts_us\": ", (long long)it->peak_step[k]);
        else
            tl_buf_adds(b, "{\"step\": null, \"ts_us\": ");
        tl_json_num(b, it->peak_ts[k]);
        tl_buf_adds(b, "}");
    }
    tl_buf_adds(b, "]");
}

static void js_items(tl_buf *b, const char *key, const tl_summary_item *items, size_t n, int located)
{
    tl_buf_printf(b, ",\n      \"%s\": [", key);
    for (size_t i = 0; i < n; i++) {
        tl_buf_adds(b, i ? ",\n        {\"name\": " : "\n        {\"name\": ");
        tl_json_str(b, items[i].name);
        tl_buf_adds(b, ", \"time_ms\": ");
        js_delta(b, items[i].time_ms);
        tl_buf_adds(b, ", \"count\": ");
        js_count_delta(b, items[i].count);
        tl_buf_adds(b, ", \"per_call_ms\": ");
        js_delta(b, items[i].per_call_ms);
        tl_verdict_json_item(b, &items[i]);
        if (located)
            js_where(b, &items[i]);
        tl_buf_adds(b, "}");
    }
    tl_buf_adds(b, n ? "\n      ]" : "]");
}

/* ', "comparability": {...}': how alike two traces are (summary/comparable.h). */
static void js_comparability(tl_buf *b, const tl_comparability *c)
{
    tl_buf_printf(b, ",\n  \"comparability\": {\"comparable\": %s, \"why\": ", c->comparable ? "true" : "false");
    if (c->comparable)
        tl_buf_adds(b, "null");
    else
        tl_json_str(b, c->why);
    const char *key[3] = {"aligned_share", "steps", "calls_per_step"};
    for (int f = 0; f < 3; f++) {
        tl_buf_printf(b, ", \"%s\": [", key[f]);
        for (int k = 0; k < 2; k++) {
            tl_buf_adds(b, k ? ", " : "");
            tl_json_num(b, f == 0 ? c->paired_share[k] : f == 1 ? (double)c->steps[k] : c->calls[k]);
        }
        tl_buf_adds(b, "]");
    }
    tl_buf_adds(b, ", \"gpu\": [");
    for (int k = 0; k < 2; k++) {
        tl_buf_adds(b, k ? ", " : "");
        if (c->gpu[k])
            tl_json_str(b, c->gpu[k]);
        else
            tl_buf_adds(b, "null");
    }
    tl_buf_adds(b, "]}");
}

void tl_summary_json(const tl_summary *s, tl_buf *b)
{
    tl_buf_adds(b, "{\n  \"tool\": \"tlcompare\",\n  \"schema\": 1,\n");
    if (s->lead_json) {
        tl_buf_adds(b, "  \"runs\": ");
        tl_buf_adds(b, s->lead_json);
        tl_buf_adds(b, ",\n");
    }
    tl_buf_adds(b, "  \"baseline\": ");
    tl_json_str(b, s->baseline);
    tl_buf_adds(b, ",\n  \"source\": ");
    if (s->source)
        tl_json_str(b, s->source);
    else
        tl_buf_adds(b, "null");
    tl_buf_adds(b, ",\n  \"item\": ");
    tl_json_str(b, s->item);
    if (s->comp && s->comp->known)
        js_comparability(b, s->comp);
    tl_buf_adds(b, ",\n  \"variants\": [");
    for (size_t vi = 0; vi < s->nvariants; vi++) {
        const tl_variant_summary *v = &s->variants[vi];
        tl_buf_adds(b, vi ? ",\n    {\n      \"tag\": " : "\n    {\n      \"tag\": ");
        tl_json_str(b, v->tag);
        tl_buf_adds(b, ",\n      \"gpu_time_ms\": ");
        if (!v->has_timeline) {
            tl_buf_adds(b, "null");
        } else {
            tl_buf_adds(b, "{");
            for (int k = 0; k < TL_TL_N; k++) {
                tl_buf_printf(b, "%s\n        \"%s\": ", k ? "," : "", tl_timeline_rows[k]);
                js_delta(b, v->timeline[k]);
            }
            tl_buf_adds(b, "\n      }");
        }
        tl_buf_adds(b, ",\n      \"call_ratio\": ");
        tl_json_num(b, v->call_ratio);
        tl_verdict_json_variant(b, s, v);
        /* the busy time as the gate judges it (per iteration with a call ratio), and its verdict */
        tl_buf_adds(b, ",\n      \"busy_time\": ");
        if (v->has_timeline) {
            tl_buf_adds(b, "{\"time_ms\": ");
            js_delta(b, v->busy.time_ms);
            tl_verdict_json_item(b, &v->busy);
            tl_buf_adds(b, "}");
        } else {
            tl_buf_adds(b, "null");
        }
        js_items(b, "regressions", v->regressions, v->nregressions, s->located);
        js_items(b, "improvements", v->improvements, v->nimprovements, s->located);
        tl_buf_printf(b, ",\n      \"only_baseline_count\": %zu", v->only_base_count);
        js_items(b, "only_baseline", v->only_base, v->nonly_base, s->located);
        tl_buf_printf(b, ",\n      \"only_variant_count\": %zu", v->only_var_count);
        js_items(b, "only_variant", v->only_var, v->nonly_var, s->located);
        if (s->eff)
            tl_efficiency_json(s->eff, &s->eff->variants[vi], "efficiency", "      ", b);
        tl_buf_adds(b, ",\n      \"violations\": [");
        for (size_t i = 0; i < v->nviolations; i++) {
            const tl_violation *x = &v->violations[i];
            tl_buf_adds(b, i ? ", {\"what\": " : "{\"what\": ");
            tl_json_str(b, x->is_op ? "item" : "busy_time");
            tl_buf_adds(b, ", \"name\": ");
            tl_json_str(b, x->what);
            tl_buf_adds(b, ", \"baseline_ms\": ");
            tl_json_num(b, x->base_ms);
            tl_buf_adds(b, ", \"variant_ms\": ");
            tl_json_num(b, x->var_ms);
            tl_buf_adds(b, ", \"pct\": ");
            tl_json_num(b, x->pct);
            tl_buf_adds(b, "}");
        }
        tl_buf_adds(b, "]\n    }");
    }
    tl_buf_adds(b, s->nvariants ? "\n  ]" : "]");
    if (s->lca) {
        tl_buf_adds(b, ",\n  \"lca\": ");
        tl_lca_summary_json(s->lca, b);
        if (s->eff)
            tl_efficiency_json(s->eff, &s->eff->lca, "lca_efficiency", "  ", b);
    }
    tl_buf_adds(b, ",\n  \"gate\": ");
    if (!s->gate_on) {
        tl_buf_adds(b, "null");
    } else {
        tl_buf_adds(b, "{\"threshold_pct\": ");
        tl_json_num(b, s->gate_pct);
        tl_buf_adds(b, ", \"min_time_ms\": ");
        tl_json_num(b, s->gate_min_ms);
        tl_buf_printf(b, ", \"failed\": %s}", s->gate_failed ? "true" : "false");
    }
    tl_buf_adds(b, "\n}\n");
}

/* ---- the summary worksheet ------------------------------------------------------------ */

typedef struct sheet_store {
    tl_summary_sheet sheet;
    tl_sheet_block *blocks;
    size_t nblocks, cap;
    tl_sheet_chart chart;
    tl_chart_series *series;
    double *values;
    size_t nborrowed; /* the first blocks' tables are the caller's (the runs' lead) */
} sheet_store;

static tl_table *new_table(tl_arena *a, const char *const *cols, size_t ncols, size_t nrows)
{
    tl_table *t = tl_table_new();
    t->nrows = nrows;
    for (size_t c = 0; c < ncols; c++)
        tl_table_add_column(t, tl_arena_strdup(a, cols[c]));
    return t;
}

static tl_cell num_cell(double v) { return isnan(v) ? tl_cell_missing() : tl_cell_float(v); }

/* A call count: an integer cell when it is one. */
static tl_cell count_cell(double v)
{
    if (isfinite(v) && v == floor(v) && fabs(v) < 9007199254740992.0)
        return tl_cell_int((int64_t)v);
    return num_cell(v);
}

static void add_block(sheet_store *st, const char *title, tl_table *t)
{
    TL_GROW(st->blocks, st->cap, st->nblocks + 1);
    st->blocks[st->nblocks++] = (tl_sheet_block){title, t};
}

/* The verdict columns of a block (as the terminal's "+4.2% ±1.1%"): the interval's half
 * width in percent of the baseline, the verdict, the interval (ms). */
enum { VERDICT_COLS = 4 };

static void verdict_names(tl_arena *a, double confidence, const char **cols)
{
    cols[0] = tl_arena_printf(a, "\xc2\xb1 %% (%g%% interval)", 100 * confidence);
    cols[1] = "verdict";
    cols[2] = "interval low (ms)";
    cols[3] = "interval high (ms)";
}

/* Item it's verdict cells into columns c0.. of row r (empty when untested). */
static void verdict_cells(tl_table *t, size_t c0, size_t r, const tl_summary_item *it)
{
    int tested = it->verdict != TL_VERDICT_NONE;
    double half = (it->ci_hi - it->ci_lo) / 2;
    t->cols[c0].cells[r] = tested && it->time_ms.base > 0 ? num_cell(100 * half / it->time_ms.base) : tl_cell_missing();
    t->cols[c0 + 1].cells[r] = tested ? tl_cell_str(tl_verdict_name(it->verdict)) : tl_cell_missing();
    t->cols[c0 + 2].cells[r] = tested ? num_cell(it->ci_lo) : tl_cell_missing();
    t->cols[c0 + 3].cells[r] = tested ? num_cell(it->ci_hi) : tl_cell_missing();
}

static void item_block(sheet_store *st, tl_arena *a, const tl_summary *s, const char *title, const char *base,
                       const char *tag, const tl_summary_item *items, size_t n, int per_iteration)
{
    if (!n)
        return;
    int verdicts = 0;
    for (size_t i = 0; i < n; i++)
        verdicts |= items[i].verdict != TL_VERDICT_NONE;
    /* the verdict's columns, when there are any, right after the change they qualify */
    size_t o = verdicts ? VERDICT_COLS : 0;
    const char *cols[14 + VERDICT_COLS] = {s->item, tl_arena_printf(a, "%s (ms)", base),
                                           tl_arena_printf(a, "%s (ms)", tag), "delta (ms)", "delta %"};
    if (verdicts)
        verdict_names(a, s->confidence, cols + 5);
    cols[5 + o] = tl_arena_printf(a, "%s calls", base);
    cols[6 + o] = tl_arena_printf(a, "%s calls", tag);
    cols[7 + o] = tl_arena_printf(a, "%s per call (\xc2\xb5s)", base);
    cols[8 + o] = tl_arena_printf(a, "%s per call (\xc2\xb5s)", tag);
    cols[9 + o] = "per call delta (\xc2\xb5s)";
    /* where the largest call happened, each side: its step and trace time, for Perfetto */
    size_t w = s->located ? 4 : 0;
    cols[10 + o] = tl_arena_printf(a, "%s largest call step", base);
    cols[11 + o] = tl_arena_printf(a, "%s largest call ts (\xc2\xb5s)", base);
    cols[12 + o] = tl_arena_printf(a, "%s largest call step", tag);
    cols[13 + o] = tl_arena_printf(a, "%s largest call ts (\xc2\xb5s)", tag);
    tl_table *t = new_table(a, cols, 10 + o + w, n);
    for (size_t i = 0; i < n; i++) {
        tl_delta d = tl_item_shown(&items[i], per_iteration);
        t->cols[0].cells[i] = tl_cell_str(items[i].name);
        t->cols[1].cells[i] = num_cell(d.base);
        t->cols[2].cells[i] = num_cell(d.var);
        t->cols[3].cells[i] = num_cell(d.var - d.base);
        t->cols[4].cells[i] = num_cell(tl_delta_pct(d));
        if (verdicts)
            verdict_cells(t, 5, i, &items[i]);
        t->cols[5 + o].cells[i] = count_cell(items[i].count.base);
        t->cols[6 + o].cells[i] = count_cell(items[i].count.var);
        /* per call, the times are µs: in ms they would read 0.000 */
        t->cols[7 + o].cells[i] = num_cell(items[i].per_call_ms.base * 1e3);
        t->cols[8 + o].cells[i] = num_cell(items[i].per_call_ms.var * 1e3);
        t->cols[9 + o].cells[i] = num_cell((items[i].per_call_ms.var - items[i].per_call_ms.base) * 1e3);
        for (size_t k = 0; k < w / 2; k++) {
            const tl_summary_item *it = &items[i];
            int has = !isnan(it->peak_ts[k]);
            t->cols[10 + o + 2 * k].cells[i] = has && it->peak_step[k] >= 0 ? tl_cell_int(it->peak_step[k]) : tl_cell_missing();
            t->cols[11 + o + 2 * k].cells[i] = num_cell(it->peak_ts[k]);
        }
    }
    /* coloured like the diff columns */
    t->cols[3].role = t->cols[4].role = t->cols[9 + o].role = TL_ROLE_DIFF;
    add_block(st, title, t);
}

tl_summary_sheet *tl_summary_sheet_build(const tl_summary *s, tl_arena *a)
{
    sheet_store *st = tl_xcalloc(1, sizeof *st);
    for (size_t i = 0; i < s->nlead; i++)
        add_block(st, s->lead_titles[i], (tl_table *)s->lead_tables[i]);
    st->nborrowed = st->nblocks;
    for (size_t vi = 0; vi < s->nvariants; vi++) {
        const tl_variant_summary *v = &s->variants[vi];
        if (v->has_timeline) {
            const char *cols[5 + VERDICT_COLS] = {"GPU time (ms)", s->baseline, v->tag, "delta (ms)", "delta %"};
            int verdicts = v->busy.verdict != TL_VERDICT_NONE;
            if (verdicts)
                verdict_names(a, s->confidence, cols + 5);
            size_t ncols = verdicts ? 5 + VERDICT_COLS : 5;
            tl_table *t = new_table(a, cols, ncols, 0);
            for (int k = 0; k < TL_TL_N; k++)
                if (!isnan(v->timeline[k].base) || !isnan(v->timeline[k].var))
                    t->nrows++;
            for (size_t c = 0; c < ncols; c++)
                t->cols[c].cells = tl_xrealloc(t->cols[c].cells, (t->nrows ? t->nrows : 1) * sizeof(tl_cell));
            size_t r = 0;
            for (int k = 0; k < TL_TL_N; k++) {
                tl_delta d = v->timeline[k];
                if (isnan(d.base) && isnan(d.var))
                    continue;
                t->cols[0].cells[r] = tl_cell_str(tl_timeline_rows[k]);
                t->cols[1].cells[r] = num_cell(d.base);
                t->cols[2].cells[r] = num_cell(d.var);
                t->cols[3].cells[r] = num_cell(d.var - d.base);
                t->cols[4].cells[r] = num_cell(tl_delta_pct(d));
                if (verdicts) {
                    /* the busy time is the row judged (as the gate judges it) */
                    static const tl_summary_item none = {.verdict = TL_VERDICT_NONE};
                    verdict_cells(t, 5, r, k == TL_TL_BUSY ? &v->busy : &none);
                }
                r++;
            }
            t->cols[3].role = t->cols[4].role = TL_ROLE_DIFF;
            add_block(st, tl_arena_printf(a, "%s -> %s: GPU time", s->baseline, v->tag), t);
        }
        int per_it = !isnan(v->call_ratio);
        const char *label = per_it ? " (per iteration: time per call x the baseline's calls)" : "";
        item_block(st, a, s, tl_arena_printf(a, "%s -> %s: top regressions%s", s->baseline, v->tag, label), s->baseline,
                   v->tag, v->regressions, v->nregressions, per_it);
        item_block(st, a, s, tl_arena_printf(a, "%s -> %s: top improvements%s", s->baseline, v->tag, label),
                   s->baseline, v->tag, v->improvements, v->nimprovements, per_it);
        char line[512];
        tl_verdict_line(s, v, line, sizeof line);
        if (line[0])
            add_block(st, tl_arena_strdup(a, line), NULL);
        item_block(st, a, s, tl_arena_printf(a, "only in %s (%zu in all)", s->baseline, v->only_base_count),
                   s->baseline, v->tag, v->only_base, v->nonly_base, 0);
        item_block(st, a, s, tl_arena_printf(a, "only in %s (%zu in all)", v->tag, v->only_var_count), s->baseline,
                   v->tag, v->only_var, v->nonly_var, 0);
        tl_table *eff = s->eff ? tl_efficiency_table(s->eff, &s->eff->variants[vi], s->baseline, v->tag, a) : NULL;
        if (eff)
            add_block(st, tl_arena_printf(a, "%s vs %s: achieved TFLOPS/s and TB/s", v->tag, s->baseline), eff);
    }
    if (s->lca) {
        add_block(st, tl_arena_printf(a, "%s -> %s by lowest common op: the GPU time they cover", s->lca->tag1,
                                      s->lca->tag2),
                  tl_lca_summary_cover_table(s->lca, a));
        if (s->lca->ntop)
            add_block(st, tl_arena_printf(a, "%s -> %s by lowest common op", s->lca->tag1, s->lca->tag2),
                      tl_lca_summary_table(s->lca, a));
    }
    tl_table *lca_eff = s->lca && s->eff ? tl_efficiency_table(s->eff, &s->eff->lca, s->lca->tag1, s->lca->tag2, a) : NULL;
    if (lca_eff)
        add_block(st, tl_arena_printf(a, "%s -> %s by lowest common op: achieved", s->lca->tag1, s->lca->tag2), lca_eff);
    st->sheet.name = "summary";
    st->sheet.blocks = st->blocks;
    st->sheet.nblocks = st->nblocks;
    if (s->nchart) {
        size_t nrep = s->nvariants + 1;
        st->series = tl_xcalloc(nrep, sizeof *st->series);
        for (size_t r = 0; r < nrep; r++) {
            st->series[r].name = r == 0 ? s->baseline : s->variants[r - 1].tag;
            st->series[r].values = s->chart_ms + r * TL_SUMMARY_CHART_TOP;
        }
        st->chart = (tl_sheet_chart){
            tl_arena_printf(a, "Top %zu %ss by %s time", s->nchart, s->item, s->baseline),
            "GPU kernel time (ms)", s->nchart, s->chart_names, nrep, st->series};
        st->sheet.chart = &st->chart;
    }
    return &st->sheet;
}

void tl_summary_sheet_free(tl_summary_sheet *sheet)
{
    if (!sheet)
        return;
    sheet_store *st = (sheet_store *)sheet; /* the sheet is the store's first member */
    for (size_t i = st->nborrowed; i < st->nblocks; i++)
        tl_table_free((tl_table *)st->blocks[i].table);
    free(st->blocks);
    free(st->series);
    free(st);
}
