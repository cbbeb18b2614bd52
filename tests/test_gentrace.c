/*
 * test_gentrace.c - tools/gentrace, the synthetic PyTorch trace generator, run as a program.
 *
 * The generator's output is test and benchmark input for the trace reader and the diff, so
 * what matters is that it is valid JSON, byte-for-byte reproducible, and holds the structures
 * real traces hold (TRACES.md §1).  The binary is build/tools/gentrace next to $TLCOMPARE
 * (set by `make unit-test`), or $GENTRACE.  The JSON is checked by a small validating parser
 * here (the full grammar; a hook sees each member of each traceEvents element), independent
 * of the project's own reader.
 */
#include "testutil.h"

#include "trace/infer.h"

#include <ctype.h>
#include <errno.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <zlib.h>

static char gentrace[4096];
static char *tmpdir;

/* ---- running the generator ---------------------------------------------------------------- */

/* Run gentrace with argv (NULL-terminated, without argv[0]), stdout and stderr to /dev/null;
 * returns the exit status (or 128 + signal) and the child's peak RSS in KB. */
static int run(const char *const *args, long *rss_kb)
{
    const char *argv[32];
    int n = 0;
    argv[n++] = gentrace;
    while (*args && n < 31)
        argv[n++] = *args++;
    argv[n] = NULL;
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        FILE *null = freopen("/dev/null", "w", stdout);
        (void)null;
        null = freopen("/dev/null", "w", stderr);
        (void)null;
        execv(gentrace, (char *const *)argv);
        _exit(127);
    }
    int status;
    struct rusage ru;
    assert_int_equal(wait4(pid, &status, 0, &ru), pid);
    if (rss_kb)
        *rss_kb = ru.ru_maxrss;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* The whole file, decompressed if it is gzip (gzread passes plain files through). */
static char *slurp(const char *path, size_t *len)
{
    gzFile g = gzopen(path, "rb");
    assert_non_null(g);
    size_t cap = 1 << 20, n = 0;
    char *buf = malloc(cap);
    assert_non_null(buf);
    for (;;) {
        if (cap - n < (1 << 16)) {
            cap *= 2;
            buf = realloc(buf, cap);
            assert_non_null(buf);
        }
        int got = gzread(g, buf + n, (unsigned)(cap - n - 1));
        assert_true(got >= 0);
        if (got == 0)
            break;
        n += (size_t)got;
    }
    gzclose(g);
    buf[n] = 0;
    *len = n;
    return buf;
}

static char *raw_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    long n = ftell(f);
    assert_true(n >= 0);
    rewind(f);
    char *buf = malloc((size_t)n + 1);
    assert_non_null(buf);
    assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    *len = (size_t)n;
    return buf;
}

static char *tmp_path(const char *name)
{
    static char paths[8][4200];
    static int k;
    char *p = paths[k++ % 8];
    snprintf(p, 4200, "%s/%s", tmpdir, name);
    return p;
}

/* ---- a validating JSON parser with a per-event hook ---------------------------------------- */

/* What the checks need of one traceEvents element. */
typedef struct {
    char ph[8], cat[48], name[160];
    int pid_is_str, tid_is_str, has_bp, has_seq, has_corr, has_ext;
    long long pid, tid, id, corr, ext;
    int dims_depth;     /* deepest array nesting inside args."Input Dims" (1 = list of lists) */
    int ts_decimals;    /* digits after the point in "ts" (-1: no ts) */
    char thread_name[96];
} event_t;

typedef struct {
    const char *p, *end, *err;
    int depth;
    /* the hook's state */
    int in_events;  /* parsing an element of the top-level traceEvents array */
    event_t ev;
    void (*on_event)(const event_t *);
    long n_events;
    int saw_trace_events, n_top_keys;
} parser_t;

static void skip_ws(parser_t *P)
{
    while (P->p < P->end && (*P->p == ' ' || *P->p == '\n' || *P->p == '\r' || *P->p == '\t'))
        P->p++;
}

static int jfail(parser_t *P, const char *why)
{
    if (!P->err)
        P->err = why;
    return 0;
}

