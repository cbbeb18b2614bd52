/*
 * html_text.c - the page's text: numbers as the page prints them and names escaped as
 * HTML text or attribute values (see html.h, html_int.h).  The page (html.c) and its
 * charts (html_svg.c) both write through it.
 */
#include "write/html_int.h"

#include <math.h>
#include <stdio.h>

const char *tl_html_num(char *buf, size_t n, double v, int dec)
{
    if (isnan(v))
        snprintf(buf, n, "-");
    else
        snprintf(buf, n, "%.*f", dec, v);
    return buf;
}

const char *tl_html_signed(char *buf, size_t n, double v, int dec)
{
    if (isnan(v))
        snprintf(buf, n, "-");
    else
        snprintf(buf, n, "%+.*f", dec, v);
    return buf;
}

static void escape(tl_buf *o, const char *s, int attr)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '&': tl_buf_adds(o, "&amp;"); break;
        case '<': tl_buf_adds(o, "&lt;"); break;
        case '>': tl_buf_adds(o, "&gt;"); break;
        case '"': tl_buf_adds(o, attr ? "&quot;" : "\""); break;
        case '\'': tl_buf_adds(o, attr ? "&#39;" : "'"); break;
        default:
            /* a name's control characters are data, not layout (text keeps its lines) */
            tl_buf_addc(o, (*p < 0x20 && !(!attr && *p == '\n')) || *p == 0x7f ? '?' : (char)*p);
        }
    }
}

void tl_html_text(tl_buf *o, const char *s) { escape(o, s ? s : "", 0); }
void tl_html_attr(tl_buf *o, const char *s) { escape(o, s ? s : "", 1); }
