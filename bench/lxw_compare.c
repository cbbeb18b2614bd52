/*
 * lxw_compare.c - tlcompare's comparison with the workbook written by libxlsxwriter, the
 * reference tools/bench.sh measures the built-in writer against ("20k csv in, lxw writer").
 * Built by `make bench` as build/tools/lxw_compare; not part of tlcompare.
 *
 *   lxw_compare REPORT REPORT [REPORT ...] -o FILE [--output_csvs_dir DIR] [-q] [--timings]
 *
 * The same comparison, CSVs and `--timings` line as tlcompare's; the workbook is plain
 * (tl_xlsx_write_lxw: no styles, no summary sheet) and written once every result is made,
 * straight to FILE (no temporary name: it is a measurement, not the product).
 */
#include "xlsx_write_lxw.h"

#include "base/progress.h"
#include "base/util.h"
#include "compare/groups.h"
#include "read/open.h"
#include "write/csv_write.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int main(int argc, char **argv)
{
    const char *out = NULL, *csv_dir = NULL, *paths[16];
    int timings = 0;
    size_t n = 0;

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-o") == 0 && i + 1 < argc)
            out = argv[++i];
        else if (strcmp(argv[i], "--output_csvs_dir") == 0 && i + 1 < argc)
            csv_dir = argv[++i];
        else if (strcmp(argv[i], "-q") == 0)
            tl_quiet = 1;
        else if (strcmp(argv[i], "--timings") == 0)
            timings = 1;
        else if (argv[i][0] != '-' && n < sizeof paths / sizeof *paths)
            paths[n++] = argv[i];
        else {
            fprintf(stderr, "usage: lxw_compare REPORT REPORT [...] -o FILE [--output_csvs_dir DIR] [-q] [--timings]\n");
            return 2;
        }
    }
    if (n < 2 || !out) {
        fprintf(stderr, "lxw_compare: two reports and -o FILE, please\n");
        return 2;
    }

    double t_start = tl_now();
    tl_report reports[16];
    tl_arena arena;
    tl_error err = {0};
    tl_results results = {0};
    size_t opened = 0;
    int rc = 1;

    memset(reports, 0, sizeof reports);
    tl_arena_init(&arena);
    for (; opened < n; opened++) {
        if (tl_report_open(&reports[opened], paths[opened], &err) != 0) {
            tl_report_close(&reports[opened]);
            goto done;
        }
        reports[opened].tag = tl_path_stem(paths[opened]);
    }
    /* A sink without sync keeps every result (and the strings its tables hold). */
    tl_sink sink = tl_results_sink(&results);
    if (tl_run_groups(reports, n, TL_GROUP_ALL, 0, &sink, &arena, &err) != 0)
        goto done;
    if (csv_dir) {
        double t0 = tl_now();
        if (mkdir(csv_dir, 0777) != 0) {
            tl_error_set(&err, "%s: cannot create the directory", csv_dir);
            goto done;
        }
        for (size_t i = 0; i < results.n; i++) {
            const tl_result *r = &results.items[i];
            char *path = tl_xmalloc(strlen(csv_dir) + strlen(r->name) + 6);
            sprintf(path, "%s/%s.csv", csv_dir, r->name);
            tl_table_format_floats(r->table);
            int bad = tl_csv_write_file(r->table, path, &err);
            free(path);
            if (bad)
                goto done;
        }
        tl_timing.write_csv += tl_now() - t0;
    }
    double t0 = tl_now();
    if (tl_xlsx_write_lxw(&results, out, &err) != 0)
        goto done;
    tl_timing.write_xlsx += tl_now() - t0;
    tl_timing.total = tl_now() - t_start;
    if (timings)
        fprintf(stderr, "timings: read %.3f s, compare %.3f s, format %.3f s, summary %.3f s, workbook %.3f s, "
                        "csv %.3f s, total %.3f s\n", tl_timing.read, tl_timing.compare, tl_timing.format,
                tl_timing.summary, tl_timing.write_xlsx, tl_timing.write_csv, tl_timing.total);
    rc = 0;
done:
    if (rc)
        fprintf(stderr, "lxw_compare: %s\n", err.msg[0] ? err.msg : "failed");
    tl_results_free(&results);
    for (size_t i = 0; i < opened; i++)
        tl_report_close(&reports[i]); /* and its tag */
    tl_arena_free(&arena);
    return rc;
}
