/*
 * genreport - write a synthetic TraceLens performance report.
 *
 * tlcompare needs inputs that look like the reports people really have, in any size:
 * the bundled examples (--example, a small hand-designed pair of runs) and benchmark or
 * stress inputs (--rows N, N rows in every large sheet).  Every sheet has the column
 * layout of TraceLens' PyTorch report (the current one, with `Kernel name` in
 * kernel_summary), its value types (integers, floats, booleans, Python-literal strings,
 * blank cells) and realistic text: op names, shape tuples, long kernel names.
 *
 * A report is written as a CSV directory (one <sheet>.csv per sheet, in the formatting
 * pandas uses) and/or an .xlsx workbook (libxlsxwriter, constant-memory mode).
 *
 * Determinism: every random choice comes from a splitmix64 stream seeded by (seed, sheet,
 * row index), never by the order rows are visited.  That is what makes a baseline and a
 * candidate generated with the same seed comparable: a row's key is drawn from the same
 * stream in both, only its membership and its timings depend on the role.
 *
 * Depends on libc, libm, libxlsxwriter and the project's base/numfmt.h (numbers written
 * as Python writes them). *
 * (One file of ~2,800 lines: one program whose parts - the op templates, perf models,
 * kernel names, sheet layouts and writers, the random report and the hand-designed example
 * - all describe the same ops and share one data model; it is a tool, built and read on
 * its own.)
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <xlsxwriter.h>

#include "base/numfmt.h"

#define MAX_ROWS 1000000L /* well below Excel's 1,048,576-row sheet limit */
#define KNAME 1200        /* longest kernel name we build, with room to spare */
#define MAXARG 16
#define MAXDIM 5
#define MAXKERN 3
#define MAXPARAM 16

/* ---- errors and memory ------------------------------------------------------------------- */

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

static void die(const char *fmt, ...)
{
    va_list ap;
    fputs("genreport: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(1);
}

static void *xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q)
        die("out of memory");
    return q;
}

static void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p)
        die("out of memory");
    return p;
}

/* snprintf into a fixed buffer; a cut-off name would silently break key uniqueness. */
static void fmt_fixed(char *out, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void fmt_fixed(char *out, size_t n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int len = vsnprintf(out, n, fmt, ap);
    va_end(ap);
    if (len < 0 || (size_t)len >= n)
        die("internal error: a generated name does not fit in %zu bytes", n);
}

/* ---- random numbers ---------------------------------------------------------------------- */

/* splitmix64: tiny, fast, and every (seed, salt, row) triple gets its own stream. */
typedef struct {
    uint64_t s;
} rng_t;

static uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static uint64_t rng_next(rng_t *r)
{
    r->s += 0x9e3779b97f4a7c15ULL;
    return mix64(r->s);
}

static rng_t rng_at(uint64_t seed, uint64_t salt, uint64_t row)
{
    rng_t r = {mix64(mix64(seed ^ 0x6a09e667f3bcc909ULL) ^ mix64((salt << 40) ^ row))};
    return r;
}

static double rng_unit(rng_t *r) /* [0, 1) */
{
    return (double)(rng_next(r) >> 11) * 0x1.0p-53;
}

static int rng_below(rng_t *r, int n)
{
    return (int)(((rng_next(r) >> 32) * (uint64_t)n) >> 32);
}

static double rng_range(rng_t *r, double lo, double hi)
{
    return lo + (hi - lo) * rng_unit(r);
}

static double rng_logrange(rng_t *r, double lo, double hi)
{
    return exp(rng_range(r, log(lo), log(hi)));
}

static double rng_normal(rng_t *r) /* Box-Muller; one value is enough here */
{
    double u1 = 1.0 - rng_unit(r), u2 = rng_unit(r);
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

#define PICK(r, arr) ((arr)[rng_below((r), (int)(sizeof(arr) / sizeof((arr)[0])))])

/* ---- growable strings -------------------------------------------------------------------- */

typedef struct {
    char *p;
    size_t n, cap;
} sbuf;

static void sb_reserve(sbuf *b, size_t extra)
{
    if (b->n + extra + 1 <= b->cap)
        return;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->n + extra + 1)
        cap *= 2;
    b->p = xrealloc(b->p, cap);
    b->cap = cap;
}

static void sb_clear(sbuf *b)
{
    sb_reserve(b, 0);
    b->n = 0;
    b->p[0] = '\0';
}

static void sb_putn(sbuf *b, const char *s, size_t n)
{
    sb_reserve(b, n);
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = '\0';
}

static void sb_puts(sbuf *b, const char *s)
{
    sb_putn(b, s, strlen(s));
}

static void sb_putc(sbuf *b, char c)
{
    sb_putn(b, &c, 1);
}

static void sb_int(sbuf *b, long long v)
{
    char tmp[TL_NUMFMT_MAX];
    sb_putn(b, tmp, tl_fmt_int(v, tmp));
}

static void sb_free(sbuf *b)
{
    free(b->p);
    b->p = NULL;
    b->n = b->cap = 0;
}

/* ---- numbers ------------------------------------------------------------------------------ */

/*
 * Floats and integers are written as Python writes them by the project's numfmt.h (the
 * same text tlcompare writes).  Rounding to hundredths (round2) is exact integer
 * arithmetic: write |v| = m / 2^s (m a 53-bit integer), then round(m * 10^p / 2^s) is the
 * correctly rounded p-decimal scaling; in 1e-4 <= |v| < 1e15 every product fits in 128
 * bits.
 */
__extension__ typedef unsigned __int128 u128;

static u128 pow10_128(int p) /* 0 <= p <= 21 */
{
    static const uint64_t P[] = {1ULL, 10ULL, 100ULL, 1000ULL, 10000ULL, 100000ULL, 1000000ULL,
                                 10000000ULL, 100000000ULL, 1000000000ULL, 10000000000ULL,
                                 100000000000ULL, 1000000000000ULL, 10000000000000ULL,
                                 100000000000000ULL, 1000000000000000ULL, 10000000000000000ULL,
                                 100000000000000000ULL, 1000000000000000000ULL,
                                 10000000000000000000ULL};
    return p < 20 ? (u128)P[p] : (u128)P[19] * (p == 20 ? 10 : 100);
}

/* |v| = m / 2^s; only for 1e-4 <= |v| < 1e15, where 3 <= s <= 66. */
static void split_double(double v, uint64_t *m, int *s)
{
    int e;
    double f = frexp(fabs(v), &e); /* |v| = f * 2^e, 0.5 <= f < 1 */
    *m = (uint64_t)ldexp(f, 53);
    *s = 53 - e;
}

/* round(m * 10^p / 2^s), ties to even */
static uint64_t scaled_round(uint64_t m, int s, int p)
{
    u128 num = (u128)m * pow10_128(p);
    u128 q = num >> s, rem = num - (q << s), half = (u128)1 << (s - 1);
    if (rem > half || (rem == half && (q & 1)))
        q++;
    return (uint64_t)q;
}

static void sb_float(sbuf *b, double v)
{
    char tmp[TL_NUMFMT_MAX];
    sb_putn(b, tmp, tl_fmt_double(v, tmp));
}

/* Python's round(v, 2), as TraceLens shows means in trunc_kernel_details: the exactly
 * rounded (ties to even) hundredths, then the nearest double. */
static double round2(double v)
{
    uint64_t m;
    int s;
    if (fabs(v) < 1e-4)
        return 0.0 * v;
    if (fabs(v) >= 0x1p52) /* no fractional bits left */
        return v;
    if (fabs(v) >= 1e13) { /* hundredths beyond 2^53: let the C library round */
        char tmp[64];
        snprintf(tmp, sizeof tmp, "%.2f", v);
        return strtod(tmp, NULL);
    }
    split_double(v, &m, &s);
    double r = (double)scaled_round(m, s, 2) / 100.0;
    return v < 0 ? -r : r;
}

/* Kernel durations are measured in whole nanoseconds. */
static double round_ns(double us)
{
    return round(us * 1000.0) / 1000.0;
}

/* A float the way the PyTorch profiler prints a Concrete Input: C++ %.17g, "0." for 0. */
static void concrete_float(char *out, size_t n, double v)
{
    fmt_fixed(out, n, "%.17g", v);
    if (!strpbrk(out, ".en"))
        strncat(out, ".", n - strlen(out) - 1);
}

/* ---- output: CSV directory and/or xlsx workbook, cell by cell ---------------------------- */

struct emit {
    const char *csv_dir; /* NULL: no CSV output */
    const char *xlsx;    /* NULL: no workbook */
    FILE *csv;
    char *csv_buf;
    char csv_path[4096];
    lxw_workbook *wb;
    lxw_worksheet *ws;
    lxw_format *bold;
    const char *sheet;
    lxw_row_t row;
    int col, ncols;
};

static void make_dirs(const char *path)
{
    char buf[4096];
    struct stat st;

    if (strlen(path) >= sizeof buf)
        die("%s: path too long", path);
    strcpy(buf, path);
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(buf, 0777) != 0 && errno != EEXIST)
            die("%s: cannot create directory: %s", buf, strerror(errno));
        *p = '/';
    }
    if (mkdir(buf, 0777) != 0 && errno != EEXIST)
        die("%s: cannot create directory: %s", buf, strerror(errno));
    if (stat(buf, &st) != 0 || !S_ISDIR(st.st_mode))
        die("%s: not a directory", buf);
}

static void em_open(struct emit *e, const char *csv_dir, const char *xlsx)
{
    memset(e, 0, sizeof *e);
    e->csv_dir = csv_dir;
    e->xlsx = xlsx;
    if (csv_dir) {
        make_dirs(csv_dir);
        e->csv_buf = xcalloc(1, 1 << 20);
    }
    if (xlsx) {
        /* constant_memory streams each row to a temp file: flat memory for any N. */
        lxw_workbook_options opt = {.constant_memory = LXW_TRUE, .tmpdir = NULL, .use_zip64 = LXW_TRUE};
        e->wb = workbook_new_opt(xlsx, &opt);
        if (!e->wb)
            die("%s: cannot create workbook", xlsx);
        /* a fixed creation time keeps the workbook byte-for-byte reproducible */
        lxw_doc_properties props = {.comments = "synthetic TraceLens report written by genreport",
                                    .created = 1735689600 /* 2025-01-01 UTC */};
        if (workbook_set_properties(e->wb, &props) != LXW_NO_ERROR)
            die("%s: cannot set workbook properties", xlsx);
        e->bold = workbook_add_format(e->wb);
        format_set_bold(e->bold);
    }
}

static void em_close_csv(struct emit *e)
{
    if (!e->csv)
        return;
    if (ferror(e->csv) | fclose(e->csv))
        die("%s: write error", e->csv_path);
    e->csv = NULL;
}

static void em_xlsx_check(const struct emit *e, lxw_error err)
{
    if (err != LXW_NO_ERROR)
        die("%s: sheet %s, row %u: %s", e->xlsx, e->sheet, (unsigned)e->row + 1, lxw_strerror(err));
}

static void em_cell(struct emit *e)
{
    if (e->col >= e->ncols)
        die("internal error: sheet %s, row %u has more than %d cells", e->sheet, (unsigned)e->row + 1,
            e->ncols);
    if (e->csv && e->col > 0)
        putc(',', e->csv);
}

/* RFC 4180 with minimal quoting, as Python's csv module writes it. */
static void csv_field(FILE *f, const char *s)
{
    if (!strpbrk(s, ",\"\n\r")) {
        fputs(s, f);
        return;
    }
    putc('"', f);
    for (;;) {
        const char *q = strchr(s, '"');
        if (!q) {
            fputs(s, f);
            break;
        }
        fwrite(s, 1, (size_t)(q - s + 1), f);
        putc('"', f);
        s = q + 1;
    }
    putc('"', f);
}

static void em_missing(struct emit *e)
{
    em_cell(e);
    e->col++;
}

static void em_str(struct emit *e, const char *s)
{
    if (!s || !*s) { /* an empty string is how pandas stores NaN: a blank cell */
        em_missing(e);
        return;
    }
    em_cell(e);
    if (e->csv)
        csv_field(e->csv, s);
    if (e->ws)
        em_xlsx_check(e, worksheet_write_string(e->ws, e->row, (lxw_col_t)e->col, s,
                                                e->row == 0 ? e->bold : NULL));
    e->col++;
}

static void em_num(struct emit *e, double v)
{
    if (isnan(v)) {
        em_missing(e);
        return;
    }
    em_cell(e);
    if (e->csv) {
        char tmp[TL_NUMFMT_MAX];
        fwrite(tmp, 1, tl_fmt_double(v, tmp), e->csv);
    }
    if (e->ws)
        em_xlsx_check(e, worksheet_write_number(e->ws, e->row, (lxw_col_t)e->col, v, NULL));
    e->col++;
}

static void em_int(struct emit *e, long long v)
{
    em_cell(e);
    if (e->csv) {
        char tmp[TL_NUMFMT_MAX];
        fwrite(tmp, 1, tl_fmt_int(v, tmp), e->csv);
    }
    if (e->ws)
        em_xlsx_check(e, worksheet_write_number(e->ws, e->row, (lxw_col_t)e->col, (double)v, NULL));
    e->col++;
}

static void em_bool(struct emit *e, int v)
{
    em_cell(e);
    if (e->csv)
        fputs(v ? "True" : "False", e->csv);
    if (e->ws)
        em_xlsx_check(e, worksheet_write_boolean(e->ws, e->row, (lxw_col_t)e->col, v, NULL));
    e->col++;
}

static void em_end_row(struct emit *e)
{
    if (e->col != e->ncols)
        die("internal error: sheet %s, row %u has %d cells for %d columns", e->sheet,
            (unsigned)e->row + 1, e->col, e->ncols);
    if (e->csv)
        putc('\n', e->csv);
    e->row++;
    e->col = 0;
}

static void em_sheet(struct emit *e, const char *name, const char *const *cols, int ncols)
{
    em_close_csv(e);
    e->sheet = name;
    e->row = 0;
    e->col = 0;
    e->ncols = ncols;
    if (e->csv_dir) {
        fmt_fixed(e->csv_path, sizeof e->csv_path, "%s/%s.csv", e->csv_dir, name);
        e->csv = fopen(e->csv_path, "w");
        if (!e->csv)
            die("%s: %s", e->csv_path, strerror(errno));
        setvbuf(e->csv, e->csv_buf, _IOFBF, 1 << 20);
    }
    if (e->wb) {
        e->ws = workbook_add_worksheet(e->wb, name);
        if (!e->ws)
            die("%s: cannot add sheet %s", e->xlsx, name);
    }
    for (int i = 0; i < ncols; i++)
        em_str(e, cols[i]);
    em_end_row(e);
}

static void em_finish(struct emit *e)
{
    em_close_csv(e);
    free(e->csv_buf);
    e->csv_buf = NULL;
    if (e->wb) {
        lxw_error err = workbook_close(e->wb);
        e->wb = NULL;
        if (err != LXW_NO_ERROR)
            die("%s: %s", e->xlsx, lxw_strerror(err));
    }
}

/* ---- the data model: one op instance, as TraceLens aggregates it ------------------------- */

enum pm { PM_NONE, PM_GEMM, PM_SDPA_FWD, PM_SDPA_BWD, PM_CONV, PM_UNARY, PM_BINARY };

/* One argument of an op: a tensor (nd > 0), or a scalar / list / None (nd == 0, "()"). */
struct arg {
    int nd;
    long long dim[MAXDIM];
    long long stride[MAXDIM]; /* stride[0] == 0: contiguous, filled in by op_finish_args */
    const char *type;         /* 'c10::BFloat16', 'Scalar', 'TensorList', '' ... */
    char concrete[40];        /* Concrete Inputs text; '' for tensors */
};

struct stats { /* over all calls; times in microseconds */
    long long count;
    double sum, mean, median, std, min, max; /* std is NaN for a single call, like pandas */
};

struct kernel {
    char name[KNAME];
    double frac; /* share of the op's kernel time */
    int stream;
    struct stats st;
};

struct op {
    const char *name;
    const char *category;
    enum pm pm;
    char thread[48];
    int nargs;
    struct arg a[MAXARG];
    int nk;
    struct kernel k[MAXKERN];
    struct stats t;   /* direct kernel time per call (= subtree: these are leaf ops) */
    struct stats dur; /* CPU-side duration per call */
    long long uid;
};

enum role { BASELINE = 0, CANDIDATE = 1 };

/* What differs between the two runs besides timings: thread ids and streams. */
static const struct platform {
    int tid, tid_bwd, stream, comm_stream;
} PLAT[2] = {
    {41872, 41931, 7, 21}, /* baseline */
    {39504, 39577, 0, 3},  /* candidate */
};

static void op_reset(struct op *o, const char *name, const char *category, enum pm pm)
{
    o->name = name;
    o->category = category;
    o->pm = pm;
    o->nargs = 0;
    o->nk = 0;
    o->thread[0] = '\0';
    o->uid = 0;
}

static struct arg *op_arg(struct op *o)
{
    if (o->nargs >= MAXARG)
        die("internal error: op %s has more than %d arguments", o->name, MAXARG);
    struct arg *a = &o->a[o->nargs++];
    memset(a, 0, sizeof *a);
    return a;
}

/* A tensor argument with the given shape; contiguous unless strides are set after. */
static struct arg *op_tensor(struct op *o, const char *type, int nd, const long long *dims)
{
    struct arg *a = op_arg(o);
    a->type = type;
    a->nd = nd;
    for (int i = 0; i < nd; i++)
        a->dim[i] = dims[i];
    return a;
}

static void op_scalar(struct op *o, const char *type, const char *concrete)
{
    struct arg *a = op_arg(o);
    a->type = type;
    fmt_fixed(a->concrete, sizeof a->concrete, "%s", concrete);
}

