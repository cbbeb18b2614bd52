/*
 * output.h - outputs appear whole or not at all (SPEC §1: "Nothing is half-written").
 *
 * Every output is first written under a temporary name beside its target (same
 * directory, so the final rename is atomic) and renamed into place only when all of
 * them are complete.  The temporary paths are remembered so that a failure, or SIGINT /
 * SIGTERM / SIGHUP, removes them and leaves whatever was at the targets untouched.
 */
#ifndef TL_OUTPUT_H
#define TL_OUTPUT_H

#include "base/util.h"

/* Install the signal handlers that remove temporary outputs.  Call once, early. */
void tl_output_install_cleanup(void);

/* A new temporary file beside `target` (created empty, mode 0644 less the umask).
 * Returns its malloc'd path, or NULL with *err set. */
char *tl_output_temp_file(const char *target, tl_error *err);

/* A new temporary directory beside `target`.  Returns its malloc'd path or NULL. */
char *tl_output_temp_dir(const char *target, tl_error *err);

/* Remember a path inside a temporary directory, so that cleanup removes it too. */
void tl_output_track(const char *path);

/* Rename temporary file `tmp` to `target`.  Returns 0, or -1 with *err set. */
int tl_output_commit_file(const char *tmp, const char *target, tl_error *err);

/* Move the files names[0..n) (already written into temporary directory `tmp`) into the
 * directory `target`, creating it when absent; then remove `tmp`.  Returns 0 or -1. */
int tl_output_commit_dir(const char *tmp, const char *target, const char *const *names, size_t n,
                         tl_error *err);

/* Remove every temporary path still tracked (on failure). */
void tl_output_cleanup(void);

#endif
