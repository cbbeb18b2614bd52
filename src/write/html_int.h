/*
 * html_int.h - what the page writer's files share (html.c: the page, its tables and its
 * script; html_svg.c: the charts).
 */
#ifndef TL_WRITE_HTML_INT_H
#define TL_WRITE_HTML_INT_H

#include "write/html.h"

/* The charts' width in SVG units (they scale to the page's width). */
#define TL_SVG_W 960

/* A number with `dec` decimals ("%.*f"), "-" for NaN, into buf. */
const char *tl_html_num(char *buf, size_t n, double v, int dec);
/* The same with its sign ("+1.234"). */
const char *tl_html_signed(char *buf, size_t n, double v, int dec);

/* The pattern and marker definitions the charts refer to (once per page). */
void tl_svg_defs(tl_buf *out);
/* The charts; each an <svg> element with a <title> and <desc>. */
void tl_svg_bars(tl_buf *out, const char *title, const tl_page_bar *bars, size_t n);
void tl_svg_tops(tl_buf *out, const tl_page_tops *t);
void tl_svg_moves(tl_buf *out, const tl_page_moves *m);
void tl_svg_roofline(tl_buf *out, const tl_page_roofline *r);
void tl_svg_tree(tl_buf *out, const tl_page_tree *t);

/* The names and fills of the timeline's parts. */
extern const char *const tl_page_part_names[TL_PAGE_NPARTS];

#endif
