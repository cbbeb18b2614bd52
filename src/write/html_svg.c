/*
 * html_svg.c - the page's charts as inline SVG (see html.h): where the time went, what
 * moved, the roofline and the differenced call tree.  Only layout is computed here
 * (positions, axis ticks); every number shown comes from the page model as it is.
 *
 * A mark's tooltip is its data-tip attribute (the page's script shows it) and its
 * <title> (the browser's own tooltip, and what a screen reader says), so that the charts
 * read without the script too.
 */
#include "write/html_int.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

const char *const tl_page_part_names[TL_PAGE_NPARTS] = {"compute", "exposed communication", "exposed memcpy",
                                                         "idle"};

/* Okabe-Ito: told apart with protanopia, deuteranopia and tritanopia; each also has its
 * own pattern, for a grey print. */
#define C_BLUE "#0072B2"
#define C_VERM "#D55E00"
#define C_ORANGE "#E69F00"
#define C_SKY "#56B4E9"
#define C_GREY "#999999"

void tl_svg_defs(tl_buf *o)
{
    tl_buf_adds(o,
        "<svg width=\"0\" height=\"0\" style=\"position:absolute\" aria-hidden=\"true\"><defs>\n"
        /* the timeline's parts: compute solid, communication hatched, memcpy dotted, idle crossed */
        "<pattern id=\"p0\" width=\"8\" height=\"8\" patternUnits=\"userSpaceOnUse\"><rect width=\"8\" "
        "height=\"8\" fill=\"" C_BLUE "\"/></pattern>\n"
        "<pattern id=\"p1\" width=\"8\" height=\"8\" patternUnits=\"userSpaceOnUse\" "
        "patternTransform=\"rotate(45)\"><rect width=\"8\" height=\"8\" fill=\"" C_ORANGE "\"/>"
        "<line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"8\" stroke=\"#000\" stroke-width=\"3\"/></pattern>\n"
        "<pattern id=\"p2\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\"><rect width=\"6\" "
        "height=\"6\" fill=\"" C_SKY "\"/><circle cx=\"3\" cy=\"3\" r=\"1.4\" fill=\"#000\"/></pattern>\n"
        "<pattern id=\"p3\" width=\"8\" height=\"8\" patternUnits=\"userSpaceOnUse\"><rect width=\"8\" "
        "height=\"8\" fill=\"#eeeeee\"/><path d=\"M0 0L8 8M8 0L0 8\" stroke=\"" C_GREY "\" "
        "stroke-width=\"1\"/></pattern>\n"
        /* slower: vermillion hatched; faster: blue solid; noise: grey */
        "<pattern id=\"slow\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" "
        "patternTransform=\"rotate(45)\"><rect width=\"6\" height=\"6\" fill=\"" C_VERM "\"/>"
        "<line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" stroke=\"#fff\" stroke-width=\"2\"/></pattern>\n"
        "<pattern id=\"hatch\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" "
        "patternTransform=\"rotate(45)\"><line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" stroke=\"#000\" "
        "stroke-opacity=\"0.35\" stroke-width=\"1.5\"/></pattern>\n"
        "<marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" "
        "orient=\"auto-start-reverse\"><path d=\"M0 0L10 5L0 10z\" fill=\"#333\"/></marker>\n"
        "</defs></svg>\n");
}

/* The tooltip of a mark: as the script's data-tip, and as its <title> child (written by
 * tip_title after the element's opening tag). */
static void tip_attr(tl_buf *o, const char *tip)
{
    tl_buf_adds(o, " data-tip=\"");
    tl_html_attr(o, tip);
    tl_buf_adds(o, "\"");
}

static void tip_title(tl_buf *o, const char *tip)
{
    tl_buf_adds(o, "<title>");
    tl_html_text(o, tip);
    tl_buf_adds(o, "</title>");
}

/* What a chart draws of value v: nothing (0) for a NaN or an infinity, which no scale
 * holds; the table under the chart gives the value itself. */
static double drawn(double v) { return isfinite(v) ? v : 0; }