#define DIMS(...) ((const long long[]){__VA_ARGS__})
#define NDIMS(...) ((int)(sizeof(DIMS(__VA_ARGS__)) / sizeof(long long)))
#define TENSOR(o, type, ...) op_tensor((o), (type), NDIMS(__VA_ARGS__), DIMS(__VA_ARGS__))

static void set_strides(struct arg *a, const long long *s)
{
    for (int i = 0; i < a->nd; i++)
        a->stride[i] = s[i];
}

#define STRIDES(a, ...) set_strides((a), DIMS(__VA_ARGS__))

static void op_finish_args(struct op *o)
{
    for (int i = 0; i < o->nargs; i++) {
        struct arg *a = &o->a[i];
        if (a->nd == 0 || a->stride[0] != 0)
            continue;
        long long s = 1;
        for (int d = a->nd - 1; d >= 0; d--) {
            a->stride[d] = s;
            s *= a->dim[d];
        }
    }
}

static void op_kernel(struct op *o, double frac, const char *name)
{
    if (o->nk >= MAXKERN)
        die("internal error: op %s has more than %d kernels", o->name, MAXKERN);
    struct kernel *k = &o->k[o->nk++];
    fmt_fixed(k->name, sizeof k->name, "%s", name);
    k->frac = frac;
}

static void op_set_thread(struct op *o, enum role role, int autograd)
{
    if (autograd)
        fmt_fixed(o->thread, sizeof o->thread, "thread %d (pt_autograd_0)", PLAT[role].tid_bwd);
    else
        fmt_fixed(o->thread, sizeof o->thread, "thread %d (python3)", PLAT[role].tid);
}

/* ---- dtypes ------------------------------------------------------------------------------ */

#define BF16 "c10::BFloat16"
#define F16 "c10::Half"
#define F32 "float"
#define I64 "long int"

static int bytes_per_elem(const char *type)
{
    if (!strcmp(type, BF16) || !strcmp(type, F16))
        return 2;
    if (!strcmp(type, F32) || !strcmp(type, "int"))
        return 4;
    if (!strcmp(type, "double") || !strcmp(type, I64))
        return 8;
    if (!strcmp(type, "bool"))
        return 1;
    return 0;
}

static const char *spec_dtype(const char *type)
{
    if (!strcmp(type, BF16))
        return "bf16";
    if (!strcmp(type, F16))
        return "fp16";
    if (!strcmp(type, "double"))
        return "fp64";
    return "fp32";
}

/* The element type as it appears inside kernel template names. */
static const char *cutlass_type(const char *type)
{
    return !strcmp(type, F16) ? "cutlass::half_t" : "cutlass::bfloat16_t";
}

/* ---- Python literals of op arguments ----------------------------------------------------- */

enum pystyle { TUPLE, LIST }; /* ops_unique_args uses tuples, roofline *_first columns lists */

static void fmt_ints(sbuf *b, int n, const long long *v, enum pystyle st)
{
    sb_putc(b, st == TUPLE ? '(' : '[');
    for (int i = 0; i < n; i++) {
        if (i)
            sb_puts(b, ", ");
        sb_int(b, v[i]);
    }
    if (st == TUPLE && n == 1)
        sb_putc(b, ',');
    sb_putc(b, st == TUPLE ? ')' : ']');
}

static void fmt_arg_shapes(sbuf *b, const struct op *o, int strides, enum pystyle st)
{
    sb_putc(b, st == TUPLE ? '(' : '[');
    for (int i = 0; i < o->nargs; i++) {
        if (i)
            sb_puts(b, ", ");
        fmt_ints(b, o->a[i].nd, strides ? o->a[i].stride : o->a[i].dim, st);
    }
    if (st == TUPLE && o->nargs == 1)
        sb_putc(b, ',');
    sb_putc(b, st == TUPLE ? ')' : ']');
}

static void fmt_arg_texts(sbuf *b, const struct op *o, int concrete, enum pystyle st)
{
    sb_putc(b, st == TUPLE ? '(' : '[');
    for (int i = 0; i < o->nargs; i++) {
        if (i)
            sb_puts(b, ", ");
        sb_putc(b, '\'');
        sb_puts(b, concrete ? o->a[i].concrete : o->a[i].type);
        sb_putc(b, '\'');
    }
    if (st == TUPLE && o->nargs == 1)
        sb_putc(b, ',');
    sb_putc(b, st == TUPLE ? ')' : ']');
}

/* TraceLens' kernel_details: a Python list of dicts, numbers wrapped in np.float64(). */
static void fmt_kernel_details(sbuf *b, const struct op *o)
{
    sb_putc(b, '[');
    for (int i = 0; i < o->nk; i++) {
        const struct kernel *k = &o->k[i];
        const double v[] = {k->st.sum, k->st.mean, k->st.median,
                            isnan(k->st.std) ? 0.0 : k->st.std, k->st.min, k->st.max};
        static const char *const key[] = {"total_duration_us", "mean_duration_us",
                                          "median_duration_us", "std_dev_duration_us",
                                          "min_duration_us", "max_duration_us"};
        if (i)
            sb_puts(b, ", ");
        sb_puts(b, "{'name': '");
        sb_puts(b, k->name);
        sb_puts(b, "', 'stream': ");
        sb_int(b, k->stream);
        sb_puts(b, ", 'count': ");
        sb_int(b, k->st.count);
        for (int j = 0; j < 6; j++) {
            sb_puts(b, ", '");
            sb_puts(b, key[j]);
            sb_puts(b, "': np.float64(");
            sb_float(b, v[j]);
            sb_putc(b, ')');
        }
        sb_putc(b, '}');
    }
    sb_putc(b, ']');
}

/* trunc_kernel_details: names cut to 64 characters, means rounded to 2 decimals. */
static void fmt_trunc_details(sbuf *b, const struct op *o)
{
    sb_putc(b, '[');
    for (int i = 0; i < o->nk; i++) {
        const struct kernel *k = &o->k[i];
        size_t len = strlen(k->name);
        if (i)
            sb_puts(b, ", ");
        sb_puts(b, "{'name': '");
        if (len > 64) {
            sb_putn(b, k->name, 64);
            sb_puts(b, "...");
        } else
            sb_puts(b, k->name);
        sb_puts(b, "', 'stream': ");
        sb_int(b, k->stream);
        sb_puts(b, ", 'mean_duration_us': np.float64(");
        sb_float(b, round2(k->st.mean));
        sb_puts(b, ")}");
    }
    sb_putc(b, ']');
}

/* ---- perf models: the roofline parameters, FLOPs and bytes of an op ---------------------- */

struct pparam {
    const char *key;
    char kind; /* 'i' int, 'f' float, 'b' bool, 's' Python str, 't' tuple text, 'n' None */
    long long i;
    double d;
    char s[160];
};

struct perf {
    int ok;
    double gflops, mb; /* GFLOPS per call and Data Moved (MB, really MiB) per call */
    char spec[24];     /* Compute Spec */
    int np;
    struct pparam p[MAXPARAM]; /* in TraceLens' dict order, as perf_params shows them */
};

static struct pparam *pp_add(struct perf *pf, const char *key, char kind)
{
    if (pf->np >= MAXPARAM)
        die("internal error: too many perf params");
    struct pparam *p = &pf->p[pf->np++];
    memset(p, 0, sizeof *p);
    p->key = key;
    p->kind = kind;
    return p;
}

static void pp_int(struct perf *pf, const char *key, long long v)
{
    pp_add(pf, key, 'i')->i = v;
}

static void pp_bool(struct perf *pf, const char *key, int v)
{
    pp_add(pf, key, 'b')->i = v;
}

static void pp_float(struct perf *pf, const char *key, double v)
{
    pp_add(pf, key, 'f')->d = v;
}

static void pp_str(struct perf *pf, const char *key, const char *v)
{
    fmt_fixed(pp_add(pf, key, 's')->s, sizeof pf->p[0].s, "%s", v);
}

static void pp_shape(struct perf *pf, const char *key, int nd, const long long *v)
{
    struct pparam *p = pp_add(pf, key, 't');
    sbuf b = {0};
    fmt_ints(&b, nd, v, TUPLE);
    fmt_fixed(p->s, sizeof p->s, "%s", b.p);
    sb_free(&b);
}

/* A tuple of dtype names; NULL entries are Python's None. */
static void pp_dtypes(struct perf *pf, const char *key, int n, const char *const *types)
{
    struct pparam *p = pp_add(pf, key, 't');
    sbuf b = {0};
    sb_putc(&b, '(');
    for (int i = 0; i < n; i++) {
        if (i)
            sb_puts(&b, ", ");
        if (types[i]) {
            sb_putc(&b, '\'');
            sb_puts(&b, types[i]);
            sb_putc(&b, '\'');
        } else
            sb_puts(&b, "None");
    }
    sb_putc(&b, ')');
    fmt_fixed(p->s, sizeof p->s, "%s", b.p);
    sb_free(&b);
}

static const struct pparam *pp_find(const struct perf *pf, const char *key)
{
    for (int i = 0; i < pf->np; i++)
        if (!strcmp(pf->p[i].key, key))
            return &pf->p[i];
    return NULL;
}

static double numel(const struct arg *a)
{
    double n = 1;
    for (int i = 0; i < a->nd; i++)
        n *= (double)a->dim[i];
    return n;
}

static void set_spec(struct perf *pf, const char *kind, const char *type)
{
    fmt_fixed(pf->spec, sizeof pf->spec, "%s_%s", kind, spec_dtype(type));
}

static void perf_gemm(const struct op *o, struct perf *pf)
{
    int addmm = !strcmp(o->name, "aten::addmm"), bmm = !strcmp(o->name, "aten::bmm");
    const struct arg *A = &o->a[addmm ? 1 : 0], *B = &o->a[addmm ? 2 : 1];
    long long batch = 1, M, N, K;
    if (A->nd == 3) {
        batch = A->dim[0];
        M = A->dim[1];
        K = A->dim[2];
        N = B->dim[2];
    } else {
        M = A->dim[0];
        K = A->dim[1];
        N = B->dim[1];
    }
    const char *dt[2] = {A->type, B->type};
    if (bmm) /* TraceLens' bmm model lists B first, mm/addmm add it last */
        pp_int(pf, "B", batch);
    pp_int(pf, "M", M);
    pp_int(pf, "N", N);
    pp_int(pf, "K", K);
    pp_bool(pf, "bias", addmm);
    pp_shape(pf, "stride_A", A->nd, A->stride);
    pp_shape(pf, "stride_B", B->nd, B->stride);
    pp_dtypes(pf, "dtype_A_B", 2, dt);
    if (!bmm)
        pp_int(pf, "B", batch);
    double bpe = bytes_per_elem(A->type);
    pf->gflops = (2.0 * M * N * K + (addmm ? (double)M * N : 0)) * batch / 1e9;
    pf->mb = ((double)M * K + (double)K * N + (double)M * N + (addmm ? N : 0)) * bpe * batch / 1048576.0;
    set_spec(pf, "matrix", A->type);
}

/* _scaled_dot_product_flash_attention(q, k, v, dropout_p, is_causal, return_debug_mask,
 * scale) and its backward (grad_out, q, k, v, out, logsumexp, ..., dropout_p @10,
 * is_causal @11, ...); q/k/v are (B, H, N, d). */
static void perf_sdpa(const struct op *o, struct perf *pf, int bwd)
{
    const struct arg *q = &o->a[bwd ? 1 : 0], *k = &o->a[bwd ? 2 : 1], *v = &o->a[bwd ? 3 : 2];
    double dropout = strtod(o->a[bwd ? 10 : 3].concrete, NULL);
    int causal = !strcmp(o->a[bwd ? 11 : 4].concrete, "True");
    long long B = q->dim[0], HQ = q->dim[1], NQ = q->dim[2], D = q->dim[3];
    long long HKV = k->dim[1], NKV = k->dim[2], DV = v->dim[3];
    const char *dt[2] = {q->type, k->type};
    pp_int(pf, "B", B);
    pp_int(pf, "N_Q", NQ);
    pp_int(pf, "H_Q", HQ);
    pp_int(pf, "N_KV", NKV);
    pp_int(pf, "H_KV", HKV);
    pp_int(pf, "d_h_qk", D);
    pp_int(pf, "d_h_v", DV);
    pp_float(pf, "dropout", dropout);
    pp_bool(pf, "causal", causal);
    pp_bool(pf, "flash_impl", 1);
    pp_dtypes(pf, "dtype_A_B", 2, dt);
    double flops = 2.0 * B * HQ * NQ * NKV * (double)(D + DV) * (causal ? 0.5 : 1.0);
    double elems = (double)B * (HQ * NQ * D + HKV * NKV * D + HKV * NKV * DV + HQ * NQ * DV);
    double bpe = bytes_per_elem(q->type);
    /* backward: 5 matmuls instead of 2; reads q, k, v, o, dO and writes dq, dk, dv */
    pf->gflops = flops * (bwd ? 2.5 : 1.0) / 1e9;
    pf->mb = elems * (bwd ? 7.0 / 4.0 : 1.0) * bpe / 1048576.0;
    set_spec(pf, "matrix", q->type);
}

static int parse_int_list(const char *s, long long *out, int max)
{
    int n = 0;
    while (*s && n < max) {
        char *end;
        if (*s == '[' || *s == ',' || *s == ' ') {
            s++;
            continue;
        }
        long long v = strtoll(s, &end, 10);
        if (end == s)
            break;
        out[n++] = v;
        s = end;
    }
    return n;
}

/* aten::convolution(input, weight, bias, stride, padding, dilation, transposed,
 * output_padding, groups). */
static void perf_conv(const struct op *o, struct perf *pf)
{
    const struct arg *x = &o->a[0], *w = &o->a[1];
    int bias = o->a[2].nd > 0, sp = x->nd - 2;
    long long stride[3] = {1, 1, 1}, pad[3] = {0}, dil[3] = {1, 1, 1}, opad[3] = {0};
    parse_int_list(o->a[3].concrete, stride, sp);
    parse_int_list(o->a[4].concrete, pad, sp);
    parse_int_list(o->a[5].concrete, dil, sp);
    parse_int_list(o->a[7].concrete, opad, sp);
    long long groups = strtoll(o->a[8].concrete, NULL, 10);
    const char *dt[2] = {x->type, w->type};
    char nd[16];
    fmt_fixed(nd, sizeof nd, "conv%dd", sp);
    pp_str(pf, "convNd", nd);
    pp_shape(pf, "input_shape", x->nd, x->dim);
    pp_shape(pf, "filter_shape", w->nd, w->dim);
    pp_dtypes(pf, "dtype_input_weight", 2, dt);
    pp_shape(pf, "input_stride", x->nd, x->stride);
    pp_shape(pf, "weight_stride", w->nd, w->stride);
    pp_bool(pf, "bias", bias);
    pp_shape(pf, "stride", sp, stride);
    pp_shape(pf, "padding", sp, pad);
    pp_shape(pf, "dilation", sp, dil);
    pp_bool(pf, "transposed_conv", !strcmp(o->a[6].concrete, "True"));
    pp_shape(pf, "output_padding", sp, opad);
    pp_int(pf, "groups", groups);
    double out_sp = 1, ksz = 1;
    for (int i = 0; i < sp; i++) {
        long long in = x->dim[2 + i], kk = w->dim[2 + i];
        out_sp *= (double)((in + 2 * pad[i] - dil[i] * (kk - 1) - 1) / stride[i] + 1);
        ksz *= (double)kk;
    }
    double B = (double)x->dim[0], cin = (double)x->dim[1], cout = (double)w->dim[0];
    double out = B * cout * out_sp;
    pf->gflops = (2.0 * out * (cin / (double)groups) * ksz + (bias ? out : 0)) / 1e9;
    pf->mb = (numel(x) + numel(w) + out + (bias ? cout : 0)) * bytes_per_elem(x->type) / 1048576.0;
    set_spec(pf, "matrix", x->type);
}

/* Unary: input is arg 0; a second tensor argument is the output (copy_'s source). */
static void perf_unary(const struct op *o, struct perf *pf)
{
    const struct arg *in = &o->a[0];
    const struct arg *out = o->nargs > 1 && o->a[1].nd > 0 ? &o->a[1] : NULL;
    const char *dt[2] = {in->type, out ? out->type : NULL};
    pp_shape(pf, "op_shape", in->nd, in->dim);
    pp_dtypes(pf, "dtype_in_out", 2, dt);
    pp_shape(pf, "stride_input", in->nd, in->stride);
    if (out)
        pp_shape(pf, "stride_output", out->nd, out->stride);
    else
        pp_add(pf, "stride_output", 'n');
    double n = numel(in);
    int bin = bytes_per_elem(in->type), bout = out ? bytes_per_elem(out->type) : bin;
    pf->gflops = n / 1e9;
    pf->mb = n * (bin + bout) / 1048576.0;
    set_spec(pf, "vector", in->type);
}

