/*
 * test_trace_split.c - a large trace, plain or gzip, is read by two threads, the second
 * from an event near a chosen point (in gzip data, after inflating its way there); the
 * trace must be the one a single reader makes, wherever the split falls: inside a string that looks like an event start, inside an event's
 * nested args, between the events whose order matters (the linking key decided in either
 * half, a flow started in one half and finished in the other, a name set in both, the
 * first negative duration), in a second traceEvents array, and on the example traces.
 */
#include "testutil.h"

#include "io/gzip_stream.h"
#include "trace/trace.h"
#include "trace/trace_impl.h"

#include <pthread.h>
#include <time.h>

/* Back to the reader's own split (16 MiB and more, near 44%) for the tests after. */
static void split_default(void) { tl_trace_split_tune((uint64_t)16 << 20, 440); }

static void assert_same_trace(const tl_trace *a, const tl_trace *b, const char *what)
{
    char why[512];
    if (tl_trace_same(a, b, why, sizeof why) != 0)
        fail_msg("%s: %s", what, why);
}

/* `text` gzipped (free it). */
static unsigned char *gzipped(const char *text, size_t n, size_t *zn)
{
    size_t cap = n + n / 2 + 1024;
    unsigned char *z = malloc(cap);
    *zn = tt_gzip(text, n, z, cap);
    return z;
}

/* Read `text` by one thread and split at every 1/40 of it, plain and gzipped; each split
 * must give the single reader's trace, and the gzip text's must hold where the plain
 * text's does.  Returns how many of the splits held (the second reader's events were
 * taken). */
static int check_splits(const char *text, size_t n, const char *what)
{
    tl_error err = {0};
    tl_trace_split_tune(UINT64_MAX, 500);
    tl_trace *one = tl_trace_load_mem(text, n, "t.json", &err);
    if (!one)
        fail_msg("%s: %s", what, err.msg);
    assert_int_equal(one->read_split, 0);
    size_t zn;
    unsigned char *z = gzipped(text, n, &zn);
    int held = 0;
    for (unsigned pm = 0; pm <= 1000; pm += 25) {
        char label[256];
        snprintf(label, sizeof label, "%s, split at %u/1000", what, pm);
        tl_trace_split_tune(0, pm);
        tl_error e2 = {0};
        tl_trace *two = tl_trace_load_mem(text, n, "t.json", &e2);
        if (!two)
            fail_msg("%s: %s", label, e2.msg);
        assert_same_trace(one, two, label);
        held += two->read_split != 0;
        tl_trace *gz = tl_trace_load_mem(z, zn, "t.json", &e2);
        if (!gz)
            fail_msg("%s, gzip: %s", label, e2.msg);
        assert_same_trace(one, gz, label);
        if (gz->read_split != two->read_split)
            fail_msg("%s: the gzip text split at %llu, the plain one at %llu", label,
                     (unsigned long long)gz->read_split, (unsigned long long)two->read_split);
        tl_trace_free(gz);
        tl_trace_free(two);
    }
    free(z);
    tl_trace_free(one);
    split_default();
    return held;
}

/* made_up() as older Kineto writes it: launch flows of cat async_cpu_to_gpu, and times
 * written as integers but for every third op's dur (the per-event integer flags and the
 * census must come through the split too). */
static int old_kineto;

/* made_up() whose first launch has an External id and no correlation: that is the
 * trace's linking key, while a second half's reader, from its own first launch, would
 * take the correlation. */
static int ext_first;

/* A made-up trace with every order-dependent fact spread over its length. */
/* With `lure`, each cpu_op's args hold an object that the split's guess takes for an
 * event (a nested {"name": ...} after a ','): the guess then lands inside an event. */