/* A linear axis' tick step for [0, max]: 1, 2 or 5 times a power of ten, about 5 ticks. */
static double tick_step(double max)
{
    if (!(max > 0) || !isfinite(max))
        return 1;
    double raw = max / 5, p = pow(10, floor(log10(raw)));
    double m = raw / p;
    return (m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10) * p;
}

/* The decimals that show a tick step. */
static int step_decimals(double step)
{
    if (!(step > 0) || !isfinite(step))
        return 0;
    int d = (int)ceil(-log10(step) - 1e-9);
    return d < 0 ? 0 : d > 6 ? 6 : d;
}

static void svg_open(tl_buf *o, double h, const char *cls, const char *title, const char *desc)
{
    tl_buf_printf(o, "<svg class=\"chart %s\" viewBox=\"0 0 %d %.0f\" role=\"img\" "
                     "preserveAspectRatio=\"xMinYMin meet\"><title>", cls, TL_SVG_W, h);
    tl_html_text(o, title);
    tl_buf_adds(o, "</title><desc>");
    tl_html_text(o, desc);
    tl_buf_adds(o, "</desc>\n");
}

/* A name cut to `max` bytes for a label (whole UTF-8 characters), "..." added. */
static void label_text(tl_buf *o, const char *s, size_t max)
{
    size_t len = strlen(s);
    if (len <= max) {
        tl_html_text(o, s);
        return;
    }
    size_t keep = max > 3 ? max - 3 : 0;
    while (keep > 0 && ((unsigned char)s[keep] & 0xC0) == 0x80)
        keep--;
    tl_buf b = {0};
    tl_buf_add(&b, s, keep);
    tl_buf_adds(&b, "...");
    tl_html_text(o, tl_buf_cstr(&b));
    tl_buf_free(&b);
}

/* ---- where the time went -------------------------------------------------------------- */

void tl_svg_bars(tl_buf *o, const char *title, const tl_page_bar *bars, size_t n)
{
    enum { LEFT = 170, RIGHT = 30, ROW = 34, TOP = 34 };
    double max = 0;
    for (size_t i = 0; i < n; i++) {
        double sum = 0;
        for (int k = 0; k < TL_PAGE_NPARTS; k++)
            sum += drawn(bars[i].part_ms[k]);
        max = sum > max ? sum : max;
    }
    double step = tick_step(max), top = max > 0 ? ceil(max / step) * step : 1;
    double plot = TL_SVG_W - LEFT - RIGHT, h = TOP + ROW * (double)n + 30;
    svg_open(o, h, "bars", title,
             "Stacked bars of each gpu_timeline: compute, exposed communication, exposed memcpy and "
             "idle time, in ms; the table below holds the numbers.");
    /* the legend */
    for (int k = 0; k < TL_PAGE_NPARTS; k++) {
        double x = LEFT + k * 190.0;
        tl_buf_printf(o, "<rect x=\"%.0f\" y=\"6\" width=\"16\" height=\"14\" fill=\"url(#p%d)\" stroke=\"#333\"/>"
                         "<text x=\"%.0f\" y=\"18\">%s</text>\n", x, k, x + 22, tl_page_part_names[k]);
    }
    char a[64], t[512];
    int dec = step_decimals(step);
    for (double v = 0; v <= top * (1 + 1e-9); v += step) {
        double x = LEFT + plot * v / top;
        tl_buf_printf(o, "<line class=\"grid\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%.0f\"/>"
                         "<text class=\"tick\" x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\">%s</text>\n",
                      x, TOP - 4, x, h - 24, x, h - 10, tl_html_num(a, sizeof a, v, dec));
    }
    tl_buf_printf(o, "<text class=\"tick\" x=\"%d\" y=\"%.0f\" text-anchor=\"end\">ms</text>\n", LEFT - 26, h - 10);
    for (size_t i = 0; i < n; i++) {
        double y = TOP + ROW * (double)i, x = LEFT;
        tl_buf_printf(o, "<text x=\"%d\" y=\"%.0f\" text-anchor=\"end\">", LEFT - 8, y + 19);
        label_text(o, bars[i].label, 22);
        tl_buf_adds(o, "</text>\n");
        for (int k = 0; k < TL_PAGE_NPARTS; k++) {
            double v = drawn(bars[i].part_ms[k]);
            if (v <= 0)
                continue;
            double w = plot * v / top;
            snprintf(t, sizeof t, "%s: %s %s ms", bars[i].label, tl_page_part_names[k], tl_html_num(a, sizeof a, v, 3));
            tl_buf_printf(o, "<rect class=\"mark\" x=\"%.2f\" y=\"%.0f\" width=\"%.2f\" height=\"26\" "
                             "fill=\"url(#p%d)\" stroke=\"#333\" stroke-width=\"0.5\"", x, y + 2, w, k);
            tip_attr(o, t);
            tl_buf_adds(o, ">");
            tip_title(o, t);
            tl_buf_adds(o, "</rect>\n");
            x += w;
        }
    }
    tl_buf_adds(o, "</svg>\n");
}

