/*
 * fuzz_compare.c - the whole comparison on arbitrary reports.
 *
 * Input: one selector byte, then the text of one sheet per report, the reports
 * separated by NUL bytes (a NUL can never be part of a CSV that reads, so nothing is
 * lost).  One text gives a report compared with itself; a fourth and later are ignored.
 * The selector picks the sheet (and so the group: its keys, drops, diffs, sort and, for
 * ops_all and roofline sheets, the three-way split) and, with its top bit, whether the
 * workbook is written too.  On a perf sheet the summary's efficiency lines are built from
 * the reports too (every name of the baseline's sheet listed), against a GPU description,
 * and rendered every way.
 *
 * Each text is written as <sheet>.csv of its own report directory, and the reports go
 * through the same calls as tlcompare's: tl_report_open, tl_run_groups, the CSV writer
 * for every result (and the workbook writer).  Every result must be a well-formed table.
 */
#include "fuzz.h"

#include "write/csv_write.h"
#include "compare/groups.h"
#include "read/open.h"
#include "write/xlsx_write.h"
#include "summary/efficiency.h"

#include <sys/stat.h>
#include <unistd.h>

#define CMPFZ_MAX_REPORTS 3

/* The sheets of every group (SPEC §3), and the group each belongs to. */
static const struct {
    const char *sheet;
    unsigned group;
} cmpfz_sheets[] = {
    {"gpu_timeline", TL_GROUP_GPU_TIMELINE},   {"ops_summary", TL_GROUP_OPS_SUMMARY},
    {"kernel_summary", TL_GROUP_KERNEL_SUMMARY}, {"ops_all", TL_GROUP_OPS_ALL},
    {"ops_unique_args", TL_GROUP_OPS_ALL},     {"unified_perf_summary", TL_GROUP_OPS_ALL},
    {"GEMM", TL_GROUP_ROOFLINE},               {"SDPA_fwd", TL_GROUP_ROOFLINE},
    {"SDPA_bwd", TL_GROUP_ROOFLINE},           {"CONV_fwd", TL_GROUP_ROOFLINE},
    {"CONV_bwd", TL_GROUP_ROOFLINE},           {"UnaryElementwise", TL_GROUP_ROOFLINE},
    {"BinaryElementwise", TL_GROUP_ROOFLINE},
    /* appended, so that the older seeds keep their sheet */
    {"Normalization", TL_GROUP_PERF},          {"Reduce_bwd", TL_GROUP_PERF},
};
#define CMPFZ_NSHEETS (sizeof cmpfz_sheets / sizeof *cmpfz_sheets)

static char cmpfz_root[256]; /* the reports live in <root>/r0, r1, r2 */

static void cmpfz_path(char *buf, size_t n, size_t report, const char *sheet)
{
    if (sheet)
        snprintf(buf, n, "%s/r%zu/%s.csv", cmpfz_root, report, sheet);
    else
        snprintf(buf, n, "%s/r%zu", cmpfz_root, report);
}

/* The sheet files are removed after each input; the directories at exit. */
static void cmpfz_cleanup(void)
{
    for (size_t i = 0; i < CMPFZ_MAX_REPORTS; i++) {
        char dir[512];
        cmpfz_path(dir, sizeof dir, i, NULL);
        rmdir(dir);
    }
    rmdir(cmpfz_root);
}

static void cmpfz_setup(void)
{
    /* tmpfs when there is one: thousands of small files a second */
    const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    snprintf(cmpfz_root, sizeof cmpfz_root, "%s/tlfuzz-compare.XXXXXX", base);
    TL_FUZZ_CHECK(mkdtemp(cmpfz_root) != NULL);
    for (size_t i = 0; i < CMPFZ_MAX_REPORTS; i++) {
        char dir[512];
        cmpfz_path(dir, sizeof dir, i, NULL);
        TL_FUZZ_CHECK(mkdir(dir, 0700) == 0);
    }
    tl_quiet = 1; /* warnings are expected, and would drown the fuzzer's output */
    atexit(cmpfz_cleanup);
}

static void cmpfz_write(size_t report, const char *sheet, const uint8_t *data, size_t n)
{
    char path[512];
    cmpfz_path(path, sizeof path, report, sheet);
    FILE *f = fopen(path, "wb");
    TL_FUZZ_CHECK(f != NULL);
    TL_FUZZ_CHECK(fwrite(data, 1, n, f) == n);
    TL_FUZZ_CHECK(fclose(f) == 0);
}

