/*
 * bench_xlsx.c - the workbook writers on a synthetic comparison of ~10 M cells
 * (build: make build/tools/bench_xlsx).
 *
 *   bench_xlsx builtin [THREADS] [SHEETS ROWS]   tl_xlsx_write (default 2 threads, 45 x 20000)
 *   bench_xlsx lxw [SHEETS ROWS]                 tl_xlsx_write_lxw, the libxlsxwriter reference
 *   bench_xlsx levels FILE.xlsx                  the DEFLATE levels (0, 1, 3) on FILE's largest sheet
 *   bench_xlsx csv DIR builtin|lxw [THREADS]     write the results tlcompare wrote to DIR
 *                                                (--output_csvs_dir) again: real shapes
 *
 * Each sheet has 12 columns shaped like a comparison result: a long kernel name, a shape
 * tuple, full-precision diffs and means, short timings, integer counts.  Prints the time,
 * cells per second and the peak RSS of the process (run each writer in its own process).
 */
#include "read/csv_read.h"
#include "write/xlsx_write.h"
#include "xlsx_write_lxw.h"
#include "io/zip_write.h"

#include <dirent.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <zip.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static double cpu(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static long peak_rss_mb(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss / 1024;
}

static uint64_t rng = 88172645463325252ULL;
static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}
static double unit(void) { return (double)(next() >> 11) / 9007199254740992.0; }

static const char *const COLS[12] = {
    "name",
    "Input Dims",
    "Kernel Time (\xc2\xb5s)_sum__v_diff",
    "Kernel Time (\xc2\xb5s)_sum__v_pct",
    "operation_count__v_diff",
    "base::Kernel Time (\xc2\xb5s)_sum",
    "base::Kernel Time (\xc2\xb5s)_mean",
    "base::operation_count",
    "base::TFLOPS/s_mean",
    "v::Kernel Time (\xc2\xb5s)_sum",
    "v::Kernel Time (\xc2\xb5s)_mean",
    "v::total_direct_kernel_time_ms",
};

static void build(tl_results *res, tl_arena *a, size_t nsheets, size_t nrows)
{
    static const char *const kernels[] = {
        "void at::native::elementwise_kernel<128, 2, at::native::gpu_kernel_impl<at::native::"
        "CUDAFunctor_add<float> > >(at::TensorIteratorBase&, at::native::CUDAFunctor_add<float> const&)::"
        "{lambda(int)#1}>(int, at::native::gpu_kernel_impl<...>)",
        "Cijk_Alik_Bljk_HHS_BH_MT128x128x32_MI32x32x8x1_SN_1LDSB0_APM1_ABV0_ACED0_AF0EM1_AF1EM1_AMAS3_ASE_"
        "ASGT_ASLT_ASAE01_ASCE01_ASEM1_BL1_BS1_DTL0_DTVA0_DVO0_ETSP_EPS1_FL0_GRVW8_GSU1_GSUASB_GLS0_ISA942",
        "ampere_fp16_s16816gemm_fp16_256x128_ldg8_f2f_stages_64x3_nn",
        "void flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, cutlass::half_t>, "
        "false, true, false, false, true, true, false>(Flash_fwd_params)",
    };
    res->n = res->cap = nsheets;
    res->items = tl_xcalloc(nsheets, sizeof *res->items);
    for (size_t s = 0; s < nsheets; s++) {
        tl_table *t = tl_table_new();
        t->nrows = nrows;
        for (size_t c = 0; c < 12; c++) {
            tl_table_add_column(t, COLS[c]);
            if (strstr(COLS[c], "__"))
                t->cols[c].role = TL_ROLE_DIFF;
        }
        for (size_t r = 0; r < nrows; r++) {
            char tmp[512];
            snprintf(tmp, sizeof tmp, "%s_%zu", kernels[next() % 4], next() % 5000);
            t->cols[0].cells[r] = tl_cell_str(tl_arena_strdup(a, tmp));
            snprintf(tmp, sizeof tmp, "((%u, %u, %u), (%u, %u))", (unsigned)(next() % 64 + 1),
                     (unsigned)(next() % 4096 + 1), (unsigned)(next() % 4096 + 1), (unsigned)(next() % 4096),
                     (unsigned)(next() % 64));
            t->cols[1].cells[r] = tl_cell_str(tl_arena_strdup(a, tmp));
            double base = unit() * 10000, var = base * (0.5 + unit());
            t->cols[2].cells[r] = tl_cell_float(var - base);
            t->cols[3].cells[r] = tl_cell_float(100 * (var - base) / base);
            t->cols[4].cells[r] = tl_cell_int((int64_t)(next() % 21) - 10);
            t->cols[5].cells[r] = tl_cell_float(round(base * 1000) / 1000);
            t->cols[6].cells[r] = tl_cell_float(base / (double)(next() % 100 + 1));
            t->cols[7].cells[r] = tl_cell_int((int64_t)(next() % 10000));
            t->cols[8].cells[r] = r % 7 ? tl_cell_float(unit() * 500) : tl_cell_missing();
            t->cols[9].cells[r] = tl_cell_float(round(var * 1000) / 1000);
            t->cols[10].cells[r] = tl_cell_float(var / (double)(next() % 100 + 1));
            t->cols[11].cells[r] = tl_cell_float(round(var) / 1000);
        }
        char name[64];
        snprintf(name, sizeof name, "sheet_%zu_intersect_variant", s);
        res->items[s] =
            (tl_result){.name = tl_arena_strdup(a, name), .table = t, .nrows = t->nrows, .ncols = t->ncols};
    }
}

