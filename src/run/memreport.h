/*
 * memreport.h - a report whose sheets a caller builds in memory (the Python module's
 * already-loaded reports, dict[str, DataFrame]), read by the comparison like any other.
 *
 * Each sheet is given as a header and raw cells row by row, as a reader finds them
 * (table/table.h's builder): numbers as numbers, text as text, so that a sheet typed by
 * pandas compares as the same sheet read from its CSV file.
 */
#ifndef TL_RUN_MEMREPORT_H
#define TL_RUN_MEMREPORT_H

#include "table/report.h"

/* Open an empty in-memory report named `name` (its default tag; messages). */
void tl_mem_report_open(tl_report *r, const char *name);

/* Begin sheet `sheet` with its column names (NULL or "" for none): returns the builder
 * to give its rows (tl_builder_cell / tl_builder_end_row), valid until the sheet ends.
 * Text cells' strings must be copied with tl_mem_report_text. */
tl_builder *tl_mem_report_begin_sheet(tl_report *r, const char *sheet, const char *const *names, size_t ncols);

/* A copy of text s[0..n) that lives as long as the report. */
const char *tl_mem_report_text(tl_report *r, const char *s, size_t n);

/* Add table t as sheet `sheet` whole, taken over (no builder, no copy: a sheet already
 * typed, as another report read or made it); the name and t's strings are borrowed and must
 * outlive the report.  Returns 0, or -1 with *err set when a sheet of that name is there
 * already (t is then freed). */
int tl_mem_report_put_sheet(tl_report *r, const char *sheet, tl_table *t, tl_error *err);

/* End the sheet begun last.  Returns 0, or -1 with *err set when it is too big (the
 * bounds of table/table.h) or a sheet of that name is there already. */
int tl_mem_report_end_sheet(tl_report *r, tl_error *err);

/* A copy of a table's columns and cells (its strings shared: they must outlive it). */
tl_table *tl_table_copy(const tl_table *t);

#endif
