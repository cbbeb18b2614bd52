/*
 * xlsx_read.c - an .xlsx workbook opened: its package structure and shared strings (see
 * xlsx_read.h; the files of the reader are listed in xlsx_internal.h).
 *
 * An .xlsx file is a zip archive of XML "parts" (ECMA-376, Office Open XML).  A reader
 * needs five of them:
 *
 *   _rels/.rels                  where the workbook part is (nearly always xl/workbook.xml)
 *   xl/workbook.xml              the sheet names, in order, each with a relationship id
 *   xl/_rels/workbook.xml.rels   relationship id -> the part holding that sheet, and
 *                                the part holding the shared-string table
 *   xl/sharedStrings.xml         the strings that `t="s"` cells refer to by index
 *   xl/worksheets/sheetN.xml     the cells of one sheet
 *
 * Every part is streamed: inflated from the zip in fixed chunks and parsed chunk by chunk,
 * so memory follows the size of the result, never the size of the XML.  The inflated size
 * of each part is bounded (TL_XLSX_MAX_PART), both as the zip directory declares it and as
 * actually read, because a few KiB of deflate can expand to many GiB.
 *
 * Inflating is ISA-L's, CRC-checked (io/zip_read.h).
 *
 * Parsing is expat's for the small parts.  Worksheets are large (a 20,000-row report
 * unpacks to ~0.5 GB of sheet XML) and take a scanner of their own (xlsx_scan.c), which
 * reads the subset of XML that spreadsheet writers produce and gives up on anything else;
 * the sheet is then read again by expat from the start.  So expat remains the reference: the scanner only ever gives the result expat
 * would, faster.
 */
#include "read/xlsx_cells.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- opening: relationships and the sheet list ------------------------------------ */

/* Append the path segments of `s` to out[0..*w), resolving "." and "..". */
static void xlsx_add_segments(char *out, size_t *w, const char *s)
{
    while (*s) {
        const char *slash = strchr(s, '/');
        size_t n = slash ? (size_t)(slash - s) : strlen(s);

        if (n == 0 || (n == 1 && s[0] == '.')) {
            /* nothing: "a//b" and "a/./b" are "a/b" */
        } else if (n == 2 && s[0] == '.' && s[1] == '.') {
            while (*w > 0 && out[*w - 1] != '/')
                (*w)--;
            if (*w > 0)
                (*w)--; /* and the slash before the dropped segment */
        } else {
            if (*w > 0)
                out[(*w)++] = '/';
            memcpy(out + *w, s, n);
            *w += n;
        }
        s += n;
        if (*s == '/')
            s++;
    }
}

/*
 * The zip entry a relationship Target names.  Targets are URIs relative to the directory
 * of the source part ("worksheets/sheet1.xml" from xl/workbook.xml), or absolute from
 * the package root ("/xl/worksheets/sheet1.xml"); zip entry names have no leading slash.
 */
static const char *xlsx_resolve(tl_arena *a, const char *base, const char *target)
{
    char *out = tl_arena_alloc(a, strlen(base) + strlen(target) + 2);
    size_t w = 0;

    if (target[0] != '/')
        xlsx_add_segments(out, &w, base);
    xlsx_add_segments(out, &w, target);
    out[w] = '\0';
    return out;
}

static void xlsx_rels_start(xlsx_parse *p, int el, const XML_Char **attrs)
{
    xlsx_rels *rels = p->state;
    const char *id, *target, *type, *mode;
    xlsx_rel *r;

    if (el != EL_REL)
        return;
    id = tl_xlsx_attr(attrs, "Id");
    target = tl_xlsx_attr(attrs, "Target");
    type = tl_xlsx_attr(attrs, "Type");
    mode = tl_xlsx_attr(attrs, "TargetMode");
    /* Links to outside the package (hyperlinks and such) are no parts of ours. */
    if (!id || !target || (mode && strcmp(mode, "External") == 0))
        return;
    TL_GROW(rels->v, rels->cap, rels->n + 1);
    r = &rels->v[rels->n];
    r->id = tl_arena_strdup(&p->x->meta, id);
    r->type = tl_arena_strdup(&p->x->meta, type ? type : "");
    r->target = xlsx_resolve(&p->x->meta, rels->base, target);
    r->order = rels->n++;
}