/* A string; its unescaped text (truncated) into out when out is non-NULL. */
static int parse_string(parser_t *P, char *out, size_t cap)
{
    size_t n = 0;
    if (P->p >= P->end || *P->p != '"')
        return jfail(P, "expected a string");
    P->p++;
    while (P->p < P->end && *P->p != '"') {
        unsigned char c = (unsigned char)*P->p;
        if (c < 0x20)
            return jfail(P, "control character in a string");
        if (c == '\\') {
            P->p++;
            if (P->p >= P->end)
                return jfail(P, "truncated escape");
            char e = *P->p;
            if (e == 'u') {
                for (int i = 1; i <= 4; i++)
                    if (P->p + i >= P->end || !isxdigit((unsigned char)P->p[i]))
                        return jfail(P, "bad \\u escape");
                P->p += 4;
                c = '?';
            } else if (strchr("\"\\/bfnrt", e)) {
                c = (unsigned char)(e == 'n' ? '\n' : e == 't' ? '\t' : e);
            } else {
                return jfail(P, "bad escape");
            }
        }
        if (out && n + 1 < cap)
            out[n++] = (char)c;
        P->p++;
    }
    if (P->p >= P->end)
        return jfail(P, "unterminated string");
    P->p++;
    if (out)
        out[n < cap ? n : cap - 1] = 0;
    return 1;
}

/* A number by the JSON grammar; its value, and the digits after the point. */
static int parse_number(parser_t *P, long long *value, int *decimals)
{
    const char *s = P->p;
    if (P->p < P->end && *P->p == '-')
        P->p++;
    if (P->p >= P->end || !isdigit((unsigned char)*P->p))
        return jfail(P, "bad number");
    if (*P->p == '0' && P->p + 1 < P->end && isdigit((unsigned char)P->p[1]))
        return jfail(P, "leading zero");
    while (P->p < P->end && isdigit((unsigned char)*P->p))
        P->p++;
    int dec = 0;
    if (P->p < P->end && *P->p == '.') {
        P->p++;
        if (P->p >= P->end || !isdigit((unsigned char)*P->p))
            return jfail(P, "bad fraction");
        while (P->p < P->end && isdigit((unsigned char)*P->p))
            P->p++, dec++;
    }
    if (P->p < P->end && (*P->p == 'e' || *P->p == 'E')) {
        P->p++;
        if (P->p < P->end && (*P->p == '+' || *P->p == '-'))
            P->p++;
        if (P->p >= P->end || !isdigit((unsigned char)*P->p))
            return jfail(P, "bad exponent");
        while (P->p < P->end && isdigit((unsigned char)*P->p))
            P->p++;
    }
    if (value)
        *value = strtoll(s, NULL, 10);
    if (decimals)
        *decimals = dec;
    return 1;
}

static int parse_value(parser_t *P, const char *key, int ev_level, int dims_level);

static void copy_trunc(char *dst, size_t cap, const char *src)
{
    size_t n = strlen(src);
    if (n >= cap)
        n = cap - 1;
    memcpy(dst, src, n);
    dst[n] = 0;
}

static int literal(parser_t *P, const char *word)
{
    size_t n = strlen(word);
    if ((size_t)(P->end - P->p) < n || memcmp(P->p, word, n))
        return jfail(P, "bad literal");
    P->p += n;
    return 1;
}

/* ev_level: 1 for a traceEvents element itself, 2 for its args object, 0 elsewhere.
 * dims_level: array depth inside args."Input Dims" (0 outside). */
static int parse_object(parser_t *P, int ev_level)
{
    if (++P->depth > 64)
        return jfail(P, "nested too deeply");
    P->p++; /* '{' */
    skip_ws(P);
    if (P->p < P->end && *P->p == '}') {
        P->p++;
        P->depth--;
        return 1;
    }
    for (;;) {
        char key[64];
        skip_ws(P);
        if (!parse_string(P, key, sizeof key))
            return 0;
        skip_ws(P);
        if (P->p >= P->end || *P->p != ':')
            return jfail(P, "expected ':'");
        P->p++;
        skip_ws(P);
        int top = P->depth == 1;
        if (top) {
            P->n_top_keys++;
            if (!strcmp(key, "traceEvents"))
                P->saw_trace_events = 1;
        }
        if (top && !strcmp(key, "traceEvents")) {
            if (P->p >= P->end || *P->p != '[')
                return jfail(P, "traceEvents is not an array");
            P->p++;
            skip_ws(P);
            if (P->p < P->end && *P->p == ']') {
                P->p++;
            } else {
                for (;;) {
                    skip_ws(P);
                    if (P->p >= P->end || *P->p != '{')
                        return jfail(P, "an event is not an object");
                    memset(&P->ev, 0, sizeof P->ev);
                    P->ev.ts_decimals = -1;
                    if (!parse_object(P, 1))
                        return 0;
                    P->n_events++;
                    if (P->on_event)
                        P->on_event(&P->ev);
                    skip_ws(P);
                    if (P->p < P->end && *P->p == ',') {
                        P->p++;
                        continue;
                    }
                    if (P->p < P->end && *P->p == ']') {
                        P->p++;
                        break;
                    }
                    return jfail(P, "expected ',' or ']' in traceEvents");
                }
            }
        } else if (!parse_value(P, key, ev_level, 0)) {
            return 0;
        }
        skip_ws(P);
        if (P->p < P->end && *P->p == ',') {
            P->p++;
            continue;
        }
        if (P->p < P->end && *P->p == '}') {
            P->p++;
            break;
        }
        return jfail(P, "expected ',' or '}'");
    }
    P->depth--;
    return 1;
}

