/*
 * csv_write.h - a result table as pandas' to_csv(index=False) writes it (SPEC §4):
 * comma-separated, \n line ends, a field quoted only when it holds a comma, a quote or
 * a line break (quotes doubled), missing as an empty field, numbers as Python writes
 * them (numfmt.h), booleans as True/False.  A table without columns is a single newline.
 */
#ifndef TL_CSV_WRITE_H
#define TL_CSV_WRITE_H

#include "table/table.h"

#include <stdio.h>

/* Append the CSV text of t to b. */
void tl_csv_format(const tl_table *t, tl_buf *b);

/* Write t to the file at path.  Returns 0, or -1 with *err set. */
int tl_csv_write_file(const tl_table *t, const char *path, tl_error *err);

#endif
