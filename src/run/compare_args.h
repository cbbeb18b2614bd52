/*
 * compare_args.h - tlcompare's option contract: its table (run/options.h) and the one
 * check holding every rule between its options.  The command line fills a
 * tl_compare_args from argv, the Python module from keyword arguments; both then call
 * tl_compare_args_check, which completes `run` for tl_compare_run.
 */
#ifndef TL_RUN_COMPARE_ARGS_H
#define TL_RUN_COMPARE_ARGS_H

#include "run/compare.h"
#include "run/options.h"

typedef struct tl_compare_args {
    tl_compare_opts run; /* what the run takes: the table sets fields, the check the rest */
    tl_strlist inputs;   /* REPORT ...: the positional arguments (the Python inputs' paths) */
    tl_strlist names;    /* --names TAG ... */
    tl_strlist sheets;   /* --sheets GROUP ... */
    tl_strlist captures; /* Python's captures=[DIR or None per input] */
    int quiet, verbose, timings, help, version;
    long jobs; /* -j: 0 when not given */
    /* the check's own: per input, its TRACE part of TRACE@DIR (malloc'd) and capture folder */
    char **split;
    const char **capture;
    char *arch_split; /* --gpu-arch BASE,VARIANT: the two names (malloc'd, the comma a NUL) */
} tl_compare_args;

extern const tl_tool tl_compare_tool;

/* The defaults (tl_compare_opts_init's). */
void tl_compare_args_init(tl_compare_args *a);

/*
 * Every rule between the options, and the inputs' TRACE@DIR spelling: completes a->run
 * (inputs, captures, tags, groups, the confidence as a fraction).  a->run.given, if the
 * caller has reports already open, must be set before.  Returns TL_RUN_OK, TL_RUN_USAGE
 * (a usage error) or TL_RUN_FAILED (an input that names no file), with the message in *err.
 */
int tl_compare_args_check(tl_compare_args *a, tl_error *err);

void tl_compare_args_free(tl_compare_args *a);

#endif
