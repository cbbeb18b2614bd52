/*
 * output.h - outputs appear whole or not at all (SPEC §1: "Nothing is half-written").
 *
 * Every output is first written under a temporary name where it can be renamed into
 * place: beside its target, or, for a CSV directory that exists already, inside it (the
 * directory may be a mount point, and a rename cannot cross file systems).  When all of
 * a run's outputs are complete, tl_output_commit() checks every target again, flushes
 * the files to disk, and only then renames them all, in one place: a run that fails,
 * even at the last output, changes nothing.  The temporary paths are remembered so that
 * a failure, or SIGINT / SIGTERM / SIGHUP, removes them.
 *
 * Targets:
 *  - absent, or a regular file: replaced by the rename; an existing file keeps its mode;
 *    a staged file that is also another output's (the same bytes staged once, under two
 *    names, as hard links) is made a file of its own before it takes another mode;
 *  - a symbolic link: the file it points to is written (the link stays a link);
 *  - a FIFO or a character device (a pipe, /dev/stdout, /dev/null): written through,
 *    never renamed over; the complete output is staged in $TMPDIR (or /tmp) first;
 *  - a directory (for a file), a socket or a block device: refused before anything is
 *    written.
 */
#ifndef TL_OUTPUT_H
#define TL_OUTPUT_H

#include "base/util.h"

typedef struct tl_output tl_output;

/* Install the signal handlers that remove temporary outputs (tl_cleanup_install).
 * Call once, early. */
void tl_output_install_cleanup(void);

/* Prepare the output `target`: a file, or with `dir` a directory of files.  Refuses a
 * target that can never be written (NULL, *err set: one line naming it); otherwise makes
 * its temporary file or directory (mode 0666 / 0777 less the umask). */
tl_output *tl_output_new(const char *target, int dir, tl_error *err);

/* The path to write: the temporary file, or the temporary directory. */
const char *tl_output_temp(const tl_output *o);

/* The target as given. */
const char *tl_output_target(const tl_output *o);

/* A directory output's file `name` (to be written now): returns its malloc'd path in the
 * temporary directory, remembered for the commit and the cleanup. */
char *tl_output_add(tl_output *o, const char *name);

/* Move outs[0..n) into place together (see above).  Returns 0, or -1 with *err set;
 * a failure found by the checks leaves every target as it was. */
int tl_output_commit(tl_output *const *outs, size_t n, tl_error *err);

/* Free an output; its temporaries are removed unless it was committed. */
void tl_output_free(tl_output *o);

/* 1 when paths a and b would name the same output (after symbolic links and "..",
 * existing or not), so that two outputs of one run cannot overwrite each other; 0 for
 * one character device (/dev/null, a terminal), which takes both. */
int tl_output_same_target(const char *a, const char *b);

/* 1 when the directory output `dir` (existing) is the input `input`, or would put a
 * file over it: `input` lies directly in `dir` under one of `names` or a name ending in
 * `suffix` (NULL: none), the files the output may hold.  A directory still to be made
 * holds no input. */
int tl_output_dir_holds(const char *dir, const char *const *names, size_t nnames, const char *suffix,
                        const char *input);

/* Remove every temporary path still tracked (on failure). */
void tl_output_cleanup(void);

/* Tests only: `hook` is called after each rename ("rename") and each fsync ("fsync") of
 * a commit, k counting them from 1 in each commit; NULL: none. */
void tl_output_set_test_hook(void (*hook)(const char *step, unsigned k));

#endif
