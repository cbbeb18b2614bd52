/*
 * direct_out.h - a new file whose bulk is written around the page cache.
 *
 * A run's large outputs (a pair's TraceDiff files, a big comparison's CSVs: hundreds of
 * MB) are written once, flushed to disk by the commit, and not read back by the run.
 * Through the page cache each byte is first copied into a freshly allocated cache page,
 * then written back; on a virtual machine whose freed memory returns to the host, every
 * such page is also faulted in again (an 800 MB file: 1.8 s of kernel time, against
 * 0.1 s written direct).  Here whole 1 MiB blocks go straight to the disk (O_DIRECT) and
 * only the file's last partial block through the cache.  A direct write waits for the disk,
 * so a full block goes to a writer thread of the file's own while the next one is filled.
 * A file system that refuses direct writes gets ordinary ones, and so does a file smaller
 * than one block: it is never written before its close.
 */
#ifndef TL_DIRECT_OUT_H
#define TL_DIRECT_OUT_H

#include <stdio.h>

/* Create or truncate `path` for writing (mode 0666 less the umask, as fopen's "wb"): a
 * FILE for fwrite and fprintf (no seeking).  NULL with errno set when it cannot be
 * opened.  fclose() returns EOF, errno set, when a write or the close failed. */
FILE *tl_direct_fopen(const char *path);

#endif
