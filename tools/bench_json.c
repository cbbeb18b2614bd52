/*
 * bench_json.c - the measurement behind the trace reader's choice of JSON and gzip code
 * (BENCHMARKS.md, "Traces in"): each Debian JSON library, and our scanner, over the same
 * trace text in memory; zlib and ISA-L inflating the same gzip file.
 *
 * Not part of the build: it needs the libraries' -dev packages, which the project does
 * not depend on.
 *   apt-get install libyajl-dev libjansson-dev libjson-c-dev libcjson-dev
 *   make build/libtlcompare.a
 *   cc -O2 -Isrc tools/bench_json.c -o build/bench_json build/libtlcompare.a \
 *      -lyajl -ljansson -ljson-c -lcjson -lz -lisal -lm -lpthread
 *   build/bench_json ../shared/conformance/traces/timesformer_h100.json.gz
 * Prints, per contender, the median of 7 runs (ms) and its throughput over the JSON text.
 */
#include "trace/trace.h"

#include <cjson/cJSON.h>
#include <isa-l/igzip_lib.h>
#include <jansson.h>
#include <yajl/yajl_parse.h>
#include <zlib.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static unsigned char *read_file(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        exit(1);
    }
    fseek(f, 0, SEEK_END);
    *n = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc(*n + 1);
    if (fread(b, 1, *n, f) != *n)
        exit(1);
    fclose(f);
    return b;
}

static size_t inflate_zlib(const unsigned char *z, size_t zn, unsigned char *out, size_t cap)
{
    z_stream s;
    memset(&s, 0, sizeof s);
    inflateInit2(&s, 16 + 15);
    s.next_in = (unsigned char *)z;
    s.avail_in = (uInt)zn;
    s.next_out = out;
    s.avail_out = (uInt)cap;
    inflate(&s, Z_FINISH);
    size_t n = cap - s.avail_out;
    inflateEnd(&s);
    return n;
}

static size_t inflate_isal(const unsigned char *z, size_t zn, unsigned char *out, size_t cap)
{
    static struct inflate_state st;
    isal_inflate_init(&st);
    st.crc_flag = ISAL_GZIP;
    st.next_in = (unsigned char *)z;
    st.avail_in = (uint32_t)zn;
    st.next_out = out;
    st.avail_out = (uint32_t)cap;
    isal_inflate(&st);
    return cap - st.avail_out;
}

/* YAJL, streaming: callbacks that only count, so this is the parser's own cost. */
static long yajl_count;
static int y_null(void *c) { (void)c; yajl_count++; return 1; }
static int y_bool(void *c, int b) { (void)c; (void)b; yajl_count++; return 1; }
static int y_num(void *c, const char *s, size_t n) { (void)c; (void)s; (void)n; yajl_count++; return 1; }
static int y_str(void *c, const unsigned char *s, size_t n) { (void)c; (void)s; (void)n; yajl_count++; return 1; }
static int y_map(void *c) { (void)c; return 1; }
static const yajl_callbacks ycb = {y_null, y_bool, NULL, NULL, y_num, y_str, y_map, y_str, y_map, y_map, y_map};

static void run_yajl(const unsigned char *t, size_t n)
{
    yajl_handle h = yajl_alloc(&ycb, NULL, NULL);
    if (yajl_parse(h, t, n) != yajl_status_ok || yajl_complete_parse(h) != yajl_status_ok)
        fprintf(stderr, "yajl failed\n");
    yajl_free(h);
}

static void run_jansson(const unsigned char *t, size_t n)
{
    json_error_t e;
    json_t *j = json_loadb((const char *)t, n, 0, &e);
    if (!j)
        fprintf(stderr, "jansson failed\n");
    json_decref(j);
}

/* json-c's header clashes with jansson's (json_object_iter): its four calls by hand */
struct json_object;
struct json_tokener;
struct json_tokener *json_tokener_new_ex(int depth);
struct json_object *json_tokener_parse_ex(struct json_tokener *tok, const char *str, int len);
int json_object_put(struct json_object *obj);
void json_tokener_free(struct json_tokener *tok);

static void run_jsonc(const unsigned char *t, size_t n)
{
    struct json_tokener *tok = json_tokener_new_ex(10000);
    struct json_object *o = json_tokener_parse_ex(tok, (const char *)t, (int)n);
    if (!o)
        fprintf(stderr, "json-c failed\n");
    json_object_put(o);
    json_tokener_free(tok);
}

static void run_cjson(const unsigned char *t, size_t n)
{
    cJSON *j = cJSON_ParseWithLength((const char *)t, n);
    if (!j)
        fprintf(stderr, "cJSON failed\n");
    cJSON_Delete(j);
}

static void run_ours(const unsigned char *t, size_t n)
{
    tl_error err = {0};
    tl_trace *tr = tl_trace_load_mem(t, n, "bench", &err);
    if (!tr)
        fprintf(stderr, "ours failed: %s\n", err.msg);
    tl_trace_free(tr);
}

static void bench(const char *name, void (*fn)(const unsigned char *, size_t), const unsigned char *t, size_t n,
                  size_t text)
{
    double v[7];
    for (int i = 0; i < 7; i++) {
        double a = now();
        fn(t, n);
        v[i] = now() - a;
        for (int k = i; k > 0 && v[k - 1] > v[k]; k--) {
            double x = v[k];
            v[k] = v[k - 1];
            v[k - 1] = x;
        }
    }
    double best = v[3]; /* the median */
    printf("%-28s %8.1f ms  %7.0f MB/s\n", name, best * 1e3, text / best / 1e6);
}

static const unsigned char *gz_in;
static size_t gz_n, gz_cap;
static unsigned char *gz_out;
static void run_zlib(const unsigned char *t, size_t n) { (void)t; (void)n; inflate_zlib(gz_in, gz_n, gz_out, gz_cap); }
static void run_isal(const unsigned char *t, size_t n) { (void)t; (void)n; inflate_isal(gz_in, gz_n, gz_out, gz_cap); }

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench_json TRACE.json.gz\n");
        return 2;
    }
    size_t zn;
    unsigned char *z = read_file(argv[1], &zn);
    size_t cap = zn * 40 + (1 << 20);
    unsigned char *text = malloc(cap);
    size_t n = inflate_isal(z, zn, text, cap);
    text[n] = 0;
    printf("%s: %zu bytes gzip, %zu bytes of JSON\n", argv[1], zn, n);
    gz_in = z;
    gz_n = zn;
    gz_cap = cap;
    gz_out = malloc(cap);
    bench("inflate: zlib", run_zlib, NULL, 0, n);
    bench("inflate: ISA-L", run_isal, NULL, 0, n);
    bench("parse: YAJL (stream, no-op)", run_yajl, text, n, n);
    bench("parse: jansson (DOM)", run_jansson, text, n, n);
    bench("parse: json-c (DOM)", run_jsonc, text, n, n);
    bench("parse: cJSON (DOM)", run_cjson, text, n, n);
    bench("tl_trace_load_mem (all)", run_ours, text, n, n);
    bench("tl_trace_load_mem (gzip)", run_ours, z, zn, n);
    return 0;
}
