/*
 * report.c - reports as CSV directories or workbooks (see report.h).
 */
#include "report.h"

#include "csv_read.h"
#include "xlsx_read.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int open_csv_dir(tl_report *r, tl_error *err)
{
    DIR *d = opendir(r->path);
    if (!d) {
        tl_error_set(err, "%s: cannot open directory: %s", r->path, strerror(errno));
        return -1;
    }
    size_t cap = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t n = strlen(e->d_name);
        if (n <= 4 || strcmp(e->d_name + n - 4, ".csv") != 0 || e->d_name[0] == '.')
            continue;
        TL_GROW(r->sheets, cap, r->nsheets + 1);
        r->sheets[r->nsheets] = tl_xmalloc(n - 3);
        memcpy(r->sheets[r->nsheets], e->d_name, n - 4);
        r->sheets[r->nsheets][n - 4] = '\0';
        r->nsheets++;
    }
    closedir(d);
    if (r->nsheets == 0) {
        tl_error_set(err, "%s: no <sheet>.csv files in this directory; is it a TraceLens report?",
                     r->path);
        return -1;
    }
    qsort(r->sheets, r->nsheets, sizeof *r->sheets, cmp_str);
    return 0;
}

int tl_report_open(tl_report *r, const char *path, tl_error *err)
{
    memset(r, 0, sizeof *r);
    tl_arena_init(&r->arena);
    tl_arena_init(&r->scratch[0]);
    tl_arena_init(&r->scratch[1]);
    r->path = tl_xstrdup(path);
    struct stat st;
    if (stat(path, &st) != 0) {
        tl_error_set(err, "%s: %s", path, strerror(errno));
        return -1;
    }
    if (S_ISDIR(st.st_mode))
        return open_csv_dir(r, err);
    r->xlsx = tl_xlsx_open(path, err);
    return r->xlsx ? 0 : -1;
}

int tl_report_has_sheet(const tl_report *r, const char *sheet)
{
    if (r->xlsx)
        return tl_xlsx_has_sheet(r->xlsx, sheet);
    for (size_t i = 0; i < r->nsheets; i++)
        if (strcmp(r->sheets[i], sheet) == 0)
            return 1;
    return 0;
}

tl_table *tl_report_read_sheet(tl_report *r, const char *sheet, tl_arena *arena, tl_error *err)
{
    if (r->xlsx)
        return tl_xlsx_read_sheet(r->xlsx, sheet, arena, err);
    if (!tl_report_has_sheet(r, sheet)) {
        tl_error_set(err, "%s: no sheet '%s' (no %s.csv)", r->path, sheet, sheet);
        return NULL;
    }
    tl_buf path = {0};
    size_t n = strlen(r->path);
    tl_buf_add(&path, r->path, n);
    if (n && r->path[n - 1] != '/')
        tl_buf_addc(&path, '/');
    tl_buf_printf(&path, "%s.csv", sheet);
    tl_table *t = tl_csv_read_file(tl_buf_cstr(&path), arena, err);
    tl_buf_free(&path);
    return t;
}

void tl_report_close(tl_report *r)
{
    if (r->xlsx)
        tl_xlsx_close(r->xlsx);
    for (size_t i = 0; i < r->nsheets; i++)
        free(r->sheets[i]);
    free(r->sheets);
    free(r->path);
    free(r->tag);
    tl_arena_free(&r->arena);
    tl_arena_free(&r->scratch[0]);
    tl_arena_free(&r->scratch[1]);
    memset(r, 0, sizeof *r);
}