/* ---- one report's ops ---------------------------------------------------------------- */

void tl_svg_tops(tl_buf *o, const tl_page_tops *tp)
{
    enum { LEFT = 330, RIGHT = 20, ROW = 22, TOP = 10 };
    double max = 0;
    for (size_t i = 0; i < tp->n; i++)
        max = drawn(tp->items[i].ms) > max ? drawn(tp->items[i].ms) : max;
    double step = tick_step(max), lim = max > 0 ? ceil(max / step) * step : 1;
    double plot = TL_SVG_W - LEFT - RIGHT, h = TOP + ROW * (double)tp->n + 34;
    svg_open(o, h, "tops", tp->title, "Each op's GPU kernel time in ms as a bar, largest first; the table below holds "
                                      "the numbers.");
    char a[64], b[64], c[64], t[1024];
    int dec = step_decimals(step);
    for (double v = 0; v <= lim * (1 + 1e-9); v += step) {
        double x = LEFT + plot * v / lim;
        tl_buf_printf(o, "<line class=\"grid\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%.0f\"/>"
                         "<text class=\"tick\" x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\">%s</text>\n",
                      x, TOP, x, h - 24, x, h - 10, tl_html_num(a, sizeof a, v, dec));
    }
    tl_buf_printf(o, "<text class=\"tick\" x=\"%d\" y=\"%.0f\" text-anchor=\"end\">ms</text>\n", LEFT - 26, h - 10);
    for (size_t i = 0; i < tp->n; i++) {
        const tl_page_top *it = &tp->items[i];
        double y = TOP + ROW * (double)i;
        tl_buf_printf(o, "<text x=\"%d\" y=\"%.0f\" text-anchor=\"end\">", LEFT - 8, y + 15);
        label_text(o, it->name, 44);
        tl_buf_adds(o, "</text>\n");
        snprintf(t, sizeof t, "%s: %s ms, %s calls, %s%% of the kernel time", it->name,
                 tl_html_num(a, sizeof a, it->ms, 3), tl_html_num(b, sizeof b, it->calls, 0),
                 tl_html_num(c, sizeof c, it->pct, 1));
        tl_buf_printf(o, "<rect class=\"mark\" x=\"%d\" y=\"%.0f\" width=\"%.2f\" height=\"14\" fill=\"url(#p0)\" "
                         "stroke=\"#333\" stroke-width=\"0.6\"", LEFT, y + 4, plot * drawn(it->ms) / lim);
        tip_attr(o, t);
        tl_buf_adds(o, ">");
        tip_title(o, t);
        tl_buf_adds(o, "</rect>\n");
    }
    tl_buf_adds(o, "</svg>\n");
}

/* ---- what moved --------------------------------------------------------------------- */

/* A change's fill: slower hatched vermillion, faster solid blue, within noise grey. */
static const char *move_fill(const tl_page_move *m)
{
    if (m->verdict && !strcmp(m->verdict, "within noise"))
        return "#dddddd";
    return m->delta_ms > 0 ? "url(#slow)" : C_BLUE;
}