static void perf_binary(const struct op *o, struct perf *pf)
{
    const struct arg *x = &o->a[0], *y = &o->a[1];
    const struct arg *out = o->nargs > 2 && o->a[2].nd > 0 ? &o->a[2] : NULL;
    const char *dt[3] = {x->type, y->type, out ? out->type : NULL};
    pp_shape(pf, "shape_in1", x->nd, x->dim);
    pp_shape(pf, "shape_in2", y->nd, y->dim);
    pp_dtypes(pf, "dtype_in1_in2_out", 3, dt);
    pp_shape(pf, "stride_input1", x->nd, x->stride);
    pp_shape(pf, "stride_input2", y->nd, y->stride);
    if (out)
        pp_shape(pf, "stride_output", out->nd, out->stride);
    else
        pp_add(pf, "stride_output", 'n');
    /* the output has the broadcast shape of the two inputs */
    int nd = x->nd > y->nd ? x->nd : y->nd;
    double nout = 1;
    for (int i = 0; i < nd; i++) {
        int ix = x->nd - nd + i, iy = y->nd - nd + i;
        long long dx = ix >= 0 ? x->dim[ix] : 1, dy = iy >= 0 ? y->dim[iy] : 1;
        nout *= (double)(dx > dy ? dx : dy);
    }
    int b1 = bytes_per_elem(x->type), b2 = bytes_per_elem(y->type);
    int bout = out ? bytes_per_elem(out->type) : (b1 > b2 ? b1 : b2);
    pf->gflops = nout / 1e9;
    pf->mb = (numel(x) * b1 + numel(y) * b2 + nout * bout) / 1048576.0;
    set_spec(pf, "vector", x->type);
}

static void perf_of(const struct op *o, struct perf *pf)
{
    memset(pf, 0, sizeof *pf);
    pf->ok = o->pm != PM_NONE;
    switch (o->pm) {
    case PM_NONE: break;
    case PM_GEMM: perf_gemm(o, pf); break;
    case PM_SDPA_FWD: perf_sdpa(o, pf, 0); break;
    case PM_SDPA_BWD: perf_sdpa(o, pf, 1); break;
    case PM_CONV: perf_conv(o, pf); break;
    case PM_UNARY: perf_unary(o, pf); break;
    case PM_BINARY: perf_binary(o, pf); break;
    }
}

static void fmt_perf_params(sbuf *b, const struct perf *pf)
{
    sb_putc(b, '{');
    for (int i = 0; i < pf->np; i++) {
        const struct pparam *p = &pf->p[i];
        if (i)
            sb_puts(b, ", ");
        sb_putc(b, '\'');
        sb_puts(b, p->key);
        sb_puts(b, "': ");
        switch (p->kind) {
        case 'i': sb_int(b, p->i); break;
        case 'f': sb_float(b, p->d); break;
        case 'b': sb_puts(b, p->i ? "True" : "False"); break;
        case 's': sb_putc(b, '\''); sb_puts(b, p->s); sb_putc(b, '\''); break;
        case 't': sb_puts(b, p->s); break;
        default: sb_puts(b, "None"); break;
        }
    }
    sb_putc(b, '}');
}

/* Achieved rate (TB/s or TFLOPS/s) over the calls, from the call-time statistics: the
 * mean of per-call rates sits above work / mean time by about cv^2. */
struct rates {
    double mean, median, std, min, max;
};

static void rates_of(double work, const struct stats *t, struct rates *r)
{
    double cv = isnan(t->std) || t->mean <= 0 ? 0 : t->std / t->mean;
    r->mean = work / t->mean * (1 + cv * cv);
    r->median = work / t->median;
    r->std = isnan(t->std) ? NAN : r->mean * cv;
    r->min = work / t->max;
    r->max = work / t->min;
}

/* ---- timings ----------------------------------------------------------------------------- */

/* Plausible spread for `count` calls averaging `mean` us, at nanosecond resolution. */
static void make_stats(struct stats *s, rng_t *r, long long count, double mean)
{
    double cv = rng_logrange(r, 0.004, 0.08);
    s->count = count;
    s->sum = round_ns(mean * (double)count);
    if (s->sum < 0.001 * (double)count)
        s->sum = 0.001 * (double)count;
    s->mean = s->sum / (double)count;
    if (count == 1) {
        s->median = s->min = s->max = s->sum;
        s->std = NAN;
        return;
    }
    double sd = s->mean * cv;
    s->std = sd;
    s->median = round_ns(s->mean + sd * rng_range(r, -0.4, 0.4));
    s->min = round_ns(s->mean - sd * rng_range(r, 1.2, 2.8));
    s->max = round_ns(s->mean + sd * rng_range(r, 1.5, 6.0));
    if (s->min < 0.001)
        s->min = 0.001;
    if (s->median < s->min)
        s->median = s->min;
}

/*
 * Give an op `count` calls of `mean_us` kernel time each, split over its kernels by
 * their shares.  The op's statistics are the sums of its kernels' (one launch of each
 * kernel per call), so kernel_details always add up to the op's time.
 */
static void op_set_times(struct op *o, rng_t *r, enum role role, long long count, double mean_us,
                         double cpu_us)
{
    double var = 0;
    memset(&o->t, 0, sizeof o->t);
    o->t.count = count;
    for (int i = 0; i < o->nk; i++) {
        struct kernel *k = &o->k[i];
        k->stream = strncmp(k->name, "nccl", 4) ? PLAT[role].stream : PLAT[role].comm_stream;
        make_stats(&k->st, r, count, mean_us * k->frac);
        o->t.sum += k->st.sum;
        o->t.median += k->st.median;
        o->t.min += k->st.min;
        o->t.max += k->st.max;
        var += isnan(k->st.std) ? 0 : k->st.std * k->st.std;
    }
    o->t.sum = round_ns(o->t.sum);
    o->t.mean = o->t.sum / (double)count;
    o->t.median = round_ns(o->t.median);
    o->t.min = round_ns(o->t.min);
    o->t.max = round_ns(o->t.max);
    o->t.std = count == 1 ? NAN : sqrt(var);
    make_stats(&o->dur, r, count, cpu_us);
}

/* ---- sheet layouts ----------------------------------------------------------------------- */

#define NCOLS(a) ((int)(sizeof(a) / sizeof((a)[0])))

static const char *const COLS_TIMELINE[] = {"type", "time ms", "percent"};

static const char *const COLS_OPS_SUMMARY[] = {
    "name", "total_direct_kernel_time_sum", "total_subtree_kernel_time_sum",
    "total_direct_kernel_time_ms", "total_subtree_kernel_time_ms", "Count", "Categories",
    "Percentage (%)", "Cumulative Percentage (%)"};

static const char *const COLS_BY_CATEGORY[] = {"op category", "Count", "total_direct_kernel_time_ms",
                                               "Percentage (%)", "Cumulative Percentage (%)"};

static const char *const COLS_KERNEL_SUMMARY[] = {
    "Parent op category", "Parent cpu_op", "Kernel name", "Kernel stream",
    "Kernel duration (µs)_sum", "Kernel duration (µs)_count", "Kernel duration (µs)_mean",
    "Kernel duration (µs)_min", "Kernel duration (µs)_max", "Percent of kernels time (%)",
    "Percent of total time (%)"};

static const char *const COLS_UNIQUE_ARGS[] = {
    "name", "op category", "process_name", "process_label", "thread_name", "Input Dims",
    "Input type", "Input Strides", "Concrete Inputs", "operation_count",
    "total_direct_kernel_time_mean", "total_subtree_kernel_time_mean",
    "total_direct_kernel_time_median", "total_subtree_kernel_time_median",
    "total_direct_kernel_time_std", "total_subtree_kernel_time_std",
    "total_direct_kernel_time_min", "total_subtree_kernel_time_min",
    "total_direct_kernel_time_max", "total_subtree_kernel_time_max",
    "total_direct_kernel_time_sum", "total_subtree_kernel_time_sum", "ex_UID",
    "kernel_details_summary", "trunc_kernel_details", "Percentage (%)",
    "Cumulative Percentage (%)"};

static const char *const COLS_UNIFIED[] = {
    "name", "op category", "process_name", "process_label", "thread_name", "Input Dims",
    "Input type", "Input Strides", "Concrete Inputs", "ex_UID", "operation_count",
    "total_duration_us", "mean_duration_us", "std_duration_us", "GFLOPS", "Data Moved (MB)",
    "FLOPS/Byte", "Compute Spec", "TB/s_mean", "TB/s_std", "TFLOPS/s_mean", "TFLOPS/s_std",
    "Kernel Time (µs)_mean", "Kernel Time (µs)_std", "Kernel Time (µs)_sum",
    "duration_us_median", "duration_us_min", "duration_us_max", "TB/s_median", "TB/s_min",
    "TB/s_max", "TFLOPS/s_median", "TFLOPS/s_min", "TFLOPS/s_max", "Kernel Time (µs)_median",
    "Kernel Time (µs)_min", "Kernel Time (µs)_max", "kernel_details_summary",
    "trunc_kernel_details", "perf_params", "has_perf_model", "Percentage (%)",
    "Cumulative Percentage (%)"};

/* Roofline sheets: name, the perf model's `param:` columns, then this tail. */
static const char *const COLS_ROOF_TAIL[] = {
    "GFLOPS_first", "Data Moved (MB)_first", "FLOPS/Byte_first", "TB/s_mean", "TB/s_median",
    "TB/s_std", "TB/s_min", "TB/s_max", "TFLOPS/s_mean", "TFLOPS/s_median", "TFLOPS/s_std",
    "TFLOPS/s_min", "TFLOPS/s_max", "process_name_first", "process_label_first",
    "thread_name_first", "Compute Spec", "kernel_details__summarize_kernel_stats",
    "trunc_kernel_details", "Input Dims_first", "Input type_first", "Input Strides_first",
    "Concrete Inputs_first", "Kernel Time (µs)_mean", "Kernel Time (µs)_median",
    "Kernel Time (µs)_std", "Kernel Time (µs)_min", "Kernel Time (µs)_max",
    "Kernel Time (µs)_sum", "name_count", "UID_first"};

static const char *const COLS_SHORT[] = {
    "Parent cpu_op", "Input dims", "Input strides", "Concrete Inputs", "Kernel name",
    "Short Kernel duration (µs) sum", "Short Kernel count", "Short Kernel duration (µs) mean",
    "Short Kernel duration (µs) percent of total time"};

static const char *const P_GEMM[] = {"B", "M", "N", "K", "bias", "stride_A", "stride_B", "dtype_A_B"};
static const char *const P_SDPA[] = {"B", "N_Q", "H_Q", "N_KV", "H_KV", "d_h_qk",
                                     "d_h_v", "dropout", "causal", "flash_impl", "dtype_A_B"};
static const char *const P_CONV[] = {"convNd", "input_shape", "filter_shape", "dtype_input_weight",
                                     "input_stride", "weight_stride", "bias", "stride", "padding",
                                     "dilation", "transposed_conv", "output_padding", "groups"};
static const char *const P_UNARY[] = {"op_shape", "dtype_in_out", "stride_input", "stride_output"};
static const char *const P_BINARY[] = {"shape_in1", "shape_in2", "dtype_in1_in2_out",
                                       "stride_input1", "stride_input2", "stride_output"};

/* Row-generation streams ("salts"); each sheet draws its rows from its own. */
enum salt {
    S_OPS_SUMMARY = 1, S_KERNELS, S_UNIQUE_ARGS, S_GEMM, S_SDPA_FWD, S_SDPA_BWD, S_CONV,
    S_UNARY, S_BINARY, S_SHORT, S_TIMELINE,
    S_VALUE = 0x100,  /* | salt: values (counts, timings) of a row, shared by both roles */
    S_NOISE = 0x200,  /* | salt: per-role noise in the statistics */
    S_FACTOR = 0x300, /* | salt: the candidate's speed-up or slow-down */
    S_MEMBER = 0x400, /* | salt: which reports a row is in */
};

enum tpl { TPL_GEMM, TPL_SDPA_FWD, TPL_SDPA_BWD, TPL_CONV, TPL_UNARY, TPL_BINARY, TPL_MISC,
           TPL_ANY, TPL_SHORT };

static const struct roof {
    const char *sheet;
    enum pm pm;
    const char *const *params;
    int nparams;
    enum salt salt;
    enum tpl tpl;
} ROOFS[] = {
    {"GEMM", PM_GEMM, P_GEMM, NCOLS(P_GEMM), S_GEMM, TPL_GEMM},
    {"SDPA_fwd", PM_SDPA_FWD, P_SDPA, NCOLS(P_SDPA), S_SDPA_FWD, TPL_SDPA_FWD},
    {"SDPA_bwd", PM_SDPA_BWD, P_SDPA, NCOLS(P_SDPA), S_SDPA_BWD, TPL_SDPA_BWD},
    {"CONV_fwd", PM_CONV, P_CONV, NCOLS(P_CONV), S_CONV, TPL_CONV},
    {"UnaryElementwise", PM_UNARY, P_UNARY, NCOLS(P_UNARY), S_UNARY, TPL_UNARY},
    {"BinaryElementwise", PM_BINARY, P_BINARY, NCOLS(P_BINARY), S_BINARY, TPL_BINARY},
};

/* ---- sheet writers (shared by the random and the example reports) ------------------------ */

struct scratch { /* reused text buffers, so a row costs no allocation */
    sbuf dims, types, strides, concrete, details, trunc, params;
};

static void scratch_free(struct scratch *sc)
{
    sb_free(&sc->dims);
    sb_free(&sc->types);
    sb_free(&sc->strides);
    sb_free(&sc->concrete);
    sb_free(&sc->details);
    sb_free(&sc->trunc);
    sb_free(&sc->params);
}

/* Render an op's argument and kernel texts in one style. */
static void scratch_fill(struct scratch *sc, const struct op *o, enum pystyle st)
{
    sb_clear(&sc->dims);
    sb_clear(&sc->types);
    sb_clear(&sc->strides);
    sb_clear(&sc->concrete);
    sb_clear(&sc->details);
    sb_clear(&sc->trunc);
    fmt_arg_shapes(&sc->dims, o, 0, st);
    fmt_arg_texts(&sc->types, o, 0, st);
    fmt_arg_shapes(&sc->strides, o, 1, st);
    fmt_arg_texts(&sc->concrete, o, 1, st);
    fmt_kernel_details(&sc->details, o);
    fmt_trunc_details(&sc->trunc, o);
}

struct timeline { /* milliseconds */
    double comp, xcomm, xmemcpy, idle, tcomm, tmemcpy;
};

static double timeline_total(const struct timeline *t)
{
    return t->comp + t->xcomm + t->xmemcpy + t->idle;
}

static void write_timeline(struct emit *em, const struct timeline *t)
{
    double busy = t->comp + t->xcomm + t->xmemcpy, total = busy + t->idle;
    const struct {
        const char *type;
        double ms;
    } rows[] = {
        {"computation_time", t->comp}, {"exposed_comm_time", t->xcomm},
        {"exposed_memcpy_time", t->xmemcpy}, {"busy_time", busy}, {"idle_time", t->idle},
        {"total_time", total}, {"total_comm_time", t->tcomm}, {"total_memcpy_time", t->tmemcpy},
    };
    em_sheet(em, "gpu_timeline", COLS_TIMELINE, NCOLS(COLS_TIMELINE));
    for (int i = 0; i < NCOLS(rows); i++) {
        em_str(em, rows[i].type);
        em_num(em, rows[i].ms);
        em_num(em, rows[i].ms / total * 100.0);
        em_end_row(em);
    }
}

struct opsum { /* one ops_summary row */
    char name[96];
    const char *category;
    long long count;
    double direct_us, subtree_us;
};

static void write_opsum_row(struct emit *em, const struct opsum *r, double total_us, double *cum)
{
    char cats[64];
    double pct = r->direct_us / total_us * 100.0;
    *cum += pct;
    fmt_fixed(cats, sizeof cats, "['%s']", r->category);
    em_str(em, r->name);
    em_num(em, r->direct_us);
    em_num(em, r->subtree_us);
    em_num(em, r->direct_us / 1000.0);
    em_num(em, r->subtree_us / 1000.0);
    em_int(em, r->count);
    em_str(em, cats);
    em_num(em, pct);
    em_num(em, *cum);
    em_end_row(em);
}

struct catsum {
    const char *name;
    long long count;
    double ms;
};

struct cats { /* ops_summary_by_category, accumulated from the ops_summary rows */
    int n;
    struct catsum c[32];
};

static void cats_add(struct cats *cs, const char *name, long long count, double ms)
{
    int i;
    for (i = 0; i < cs->n && strcmp(cs->c[i].name, name); i++)
        ;
    if (i == cs->n) {
        if (cs->n == NCOLS(cs->c))
            die("internal error: too many op categories");
        cs->c[cs->n].name = name;
        cs->c[cs->n].count = 0;
        cs->c[cs->n].ms = 0;
        cs->n++;
    }
    cs->c[i].count += count;
    cs->c[i].ms += ms;
}

static void write_by_category(struct emit *em, struct cats *cs)
{
    double total = 0, cum = 0;
    /* descending time, like TraceLens; a handful of rows, so insertion sort */
    for (int i = 1; i < cs->n; i++)
        for (int j = i; j > 0 && cs->c[j].ms > cs->c[j - 1].ms; j--) {
            struct catsum tmp = cs->c[j];
            cs->c[j] = cs->c[j - 1];
            cs->c[j - 1] = tmp;
        }
    for (int i = 0; i < cs->n; i++)
        total += cs->c[i].ms;
    em_sheet(em, "ops_summary_by_category", COLS_BY_CATEGORY, NCOLS(COLS_BY_CATEGORY));
    for (int i = 0; i < cs->n; i++) {
        double pct = cs->c[i].ms / total * 100.0;
        cum += pct;
        em_str(em, cs->c[i].name);
        em_int(em, cs->c[i].count);
        em_num(em, cs->c[i].ms);
        em_num(em, pct);
        em_num(em, cum);
        em_end_row(em);
    }
}

struct krow { /* one kernel_summary row */
    const char *category; /* NULL: kernel with no parent op (a blank cell) */
    const char *op;
    const char *name;
    int stream;
    long long count;
    double sum, mean, min, max;
};

static void write_kernel_row(struct emit *em, const struct krow *k, double kernels_us, double total_us)
{
    em_str(em, k->category);
    em_str(em, k->op);
    em_str(em, k->name);
    em_int(em, k->stream);
    em_num(em, k->sum);
    em_int(em, k->count);
    em_num(em, k->mean);
    em_num(em, k->min);
    em_num(em, k->max);
    em_num(em, k->sum / kernels_us * 100.0);
    em_num(em, k->sum / total_us * 100.0);
    em_end_row(em);
}

