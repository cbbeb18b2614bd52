/*
 * csv_read.h - read one `<sheet>.csv` of a report directory into a table.
 *
 * RFC 4180 as pandas reads it: quoted fields may hold commas, doubled quotes and line
 * breaks; \n, \r\n and \r all end a record; a UTF-8 byte-order mark is skipped; blank
 * lines are skipped; a record with fewer fields than the header is padded with missing
 * cells; one with more is an error (pandas: "Expected 6 fields, saw 7").  Bytes are
 * carried through as they are (invalid UTF-8 included); a NUL byte is an error because
 * no cell text can hold one.
 */
#ifndef TL_CSV_READ_H
#define TL_CSV_READ_H

#include "read/csv_scan.h"
#include "table/table.h"

/* Parse `len` bytes of CSV text.  `label` names the source in error messages
 * (e.g. "runs/base/ops_summary.csv").  NULL and *err set on failure. */
tl_table *tl_csv_parse(const char *data, size_t len, const char *label, tl_arena *arena,
                       tl_error *err);

/* The same with the block scan of `level` (csv_scan.h): every level gives the same table
 * or the same error; tests and the fuzz target hold them to it. */
tl_table *tl_csv_parse_simd(const char *data, size_t len, const char *label, tl_arena *arena,
                            tl_error *err, tl_csv_simd level);

/* The same text read through a window of `window` bytes (at least 4), refilled as the
 * parse goes, the way a file is read: every window gives the same table or the same
 * error as the whole text at once (tests and the fuzz target hold it to that). */
tl_table *tl_csv_parse_window(const char *data, size_t len, size_t window, const char *label,
                              tl_arena *arena, tl_error *err, tl_csv_simd level);

/* How much of a file is in memory at once: the bytes are parsed while they are in the
 * cache, and a fresh buffer the size of the file, which costs a page fault per 4 KiB on
 * a virtual machine, is never needed.  A record longer than this doubles the window. */
#define TL_CSV_WINDOW ((size_t)256 << 10)

/* Read and parse a file. */
tl_table *tl_csv_read_file(const char *path, tl_arena *arena, tl_error *err);

/* The same, the file read through a window in `buf` (its memory reused from one file to
 * the next). */
tl_table *tl_csv_read_file_into(const char *path, tl_buf *buf, tl_arena *arena, tl_error *err);

#endif