void tl_svg_moves(tl_buf *o, const tl_page_moves *m)
{
    enum { LEFT = 330, RIGHT = 20, ROW = 22, TOP = 10 };
    double max = 0;
    for (size_t i = 0; i < m->n; i++) {
        const tl_page_move *it = &m->items[i];
        double e[3] = {it->delta_ms, it->ci_lo, it->ci_hi};
        for (int k = 0; k < 3; k++)
            if (fabs(drawn(e[k])) > max)
                max = fabs(drawn(e[k]));
    }
    double step = tick_step(max), lim = max > 0 ? ceil(max / step) * step : 1;
    double plot = TL_SVG_W - LEFT - RIGHT, mid = LEFT + plot / 2, h = TOP + ROW * (double)m->n + 34;
    svg_open(o, h, "moves", m->title,
             "Each changed item's time change in ms as a bar (slower to the right, hatched; faster to the left, "
             "solid; within noise grey) with its interval as a whisker; the table below holds the numbers.");
    char a[64], b[64], c[64], d[64], t[1024];
    int dec = step_decimals(step);
    for (double v = -lim; v <= lim * (1 + 1e-9); v += step) {
        double x = mid + plot / 2 * v / lim;
        tl_buf_printf(o, "<line class=\"grid\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%.0f\"/>"
                         "<text class=\"tick\" x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\">%s</text>\n",
                      x, TOP, x, h - 24, x, h - 10, tl_html_signed(a, sizeof a, fabs(v) < step / 2 ? 0 : v, dec));
    }
    tl_buf_printf(o, "<line class=\"axis\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%.0f\"/>\n", mid, TOP, mid, h - 24);
    tl_buf_printf(o, "<text class=\"tick\" x=\"%d\" y=\"%.0f\" text-anchor=\"end\">delta (ms)</text>\n", LEFT - 26,
                  h - 10);
    for (size_t i = 0; i < m->n; i++) {
        const tl_page_move *it = &m->items[i];
        double y = TOP + ROW * (double)i;
        double x1 = mid + plot / 2 * drawn(it->delta_ms) / lim;
        tl_buf_printf(o, "<text x=\"%d\" y=\"%.0f\" text-anchor=\"end\">", LEFT - 8, y + 15);
        label_text(o, it->name, 44);
        tl_buf_adds(o, "</text>\n");
        snprintf(t, sizeof t, "%s: %s -> %s ms, %s ms (%s%%)%s%s%s%s%s", it->name,
                 tl_html_num(a, sizeof a, it->base_ms, 3), tl_html_num(b, sizeof b, it->var_ms, 3),
                 tl_html_signed(c, sizeof c, it->delta_ms, 3), tl_html_signed(d, sizeof d, it->pct, 1),
                 it->verdict ? ", " : "", it->verdict ? it->verdict : "", it->detail ? " (" : "",
                 it->detail ? it->detail : "", it->detail ? ")" : "");
        const char *noise = it->verdict && !strcmp(it->verdict, "within noise") ? " stroke-dasharray=\"3 2\"" : "";
        tl_buf_printf(o, "<rect class=\"mark\" x=\"%.2f\" y=\"%.0f\" width=\"%.2f\" height=\"14\" fill=\"%s\" "
                         "stroke=\"#333\" stroke-width=\"0.6\"%s", x1 < mid ? x1 : mid, y + 4, fabs(x1 - mid),
                      move_fill(it), noise);
        tip_attr(o, t);
        tl_buf_adds(o, ">");
        tip_title(o, t);
        tl_buf_adds(o, "</rect>\n");
        if (isfinite(it->ci_lo) && isfinite(it->ci_hi)) {
            double lo = mid + plot / 2 * it->ci_lo / lim, hi = mid + plot / 2 * it->ci_hi / lim, yc = y + 11;
            tl_buf_printf(o, "<path class=\"whisker\" d=\"M%.2f %.1fH%.2fM%.2f %.1fV%.1fM%.2f %.1fV%.1f\"/>\n", lo, yc,
                          hi, lo, yc - 5, yc + 5, hi, yc - 5, yc + 5);
        }
    }
    tl_buf_adds(o, "</svg>\n");
}

/* ---- the roofline ---------------------------------------------------------------------- */