static void write_unique_args_row(struct emit *em, struct scratch *sc, const struct op *o,
                                  double pct, double cum)
{
    const struct stats *t = &o->t;
    const double pairs[] = {t->mean, t->median, t->std, t->min, t->max, t->sum};
    scratch_fill(sc, o, TUPLE);
    em_str(em, o->name);
    em_str(em, o->category);
    em_str(em, "python3");
    em_str(em, "CPU");
    em_str(em, o->thread);
    em_str(em, sc->dims.p);
    em_str(em, sc->types.p);
    em_str(em, sc->strides.p);
    em_str(em, sc->concrete.p);
    em_int(em, t->count);
    for (int i = 0; i < NCOLS(pairs); i++) { /* direct, then subtree: equal for leaf ops */
        em_num(em, pairs[i]);
        em_num(em, pairs[i]);
    }
    em_int(em, o->uid);
    em_str(em, sc->details.p);
    em_str(em, sc->trunc.p);
    em_num(em, pct);
    em_num(em, cum);
    em_end_row(em);
}

static void write_unified_row(struct emit *em, struct scratch *sc, const struct op *o, double pct,
                              double cum)
{
    struct perf pf;
    struct rates tb = {NAN, NAN, NAN, NAN, NAN}, tf = tb;
    perf_of(o, &pf);
    if (pf.ok) {
        rates_of(pf.mb * 1.048576, &o->t, &tb);
        rates_of(pf.gflops * 1000.0, &o->t, &tf);
    }
    scratch_fill(sc, o, TUPLE);
    sb_clear(&sc->params);
    if (pf.ok)
        fmt_perf_params(&sc->params, &pf);
    em_str(em, o->name);
    em_str(em, o->category);
    em_str(em, "python3");
    em_str(em, "CPU");
    em_str(em, o->thread);
    em_str(em, sc->dims.p);
    em_str(em, sc->types.p);
    em_str(em, sc->strides.p);
    em_str(em, sc->concrete.p);
    em_int(em, o->uid);
    em_int(em, o->t.count);
    em_num(em, o->dur.sum);
    em_num(em, o->dur.mean);
    em_num(em, o->dur.std);
    em_num(em, pf.ok ? pf.gflops : NAN);
    em_num(em, pf.ok ? pf.mb : NAN);
    em_num(em, pf.ok ? pf.gflops * 1e9 / (pf.mb * 1048576.0) : NAN);
    em_str(em, pf.ok ? pf.spec : NULL);
    em_num(em, tb.mean);
    em_num(em, tb.std);
    em_num(em, tf.mean);
    em_num(em, tf.std);
    em_num(em, o->t.mean);
    em_num(em, o->t.std);
    em_num(em, o->t.sum);
    em_num(em, o->dur.median);
    em_num(em, o->dur.min);
    em_num(em, o->dur.max);
    em_num(em, tb.median);
    em_num(em, tb.min);
    em_num(em, tb.max);
    em_num(em, tf.median);
    em_num(em, tf.min);
    em_num(em, tf.max);
    em_num(em, o->t.median);
    em_num(em, o->t.min);
    em_num(em, o->t.max);
    em_str(em, sc->details.p);
    em_str(em, sc->trunc.p);
    em_str(em, sc->params.p);
    em_bool(em, pf.ok);
    em_num(em, pct);
    em_num(em, cum);
    em_end_row(em);
}

static void roof_sheet(struct emit *em, const struct roof *rf)
{
    char names[MAXPARAM][48];
    const char *cols[1 + MAXPARAM + NCOLS(COLS_ROOF_TAIL)];
    int n = 0;
    cols[n++] = "name";
    for (int i = 0; i < rf->nparams; i++) {
        fmt_fixed(names[i], sizeof names[i], "param: %s", rf->params[i]);
        cols[n++] = names[i];
    }
    for (int i = 0; i < NCOLS(COLS_ROOF_TAIL); i++)
        cols[n++] = COLS_ROOF_TAIL[i];
    em_sheet(em, rf->sheet, cols, n);
}

static void write_roof_row(struct emit *em, struct scratch *sc, const struct roof *rf, const struct op *o)
{
    struct perf pf;
    struct rates tb, tf;
    perf_of(o, &pf);
    if (!pf.ok || o->pm != rf->pm)
        die("internal error: op %s in roofline sheet %s", o->name, rf->sheet);
    rates_of(pf.mb * 1.048576, &o->t, &tb);
    rates_of(pf.gflops * 1000.0, &o->t, &tf);
    scratch_fill(sc, o, LIST);
    em_str(em, o->name);
    for (int i = 0; i < rf->nparams; i++) {
        const struct pparam *p = pp_find(&pf, rf->params[i]);
        if (!p)
            die("internal error: op %s lacks param %s", o->name, rf->params[i]);
        switch (p->kind) {
        case 'i': em_int(em, p->i); break;
        case 'f': em_num(em, p->d); break;
        case 'b': em_bool(em, (int)p->i); break;
        case 'n': em_missing(em); break;
        default: em_str(em, p->s); break;
        }
    }
    em_num(em, pf.gflops);
    em_num(em, pf.mb);
    em_num(em, pf.gflops * 1e9 / (pf.mb * 1048576.0));
    em_num(em, tb.mean);
    em_num(em, tb.median);
    em_num(em, tb.std);
    em_num(em, tb.min);
    em_num(em, tb.max);
    em_num(em, tf.mean);
    em_num(em, tf.median);
    em_num(em, tf.std);
    em_num(em, tf.min);
    em_num(em, tf.max);
    em_str(em, "python3");
    em_str(em, "CPU");
    em_str(em, o->thread);
    em_str(em, pf.spec);
    em_str(em, sc->details.p);
    em_str(em, sc->trunc.p);
    em_str(em, sc->dims.p);
    em_str(em, sc->types.p);
    em_str(em, sc->strides.p);
    em_str(em, sc->concrete.p);
    em_num(em, o->t.mean);
    em_num(em, o->t.median);
    em_num(em, o->t.std);
    em_num(em, o->t.min);
    em_num(em, o->t.max);
    em_num(em, o->t.sum);
    em_int(em, o->t.count);
    em_int(em, o->uid);
    em_end_row(em);
}

static void write_short_row(struct emit *em, struct scratch *sc, const struct op *o,
                            const struct kernel *k, double total_us)
{
    scratch_fill(sc, o, TUPLE);
    em_str(em, o->name);
    em_str(em, sc->dims.p);
    em_str(em, sc->strides.p);
    em_str(em, sc->concrete.p);
    em_str(em, k->name);
    em_num(em, k->st.sum);
    em_int(em, k->st.count);
    em_num(em, k->st.mean);
    em_num(em, k->st.sum / total_us * 100.0);
    em_end_row(em);
}

/* ---- kernel names ------------------------------------------------------------------------ */

/* cuBLAS on Hopper */
static void kn_xmma(char *out, const char *type, const char *layout, int tm, int tn, int wg)
{
    const char *ab = !strcmp(type, F32)   ? "tf32tf32_tf32f32_f32"
                     : !strcmp(type, F16) ? "f16f16_f16f32_f32"
                                          : "bf16bf16_bf16f32_f32";
    fmt_fixed(out, KNAME,
              "sm90_xmma_gemm_%s_%s_n_tilesize%dx%dx64_warpgroupsize%dx1x1_execute_segment_k_off_kernel__5x_cublas",
              ab, layout, tm, tn, wg);
}

/* hipBLASLt / Tensile on MI300 (gfx942) */
static void kn_tensile(char *out, const char *type, int ta, int tb, int mt0, int mt1, int du, int w0,
                       int w1, int lpa, int lpb, unsigned long long wgm)
{
    const char *tc = !strcmp(type, F32) ? "SS" : !strcmp(type, F16) ? "HHS" : "BBS";
    fmt_fixed(out, KNAME,
              "Cijk_A%s_B%s_%s_BH_Bias_HA_S_SAV_UserArgs_MT%dx%dx%d_MI16x16x1_SN_LDSB1_AFC1_AFEM1_"
              "AFEM1_ASEM1_CLR1_CADS0_DTVA0_DTVB0_EPS0_FDSI0_GRPM1_GRVWA8_GRVWB8_GSUAMB_GLS0_ISA942_"
              "IU1_K1_LBSPPA%d_LBSPPB%d_LBSPPM0_LPA16_LPB16_LPM0_LRVW8_LWPMn1_MIAV0_MIWT%d_%d_MO40_"
              "NTn1_NTA0_NTB0_NTC0_NTD0_NTM0_NEPBS16_NLCA1_NLCB1_ONLL1_PGR2_PLR1_PKA1_SIA3_SS1_SPO0_"
              "SRVW0_SSO0_SVW8_SK3_SKXCCM0_TLDS1_ULSGRO0_USL1_UIOFGRO0_USFGROn1_VSn1_VWA8_VWB8_"
              "WSGRA0_WSGRB0_WS64_WG32_8_1_WGM%llu",
              ta ? "ilk" : "lik", tb ? "jlk" : "ljk", tc, mt0, mt1, du, lpa, lpb, w0, w1, wgm);
}

static void kn_cutlass(char *out, const char *type, int tm, int tn, int stages)
{
    const char *t = !strcmp(type, F16) ? "f16" : "bf16";
    char inner[160];
    fmt_fixed(inner, sizeof inner, "cutlass_80_tensorop_%s_s16816gemm_relu_%s_%dx%d_32x%d_tn_align8", t,
              t, tm, tn, stages);
    fmt_fixed(out, KNAME, "void cutlass::Kernel2<%s>(%s::Params)", inner, inner);
}

static void kn_flash_fwd(char *out, const char *type, int d, int causal)
{
    const char *ct = cutlass_type(type);
    int bn = d == 128 ? 64 : 128;
    fmt_fixed(out, KNAME,
              "void pytorch_flash::flash_fwd_kernel<pytorch_flash::Flash_fwd_kernel_traits<%d, 128, "
              "%d, 4, false, false, %s, pytorch_flash::Flash_kernel_traits<%d, 128, %d, 4, %s> >, "
              "false, %s, false, false, false, true, false>(pytorch_flash::Flash_fwd_params)",
              d, bn, ct, d, bn, ct, causal ? "true" : "false");
}

/* The three kernels of FlashAttention-2's backward: preprocess, the main loop, dq convert. */
static void kn_flash_bwd(char *out, int which, const char *type, int d)
{
    const char *ct = cutlass_type(type);
    char traits[320];
    fmt_fixed(traits, sizeof traits,
              "pytorch_flash::Flash_bwd_kernel_traits<%d, 128, 128, 8, 2, 4, 2, false, false, %s, "
              "pytorch_flash::Flash_kernel_traits<%d, 128, 128, 8, %s> >",
              d, ct, d, ct);
    if (which == 0)
        fmt_fixed(out, KNAME,
                  "void pytorch_flash::flash_bwd_dot_do_o_kernel<true, %s >(pytorch_flash::Flash_bwd_params)",
                  traits);
    else if (which == 1)
        fmt_fixed(out, KNAME,
                  "void pytorch_flash::flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel<%s, false, false, "
                  "false, false, false, false>(pytorch_flash::Flash_bwd_params)",
                  traits);
    else
        fmt_fixed(out, KNAME,
                  "void pytorch_flash::flash_bwd_convert_dq_kernel<%s >(pytorch_flash::Flash_bwd_params, int)",
                  traits);
}

/* A vectorized (contiguous) or strided elementwise launch of functor `f` with `arity`
 * data pointers (inputs + output). */
static void kn_elementwise(char *out, const char *f, int arity, int vec, int contiguous)
{
    if (contiguous)
        fmt_fixed(out, KNAME,
                  "void at::native::vectorized_elementwise_kernel<%d, %s, std::array<char*, %dul> >(int, "
                  "%s, std::array<char*, %dul>)",
                  vec, f, arity, f, arity);
    else
        fmt_fixed(out, KNAME,
                  "void at::native::elementwise_kernel<128, %d, at::native::gpu_kernel_impl_nocast<%s "
                  ">(at::TensorIteratorBase&, %s const&)::{lambda(int)#1}>(int, "
                  "at::native::gpu_kernel_impl_nocast<%s >(at::TensorIteratorBase&, %s const&)::{lambda(int)#1})",
                  vec, f, f, f, f);
}

/* The functor PyTorch instantiates for a unary op on `type`. */
static void unary_functor(char *out, size_t n, const char *op, const char *type, const char *out_type)
{
    static const struct {
        const char *op, *fmt;
    } F[] = {
        {"aten::silu", "at::native::(anonymous namespace)::silu_kernel(at::TensorIteratorBase&)::{lambda()#1}::operator()() const::{lambda()#6}::operator()() const::{lambda(%s)#1}"},
        {"aten::gelu", "at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#4}::operator()() const::{lambda(%s)#1}"},
        {"aten::neg", "at::native::neg_kernel_cuda(at::TensorIteratorBase&)::{lambda()#2}::operator()() const::{lambda()#9}::operator()() const::{lambda(%s)#1}"},
        {"aten::rsqrt", "at::native::rsqrt_kernel_cuda(at::TensorIteratorBase&)::{lambda()#2}::operator()() const::{lambda()#2}::operator()() const::{lambda(%s)#1}"},
        {"aten::exp", "at::native::exp_kernel_cuda(at::TensorIteratorBase&)::{lambda()#2}::operator()() const::{lambda()#2}::operator()() const::{lambda(%s)#1}"},
        {"aten::sigmoid", "at::native::sigmoid_kernel_cuda(at::TensorIteratorBase&)::{lambda()#2}::operator()() const::{lambda()#3}::operator()() const::{lambda(%s)#1}"},
    };
    if (!strcmp(op, "aten::copy_")) {
        /* `type` is the source, `out_type` the destination; float -> bf16 has its own kernel */
        if (!strcmp(type, F32) && !strcmp(out_type, BF16))
            fmt_fixed(out, n, "at::native::bfloat16_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda(float)#1}");
        else
            fmt_fixed(out, n,
                      "at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() "
                      "const::{lambda()#12}::operator()() const::{lambda(%s)#1}",
                      out_type);
        return;
    }
    for (int i = 0; i < NCOLS(F); i++)
        if (!strcmp(op, F[i].op)) {
            fmt_fixed(out, n, F[i].fmt, type);
            return;
        }
    die("internal error: no functor for %s", op);
}

static void binary_functor(char *out, size_t n, const char *op, const char *type)
{
    /* sub is add with alpha = -1 in PyTorch, so it shares add's functor */
    if (!strncmp(op, "aten::add", 9) || !strcmp(op, "aten::sub"))
        fmt_fixed(out, n, "at::native::CUDAFunctor_add<%s>", type);
    else
        fmt_fixed(out, n, "at::native::BinaryFunctor<%s, %s, %s, at::native::binary_internal::%s<float> >",
                  type, type, type, strncmp(op, "aten::mul", 9) ? "DivFunctor" : "MulFunctor");
}

static void kn_reduce_sum(char *out, const char *type, int rocm)
{
    char op[320];
    fmt_fixed(op, sizeof op,
              "at::native::ReduceOp<%s, at::native::func_wrapper_t<float, at::native::sum_functor<%s, "
              "float, %s>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, unsigned int, %s, "
              "4%s>",
              type, type, type, type, rocm ? ", 4" : "");
    fmt_fixed(out, KNAME, "void at::native::reduce_kernel<512, 1, %s >(%s)", op, op);
}

static void kn_layer_norm(char *out, const char *type)
{
    fmt_fixed(out, KNAME,
              "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<%s, float>(int, "
              "float, %s const*, %s const*, %s const*, float*, float*, %s*)",
              type, type, type, type, type);
}

/* TorchInductor's generated kernels: kind (poi/red/per), the fused aten ops in
 * alphabetical order, and a per-graph index, which keeps every name distinct. */
static void kn_triton(char *out, size_t n, rng_t *r, unsigned long long index)
{
    static const char *const KIND[] = {"poi", "poi", "red", "per"};
    static const char *const WORDS[] = {
        "_to_copy", "add", "cat", "clone", "div", "embedding", "exp", "gelu", "mean", "mul",
        "native_layer_norm", "neg", "pow", "rsqrt", "sigmoid", "silu", "slice", "sub", "sum", "view",
        "where"};
    int pick[4], m = 2 + rng_below(r, 3);
    for (int i = 0; i < m; i++) {
        int w, dup;
        do {
            w = rng_below(r, NCOLS(WORDS));
            dup = 0;
            for (int j = 0; j < i; j++)
                dup |= pick[j] == w;
        } while (dup);
        pick[i] = w;
    }
    for (int i = 1; i < m; i++) /* WORDS is sorted: sorting indices sorts the words */
        for (int j = i; j > 0 && pick[j] < pick[j - 1]; j--) {
            int t = pick[j];
            pick[j] = pick[j - 1];
            pick[j - 1] = t;
        }
    char words[160] = "";
    for (int i = 0; i < m; i++) {
        strcat(words, "_");
        strcat(words, WORDS[pick[i]]);
    }
    fmt_fixed(out, n, "triton_%s_fused%s_%llu", PICK(r, KIND), words, index);
}

/* ---- random op templates ----------------------------------------------------------------- */

/*
 * Each template derives one dimension from the row's key index `ku` injectively, so
 * two rows of a sheet never share a key unless we make them (deliberate duplicates).
 */
static const char *pick_dtype(rng_t *r)
{
    int x = rng_below(r, 100);
    return x < 72 ? BF16 : x < 86 ? F16 : F32;
}