static int parse_array(parser_t *P, int dims_level)
{
    if (++P->depth > 64)
        return jfail(P, "nested too deeply");
    if (dims_level && dims_level > P->ev.dims_depth)
        P->ev.dims_depth = dims_level;
    P->p++; /* '[' */
    skip_ws(P);
    if (P->p < P->end && *P->p == ']') {
        P->p++;
        P->depth--;
        return 1;
    }
    for (;;) {
        skip_ws(P);
        if (!parse_value(P, NULL, 0, dims_level ? dims_level + 1 : 0))
            return 0;
        skip_ws(P);
        if (P->p < P->end && *P->p == ',') {
            P->p++;
            continue;
        }
        if (P->p < P->end && *P->p == ']') {
            P->p++;
            break;
        }
        return jfail(P, "expected ',' or ']'");
    }
    P->depth--;
    return 1;
}

static int parse_value(parser_t *P, const char *key, int ev_level, int dims_level)
{
    skip_ws(P);
    if (P->p >= P->end)
        return jfail(P, "unexpected end");
    event_t *E = &P->ev;
    char c = *P->p;
    if (c == '{') {
        int child = ev_level == 1 && key && !strcmp(key, "args") ? 2 : 0;
        return parse_object(P, child);
    }
    if (c == '[') {
        int dl = dims_level;
        if (ev_level == 2 && key && !strcmp(key, "Input Dims"))
            dl = 1;
        return parse_array(P, dl ? dl : 0);
    }
    if (c == '"') {
        char buf[160];
        if (!parse_string(P, buf, sizeof buf))
            return 0;
        if (ev_level == 1 && key) {
            if (!strcmp(key, "ph"))
                copy_trunc(E->ph, sizeof E->ph, buf);
            else if (!strcmp(key, "cat"))
                copy_trunc(E->cat, sizeof E->cat, buf);
            else if (!strcmp(key, "name"))
                copy_trunc(E->name, sizeof E->name, buf);
            else if (!strcmp(key, "pid"))
                E->pid_is_str = 1;
            else if (!strcmp(key, "tid"))
                E->tid_is_str = 1;
            else if (!strcmp(key, "bp"))
                E->has_bp = 1;
        } else if (ev_level == 2 && key && !strcmp(key, "name")) {
            copy_trunc(E->thread_name, sizeof E->thread_name, buf);
        }
        return 1;
    }
    if (c == '-' || isdigit((unsigned char)c)) {
        long long v;
        int dec;
        if (!parse_number(P, &v, &dec))
            return 0;
        if (ev_level == 1 && key) {
            if (!strcmp(key, "pid"))
                E->pid = v;
            else if (!strcmp(key, "tid"))
                E->tid = v;
            else if (!strcmp(key, "id"))
                E->id = v;
            else if (!strcmp(key, "ts"))
                E->ts_decimals = dec;
        } else if (ev_level == 2 && key) {
            if (!strcmp(key, "correlation"))
                E->corr = v, E->has_corr = 1;
            else if (!strcmp(key, "External id"))
                E->ext = v, E->has_ext = 1;
            else if (!strcmp(key, "Sequence number"))
                E->has_seq = 1;
        }
        return 1;
    }
    if (c == 't')
        return literal(P, "true");
    if (c == 'f')
        return literal(P, "false");
    if (c == 'n')
        return literal(P, "null");
    return jfail(P, "unexpected character");
}

/* Parse a whole document; returns NULL when valid, else the reason (and *offset). */
static const char *parse_document(parser_t *P, const char *text, size_t len, size_t *offset)
{
    P->p = text;
    P->end = text + len;
    skip_ws(P);
    if (P->p >= P->end || *P->p != '{')
        jfail(P, "not an object");
    else if (parse_object(P, 0)) {
        skip_ws(P);
        if (P->p != P->end)
            jfail(P, "text after the object");
    }
    if (offset)
        *offset = (size_t)(P->p - text);
    return P->err;
}

/* ---- counting the structures ---------------------------------------------------------------- */

#define MAXC 200000