static char *made_up(int key_in_first, int lure, size_t *len)
{
    tl_buf b = {0};
    tl_buf_printf(&b, "{\"traceEvents\": [\n");
    if (ext_first)
        tl_buf_printf(&b, "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 1, \"tid\": 7, "
                        "\"ts\": 900, \"dur\": 1, \"args\": {\"External id\": 8999}},\n");
    for (int i = 0; i < 240; i++) {
        int ts = 1000 + i * 100;
        if (i == 10)
            tl_buf_printf(&b, "{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": 1, \"args\": {\"name\": \"first\"}},\n");
        if (i == 200)
            tl_buf_printf(&b, "{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": 1, \"args\": {\"name\": \"second\"}},\n"
                            "{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": 1, \"tid\": 7, \"args\": {\"name\": \"late\"}},\n");
        /* the linking key: decided by the first launch, in the first or the second half */
        if (i == (key_in_first ? 5 : 170))
            tl_buf_printf(&b, "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 1, \"tid\": 7, "
                            "\"ts\": %d, \"dur\": 1, \"args\": {\"External id\": %d}},\n", ts, 9000 + i);
        /* a string and nested args that look like an event start to the guess */
        tl_buf_printf(&b, "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::op%d, {\", \"pid\": 1, \"tid\": 7, "
                        "\"ts\": %d, \"dur\": %s, \"args\": {\"External id\": %d, \"Input Dims\": [[%d, 4], []], "
                        "\"Input type\": [\"float\", \"\"], \"Sequence number\": %d, \"nested\": [{\"a\": 1},\n {\"%s\": 2}]}},\n",
                    i % 7, ts, old_kineto && i % 3 == 0 ? "50.0" : "50", i, i + 1, i, lure ? "name" : "b");
        if (i == 150)
            tl_buf_printf(&b, "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"neg\", \"pid\": 1, \"tid\": 8, \"ts\": %d, \"dur\": -3},\n", ts);
        /* a flow finished in the first half and started in the second: linked all the same */
        if (i == 20)
            tl_buf_printf(&b, "{\"ph\": \"f\", \"id\": 5000, \"pid\": 0, \"tid\": 3, \"ts\": %d, \"cat\": \"%s\", \"name\": \"ac2g\", \"bp\": \"e\"},\n"
                            "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"early\", \"pid\": 0, \"tid\": 3, \"ts\": %d, \"dur\": 4, "
                            "\"args\": {\"correlation\": 5000, \"stream\": 3}},\n",
                        ts, old_kineto ? "async_cpu_to_gpu" : "ac2g", ts);
        if (i == 220)
            tl_buf_printf(&b, "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 1, \"tid\": 7, "
                            "\"ts\": %d, \"dur\": 5, \"args\": {\"correlation\": 5000, \"External id\": 5000}},\n"
                            "{\"ph\": \"s\", \"id\": 5000, \"pid\": 1, \"tid\": 7, \"ts\": %d, \"cat\": \"%s\", \"name\": \"ac2g\"},\n",
                        ts + 30, ts + 30, old_kineto ? "async_cpu_to_gpu" : "ac2g");
        /* a launch whose flow starts in one half and finishes in the other */
        int c = 100 + i;
        int fin = i < 100 ? i + 100 : i; /* the finish of the first 100 comes much later */
        tl_buf_printf(&b, "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 1, \"tid\": 7, "
                        "\"ts\": %d, \"dur\": 5, \"args\": {\"correlation\": %d, \"External id\": %d}},\n"
                        "{\"ph\": \"s\", \"id\": %d, \"pid\": 1, \"tid\": 7, \"ts\": %d, \"cat\": \"%s\", \"name\": \"ac2g\"},\n",
                    ts + 60, c, i, c, ts + 60, old_kineto ? "async_cpu_to_gpu" : "ac2g");
        if (i >= 100) {
            int cf = i - 100 + 100; /* the flow of launch i - 100 */
            tl_buf_printf(&b, "{\"ph\": \"f\", \"id\": %d, \"pid\": 0, \"tid\": 3, \"ts\": %d, \"cat\": \"%s\", \"name\": \"ac2g\", \"bp\": \"e\"},\n"
                            "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k%d\", \"pid\": 0, \"tid\": 3, \"ts\": %d, \"dur\": 4, "
                            "\"args\": {\"correlation\": %d, \"stream\": 3}},\n",
                        cf, 1000 + (i - 100) * 100 + 70, old_kineto ? "async_cpu_to_gpu" : "ac2g", i % 5,
                        1000 + (i - 100) * 100 + 70, cf);
            /* an event not kept (it has no dur) with args at a kernel's place and link id:
             * written after the kernel it takes the link from it, written before the
             * next kernel of the place it changes nothing */
            if (i % 10 == 3 || i % 10 == 7)
                tl_buf_printf(&b, "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"no dur\", \"pid\": 0, \"tid\": 3, "
                                "\"ts\": %d, \"args\": {\"correlation\": %d}},\n",
                            1000 + (i - 100) * 100 + 75, i % 10 == 3 ? cf : cf + 1);
        }
        (void)fin;
        tl_buf_printf(&b, "{\"ph\": \"X\", \"cat\": \"python_function\", \"name\": \"f.py(1): g\", \"pid\": 1, \"tid\": 7, "
                        "\"ts\": %d, \"dur\": 2, \"args\": {\"Python id\": %d}}%s\n", ts + 1, i, i + 1 < 240 ? "," : "");
    }
    tl_buf_printf(&b, "], \"deviceProperties\": [{\"id\": 0}], \"traceName\": \"t\"}\n");
    *len = b.len;
    tl_buf_cstr(&b);
    return b.data;
}

