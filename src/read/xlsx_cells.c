/*
 * xlsx_cells.c - the part of the per-cell work (xlsx_cells.h) that is not inline: the
 * header row made into the table's column names.
 */
#include "read/xlsx_cells.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A header value as a column name: numbers as Python prints them, as pandas names them. */
static const char *xlsx_header_name(xlsx_sheet_state *st, const tl_cell *c)
{
    char buf[40];

    switch (c->kind) {
    case TL_STR:
        return c->v.s;
    case TL_INT:
        snprintf(buf, sizeof buf, "%" PRId64, c->v.i);
        break;
    case TL_FLOAT:
        /* The shortest text that reads back as the same double, like Python's repr. */
        for (int prec = 15; prec <= 17; prec++) {
            snprintf(buf, sizeof buf, "%.*g", prec, c->v.f);
            if (strtod(buf, NULL) == c->v.f)
                break;
        }
        break;
    case TL_BOOL:
        return c->v.b ? "True" : "False";
    default:
        return NULL;
    }
    return tl_arena_strdup(st->arena, buf);
}

/* The first row with a value names the columns (pandas skips blank rows before it). */
void tl_xlsx_commit_header(xlsx_sheet_state *st)
{
    size_t n = 0;
    const char **names;

    for (size_t i = 0; i < st->nhdr; i++)
        if (st->hdr[i].col + 1 > n)
            n = st->hdr[i].col + 1;
    /* Columns without a header cell stay NULL: the builder names them "Unnamed: N". */
    names = tl_xcalloc(n, sizeof *names);
    for (size_t i = 0; i < st->nhdr; i++)
        names[st->hdr[i].col] = xlsx_header_name(st, &st->hdr[i].cell);
    tl_builder_header(&st->b, names, n);
    free(names);
    st->have_header = 1;
    st->nhdr = 0;
}