static struct {
    long total, py, cpu_op, annot_step, annot_other, gpu_annot, runtime, driver, kernel, memcpy_, memset_, nccl;
    long s_flow, f_gpu, f_host, fwdbwd, instants, metadata, thread_name, str_pid, bad_ts, seq_bwd, tensorlist;
    long graph_launch, rocm_ext_launch, miopen, cudnn, conv_underscore, hip_launch, cuda_launch, cuda_memcpy,
        cuda_memset, hip_memset, stream_thread, dup_thread;
    long long gpu_pid;
    int gpu_pid_set, gpu_pid_mixed;
    /* flows and links */
    long long s_ids[MAXC], f_gpu_ids[MAXC], gpu_corr[MAXC], rt_corr[MAXC], graph_corr[64];
    long n_s, n_fg, n_gc, n_rc, n_graph;
    char thread_names[64][96];
    long long thread_keys[64];
    int n_threads;
} C;

static void count_event(const event_t *e)
{
    C.total++;
    if (e->ts_decimals >= 0 && e->ts_decimals != 3)
        C.bad_ts++;
    if (e->pid_is_str || e->tid_is_str)
        C.str_pid++;
    if (!strcmp(e->ph, "M")) {
        C.metadata++;
        if (!strcmp(e->name, "thread_name")) {
            C.thread_name++;
            if (!strncmp(e->thread_name, "stream ", 7) && e->thread_name[strlen(e->thread_name) - 1] == ' ')
                C.stream_thread++;
            long long key = e->pid * 1000003LL + e->tid;
            for (int i = 0; i < C.n_threads; i++)
                if (C.thread_keys[i] == key && strcmp(C.thread_names[i], e->thread_name))
                    C.dup_thread++;
            if (C.n_threads < 64) {
                C.thread_keys[C.n_threads] = key;
                snprintf(C.thread_names[C.n_threads++], 96, "%s", e->thread_name);
            }
        }
        return;
    }
    if (!strcmp(e->ph, "i")) {
        C.instants++;
        return;
    }
    if (!strcmp(e->cat, "ac2g")) {
        if (!strcmp(e->ph, "s")) {
            C.s_flow++;
            if (C.n_s < MAXC)
                C.s_ids[C.n_s++] = e->id;
        } else if (!strcmp(e->ph, "f")) {
            assert_true(e->has_bp);
            if (!e->pid_is_str && e->pid == C.gpu_pid) {
                C.f_gpu++;
                if (C.n_fg < MAXC)
                    C.f_gpu_ids[C.n_fg++] = e->id;
            } else {
                C.f_host++;
            }
        }
        return;
    }
    if (!strcmp(e->cat, "fwdbwd")) {
        C.fwdbwd++;
        return;
    }
    if (!strcmp(e->cat, "python_function"))
        C.py++;
    else if (!strcmp(e->cat, "cpu_op")) {
        C.cpu_op++;
        size_t n = strlen(e->name);
        if (n > 9 && !strcmp(e->name + n - 9, "Backward0") && e->has_seq)
            C.seq_bwd++;
        if (e->dims_depth >= 3)
            C.tensorlist++;
        if (!strcmp(e->name, "aten::miopen_convolution"))
            C.miopen++;
        if (!strcmp(e->name, "aten::cudnn_convolution"))
            C.cudnn++;
        if (!strcmp(e->name, "aten::_convolution"))
            C.conv_underscore++;
        assert_true(e->has_ext);
    } else if (!strcmp(e->cat, "user_annotation")) {
        if (!strncmp(e->name, "ProfilerStep#", 13))
            C.annot_step++;
        else
            C.annot_other++;
    } else if (!strcmp(e->cat, "gpu_user_annotation"))
        C.gpu_annot++;
    else if (!strcmp(e->cat, "cuda_runtime") || !strcmp(e->cat, "cuda_driver")) {
        if (e->cat[5] == 'r')
            C.runtime++;
        else
            C.driver++;
        assert_true(e->has_corr);
        if (C.n_rc < MAXC)
            C.rt_corr[C.n_rc++] = e->corr;
        if (!strcmp(e->name, "cudaGraphLaunch") || !strcmp(e->name, "hipGraphLaunch")) {
            C.graph_launch++;
            if (C.n_graph < 64)
                C.graph_corr[C.n_graph++] = e->corr;
        }
        C.rocm_ext_launch += !strcmp(e->name, "hipExtModuleLaunchKernel");
        C.hip_launch += !strcmp(e->name, "hipLaunchKernel");
        C.cuda_launch += !strcmp(e->name, "cudaLaunchKernel");
        C.cuda_memcpy += !strcmp(e->name, "cudaMemcpyAsync");
        C.cuda_memset += !strcmp(e->name, "cudaMemsetAsync");
        C.hip_memset += !strcmp(e->name, "hipMemsetAsync");
    } else if (!strcmp(e->cat, "kernel") || !strcmp(e->cat, "gpu_memcpy") || !strcmp(e->cat, "gpu_memset")) {
        if (!C.gpu_pid_set) {
            C.gpu_pid = e->pid;
            C.gpu_pid_set = 1;
        } else if (C.gpu_pid != e->pid) {
            C.gpu_pid_mixed = 1;
        }
        assert_true(e->has_corr);
        assert_true(e->tid == 7 || e->tid == 20 || e->tid == 0 || e->tid == 4);
        if (C.n_gc < MAXC)
            C.gpu_corr[C.n_gc++] = e->corr;
        if (e->cat[0] == 'k')
            C.kernel++;
        else if (!strcmp(e->cat, "gpu_memcpy"))
            C.memcpy_++;
        else
            C.memset_++;
        if (strstr(e->name, "nccl") || strstr(e->name, "rccl"))
            C.nccl++;
    }
}

