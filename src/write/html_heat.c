/*
 * html_heat.c - the rank x metric heatmap of two runs (see html.h): three panels of cells
 * (baseline, variant, difference) and the table that is their text equivalent.
 *
 * Only the shading is computed here: a cell's darkness is where its value lies between the
 * smallest and the largest of its metric on either side (one scale for both sides, so that
 * the panels compare; ranks a few percent apart still show apart), the difference's
 * strength its size over the largest difference of its metric.  Grey print keeps the
 * meaning: darkness is lightness, the difference's direction is also a hatch, and every
 * cell carries its number (in the cell when the rows are tall enough, and in its tooltip).
 */
#include "write/html_int.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

enum { HM_LEFT = 86, HM_GAP = 18, HM_TOP = 46, HM_MAX_ROW = 20, HM_MIN_ROW = 3, HM_TEXT_ROW = 14 };
/* the rows' total height aimed at, before rows reach their smallest */
#define HM_TARGET_H 640.0

/* The smallest and largest value of column c over the panels' values (NaN when none); of
 * their magnitudes when `mag`. */
static void col_range(const tl_page_heatmap *h, const double *const *v, int nv, size_t c, int mag, double *lo,
                      double *hi)
{
    *lo = *hi = NAN;
    for (int s = 0; s < nv; s++)
        for (size_t r = 0; v[s] && r < h->nrows; r++) {
            double x = mag ? fabs(v[s][r * h->ncols + c]) : v[s][r * h->ncols + c];
            if (!isfinite(x))
                continue;
            *lo = isnan(*lo) || x < *lo ? x : *lo;
            *hi = isnan(*hi) || x > *hi ? x : *hi;
        }
}

/* A side's cell: from near white to Okabe-Ito blue as t goes 0..1. */
static void seq_fill(char *buf, size_t n, double t)
{
    t = !(t > 0) ? 0 : t > 1 ? 1 : t; /* a NaN too: the palest */
    snprintf(buf, n, "#%02x%02x%02x", (int)(0xf4 + (0x00 - 0xf4) * t), (int)(0xf4 + (0x4a - 0xf4) * t),
             (int)(0xf4 + (0x80 - 0xf4) * t));
}

/* A difference's cell: vermillion (more) or blue (less), stronger with |t|; grey at 0. */
static void div_fill(char *buf, size_t n, double d, double t)
{
    if (!(fabs(d) > 0) || !(t > 0)) {
        snprintf(buf, n, "#e4e4e4");
        return;
    }
    t = t > 1 ? 1 : t;
    int r0 = d > 0 ? 0xf6 : 0xc6, g0 = d > 0 ? 0xd8 : 0xdb, b0 = d > 0 ? 0xc4 : 0xef;
    int r1 = d > 0 ? 0xD5 : 0x00, g1 = d > 0 ? 0x5E : 0x72, b1 = d > 0 ? 0x00 : 0xB2;
    snprintf(buf, n, "#%02x%02x%02x", (int)(r0 + (r1 - r0) * t), (int)(g0 + (g1 - g0) * t), (int)(b0 + (b1 - b0) * t));
}

typedef struct hm_layout {
    double panel_w, col_w, row_h;
    int text; /* numbers drawn in the cells */
} hm_layout;

static void panel_head(tl_buf *o, const tl_page_heatmap *h, const hm_layout *L, int p, const char *title)
{
    double x0 = HM_LEFT + p * (L->panel_w + HM_GAP);
    tl_buf_printf(o, "<text x=\"%.1f\" y=\"14\" font-weight=\"600\">", x0);
    tl_html_text(o, title);
    tl_buf_adds(o, "</text>\n");
    for (size_t c = 0; c < h->ncols; c++) {
        tl_buf_printf(o, "<text class=\"tick\" x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">", x0 + L->col_w * ((double)c + 0.5),
                      HM_TOP - 10);
        tl_html_text(o, h->col[c]);
        tl_buf_adds(o, "</text>\n");
    }
}

/* One cell: its rect (and hatch), its number, its tooltip; data-* for scripts and tests. */
/* A side's cell shades by (v - lo) / (hi - lo); a difference's by |v| / hi. */
static void cell(tl_buf *o, const tl_page_heatmap *h, const hm_layout *L, int p, size_t r, size_t c, double v,
                 double lo, double hi)
{
    char fill[16], num[64], tip[1024];
    const char *what = p == 2 ? "difference" : h->side[p];
    double x = HM_LEFT + p * (L->panel_w + HM_GAP) + L->col_w * (double)c, y = HM_TOP + L->row_h * (double)r;
    double t = !isfinite(v) ? 0 : p == 2 ? (hi > 0 ? fabs(v) / hi : 0) : (hi > lo ? (v - lo) / (hi - lo) : 0);
    if (p == 2)
        div_fill(fill, sizeof fill, v, t);
    else
        seq_fill(fill, sizeof fill, isfinite(v) ? t : 0);
    if (p == 2)
        tl_html_signed(num, sizeof num, v, h->dec[c]);
    else
        tl_html_num(num, sizeof num, v, h->dec[c]);
    snprintf(tip, sizeof tip, "%s, %s: %s %s", h->row[r], h->col[c], what, num);
    tl_buf_printf(o, "<g class=\"hm mark\" data-panel=\"%d\" data-row=\"%zu\" data-col=\"%zu\" data-v=\"%.17g\"", p, r, c,
                  v);
    tl_buf_adds(o, " data-tip=\"");
    tl_html_attr(o, tip);
    tl_buf_adds(o, "\"><title>");
    tl_html_text(o, tip);
    tl_buf_printf(o, "</title><rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"%s\" stroke=\"#fff\" "
                     "stroke-width=\"0.5\"/>", x, y, L->col_w, L->row_h, fill);
    if (p == 2 && v > 0 && t > 0)
        tl_buf_printf(o, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"url(#hatch)\"/>", x, y,
                      L->col_w, L->row_h);
    if (L->text && isfinite(v))
        tl_buf_printf(o, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\"%s>%s</text>", x + L->col_w / 2,
                      y + L->row_h / 2 + 4, p < 2 && t > 0.55 ? " style=\"fill:#fff\"" : "", num);
    tl_buf_adds(o, "</g>\n");
}