/* The efficiency lines of the baseline sheet's names (at most 16), in every rendering. */
static void cmpfz_efficiency(tl_report *reports, size_t n, const char *sheet, tl_eff_cache *cache,
                             const tl_gpu_arch *arch, tl_arena *arena)
{
    tl_error err = {0};
    tl_table *t = tl_report_read_sheet(&reports[0], sheet, arena, &err);
    if (!t)
        return;
    long name = tl_table_find(t, "name");
    tl_summary_item items[16];
    size_t nitems = 0;
    for (size_t r = 0; name >= 0 && r < t->nrows && nitems < 16; r++)
        if (t->cols[name].cells[r].kind == TL_STR)
            items[nitems++] = (tl_summary_item){.name = t->cols[name].cells[r].v.s};
    tl_variant_summary vs[CMPFZ_MAX_REPORTS - 1];
    memset(vs, 0, sizeof vs);
    for (size_t v = 0; v + 1 < n; v++) {
        vs[v].tag = reports[v + 1].tag;
        vs[v].regressions = items;
        vs[v].nregressions = nitems;
    }
    /* LCA lines: one found by its LCA's name, one by a side's op, one by nothing */
    const char *first = nitems ? items[0].name : "", *last = nitems ? items[nitems - 1].name : "";
    tl_lca_item lca[3] = {{.lca = first, .node = first, .ops1 = "", .ops2 = last},
                          {.lca = "", .node = "", .ops1 = last, .ops2 = ""},
                          {.lca = "x", .node = "x", .ops1 = "y", .ops2 = "z"}};
    tl_lca_summary ls = {.tag1 = reports[0].tag, .tag2 = reports[1].tag, .top = lca, .ntop = 3};
    tl_summary s = {.baseline = reports[0].tag, .item = "op", .variants = vs, .nvariants = n - 1, .lca = &ls};
    tl_eff_options opt = {.gpu_arch = arch, .cache = cache};
    tl_efficiency e;
    tl_efficiency_build(&e, &s, reports, n, &opt, arena);
    s.eff = &e;
    tl_buf b = {0};
    tl_summary_markdown(&s, &b);
    tl_summary_json(&s, &b);
    tl_buf_free(&b);
    FILE *null = fopen("/dev/null", "w");
    TL_FUZZ_CHECK(null != NULL);
    tl_summary_print(&s, null, 1);
    fclose(null);
    for (size_t v = 0; v + 1 < n; v++) {
        tl_table *et = tl_efficiency_table(&e, &e.variants[v], s.baseline, vs[v].tag, arena);
        if (et) {
            tl_fuzz_check_table(et, 0);
            tl_table_free(et);
        }
    }
    tl_efficiency_free(&e);
    tl_table_free(t);
}

int tl_fuzz_compare(const uint8_t *data, size_t size)
{
    static const char *const tags[CMPFZ_MAX_REPORTS] = {"base", "v1", "v2"};
    const uint8_t *text[CMPFZ_MAX_REPORTS];
    size_t ntext[CMPFZ_MAX_REPORTS], nreports = 0;

    if (size < 1)
        return 0;
    if (!cmpfz_root[0])
        cmpfz_setup();
    const char *sheet = cmpfz_sheets[(data[0] & 0x7F) % CMPFZ_NSHEETS].sheet;
    unsigned group = cmpfz_sheets[(data[0] & 0x7F) % CMPFZ_NSHEETS].group;
    int write_workbook = (data[0] & 0x80) != 0;

    /* split the rest at NUL bytes */
    const uint8_t *p = data + 1, *end = data + size;
    while (nreports < CMPFZ_MAX_REPORTS) {
        const uint8_t *nul = memchr(p, 0, (size_t)(end - p));
        text[nreports] = p;
        ntext[nreports] = (size_t)((nul ? nul : end) - p);
        nreports++;
        if (!nul)
            break;
        p = nul + 1;
    }
    if (nreports == 1) {
        text[1] = text[0];
        ntext[1] = ntext[0];
        nreports = 2;
    }
    for (size_t i = 0; i < nreports; i++)
        cmpfz_write(i, sheet, text[i], ntext[i]);

    tl_report reports[CMPFZ_MAX_REPORTS];
    tl_arena arena;
    tl_error err = {0};
    tl_results results = {0};
    size_t opened = 0;
    tl_arena_init(&arena);
    for (; opened < nreports; opened++) {
        char dir[512];
        cmpfz_path(dir, sizeof dir, opened, NULL);
        TL_FUZZ_CHECK(tl_report_open(&reports[opened], dir, &err) == 0);
        reports[opened].tag = tl_xstrdup(tags[opened]);
    }
    tl_sink sink = tl_results_sink(&results);
    tl_gpu_arch arch = {.name = "FUZZ", .mem_bw_gbps = 5300, .npeaks = 2};
    arch.peak[0] = (tl_gpu_peak){"matrix_bf16", 708};
    arch.peak[1] = (tl_gpu_peak){"vector_fp32", 0};
    tl_eff_cache *cache = tl_eff_cache_new(&arch);
    /* Named, as with --sheets: the baseline has the sheet, so that is never the error.
     * The efficiency lines' figures are gathered as tlcompare gathers them. */
    if (tl_run_groups_observed(reports, nreports, group, group, 0, tl_eff_cache_observe, cache, &sink, &arena,
                               &err) == 0) {
        TL_FUZZ_CHECK(!err.set);
        for (size_t i = 0; i < results.n; i++) {
            TL_FUZZ_CHECK(results.items[i].name != NULL);
            tl_fuzz_check_table(results.items[i].table, 0);
            tl_buf csv = {0};
            tl_csv_format(results.items[i].table, &csv);
            tl_buf_free(&csv);
        }
        if (group == TL_GROUP_PERF || !strcmp(sheet, "unified_perf_summary") || !strcmp(sheet, "GEMM"))
            cmpfz_efficiency(reports, nreports, sheet, cache, &arch, &arena);
        if (write_workbook) {
            char path[512];
            snprintf(path, sizeof path, "%s/out.xlsx", cmpfz_root);
            tl_xlsx_write_opts opts = {NULL, 1, 0};
            tl_error werr = {0};
            if (tl_xlsx_write(&results, &opts, path, &werr) != 0)
                TL_FUZZ_CHECK(werr.set && strchr(werr.msg, '\n') == NULL);
            unlink(path);
        }
    } else {
        TL_FUZZ_CHECK(err.set);
        TL_FUZZ_CHECK(strchr(err.msg, '\n') == NULL);
    }
    tl_eff_cache_free(cache);
    tl_results_free(&results);
    for (size_t i = 0; i < opened; i++)
        tl_report_close(&reports[i]);
    tl_arena_free(&arena);
    for (size_t i = 0; i < nreports; i++) {
        char path[512];
        cmpfz_path(path, sizeof path, i, sheet);
        unlink(path);
    }
    return 0;
}

TL_FUZZ_ENTRY(tl_fuzz_compare)