static int cmp_ll(const void *a, const void *b)
{
    long long x = *(const long long *)a, y = *(const long long *)b;
    return x < y ? -1 : x > y;
}

static int has(const long long *sorted, long n, long long v)
{
    return bsearch(&v, sorted, (size_t)n, sizeof v, cmp_ll) != NULL;
}

static long count_of(const long long *sorted, long n, long long v)
{
    long c = 0;
    for (long i = 0; i < n; i++)
        c += sorted[i] == v;
    return c;
}

/* Generate, parse and count one trace. */
static void check_trace(const char *flavour, const char *layers, const char *steps)
{
    const char *out = tmp_path("t.json");
    const char *args[] = {"--flavour", flavour, "--layers", layers, "--steps", steps, "-o", out, NULL};
    assert_int_equal(run(args, NULL), 0);
    size_t len;
    char *text = slurp(out, &len);
    memset(&C, 0, sizeof C);
    /* the GPU pid is known per flavour; the counter needs it for the flows that come before */
    C.gpu_pid = !strcmp(flavour, "cuda") ? 0 : 2;
    C.gpu_pid_set = 1;
    parser_t P = {0};
    P.on_event = count_event;
    size_t off;
    const char *err = parse_document(&P, text, len, &off);
    if (err)
        fail_msg("%s trace: invalid JSON at byte %zu: %s", flavour, off, err);
    assert_true(P.saw_trace_events);
    assert_true(P.n_top_keys >= 12);
    free(text);
}

/* ---- tests ---------------------------------------------------------------------------------- */

static void common_structures(int nsteps)
{
    assert_int_equal(C.bad_ts, 0);             /* µs with three decimals everywhere */
    assert_true(C.py > C.cpu_op);              /* python_function is the bulk */
    assert_true(C.cpu_op > 100 * nsteps);
    assert_int_equal(C.annot_step, nsteps);    /* ProfilerStep#N */
    assert_int_equal(C.gpu_annot, nsteps);
    assert_true(C.annot_other >= 2 * nsteps);  /* optimizer step, nccl:all_reduce */
    assert_true(C.seq_bwd > 10 * nsteps);      /* backward nodes carry Sequence number */
    assert_true(C.tensorlist >= 3 * nsteps);   /* TensorList inputs: Input Dims three deep */
    assert_true(C.instants > 10 * nsteps);
    assert_true(C.str_pid >= 3);               /* "Spans", "Traces", "" */
    assert_true(C.fwdbwd > 0);
    assert_int_equal(C.gpu_pid_mixed, 0);
    assert_true(C.stream_thread >= 2);         /* "stream 7 " with its trailing space */
    assert_true(C.dup_thread >= 1);            /* a thread named twice */
    assert_true(C.nccl >= nsteps);
    assert_int_equal(C.graph_launch, nsteps);
    assert_true(C.f_host > 0);                 /* f without s on the host thread */
    assert_int_equal(C.conv_underscore, nsteps);

    assert_true(C.s_flow > 40 * nsteps);
    assert_int_equal(C.f_gpu, C.kernel + C.memcpy_ + C.memset_ - 5 * C.graph_launch); /* graph: one f */
    qsort(C.s_ids, (size_t)C.n_s, sizeof(long long), cmp_ll);
    qsort(C.f_gpu_ids, (size_t)C.n_fg, sizeof(long long), cmp_ll);
    qsort(C.gpu_corr, (size_t)C.n_gc, sizeof(long long), cmp_ll);
    qsort(C.rt_corr, (size_t)C.n_rc, sizeof(long long), cmp_ll);
    /* every launch flow ends on the GPU at an event of its correlation, which a runtime call has */
    for (long i = 0; i < C.n_s; i++) {
        assert_true(has(C.f_gpu_ids, C.n_fg, C.s_ids[i]));
        assert_true(has(C.gpu_corr, C.n_gc, C.s_ids[i]));
        assert_true(has(C.rt_corr, C.n_rc, C.s_ids[i]));
    }
    /* GPU events from before the CPU window: no runtime call has their correlation */
    long orphans = 0;
    for (long i = 0; i < C.n_gc; i++)
        orphans += !has(C.rt_corr, C.n_rc, C.gpu_corr[i]);
    assert_int_equal(orphans, 24);
    /* a graph launch: six kernels carry its correlation, and it has no `s` */
    for (long i = 0; i < C.n_graph; i++) {
        assert_int_equal(count_of(C.gpu_corr, C.n_gc, C.graph_corr[i]), 6);
        assert_false(has(C.s_ids, C.n_s, C.graph_corr[i]));
    }
}

