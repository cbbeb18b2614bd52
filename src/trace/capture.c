/*
 * capture.c - the capture folder (INFERENCE.md §1): execution_details.json read with the
 * trace reader's JSON scanner, or its entries inferred from the capture traces.
 */
#include "trace/capture.h"
#include "trace/jscan.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define CAPTURE_FLAGS (TL_LOAD_PYTHON | TL_LOAD_ANNOT | TL_LOAD_KERNEL_ARG)

static int is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static char *join(const char *dir, const char *name)
{
    size_t n = strlen(dir);
    char *p = tl_xmalloc(n + strlen(name) + 2);
    if (n && dir[n - 1] == '/')
        sprintf(p, "%s%s", dir, name);
    else
        sprintf(p, "%s/%s", dir, name);
    return p;
}

static void add_entry(tl_capture *c, const char *file, int64_t batch, int piecewise)
{
    c->e = tl_xrealloc(c->e, (c->n + 1) * sizeof *c->e);
    tl_capture_entry *e = &c->e[c->n++];
    memset(e, 0, sizeof *e);
    e->file = tl_xstrdup(file);
    e->path = join(c->dir, file);
    e->batch = batch;
    e->piecewise = piecewise;
    e->exists = is_file(e->path);
}

/* ---- execution_details.json ------------------------------------------------------------ */

/* The scanner's messages speak of traces: this file is not one. */
static void reword(tl_error *err)
{
    const char *what = ": not a valid trace: ";
    char *p = strstr(err->msg, what);
    if (!p)
        return;
    char tail[sizeof err->msg];
    snprintf(tail, sizeof tail, "%s", p + strlen(what));
    snprintf(p, sizeof err->msg - (size_t)(p - err->msg), ": not valid JSON: %s", tail);
}

/* One element of the array (p at its '{'): 0, -1 on an error. */
static int read_entry(tl_capture *c, J *j, const char *name, long idx, tl_buf *file, tl_buf *mode)
{
    int has_file = 0, has_batch = 0, has_mode = 0, batch_ok = 0, mode_ok = 0, file_ok = 0;
    int64_t batch = 0;
    j->p++;
    int ch = j_peek(j);
    if (ch == '}') {
        j->p++;
    } else {
        for (;;) {
            const char *k;
            size_t kn;
            if (ch != '"') {
                if (!j->failed)
                    tl_j_fail(j, j->p, ch < 0 ? "the text ends inside an object" : "expected a key string");
                return -1;
            }
            if (tl_j_string(j, &k, &kn) < 0)
                return -1;
            int which = kn == 4 && !memcmp(k, "file", 4) ? 1 : kn == 10 && !memcmp(k, "batch_size", 10) ? 2
                        : kn == 4 && !memcmp(k, "mode", 4) ? 3 : 0;
            if (tl_j_expect(j, ':', "':'") < 0)
                return -1;
            int v = j_peek(j);
            if ((which == 1 || which == 3) && v == '"') {
                const char *s;
                size_t sn;
                if (tl_j_string(j, &s, &sn) < 0)
                    return -1;
                tl_buf *dst = which == 1 ? file : mode;
                tl_buf_clear(dst);
                tl_buf_add(dst, s, sn);
                tl_buf_cstr(dst);
                if (which == 1)
                    has_file = file_ok = 1;
                else
                    has_mode = 1, mode_ok = 1;
            } else if (which == 2 && (v == '-' || (v >= '0' && v <= '9'))) {
                jnum num;
                if (tl_j_number(j, &num) < 0)
                    return -1;
                has_batch = 1;
                batch_ok = num.is_int; /* 32.0 is not a Python int */
                batch = num.i;
            } else {
                if (tl_j_skip(j) < 0)
                    return -1;
                if (which == 1)
                    has_file = 1, file_ok = 0;
                else if (which == 2)
                    has_batch = 1, batch_ok = 0;
                else if (which == 3)
                    has_mode = 1, mode_ok = 0;
            }
            ch = j_peek(j);
            if (ch == ',') {
                j->p++;
                ch = j_peek(j);
                continue;
            }
            if (ch == '}') {
                j->p++;
                break;
            }
            if (!j->failed)
                tl_j_fail(j, j->p, ch < 0 ? "the text ends inside an object" : "expected ',' or '}'");
            return -1;
        }
    }
    if (!has_file || !has_batch || !has_mode) {
        tl_error_set(j->err, "%s: entry %ld lacks \"%s\" (each entry is {\"file\", \"batch_size\", \"mode\"})", name,
                     idx, !has_file ? "file" : !has_batch ? "batch_size" : "mode");
        j->failed = 1;
        return -1;
    }
    if (!file_ok) {
        tl_error_set(j->err, "%s: entry %ld: \"file\" is not a string", name, idx);
        j->failed = 1;
        return -1;
    }
    int piecewise = -1;
    if (mode_ok && strcmp(mode->data ? mode->data : "", "FULL") == 0)
        piecewise = 0;
    else if (mode_ok && strcmp(mode->data ? mode->data : "", "PIECEWISE") == 0)
        piecewise = 1;
    if (piecewise < 0 || !batch_ok) {
        tl_warn("%s: entry %ld (%s) skipped: %s", name, idx, file->data,
                piecewise < 0 ? "its mode is not FULL or PIECEWISE" : "its batch_size is not an integer");
        return 0;
    }
    add_entry(c, file->data, batch, piecewise);
    if (!c->e[c->n - 1].exists)
        tl_warn("%s: entry %ld skipped: %s does not exist (its batch size %lld still counts in the round-up)", name,
                idx, c->e[c->n - 1].path, (long long)batch);
    return 0;
}