static void test_made_up(void **state)
{
    (void)state;
    for (int first = 0; first <= 1; first++) {
        size_t n;
        char *text = made_up(first, 0, &n);
        int held = check_splits(text, n, first ? "the key decided in the first half" : "the key decided in the second half");
        assert_true(held >= 38); /* of 41: the last has no event after it */
        free(text);
    }
    /* the trace's key is not the one the second half would decide on its own */
    ext_first = 1;
    size_t ne;
    char *ext = made_up(1, 0, &ne);
    ext_first = 0;
    int held_ext = check_splits(ext, ne, "the key decided by an External id first");
    assert_true(held_ext >= 38);
    free(ext);
    /* guesses inside events: the first reader reads on by itself, to the same trace */
    size_t n;
    char *text = made_up(1, 1, &n);
    int held = check_splits(text, n, "guesses inside events");
    assert_true(held <= 35); /* 28: the lure is in every other event */
    free(text);
}

/* Older Kineto's flows and mixed integer times: linked alike, flags kept, whatever the split. */
static void test_made_up_old_kineto(void **state)
{
    (void)state;
    old_kineto = 1;
    size_t n;
    char *text = made_up(1, 0, &n);
    old_kineto = 0;
    tl_error err = {0};
    tl_trace *t = tl_trace_load_mem(text, n, "t.json", &err);
    assert_non_null(t);
    assert_int_equal(t->link_flows, TL_CAT_OLD_FLOW);
    size_t linked = 0, float_durs = 0;
    for (size_t i = 0; i < t->nev; i++) {
        linked += tl_tev_is_gpu(&t->ev[i]) && (t->ev[i].flags & TL_TEV_LINKED);
        float_durs += !(t->ev[i].flags & TL_TEV_DUR_INT);
    }
    /* the 140 launches' kernels and the early finish's, but the 14 taken by an event not
     * kept written after them */
    assert_int_equal(linked, 127);
    assert_int_equal(float_durs, 80); /* every third of the 240 ops */
    tl_trace_free(t);
    int held = check_splits(text, n, "older Kineto's flows");
    assert_true(held >= 38);
    free(text);
}

/* A second traceEvents array replaces the first (Python's json keeps the last key). */
static void test_second_array(void **state)
{
    (void)state;
    size_t n1;
    char *one = made_up(1, 0, &n1);
    tl_buf b = {0};
    /* {"traceEvents": [...], "traceEvents": [...]} */
    tl_buf_add(&b, one, n1 - 2); /* without the closing "}\n" */
    const char *arr = strstr(one, "[");
    tl_buf_printf(&b, ", \"traceEvents\": ");
    tl_buf_add(&b, arr, strlen(arr) - strlen(strstr(arr, "], \"deviceProperties\"")) + 1);
    tl_buf_printf(&b, "}\n");
    int held = check_splits(b.data, b.len, "two traceEvents arrays");
    assert_true(held >= 38);
    tl_buf_free(&b);
    free(one);
}

/* The example traces, inflated. */
static void test_examples(void **state)
{
    (void)state;
    static const char *const names[] = {"vit_h100.pt.trace.json.gz", "vit_mi300x.pt.trace.json.gz"};
    const char *top = getenv("TL_TOP");
    for (size_t k = 0; k < sizeof names / sizeof *names; k++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/examples/traces/%s", top ? top : ".", names[k]);
        tl_error err = {0};
        tl_instream *in = tl_instream_open(path, &err);
        if (!in)
            fail_msg("%s", err.msg);
        tl_buf text = {0};
        char chunk[1 << 16];
        long got;
        while ((got = tl_instream_read(in, chunk, sizeof chunk, &err)) > 0)
            tl_buf_add(&text, chunk, (size_t)got);
        assert_true(got == 0);
        tl_instream_close(in);
        int held = check_splits(text.data, text.len, names[k]);
        assert_true(held >= 35);
        tl_buf_free(&text);
    }
}

