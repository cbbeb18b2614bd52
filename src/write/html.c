/*
 * html.c - the page (see html.h): its head and style, the sections in the order a reader
 * asks (the answer, where the time went, what moved, the roofline, the call tree), each
 * chart's table, and the one constant script.
 *
 * The page's Content-Security-Policy allows no source at all but the inline style and
 * that one script, by its SHA-256: were a name ever to slip through the escaping as
 * markup, the browser would still neither run it nor fetch anything.  A change of the
 * script must change TL_HTML_SCRIPT_HASH with it (tests/python/test_html.py checks).
 */
#include "write/html_int.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* The script: tooltips (any element with data-tip), the tables' filters (an input whose
 * data-filter names a table) and the call tree's zoom.  No name is ever written into it:
 * it reads them from the page's attributes. */
static const char script[] =
    "(function(){\"use strict\";\n"
    "var each=function(l,f){Array.prototype.forEach.call(l,f);};\n"
    "var tip=document.getElementById(\"tip\");\n"
    "document.addEventListener(\"mousemove\",function(e){\n"
    " var t=e.target.closest?e.target.closest(\"[data-tip]\"):null;\n"
    " if(!t){tip.hidden=true;return;}\n"
    " tip.textContent=t.getAttribute(\"data-tip\");tip.hidden=false;\n"
    " tip.style.left=Math.max(0,Math.min(e.pageX+12,document.documentElement.scrollWidth-tip.offsetWidth-8))+\"px\";\n"
    " tip.style.top=(e.pageY+16)+\"px\";});\n"
    "each(document.querySelectorAll(\"input[data-filter]\"),function(inp){\n"
    " var tb=document.getElementById(inp.getAttribute(\"data-filter\"));\n"
    " inp.addEventListener(\"input\",function(){\n"
    "  var q=inp.value.toLowerCase(),shown=0;\n"
    "  each(tb.tBodies[0].rows,function(r){var ok=!q||r.textContent.toLowerCase().indexOf(q)>=0;\n"
    "   r.hidden=!ok;if(ok)shown++;});\n"
    "  inp.setAttribute(\"data-shown\",shown);});});\n"
    "var ic=document.querySelector(\"g.icicle\");\n"
    "if(ic){var W=960,total=+ic.getAttribute(\"data-total\"),nodes=ic.querySelectorAll(\"g.n\");\n"
    " var zoom=function(x0,w){var s=W/w;\n"
    "  each(nodes,function(g){var x=(+g.getAttribute(\"data-x\")-x0)*s,nw=+g.getAttribute(\"data-w\")*s;\n"
    "   var vis=nw>0&&x<W&&x+nw>0;g.style.display=vis?\"\":\"none\";if(!vis)return;\n"
    "   var cx=Math.max(x,0),cw=Math.min(x+nw,W)-cx,n=Math.floor(cw/7),name=g.getAttribute(\"data-name\");\n"
    "   each(g.querySelectorAll(\"rect\"),function(r){r.setAttribute(\"x\",cx);r.setAttribute(\"width\",cw);});\n"
    "   var t=g.querySelector(\"text\");t.setAttribute(\"x\",cx+3);\n"
    "   t.textContent=cw>30?(name.length>n?name.slice(0,Math.max(n-3,0))+\"...\":name):\"\";});\n"
    "  ic.setAttribute(\"data-zoom\",x0+\" \"+w);};\n"
    " ic.addEventListener(\"click\",function(e){var g=e.target.closest(\"g.n\");if(!g)return;\n"
    "  var w=+g.getAttribute(\"data-w\");if(w>0)zoom(+g.getAttribute(\"data-x\"),w);});\n"
    " document.getElementById(\"tree-reset\").addEventListener(\"click\",function(){zoom(0,total);});}\n"
    "document.documentElement.setAttribute(\"data-ready\",\"1\");\n"
    "})();\n";

/* base64 of the SHA-256 of `script` (CSP 'sha256-...'). */
#define TL_HTML_SCRIPT_HASH "X1Vi6fhFW9/AeobZ7A3+/wxwY9eg1SCi9zWjM5m4xoM="