static int parse_details(tl_capture *c, tl_instream *in, const char *name, tl_error *err)
{
    J j;
    tl_j_open(&j, in, name, err);
    tl_buf file = {0}, mode = {0};
    int rc = -1;
    int ch = j_peek(&j);
    if (ch != '[') {
        if (!j.failed)
            tl_error_set(err, "%s: %s", name, ch < 0 ? "empty, not a JSON array" : "not a JSON array of {file, batch_size, mode}");
        goto out;
    }
    j.p++;
    ch = j_peek(&j);
    if (ch == ']') {
        j.p++;
    } else {
        for (long idx = 0;; idx++) {
            if (ch != '{') {
                if (ch < 0 && !j.failed)
                    tl_j_fail(&j, j.p, "the text ends inside the array");
                else if (!j.failed)
                    tl_error_set(err, "%s: entry %ld is not an object {file, batch_size, mode}", name, idx);
                goto out;
            }
            if (read_entry(c, &j, name, idx, &file, &mode) < 0)
                goto out;
            ch = j_peek(&j);
            if (ch == ',') {
                j.p++;
                ch = j_peek(&j);
                continue;
            }
            if (ch == ']') {
                j.p++;
                break;
            }
            if (!j.failed)
                tl_j_fail(&j, j.p, ch < 0 ? "the text ends inside the array" : "expected ',' or ']'");
            goto out;
        }
    }
    if (j_peek(&j) >= 0) {
        tl_j_fail(&j, j.p, "text after the array");
        goto out;
    }
    rc = j.failed ? -1 : 0;
out:
    if (rc < 0 && !err->set)
        tl_error_set(err, "%s: not valid JSON", name);
    reword(err);
    tl_j_close(&j);
    tl_buf_free(&file);
    tl_buf_free(&mode);
    return rc;
}

int tl_capture_parse_details(tl_capture *c, const char *dir, const void *text, size_t n, tl_error *err)
{
    memset(c, 0, sizeof *c);
    c->dir = tl_xstrdup(dir);
    char *name = join(dir, TL_CAPTURE_DETAILS);
    tl_instream *in = tl_instream_open_mem(text, n, name);
    int rc = parse_details(c, in, name, err);
    tl_instream_close(in);
    free(name);
    return rc;
}

/* ---- inferring the entries (§1.2) ------------------------------------------------------- */

static int starts_with(const char *s, const char *p) { return strncmp(s, p, strlen(p)) == 0; }

/* `capture_(\d+)_(.*)` at the start: the number and the rest. */
static int capture_annotation(const char *s, int64_t *n, const char **rest)
{
    if (!starts_with(s, "capture_"))
        return 0;
    s += 8;
    if (*s < '0' || *s > '9')
        return 0;
    int64_t v = 0;
    while (*s >= '0' && *s <= '9') {
        if (v < INT64_MAX / 10)
            v = v * 10 + (*s - '0');
        s++;
    }
    if (*s != '_')
        return 0;
    *n = v;
    *rest = s + 1;
    return 1;
}

static int dummy_run(const char *s)
{
    static const char head[] = "vllm/v1/worker/gpu_model_runner.py(";
    if (!starts_with(s, head))
        return 0;
    s += sizeof head - 1;
    if (*s < '0' || *s > '9')
        return 0;
    while (*s >= '0' && *s <= '9')
        s++;
    return starts_with(s, "): _dummy_run");
}

/* The first element of each element of an Input Dims repr that is a non-empty tuple
 * starting with an integer: calls f for each. */
