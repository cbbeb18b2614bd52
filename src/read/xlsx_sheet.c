/*
 * xlsx_sheet.c - a worksheet read into a table (see xlsx_read.h): expat's handlers and
 * the reading itself - the fast scanner first (xlsx_scan.c), expat (xlsx_xml.c) when it
 * gives up.  What both do per row and cell is xlsx_cells.h / xlsx_cells.c.
 */
#include "read/xlsx_cells.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void xlsx_sheet_start(xlsx_parse *p, int el, const XML_Char **attrs)
{
    xlsx_sheet_state *st = p->state;

    switch (el) {
    case EL_ROW:
        xlsx_row_start(p, tl_xlsx_attr(attrs, "r"));
        break;
    case EL_CELL:
        xlsx_cell_start(p, tl_xlsx_attr(attrs, "r"), tl_xlsx_attr(attrs, "t"));
        break;
    case EL_V:
        st->has_v = 1;
        break;
    }
}

/* Ready the sheet state and a parse context for reading a sheet. */
static void xlsx_sheet_init(xlsx_parse *p, xlsx_sheet_state *st, tl_xlsx *x, const xlsx_sheet *sh,
                            tl_arena *arena, tl_error *err)
{
    memset(st, 0, sizeof *st);
    tl_builder_init(&st->b, arena);
    st->arena = arena;
    tl_xlsx_parse_init(p, x, PART_SHEET, sh->part, sh->name, err);
    p->on_start = xlsx_sheet_start;
    p->on_end = xlsx_sheet_end;
    p->text_v = &x->vbuf;
    p->text_t = &x->tbuf;
    p->state = st;
}

/* Free what reading a sheet took; the table too when it was not finished. */
static void xlsx_sheet_done(xlsx_sheet_state *st, int ok)
{
    free(st->hdr);
    free(st->sst_copy);
    if (!ok)
        tl_builder_abort(&st->b);
}

tl_table *tl_xlsx_read_sheet(tl_xlsx *x, const char *sheet, tl_arena *arena, tl_error *err)
{
    const xlsx_sheet *sh = tl_xlsx_find_sheet(x, sheet);
    xlsx_sheet_state st;
    zip_int64_t idx;
    xlsx_parse p;
    int ok;

    if (!sh) {
        tl_error_set(err, "%s: no sheet named '%s'", x->path, sheet);
        return NULL;
    }
    if (!sh->part) {
        tl_error_set(err, "%s, sheet '%s': the workbook's relationships have no entry '%s'",
                     x->path, sheet, sh->rid ? sh->rid : "(none: the sheet has no r:id)");
        return NULL;
    }
    idx = tl_xlsx_locate(x, sh->part);
    if (idx < 0) {
        tl_error_set(err, "%s, sheet '%s': part %s is missing", x->path, sheet, sh->part);
        return NULL;
    }
    if (!x->sst_loaded && !tl_xlsx_load_sst(x, err))
        return NULL;

    if (x->scanner != 1) {
        /* The scanner first.  Any failure, even one of the sheet's own (a bad cell),
         * sends the sheet to expat: its message then is the one expat's reading gives,
         * whatever the scanner got to.  What the scanner had put in `arena` stays there. */
        tl_error scratch = {0};
        const char *why;
        size_t where;
        int r;

        xlsx_sheet_init(&p, &st, x, sh, arena, x->scanner == 2 ? err : &scratch);
        r = tl_xs_read_sheet(&p, idx, &why, &where);
        xlsx_sheet_done(&st, r == XS_READ);
        if (r == XS_READ)
            return tl_builder_finish(&st.b);
        if (x->scanner == 2) {
            if (r == XS_GAVE_UP)
                tl_error_set(err, "%s, sheet '%s': the fast scanner gave up at byte %zu: %s",
                             x->path, sheet, where, why ? why : "?");
            return NULL;
        }
    }

    xlsx_sheet_init(&p, &st, x, sh, arena, err);
    ok = tl_xlsx_parse_part(&p, idx);
    xlsx_sheet_done(&st, ok);
    if (!ok)
        return NULL;
    /* No row with a value at all: no header, so a table of no columns and no rows. */
    return tl_builder_finish(&st.b);
}