static const char style[] =
    "body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',Helvetica,Arial,sans-serif;margin:0 auto;"
    "max-width:1000px;padding:0 16px 40px;color:#111;background:#fff}\n"
    "h1{font-size:22px;margin:18px 0 4px}h2{font-size:18px;margin:28px 0 6px;border-bottom:1px solid #ccc}"
    "h3{font-size:15px;margin:18px 0 4px}\n"
    "nav a{margin-right:14px}.headline{font-size:16px;font-weight:600;margin:8px 0}\n"
    "pre.summary{background:#f6f6f6;border:1px solid #ddd;padding:8px;overflow-x:auto;font-size:12px}\n"
    "svg.chart{width:100%;height:auto;display:block;margin:6px 0}\n"
    "svg text{font:12px system-ui,Helvetica,Arial,sans-serif;fill:#111}svg .tick{fill:#444;font-size:11px}\n"
    "svg .grid{stroke:#e2e2e2}svg .axis{stroke:#333}svg .whisker{stroke:#000;stroke-width:1.4;fill:none}\n"
    "svg .peak{stroke:#000;stroke-width:2}svg .peak.minor{stroke-dasharray:6 3;stroke-width:1.2}\n"
    "svg .peak.var{stroke:#555;stroke-dasharray:12 4}svg .peak.var.minor{stroke-dasharray:2 3}\n"
    "svg .move{stroke:#333;stroke-width:1.2}svg g.n{cursor:pointer}svg g.n rect{stroke:#fff;stroke-width:0.5}\n"
    "svg g.n text{font-size:11px;pointer-events:none}\n"
    "table{border-collapse:collapse;font-size:12px;margin:6px 0;width:100%}\n"
    "th,td{border-bottom:1px solid #e4e4e4;padding:2px 6px;text-align:right;vertical-align:top}\n"
    "th:first-child,td:first-child{text-align:left;word-break:break-all}th{background:#f2f2f2}\n"
    "table.heat td:first-child{white-space:nowrap;word-break:normal}td.slower{font-weight:600}td.faster{font-style:italic}\n"
    "input.filter{margin:4px 0;padding:2px 6px;width:280px}.note{color:#444;font-size:12px}\n"
    "#tip{position:absolute;background:#fff;border:1px solid #333;padding:4px 6px;font-size:12px;"
    "max-width:560px;pointer-events:none;word-break:break-all;box-shadow:2px 2px 4px rgba(0,0,0,.2)}\n"
    "@media print{#tip,input.filter,nav,button{display:none}h2{break-after:avoid}svg.chart{break-inside:avoid}}\n";

static void section(tl_buf *o, const char *id, const char *title)
{
    tl_buf_printf(o, "<section id=\"%s\"><h2>", id);
    tl_html_text(o, title);
    tl_buf_adds(o, "</h2>\n");
}

static void filter_box(tl_buf *o, const char *table_id, const char *what)
{
    tl_buf_printf(o, "<input class=\"filter\" type=\"search\" data-filter=\"%s\" placeholder=\"filter %s\" "
                     "aria-label=\"filter %s\">\n", table_id, what, what);
}

static void td_num(tl_buf *o, double v, int dec, int sign)
{
    char a[64];
    tl_buf_printf(o, "<td>%s</td>", sign ? tl_html_signed(a, sizeof a, v, dec) : tl_html_num(a, sizeof a, v, dec));
}

static void td_text(tl_buf *o, const char *s, const char *cls)
{
    if (cls)
        tl_buf_printf(o, "<td class=\"%s\">", cls);
    else
        tl_buf_adds(o, "<td>");
    tl_html_text(o, s);
    tl_buf_adds(o, "</td>");
}

/* A chart of stacked bars (the first TL_PAGE_MAX_BARS) and its table (all of them). */
static void bar_chart(tl_buf *o, const char *title, const char *table_id, const tl_page_bar *bars, size_t n)
{
    size_t drawn = n < TL_PAGE_MAX_BARS ? n : TL_PAGE_MAX_BARS;
    tl_svg_bars(o, title, bars, drawn);
    if (drawn < n)
        tl_buf_printf(o, "<p class=\"note\">the first %zu of %zu bars drawn; the table lists them all</p>\n", drawn, n);
    tl_buf_printf(o, "<table class=\"bars\" id=\"%s\"><thead><tr><th>side</th>", table_id);
    for (int k = 0; k < TL_PAGE_NPARTS; k++)
        tl_buf_printf(o, "<th>%s (ms)</th>", tl_page_part_names[k]);
    tl_buf_adds(o, "<th>total (ms)</th></tr></thead><tbody>\n");
    for (size_t i = 0; i < n; i++) {
        tl_buf_adds(o, "<tr>");
        td_text(o, bars[i].label, NULL);
        for (int k = 0; k < TL_PAGE_NPARTS; k++)
            td_num(o, bars[i].part_ms[k], 3, 0);
        td_num(o, bars[i].total_ms, 3, 0);
        tl_buf_adds(o, "</tr>\n");
    }
    tl_buf_adds(o, "</tbody></table>\n");
}

