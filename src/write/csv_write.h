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

/* A CSV file written a table at a time, so that a sheet too large to hold whole can be
 * written in pieces of rows: open, append each piece (the first with its header line;
 * every piece with the same columns), close.  The text is the same as tl_csv_write_file
 * of the pieces' rows in one table.  open returns NULL with *err set; close returns 0,
 * or -1 with *err set (a write failed); close(NULL) does nothing (err may be NULL to
 * close after another failure). */
typedef struct tl_csv_file tl_csv_file;
tl_csv_file *tl_csv_open(const char *path, tl_error *err);
void tl_csv_append(tl_csv_file *f, const tl_table *t, int header);
int tl_csv_close(tl_csv_file *f, tl_error *err);

#endif