static void test_cuda_structures(void **state)
{
    (void)state;
    check_trace("cuda", "2", "2");
    common_structures(2);
    assert_true(C.gpu_pid == 0);
    assert_true(C.cuda_launch > 20);
    assert_int_equal(C.cuda_memcpy, 2);
    assert_int_equal(C.cuda_memset, 2);
    assert_int_equal(C.memcpy_, 2);
    assert_true(C.memset_ >= 2);
    assert_int_equal(C.driver, 2);             /* cuLaunchKernel is a cuda_driver event */
    assert_int_equal(C.cudnn, 2);
    assert_int_equal(C.miopen, 0);
    assert_int_equal(C.rocm_ext_launch + C.hip_launch, 0);
}

static void test_rocm_structures(void **state)
{
    (void)state;
    check_trace("rocm", "2", "2");
    common_structures(2);
    assert_true(C.gpu_pid == 2);
    assert_true(C.hip_launch > 20);
    assert_true(C.rocm_ext_launch >= 2 * (5 + 4)); /* MIOpen's five forward and four backward kernels */
    assert_int_equal(C.miopen, 2);
    assert_int_equal(C.cudnn, 0);
    assert_int_equal(C.hip_memset, 2);
    assert_int_equal(C.cuda_launch, 0);
    /* ROCm has many more host-side `f` flows than launches without one */
    assert_true(C.f_host > C.s_flow / 2);
}

/* The smallest trace (no transformer blocks) is still a whole, valid trace. */
static void test_smallest(void **state)
{
    (void)state;
    check_trace("rocm", "0", "1");
    assert_true(C.total > 300 && C.total < 1000);
    assert_int_equal(C.annot_step, 1);
    assert_int_equal(C.miopen, 1);
    assert_true(C.s_flow > 10);
}

static void test_deterministic(void **state)
{
    (void)state;
    const char *a = tmp_path("a.json.gz"), *b = tmp_path("b.json.gz"), *p = tmp_path("p.json"),
               *s2 = tmp_path("s2.json");
    const char *ra[] = {"--flavour", "rocm", "--layers", "3", "--steps", "2", "--seed", "7", "-o", a, NULL};
    const char *rb[] = {"--flavour", "rocm", "--layers", "3", "--steps", "2", "--seed", "7", "-o", b, NULL};
    const char *rp[] = {"--flavour", "rocm", "--layers", "3", "--steps", "2", "--seed", "7", "-o", p, NULL};
    const char *rs[] = {"--flavour", "rocm", "--layers", "3", "--steps", "2", "--seed", "8", "-o", s2, NULL};
    assert_int_equal(run(ra, NULL), 0);
    assert_int_equal(run(rb, NULL), 0);
    assert_int_equal(run(rp, NULL), 0);
    assert_int_equal(run(rs, NULL), 0);
    size_t la, lb, lp, ls, lz;
    char *A = raw_file(a, &la), *B = raw_file(b, &lb);
    assert_true(la > 100 && A[0] == '\x1f' && (unsigned char)A[1] == 0x8b); /* gzip, by the name */
    assert_int_equal(la, lb);
    assert_memory_equal(A, B, la);                                          /* same bytes */
    char *Pl = raw_file(p, &lp), *Z = slurp(a, &lz);
    assert_int_equal(lp, lz);                                               /* gzip of the same text */
    assert_memory_equal(Pl, Z, lp);
    char *S = raw_file(s2, &ls);
    assert_true(ls != lp || memcmp(S, Pl, lp) != 0);                        /* another seed differs */
    free(A), free(B), free(Pl), free(Z), free(S);
}

