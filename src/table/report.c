/*
 * report.c - the fields and dispatch every report shares (see report.h).
 */
#include "table/report.h"

#include <stdlib.h>
#include <string.h>

void tl_report_init(tl_report *r, const char *path)
{
    memset(r, 0, sizeof *r);
    tl_arena_init(&r->arena);
    tl_arena_init(&r->scratch[0]);
    tl_arena_init(&r->scratch[1]);
    r->path = tl_xstrdup(path);
}

int tl_report_has_sheet(const tl_report *r, const char *sheet)
{
    return r->ops && r->ops->has_sheet(r, sheet);
}

tl_table *tl_report_read_sheet(tl_report *r, const char *sheet, tl_arena *arena, tl_error *err)
{
    if (!r->ops) {
        tl_error_set(err, "%s: not open", r->path);
        return NULL;
    }
    const char *was = tl_reading(r->path);
    tl_table *t = r->ops->read_sheet(r, sheet, arena, err);
    tl_reading(was);
    return t;
}

int tl_report_forget_sheet(tl_report *r, const char *sheet)
{
    return r->ops && r->ops->forget ? r->ops->forget(r, sheet) : 0;
}

void tl_report_close(tl_report *r)
{
    if (r->ops && r->ops->close)
        r->ops->close(r);
    free(r->path);
    free(r->tag);
    tl_arena_free(&r->arena);
    tl_arena_free(&r->scratch[0]);
    tl_arena_free(&r->scratch[1]);
    memset(r, 0, sizeof *r);
}