static void first_dims(const char *s, void (*f)(void *, int64_t), void *ctx)
{
    if (!s || (*s != '(' && *s != '['))
        return;
    int depth = 0;
    for (const char *p = s; *p; p++) {
        if (*p == '\'' || *p == '"') { /* a string element: skip it */
            char q = *p;
            for (p++; *p && *p != q; p++)
                if (*p == '\\' && p[1])
                    p++;
            if (!*p)
                return;
            continue;
        }
        if (*p == '(' || *p == '[') {
            depth++;
            if (depth == 2) {
                const char *q = p + 1;
                int neg = *q == '-';
                if (neg)
                    q++;
                if (*q >= '0' && *q <= '9') {
                    int64_t v = 0;
                    while (*q >= '0' && *q <= '9') {
                        if (v < INT64_MAX / 10)
                            v = v * 10 + (*q - '0');
                        q++;
                    }
                    if (*q == ',' || *q == ')' || *q == ']')
                        f(ctx, neg ? -v : v);
                }
            }
        } else if (*p == ')' || *p == ']') {
            depth--;
        }
    }
}

typedef struct tally {
    int64_t *v;
    size_t *count;
    size_t n, cap;
} tally;

static void tally_add(void *ctx, int64_t v)
{
    tally *t = ctx;
    for (size_t i = 0; i < t->n; i++) {
        if (t->v[i] == v) {
            t->count[i]++;
            return;
        }
    }
    if (t->n == t->cap) {
        t->cap = t->cap ? t->cap * 2 : 16;
        t->v = tl_xrealloc(t->v, t->cap * sizeof *t->v);
        t->count = tl_xrealloc(t->count, t->cap * sizeof *t->count);
    }
    t->v[t->n] = v;
    t->count[t->n++] = 1;
}

void tl_capture_classify(const tl_trace *t, int64_t *batch, int *mode, const char **mode_text)
{
    size_t nann = 0, ndummy = 0, nbegin = 0;
    uint32_t first = TL_TEV_NONE;
    for (size_t i = 0; i < t->nev; i++) {
        const tl_tev *e = &t->ev[i];
        int64_t n;
        const char *rest;
        if (e->kind == TL_TEV_ANNOT && capture_annotation(e->name, &n, &rest)) {
            nann++;
            if (first == TL_TEV_NONE || e->ts < t->ev[first].ts)
                first = (uint32_t)i;
        }
        if (dummy_run(e->name))
            ndummy++;
        if (e->kind == TL_TEV_RUNTIME && strstr(e->name, "StreamBeginCapture"))
            nbegin++;
    }
    *mode_text = NULL;
    if (nann && nann == ndummy) {
        int64_t n = 0;
        const char *rest = "";
        capture_annotation(t->ev[first].name, &n, &rest);
        *batch = n;
        *mode_text = rest;
        *mode = strcmp(rest, "FULL") == 0 ? 0 : strcmp(rest, "PIECEWISE") == 0 ? 1 : -1;
        return;
    }
    *mode = nbegin <= 1 ? 0 : 1;
    tally ty = {0};
    for (size_t i = 0; i < t->nev; i++)
        if (t->ev[i].kind == TL_TEV_CPU_OP)
            first_dims(tl_tev_x(t, &t->ev[i])->args->input_dims, tally_add, &ty);
    *batch = -1;
    size_t best = 0;
    for (size_t i = 0; i < ty.n; i++) {
        if (ty.count[i] > best) {
            best = ty.count[i];
            *batch = ty.v[i];
        }
    }
    free(ty.v);
    free(ty.count);
}

static int has_suffix(const char *s, const char *suf)
{
    size_t n = strlen(s), m = strlen(suf);
    return n >= m && strcmp(s + n - m, suf) == 0;
}

