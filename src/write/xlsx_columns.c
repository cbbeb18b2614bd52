/*
 * xlsx_columns.c - how each column of a result looks in the workbook (see xlsx_internal.h):
 * its number format (%, ms, µs, counts), its colouring (diff and pct columns: red where
 * the variant is slower, green where faster; swapped for throughput such as TFLOPS/s and
 * TB/s) and its width, all read from the column's name and role and its first rows.
 */
#include "write/xlsx_internal.h"

#include "base/numfmt.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

/* ---- columns: number format, colour, width ---------------------------------------------- */


static int has_ci(const char *s, size_t n, const char *w)
{
    size_t wl = strlen(w);
    for (size_t i = 0; i + wl <= n; i++)
        if (strncasecmp(s + i, w, wl) == 0)
            return 1;
    return 0;
}

static int has(const char *s, size_t n, const char *w)
{
    size_t wl = strlen(w);
    for (size_t i = 0; i + wl <= n; i++)
        if (memcmp(s + i, w, wl) == 0)
            return 1;
    return 0;
}

static int ends(const char *s, size_t n, const char *w)
{
    size_t wl = strlen(w);
    return n >= wl && memcmp(s + n - wl, w, wl) == 0;
}

/* A unit token such as " ms" or "_us": present, and not the start of a longer word. */
static int has_unit(const char *s, size_t n, const char *w)
{
    size_t wl = strlen(w);
    for (size_t i = 0; i + wl <= n; i++) {
        if (memcmp(s + i, w, wl) != 0)
            continue;
        unsigned char next = i + wl < n ? (unsigned char)s[i + wl] : 0;
        if (!((next >= 'a' && next <= 'z') || (next >= 'A' && next <= 'Z') || (next >= '0' && next <= '9')))
            return 1;
    }
    return 0;
}

/* 1 when every number in the column is integral. */
static int integral_column(const tl_column *col, size_t nrows)
{
    for (size_t r = 0; r < nrows; r++) {
        const tl_cell *c = &col->cells[r];
        if (c->kind == TL_FLOAT && isfinite(c->v.f) && c->v.f != floor(c->v.f))
            return 0;
    }
    return 1;
}

/*
 * The metric a column measures and how it looks: the name after "<tag>::", or for a diff
 * column "<metric>__<tag>_diff|_pct" the metric.  Sets the number style and colouring.
 */
void tl_classify_column(const tl_column *col, size_t nrows, colinfo *ci)
{
    const char *m = col->name ? col->name : "";
    size_t n = strlen(m);
    int pct = 0;
    if (col->role == TL_ROLE_DIFF) {
        pct = ends(m, n, "_pct");
        for (size_t i = n; i >= 2; i--)
            if (m[i - 1] == '_' && m[i - 2] == '_') {
                n = i - 2;
                break;
            }
    } else {
        const char *sep = strstr(m, "::");
        if (sep) {
            n -= (size_t)(sep + 2 - m);
            m = sep + 2;
        }
    }
    if (pct || memchr(m, '%', n) || has_ci(m, n, "percent"))
        ci->xf = XF_PCT;
    else if ((n == 5 && strncasecmp(m, "count", 5) == 0) || ends(m, n, "_count") || ends(m, n, " calls"))
        ci->xf = integral_column(col, nrows) ? XF_COUNT : XF_GENERAL;
    else if (has(m, n, "(ms)") || has_unit(m, n, " ms") || has_unit(m, n, "_ms"))
        ci->xf = XF_MS;
    else if (has(m, n, "(\xC2\xB5s)") || has(m, n, "(us)") || has_unit(m, n, "_us"))
        ci->xf = XF_US;
    else
        ci->xf = XF_GENERAL;
    ci->cf = CF_NONE;
    if (col->role == TL_ROLE_DIFF)
        ci->cf = has(m, n, "TFLOPS/s") || has(m, n, "TB/s") ? CF_HIGHER_BETTER : CF_LOWER_BETTER;
}

/* Characters a number takes when shown in style xf; `text`: its repr() length when
 * already formatted (tl_float_text), else 0. */
static size_t number_chars(double v, int xf, size_t text)
{
    char tmp[TL_NUMFMT_MAX];
    if (!isfinite(v))
        return 4;
    size_t neg = v < 0;
    double a = fabs(v);
    size_t digits = a < 10 ? 1 : (size_t)floor(log10(a)) + 1;
    if (digits > 15)
        xf = XF_GENERAL; /* Excel shows these in scientific notation */
    switch (xf) {
    case XF_PCT: return neg + digits + 3;
    case XF_MS: return neg + digits + (digits - 1) / 3 + 4;
    case XF_US: return neg + digits + (digits - 1) / 3 + 3;
    case XF_COUNT: return neg + digits + (digits - 1) / 3;
    default: {
        size_t n = text ? text : tl_fmt_double(v, tmp);
        return n > 11 ? 11 : n; /* General shows about 11 characters */
    }
    }
}

/* The widest of rows [0, min(nrows, XL_WIDTH_ROWS)) of column `col` of t, in characters. */
size_t tl_column_chars(const tl_table *t, size_t col, int xf)
{
    size_t w = 0, k, nrows = t->nrows < XL_WIDTH_ROWS ? t->nrows : XL_WIDTH_ROWS, text;
    for (size_t r = 0; r < nrows && w < XL_WIDTH_MAX; r++) {
        const tl_cell *c = &t->cols[col].cells[r];
        switch (c->kind) {
        case TL_INT: k = number_chars((double)c->v.i, xf, 0); break;
        case TL_FLOAT: k = number_chars(c->v.f, xf, tl_float_text(t, col, c, &text) ? text : 0); break;
        case TL_BOOL: k = 5; break;
        case TL_STR: k = tl_text_chars(c->v.s, tl_cell_len(c), XL_WIDTH_MAX); break;
        default: k = 0; break;
        }
        if (k > w)
            w = k;
    }
    return w;
}

size_t tl_fit_width(size_t chars)
{
    chars += 2;
    return chars < XL_WIDTH_MIN ? XL_WIDTH_MIN : chars > XL_WIDTH_MAX ? XL_WIDTH_MAX : chars;
}

void tl_xb_cols(tl_buf *b, const colinfo *ci, size_t n)
{
    if (!n)
        return;
    tl_buf_adds(b, "<cols>");
    for (size_t c = 0; c < n; c++)
        tl_buf_printf(b, "<col min=\"%zu\" max=\"%zu\" width=\"%zu.7109375\" customWidth=\"1\"%s/>", c + 1,
                      c + 1, ci[c].width, ci[c].hidden ? " hidden=\"1\"" : "");
    tl_buf_adds(b, "</cols>");
}