static void bars_section(tl_buf *o, const tl_page *p)
{
    if (!p->nbars && !p->nbar_sets)
        return;
    section(o, "time", "Where the time went");
    if (p->nbars)
        bar_chart(o, "Where the GPU time went, per side", "bars-sides", p->bars, p->nbars);
    for (size_t k = 0; k < p->nbar_sets; k++) {
        const tl_page_bar_set *b = &p->bar_sets[k];
        char id[32];
        snprintf(id, sizeof id, "bars-%zu", k);
        tl_buf_adds(o, "<h3>");
        tl_html_text(o, b->title);
        tl_buf_adds(o, "</h3>\n");
        if (b->note) {
            tl_buf_adds(o, "<p class=\"note\">");
            tl_html_text(o, b->note);
            tl_buf_adds(o, "</p>\n");
        }
        bar_chart(o, b->title, id, b->bars, b->n);
    }
    tl_buf_adds(o, "</section>\n");
}

static void tops_section(tl_buf *o, const tl_page_tops *t)
{
    if (!t || !t->n)
        return;
    section(o, "ops", t->title);
    tl_svg_tops(o, t);
    filter_box(o, "ops-table", "by name");
    tl_buf_adds(o, "<table id=\"ops-table\"><thead><tr><th>op</th><th>kernel time (ms)</th><th>calls</th>"
                   "<th>% of the kernel time</th></tr></thead><tbody>\n");
    for (size_t i = 0; i < t->n; i++) {
        tl_buf_adds(o, "<tr>");
        td_text(o, t->items[i].name, NULL);
        td_num(o, t->items[i].ms, 3, 0);
        td_num(o, t->items[i].calls, 0, 0);
        td_num(o, t->items[i].pct, 1, 0);
        tl_buf_adds(o, "</tr>\n");
    }
    tl_buf_adds(o, "</tbody></table>\n");
    if (t->rest) {
        char a[64];
        tl_buf_printf(o, "<p class=\"note\">and %zu more ops, %s ms in all</p>\n", t->rest,
                      tl_html_num(a, sizeof a, t->rest_ms, 3));
    }
    tl_buf_adds(o, "</section>\n");
}

/* A move's row carries its numbers at full precision too (data-*), for scripts. */
static void move_row(tl_buf *o, const tl_page_move *m)
{
    char a[64], b[64];
    tl_buf_adds(o, "<tr class=\"move\" data-name=\"");
    tl_html_attr(o, m->name);
    tl_buf_printf(o, "\" data-delta=\"%.17g\" data-pct=\"%.17g\" data-ci-lo=\"%.17g\" data-ci-hi=\"%.17g\" "
                     "data-verdict=\"%s\">", m->delta_ms, m->pct, m->ci_lo, m->ci_hi, m->verdict ? m->verdict : "");
    td_text(o, m->name, NULL);
    td_num(o, m->base_ms, 3, 0);
    td_num(o, m->var_ms, 3, 0);
    td_num(o, m->delta_ms, 3, 1);
    td_num(o, m->pct, 1, 1);
    if (isnan(m->ci_lo) || isnan(m->ci_hi))
        tl_buf_adds(o, "<td>-</td>");
    else
        tl_buf_printf(o, "<td>[%s, %s]</td>", tl_html_signed(a, sizeof a, m->ci_lo, 3),
                      tl_html_signed(b, sizeof b, m->ci_hi, 3));
    td_text(o, m->verdict ? m->verdict : "-", m->verdict && strcmp(m->verdict, "within noise") ? m->verdict : NULL);
    td_text(o, m->detail ? m->detail : "", NULL);
    tl_buf_adds(o, "</tr>\n");
}