typedef struct logaxis {
    double lo, hi; /* powers of ten */
    double p0, p1; /* pixels */
} logaxis;

static double lpos(const logaxis *ax, double v) { return ax->p0 + (ax->p1 - ax->p0) * (log10(v) - ax->lo) / (ax->hi - ax->lo); }

static void span(double v, double *lo, double *hi)
{
    if (v > 0 && isfinite(v)) {
        *lo = fmin(*lo, v);
        *hi = fmax(*hi, v);
    }
}

/* Decades around [lo, hi], at least one. */
static void decades(double lo, double hi, double *dlo, double *dhi)
{
    if (!(lo <= hi)) {
        lo = 1, hi = 10;
    }
    *dlo = floor(log10(lo));
    *dhi = ceil(log10(hi));
    if (*dhi <= *dlo)
        *dhi = *dlo + 1;
}

static void roof_axes(tl_buf *o, const logaxis *x, const logaxis *y)
{
    for (double e = x->lo; e <= x->hi; e++) {
        double px = lpos(x, pow(10, e));
        tl_buf_printf(o, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.0f\" x2=\"%.1f\" y2=\"%.0f\"/><text class=\"tick\" "
                         "x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\">%g</text>\n",
                      px, y->p1, px, y->p0, px, y->p0 + 16, pow(10, e));
    }
    for (double e = y->lo; e <= y->hi; e++) {
        double py = lpos(y, pow(10, e));
        tl_buf_printf(o, "<line class=\"grid\" x1=\"%.0f\" y1=\"%.1f\" x2=\"%.0f\" y2=\"%.1f\"/><text class=\"tick\" "
                         "x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\">%g</text>\n",
                      x->p0, py, x->p1, py, x->p0 - 6, py + 4, pow(10, e));
    }
    tl_buf_printf(o, "<text class=\"tick\" x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\">arithmetic intensity "
                     "(FLOP/byte)</text>\n", (x->p0 + x->p1) / 2, y->p0 + 34);
    tl_buf_printf(o, "<text class=\"tick\" transform=\"translate(16 %.0f) rotate(-90)\" text-anchor=\"middle\">"
                     "achieved TFLOPS/s</text>\n", (y->p0 + y->p1) / 2);
}

/* GPU g's memory line (TFLOPS/s = TB/s x FLOP/byte) up to its highest compute peak, and
 * its compute peaks: the baseline's (or the only) GPU solid, labelled above its lines; the
 * variant's dashed, its peaks labelled left of where their lines start (the empty corner
 * above the memory lines), with the GPU's name when there are two.  A peak label that would
 * overlap one already placed (`placed`: their heights and extents, right-anchored labels of
 * about 6.5 units a character) is left out: the line keeps its <title>. */
typedef struct placed {
    double y[2 * TL_PAGE_MAX_PEAKS], x0[2 * TL_PAGE_MAX_PEAKS], x1[2 * TL_PAGE_MAX_PEAKS];
    size_t n;
} placed;

static int place_label(placed *pl, double y, double x_end, size_t chars)
{
    double x0 = x_end - 6.5 * (double)chars;
    for (size_t i = 0; i < pl->n; i++)
        if (fabs(pl->y[i] - y) < 12 && x0 < pl->x1[i] && pl->x0[i] < x_end)
            return 0;
    if (pl->n < sizeof pl->y / sizeof *pl->y) {
        pl->y[pl->n] = y, pl->x0[pl->n] = x0, pl->x1[pl->n] = x_end;
        pl->n++;
    }
    return 1;
}

