/*
 * xlsx_xml.c - the XML machinery every part of a workbook goes through (see
 * xlsx_internal.h): a part streamed from the zip (io/zip_read.h) through expat, elements
 * classified by where they stand, and messages that name the file, sheet and cell.
 *
 * Elements are matched on their local names (expat splits "uri|name" for us), so the
 * Transitional and Strict flavours of the format, and any choice of prefixes, read the
 * same.  What an element means depends on where it is: a <t> is cell text inside <si> or
 * <is> (or inside a rich-text run <r> there) but not inside a phonetic run <rPh>.  So
 * the parser keeps a small stack of element codes, one per open element, and classifies
 * each new element by its parent; everything unknown is EL_OTHER, and so is everything
 * below it, which makes stray or deeply nested elements harmless.
 */
#include "read/xlsx_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


/*
 * Record the failure of a part, prefixed with the file and the sheet (or part) and cell
 * at fault, and stop the parser: nothing read after the first error is worth having.
 */
static void xlsx_vfail(xlsx_parse *p, const char *cell, const char *fmt, va_list ap)
{
    char msg[768];

    vsnprintf(msg, sizeof msg, fmt, ap);
    if (p->sheet && cell)
        tl_error_set(p->err, "%s, sheet '%s', cell %s: %s", p->x->path, p->sheet, cell, msg);
    else if (p->sheet)
        tl_error_set(p->err, "%s, sheet '%s': %s", p->x->path, p->sheet, msg);
    else
        tl_error_set(p->err, "%s, part %s: %s", p->x->path, p->part, msg);
    p->failed = 1;
    if (p->xp)
        XML_StopParser(p->xp, XML_FALSE);
}

void tl_xlsx_fail(xlsx_parse *p, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    xlsx_vfail(p, NULL, fmt, ap);
    va_end(ap);
}

void tl_xlsx_cell_fail(xlsx_parse *p, const char *cell, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    xlsx_vfail(p, cell, fmt, ap);
    va_end(ap);
}

/* "http://...main|sheetData" -> "sheetData"; names without a namespace stay as they are. */
static const char *xlsx_local(const XML_Char *name)
{
    const char *s = strrchr(name, XLSX_NS_SEP);
    return s ? s + 1 : name;
}

/* The value of the attribute with that local name, or NULL. */
const char *tl_xlsx_attr(const XML_Char **attrs, const char *local)
{
    for (size_t i = 0; attrs[i]; i += 2)
        if (strcmp(xlsx_local(attrs[i]), local) == 0)
            return attrs[i + 1];
    return NULL;
}

static void XMLCALL xlsx_on_start(void *ud, const XML_Char *name, const XML_Char **attrs)
{
    xlsx_parse *p = ud;
    const char *local;
    int el;

    if (p->failed)
        return;
    if (p->depth >= XLSX_MAX_DEPTH) {
        /* the parser's own stack would grow with every level: refused at the first past it */
        tl_xlsx_fail(p, "elements nested more than %d deep; refusing", XLSX_MAX_DEPTH);
        return;
    }
    if (p->depth == 0) {
        el = EL_DOC;
    } else if (p->depth <= XLSX_STACK) {
        local = xlsx_local(name);
        el = xlsx_classify(p->kind, p->stack[p->depth - 1], local, strlen(local));
    } else {
        el = EL_OTHER;
    }
    if (p->depth < XLSX_STACK)
        p->stack[p->depth] = (uint8_t)el;
    p->depth++;
    if (el != EL_OTHER && p->on_start)
        p->on_start(p, el, attrs);
}

static void XMLCALL xlsx_on_end(void *ud, const XML_Char *name)
{
    xlsx_parse *p = ud;
    int el;

    (void)name;
    if (p->failed || p->depth == 0)
        return;
    el = p->depth <= XLSX_STACK ? p->stack[p->depth - 1] : EL_OTHER;
    p->depth--;
    if (el != EL_OTHER && p->on_end)
        p->on_end(p, el);
}

static void XMLCALL xlsx_on_text(void *ud, const XML_Char *s, int len)
{
    xlsx_parse *p = ud;
    int el;

    /* Only text directly inside <v> or <t> counts: the top of the stack says whether
     * we are there (a stray element inside <t> pushes EL_OTHER and mutes its text). */
    if (p->failed || p->depth == 0 || p->depth > XLSX_STACK || len <= 0)
        return;
    el = p->stack[p->depth - 1];
    if (el == EL_V && p->text_v)
        tl_buf_add(p->text_v, s, (size_t)len);
    else if (el == EL_T && p->text_t)
        tl_buf_add(p->text_t, s, (size_t)len);
}

/*
 * OPC forbids DTDs in package parts.  Refusing them outright also rules out every
 * entity-expansion attack ("billion laughs") whatever the expat version.
 */
static void XMLCALL xlsx_on_doctype(void *ud, const XML_Char *name, const XML_Char *sysid,
                                    const XML_Char *pubid, int has_internal_subset)
{
    (void)name, (void)sysid, (void)pubid, (void)has_internal_subset;
    tl_xlsx_fail(ud, "has a DOCTYPE declaration, which xlsx parts never have; refusing");
}