static void test_size_and_memory(void **state)
{
    (void)state;
    const char *out = tmp_path("big.json"), *small = tmp_path("small.json");
    const char *args[] = {"--size", "40M", "-o", out, NULL};
    const char *args_small[] = {"--size", "4M", "-o", small, NULL};
    long rss = 0, rss_small = 0;
    assert_int_equal(run(args_small, &rss_small), 0);
    assert_int_equal(run(args, &rss), 0);
    struct stat st;
    assert_int_equal(stat(out, &st), 0);
    assert_true(st.st_size > 36000000 && st.st_size < 44000000);           /* within 10% */
    /* Streaming: ten times the size takes the memory of the small run, measured here in the
     * same build (a sanitizer's runtime adds ~13 MB to both; a copy of the text would add
     * 36 MB).  The margin is a step at 12 layers (~2 MB) and the allocator's slack. */
    unlink(small);
    if (!(rss < rss_small + 4 * 1024))
        fail_msg("40M trace peaked at %ld KB, the 4M one at %ld KB", rss, rss_small);
    size_t len;
    char *text = slurp(out, &len);
    memset(&C, 0, sizeof C);
    C.gpu_pid_set = 1;
    parser_t P = {0};
    P.on_event = count_event;
    size_t off;
    const char *err = parse_document(&P, text, len, &off);
    if (err)
        fail_msg("40M trace: invalid JSON at byte %zu: %s", off, err);
    assert_true(C.annot_step > 10);
    free(text);
    unlink(out);
}

static void test_usage_errors(void **state)
{
    (void)state;
    const char *a1[] = {"--flavour", "metal", NULL};
    const char *a2[] = {"--steps", "0", NULL};
    const char *a3[] = {"--size", "lots", NULL};
    const char *a4[] = {"--steps", "2", "--size", "1M", NULL};
    const char *a5[] = {"--bogus", NULL};
    const char *a6[] = {"--layers", NULL};
    assert_int_equal(run(a1, NULL), 2);
    assert_int_equal(run(a2, NULL), 2);
    assert_int_equal(run(a3, NULL), 2);
    assert_int_equal(run(a4, NULL), 2);
    assert_int_equal(run(a5, NULL), 2);
    assert_int_equal(run(a6, NULL), 2);
    const char *a7[] = {"-o", "/nonexistent-dir/x.json", NULL};
    assert_int_equal(run(a7, NULL), 1);
}

/* The parser itself must reject what is not JSON, or the checks above prove nothing. */
static void test_parser_rejects(void **state)
{
    (void)state;
    static const char *bad[] = {
        "{\"traceEvents\": [{\"ph\": \"X\"},]}", "{\"traceEvents\": [{\"ph\": \"X\"}", "{\"a\": 01}",
        "{\"a\": [1 2]}", "{\"a\": \"x\\q\"}", "{\"a\": tru}", "{\"a\": 1} x", "{\"traceEvents\": [1]}",
        "{\"a\": 1.}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        parser_t P = {0};
        assert_non_null(parse_document(&P, bad[i], strlen(bad[i]), NULL));
    }
    const char *good = "{\"x\": {\"y\": [1, -2.5e3, true, false, null, \"\\u00e9\\n\"]}, \"traceEvents\": []}";
    parser_t P = {0};
    assert_null(parse_document(&P, good, strlen(good), NULL));
}

static int setup(void **state)
{
    (void)state;
    tmpdir = tt_tmpdir();
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    tt_rmrf(tmpdir);
    free(tmpdir);
    return 0;
}


/* ---- graph capture / replay pairs (--graph-dir) ------------------------------------------- */

/* Generate a pair into tmpdir/<name> and attribute it: 0 and *st, or -1 and *err. */
static tl_trace *graph_pair(const char *name, const char *const *opts, tl_infer_stats *st, tl_error *err)
{
    char dir[4096], exec[4200], cap[4200];
    snprintf(dir, sizeof dir, "%s/%s", tmpdir, name);
    const char *argv[16] = {"--graph-dir", dir, "--layers", "4"};
    int n = 4;
    while (*opts)
        argv[n++] = *opts++;
    argv[n] = NULL;
    assert_int_equal(run(argv, NULL), 0);
    snprintf(exec, sizeof exec, "%s/exec.json", dir);
    snprintf(cap, sizeof cap, "%s/capture_traces", dir);
    tl_infer_opts o = {cap, 1, 0, 0, NULL, 0};
    memset(err, 0, sizeof *err);
    tl_quiet = 1;
    tl_trace *t = tl_infer_load(exec, &o, st, err);
    tl_quiet = 0;
    return t;
}

