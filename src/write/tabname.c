/*
 * tabname.c - worksheet names Excel accepts (see tabname.h).
 */
#include "write/tabname.h"

#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The UTF-8 sequence at s (NUL-terminated): its length and code point, or 0 when the
 * bytes there are not UTF-8 (one byte is then taken as not a character). */
static size_t utf8_next(const unsigned char *s, unsigned *cp)
{
    size_t n;
    unsigned c;

    if (s[0] < 0x80) {
        *cp = s[0];
        return 1;
    }
    if (s[0] < 0xC2 || s[0] > 0xF4)
        return 0;
    n = s[0] < 0xE0 ? 2 : s[0] < 0xF0 ? 3 : 4;
    c = s[0] & (0x7Fu >> n);
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        c = c << 6 | (s[i] & 0x3Fu);
    }
    if ((n == 3 && (c < 0x800 || (c >= 0xD800 && c <= 0xDFFF))) || (n == 4 && (c < 0x10000 || c > 0x10FFFF)))
        return 0;
    *cp = c;
    return n;
}

/* UTF-16 units of code point cp. */
static size_t units(unsigned cp) { return cp >= 0x10000 ? 2 : 1; }

/* Bytes of the longest prefix of valid UTF-8 text s that fits in `max` UTF-16 units. */
static size_t fit(const char *s, size_t max)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0, used = 0;
    unsigned cp;

    while (u[i]) {
        size_t k = utf8_next(u + i, &cp);
        if (used + units(cp) > max)
            break;
        used += units(cp);
        i += k;
    }
    return i;
}

char *tl_tab_legal(const char *name)
{
    const unsigned char *u = (const unsigned char *)name;
    tl_buf b = {0};
    char *out;
    size_t n;

    /* Every character kept or replaced by one '_', so the text stays valid UTF-8. */
    for (size_t i = 0; u[i];) {
        unsigned cp;
        size_t k = utf8_next(u + i, &cp);
        if (k == 0) {
            tl_buf_addc(&b, '_');
            i++;
        } else if (cp < 0x20 || (cp >= 0x7F && cp < 0xA0) || (cp < 0x7F && strchr("[]:*?/\\", (int)cp))) {
            tl_buf_addc(&b, '_');
            i += k;
        } else {
            tl_buf_add(&b, name + i, k);
            i += k;
        }
    }
    if (b.len == 0)
        tl_buf_addc(&b, '_');
    n = fit(tl_buf_cstr(&b), TL_TAB_MAX);
    out = tl_xmalloc(n + 1);
    memcpy(out, b.data, n);
    out[n] = '\0';
    tl_buf_free(&b);
    if (out[0] == '\'')
        out[0] = '_';
    if (out[n - 1] == '\'')
        out[n - 1] = '_';
    return out;
}

/*
 * Code point cp in the one case Excel compares in: ASCII and the Latin, Greek and Cyrillic
 * letters whose capitals sit at a fixed offset (or pair up, even/odd) from their small
 * letters.  Rarer scripts are compared as they are.
 */
static unsigned fold(unsigned cp)
{
    if (cp >= 'A' && cp <= 'Z')
        return cp + 32;
    if (cp < 0xC0)
        return cp;
    if ((cp >= 0xC0 && cp <= 0xDE && cp != 0xD7) || (cp >= 0x391 && cp <= 0x3AB && cp != 0x3A2) ||
        (cp >= 0x410 && cp <= 0x42F))
        return cp + 32;
    if (cp >= 0x400 && cp <= 0x40F)
        return cp + 80;
    if ((cp >= 0x100 && cp <= 0x137) || (cp >= 0x14A && cp <= 0x177) || (cp >= 0x460 && cp <= 0x4BF))
        return cp | 1;
    if ((cp >= 0x139 && cp <= 0x148) || (cp >= 0x179 && cp <= 0x17E))
        return (cp & 1) ? cp + 1 : cp;
    if (cp == 0x178)
        return 0xFF;
    return cp;
}

int tl_tab_same(const char *a, const char *b)
{
    const unsigned char *p = (const unsigned char *)a, *q = (const unsigned char *)b;

    while (*p && *q) {
        unsigned x, y;
        size_t i = utf8_next(p, &x), j = utf8_next(q, &y);
        if (i == 0)
            x = 0x110000 + *p, i = 1; /* a stray byte equals only itself */
        if (j == 0)
            y = 0x110000 + *q, j = 1;
        if (fold(x) != fold(y))
            return 0;
        p += i;
        q += j;
    }
    return *p == *q;
}

static int taken_by(const char *tab, char *const *taken, size_t n)
{
    if (tl_tab_same(tab, "History"))
        return 1;
    for (size_t i = 0; i < n; i++)
        if (tl_tab_same(taken[i], tab))
            return 1;
    return 0;
}

char *tl_tab_unique(const char *name, char *const *taken, size_t n)
{
    char *base = tl_tab_legal(name), *tab = tl_xstrdup(base);

    for (unsigned k = 2; taken_by(tab, taken, n); k++) {
        char suffix[16];
        int sl = snprintf(suffix, sizeof suffix, "~%u", k);
        size_t keep = fit(base, TL_TAB_MAX - (size_t)sl);
        free(tab);
        tab = tl_xmalloc(keep + (size_t)sl + 1);
        memcpy(tab, base, keep);
        memcpy(tab + keep, suffix, (size_t)sl + 1);
        /* The name now ends in the suffix; a leading apostrophe was replaced already. */
    }
    free(base);
    return tab;
}

char **tl_tab_names(const char *const *names, size_t n)
{
    char **tabs = tl_xcalloc(n ? n : 1, sizeof *tabs);
    for (size_t i = 0; i < n; i++)
        tabs[i] = tl_tab_unique(names[i], tabs, i);
    return tabs;
}

void tl_tab_names_free(char **tabs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(tabs[i]);
    free(tabs);
}