static void tpl_gemm(struct op *o, rng_t *r, uint64_t ku)
{
    static const long long KN[] = {512, 1024, 2048, 2816, 3072, 4096, 5120, 8192, 11008, 14336};
    static const int TILE[] = {64, 128, 128, 256};
    const char *dt = pick_dtype(r);
    long long M = 128 + 8 * (long long)ku, K = PICK(r, KN), N = PICK(r, KN);
    int which = rng_below(r, 100), ta = rng_below(r, 2), tb = rng_below(r, 2);
    struct arg *a, *b;
    if (which < 85) {
        int addmm = which >= 50;
        op_reset(o, addmm ? "aten::addmm" : "aten::mm", "GEMM", PM_GEMM);
        if (addmm)
            TENSOR(o, dt, N);
        a = TENSOR(o, dt, M, K);
        b = TENSOR(o, dt, K, N);
        if (ta)
            STRIDES(a, 1, M);
        if (tb)
            STRIDES(b, 1, K);
        if (addmm) {
            op_scalar(o, "Scalar", "1");
            op_scalar(o, "Scalar", "1");
        }
    } else {
        long long batch = 1LL << (1 + rng_below(r, 6));
        op_reset(o, "aten::bmm", "GEMM", PM_GEMM);
        TENSOR(o, dt, batch, M, K);
        TENSOR(o, dt, batch, K, N);
    }
    char name[KNAME];
    switch (rng_below(r, 3)) {
    case 0:
        kn_xmma(name, dt, ta ? (tb ? "nn" : "nt") : (tb ? "tn" : "tt"), PICK(r, TILE), PICK(r, TILE),
                1 + rng_below(r, 2));
        break;
    case 1:
        kn_tensile(name, dt, ta, tb, PICK(r, TILE), PICK(r, TILE), 64, 1 << rng_below(r, 4),
                   1 << rng_below(r, 4), 512 << rng_below(r, 2), 512 << rng_below(r, 2), 8);
        break;
    default: kn_cutlass(name, dt, PICK(r, TILE), PICK(r, TILE), 3 + rng_below(r, 3)); break;
    }
    if (rng_below(r, 5) == 0) { /* cuBLAS often zeroes a workspace first */
        op_kernel(o, 0.01, "Memset (Device)");
        op_kernel(o, 0.99, name);
    } else
        op_kernel(o, 1.0, name);
}

static void tpl_sdpa(struct op *o, rng_t *r, uint64_t ku, int bwd)
{
    static const long long HEADS[] = {8, 12, 16, 24, 32, 40};
    static const long long HDIM[] = {64, 64, 128};
    const char *dt = rng_below(r, 5) ? BF16 : F16;
    long long B = 1 + (long long)(ku % 16), N = 128 + 16 * (long long)(ku / 16);
    long long H = PICK(r, HEADS), D = PICK(r, HDIM);
    int causal = rng_below(r, 2), rocm = rng_below(r, 2);
    char dropout[40], scale[40], nq[24];
    concrete_float(dropout, sizeof dropout, rng_below(r, 5) ? 0.0 : 0.1);
    concrete_float(scale, sizeof scale, 1.0 / sqrt((double)D));
    fmt_fixed(nq, sizeof nq, "%lld", N);
    /* q, k, v are views of one packed (B, N, 3, H, D) projection */
    const long long qs[4] = {N * 3 * H * D, D, 3 * H * D, 1};
    const long long os[4] = {N * H * D, D, H * D, 1};
    if (!bwd) {
        op_reset(o, "aten::_scaled_dot_product_flash_attention", "SDPA_fwd", PM_SDPA_FWD);
        for (int i = 0; i < 3; i++)
            set_strides(TENSOR(o, dt, B, H, N, D), qs);
        op_scalar(o, "Scalar", dropout);
        op_scalar(o, "Scalar", causal ? "True" : "False");
        op_scalar(o, "Scalar", "False");
        op_scalar(o, "Scalar", scale);
        char name[KNAME];
        if (rocm)
            op_kernel(o, 1.0, "attn_fwd");
        else {
            kn_flash_fwd(name, dt, (int)D, causal);
            op_kernel(o, 1.0, name);
        }
        return;
    }
    op_reset(o, "aten::_scaled_dot_product_flash_attention_backward", "SDPA_bwd", PM_SDPA_BWD);
    set_strides(TENSOR(o, dt, B, H, N, D), os); /* grad_out */
    for (int i = 0; i < 3; i++)
        set_strides(TENSOR(o, dt, B, H, N, D), qs);
    set_strides(TENSOR(o, dt, B, H, N, D), os); /* out */
    TENSOR(o, F32, B, H, N);                      /* logsumexp */
    op_scalar(o, "", "");
    op_scalar(o, "", "");
    op_scalar(o, "Scalar", nq);
    op_scalar(o, "Scalar", nq);
    op_scalar(o, "Scalar", dropout);
    op_scalar(o, "Scalar", causal ? "True" : "False");
    op_scalar(o, I64, "");
    op_scalar(o, I64, "");
    op_scalar(o, "Scalar", scale);
    if (rocm) {
        op_kernel(o, 0.04, "bwd_preprocess");
        op_kernel(o, 0.62, "bwd_kernel_dk_dv");
        op_kernel(o, 0.34, "bwd_kernel_dq");
    } else {
        static const double FR[3] = {0.05, 0.89, 0.06};
        char name[KNAME];
        for (int i = 0; i < 3; i++) {
            kn_flash_bwd(name, i, dt, (int)D);
            op_kernel(o, FR[i], name);
        }
    }
}

static void tpl_conv(struct op *o, rng_t *r, uint64_t ku)
{
    static const long long COUT[] = {64, 128, 256, 512, 768, 1024};
    static const long long CIN[] = {64, 128, 256, 512};
    static const int TILE[] = {64, 128, 256};
    const char *dt = pick_dtype(r);
    long long B = 1 + (long long)(ku % 32), S = 16 + (long long)(ku / 32);
    long long cin, cout = PICK(r, COUT), k, s, p;
    if (rng_below(r, 4) == 0) { /* a stem / patch embedding on RGB input */
        cin = 3;
        k = rng_below(r, 2) ? 16 : 7;
        s = k == 16 ? 16 : 2;
        p = k == 16 ? 0 : 3;
    } else {
        cin = PICK(r, CIN);
        k = rng_below(r, 3) ? 3 : 1;
        s = rng_below(r, 4) ? 1 : 2;
        p = k / 2;
    }
    int bias = rng_below(r, 2);
    char sv[40], pv[40], name[KNAME];
    fmt_fixed(sv, sizeof sv, "[%lld, %lld]", s, s);
    fmt_fixed(pv, sizeof pv, "[%lld, %lld]", p, p);
    op_reset(o, "aten::convolution", "CONV_fwd", PM_CONV);
    TENSOR(o, dt, B, cin, S, S);
    TENSOR(o, dt, cout, cin, k, k);
    if (bias)
        TENSOR(o, dt, cout);
    else
        op_scalar(o, "", "");
    op_scalar(o, "ScalarList", sv);
    op_scalar(o, "ScalarList", pv);
    op_scalar(o, "ScalarList", "[1, 1]");
    op_scalar(o, "Scalar", "False");
    op_scalar(o, "ScalarList", "[0, 0]");
    op_scalar(o, "Scalar", "1");
    if (rng_below(r, 2)) {
        fmt_fixed(name, sizeof name,
                  "sm90_xmma_fprop_implicit_gemm_%s_nhwckrsc_nhwc_tilesize%dx%dx64_warpgroupsize1x1x1_g1_execute_kernel__5x_cudnn",
                  !strcmp(dt, F32) ? "tf32f32_tf32f32_f32" : !strcmp(dt, F16) ? "f16f16_f16f32_f32" : "bf16bf16_bf16f32_f32",
                  PICK(r, TILE), PICK(r, TILE));
    } else {
        fmt_fixed(name, sizeof name,
                  "igemm_fwd_gtcx3_nhwc_%s_bx0_ex1_bt%dx%dx32_wt32x32x8_ws1x1_wl2x2_ta1x8x4x1_1x4x1x64_tb1x8x2x1_1x4x1x64",
                  !strcmp(dt, F32) ? "fp32" : !strcmp(dt, F16) ? "fp16" : "bf16", PICK(r, TILE), PICK(r, TILE));
    }
    op_kernel(o, 1.0, name);
}

/* (b, s, h) activations; (b, s) is injective in ku */
static void act_shape(rng_t *r, uint64_t ku, long long *b, long long *s, long long *h)
{
    static const long long H[] = {256, 512, 768, 1024, 2048, 2816, 4096, 5120, 8192};
    *b = 1 + (long long)(ku % 8);
    *s = 16 + 8 * (long long)(ku / 8);
    *h = PICK(r, H);
}

static void tpl_unary(struct op *o, rng_t *r, uint64_t ku)
{
    static const char *const OPS[] = {"aten::copy_", "aten::copy_", "aten::silu", "aten::gelu",
                                      "aten::neg", "aten::rsqrt", "aten::exp", "aten::sigmoid"};
    const char *name = PICK(r, OPS), *dt = pick_dtype(r), *dt2 = dt;
    long long b, s, h;
    char f[512], kn[KNAME];
    act_shape(r, ku, &b, &s, &h);
    op_reset(o, name, "elementwise", PM_UNARY);
    TENSOR(o, dt, b, s, h);
    int contiguous = 1;
    if (!strcmp(name, "aten::copy_")) {
        /* copy_(self, src): a dtype cast or a transposed copy */
        if (rng_below(r, 2))
            dt2 = !strcmp(dt, F32) ? BF16 : F32;
        struct arg *src = TENSOR(o, dt2, b, s, h);
        if (!strcmp(dt, dt2)) {
            STRIDES(src, h, b * h, 1);
            contiguous = 0;
        }
        op_scalar(o, "Scalar", "False");
    } else if (!strcmp(name, "aten::gelu"))
        op_scalar(o, "", rng_below(r, 2) ? "none" : "tanh");
    unary_functor(f, sizeof f, name, dt2, dt); /* copy_(self, src): src is the input */
    kn_elementwise(kn, f, 2, rng_below(r, 2) ? 4 : 8, contiguous);
    op_kernel(o, 1.0, kn);
}

static void tpl_binary(struct op *o, rng_t *r, uint64_t ku)
{
    static const char *const OPS[] = {"aten::add", "aten::add", "aten::mul", "aten::mul",
                                      "aten::sub", "aten::div", "aten::add_", "aten::mul_"};
    const char *name = PICK(r, OPS), *dt = pick_dtype(r);
    long long b, s, h;
    char f[512], kn[KNAME];
    act_shape(r, ku, &b, &s, &h);
    op_reset(o, name, "elementwise", PM_BINARY);
    TENSOR(o, dt, b, s, h);
    int shape2 = rng_below(r, 3); /* same shape, a (h,) weight, or a (b, s, 1) scale */
    if (shape2 == 0)
        TENSOR(o, dt, b, s, h);
    else if (shape2 == 1)
        TENSOR(o, dt, h);
    else
        TENSOR(o, dt, b, s, 1);
    if (!strncmp(name, "aten::add", 9) || !strcmp(name, "aten::sub"))
        op_scalar(o, "Scalar", "1");
    binary_functor(f, sizeof f, name, dt);
    kn_elementwise(kn, f, 3, 4, shape2 == 0);
    op_kernel(o, 1.0, kn);
}

/* Ops without a roofline model: normalization, reductions, fills, gathers, collectives. */
static void tpl_misc(struct op *o, rng_t *r, uint64_t ku)
{
    const char *dt = pick_dtype(r);
    long long b, s, h;
    char kn[KNAME], tmp[64];
    act_shape(r, ku, &b, &s, &h);
    switch (rng_below(r, 5)) {
    case 0:
        op_reset(o, "aten::native_layer_norm", "other", PM_NONE);
        TENSOR(o, dt, b, s, h);
        fmt_fixed(tmp, sizeof tmp, "[%lld]", h);
        op_scalar(o, "ScalarList", tmp);
        TENSOR(o, dt, h);
        TENSOR(o, dt, h);
        op_scalar(o, "Scalar", "1.0000000000000001e-05");
        kn_layer_norm(kn, dt);
        break;
    case 1:
        op_reset(o, "aten::sum", "reduce", PM_NONE);
        TENSOR(o, dt, b, s, h);
        op_scalar(o, "ScalarList", "[0, 1]");
        op_scalar(o, "Scalar", "False");
        op_scalar(o, "", "");
        kn_reduce_sum(kn, dt, rng_below(r, 2));
        break;
    case 2:
        op_reset(o, "aten::fill_", "elementwise", PM_NONE);
        TENSOR(o, dt, b, s, h);
        op_scalar(o, "Scalar", "0");
        fmt_fixed(tmp, sizeof tmp, "at::native::FillFunctor<%s>", dt);
        kn_elementwise(kn, tmp, 1, 4, 1);
        break;
    case 3: {
        static const long long VOCAB[] = {32000, 50304, 128256, 151936};
        op_reset(o, "aten::index_select", "other", PM_NONE);
        TENSOR(o, dt, PICK(r, VOCAB), h);
        op_scalar(o, "Scalar", "0");
        TENSOR(o, I64, 64 + 8 * (long long)ku);
        fmt_fixed(kn, sizeof kn,
                  "void at::native::(anonymous namespace)::indexSelectLargeIndex<%s, long, unsigned int, 2, 2, "
                  "-2, true>(at::cuda::detail::TensorInfo<%s, unsigned int>, at::cuda::detail::TensorInfo<%s "
                  "const, unsigned int>, at::cuda::detail::TensorInfo<long const, unsigned int>, int, int, "
                  "unsigned int, unsigned int, long)",
                  dt, dt, dt);
        break;
    }
    default:
        op_reset(o, "nccl:all_reduce", "other", PM_NONE);
        TENSOR(o, F32, 262144 + 4096 * (long long)ku);
        fmt_fixed(kn, sizeof kn, "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)");
        break;
    }
    op_kernel(o, 1.0, kn);
}

/* ---- random report ----------------------------------------------------------------------- */

struct gen {
    uint64_t seed;
    enum role role;
};

/* ~85% of rows are in both reports, ~7.5% only in the baseline, ~7.5% only in the candidate. */
static int is_member(const struct gen *g, enum salt salt, uint64_t u)
{
    rng_t r = rng_at(g->seed, S_MEMBER | salt, u);
    int x = rng_below(&r, 1000);
    return g->role == BASELINE ? x < 925 : (x < 850 || x >= 925);
}

/* A few rows repeat the previous row's key, as ops seen on two threads do. */
static uint64_t key_index(uint64_t u)
{
    return u % 500 == 7 ? u - 1 : u;
}

/* How much slower (> 1) or faster (< 1) the candidate runs a row: mostly within
 * +-25%, now and then a big regression or win. */
static double cand_factor(const struct gen *g, enum salt salt, uint64_t u)
{
    rng_t r = rng_at(g->seed, S_FACTOR | salt, u);
    double f = exp(0.15 * rng_normal(&r));
    int x = rng_below(&r, 100);
    if (x < 3)
        f *= rng_range(&r, 1.8, 3.5);
    else if (x < 6)
        f /= rng_range(&r, 1.8, 3.0);
    return g->role == CANDIDATE ? f : 1.0;
}

static long long pick_count(rng_t *r)
{
    static const long long C[] = {1, 1, 2, 4, 8, 12, 16, 24, 24, 32, 48, 48, 49, 64, 72, 96, 100, 128, 200, 400};
    return PICK(r, C);
}

static void gen_op(const struct gen *g, enum salt salt, enum tpl tpl, uint64_t u, struct op *o)
{
    uint64_t ku = key_index(u);
    rng_t kr = rng_at(g->seed, salt, ku); /* everything that makes up the key */
    int is_short = tpl == TPL_SHORT;
    if (tpl == TPL_ANY) {
        int x = rng_below(&kr, 100);
        tpl = x < 25 ? TPL_GEMM : x < 30 ? TPL_SDPA_FWD : x < 35 ? TPL_SDPA_BWD : x < 40 ? TPL_CONV
            : x < 60 ? TPL_UNARY : x < 80 ? TPL_BINARY : TPL_MISC;
    } else if (is_short) {
        int x = rng_below(&kr, 3);
        tpl = x == 0 ? TPL_UNARY : x == 1 ? TPL_BINARY : TPL_MISC;
    }
    switch (tpl) {
    case TPL_GEMM: tpl_gemm(o, &kr, ku); break;
    case TPL_SDPA_FWD: tpl_sdpa(o, &kr, ku, 0); break;
    case TPL_SDPA_BWD: tpl_sdpa(o, &kr, ku, 1); break;
    case TPL_CONV: tpl_conv(o, &kr, ku); break;
    case TPL_UNARY: tpl_unary(o, &kr, ku); break;
    case TPL_BINARY: tpl_binary(o, &kr, ku); break;
    default: tpl_misc(o, &kr, ku); break;
    }
    op_finish_args(o);

    rng_t vr = rng_at(g->seed, S_VALUE | salt, u);
    rng_t nr = rng_at(g->seed, S_NOISE | salt, u * 2 + g->role);
    struct perf pf;
    double t;
    perf_of(o, &pf);
    if (is_short)
        t = rng_range(&vr, 1.2, 9.5);
    else if (pf.ok) { /* a roofline-bound time on an H100-class part, at some efficiency */
        double tflops = !strcmp(o->a[0].type, F32) && o->pm != PM_UNARY && o->pm != PM_BINARY ? 60 : 800;
        double tc = pf.gflops * 1000.0 / (tflops * rng_range(&vr, 0.3, 0.85));
        double tm = pf.mb * 1.048576 / (3.2 * rng_range(&vr, 0.4, 0.9));
        t = (tc > tm ? tc : tm) + rng_range(&vr, 1.5, 4.0);
    } else
        t = rng_logrange(&vr, 3, 3000);
    long long count = pick_count(&vr);
    t *= cand_factor(g, salt, u);
    int autograd = ku != u || strstr(o->name, "backward") || rng_below(&vr, 100) < 15;
    op_set_thread(o, g->role, autograd);
    o->uid = 1 + rng_below(&vr, 90000);
    op_set_times(o, &nr, g->role, count, t, rng_logrange(&vr, 6, 80));
}

