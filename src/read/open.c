/*
 * open.c - CSV directories and workbooks as reports (see open.h).
 */
#include "read/open.h"

#include "read/csv_read.h"
#include "read/xlsx_read.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ---- a directory of <sheet>.csv files ------------------------------------------------- */

typedef struct csv_dir {
    char **sheets; /* the sheet names found (file stems), sorted */
    size_t nsheets;
    tl_buf bytes;  /* the CSV reader's window: its memory serves the next sheet */
} csv_dir;

#define CSV_KEEP_BYTES ((size_t)64 << 20)

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int csv_has_sheet(const tl_report *r, const char *sheet)
{
    const csv_dir *d = r->impl;
    for (size_t i = 0; i < d->nsheets; i++)
        if (strcmp(d->sheets[i], sheet) == 0)
            return 1;
    return 0;
}

static tl_table *csv_read_sheet(tl_report *r, const char *sheet, tl_arena *arena, tl_error *err)
{
    if (!csv_has_sheet(r, sheet)) {
        tl_error_set(err, "%s: no sheet '%s' (no %s.csv)", r->path, sheet, sheet);
        return NULL;
    }
    tl_buf path = {0};
    size_t n = strlen(r->path);
    tl_buf_add(&path, r->path, n);
    if (n && r->path[n - 1] != '/')
        tl_buf_addc(&path, '/');
    tl_buf_printf(&path, "%s.csv", sheet);
    csv_dir *d = r->impl;
    tl_table *t = tl_csv_read_file_into(tl_buf_cstr(&path), &d->bytes, arena, err);
    tl_buf_free(&path);
    /* kept for the next sheet only up to a bound: a comparison of many reports holds
     * every report open at once */
    if (d->bytes.cap > CSV_KEEP_BYTES)
        tl_buf_free(&d->bytes);
    return t;
}

static void csv_close(tl_report *r)
{
    csv_dir *d = r->impl;
    for (size_t i = 0; d && i < d->nsheets; i++)
        free(d->sheets[i]);
    if (d) {
        free(d->sheets);
        tl_buf_free(&d->bytes);
    }
    free(d);
    r->impl = NULL;
}

static const tl_report_ops csv_ops = {csv_has_sheet, csv_read_sheet, csv_close, NULL};

static int open_csv_dir(tl_report *r, tl_error *err)
{
    csv_dir *d = tl_xcalloc(1, sizeof *d);
    r->impl = d;
    r->ops = &csv_ops;
    r->kind = "csv";
    DIR *dir = opendir(r->path);
    if (!dir) {
        tl_error_set(err, "%s: cannot open directory: %s", r->path, strerror(errno));
        return -1;
    }
    size_t cap = 0;
    struct dirent *e;
    while ((e = readdir(dir)) != NULL) {
        size_t n = strlen(e->d_name);
        if (n <= 4 || strcmp(e->d_name + n - 4, ".csv") != 0 || e->d_name[0] == '.')
            continue;
        TL_GROW(d->sheets, cap, d->nsheets + 1);
        d->sheets[d->nsheets] = tl_xmalloc(n - 3);
        memcpy(d->sheets[d->nsheets], e->d_name, n - 4);
        d->sheets[d->nsheets][n - 4] = '\0';
        d->nsheets++;
    }
    closedir(dir);
    if (d->nsheets == 0) {
        tl_error_set(err, "%s: no <sheet>.csv files in this directory; is it a TraceLens report?",
                     r->path);
        return -1;
    }
    qsort(d->sheets, d->nsheets, sizeof *d->sheets, cmp_str);
    return 0;
}

/* ---- an .xlsx workbook ---------------------------------------------------------------- */

static int xlsx_has_sheet(const tl_report *r, const char *sheet)
{
    return tl_xlsx_has_sheet(r->impl, sheet);
}

static tl_table *xlsx_read_sheet(tl_report *r, const char *sheet, tl_arena *arena, tl_error *err)
{
    return tl_xlsx_read_sheet(r->impl, sheet, arena, err);
}

static void xlsx_close(tl_report *r)
{
    if (r->impl)
        tl_xlsx_close(r->impl);
    r->impl = NULL;
}

static const tl_report_ops xlsx_ops = {xlsx_has_sheet, xlsx_read_sheet, xlsx_close, NULL};

/* ---- a file that is no workbook ------------------------------------------------------- */

