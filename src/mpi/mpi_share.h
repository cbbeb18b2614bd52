/*
 * mpi_share.h - what the MPI front ends (tlreport-mpi, tlcompare-mpi) share: bytes between
 * processes (MPI counts are ints: long messages go in chunks), and a rank set's facts
 * read in shares (process p reads the ranks i with i % P == p) and gathered by the root,
 * packed (never the traces).
 */
#ifndef TL_MPI_SHARE_H
#define TL_MPI_SHARE_H

#include "base/util.h"
#include "ranks/ranks.h"

enum { TL_MPI_ROOT = 0 };

/* A front end's start: its name for messages, the allocator told to keep big blocks (a
 * rank's facts come and go in large tables), MPI started; this process's rank and the
 * number of processes into *me and *np. */
void tl_mpi_begin(const char *progname, int *argc, char ***argv, int *me, int *np);

/* The root's b to every process (the others' b replaced). */
void tl_mpi_bcast_bytes(tl_buf *b, int me);

/* b to the root; the root's receive of process `from`'s bytes into b. */
void tl_mpi_send_bytes(const tl_buf *b);
void tl_mpi_recv_bytes(int from, tl_buf *b);

/* A process's share of s (the facts of ranks me, me + np, ...) packed into b, each freed
 * once packed. */
void tl_mpi_pack_share(tl_rank_set *s, int me, int np, tl_buf *b);

/* Process `from`'s share into s->facts.  -1 with *err when it is not exactly its share. */
int tl_mpi_unpack_share(tl_rank_set *s, int from, int np, const tl_buf *b, tl_error *err);

/* The root: the other np - 1 processes' shares received into s (every share received,
 * whatever fails, so that no process waits on its send).  0, or -1 with *err. */
int tl_mpi_gather_shares(tl_rank_set *s, int np, tl_error *err);

#endif
