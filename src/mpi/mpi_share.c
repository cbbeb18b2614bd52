/*
 * mpi_share.c - bytes between MPI processes and a rank set read in shares (mpi_share.h).
 */
#include "mpi/mpi_share.h"

#include <mpi.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include <stdint.h>
#include <string.h>

enum { ROOT = TL_MPI_ROOT, TAG_SIZE = 1, TAG_DATA = 2, CHUNK = 1 << 30 };

/* ---- bytes between processes (MPI counts are ints: long messages go in chunks) ---------- */

void tl_mpi_bcast_bytes(tl_buf *b, int me)
{
    uint64_t n = me == ROOT ? b->len : 0;
    MPI_Bcast(&n, 1, MPI_UINT64_T, ROOT, MPI_COMM_WORLD);
    if (me != ROOT) {
        tl_buf_clear(b);
        tl_buf_reserve(b, (size_t)n + 1);
        b->len = (size_t)n;
    }
    for (uint64_t off = 0; off < n; off += CHUNK) {
        uint64_t k = n - off < CHUNK ? n - off : CHUNK;
        MPI_Bcast(b->data + off, (int)k, MPI_BYTE, ROOT, MPI_COMM_WORLD);
    }
}

void tl_mpi_send_bytes(const tl_buf *b)
{
    uint64_t n = b->len;
    MPI_Send(&n, 1, MPI_UINT64_T, ROOT, TAG_SIZE, MPI_COMM_WORLD);
    for (uint64_t off = 0; off < n; off += CHUNK) {
        uint64_t k = n - off < CHUNK ? n - off : CHUNK;
        MPI_Send(b->data + off, (int)k, MPI_BYTE, ROOT, TAG_DATA, MPI_COMM_WORLD);
    }
}

void tl_mpi_recv_bytes(int from, tl_buf *b)
{
    uint64_t n;
    MPI_Recv(&n, 1, MPI_UINT64_T, from, TAG_SIZE, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    tl_buf_clear(b);
    tl_buf_reserve(b, (size_t)n + 1);
    b->len = (size_t)n;
    for (uint64_t off = 0; off < n; off += CHUNK) {
        uint64_t k = n - off < CHUNK ? n - off : CHUNK;
        MPI_Recv(b->data + off, (int)k, MPI_BYTE, from, TAG_DATA, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
}

/* ---- the facts: packed by each process, gathered by the root ----------------------------- */

static void put_u64(tl_buf *b, uint64_t v) { tl_buf_add(b, (const char *)&v, sizeof v); }

/* A share packed: per rank read, its index, its packed length, its facts. */
void tl_mpi_pack_share(tl_rank_set *s, int me, int np, tl_buf *b)
{
    tl_buf one = {0};
    for (size_t i = (size_t)me; i < s->n; i += (size_t)np) {
        tl_buf_clear(&one);
        tl_rank_facts_pack(&s->facts[i], &one);
        put_u64(b, i);
        put_u64(b, one.len);
        tl_buf_add(b, one.data, one.len);
        tl_rank_facts_free(&s->facts[i]); /* sent: this process needs it no more */
    }
    tl_buf_free(&one);
}

/* Process `from`'s share into s->facts.  -1 with *err when it is not exactly its share. */
int tl_mpi_unpack_share(tl_rank_set *s, int from, int np, const tl_buf *b, tl_error *err)
{
    const char *p = b->data, *end = b->data + b->len;
    size_t want = (size_t)from, got = 0;
    while (p < end) {
        uint64_t i, n;
        if ((size_t)(end - p) < 16)
            break;
        memcpy(&i, p, 8);
        memcpy(&n, p + 8, 8);
        p += 16;
        if (i != want || n > (uint64_t)(end - p)) {
            tl_error_set(err, "process %d sent rank %llu, expected rank %zu", from, (unsigned long long)i, want);
            return -1;
        }
        tl_rank_facts_free(&s->facts[i]);
        tl_error e = {0};
        if (tl_rank_facts_unpack(p, (size_t)n, &s->facts[i], &e) < 0) {
            tl_error_set(err, "rank %zu of %zu, from process %d: %s", (size_t)i, s->n, from, e.msg);
            return -1;
        }
        p += n;
        want += (size_t)np;
        got++;
    }
    if (p != end || want < s->n) {
        tl_error_set(err, "process %d sent %zu ranks, not its share", from, got);
        return -1;
    }
    return 0;
}

int tl_mpi_gather_shares(tl_rank_set *s, int np, tl_error *err)
{
    tl_buf b = {0};
    int bad = 0;
    for (int from = 1; from < np; from++) {
        tl_mpi_recv_bytes(from, &b);
        if (!bad && tl_mpi_unpack_share(s, from, np, &b, err) < 0)
            bad = 1; /* keep receiving: the others wait on their sends */
    }
    tl_buf_free(&b);
    return bad ? -1 : 0;
}

void tl_mpi_begin(const char *progname, int *argc, char ***argv, int *me, int *np)
{
    tl_progname = progname;
#ifdef __GLIBC__
    mallopt(M_MMAP_THRESHOLD, 256 << 20);
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
#endif
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, me);
    MPI_Comm_size(MPI_COMM_WORLD, np);
}