/* Read a .rels part into `rels`.  Returns 1, or 0 with the error set. */
static int xlsx_read_rels(tl_xlsx *x, zip_int64_t idx, const char *part, xlsx_rels *rels,
                          tl_error *err)
{
    xlsx_parse p;

    tl_xlsx_parse_init(&p, x, PART_RELS, part, NULL, err);
    p.on_start = xlsx_rels_start;
    p.state = rels;
    return tl_xlsx_parse_part(&p, idx);
}

/* 1 when a relationship type URI ends in "/<what>" (Transitional and Strict agree there). */
static int xlsx_rel_is(const xlsx_rel *r, const char *what)
{
    size_t n = strlen(r->type), m = strlen(what);
    return n > m && r->type[n - m - 1] == '/' && strcmp(r->type + n - m, what) == 0;
}

static int xlsx_rel_cmp(const void *a, const void *b)
{
    const xlsx_rel *x = a, *y = b;
    int c = strcmp(x->id, y->id);
    if (c)
        return c;
    return x->order < y->order ? -1 : x->order > y->order;
}

/* The first relationship with that id in `rels` (sorted by xlsx_rel_cmp), or NULL. */
static const xlsx_rel *xlsx_rel_find(const xlsx_rels *rels, const char *id)
{
    size_t lo = 0, hi = rels->n;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp(rels->v[mid].id, id) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < rels->n && strcmp(rels->v[lo].id, id) == 0 ? &rels->v[lo] : NULL;
}

static void xlsx_workbook_start(xlsx_parse *p, int el, const XML_Char **attrs)
{
    tl_xlsx *x = p->x;
    const char *name, *rid;
    xlsx_sheet *s;

    if (el != EL_SHEET)
        return;
    name = tl_xlsx_attr(attrs, "name");
    rid = tl_xlsx_attr(attrs, "id"); /* r:id */
    if (!name) {
        tl_xlsx_fail(p, "sheet number %zu has no name", x->nsheets + 1);
        return;
    }
    TL_GROW(x->sheets, x->capsheets, x->nsheets + 1);
    s = &x->sheets[x->nsheets++];
    s->name = tl_arena_strdup(&x->meta, name);
    s->rid = rid ? tl_arena_strdup(&x->meta, rid) : NULL;
    s->part = NULL;
}

static int xlsx_strp_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* pandas selects sheets by name, so two sheets of one name would make one unreachable. */
static int xlsx_check_duplicates(tl_xlsx *x, const char *part, tl_error *err)
{
    const char **names;
    int ok = 1;

    if (x->nsheets < 2)
        return 1;
    names = tl_xmalloc(x->nsheets * sizeof *names);
    for (size_t i = 0; i < x->nsheets; i++)
        names[i] = x->sheets[i].name;
    qsort(names, x->nsheets, sizeof *names, xlsx_strp_cmp);
    for (size_t i = 1; i < x->nsheets && ok; i++) {
        if (strcmp(names[i - 1], names[i]) == 0) {
            tl_error_set(err, "%s, part %s: two sheets are named '%s'", x->path, part, names[i]);
            ok = 0;
        }
    }
    free(names);
    return ok;
}

/*
 * Find the workbook part through the package relationships, read its sheet list and
 * resolve each sheet to its part.  Returns 1, or 0 with the error set.
 */