/* Rows of a sheet in report order: descending time, like TraceLens sorts them. */
struct rowref {
    uint64_t u;
    double key;
};

static int cmp_rowref(const void *pa, const void *pb)
{
    const struct rowref *a = pa, *b = pb;
    if (a->key != b->key)
        return a->key < b->key ? 1 : -1;
    return a->u < b->u ? -1 : a->u > b->u;
}

/* The first n rows of the sheet's stream that belong to this report, sorted. */
static struct rowref *collect_ops(const struct gen *g, enum salt salt, enum tpl tpl, long n,
                                  struct op *o, double *total)
{
    struct rowref *rows = xcalloc((size_t)n, sizeof *rows);
    long got = 0;
    *total = 0;
    for (uint64_t u = 0; got < n; u++) {
        if (!is_member(g, salt, u))
            continue;
        gen_op(g, salt, tpl, u, o);
        rows[got].u = u;
        rows[got].key = o->t.sum;
        *total += o->t.sum;
        got++;
    }
    qsort(rows, (size_t)n, sizeof *rows, cmp_rowref);
    return rows;
}

/* ops_summary: well-known ops first, then TorchInductor's generated ones. */
static const struct {
    const char *name, *category;
} OP_POOL[] = {
    {"aten::mm", "GEMM"}, {"aten::addmm", "GEMM"}, {"aten::bmm", "GEMM"}, {"aten::baddbmm", "GEMM"},
    {"aten::_scaled_dot_product_flash_attention", "SDPA_fwd"},
    {"aten::_scaled_dot_product_flash_attention_backward", "SDPA_bwd"},
    {"aten::_flash_attention_forward", "other"}, {"aten::_flash_attention_backward", "other"},
    {"aten::convolution", "CONV_fwd"}, {"aten::convolution_backward", "CONV_bwd"},
    {"aten::copy_", "elementwise"}, {"aten::add", "elementwise"}, {"aten::add_", "elementwise"},
    {"aten::mul", "elementwise"}, {"aten::mul_", "elementwise"}, {"aten::div", "elementwise"},
    {"aten::sub", "elementwise"}, {"aten::neg", "elementwise"}, {"aten::silu", "elementwise"},
    {"aten::silu_backward", "elementwise"}, {"aten::gelu", "elementwise"},
    {"aten::gelu_backward", "elementwise"}, {"aten::pow", "elementwise"},
    {"aten::rsqrt", "elementwise"}, {"aten::exp", "elementwise"}, {"aten::native_dropout", "other"},
    {"aten::native_dropout_backward", "other"}, {"aten::native_layer_norm", "other"},
    {"aten::native_layer_norm_backward", "other"}, {"aten::sum", "reduce"}, {"aten::mean", "reduce"},
    {"aten::max", "reduce"}, {"aten::cat", "other"}, {"aten::index_select", "other"},
    {"aten::embedding_dense_backward", "other"}, {"aten::fill_", "elementwise"},
    {"aten::zero_", "elementwise"}, {"aten::_softmax", "other"}, {"aten::_log_softmax", "other"},
    {"aten::nll_loss_forward", "other"}, {"aten::_foreach_mul_", "multi_tensor_apply"},
    {"aten::_foreach_add_", "multi_tensor_apply"}, {"aten::_foreach_addcdiv_", "multi_tensor_apply"},
    {"aten::_foreach_lerp_", "multi_tensor_apply"}, {"aten::_foreach_norm", "multi_tensor_apply"},
    {"aten::_fused_adamw_", "multi_tensor_apply"}, {"aten::arange", "other"},
    {"aten::_local_scalar_dense", "other"}, {"nccl:all_reduce", "other"},
    {"nccl:all_gather", "other"}, {"nccl:reduce_scatter", "other"}, {"nccl:broadcast", "other"},
};

static void gen_opsum(const struct gen *g, uint64_t u, struct opsum *r)
{
    rng_t kr = rng_at(g->seed, S_OPS_SUMMARY, u);
    rng_t vr = rng_at(g->seed, S_VALUE | S_OPS_SUMMARY, u);
    double mean;
    /* the well-known ops carry most of the time, as in a real trace */
    if (u < (uint64_t)NCOLS(OP_POOL)) {
        fmt_fixed(r->name, sizeof r->name, "%s", OP_POOL[u].name);
        r->category = OP_POOL[u].category;
        r->count = pick_count(&vr) * (1 + rng_below(&vr, 8));
        mean = rng_logrange(&vr, 20, 4000);
    } else {
        kn_triton(r->name, sizeof r->name, &kr, (unsigned long long)u);
        r->category = "triton";
        r->count = pick_count(&vr);
        mean = rng_logrange(&vr, 2, 300);
    }
    mean *= cand_factor(g, S_OPS_SUMMARY, u);
    r->direct_us = round_ns(mean * (double)r->count);
    /* an op that also launches kernels through child ops has a larger subtree time */
    r->subtree_us = rng_below(&vr, 10) ? r->direct_us : round_ns(r->direct_us * rng_range(&vr, 1.05, 1.6));
}

/* kernel_summary: well-known kernels first, then Tensile and Inductor kernels whose names
 * carry the row index (in Tensile's workgroup-mapping field), so names never collide. */
static const struct {
    const char *category, *op, *name;
} KERNEL_POOL[] = {
    {"GEMM", "aten::mm", "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas"},
    {"GEMM", "aten::addmm", "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64_warpgroupsize2x1x1_execute_segment_k_off_kernel__5x_cublas"},
    {"GEMM", "aten::mm", "sm90_xmma_gemm_bf16bf16_bf16f32_f32_nn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas"},
    {"GEMM", "aten::mm", "Memset (Device)"},
    {"SDPA_fwd", "aten::_scaled_dot_product_flash_attention", "attn_fwd"},
    {"SDPA_bwd", "aten::_scaled_dot_product_flash_attention_backward", "bwd_kernel_dk_dv"},
    {"SDPA_bwd", "aten::_scaled_dot_product_flash_attention_backward", "bwd_kernel_dq"},
    {"SDPA_bwd", "aten::_scaled_dot_product_flash_attention_backward", "bwd_preprocess"},
    {"elementwise", "aten::add", "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, 3ul>)"},
    {"elementwise", "aten::add_", "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<float>, std::array<char*, 3ul>)"},
    {"elementwise", "aten::mul", "void at::native::vectorized_elementwise_kernel<4, at::native::BinaryFunctor<c10::BFloat16, c10::BFloat16, c10::BFloat16, at::native::binary_internal::MulFunctor<float> >, std::array<char*, 3ul> >(int, at::native::BinaryFunctor<c10::BFloat16, c10::BFloat16, c10::BFloat16, at::native::binary_internal::MulFunctor<float> >, std::array<char*, 3ul>)"},
    {"elementwise", "aten::fill_", "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, std::array<char*, 1ul> >(int, at::native::FillFunctor<float>, std::array<char*, 1ul>)"},
    {"elementwise", "aten::copy_", "void at::native::vectorized_elementwise_kernel<4, at::native::bfloat16_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda(float)#1}, std::array<char*, 2ul> >(int, at::native::bfloat16_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda(float)#1}, std::array<char*, 2ul>)"},
    {"reduce", "aten::sum", "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::func_wrapper_t<float, at::native::sum_functor<float, float, float>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, unsigned int, float, 4> >(at::native::ReduceOp<float, at::native::func_wrapper_t<float, at::native::sum_functor<float, float, float>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, unsigned int, float, 4>)"},
    {"other", "aten::native_layer_norm", "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::BFloat16, float>(int, float, c10::BFloat16 const*, c10::BFloat16 const*, c10::BFloat16 const*, float*, float*, c10::BFloat16*)"},
    {"other", "aten::cat", "void at::native::(anonymous namespace)::CatArrayBatchedCopy<at::native::(anonymous namespace)::OpaqueType<2u>, unsigned int, 4, 64, 64>(at::native::(anonymous namespace)::OpaqueType<2u>*, at::native::(anonymous namespace)::CatArrInputTensorMetadata<at::native::(anonymous namespace)::OpaqueType<2u>, unsigned int, 64, 64>, at::native::(anonymous namespace)::TensorSizeStride<unsigned int, 4u>, int, unsigned int)"},
    {"multi_tensor_apply", "aten::_fused_adamw_", "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous namespace)::FusedOptimizerTensorListMetadata<4>, at::native::(anonymous namespace)::FusedAdamMathFunctor<float, 4, (at::native::ADAM_MODE)1, false>, float*, double, double, double, double, double, bool, float*, float*>(at::native::(anonymous namespace)::FusedOptimizerTensorListMetadata<4>, at::native::(anonymous namespace)::FusedAdamMathFunctor<float, 4, (at::native::ADAM_MODE)1, false>, float*, double, double, double, double, double, bool, float*, float*)"},
    {"other", "nccl:all_reduce", "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)"},
    {"other", "nccl:all_gather", "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)"},
    {"other", "nccl:reduce_scatter", "ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)"},
};

struct kernel_rec { /* a kernel_summary row with storage for its names */
    struct krow row;
    char name[KNAME];
};

static void gen_kernel(const struct gen *g, uint64_t u, struct kernel_rec *k)
{
    uint64_t ku = key_index(u);
    rng_t kr = rng_at(g->seed, S_KERNELS, ku);
    rng_t vr = rng_at(g->seed, S_VALUE | S_KERNELS, u);
    rng_t nr = rng_at(g->seed, S_NOISE | S_KERNELS, u * 2 + g->role);
    struct krow *r = &k->row;
    r->name = k->name;
    if (ku < (uint64_t)NCOLS(KERNEL_POOL)) {
        fmt_fixed(k->name, sizeof k->name, "%s", KERNEL_POOL[ku].name);
        r->category = KERNEL_POOL[ku].category;
        r->op = KERNEL_POOL[ku].op;
    } else if (rng_below(&kr, 100) < 35) {
        static const char *const OPS[] = {"aten::mm", "aten::addmm", "aten::bmm"};
        static const int MT[] = {16, 32, 64, 128, 192, 224, 256};
        static const int DU[] = {32, 64, 128};
        unsigned long long x = ku; /* mixed radix: every index gets its own parameters */
        int mt0 = MT[x % 7], mt1 = MT[(x / 7) % 7], du = DU[(x / 49) % 3];
        int w0 = 1 << ((x / 147) % 4), w1 = 1 << ((x / 588) % 4);
        kn_tensile(k->name, PICK(&kr, ((const char *const[]){BF16, BF16, F16, F32})), rng_below(&kr, 2),
                   rng_below(&kr, 2), mt0, mt1, du, w0, w1, 512, 512, 1 + x / 2352);
        r->category = "GEMM";
        r->op = PICK(&kr, OPS);
    } else {
        kn_triton(k->name, sizeof k->name, &kr, (unsigned long long)ku);
        r->category = "triton";
        r->op = k->name; /* Inductor's launcher op is named after its kernel */
    }
    if (ku != u) /* the same kernel again, launched with no parent op on record */
        r->category = r->op = NULL;
    r->stream = strncmp(k->name, "nccl", 4) ? PLAT[g->role].stream : PLAT[g->role].comm_stream;
    struct stats st;
    int pool = ku < (uint64_t)NCOLS(KERNEL_POOL);
    long long count = pick_count(&vr) * (pool ? 1 + rng_below(&vr, 4) : 1);
    double mean = rng_logrange(&vr, pool ? 20 : 1.5, pool ? 4000 : 600) * cand_factor(g, S_KERNELS, u);
    make_stats(&st, &nr, count, mean);
    r->count = count;
    r->sum = st.sum;
    r->mean = st.mean;
    r->min = st.min;
    r->max = st.max;
}

static void write_random(struct emit *em, const struct gen *g, long n)
{
    struct scratch sc = {0};
    struct op *o = xcalloc(1, sizeof *o);
    struct opsum os;
    struct kernel_rec *kr = xcalloc(1, sizeof *kr);
    struct cats cs = {0};
    double total, cum, kernels_us = 0, comm_us = 0, ops_us = 0;

    /* Pass 1 over kernels and ops: the order of the rows, the totals the percentages and
     * the GPU timeline are computed from. */
    struct rowref *krows = xcalloc((size_t)n, sizeof *krows);
    long got = 0;
    for (uint64_t u = 0; got < n; u++) {
        if (!is_member(g, S_KERNELS, u))
            continue;
        gen_kernel(g, u, kr);
        krows[got].u = u;
        krows[got++].key = kr->row.sum;
        kernels_us += kr->row.sum;
        if (!strncmp(kr->name, "nccl", 4))
            comm_us += kr->row.sum;
    }
    qsort(krows, (size_t)n, sizeof *krows, cmp_rowref);

    struct rowref *orows = xcalloc((size_t)n, sizeof *orows);
    got = 0;
    for (uint64_t u = 0; got < n; u++) {
        if (!is_member(g, S_OPS_SUMMARY, u))
            continue;
        gen_opsum(g, u, &os);
        orows[got].u = u;
        orows[got++].key = os.direct_us;
        ops_us += os.direct_us;
        cats_add(&cs, os.category, os.count, os.direct_us / 1000.0);
    }
    qsort(orows, (size_t)n, sizeof *orows, cmp_rowref);

    /* The GPU is busy with the kernels; some communication and copies are exposed. */
    rng_t tr = rng_at(g->seed, S_TIMELINE, (uint64_t)g->role);
    struct timeline tl;
    tl.comp = (kernels_us - comm_us) / 1000.0;
    tl.tcomm = comm_us / 1000.0;
    tl.xcomm = tl.tcomm * rng_range(&tr, 0.1, 0.5);
    tl.tmemcpy = tl.comp * rng_range(&tr, 0.001, 0.02);
    tl.xmemcpy = tl.tmemcpy * rng_range(&tr, 0.05, 0.6);
    tl.idle = (tl.comp + tl.xcomm + tl.xmemcpy) * rng_range(&tr, 0.02, 0.12);
    write_timeline(em, &tl);

    em_sheet(em, "ops_summary", COLS_OPS_SUMMARY, NCOLS(COLS_OPS_SUMMARY));
    cum = 0;
    for (long i = 0; i < n; i++) {
        gen_opsum(g, orows[i].u, &os);
        write_opsum_row(em, &os, ops_us, &cum);
    }
    write_by_category(em, &cs);

    em_sheet(em, "kernel_summary", COLS_KERNEL_SUMMARY, NCOLS(COLS_KERNEL_SUMMARY));
    for (long i = 0; i < n; i++) {
        gen_kernel(g, krows[i].u, kr);
        write_kernel_row(em, &kr->row, kernels_us, timeline_total(&tl) * 1000.0);
    }

    /* ops_unique_args and unified_perf_summary hold the same op instances. */
    struct rowref *rows = collect_ops(g, S_UNIQUE_ARGS, TPL_ANY, n, o, &total);
    em_sheet(em, "ops_unique_args", COLS_UNIQUE_ARGS, NCOLS(COLS_UNIQUE_ARGS));
    cum = 0;
    for (long i = 0; i < n; i++) {
        gen_op(g, S_UNIQUE_ARGS, TPL_ANY, rows[i].u, o);
        double pct = o->t.sum / total * 100.0;
        cum += pct;
        write_unique_args_row(em, &sc, o, pct, cum);
    }
    em_sheet(em, "unified_perf_summary", COLS_UNIFIED, NCOLS(COLS_UNIFIED));
    cum = 0;
    for (long i = 0; i < n; i++) {
        gen_op(g, S_UNIQUE_ARGS, TPL_ANY, rows[i].u, o);
        double pct = o->t.sum / total * 100.0;
        cum += pct;
        write_unified_row(em, &sc, o, pct, cum);
    }
    free(rows);

    for (int s = 0; s < NCOLS(ROOFS); s++) {
        const struct roof *rf = &ROOFS[s];
        rows = collect_ops(g, rf->salt, rf->tpl, n, o, &total);
        roof_sheet(em, rf);
        for (long i = 0; i < n; i++) {
            gen_op(g, rf->salt, rf->tpl, rows[i].u, o);
            write_roof_row(em, &sc, rf, o);
        }
        free(rows);
    }

    rows = collect_ops(g, S_SHORT, TPL_SHORT, n, o, &total);
    em_sheet(em, "short_kernels_summary", COLS_SHORT, NCOLS(COLS_SHORT));
    for (long i = 0; i < n; i++) {
        gen_op(g, S_SHORT, TPL_SHORT, rows[i].u, o);
        write_short_row(em, &sc, o, &o->k[0], timeline_total(&tl) * 1000.0);
    }
    free(rows);

    free(krows);
    free(orows);
    free(kr);
    free(o);
    scratch_free(&sc);
}

/* ---- the bundled example: one ViT-L/16 training step, H100 vs MI300X --------------------- */

/*
 * Batch 32 of 224x224 images: 196 patches + CLS = 197 tokens, 6304 per batch; hidden
 * 1024, 16 heads of 64, MLP 4096, 24 layers.  Each entry is one op instance (one
 * ops_unique_args row) with its mean kernel time per call on each GPU; everything else
 * (ops_summary, kernel_summary, the roofline sheets, the GPU timeline) is derived from
 * these, so the sheets agree with each other.
 */