/* The launcher of every replay kernel: the cpu_op its capture launch was made under. */
static void assert_kernels_under_ops(const tl_trace *t)
{
    static const char *const kern[] = {"rms_norm_kernel", "Cijk_Alik_Bljk_BBS_BH_MT128x128", "kernel_unified_attention_2d",
                                       "act_and_mul_kernel"};
    static const char *const op[] = {"vllm::rms_norm", "aten::mm", "vllm::unified_attention", "aten::silu"};
    size_t seen = 0;
    for (size_t i = 0; i < t->nev; i++) {
        if (t->ev[i].kind != TL_TEV_KERNEL)
            continue;
        uint32_t p = t->ev[t->ev[i].parent].parent;
        for (int k = 0; k < 4; k++)
            if (strcmp(t->ev[i].name, kern[k]) == 0) {
                assert_string_equal(t->ev[p].name, op[k]);
                seen++;
            }
    }
    assert_int_equal(seen, 16);
}

static void test_graph_pairs(void **state)
{
    (void)state;
    tl_infer_stats st;
    tl_error err;
    static const char *const full[] = {"--flavour", "rocm", NULL};
    tl_trace *t = graph_pair("full", full, &st, &err);
    if (!t)
        fail_msg("%s", err.msg);
    assert_int_equal(st.nlaunch, 1);
    assert_int_equal(st.nattributed, 1);
    assert_int_equal(st.nreplay_attributed, 16);
    assert_int_equal(st.capture_batch, 32);
    assert_int_equal(st.piecewise, 0);
    assert_kernels_under_ops(t);
    tl_trace_free(t);
    /* PIECEWISE: one graph per layer, attention and the activation eager in between */
    static const char *const piece[] = {"--flavour", "rocm", "--graph", "piecewise", NULL};
    t = graph_pair("piece", piece, &st, &err);
    if (!t)
        fail_msg("%s", err.msg);
    assert_int_equal(st.nlaunch, 4);
    assert_int_equal(st.nattributed, 4);
    assert_int_equal(st.nreplay_attributed, 8);
    assert_int_equal(st.capture_batch, 4096);
    assert_int_equal(st.piecewise, 1);
    assert_kernels_under_ops(t);
    tl_trace_free(t);
    /* two replay streams: paired through per-stream queues */
    static const char *const two[] = {"--flavour", "rocm", "--graph-streams", "2", NULL};
    t = graph_pair("two", two, &st, &err);
    if (!t)
        fail_msg("%s", err.msg);
    assert_int_equal(st.nreplay_attributed, 16);
    assert_kernels_under_ops(t);
    tl_trace_free(t);
    /* CUDA: no kernel names, paired by position */
    static const char *const cuda[] = {"--flavour", "cuda", "--graph", "piecewise", NULL};
    t = graph_pair("cuda", cuda, &st, &err);
    if (!t)
        fail_msg("%s", err.msg);
    assert_int_equal(st.nattributed, 4);
    assert_kernels_under_ops(t);
    tl_trace_free(t);
    /* ... which cannot be aligned over two streams */
    static const char *const cuda2[] = {"--flavour", "cuda", "--graph-streams", "2", NULL};
    assert_null(graph_pair("cuda2", cuda2, &st, &err));
    assert_non_null(strstr(err.msg, "capture launches carry no kernel names"));
    /* a mismatched capture is refused */
    static const char *const bad[] = {"--flavour", "rocm", "--graph-mismatch", NULL};
    assert_null(graph_pair("bad", bad, &st, &err));
    assert_non_null(strstr(err.msg, "does not match"));
    assert_non_null(strstr(err.msg, "0 of 1 graph launches attributed"));
}

int main(void)
{
    const char *g = getenv("GENTRACE"), *tl = getenv("TLCOMPARE");
    if (g) {
        snprintf(gentrace, sizeof gentrace, "%s", g);
    } else if (tl) {
        const char *slash = strrchr(tl, '/');
        int n = slash ? (int)(slash - tl) : 1;
        snprintf(gentrace, sizeof gentrace, "%.*s/tools/gentrace", n, slash ? tl : ".");
    } else {
        fprintf(stderr, "test_gentrace: set GENTRACE (or TLCOMPARE, as make unit-test does)\n");
        return 1;
    }
    if (access(gentrace, X_OK) != 0) {
        fprintf(stderr, "test_gentrace: %s: %s (make build/tools/gentrace)\n", gentrace, strerror(errno));
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parser_rejects),  cmocka_unit_test(test_cuda_structures),
        cmocka_unit_test(test_rocm_structures), cmocka_unit_test(test_smallest),
        cmocka_unit_test(test_deterministic),
        cmocka_unit_test(test_size_and_memory), cmocka_unit_test(test_usage_errors),
        cmocka_unit_test(test_graph_pairs),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