/* What a file that is not a zip archive is, told by its first bytes (magic numbers and
 * text), and what is expected instead: one line for the user, or NULL when nothing tells
 * (the workbook reader's own message then stands). */
typedef struct file_kind_rule {
    const char *magic;
    size_t n;
    const char *what;
} file_kind_rule;

static const file_kind_rule binary_kinds[] = {
    {"\x89PNG\r\n\x1a\n", 8, "a PNG image"},
    {"\xff\xd8\xff", 3, "a JPEG image"},
    {"GIF8", 4, "a GIF image"},
    {"%PDF-", 5, "a PDF document"},
    {"\x1f\x8b", 2, "a gzip-compressed file, not a profiler trace"},
    {"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", 8, "an old-style (.xls) Excel file; save it as .xlsx"},
    {"\x7f" "ELF", 4, "a program"},
};

static const char *expected = "a report is a TraceLens workbook (.xlsx), a directory of <sheet>.csv files, "
                              "or a PyTorch profiler trace (.json, .json.gz)";

static int has_ext(const char *path, const char *ext)
{
    size_t n = strlen(path), k = strlen(ext);
    if (n < k)
        return 0;
    for (size_t i = 0; i < k; i++)
        if ((path[n - k + i] | 0x20) != (ext[i] | 0x20))
            return 0;
    return 1;
}

static int not_a_report(const char *path, tl_error *err)
{
    unsigned char head[512];
    size_t n = 0;
    FILE *f = fopen(path, "rb");
    if (f) {
        n = fread(head, 1, sizeof head, f);
        fclose(f);
    }
    if (n >= 4 && !memcmp(head, "PK\x03\x04", 4))
        return 0; /* a zip archive: the workbook reader says what is wrong with it */
    for (size_t i = 0; i < sizeof binary_kinds / sizeof *binary_kinds; i++) {
        if (n >= binary_kinds[i].n && !memcmp(head, binary_kinds[i].magic, binary_kinds[i].n)) {
            tl_error_set(err, "%s: %s; %s", path, binary_kinds[i].what, expected);
            return -1;
        }
    }
    size_t text = 0, j = 0;
    if (n >= 3 && !memcmp(head, "\xef\xbb\xbf", 3))
        j = 3; /* a UTF-8 byte order mark */
    size_t lead = j;
    while (lead < n && (head[lead] == ' ' || head[lead] == '\t' || head[lead] == '\r' || head[lead] == '\n'))
        lead++;
    for (; j < n; j++)
        text += head[j] >= 0x20 || head[j] == '\t' || head[j] == '\r' || head[j] == '\n' || head[j] >= 0x80;
    int is_text = n > 0 && text == n - (n >= 3 && !memcmp(head, "\xef\xbb\xbf", 3) ? 3 : 0);
    if (n == 0) {
        tl_error_set(err, "%s: an empty file; %s", path, expected);
    } else if (has_ext(path, ".csv") && is_text) {
        /* a report's sheet on its own: the report is the directory that holds it */
        size_t s, e;
        tl_path_base(path, &s, &e);
        tl_error_set(err, "%s: a single CSV file (one sheet); a CSV report is the directory of its <sheet>.csv "
                          "files: pass its directory ('%.*s')", path, s ? (int)s : 1, s ? path : ".");
    } else if (is_text && lead < n && (head[lead] == '{' || head[lead] == '[')) {
        tl_error_set(err, "%s: a JSON file that is not a PyTorch profiler trace (no \"traceEvents\" list); %s",
                     path, expected);
    } else if (is_text) {
        tl_error_set(err, "%s: a text file, not a report; %s", path, expected);
    } else {
        return 0;
    }
    return -1;
}

int tl_report_open(tl_report *r, const char *path, tl_error *err)
{
    tl_report_init(r, path);
    struct stat st;
    if (stat(path, &st) != 0) {
        tl_error_set(err, "%s: %s", path, strerror(errno));
        return -1;
    }
    if (S_ISDIR(st.st_mode))
        return open_csv_dir(r, err);
    /* A FIFO or device would block the workbook reader's open, or feed it forever. */
    if (!S_ISREG(st.st_mode)) {
        tl_error_set(err, "%s: neither a workbook file nor a directory of CSVs", path);
        return -1;
    }
    if (not_a_report(path, err) != 0)
        return -1;
    tl_xlsx *x = tl_xlsx_open(path, err);
    if (!x)
        return -1;
    r->impl = x;
    r->ops = &xlsx_ops;
    r->kind = "xlsx";
    return 0;
}
