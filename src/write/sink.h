/*
 * sink.h - the output stage: results stream into the workbook and the CSV directory as
 * the comparison makes them, under temporary names, and are moved into place together
 * at the end (SPEC §1: "Nothing is half-written").
 *
 * Streaming keeps memory to about one sheet's worth: a split sheet's results are
 * written (the workbook's on a background thread, the CSVs on the caller's), and then
 * freed.  The results the summary reads (gpu_timeline, ops_summary, kernel_summary)
 * are kept.
 */
#ifndef TL_SINK_H
#define TL_SINK_H

#include "io/output.h"
#include "table/result.h"
#include "write/xlsx_write.h"

typedef struct tl_out tl_out;

/*
 * Start the outputs: the workbook `xlsx` and the CSV directory `csv_dir` (NULL for
 * none).  summary_first: a summary sheet will lead the workbook.
 */
tl_out *tl_out_open(const char *xlsx, const char *csv_dir, int summary_first, tl_error *err);

/* The sink to give tl_run_groups(). */
tl_sink tl_out_sink(tl_out *o);

/*
 * A result too large to hold whole, given in parts of its records, in order (`total`: its
 * records in all; the first part at least 200 records, or all): each part appended to its
 * CSV and to its worksheet (tl_xlsx_writer_add_part), its table the sink's from then on.
 * The result is recorded once, with `total` rows and no table.  Returns 0 or -1 (err set).
 */
int tl_out_put_part(tl_out *o, const tl_result *r, size_t total, tl_error *err);

/* Every result so far, in order; a table is NULL once written unless the summary needs it. */
const tl_results *tl_out_results(const tl_out *o);

/* Finish the workbook (with the summary sheet, if any) and the CSVs, still under their
 * temporary names.  Returns 0 or -1 (err set). */
int tl_out_finish(tl_out *o, const tl_summary_sheet *summary, tl_error *err);

/* Move the finished outputs into place.  Returns 0 or -1 (err set). */
int tl_out_commit(tl_out *o, tl_error *err);

/* The same, together with the run's other outputs more[0..nmore) (the summary's files):
 * all are checked before any is moved (tl_output_commit), so a failure changes nothing. */
int tl_out_commit_with(tl_out *o, tl_output *const *more, size_t nmore, tl_error *err);

/* Free everything; outputs not committed are removed. */
void tl_out_free(tl_out *o);

#endif
