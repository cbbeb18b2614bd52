/*
 * result.c - result lists and the collecting sink (see result.h).
 */
#include "table/result.h"

#include <stdlib.h>
#include <string.h>

void tl_results_free(tl_results *r)
{
    for (size_t i = 0; i < r->n; i++)
        tl_table_free(r->items[i].table);
    free(r->items);
    memset(r, 0, sizeof *r);
}

void tl_results_add(tl_results *out, const char *name, tl_table *t)
{
    TL_GROW(out->items, out->cap, out->n + 1);
    tl_result *r = &out->items[out->n++];
    memset(r, 0, sizeof *r);
    r->name = name;
    r->table = t;
    r->nrows = t->nrows;
    r->ncols = t->ncols;
}

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && memcmp(s + n - m, suffix, m) == 0;
}

int tl_result_hides(const tl_result *r, const char *name)
{
    for (const char *const *s = r->hidden_suffixes; s && *s; s++)
        if (ends_with(name, *s))
            return 1;
    return 0;
}

static int results_put(void *ctx, const tl_result *r, tl_error *err)
{
    tl_results *out = ctx;
    (void)err;
    TL_GROW(out->items, out->cap, out->n + 1);
    out->items[out->n++] = *r;
    return 0;
}

tl_sink tl_results_sink(tl_results *out) { return (tl_sink){results_put, NULL, out}; }