static void moves_section(tl_buf *o, const tl_page *p)
{
    if (!p->nmoves)
        return;
    section(o, "moved", "What moved");
    for (size_t k = 0; k < p->nmoves; k++) {
        const tl_page_moves *m = &p->moves[k];
        tl_buf_adds(o, "<h3>");
        tl_html_text(o, m->title);
        tl_buf_adds(o, "</h3>\n");
        if (!m->n) {
            tl_buf_adds(o, "<p class=\"note\">no change listed</p>\n");
        } else {
            tl_svg_moves(o, m);
            char id[32];
            snprintf(id, sizeof id, "moves-%zu", k);
            filter_box(o, id, "by name");
            tl_buf_printf(o, "<table class=\"moves\" id=\"%s\"><thead><tr><th>name</th><th>baseline (ms)</th>"
                             "<th>variant (ms)</th><th>delta (ms)</th><th>delta %%</th><th>interval (ms)</th>"
                             "<th>verdict</th><th>detail</th></tr></thead><tbody>\n", id);
            for (size_t i = 0; i < m->n; i++)
                move_row(o, &m->items[i]);
            tl_buf_adds(o, "</tbody></table>\n");
        }
        if (m->note) {
            tl_buf_adds(o, "<p class=\"note\">");
            tl_html_text(o, m->note);
            tl_buf_adds(o, "</p>\n");
        }
    }
    tl_buf_adds(o, "</section>\n");
}

static void roofline_section(tl_buf *o, const tl_page *p)
{
    if (!p->nroofs)
        return;
    section(o, "roofline", p->roofs[0].side[1] ? "The roofline, before and after" : "The roofline");
    for (size_t k = 0; k < p->nroofs; k++) {
        const tl_page_roofline *r = &p->roofs[k];
        tl_buf_adds(o, "<h3>");
        tl_html_text(o, r->title);
        tl_buf_adds(o, "</h3>\n");
        if (!r->gpu[0].name)
            tl_buf_adds(o, "<p class=\"note\">no peak lines: give --gpu-arch NAME|FILE for them</p>\n");
        if (r->note) {
            tl_buf_adds(o, "<p class=\"note\">");
            tl_html_text(o, r->note);
            tl_buf_adds(o, "</p>\n");
        }
        tl_svg_roofline(o, r);
        tl_buf_printf(o, "<table class=\"roof\" id=\"roof-%zu\"><thead><tr><th>op</th>", k);
        int sides = r->side[1] ? 2 : 1;
        for (int s = 0; s < sides; s++) {
            tl_buf_adds(o, "<th>");
            tl_html_text(o, r->side[s]);
            tl_buf_adds(o, " FLOP/byte</th><th>");
            tl_html_text(o, r->side[s]);
            tl_buf_adds(o, " TFLOPS/s</th>");
        }
        tl_buf_adds(o, "<th>detail</th></tr></thead><tbody>\n");
        for (size_t i = 0; i < r->n; i++) {
            const tl_page_point *pt = &r->points[i];
            tl_buf_adds(o, "<tr>");
            td_text(o, pt->name, NULL);
            for (int s = 0; s < sides; s++) {
                td_num(o, pt->ai[s], 1, 0);
                td_num(o, pt->tflops[s], 2, 0);
            }
            td_text(o, pt->detail ? pt->detail : "", NULL);
            tl_buf_adds(o, "</tr>\n");
        }
        tl_buf_adds(o, "</tbody></table>\n");
    }
    tl_buf_adds(o, "</section>\n");
}