static int levels(const char *path)
{
    int zerr = 0;
    zip_t *z = zip_open(path, ZIP_RDONLY, &zerr);
    if (!z) {
        fprintf(stderr, "cannot open %s\n", path);
        return 1;
    }
    zip_int64_t best = -1;
    zip_uint64_t best_size = 0;
    for (zip_int64_t i = 0; i < zip_get_num_entries(z, 0); i++) {
        zip_stat_t st;
        zip_stat_index(z, (zip_uint64_t)i, 0, &st);
        if (strncmp(st.name, "xl/worksheets/sheet", 19) == 0 && st.size > best_size) {
            best = i;
            best_size = st.size;
        }
    }
    char *xml = malloc(best_size);
    zip_file_t *f = zip_fopen_index(z, (zip_uint64_t)best, 0);
    zip_fread(f, xml, best_size);
    zip_fclose(f);
    zip_close(z);
    printf("sheet XML: %.1f MB\n", best_size / 1e6);
    printf("level  MB/s   ratio\n");
    static const int lv[] = {0, 1, 3};
    for (int k = 0; k < 3; k++) {
        tl_zip_compressor *c = tl_zip_compressor_new(lv[k]);
        tl_zip_blob blob = {0};
        double t0 = cpu();
        int reps = 3;
        for (int r = 0; r < reps; r++) {
            tl_zip_blob_free(&blob);
            tl_zip_compress(c, xml, best_size, &blob);
        }
        double dt = (cpu() - t0) / reps;
        printf("%5d %6.0f %7.2f\n", lv[k], best_size / dt / 1e6, (double)best_size / (double)blob.size);
        tl_zip_blob_free(&blob);
        tl_zip_compressor_free(c);
    }
    free(xml);
    return 0;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Every DIR/<name>.csv as a result named <name>, in name order. */
static size_t read_csv_dir(const char *dir, tl_results *res, tl_arena *a)
{
    DIR *d = opendir(dir);
    if (!d) {
        perror(dir);
        exit(1);
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (len > 4 && strcmp(e->d_name + len - 4, ".csv") == 0) {
            TL_GROW(names, cap, n + 1);
            names[n++] = tl_xstrdup(e->d_name);
        }
    }
    closedir(d);
    qsort(names, n, sizeof *names, cmp_str);
    res->items = tl_xcalloc(n ? n : 1, sizeof *res->items);
    res->n = res->cap = n;
    size_t cells = 0;
    for (size_t i = 0; i < n; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        tl_error err = {0};
        tl_table *t = tl_csv_read_file(path, a, &err);
        if (!t) {
            fprintf(stderr, "%s\n", err.msg);
            exit(1);
        }
        names[i][strlen(names[i]) - 4] = '\0';
        res->items[i] =
            (tl_result){.name = tl_arena_strdup(a, names[i]), .table = t, .nrows = t->nrows, .ncols = t->ncols};
        cells += (t->nrows + 1) * t->ncols;
        free(names[i]);
    }
    free(names);
    return cells;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench_xlsx builtin [THREADS] [SHEETS ROWS] | lxw [SHEETS ROWS] | levels FILE\n");
        return 2;
    }
    if (strcmp(argv[1], "levels") == 0)
        return argc > 2 ? levels(argv[2]) : 2;
    if (strcmp(argv[1], "csv") == 0 && argc > 3) {
        tl_arena a;
        tl_arena_init(&a);
        tl_results res = {0};
        size_t cells = read_csv_dir(argv[2], &res, &a);
        int use_lxw = strcmp(argv[3], "lxw") == 0, threads = argc > 4 ? atoi(argv[4]) : 2;
        long rss_data = peak_rss_mb();
        tl_error err = {0};
        double t0 = now(), c0 = cpu();
        tl_xlsx_write_opts opts = {NULL, threads, 0};
        int rc = use_lxw ? tl_xlsx_write_lxw(&res, "/tmp/bench_xlsx.xlsx", &err)
                         : tl_xlsx_write(&res, &opts, "/tmp/bench_xlsx.xlsx", &err);
        double dt = now() - t0, dc = cpu() - c0;
        if (rc != 0) {
            fprintf(stderr, "bench_xlsx: %s\n", err.msg);
            return 1;
        }
        printf("%-8s threads=%d  %zu sheets, %.1f M cells  %.2f s  %.2f M cells/s  (CPU %.2f s)  "
               "peak RSS %ld MB (data alone %ld MB)\n",
               use_lxw ? "lxw" : "builtin", use_lxw ? 1 : threads, res.n, cells / 1e6, dt, cells / dt / 1e6, dc,
               peak_rss_mb(), rss_data);
        tl_results_free(&res);
        tl_arena_free(&a);
        return 0;
    }
    int lxw = strcmp(argv[1], "lxw") == 0;
    int argi = 2, threads = 2;
    if (!lxw && argc > argi && argc != 4)
        threads = atoi(argv[argi++]);
    size_t nsheets = 45, nrows = 20000;
    if (argc > argi + 1) {
        nsheets = strtoul(argv[argi], NULL, 10);
        nrows = strtoul(argv[argi + 1], NULL, 10);
    }
    tl_arena a;
    tl_arena_init(&a);
    tl_results res = {0};
    build(&res, &a, nsheets, nrows);
    long rss_data = peak_rss_mb();
    const char *path = "/tmp/bench_xlsx.xlsx";
    tl_error err = {0};
    double t0 = now(), c0 = cpu();
    int rc;
    if (lxw) {
        rc = tl_xlsx_write_lxw(&res, path, &err);
    } else {
        tl_xlsx_write_opts opts = {NULL, threads, 0};
        rc = tl_xlsx_write(&res, &opts, path, &err);
    }
    double dt = now() - t0, dc = cpu() - c0;
    if (rc != 0) {
        fprintf(stderr, "bench_xlsx: %s\n", err.msg);
        return 1;
    }
    FILE *f = fopen(path, "rb");
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fclose(f);
    double cells = (double)nsheets * (double)(nrows + 1) * 12;
    printf("%-8s threads=%d  %zu sheets x %zu rows x 12 cols = %.1f M cells  %.2f s  %.2f M cells/s  "
           "(CPU %.2f s)  file %.1f MB  peak RSS %ld MB (data alone %ld MB)\n",
           lxw ? "lxw" : "builtin", lxw ? 1 : threads, nsheets, nrows, cells / 1e6, dt, cells / dt / 1e6,
           dc, size / 1e6, peak_rss_mb(), rss_data);
    tl_results_free(&res);
    tl_arena_free(&a);
    return 0;
}