static void roof_peaks(tl_buf *o, const tl_page_roofline *r, int g, const logaxis *x, const logaxis *y, placed *pl)
{
    const tl_page_gpu *gp = &r->gpu[g];
    int two = r->gpu[1].name != NULL;
    const char *cls = g ? "peak var" : "peak";
    char a[64];
    double top = gp->npeaks ? gp->peak_tflops[0] : pow(10, y->hi), bw = gp->mem_tbps;
    if (!isnan(bw) && bw > 0) {
        double ai0 = pow(10, x->lo), ai1 = fmin(top / bw, pow(10, x->hi));
        double y0 = fmax(bw * ai0, pow(10, y->lo));
        ai0 = y0 / bw;
        if (ai1 > ai0) {
            tl_buf_printf(o, "<line class=\"%s\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"><title>", cls,
                          lpos(x, ai0), lpos(y, y0), lpos(x, ai1), lpos(y, bw * ai1));
            tl_html_text(o, gp->name);
            tl_buf_printf(o, " memory bandwidth %s TB/s</title></line>\n", tl_html_num(a, sizeof a, bw, 2));
            tl_buf_printf(o, "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\">", lpos(x, ai0) + 4,
                          lpos(y, y0) + (g ? 14 : -6));
            if (two) {
                tl_html_text(o, gp->name);
                tl_buf_adds(o, " ");
            }
            tl_buf_printf(o, "%s TB/s</text>\n", a);
        }
    }
    for (size_t k = 0; k < gp->npeaks; k++) {
        double p = gp->peak_tflops[k];
        if (!(p > 0))
            continue;
        double ai0 = !isnan(bw) && bw > 0 ? fmax(p / bw, pow(10, x->lo)) : pow(10, x->lo);
        if (ai0 >= pow(10, x->hi))
            continue;
        tl_buf_printf(o, "<line class=\"%s%s\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"><title>", cls,
                      k ? " minor" : "", lpos(x, ai0), lpos(y, p), x->p1, lpos(y, p));
        tl_html_text(o, gp->name);
        tl_buf_adds(o, " ");
        tl_html_text(o, gp->peak_label[k]);
        double ly = lpos(y, p) + (g ? 4 : -4), lx = g ? lpos(x, ai0) - 6 : x->p1 - 4;
        tl_buf_printf(o, " %s TFLOPS/s</title></line>\n", tl_html_num(a, sizeof a, p, 1));
        size_t chars = strlen(gp->peak_label[k]) + strlen(a) + 1 + (two ? strlen(gp->name) + 1 : 0);
        if (!place_label(pl, ly, lx, chars))
            continue;
        tl_buf_printf(o, "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">", lx, ly);
        if (two) {
            tl_html_text(o, gp->name);
            tl_buf_adds(o, " ");
        }
        tl_html_text(o, gp->peak_label[k]);
        tl_buf_printf(o, " %s</text>\n", a);
    }
}

/* Which GPU's lines are which: a sample of each line and its name. */
static void roof_gpu_legend(tl_buf *o, const tl_page_roofline *r)
{
    for (int g = 0; g < 2 && r->gpu[1].name; g++) {
        double y = 34 + 20 * g;
        tl_buf_printf(o, "<line class=\"%s\" x1=\"300\" y1=\"%.0f\" x2=\"330\" y2=\"%.0f\"/><text x=\"336\" "
                         "y=\"%.0f\">", g ? "peak var" : "peak", y - 4, y - 4, y);
        tl_html_text(o, r->gpu[g].name);
        tl_buf_adds(o, " (");
        tl_html_text(o, r->side[g] ? r->side[g] : "");
        tl_buf_adds(o, ")</text>\n");
    }
}

void tl_svg_roofline(tl_buf *o, const tl_page_roofline *r)
{
    double xlo = INFINITY, xhi = -INFINITY, ylo = INFINITY, yhi = -INFINITY;
    for (size_t i = 0; i < r->n; i++)
        for (int s = 0; s < 2; s++)
            if (r->points[i].tflops[s] > 0) {
                span(r->points[i].ai[s], &xlo, &xhi);
                span(r->points[i].tflops[s], &ylo, &yhi);
            }
    for (int g = 0; g < 2; g++) {
        const tl_page_gpu *gp = &r->gpu[g];
        if (gp->name && gp->npeaks)
            span(gp->peak_tflops[0], &ylo, &yhi);
        if (gp->name && gp->npeaks && gp->mem_tbps > 0)
            span(gp->peak_tflops[0] / gp->mem_tbps, &xlo, &xhi); /* the ridge point */
    }
    logaxis x = {0, 0, 80, TL_SVG_W - 20}, y = {0, 0, 420, 20};
    decades(xlo, xhi, &x.lo, &x.hi);
    decades(ylo, yhi, &y.lo, &y.hi);
    svg_open(o, 470, "roofline", r->title,
             "Each perf-model op at its arithmetic intensity and achieved TFLOPS/s on log axes: the baseline a "
             "hollow circle, the variant a filled triangle, an arrow from one to the other; the GPU's peak lines "
             "above (each side's own when they differ: the baseline's solid, the variant's dashed).  The table "
             "below holds the numbers.");
    roof_axes(o, &x, &y);
    placed pl = {{0}, {0}, {0}, 0};
    for (int g = 0; g < 2; g++)
        if (r->gpu[g].name)
            roof_peaks(o, r, g, &x, &y, &pl);
    roof_gpu_legend(o, r);
    char a[64], b[64], c[64], d[64];
    for (size_t i = 0; i < r->n; i++) {
        const tl_page_point *p = &r->points[i];
        int has[2] = {p->tflops[0] > 0 && p->ai[0] > 0, p->tflops[1] > 0 && p->ai[1] > 0};
        if (!has[0] && !has[1])
            continue;
        tl_buf t = {0};
        tl_buf_printf(&t, "%s: %s %s FLOP/B %s TFLOPS/s", p->name, r->side[0], tl_html_num(a, sizeof a, p->ai[0], 1),
                      tl_html_num(b, sizeof b, p->tflops[0], 2));
        if (r->side[1])
            tl_buf_printf(&t, " -> %s %s FLOP/B %s TFLOPS/s", r->side[1], tl_html_num(c, sizeof c, p->ai[1], 1),
                          tl_html_num(d, sizeof d, p->tflops[1], 2));
        if (p->detail)
            tl_buf_printf(&t, " (%s)", p->detail);
        tl_buf_adds(o, "<g class=\"mark pt\"");
        tip_attr(o, tl_buf_cstr(&t));
        tl_buf_adds(o, ">");
        tip_title(o, tl_buf_cstr(&t));
        double x0 = has[0] ? lpos(&x, p->ai[0]) : 0, y0 = has[0] ? lpos(&y, p->tflops[0]) : 0;
        double x1 = has[1] ? lpos(&x, p->ai[1]) : 0, y1 = has[1] ? lpos(&y, p->tflops[1]) : 0;
        if (has[0] && has[1] && hypot(x1 - x0, y1 - y0) > 8)
            tl_buf_printf(o, "<line class=\"move\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                             "marker-end=\"url(#arrow)\"/>", x0, y0, x1, y1);
        if (has[0])
            tl_buf_printf(o, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"5\" fill=\"#fff\" stroke=\"" C_BLUE "\" "
                             "stroke-width=\"2\"/>", x0, y0);
        if (has[1])
            tl_buf_printf(o, "<path d=\"M%.1f %.1fl6 10h-12z\" fill=\"" C_VERM "\" stroke=\"#000\" "
                             "stroke-width=\"0.5\"/>", x1, y1 - 6);
        tl_buf_adds(o, "</g>\n");
        tl_buf_free(&t);
    }
    /* the legend */
    tl_buf_printf(o, "<circle cx=\"100\" cy=\"34\" r=\"5\" fill=\"#fff\" stroke=\"" C_BLUE "\" stroke-width=\"2\"/>"
                     "<text x=\"110\" y=\"38\">");
    tl_html_text(o, r->side[0]);
    tl_buf_adds(o, "</text>");
    if (r->side[1]) {
        tl_buf_adds(o, "<path d=\"M100 48l6 10h-12z\" fill=\"" C_VERM "\"/><text x=\"110\" y=\"58\">");
        tl_html_text(o, r->side[1]);
        tl_buf_adds(o, "</text>");
    }
    tl_buf_adds(o, "\n</svg>\n");
}

/* ---- the call tree ----------------------------------------------------------------------- */

/* A node's fill: the change on a diverging scale (vermillion slower, blue faster, at full
 * strength from 50%), grey within the noise; a one-sided node is white (outlined). */
static void node_fill(char *buf, size_t n, const tl_page_node *nd)
{
    if (nd->side) {
        snprintf(buf, n, "#ffffff");
        return;
    }
    if (nd->noise || isnan(nd->pct)) {
        snprintf(buf, n, "#cccccc");
        return;
    }
    double s = fmin(fabs(nd->pct) / 50, 1);
    /* from a pale tint to the full colour */
    int r0 = nd->pct > 0 ? 0xf6 : 0xc6, g0 = nd->pct > 0 ? 0xd8 : 0xdb, b0 = nd->pct > 0 ? 0xc4 : 0xef;
    int r1 = nd->pct > 0 ? 0xD5 : 0x00, g1 = nd->pct > 0 ? 0x5E : 0x72, b1 = nd->pct > 0 ? 0x00 : 0xB2;
    snprintf(buf, n, "#%02x%02x%02x", (int)(r0 + (r1 - r0) * s), (int)(g0 + (g1 - g0) * s), (int)(b0 + (b1 - b0) * s));
}

void tl_svg_tree(tl_buf *o, const tl_page_tree *t)
{
    enum { ROW = 20, TOP = 4 };
    unsigned depth = 0;
    for (size_t i = 0; i < t->n; i++)
        depth = t->nodes[i].depth + 1 > depth ? t->nodes[i].depth + 1 : depth;
    double h = TOP + ROW * (double)depth + 4, scale = t->total_us > 0 ? TL_SVG_W / t->total_us : 0;
    svg_open(o, h, "tree", "The call tree, differenced",
             "An icicle of the aligned call tree down to the lowest common ops: width is the baseline's GPU time, "
             "colour the change (vermillion and hatched slower, blue faster, grey within the noise, white one "
             "side only); click a node to zoom, click the top to zoom out.  The table below holds the numbers.");
    tl_buf_printf(o, "<g class=\"icicle\" data-total=\"%.17g\">\n", t->total_us);
    char a[64], b[64], c[64], fill[16];
    for (size_t i = 0; i < t->n; i++) {
        const tl_page_node *nd = &t->nodes[i];
        double x = nd->x_us * scale, w = nd->base_us * scale, y = TOP + ROW * (double)nd->depth;
        tl_buf tip = {0};
        tl_buf_printf(&tip, "%s: %s -> %s \xc2\xb5s (%s%%)%s", nd->name, tl_html_num(a, sizeof a, nd->base_us, 1),
                      tl_html_num(b, sizeof b, nd->var_us, 1), tl_html_signed(c, sizeof c, nd->pct, 1),
                      nd->side == 1 ? ", baseline only" : nd->side == 2 ? ", variant only" : nd->lca ? ", lowest common op" : "");
        node_fill(fill, sizeof fill, nd);
        tl_buf_printf(o, "<g class=\"n\" data-x=\"%.17g\" data-w=\"%.17g\" data-d=\"%u\"", nd->x_us, nd->base_us,
                      nd->depth);
        tl_buf_adds(o, " data-name=\"");
        tl_html_attr(o, nd->name);
        tl_buf_adds(o, "\"");
        tip_attr(o, tl_buf_cstr(&tip));
        tl_buf_adds(o, ">");
        tip_title(o, tl_buf_cstr(&tip));
        tl_buf_printf(o, "<rect x=\"%.2f\" y=\"%.0f\" width=\"%.2f\" height=\"%d\" fill=\"%s\"/>", x, y, w, ROW - 1,
                      fill);
        if (!nd->side && !nd->noise && nd->pct > 0)
            tl_buf_printf(o, "<rect class=\"h\" x=\"%.2f\" y=\"%.0f\" width=\"%.2f\" height=\"%d\" "
                             "fill=\"url(#hatch)\"/>", x, y, w, ROW - 1);
        tl_buf_printf(o, "<text x=\"%.2f\" y=\"%.0f\">", x + 3, y + 14);
        if (w > 30)
            label_text(o, nd->name, w < 7e4 ? (size_t)(w / 7) : 10000); /* w: a width a rounding may make huge */
        tl_buf_adds(o, "</text></g>\n");
        tl_buf_free(&tip);
    }
    tl_buf_adds(o, "</g></svg>\n");
}
