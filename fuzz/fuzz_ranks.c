/*
 * fuzz_ranks.c - rank-set matching and the collective report's sheets (MULTIRANK.md
 * §3-§7) on attacker-chosen collectives: how many each rank has, their process groups,
 * names, sizes, dtypes, split sizes, streams and times; and the packed facts a
 * distributed run sends its root (ranks/pack.c), unpacked from arbitrary bytes.
 *
 * Input: a header byte (world size 1-8, --all2allv_heatmap, gpus per node), then 16-byte
 * records, one collective kernel each (its rank, then one byte or two per field, each an
 * index into a small table of the values real and hostile traces hold).  Either the
 * sheets are refused with one line, or every sheet is a well-formed table.  Each rank's
 * facts, packed and unpacked, come back the same; the input itself, unpacked as a
 * message, is refused or read, never read past its end.
 */
#include "fuzz.h"

#include "ranks/ranks.h"
#include "table/result.h"

#include <math.h>

enum { REC = 16, MAX_RANKS = 8 };

static const char *const rkfz_pg[] = {NULL, "0", "1", "Unknown_Group"};
static const char *const rkfz_names[] = {NULL,        "allreduce",       "allgather", "reducescatter", "all_to_all",
                                         "all_to_allv", "_allgather_base", "broadcast", "all_to_allv"};
static const char *const rkfz_dtypes[] = {NULL, "Float", "BFloat16", "Long", "Bool", "weird"};
static const char *const rkfz_splits[] = {NULL,           "[]",     "[1, 2]", "[1024, -5, 3, 4]", "[1, x]",
                                          " [7,8 , 9,] ", "[9223372036854775807, 9223372036854775807]",
                                          "(1, 2, 3)"};

static tl_cval rkfz_str(const char *s, int repr)
{
    tl_cval v = {0};
    if (s) {
        v.kind = repr ? TL_CV_REPR : TL_CV_STR;
        v.s = s;
    }
    return v;
}

static tl_cval rkfz_int(int64_t i)
{
    tl_cval v = {.kind = TL_CV_INT, .i = i};
    return v;
}

/* A number field from two bytes: missing, an int (maybe negative), or a float. */
static tl_cval rkfz_num(uint8_t sel, uint8_t b)
{
    switch (sel % 4) {
    case 0:
        return (tl_cval){0};
    case 1:
        return rkfz_int((int64_t)b * 1000);
    case 2:
        return rkfz_int(-(int64_t)b);
    default: {
        tl_cval v = {.kind = TL_CV_FLOAT, .f = b / 3.0};
        return v;
    }
    }
}

static void rkfz_row(const uint8_t *p, long n, tl_coll_row *r)
{
    memset(r, 0, sizeof *r);
    r->v[TL_COLL_PG_NAME] = rkfz_str(rkfz_pg[p[1] % 4], 0);
    r->v[TL_COLL_PG_RANKS] = rkfz_str(p[2] % 3 == 0 ? NULL : p[2] % 3 == 1 ? "[0, 1]" : "(0, 9)", p[2] % 3 == 2);
    r->v[TL_COLL_NAME] = rkfz_str(rkfz_names[p[3] % 9], 0);
    r->v[TL_COLL_GROUP_SIZE] = p[4] % 4 == 0 ? (tl_cval){0} : p[4] % 4 == 1 ? rkfz_int(n) : rkfz_num(p[4], p[4]);
    r->v[TL_COLL_DTYPE] = rkfz_str(rkfz_dtypes[p[5] % 6], 0);
    r->v[TL_COLL_IN_NELEMS] = rkfz_num(p[6], p[7]);
    r->v[TL_COLL_OUT_NELEMS] = rkfz_num(p[6] >> 2, p[8]);
    r->v[TL_COLL_IN_SPLIT] = rkfz_str(rkfz_splits[p[9] % 8], p[9] % 8 == 7);
    r->v[TL_COLL_OUT_SPLIT] = rkfz_str(rkfz_splits[(p[9] >> 3) % 8], 0);
    r->v[TL_COLL_STREAM] = p[10] % 3 ? rkfz_int(p[10] % 3) : (tl_cval){0};
    r->ts = (double)(p[11] | p[12] << 8) + (p[13] & 1 ? 0.5 : 0);
    r->dur = p[14] == 255 ? -1 : (double)p[14];
    r->ts_int = !(p[13] & 1);
    r->dur_int = !(p[15] & 1);
    int bytes = tl_coll_dtype_bytes(&r->v[TL_COLL_DTYPE]);
    r->in_mb = r->out_mb = NAN;
    if (bytes && r->v[TL_COLL_IN_NELEMS].kind == TL_CV_INT)
        r->in_mb = (double)r->v[TL_COLL_IN_NELEMS].i * bytes / 1048576.0;
    if (bytes && r->v[TL_COLL_OUT_NELEMS].kind == TL_CV_INT)
        r->out_mb = (double)r->v[TL_COLL_OUT_NELEMS].i * bytes / 1048576.0;
}