static int xlsx_read_structure(tl_xlsx *x, tl_error *err)
{
    const char *wb = "xl/workbook.xml";
    const char *slash, *base, *rels_part;
    xlsx_rels rels = {0};
    zip_int64_t idx;
    xlsx_parse p;
    int ok = 0;

    if (zip_get_num_entries(x->zip, 0) <= 0) {
        tl_error_set(err, "%s: an empty zip archive, not an xlsx workbook", x->path);
        return 0;
    }

    /* The package relationships say where the workbook is; writers all put it in
     * xl/workbook.xml, which is also the answer when _rels/.rels is missing. */
    idx = tl_xlsx_locate(x, "_rels/.rels");
    if (idx >= 0) {
        rels.base = "";
        if (!xlsx_read_rels(x, idx, "_rels/.rels", &rels, err))
            goto out;
        for (size_t i = 0; i < rels.n; i++) {
            if (xlsx_rel_is(&rels.v[i], "officeDocument")) {
                wb = rels.v[i].target;
                break;
            }
        }
        rels.n = 0;
    }
    idx = tl_xlsx_locate(x, wb);
    if (idx < 0) {
        tl_error_set(err, "%s: not an xlsx workbook (%s is missing)", x->path, wb);
        goto out;
    }
    tl_xlsx_parse_init(&p, x, PART_WORKBOOK, wb, NULL, err);
    p.on_start = xlsx_workbook_start;
    if (!tl_xlsx_parse_part(&p, idx) || !xlsx_check_duplicates(x, wb, err))
        goto out;

    /* xl/workbook.xml -> base "xl/", relationships in xl/_rels/workbook.xml.rels. */
    slash = strrchr(wb, '/');
    base = tl_arena_strndup(&x->meta, wb, slash ? (size_t)(slash - wb + 1) : 0);
    rels_part = tl_arena_printf(&x->meta, "%s_rels/%s.rels", base, slash ? slash + 1 : wb);
    idx = tl_xlsx_locate(x, rels_part);
    if (idx < 0) {
        tl_error_set(err, "%s: not an xlsx workbook (%s is missing)", x->path, rels_part);
        goto out;
    }
    rels.base = base;
    if (!xlsx_read_rels(x, idx, rels_part, &rels, err))
        goto out;

    x->sst_part = tl_arena_printf(&x->meta, "%ssharedStrings.xml", base);
    for (size_t i = 0; i < rels.n; i++) {
        if (xlsx_rel_is(&rels.v[i], "sharedStrings")) {
            x->sst_part = rels.v[i].target;
            break;
        }
    }
    /* Sorted ids make the lookups O(log n) even for a hostile number of sheets. */
    if (rels.n)
        qsort(rels.v, rels.n, sizeof *rels.v, xlsx_rel_cmp);
    for (size_t i = 0; i < x->nsheets; i++) {
        const xlsx_rel *r = x->sheets[i].rid ? xlsx_rel_find(&rels, x->sheets[i].rid) : NULL;
        /* A missing relationship only matters if the sheet is read: say so then. */
        x->sheets[i].part = r ? r->target : NULL;
    }
    ok = 1;
out:
    free(rels.v);
    return ok;
}

/*
 * The bound on a part's inflated size: TL_XLSX_MAX_PART, or less when the caller's
 * options or, for the command-line tests, the environment variable TLCOMPARE_MAX_PART
 * (a byte count) say so; neither can raise it.
 */
static size_t xlsx_part_limit(const tl_xlsx_opts *opts)
{
    const char *env;
    char *end;
    unsigned long long v;

    if (opts && opts->part_limit && opts->part_limit < TL_XLSX_MAX_PART)
        return opts->part_limit;
    env = getenv("TLCOMPARE_MAX_PART");
    if (env && *env >= '0' && *env <= '9') {
        v = strtoull(env, &end, 10);
        if (*end == '\0' && v > 0 && v < TL_XLSX_MAX_PART)
            return (size_t)v;
    }
    return TL_XLSX_MAX_PART;
}

static void xlsx_open_error(const char *path, int code, tl_error *err)
{
    zip_error_t ze;

    /* Capture errno first: the system error behind ZIP_ER_OPEN / READ / SEEK. */
    zip_error_init_with_code(&ze, code);
    switch (code) {
    case ZIP_ER_NOZIP:
        tl_error_set(err, "%s: not a zip archive (or a damaged one)", path);
        break;
    case ZIP_ER_INCONS:
        tl_error_set(err, "%s: damaged zip archive (truncated, or its directory is inconsistent)",
                     path);
        break;
    case ZIP_ER_NOENT:
        tl_error_set(err, "%s: no such file", path);
        break;
    case ZIP_ER_MEMORY:
        tl_error_set(err, "%s: out of memory", path);
        break;
    case ZIP_ER_OPEN:
    case ZIP_ER_READ:
    case ZIP_ER_SEEK:
        if (zip_error_code_system(&ze) != 0) {
            tl_error_set(err, "%s: cannot read: %s", path, strerror(zip_error_code_system(&ze)));
            break;
        }
        /* fall through */
    default:
        tl_error_set(err, "%s: cannot read as a zip archive: %s", path, zip_error_strerror(&ze));
        break;
    }
    zip_error_fini(&ze);
}

