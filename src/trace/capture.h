/*
 * capture.h - a capture folder (INFERENCE.md §1): the graph-capture traces a framework
 * profiled at start-up, and which batch size and graph mode each was captured for.
 *
 * The folder is input only: when execution_details.json is missing its entries are
 * computed in memory (§1.2) and never written back.  Capture traces are loaded when
 * first asked for, with Python functions, user annotations and args.kernel (§1.3), and
 * each at most once.
 */
#ifndef TL_TRACE_CAPTURE_H
#define TL_TRACE_CAPTURE_H

#include "trace/trace.h"

typedef struct tl_capture_entry {
    char *file;     /* as listed (relative to the folder) */
    char *path;     /* folder/file */
    int64_t batch;  /* tokens the graph was captured for */
    int piecewise;  /* 0 FULL, 1 PIECEWISE */
    int exists;     /* the file exists: a missing one still takes part in the round-up (§2.4) */
    tl_trace *trace; /* loaded by tl_capture_trace, or NULL */
} tl_capture_entry;

typedef struct tl_capture {
    char *dir;
    tl_capture_entry *e; /* the valid entries, in file order (duplicates kept: the later wins) */
    size_t n;
    int inferred;        /* no execution_details.json: the entries are §1.2's */
} tl_capture;

/* The name the folder's index goes by. */
#define TL_CAPTURE_DETAILS "execution_details.json"

/*
 * Open the capture folder `dir`: read execution_details.json (§1.1), or infer its
 * entries from the folder's traces (§1.2, which loads them).  Skipped entries and the
 * inferred entries are warned about.  Returns 0, or -1 with *err set naming the folder or
 * the file at fault (not a directory, no capture traces, a bad execution_details.json, no
 * usable capture trace).  c must be closed either way.
 */
int tl_capture_open(tl_capture *c, const char *dir, tl_error *err);

/* The same from the text of an execution_details.json in memory (for the tests and the
 * fuzzer): `dir` is only joined to the file names (whose existence is checked). */
int tl_capture_parse_details(tl_capture *c, const char *dir, const void *text, size_t n, tl_error *err);

void tl_capture_close(tl_capture *c);

/*
 * The entry to replay a step of `batch` tokens with `nlaunch` graph launches (§2.4): the
 * smallest listed batch size >= batch (missing files included), then its PIECEWISE entry
 * when there are both and nlaunch != 1, else whichever exists.  Returns the entry index,
 * -1 when no batch size is large enough, -2 when the chosen size has no existing file.
 * *size gets the chosen batch size (when one is found).
 */
long tl_capture_choose(const tl_capture *c, int64_t batch, size_t nlaunch, int64_t *size);

/* The loaded capture trace of entry i (loaded on first use).  NULL with *err set. */
tl_trace *tl_capture_trace(tl_capture *c, size_t i, tl_error *err);

/* §1.2 rules 1-3 on a capture trace loaded with TL_LOAD_PYTHON | TL_LOAD_ANNOT: its
 * batch size (-1: none) and mode (0 FULL, 1 PIECEWISE, -1 another: *mode_text says which,
 * an interned name of t). */
void tl_capture_classify(const tl_trace *t, int64_t *batch, int *mode, const char **mode_text);

/*
 * TRACE@DIR (INFERENCE.md §0.1): when the text before the last '@' names an existing
 * file and the whole argument does not, *trace gets that text (malloc'd) and *dir the
 * rest (pointing into arg); returns 1.  0 for any other argument.
 */
int tl_capture_split_arg(const char *arg, char **trace, const char **dir);

#endif