/* Packed and unpacked, a rank's facts come back the same. */
static void rkfz_roundtrip(const tl_rank_facts *f)
{
    tl_buf b = {0};
    tl_rank_facts_pack(f, &b);
    tl_rank_facts g;
    tl_error err = {0};
    TL_FUZZ_CHECK(tl_rank_facts_unpack(b.data, b.len, &g, &err) == 0);
    /* unpacked facts are compacted: their rows compared made whole again */
    TL_FUZZ_CHECK(tl_rank_facts_nrows(&g) == f->rows.n && g.ndevices == f->ndevices);
    for (size_t i = 0; i < f->rows.n; i++) {
        tl_coll_row row;
        tl_rank_facts_row(&g, i, &row);
        const tl_coll_row *x = &f->rows.v[i], *y = &row;
        TL_FUZZ_CHECK(x->rank == y->rank && memcmp(&x->ts, &y->ts, sizeof x->ts) == 0 &&
                      memcmp(&x->dur, &y->dur, sizeof x->dur) == 0 && x->ts_int == y->ts_int &&
                      x->dur_int == y->dur_int);
        for (int k = 0; k < TL_COLL_NKEYS; k++)
            TL_FUZZ_CHECK(tl_cval_cmp(&x->v[k], &y->v[k]) == 0 && x->v[k].kind == y->v[k].kind);
    }
    /* every cut of the message is refused */
    for (size_t cut = 0; cut < b.len; cut += 1 + b.len / 16) {
        tl_rank_facts h;
        TL_FUZZ_CHECK(tl_rank_facts_unpack(b.data, cut, &h, &err) < 0);
    }
    tl_rank_facts_free(&g);
    tl_buf_free(&b);
}

int tl_fuzz_ranks(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    /* the input as a packed message: refused or read */
    tl_rank_facts m;
    tl_error merr = {0};
    if (tl_rank_facts_unpack(data, size, &m, &merr) == 0)
        tl_rank_facts_free(&m);
    else
        TL_FUZZ_CHECK(merr.msg[0] && !strchr(merr.msg, '\n'));

    long n = 1 + data[0] % MAX_RANKS;
    tl_rank_set set = {0};
    set.n = (size_t)n;
    set.paths = calloc((size_t)n, sizeof *set.paths);
    set.facts = calloc((size_t)n, sizeof *set.facts);
    TL_FUZZ_CHECK(set.paths && set.facts);
    for (long i = 0; i < n; i++) {
        char p[48];
        snprintf(p, sizeof p, "rank%ld_trace.json", i);
        set.paths[i] = strdup(p);
        set.facts[i].ndevices = data[0] >> 6;
    }
    for (size_t at = 1; at + REC <= size && at < 1 + 512 * REC; at += REC) {
        long rank = data[at] % n;
        tl_coll_rows *rows = &set.facts[rank].rows;
        if (rows->n == rows->cap) {
            rows->cap = rows->cap ? 2 * rows->cap : 8;
            rows->v = realloc(rows->v, rows->cap * sizeof *rows->v);
            TL_FUZZ_CHECK(rows->v != NULL);
        }
        rkfz_row(data + at, n, &rows->v[rows->n]);
        rows->v[rows->n++].rank = rank;
    }
    for (long i = 0; i < n; i++)
        rkfz_roundtrip(&set.facts[i]);

    tl_ranks_opts o = {.mode = TL_RANKS_PATTERN, .world_size = n, .heatmap = data[0] & 8,
                       .gpus_per_node = (data[0] >> 4) & 3};
    tl_arena a;
    tl_arena_init(&a);
    tl_results res = {0};
    tl_error err = {0};
    if (tl_ranks_sheets(&set, &o, &a, &res, &err) == 0) {
        for (size_t i = 0; i < res.n; i++)
            tl_fuzz_check_table(res.items[i].table, 0);
    } else {
        TL_FUZZ_CHECK(err.msg[0] && !strchr(err.msg, '\n'));
    }
    tl_results_free(&res);
    tl_arena_free(&a);
    tl_rank_set_free(&set);
    return 0;
}

#ifndef TL_FUZZ_NO_MAIN
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) { return tl_fuzz_ranks(data, size); }
#endif