tl_xlsx *tl_xlsx_open_opts(const char *path, const tl_xlsx_opts *opts, tl_error *err)
{
    int code = 0;
    zip_t *z = zip_open(path, ZIP_RDONLY, &code);
    tl_xlsx *x;

    if (!z) {
        xlsx_open_error(path, code, err);
        return NULL;
    }
    x = tl_xcalloc(1, sizeof *x);
    x->zip = z;
    x->path = tl_xstrdup(path);
    x->part_limit = xlsx_part_limit(opts);
    x->chunk = opts && opts->chunk ? opts->chunk : XLSX_CHUNK;
    x->scanner = opts ? opts->scanner : 0;
    x->max_strings = opts && opts->max_strings && opts->max_strings < TL_XLSX_MAX_STRINGS
                         ? opts->max_strings : TL_XLSX_MAX_STRINGS;
    tl_arena_init(&x->meta);
    if (!xlsx_read_structure(x, err)) {
        tl_xlsx_close(x);
        return NULL;
    }
    return x;
}

tl_xlsx *tl_xlsx_open(const char *path, tl_error *err) { return tl_xlsx_open_opts(path, NULL, err); }

size_t tl_xlsx_sheet_count(const tl_xlsx *x) { return x->nsheets; }

const char *tl_xlsx_sheet_name(const tl_xlsx *x, size_t i)
{
    return i < x->nsheets ? x->sheets[i].name : NULL;
}

const xlsx_sheet *tl_xlsx_find_sheet(const tl_xlsx *x, const char *name)
{
    for (size_t i = 0; i < x->nsheets; i++)
        if (strcmp(x->sheets[i].name, name) == 0)
            return &x->sheets[i];
    return NULL;
}

int tl_xlsx_has_sheet(const tl_xlsx *x, const char *sheet)
{
    return tl_xlsx_find_sheet(x, sheet) != NULL;
}

void tl_xlsx_close(tl_xlsx *x)
{
    if (!x)
        return;
    if (x->zip)
        zip_discard(x->zip); /* read-only: nothing to write back */
    free(x->path);
    free(x->sheets);
    free(x->sst);
    tl_buf_free(&x->vbuf);
    tl_buf_free(&x->tbuf);
    tl_arena_free(&x->meta);
    free(x);
}

/* ---- shared strings ----------------------------------------------------------------- */

static void xlsx_sst_start(xlsx_parse *p, int el, const XML_Char **attrs)
{
    (void)attrs;
    if (el == EL_SI)
        tl_buf_clear(&p->x->tbuf);
}

static void xlsx_sst_end(xlsx_parse *p, int el)
{
    tl_xlsx *x = p->x;
    const char *s;
    size_t n;

    if (el != EL_SI)
        return;
    /* A few MiB of deflate can hold hundreds of millions of <si/>, each an entry here:
     * refuse past the bound rather than grow without one. */
    if (x->nsst >= x->max_strings) {
        tl_xlsx_fail(p, "more than %zu shared strings; refusing (a workbook bomb?)", x->max_strings);
        return;
    }
    s = xlsx_text(&x->tbuf, &n);
    TL_GROW(x->sst, x->capsst, x->nsst + 1);
    x->sst[x->nsst].s = n ? tl_arena_strndup(&x->meta, s, n) : "";
    x->sst[x->nsst].n = n;
    x->nsst++;
}

/*
 * Read the shared-string table, once per workbook: every sheet indexes the same one.
 * A workbook without the part simply has no shared strings.
 */
int tl_xlsx_load_sst(tl_xlsx *x, tl_error *err)
{
    zip_int64_t idx = tl_xlsx_locate(x, x->sst_part);
    xlsx_parse p;

    if (idx >= 0) {
        tl_xlsx_parse_init(&p, x, PART_SST, x->sst_part, NULL, err);
        p.on_start = xlsx_sst_start;
        p.on_end = xlsx_sst_end;
        p.text_t = &x->tbuf;
        if (!tl_xlsx_parse_part(&p, idx)) {
            x->nsst = 0; /* a later read fails the same way rather than half-working */
            return 0;
        }
    }
    x->sst_loaded = 1;
    return 1;
}