/* A split in a text that fails: the single reader's error, whichever half holds it. */
static void test_errors(void **state)
{
    (void)state;
    size_t n;
    char *text = made_up(1, 0, &n);
    static const double where[] = {0.2, 0.6, 0.95};
    for (size_t k = 0; k < sizeof where / sizeof *where; k++) {
        char *bad = malloc(n + 1);
        memcpy(bad, text, n + 1);
        char *p = strstr(bad + (size_t)(where[k] * (double)n), "\"ts\": ");
        assert_non_null(p);
        p[6] = 'x'; /* not a number */
        tl_error e1 = {0}, e2 = {0};
        tl_trace_split_tune(UINT64_MAX, 500);
        assert_null(tl_trace_load_mem(bad, n, "t.json", &e1));
        size_t zn;
        unsigned char *z = gzipped(bad, n, &zn);
        for (unsigned pm = 100; pm < 1000; pm += 100) {
            tl_trace_split_tune(0, pm);
            memset(&e2, 0, sizeof e2);
            assert_null(tl_trace_load_mem(bad, n, "t.json", &e2));
            assert_string_equal(e1.msg, e2.msg);
            memset(&e2, 0, sizeof e2);
            assert_null(tl_trace_load_mem(z, zn, "t.json", &e2));
            assert_string_equal(e1.msg, e2.msg);
        }
        free(z);
        free(bad);
    }
    split_default();
    free(text);
}

/* A gzip file whose member is damaged or cut short after the split point, or whose text
 * after traceEvents is longer than the second reader keeps: the single reader's error, or
 * its trace. */
static void test_gzip_file(void **state)
{
    (void)state;
    size_t n;
    char *text = made_up(0, 0, &n);
    char *dir = tt_tmpdir(), path[512];
    snprintf(path, sizeof path, "%s/t.json.gz", dir);
    size_t zn;
    unsigned char *z = gzipped(text, n, &zn);
    for (int bad = 0; bad <= 2; bad++) {
        unsigned char *zb = malloc(zn);
        memcpy(zb, z, zn);
        size_t len = bad == 2 ? zn - 3 : zn; /* 2: the trailer cut short */
        if (bad == 1)
            zb[zn - 6] ^= 0x40; /* 1: the CRC */
        tt_write_file(path, (const char *)zb, len);
        tl_error e1 = {0}, e2 = {0};
        tl_trace_split_tune(UINT64_MAX, 500);
        tl_trace *one = tl_trace_load(path, &e1);
        tl_trace_split_tune(0, 500);
        tl_trace *two = tl_trace_load(path, &e2);
        if (bad) {
            assert_null(one);
            assert_null(two);
            assert_string_equal(e1.msg, e2.msg);
        } else {
            assert_true(two->read_split > 0);
            assert_same_trace(one, two, "a gzip file");
        }
        tl_trace_free(one);
        tl_trace_free(two);
        free(zb);
    }
    free(z);
    /* a text after traceEvents of less and of more than the 16 MiB kept: the second is
     * read by the first reader alone */
    for (int kib = 15 << 10; kib <= 17 << 10; kib += 2 << 10) {
        tl_buf b = {0};
        tl_buf_add(&b, text, n - 2);
        tl_buf_printf(&b, ", \"long\": \"");
        for (int i = 0; i < kib; i++)
            tl_buf_printf(&b, "%01023d", i);
        tl_buf_printf(&b, "\"}\n");
        z = gzipped(b.data, b.len, &zn);
        tt_write_file(path, (const char *)z, zn);
        tl_error err = {0};
        tl_trace_split_tune(UINT64_MAX, 500);
        tl_trace *one = tl_trace_load(path, &err);
        assert_non_null(one);
        tl_trace_split_tune(0, (unsigned)(n * 500 / b.len)); /* halfway through the events */
        tl_trace *two = tl_trace_load(path, &err);
        assert_non_null(two);
        if ((two->read_split != 0) != (kib < 16 << 10))
            fail_msg("an end of %d KiB: the split %s", kib, two->read_split ? "held" : "did not hold");
        assert_same_trace(one, two, "a long end");
        tl_trace_free(one);
        tl_trace_free(two);
        tl_buf_free(&b);
        free(z);
    }
    split_default();
    tt_rmrf(dir);
    free(dir);
    free(text);
}

/* Reading a file: the second reader shares the file, not its offset; it is taken only
 * where the process's other trace readers leave a CPU for it. */
static void test_file(void **state)
{
    (void)state;
    size_t n;
    char *text = made_up(0, 0, &n);
    char *dir = tt_tmpdir(), path[512];
    snprintf(path, sizeof path, "%s/t.json", dir);
    tt_write_file(path, text, n);
    tl_error err = {0};
    tl_trace_split_tune(UINT64_MAX, 500);
    tl_trace *one = tl_trace_load(path, &err);
    assert_non_null(one);
    tl_trace_split_tune(0, 500);
    tl_trace *two = tl_trace_load(path, &err);
    assert_non_null(two);
    assert_true(two->read_split > 0);
    assert_same_trace(one, two, "a plain file");
    tl_trace_free(one);
    tl_trace_free(two);
    /* another reader counted (a trace opened beside this one): a second thread only where
     * a CPU is left for it; a load the caller counted itself (TL_LOAD_COUNTED) is not
     * counted twice */
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    tl_trace_readers_add(1);
    two = tl_trace_load(path, &err);
    assert_non_null(two);
    if (cpus <= 2)
        assert_int_equal(two->read_split, 0);
    tl_trace_free(two);
    two = tl_trace_load_flags(path, TL_LOAD_COUNTED, &err);
    assert_non_null(two);
    if (cpus >= 2)
        assert_true(two->read_split > 0);
    assert_int_equal(two->load_flags, 0);
    tl_trace_free(two);
    tl_trace_readers_add(-1);
    split_default();
    tt_rmrf(dir);
    free(dir);
    free(text);
}