static int str_cmp(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static int infer_entries(tl_capture *c, tl_error *err)
{
    DIR *d = opendir(c->dir);
    if (!d) {
        tl_error_set(err, "%s: cannot read the capture folder", c->dir);
        return -1;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (!has_suffix(de->d_name, ".json") && !has_suffix(de->d_name, ".json.gz"))
            continue;
        char *p = join(c->dir, de->d_name);
        int ok = is_file(p);
        free(p);
        if (!ok)
            continue;
        TL_GROW(names, cap, n + 1);
        names[n++] = tl_xstrdup(de->d_name);
    }
    closedir(d);
    int rc = 0;
    if (n == 0) {
        tl_error_set(err, "%s: no capture traces (no .json or .json.gz file and no " TL_CAPTURE_DETAILS ")", c->dir);
        rc = -1;
    }
    if (n)
        qsort(names, n, sizeof *names, str_cmp);
    for (size_t i = 0; i < n && rc == 0; i++) {
        char *p = join(c->dir, names[i]);
        tl_error e2 = {0};
        tl_trace *t = tl_trace_load_flags(p, CAPTURE_FLAGS, &e2);
        if (!t) {
            if (strstr(e2.msg, "no traceEvents")) {
                tl_warn("%s: not a capture trace (no traceEvents): skipped", p);
            } else {
                tl_error_set(err, "%s", e2.msg);
                rc = -1;
            }
            free(p);
            continue;
        }
        int64_t batch;
        int mode;
        const char *mtext;
        tl_capture_classify(t, &batch, &mode, &mtext);
        if (batch < 0 || mode < 0) {
            tl_warn("%s: no " TL_CAPTURE_DETAILS "; %s skipped: %s", c->dir, names[i],
                    batch < 0 ? "no batch size found" : "its capture annotation's mode is not FULL or PIECEWISE");
            tl_trace_free(t);
        } else {
            tl_warn("%s: no " TL_CAPTURE_DETAILS "; inferred {\"file\": \"%s\", \"batch_size\": %lld, \"mode\": \"%s\"}",
                    c->dir, names[i], (long long)batch, mode ? "PIECEWISE" : "FULL");
            add_entry(c, names[i], batch, mode);
            c->e[c->n - 1].trace = t;
        }
        free(p);
    }
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    return rc;
}

/* ---- the folder ------------------------------------------------------------------------ */

int tl_capture_open(tl_capture *c, const char *dir, tl_error *err)
{
    memset(c, 0, sizeof *c);
    c->dir = tl_xstrdup(dir);
    if (!tl_is_dir(dir)) {
        tl_error_set(err, "%s: not a directory (a capture folder is the directory of the capture traces)", dir);
        return -1;
    }
    char *details = join(dir, TL_CAPTURE_DETAILS);
    int rc;
    if (is_file(details)) {
        tl_instream *in = tl_instream_open(details, err);
        rc = in ? parse_details(c, in, details, err) : -1;
        if (in)
            tl_instream_close(in);
    } else {
        c->inferred = 1;
        rc = infer_entries(c, err);
    }
    free(details);
    if (rc < 0)
        return -1;
    size_t usable = 0;
    for (size_t i = 0; i < c->n; i++)
        usable += c->e[i].exists;
    if (!usable) {
        tl_error_set(err, "%s: no usable capture trace (no valid entry names an existing file)", dir);
        return -1;
    }
    return 0;
}

void tl_capture_close(tl_capture *c)
{
    for (size_t i = 0; i < c->n; i++) {
        free(c->e[i].file);
        free(c->e[i].path);
        tl_trace_free(c->e[i].trace);
    }
    free(c->e);
    free(c->dir);
    memset(c, 0, sizeof *c);
}

long tl_capture_choose(const tl_capture *c, int64_t batch, size_t nlaunch, int64_t *size)
{
    int found = 0;
    int64_t best = 0;
    for (size_t i = 0; i < c->n; i++) {
        if (c->e[i].batch >= batch && (!found || c->e[i].batch < best)) {
            best = c->e[i].batch;
            found = 1;
        }
    }
    if (!found)
        return -1;
    *size = best;
    long full = -1, piece = -1; /* the later of duplicates wins */
    for (size_t i = 0; i < c->n; i++) {
        if (c->e[i].batch != best || !c->e[i].exists)
            continue;
        if (c->e[i].piecewise)
            piece = (long)i;
        else
            full = (long)i;
    }
    if (full >= 0 && piece >= 0)
        return nlaunch != 1 ? piece : full;
    return full >= 0 ? full : piece >= 0 ? piece : -2;
}

tl_trace *tl_capture_trace(tl_capture *c, size_t i, tl_error *err)
{
    tl_capture_entry *e = &c->e[i];
    if (!e->trace)
        e->trace = tl_trace_load_flags(e->path, CAPTURE_FLAGS, err);
    return e->trace;
}

int tl_capture_split_arg(const char *arg, char **trace, const char **dir)
{
    struct stat st;
    const char *at = strrchr(arg, '@');
    if (!at || at == arg || !at[1] || stat(arg, &st) == 0)
        return 0;
    char *t = tl_xmalloc((size_t)(at - arg) + 1);
    memcpy(t, arg, (size_t)(at - arg));
    t[at - arg] = 0;
    if (stat(t, &st) != 0 || S_ISDIR(st.st_mode)) {
        free(t);
        return 0;
    }
    *trace = t;
    *dir = at + 1;
    return 1;
}