static void heat_svg(tl_buf *o, const tl_page_heatmap *h, size_t nrows)
{
    hm_layout L;
    L.panel_w = (TL_SVG_W - HM_LEFT - 2 * HM_GAP - 4) / 3.0;
    L.col_w = L.panel_w / (double)(h->ncols ? h->ncols : 1);
    L.row_h = nrows ? HM_TARGET_H / (double)nrows : HM_MAX_ROW;
    L.row_h = L.row_h > HM_MAX_ROW ? HM_MAX_ROW : L.row_h < HM_MIN_ROW ? HM_MIN_ROW : L.row_h;
    L.text = L.row_h >= HM_TEXT_ROW;
    double hgt = HM_TOP + L.row_h * (double)nrows + 8;
    tl_buf_printf(o, "<svg class=\"chart heatmap\" viewBox=\"0 0 %d %.0f\" role=\"img\" "
                     "preserveAspectRatio=\"xMinYMin meet\"><title>", TL_SVG_W, hgt);
    tl_html_text(o, h->title);
    tl_buf_adds(o, "</title><desc>Per rank (a row) and metric (a column): the baseline's and the variant's values, "
                   "darker for more, and their difference, vermillion and hatched where the variant has more, blue "
                   "where it has less; the table below holds the numbers.</desc>\n");
    const char *titles[3] = {h->side[0], h->side[1], "difference"};
    for (int p = 0; p < 3; p++)
        panel_head(o, h, &L, p, titles[p]);
    size_t label_every = L.row_h >= 11 ? 1 : (size_t)ceil(11 / L.row_h);
    for (size_t r = 0; r < nrows; r++)
        if (r % label_every == 0) {
            tl_buf_printf(o, "<text class=\"tick\" x=\"%d\" y=\"%.1f\" text-anchor=\"end\">", HM_LEFT - 6,
                          HM_TOP + L.row_h * ((double)r + 0.5) + 4);
            tl_html_text(o, h->row[r]);
            tl_buf_adds(o, "</text>\n");
        }
    for (size_t c = 0; c < h->ncols; c++) {
        const double *sides[2] = {h->v[0], h->v[1]}, *d[1] = {h->diff};
        double slo, shi, dlo, dhi;
        col_range(h, sides, 2, c, 0, &slo, &shi);
        col_range(h, d, 1, c, 1, &dlo, &dhi);
        for (size_t r = 0; r < nrows; r++) {
            for (int p = 0; p < 2; p++)
                cell(o, h, &L, p, r, c, h->v[p] ? h->v[p][r * h->ncols + c] : NAN, slo, shi);
            cell(o, h, &L, 2, r, c, h->diff ? h->diff[r * h->ncols + c] : NAN, dlo, dhi);
        }
    }
    tl_buf_adds(o, "</svg>\n");
}

void tl_html_heatmap(tl_buf *o, const tl_page_heatmap *h, const char *table_id)
{
    if (!h->nrows || !h->ncols)
        return;
    tl_buf_adds(o, "<h3>");
    tl_html_text(o, h->title);
    tl_buf_adds(o, "</h3>\n");
    size_t drawn = h->nrows < TL_PAGE_HEAT_MAX_ROWS ? h->nrows : TL_PAGE_HEAT_MAX_ROWS;
    heat_svg(o, h, drawn);
    if (drawn < h->nrows)
        tl_buf_printf(o, "<p class=\"note\">the first %zu of %zu ranks drawn; the table lists them all</p>\n", drawn,
                      h->nrows);
    tl_buf_printf(o, "<input class=\"filter\" type=\"search\" data-filter=\"%s\" placeholder=\"filter by rank\" "
                     "aria-label=\"filter by rank\">\n<table class=\"heat\" id=\"%s\"><thead><tr><th>rank</th>",
                  table_id, table_id);
    for (size_t c = 0; c < h->ncols; c++) {
        const char *what[3] = {h->side[0], h->side[1], "difference"};
        for (int p = 0; p < 3; p++) {
            tl_buf_adds(o, "<th>");
            tl_html_text(o, h->col[c]);
            tl_buf_adds(o, ": ");
            tl_html_text(o, what[p]);
            tl_buf_adds(o, "</th>");
        }
    }
    tl_buf_adds(o, "</tr></thead><tbody>\n");
    char a[64];
    for (size_t r = 0; r < h->nrows; r++) {
        tl_buf_adds(o, "<tr><td>");
        tl_html_text(o, h->row[r]);
        tl_buf_adds(o, "</td>");
        for (size_t c = 0; c < h->ncols; c++) {
            size_t i = r * h->ncols + c;
            tl_buf_printf(o, "<td>%s</td>", tl_html_num(a, sizeof a, h->v[0] ? h->v[0][i] : NAN, h->dec[c]));
            tl_buf_printf(o, "<td>%s</td>", tl_html_num(a, sizeof a, h->v[1] ? h->v[1][i] : NAN, h->dec[c]));
            tl_buf_printf(o, "<td>%s</td>", tl_html_signed(a, sizeof a, h->diff ? h->diff[i] : NAN, h->dec[c]));
        }
        tl_buf_adds(o, "</tr>\n");
    }
    tl_buf_adds(o, "</tbody></table>\n");
}