/* A gzip text of `nev` plain cpu_ops, in file `path`. */
static void write_many_ops(const char *path, int nev)
{
    tl_buf b = {0};
    tl_buf_printf(&b, "{\"traceEvents\": [\n");
    for (int i = 0; i < nev; i++)
        tl_buf_printf(&b, "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::op%d\", \"pid\": 1, \"tid\": %d, "
                        "\"ts\": %d, \"dur\": 1, \"args\": {\"External id\": %d}}%s\n",
                    i % 13, 1 + i % 3, 1000 + i * 2, i, i + 1 < nev ? "," : "");
    tl_buf_printf(&b, "]}\n");
    size_t zn;
    unsigned char *z = gzipped(b.data, b.len, &zn);
    tt_write_file(path, (const char *)z, zn);
    free(z);
    tl_buf_free(&b);
}

typedef struct ahead_load {
    const char *path;
    tl_trace *t;
    tl_error err;
} ahead_load;

static void *ahead_load_run(void *arg)
{
    ahead_load *al = arg;
    al->t = tl_trace_load(al->path, &al->err);
    return NULL;
}

/* A gzip file is inflated ahead of its reader by a helper thread while a core is free
 * for it.  When every core already has a trace reader, the reader inflates for itself
 * (the helpers would only compete), and lets the helper start once a core is freed: a
 * load whose other readers go away while it runs is inflated ahead from there on.  The
 * trace is the same either way. */
static void test_gzip_ahead(void **state)
{
    (void)state;
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    char *dir = tt_tmpdir(), path[512];
    snprintf(path, sizeof path, "%s/ops.json.gz", dir);
    write_many_ops(path, 200000);
    tl_trace_split_tune(UINT64_MAX, 500); /* one reader: no split takes a core */
    tl_error e = {0};
    tl_trace *alone = tl_trace_load(path, &e);
    assert_non_null(alone);
    assert_int_equal(alone->nev, 200000);
    /* alone it counts itself: a helper from the start when there is a second core */
    if (ncpu > 1)
        assert_int_equal(alone->read_ahead_from, 0);
    else
        assert_true(alone->read_ahead_from == UINT64_MAX);

    tl_trace_readers_add((int)ncpu);
    tl_trace *held = tl_trace_load(path, &e);
    tl_trace_readers_add((int)-ncpu);
    assert_non_null(held);
    assert_true(held->read_ahead_from == UINT64_MAX);
    assert_same_trace(alone, held, "inflated by its reader");
    tl_trace_free(held);

    /* the other readers go away after 1, 2, 4, ... ms: once that is while the load runs
     * (a helper started after the start), it has been seen */
    int seen = ncpu < 2; /* one core: never freed for a helper */
    for (long ms = 1; !seen && ms <= 1024; ms *= 2) {
        ahead_load al = {path, NULL, {0}};
        pthread_t th;
        tl_trace_readers_add((int)ncpu);
        assert_int_equal(pthread_create(&th, NULL, ahead_load_run, &al), 0);
        struct timespec ts = {ms / 1000, ms % 1000 * 1000000L};
        nanosleep(&ts, NULL);
        tl_trace_readers_add((int)-ncpu);
        pthread_join(th, NULL);
        if (!al.t)
            fail_msg("%s", al.err.msg);
        assert_same_trace(alone, al.t, "a helper started on the way");
        seen = al.t->read_ahead_from > 0 && al.t->read_ahead_from != UINT64_MAX;
        tl_trace_free(al.t);
    }
    if (!seen)
        fail_msg("no load took a helper once the other readers had gone");
    tl_trace_free(alone);
    split_default();
    tt_rmrf(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_made_up),
        cmocka_unit_test(test_made_up_old_kineto),
        cmocka_unit_test(test_second_array),
        cmocka_unit_test(test_examples),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_file),
        cmocka_unit_test(test_gzip_file),
        cmocka_unit_test(test_gzip_ahead),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
