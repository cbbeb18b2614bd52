/*
 * report.h - a report: a set of named sheets that can be read as tables.
 *
 * The comparison sees every input through this one interface; where the sheets come
 * from (a directory of CSV files, an .xlsx workbook, a profiler trace whose sheets are
 * built on opening) is the business of the reader that opened it (read/, trace/).
 */
#ifndef TL_REPORT_H
#define TL_REPORT_H

#include "base/arena.h"
#include "table/table.h"

typedef struct tl_report tl_report;

/* What a kind of report does; `impl` is the reader's own state. */
typedef struct tl_report_ops {
    int (*has_sheet)(const tl_report *r, const char *sheet);
    tl_table *(*read_sheet)(tl_report *r, const char *sheet, tl_arena *arena, tl_error *err);
    void (*close)(tl_report *r); /* frees impl */
    int (*forget)(tl_report *r, const char *sheet); /* optional: see tl_report_forget_sheet */
} tl_report_ops;

struct tl_report {
    char *path;     /* as given on the command line */
    char *tag;      /* --names tag, or the default tag */
    const char *kind; /* "csv", "xlsx", "trace": what the reader recognised */
    const tl_report_ops *ops;
    void *impl;
    /* The strings of the sheets read from this report: arenas per report, so that
     * reports can be read in parallel; `scratch` for sheets whose results are written
     * and dropped: two, used in turn, so that one sheet can be read while the previous
     * one is still being written. */
    tl_arena arena;
    tl_arena scratch[2];
};

/* Set up the fields every report has (path copied); the reader then sets ops and impl. */
void tl_report_init(tl_report *r, const char *path);

/* 1 when the report has the sheet. */
int tl_report_has_sheet(const tl_report *r, const char *sheet);

/* Read a sheet (NULL and *err set when it is absent or cannot be read), its strings in
 * `arena` (r->arena or one of r->scratch) or, for a reader that holds the sheet's texts
 * itself, in the reader's own memory (freed by tl_report_close, as the arenas are).
 * Different reports may be read from different threads at once; one report from one
 * thread at a time. */
tl_table *tl_report_read_sheet(tl_report *r, const char *sheet, tl_arena *arena, tl_error *err);

/* The caller will not read `sheet` again: a reader that holds the sheet in memory may
 * free it (tl_report_has_sheet still says it is there; reading it again fails).  A
 * comparison reads each sheet once, and a trace's sheets would otherwise stay in memory
 * beside every sheet compared after them.  Returns 1 when memory was freed. */
int tl_report_forget_sheet(tl_report *r, const char *sheet);

/* Close the reader and free everything (safe on a report that failed to open). */
void tl_report_close(tl_report *r);

#endif
