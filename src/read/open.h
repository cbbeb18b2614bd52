/*
 * open.h - open a report file or directory as the table/report.h interface: a
 * directory is a CSV report, anything else must be an .xlsx workbook (SPEC §1).
 */
#ifndef TL_READ_OPEN_H
#define TL_READ_OPEN_H

#include "table/report.h"

/* Open the report at `path`.  Returns 0, or -1 with *err set (r must still be closed). */
int tl_report_open(tl_report *r, const char *path, tl_error *err);

#endif