static void tree_section(tl_buf *o, const tl_page_tree *t)
{
    if (!t || !t->n)
        return;
    section(o, "tree", "The call tree, differenced");
    tl_buf_adds(o, "<p class=\"note\">width: ");
    tl_html_text(o, t->side[0]);
    tl_buf_adds(o, "'s GPU time; colour: the change to ");
    tl_html_text(o, t->side[1]);
    char a[64];
    tl_buf_printf(o, " (grey: within %s%%); click a node to zoom <button id=\"tree-reset\" type=\"button\">zoom out"
                     "</button></p>\n", tl_html_num(a, sizeof a, t->noise_pct, 0));
    tl_svg_tree(o, t);
    if (t->hidden)
        tl_buf_printf(o, "<p class=\"note\">%zu nodes too narrow to draw are left out (the table below has those "
                         "drawn)</p>\n", t->hidden);
    tl_buf_adds(o, "<details><summary>the tree as a table</summary>\n");
    filter_box(o, "tree-table", "by name");
    tl_buf_adds(o, "<table id=\"tree-table\"><thead><tr><th>op</th><th>depth</th><th>baseline (\xc2\xb5s)</th>"
                   "<th>variant (\xc2\xb5s)</th><th>change %</th><th>where</th></tr></thead><tbody>\n");
    for (size_t i = 0; i < t->n; i++) {
        const tl_page_node *nd = &t->nodes[i];
        tl_buf_adds(o, "<tr>");
        td_text(o, nd->name, NULL);
        tl_buf_printf(o, "<td>%u</td>", nd->depth);
        td_num(o, nd->base_us, 1, 0);
        td_num(o, nd->var_us, 1, 0);
        td_num(o, nd->pct, 1, 1);
        td_text(o, nd->side == 1 ? "baseline only" : nd->side == 2 ? "variant only" : nd->lca ? "lowest common op" : "",
                NULL);
        tl_buf_adds(o, "</tr>\n");
    }
    tl_buf_adds(o, "</tbody></table></details></section>\n");
}

void tl_html_write(const tl_page *p, tl_buf *o)
{
    tl_buf_adds(o, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
                   "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
                   "style-src 'unsafe-inline'; script-src 'sha256-" TL_HTML_SCRIPT_HASH "'\">\n"
                   "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>");
    tl_html_text(o, p->tool);
    tl_buf_adds(o, ": ");
    tl_html_text(o, p->title);
    tl_buf_printf(o, "</title>\n<style>%s</style></head><body>\n", style);
    tl_svg_defs(o);
    tl_buf_adds(o, "<h1>");
    tl_html_text(o, p->title);
    tl_buf_adds(o, "</h1>\n<nav><a href=\"#summary\">summary</a>");
    if (p->nbars || p->nbar_sets)
        tl_buf_adds(o, "<a href=\"#time\">where the time went</a>");
    if (p->tops && p->tops->n)
        tl_buf_adds(o, "<a href=\"#ops\">ops</a>");
    if (p->nmoves)
        tl_buf_adds(o, "<a href=\"#moved\">what moved</a>");
    if (p->nroofs)
        tl_buf_adds(o, "<a href=\"#roofline\">roofline</a>");
    if (p->tree && p->tree->n)
        tl_buf_adds(o, "<a href=\"#tree\">call tree</a>");
    for (size_t i = 0; i < p->nextras; i++) {
        tl_buf_adds(o, "<a href=\"#");
        tl_html_attr(o, p->extras[i].id);
        tl_buf_adds(o, "\">");
        tl_html_text(o, p->extras[i].title);
        tl_buf_adds(o, "</a>");
    }
    tl_buf_adds(o, "</nav>\n");
    section(o, "summary", "Summary");
    if (p->headline) {
        tl_buf_adds(o, "<p class=\"headline\">");
        tl_html_text(o, p->headline);
        tl_buf_adds(o, "</p>\n");
    }
    tl_buf_adds(o, "<pre class=\"summary\">");
    tl_html_text(o, p->summary_text);
    tl_buf_adds(o, "</pre></section>\n");
    bars_section(o, p);
    tops_section(o, p->tops);
    moves_section(o, p);
    roofline_section(o, p);
    tree_section(o, p->tree);
    for (size_t i = 0; i < p->nextras; i++) {
        tl_buf_adds(o, "<section id=\"");
        tl_html_attr(o, p->extras[i].id);
        tl_buf_adds(o, "\"><h2>");
        tl_html_text(o, p->extras[i].title);
        tl_buf_adds(o, "</h2>\n");
        p->extras[i].write(p->extras[i].ctx, o);
        tl_buf_adds(o, "</section>\n");
    }
    tl_buf_adds(o, "<p class=\"note\">Made by ");
    tl_html_text(o, p->tool);
    tl_buf_printf(o, " " TL_VERSION "; this page is one file and fetches nothing.</p>\n<div id=\"tip\" hidden></div>\n"
                     "<script>%s</script>\n</body></html>\n", script);
}