/* "2147483648" -> "2 GiB", for the decompression-bomb message. */
static void xlsx_format_size(char *buf, size_t n, size_t bytes)
{
    if (bytes >= ((size_t)1 << 30) && bytes % ((size_t)1 << 30) == 0)
        snprintf(buf, n, "%zu GiB", bytes >> 30);
    else if (bytes >= ((size_t)1 << 20) && bytes % ((size_t)1 << 20) == 0)
        snprintf(buf, n, "%zu MiB", bytes >> 20);
    else if (bytes >= 1024 && bytes % 1024 == 0)
        snprintf(buf, n, "%zu KiB", bytes >> 10);
    else
        snprintf(buf, n, "%zu bytes", bytes);
}

static void xlsx_bomb(xlsx_parse *p)
{
    char lim[32];

    xlsx_format_size(lim, sizeof lim, p->x->part_limit);
    tl_error_set(p->err, "%s: part %s inflates beyond %s; refusing (decompression bomb?)",
                 p->x->path, p->part, lim);
    p->failed = 1;
}

/* Find a part: by its exact name, else ignoring case (OPC part names are case-insensitive). */
zip_int64_t tl_xlsx_locate(tl_xlsx *x, const char *name)
{
    zip_int64_t i = zip_name_locate(x->zip, name, 0);
    if (i < 0)
        i = zip_name_locate(x->zip, name, ZIP_FL_NOCASE);
    return i;
}


/* Tell the failure of the part's zip stream: a bomb, damaged data, an entry that cannot
 * be opened. */
static void xlsx_in_fail(xlsx_parse *p, const tl_zip_in *in)
{
    if (in->error == TL_ZIP_IN_BOMB)
        xlsx_bomb(p);
    else if (in->error == TL_ZIP_IN_OPEN)
        tl_xlsx_fail(p, "cannot read the part: %s", in->why);
    else if (p->sheet) /* a sheet's message names only the sheet otherwise */
        tl_xlsx_fail(p, "damaged zip data in part %s: %s", p->part, in->why);
    else
        tl_xlsx_fail(p, "damaged zip data: %s", in->why);
}

int tl_xlsx_in_open(xlsx_parse *p, zip_int64_t idx, tl_zip_in *in)
{
    if (tl_zip_in_open(in, p->x->zip, idx, p->x->part_limit, p->x->chunk))
        return 1;
    xlsx_in_fail(p, in);
    return 0;
}

zip_int64_t tl_xlsx_in_read(xlsx_parse *p, tl_zip_in *in, void *buf, size_t want)
{
    zip_int64_t n = tl_zip_in_read(in, buf, want);
    if (n < 0)
        xlsx_in_fail(p, in);
    return n;
}

/*
 * Stream zip entry `idx` through expat with the handlers of `p`.  Returns 1 on success,
 * 0 with the error set.
 */
int tl_xlsx_parse_part(xlsx_parse *p, zip_int64_t idx)
{
    tl_zip_in in;

    if (!tl_xlsx_in_open(p, idx, &in))
        return 0;
    p->xp = XML_ParserCreateNS(NULL, XLSX_NS_SEP);
    if (!p->xp) {
        tl_zip_in_close(&in);
        tl_xlsx_fail(p, "out of memory");
        return 0;
    }
    XML_SetUserData(p->xp, p);
    XML_SetElementHandler(p->xp, xlsx_on_start, xlsx_on_end);
    XML_SetCharacterDataHandler(p->xp, xlsx_on_text);
    XML_SetStartDoctypeDeclHandler(p->xp, xlsx_on_doctype);

    for (;;) {
        size_t want = tl_zip_in_want(&in);
        void *buf = XML_GetBuffer(p->xp, (int)want);
        zip_int64_t n;

        if (!buf) {
            tl_xlsx_fail(p, "out of memory");
            break;
        }
        n = tl_xlsx_in_read(p, &in, buf, want);
        if (n < 0)
            break;
        if (XML_ParseBuffer(p->xp, (int)n, n == 0) != XML_STATUS_OK) {
            /* A handler that failed has said why; otherwise the XML itself is bad. */
            if (!p->failed) {
                unsigned long line = (unsigned long)XML_GetCurrentLineNumber(p->xp);
                const char *why = XML_ErrorString(XML_GetErrorCode(p->xp));
                tl_xlsx_fail(p, "malformed XML at line %lu: %s", line, why ? why : "error");
            }
            break;
        }
        if (n == 0)
            break;
    }
    XML_ParserFree(p->xp);
    p->xp = NULL;
    tl_zip_in_close(&in);
    return !p->failed;
}

/* A parse context for one part, with no handlers yet. */
void tl_xlsx_parse_init(xlsx_parse *p, tl_xlsx *x, xlsx_kind kind, const char *part,
                            const char *sheet, tl_error *err)
{
    memset(p, 0, sizeof *p);
    p->x = x;
    p->kind = kind;
    p->part = part;
    p->sheet = sheet;
    p->err = err;
}
