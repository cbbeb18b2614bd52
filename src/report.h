/*
 * report.h - a performance report: an .xlsx workbook or a directory of <sheet>.csv files
 * (SPEC §1, "What goes in").  Both kinds answer the same two questions: which sheets
 * are there, and what does this sheet hold.
 */
#ifndef TL_REPORT_H
#define TL_REPORT_H

#include "table.h"

typedef struct tl_xlsx tl_xlsx;

typedef struct tl_report {
    char *path;     /* as given on the command line */
    char *tag;      /* --names tag, or the file stem */
    tl_xlsx *xlsx;  /* NULL for a CSV directory */
    char **sheets;  /* CSV directory: the sheet names found (file stems), sorted */
    size_t nsheets;
    /* The strings of the sheets read from this report: arenas per report, so that
     * reports can be read in parallel; `scratch` for sheets whose results are written
     * and dropped: two, used in turn, so that one sheet can be read while the previous
     * one is still being written. */
    tl_arena arena;
    tl_arena scratch[2];
} tl_report;

/* Open the report at `path`: a directory is a CSV report, anything else must be an
 * .xlsx workbook.  Returns 0, or -1 with *err set. */
int tl_report_open(tl_report *r, const char *path, tl_error *err);

/* 1 when the report has the sheet. */
int tl_report_has_sheet(const tl_report *r, const char *sheet);

/* Read a sheet (NULL and *err set when it is absent or cannot be read), its strings in
 * `arena` (r->arena or one of r->scratch).  Different reports may be read from different
 * threads at once; one report from one thread at a time. */
tl_table *tl_report_read_sheet(tl_report *r, const char *sheet, tl_arena *arena, tl_error *err);

void tl_report_close(tl_report *r);

#endif