#define T1(ty, a) {1, {a}, {0}, ty, ""}
#define T2(ty, a, b) {2, {a, b}, {0}, ty, ""}
#define T2S(ty, a, b, s0, s1) {2, {a, b}, {s0, s1}, ty, ""}
#define T3(ty, a, b, c) {3, {a, b, c}, {0}, ty, ""}
#define T4(ty, a, b, c, d) {4, {a, b, c, d}, {0}, ty, ""}
#define T4S(ty, a, b, c, d, s0, s1, s2, s3) {4, {a, b, c, d}, {s0, s1, s2, s3}, ty, ""}
#define SC(ty, text) {0, {0}, {0}, ty, text}

#define QKV_VIEW(ty) T4S(ty, 32, 16, 197, 64, 605184, 64, 3072, 1) /* from the (32, 197, 3072) qkv */
#define HEADS_VIEW(ty) T4S(ty, 32, 16, 197, 64, 201728, 64, 1024, 1)

/* H100 (cuBLAS, FlashAttention-2, cuDNN) */
#define H_GEMM_TN_256 "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64_warpgroupsize2x1x1_execute_segment_k_off_kernel__5x_cublas"
#define H_GEMM_TN_128 "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas"
#define H_GEMM_NN_128 "sm90_xmma_gemm_bf16bf16_bf16f32_f32_nn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas"
#define H_GEMM_NT_128 "sm90_xmma_gemm_bf16bf16_bf16f32_f32_nt_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas"
#define H_FLASH_TRAITS_BWD "pytorch_flash::Flash_bwd_kernel_traits<64, 128, 128, 8, 2, 4, 2, false, false, cutlass::bfloat16_t, pytorch_flash::Flash_kernel_traits<64, 128, 128, 8, cutlass::bfloat16_t> >"
#define H_FLASH_FWD "void pytorch_flash::flash_fwd_kernel<pytorch_flash::Flash_fwd_kernel_traits<64, 128, 128, 4, false, false, cutlass::bfloat16_t, pytorch_flash::Flash_kernel_traits<64, 128, 128, 4, cutlass::bfloat16_t> >, false, false, false, false, false, true, false>(pytorch_flash::Flash_fwd_params)"
#define H_FLASH_BWD_PRE "void pytorch_flash::flash_bwd_dot_do_o_kernel<true, " H_FLASH_TRAITS_BWD " >(pytorch_flash::Flash_bwd_params)"
#define H_FLASH_BWD_MAIN "void pytorch_flash::flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel<" H_FLASH_TRAITS_BWD ", false, false, false, false, false, false>(pytorch_flash::Flash_bwd_params)"
#define H_FLASH_BWD_DQ "void pytorch_flash::flash_bwd_convert_dq_kernel<" H_FLASH_TRAITS_BWD " >(pytorch_flash::Flash_bwd_params, int)"
#define H_CONV_TRANSPOSE "void cudnn::engines_precompiled::nchwToNhwcKernel<__nv_bfloat16, __nv_bfloat16, float, false, true, (cudnnKernelDataType_t)2>(cudnn::engines_precompiled::nchw2nhwc_params_t<float>, __nv_bfloat16 const*, __nv_bfloat16*)"
#define H_CONV "sm90_xmma_fprop_implicit_gemm_bf16bf16_bf16f32_f32_nhwckrsc_nhwc_tilesize128x128x64_warpgroupsize1x1x1_g1_execute_kernel__5x_cudnn"
#define H_NCCL "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)"
#define H_FOREACH "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous namespace)::TensorListMetadata<3>, at::native::(anonymous namespace)::PointwiseOpScalarListFunctor<float, 3, 3, 0>, std::divides<float> >(at::native::(anonymous namespace)::TensorListMetadata<3>, at::native::(anonymous namespace)::PointwiseOpScalarListFunctor<float, 3, 3, 0>, std::divides<float>)"

/* MI300X (hipBLASLt, AOTriton, MIOpen) */
#define M_GEMM(a, b, mt0, mt1, w0, w1) "Cijk_A" a "_B" b "_BBS_BH_Bias_HA_S_SAV_UserArgs_MT" mt0 "x" mt1 "x64_MI16x16x1_SN_LDSB1_AFC1_AFEM1_AFEM1_ASEM1_CLR1_CADS0_DTVA0_DTVB0_EPS0_FDSI0_GRPM1_GRVWA8_GRVWB8_GSUAMB_GLS0_ISA942_IU1_K1_LBSPPA1024_LBSPPB512_LBSPPM0_LPA16_LPB16_LPM0_LRVW8_LWPMn1_MIAV0_MIWT" w0 "_" w1 "_MO40_NTn1_NTA0_NTB0_NTC0_NTD0_NTM0_NEPBS16_NLCA1_NLCB1_ONLL1_PGR2_PLR1_PKA1_SIA3_SS1_SPO0_SRVW0_SSO0_SVW8_SK3_SKXCCM0_TLDS1_ULSGRO0_USL1_UIOFGRO0_USFGROn1_VSn1_VWA8_VWB8_WSGRA0_WSGRB0_WS64_WG32_8_1"
#define M_CONV_TRANSPOSE "batched_transpose_32x16_half"
#define M_CONV "igemm_fwd_gtcx3_nhwc_bf16_bx0_ex1_bt256x128x32_wt32x32x8_ws2x1_wl2x2_ta1x8x4x1_1x4x1x64_tb1x8x2x1_1x4x1x64"
#define M_FUSED_ADAMW "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous namespace)::FusedOptimizerTensorListMetadata<4>, at::native::(anonymous namespace)::FusedAdamMathFunctor<float, 4, (at::native::ADAM_MODE)1, false>, float*, double, double, double, double, double, bool, float*, float*>(at::native::(anonymous namespace)::FusedOptimizerTensorListMetadata<4>, at::native::(anonymous namespace)::FusedAdamMathFunctor<float, 4, (at::native::ADAM_MODE)1, false>, float*, double, double, double, double, double, bool, float*, float*)"

/* the same PyTorch kernels on both, up to the vector width ROCm picks */
#define GELU_F "at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#4}::operator()() const::{lambda(c10::BFloat16)#1}"
#define GELU_K(v) "void at::native::vectorized_elementwise_kernel<" v ", " GELU_F ", std::array<char*, 2ul> >(int, " GELU_F ", std::array<char*, 2ul>)"
#define ADD_K "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, 3ul>)"
#define MUL_F "at::native::BinaryFunctor<c10::BFloat16, c10::BFloat16, c10::BFloat16, at::native::binary_internal::MulFunctor<float> >"
#define H_MUL "void at::native::elementwise_kernel<128, 4, at::native::gpu_kernel_impl_nocast<" MUL_F " >(at::TensorIteratorBase&, " MUL_F " const&)::{lambda(int)#1}>(int, at::native::gpu_kernel_impl_nocast<" MUL_F " >(at::TensorIteratorBase&, " MUL_F " const&)::{lambda(int)#1})"
#define M_MUL "void at::native::elementwise_kernel_manual_unroll<128, 8, at::native::gpu_kernel_impl_nocast<" MUL_F " >(at::TensorIteratorBase&, " MUL_F " const&)::{lambda(int, bool)#1}>(int, at::native::gpu_kernel_impl_nocast<" MUL_F " >(at::TensorIteratorBase&, " MUL_F " const&)::{lambda(int, bool)#1})"
#define COPY_F "at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#7}::operator()() const::{lambda(float)#1}"
#define COPY_K "void at::native::unrolled_elementwise_kernel<" COPY_F ", std::array<char*, 2ul>, 4, TrivialOffsetCalculator<1, unsigned int>, TrivialOffsetCalculator<1, unsigned int>, at::native::memory::LoadWithCast<1>, at::native::memory::StoreWithCast<1> >(int, " COPY_F ", std::array<char*, 2ul>, TrivialOffsetCalculator<1, unsigned int>, TrivialOffsetCalculator<1, unsigned int>, at::native::memory::LoadWithCast<1>, at::native::memory::StoreWithCast<1>)"
#define FILL_K "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, std::array<char*, 1ul> >(int, at::native::FillFunctor<float>, std::array<char*, 1ul>)"
#define LN_K "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::BFloat16, float>(int, float, c10::BFloat16 const*, c10::BFloat16 const*, c10::BFloat16 const*, float*, float*, c10::BFloat16*)"
#define SUM_OP(extra) "at::native::ReduceOp<c10::BFloat16, at::native::func_wrapper_t<float, at::native::sum_functor<c10::BFloat16, float, c10::BFloat16>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, unsigned int, c10::BFloat16, 4" extra ">"
#define SUM_K(extra) "void at::native::reduce_kernel<512, 1, " SUM_OP(extra) " >(" SUM_OP(extra) ")"

struct ex_entry {
    const char *name, *category;
    enum pm pm;
    int autograd;      /* issued from the autograd thread */
    long long count;   /* calls per step */
    double us[2];      /* mean kernel time per call on [H100, MI300X]; 0: not in that run */
    struct arg args[MAXARG]; /* up to the first with a NULL type */
    const char *kname[2][MAXKERN];
    double kfrac[2][MAXKERN];
};

static const struct ex_entry EXAMPLE[] = {
    /* the four projections of a block and two of their backward matmuls */
    {"aten::addmm", "GEMM", PM_GEMM, 0, 24, {81.6, 94.9},
     {T1(BF16, 4096), T2(BF16, 6304, 1024), T2S(BF16, 1024, 4096, 1, 1024), SC("Scalar", "1"), SC("Scalar", "1")},
     {{H_GEMM_TN_256}, {M_GEMM("lik", "ljk", "256", "256", "8", "8")}}, {{1}, {1}}},
    {"aten::addmm", "GEMM", PM_GEMM, 0, 24, {84.3, 77.8},
     {T1(BF16, 1024), T2(BF16, 6304, 4096), T2S(BF16, 4096, 1024, 1, 4096), SC("Scalar", "1"), SC("Scalar", "1")},
     {{H_GEMM_TN_128}, {M_GEMM("lik", "ljk", "256", "128", "8", "4")}}, {{1}, {1}}},
    {"aten::addmm", "GEMM", PM_GEMM, 0, 24, {62.7, 70.1},
     {T1(BF16, 3072), T2(BF16, 6304, 1024), T2S(BF16, 1024, 3072, 1, 1024), SC("Scalar", "1"), SC("Scalar", "1")},
     {{H_GEMM_TN_256}, {M_GEMM("lik", "ljk", "256", "256", "8", "8")}}, {{1}, {1}}},
    {"aten::mm", "GEMM", PM_GEMM, 1, 24, {85.2, 79.4},
     {T2(BF16, 6304, 4096), T2(BF16, 4096, 1024)},
     {{H_GEMM_NN_128}, {M_GEMM("ilk", "ljk", "256", "128", "8", "4")}}, {{1}, {1}}},
    {"aten::mm", "GEMM", PM_GEMM, 1, 24, {91.8, 88.6},
     {T2S(BF16, 4096, 6304, 1, 4096), T2(BF16, 6304, 1024)},
     {{H_GEMM_NT_128}, {M_GEMM("ilk", "jlk", "128", "128", "4", "4")}}, {{1}, {1}}},
    /* attention */
    {"aten::_scaled_dot_product_flash_attention", "SDPA_fwd", PM_SDPA_FWD, 0, 24, {24.9, 31.6},
     {QKV_VIEW(BF16), QKV_VIEW(BF16), QKV_VIEW(BF16), SC("Scalar", "0."), SC("Scalar", "False"),
      SC("Scalar", "False"), SC("Scalar", "0.125")},
     {{H_FLASH_FWD}, {"attn_fwd"}}, {{1}, {1}}},
    {"aten::_scaled_dot_product_flash_attention_backward", "SDPA_bwd", PM_SDPA_BWD, 1, 24, {71.3, 66.2},
     {HEADS_VIEW(BF16), QKV_VIEW(BF16), QKV_VIEW(BF16), QKV_VIEW(BF16), HEADS_VIEW(BF16),
      T3(F32, 32, 16, 197), SC("", ""), SC("", ""), SC("Scalar", "197"), SC("Scalar", "197"),
      SC("Scalar", "0."), SC("Scalar", "False"), SC(I64, ""), SC(I64, ""), SC("Scalar", "0.125")},
     {{H_FLASH_BWD_PRE, H_FLASH_BWD_MAIN, H_FLASH_BWD_DQ}, {"bwd_preprocess", "bwd_kernel_dk_dv", "bwd_kernel_dq"}},
     {{0.05, 0.89, 0.06}, {0.04, 0.61, 0.35}}},
    /* the patch embedding */
    {"aten::convolution", "CONV_fwd", PM_CONV, 0, 1, {47.6, 61.2},
     {T4(BF16, 32, 3, 224, 224), T4(BF16, 1024, 3, 16, 16), T1(BF16, 1024), SC("ScalarList", "[16, 16]"),
      SC("ScalarList", "[0, 0]"), SC("ScalarList", "[1, 1]"), SC("Scalar", "False"),
      SC("ScalarList", "[0, 0]"), SC("Scalar", "1")},
     {{H_CONV_TRANSPOSE, H_CONV}, {M_CONV_TRANSPOSE, M_CONV}}, {{0.14, 0.86}, {0.11, 0.89}}},
    /* norms, activations, residuals */
    {"aten::native_layer_norm", "other", PM_NONE, 0, 49, {9.82, 8.05},
     {T3(BF16, 32, 197, 1024), SC("ScalarList", "[1024]"), T1(BF16, 1024), T1(BF16, 1024),
      SC("Scalar", "9.9999999999999995e-07")},
     {{LN_K}, {LN_K}}, {{1}, {1}}},
    {"aten::gelu", "elementwise", PM_UNARY, 0, 24, {39.6, 31.2},
     {T3(BF16, 32, 197, 4096), SC("", "none")},
     {{GELU_K("4")}, {GELU_K("8")}}, {{1}, {1}}},
    {"aten::add", "elementwise", PM_BINARY, 0, 48, {15.9, 12.6},
     {T3(BF16, 32, 197, 1024), T3(BF16, 32, 197, 1024), SC("Scalar", "1")},
     {{ADD_K}, {ADD_K}}, {{1}, {1}}},
    {"aten::mul", "elementwise", PM_BINARY, 0, 48, {11.8, 13.9},
     {T3(BF16, 32, 197, 1024), T1(BF16, 1024)},
     {{H_MUL}, {M_MUL}}, {{1}, {1}}},
    /* gradients: cast to fp32 for the optimizer, zeroed on both threads (a duplicate key) */
    {"aten::copy_", "elementwise", PM_UNARY, 1, 48, {9.1, 6.3},
     {T2(F32, 1024, 4096), T2(BF16, 1024, 4096), SC("Scalar", "False")},
     {{COPY_K}, {COPY_K}}, {{1}, {1}}},
    {"aten::fill_", "elementwise", PM_NONE, 0, 24, {3.05, 2.41},
     {T2(F32, 1024, 4096), SC("Scalar", "0")},
     {{FILL_K}, {FILL_K}}, {{1}, {1}}},
    {"aten::fill_", "elementwise", PM_NONE, 1, 24, {3.11, 2.47},
     {T2(F32, 1024, 4096), SC("Scalar", "0")},
     {{FILL_K}, {FILL_K}}, {{1}, {1}}},
    {"aten::sum", "reduce", PM_NONE, 1, 24, {18.4, 21.7},
     {T2(BF16, 6304, 4096), SC("ScalarList", "[0]"), SC("Scalar", "False"), SC("", "")},
     {{SUM_K("")}, {SUM_K(", 4")}}, {{1}, {1}}},
    /* only the H100 run is data-parallel: its gradient buckets are all-reduced */
    {"nccl:all_reduce", "other", PM_NONE, 1, 48, {61.5, 0},
     {T1(F32, 6553600)},
     {{H_NCCL}, {NULL}}, {{1}, {0}}},
    /* the optimizer: foreach kernels on the H100, the fused AdamW kernel on the MI300X */
    {"aten::_foreach_addcdiv_", "multi_tensor_apply", PM_NONE, 0, 1, {612.0, 0},
     {SC("TensorList", ""), SC("TensorList", ""), SC("TensorList", ""), SC("ScalarList", "")},
     {{H_FOREACH}, {NULL}}, {{1}, {0}}},
    {"aten::_fused_adamw_", "multi_tensor_apply", PM_NONE, 0, 1, {0, 884.0},
     {SC("TensorList", ""), SC("TensorList", ""), SC("TensorList", ""), SC("TensorList", ""),
      SC("TensorList", ""), SC("TensorList", ""), SC("Scalar", "0.001"), SC("Scalar", "0.90000000000000002"),
      SC("Scalar", "0.999"), SC("Scalar", "0.050000000000000003"), SC("Scalar", "1e-08"),
      SC("Scalar", "False"), SC("Scalar", "False"), SC("", ""), SC("", "")},
     {{NULL}, {M_FUSED_ADAMW}}, {{0}, {1}}},
};

/* Per run: host-to-device copies, how much of the collectives overlaps compute, and the
 * time the GPU waits on the CPU (dataloader, optimizer step launch). */
static const struct {
    double memcpy_ms, memcpy_exposed, comm_exposed, idle_ms;
} EX_TIMELINE[2] = {{0.212, 0.18, 0.21, 0.86}, {0.187, 0.15, 0.0, 1.12}};

static int cmp_op_time(const void *pa, const void *pb)
{
    const struct op *a = *(const struct op *const *)pa, *b = *(const struct op *const *)pb;
    return a->t.sum < b->t.sum ? 1 : a->t.sum > b->t.sum ? -1 : 0;
}

static int cmp_krow(const void *pa, const void *pb)
{
    const struct krow *a = pa, *b = pb;
    return a->sum < b->sum ? 1 : a->sum > b->sum ? -1 : 0;
}

