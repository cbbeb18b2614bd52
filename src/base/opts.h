/*
 * opts.h - long options by argparse's rule: an option is its exact name, or any prefix of
 * a long option that no other long option of the program shares (`--output_csvs` for
 * `--output_csvs_dir`), so that commands written for TraceLens' Python tools keep working.
 * Each program lists its options as a table (data, one row per spelling); the parsers
 * look a name up, then act on the canonical spelling.
 */
#ifndef TL_BASE_OPTS_H
#define TL_BASE_OPTS_H

#include "base/util.h"

#include <stddef.h>

/* One spelling of an option ("-o", "--output_csvs_dir"). */
typedef struct tl_opt {
    const char *name;
    int takes_value; /* 1: a value follows (as the next argument or after '=') */
    int id;          /* the program's own code for what it does */
} tl_opt;

/* The row of `name` in opts[0..n): the exact spelling, else the one long option (two
 * dashes) that `name` is a prefix of.  NULL when none is, or when several are: then
 * `why` (may be NULL) says so, in argparse's words ("ambiguous option: --out could match
 * --output, --output_csvs_dir"), or "unknown option '...'". */
const tl_opt *tl_opt_find(const tl_opt *opts, size_t n, const char *name, tl_buf *why);

#endif