static int cmp_opsum(const void *pa, const void *pb)
{
    const struct opsum *a = pa, *b = pb;
    return a->direct_us < b->direct_us ? 1 : a->direct_us > b->direct_us ? -1 : 0;
}

struct short_ref {
    const struct op *op;
    const struct kernel *k;
};

static int cmp_short(const void *pa, const void *pb)
{
    const struct short_ref *a = pa, *b = pb;
    return a->k->st.sum < b->k->st.sum ? 1 : a->k->st.sum > b->k->st.sum ? -1 : 0;
}

static void write_example(struct emit *em, enum role role)
{
    enum { N = NCOLS(EXAMPLE) };
    struct op *ops = xcalloc(N, sizeof *ops), *sorted[N];
    struct opsum sums[N];
    struct krow krows[N * MAXKERN];
    struct cats cs = {0};
    struct scratch sc = {0};
    int n = 0, nsum = 0, nk = 0;
    double kernels_us = 0, comm_us = 0, ops_us = 0, cum;

    for (int i = 0; i < N; i++) {
        const struct ex_entry *x = &EXAMPLE[i];
        if (x->us[role] <= 0)
            continue;
        struct op *o = &ops[n];
        rng_t r = rng_at(0x7a11e55ULL, (uint64_t)i, (uint64_t)role);
        op_reset(o, x->name, x->category, x->pm);
        for (int a = 0; a < MAXARG && x->args[a].type; a++)
            *op_arg(o) = x->args[a];
        op_finish_args(o);
        for (int k = 0; k < MAXKERN && x->kname[role][k]; k++)
            op_kernel(o, x->kfrac[role][k], x->kname[role][k]);
        op_set_thread(o, role, x->autograd);
        o->uid = 40 + 17 * i + 3 * role;
        /* the table's times are round figures; a measured run is never that tidy */
        op_set_times(o, &r, role, x->count, x->us[role] * rng_range(&r, 0.985, 1.015), rng_range(&r, 9, 45));
        sorted[n++] = o;
    }
    qsort(sorted, (size_t)n, sizeof sorted[0], cmp_op_time);

    /* ops_summary: per op name; kernel_summary: per (kernel, parent op) */
    for (int i = 0; i < n; i++) {
        const struct op *o = sorted[i];
        int j;
        for (j = 0; j < nsum && strcmp(sums[j].name, o->name); j++)
            ;
        if (j == nsum) {
            memset(&sums[nsum], 0, sizeof sums[0]);
            fmt_fixed(sums[nsum].name, sizeof sums[0].name, "%s", o->name);
            sums[nsum++].category = o->category;
        }
        sums[j].count += o->t.count;
        sums[j].direct_us = round_ns(sums[j].direct_us + o->t.sum);
        sums[j].subtree_us = sums[j].direct_us;
        ops_us += o->t.sum;
        for (int k = 0; k < o->nk; k++) {
            const struct kernel *kk = &o->k[k];
            int m;
            for (m = 0; m < nk && (strcmp(krows[m].name, kk->name) || strcmp(krows[m].op, o->name)); m++)
                ;
            if (m == nk) {
                krows[nk] = (struct krow){o->category, o->name, kk->name, kk->stream, 0, 0, 0, kk->st.min, kk->st.max};
                nk++;
            }
            krows[m].count += kk->st.count;
            krows[m].sum = round_ns(krows[m].sum + kk->st.sum);
            krows[m].mean = krows[m].sum / (double)krows[m].count;
            krows[m].min = fmin(krows[m].min, kk->st.min);
            krows[m].max = fmax(krows[m].max, kk->st.max);
            kernels_us += kk->st.sum;
            if (!strncmp(kk->name, "nccl", 4))
                comm_us += kk->st.sum;
        }
    }
    qsort(sums, (size_t)nsum, sizeof sums[0], cmp_opsum);
    qsort(krows, (size_t)nk, sizeof krows[0], cmp_krow);
    for (int i = 0; i < nsum; i++)
        cats_add(&cs, sums[i].category, sums[i].count, sums[i].direct_us / 1000.0);

    /* one stream of compute kernels back to back; the all-reduce partly hidden under it */
    struct timeline tl;
    tl.comp = (kernels_us - comm_us) / 1000.0;
    tl.tcomm = comm_us / 1000.0;
    tl.xcomm = tl.tcomm * EX_TIMELINE[role].comm_exposed;
    tl.tmemcpy = EX_TIMELINE[role].memcpy_ms;
    tl.xmemcpy = tl.tmemcpy * EX_TIMELINE[role].memcpy_exposed;
    tl.idle = EX_TIMELINE[role].idle_ms;
    double total_us = timeline_total(&tl) * 1000.0;
    write_timeline(em, &tl);

    em_sheet(em, "ops_summary", COLS_OPS_SUMMARY, NCOLS(COLS_OPS_SUMMARY));
    cum = 0;
    for (int i = 0; i < nsum; i++)
        write_opsum_row(em, &sums[i], ops_us, &cum);
    write_by_category(em, &cs);

    em_sheet(em, "kernel_summary", COLS_KERNEL_SUMMARY, NCOLS(COLS_KERNEL_SUMMARY));
    for (int i = 0; i < nk; i++)
        write_kernel_row(em, &krows[i], kernels_us, total_us);

    em_sheet(em, "ops_unique_args", COLS_UNIQUE_ARGS, NCOLS(COLS_UNIQUE_ARGS));
    cum = 0;
    for (int i = 0; i < n; i++) {
        double pct = sorted[i]->t.sum / ops_us * 100.0;
        cum += pct;
        write_unique_args_row(em, &sc, sorted[i], pct, cum);
    }
    em_sheet(em, "unified_perf_summary", COLS_UNIFIED, NCOLS(COLS_UNIFIED));
    cum = 0;
    for (int i = 0; i < n; i++) {
        double pct = sorted[i]->t.sum / ops_us * 100.0;
        cum += pct;
        write_unified_row(em, &sc, sorted[i], pct, cum);
    }

    for (int s = 0; s < NCOLS(ROOFS); s++) {
        roof_sheet(em, &ROOFS[s]);
        for (int i = 0; i < n; i++)
            if (sorted[i]->pm == ROOFS[s].pm)
                write_roof_row(em, &sc, &ROOFS[s], sorted[i]);
    }

    /* kernels averaging under 10 us, most time first, as TraceLens lists them */
    struct short_ref shorts[N * MAXKERN];
    int nshort = 0;
    for (int i = 0; i < n; i++)
        for (int k = 0; k < sorted[i]->nk; k++)
            if (sorted[i]->k[k].st.mean < 10.0)
                shorts[nshort++] = (struct short_ref){sorted[i], &sorted[i]->k[k]};
    qsort(shorts, (size_t)nshort, sizeof shorts[0], cmp_short);
    em_sheet(em, "short_kernels_summary", COLS_SHORT, NCOLS(COLS_SHORT));
    for (int i = 0; i < nshort; i++)
        write_short_row(em, &sc, shorts[i].op, shorts[i].k, total_us);

    scratch_free(&sc);
    free(ops);
}

/* ---- a recompute-style report (--recompute) ---------------------------------------------- */

/*
 * A small training step with activation checkpointing, laid out as real reports of that
 * kind are: several rows per key in every summary sheet.  gpu_timeline has a row per type
 * and is_recompute (the recomputed forward is counted apart); ops_summary a row per op and
 * parent_module; kernel_summary a row per kernel, parent op and stream (one GEMM kernel
 * under three ops, one copy kernel on two streams).  ops_unique_args holds two rows that
 * nothing in the sheet tells apart (the same op and arguments, from two call sites), as
 * reports made from merged traces do.  The candidate's times are those of the baseline
 * scaled per row, so that every diff is known.
 */
static void write_recompute(struct emit *em, enum role role)
{
    double f = role == CANDIDATE ? 1.1 : 1.0;
    static const char *const tl_cols[] = {"type", "is_recompute", "time ms", "percent"};
    em_sheet(em, "gpu_timeline", tl_cols, 4);
    static const struct { const char *type; int rec; double ms; } tl[] = {
        {"computation_time", 0, 20.0}, {"computation_time", 1, 6.0},
        {"exposed_comm_time", 0, 1.5},  {"exposed_comm_time", 1, 0.5},
        {"exposed_memcpy_time", 0, 0.2}, {"exposed_memcpy_time", 1, 0.1},
        {"busy_time", 0, 21.7},        {"busy_time", 1, 6.6},
        {"idle_time", 0, 1.7},         {"total_time", 0, 30.0},
    };
    for (size_t i = 0; i < sizeof tl / sizeof *tl; i++) {
        /* the candidate's busy part grows by f, its idle time absorbs the rest of 30 ms * f */
        double ms = tl[i].ms * f;
        em_str(em, tl[i].type);
        em_bool(em, tl[i].rec);
        em_num(em, round2(ms * 1000) / 1000);
        em_num(em, round2(100 * tl[i].ms / 30.0));
        em_end_row(em);
    }

    static const char *const ops_cols[] = {"name", "parent_module", "total_direct_kernel_time_sum",
                                           "total_direct_kernel_time_ms", "Count", "Categories",
                                           "Percentage (%)", "Cumulative Percentage (%)"};
    em_sheet(em, "ops_summary", ops_cols, 8);
    static const struct { const char *name, *module; double us; int count; } ops[] = {
        {"aten::mm", "model.layers.attn.q_proj", 6000, 96},  {"aten::mm", "model.layers.attn.k_proj", 4000, 96},
        {"aten::mm", "model.layers.mlp.fc1", 5000, 96},      {"aten::addmm", "model.layers.mlp.fc2", 3000, 48},
        {"aten::add", "model.layers.attn", 1500, 48},        {"aten::add", "model.layers.mlp", 1000, 48},
        {"aten::copy_", "model.embed", 800, 24},
    };
    double cum = 0, all = 0;
    for (size_t i = 0; i < sizeof ops / sizeof *ops; i++)
        all += ops[i].us;
    for (size_t i = 0; i < sizeof ops / sizeof *ops; i++) {
        double us = ops[i].us * f;
        cum += 100 * ops[i].us / all;
        em_str(em, ops[i].name);
        em_str(em, ops[i].module);
        em_num(em, us);
        em_num(em, us / 1000);
        em_int(em, ops[i].count);
        em_str(em, "['GEMM']");
        em_num(em, round2(100 * ops[i].us / all));
        em_num(em, round2(cum));
        em_end_row(em);
    }

    static const char *const k_cols[] = {"Parent op category", "Parent cpu_op", "Kernel name", "Kernel stream",
                                         "Kernel duration (\xc2\xb5s)_sum", "Kernel duration (\xc2\xb5s)_count",
                                         "Kernel duration (\xc2\xb5s)_mean", "Percent of kernels time (%)"};
    em_sheet(em, "kernel_summary", k_cols, 8);
    static const struct { const char *cat, *op, *kernel; int stream; double us; int count; } ks[] = {
        {"GEMM", "aten::mm", "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64", 7, 15000, 288},
        {"GEMM", "aten::addmm", "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64", 7, 3000, 48},
        {"GEMM", "aten::linear", "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64", 7, 900, 24},
        {"elementwise", "aten::add", "vectorized_elementwise_kernel<4, CUDAFunctor_add<float>>", 7, 2500, 96},
        {"elementwise", "aten::copy_", "direct_copy_kernel_cuda", 7, 500, 12},
        {"elementwise", "aten::copy_", "direct_copy_kernel_cuda", 13, 300, 12},
    };
    for (size_t i = 0; i < sizeof ks / sizeof *ks; i++) {
        double us = ks[i].us * f;
        em_str(em, ks[i].cat);
        em_str(em, ks[i].op);
        em_str(em, ks[i].kernel);
        em_int(em, ks[i].stream);
        em_num(em, us);
        em_int(em, ks[i].count);
        em_num(em, us / ks[i].count);
        em_num(em, round2(100 * ks[i].us / 22200));
        em_end_row(em);
    }

    static const char *const u_cols[] = {"name", "Input type", "Input Dims", "Input Strides", "Concrete Inputs",
                                         "operation_count", "total_direct_kernel_time_sum",
                                         "total_direct_kernel_time_mean"};
    em_sheet(em, "ops_unique_args", u_cols, 8);
    static const struct { const char *name, *dims; int count; double us; } ua[] = {
        {"aten::mm", "((4096, 1024), (1024, 1024))", 192, 10000},
        {"aten::mm", "((4096, 1024), (1024, 4096))", 96, 5000},
        /* the same op and arguments twice: two call sites the sheet does not name */
        {"aten::add", "((4096, 1024), (4096, 1024))", 48, 1500},
        {"aten::add", "((4096, 1024), (4096, 1024))", 48, 1000},
    };
    for (size_t i = 0; i < sizeof ua / sizeof *ua; i++) {
        double us = ua[i].us * f;
        em_str(em, ua[i].name);
        em_str(em, "('c10::BFloat16', 'c10::BFloat16')");
        em_str(em, ua[i].dims);
        em_str(em, "((1024, 1), (1024, 1))");
        em_str(em, "('', '')");
        em_int(em, ua[i].count);
        em_num(em, us);
        em_num(em, us / ua[i].count);
        em_end_row(em);
    }
}

/* ---- command line ------------------------------------------------------------------------ */

static void usage(FILE *f)
{
    fputs("usage: genreport [--rows N] [--seed S] [--role baseline|candidate]\n"
          "                 [--csv DIR] [--xlsx FILE]\n"
          "       genreport --example baseline|candidate [--csv DIR] [--xlsx FILE]\n"
          "       genreport --recompute baseline|candidate [--csv DIR] [--xlsx FILE]\n"
          "\n"
          "Write one synthetic TraceLens performance report: gpu_timeline, ops_summary,\n"
          "ops_summary_by_category, kernel_summary, ops_unique_args, unified_perf_summary,\n"
          "GEMM, SDPA_fwd, SDPA_bwd, CONV_fwd, UnaryElementwise, BinaryElementwise and\n"
          "short_kernels_summary, as a CSV directory and/or an xlsx workbook.\n"
          "\n"
          "  --rows N        rows in each large sheet (default 1000, at most 1000000)\n"
          "  --seed S        random seed (default 1); the baseline and the candidate made\n"
          "                  with one seed share about 85% of their keys\n"
          "  --role R        baseline (default) or candidate: which rows, which timings\n"
          "  --example R     the small hand-made example pair instead: a ViT-L/16 training\n"
          "                  step on an H100 (baseline) or an MI300X (candidate)\n"
          "  --recompute R   a small recompute-style report instead: several rows per key in\n"
          "                  gpu_timeline (is_recompute), ops_summary (parent_module),\n"
          "                  kernel_summary (parent op, stream) and ops_unique_args (none\n"
          "                  tells them apart); the candidate's times are 1.1x the baseline's\n"
          "  --csv DIR       write DIR/<sheet>.csv (DIR is created if missing)\n"
          "  --xlsx FILE     write the workbook FILE\n"
          "  -h, --help      show this help\n",
          f);
}

static void usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

static void usage_error(const char *fmt, ...)
{
    va_list ap;
    fputs("genreport: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputs("\n", stderr);
    usage(stderr);
    exit(2);
}

static int parse_role(const char *s, enum role *role)
{
    if (!strcmp(s, "baseline"))
        *role = BASELINE;
    else if (!strcmp(s, "candidate"))
        *role = CANDIDATE;
    else
        return 0;
    return 1;
}

int main(int argc, char **argv)
{
    const char *csv = NULL, *xlsx = NULL;
    long rows = 1000;
    struct gen g = {1, BASELINE};
    int example = 0, random_opts = 0, recompute = 0;
    enum role example_role = BASELINE;

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 0;
        }
        if (i + 1 >= argc)
            usage_error("%s: unknown option or missing value", a);
        const char *v = argv[++i];
        char *end;
        if (!strcmp(a, "--rows")) {
            errno = 0;
            rows = strtol(v, &end, 10);
            if (errno || *end || end == v || rows < 1 || rows > MAX_ROWS)
                usage_error("--rows %s: expected a whole number from 1 to 1000000", v);
            random_opts = 1;
        } else if (!strcmp(a, "--seed")) {
            errno = 0;
            g.seed = strtoull(v, &end, 0);
            if (errno || *end || end == v || *v == '-')
                usage_error("--seed %s: expected a non-negative whole number", v);
            random_opts = 1;
        } else if (!strcmp(a, "--role")) {
            if (!parse_role(v, &g.role))
                usage_error("--role %s: expected baseline or candidate", v);
            random_opts = 1;
        } else if (!strcmp(a, "--example")) {
            if (!parse_role(v, &example_role))
                usage_error("--example %s: expected baseline or candidate", v);
            example = 1;
        } else if (!strcmp(a, "--recompute")) {
            if (!parse_role(v, &example_role))
                usage_error("--recompute %s: expected baseline or candidate", v);
            recompute = 1;
        } else if (!strcmp(a, "--csv"))
            csv = v;
        else if (!strcmp(a, "--xlsx"))
            xlsx = v;
        else
            usage_error("%s: unknown option", a);
    }
    if (!csv && !xlsx)
        usage_error("%s", "nothing to write: give --csv DIR and/or --xlsx FILE");
    if ((example || recompute) && random_opts)
        usage_error("%s", "--example and --recompute take no --rows, --seed or --role");
    if (example && recompute)
        usage_error("%s", "give --example or --recompute, not both");

    struct emit em;
    em_open(&em, csv, xlsx);
    if (recompute)
        write_recompute(&em, example_role);
    else if (example)
        write_example(&em, example_role);
    else
        write_random(&em, &g, rows);
    em_finish(&em);
    return 0;
}
