/*
 * options.c - a tool's option table applied: argv parsing, typed setters, --help (see
 * options.h).
 */
#include "run/options.h"

#include "base/opts.h"
#include "run/compare.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void tl_strlist_push(tl_strlist *l, const char *s)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 8;
        l->v = tl_xrealloc(l->v, l->cap * sizeof *l->v);
    }
    l->v[l->n++] = s;
}

void tl_strlist_free(tl_strlist *l)
{
    free(l->v);
    memset(l, 0, sizeof *l);
}

static void *field(const tl_optdef *d, void *args)
{
    return (char *)args + d->off;
}

const char *tl_opts_label(const tl_optdef *d)
{
    for (int i = 0; i < TL_OPT_MAX_SPELLINGS && d->cli[i]; i++)
        if (!strncmp(d->cli[i], "--", 2))
            return d->cli[i];
    return d->cli[0] ? d->cli[0] : d->key ? d->key : "?";
}

static int needs(const tl_optdef *d, tl_error *err)
{
    tl_error_set(err, "%s needs %s", tl_opts_label(d), d->needs ? d->needs : "a value");
    return TL_RUN_USAGE;
}

int tl_opts_set_flag(const tl_optdef *d, void *args, int on)
{
    *(int *)field(d, args) = on != 0;
    return 0;
}

int tl_opts_set_number(const tl_optdef *d, void *args, double x, tl_error *err)
{
    if (!isfinite(x) || !(x >= d->lo && x <= d->hi))
        return needs(d, err);
    *(double *)field(d, args) = x;
    return 0;
}

int tl_opts_set_whole(const tl_optdef *d, void *args, long long x, tl_error *err)
{
    if (!((double)x >= d->lo && (double)x <= d->hi))
        return needs(d, err);
    if (d->kind == TL_OPT_SIZE)
        *(size_t *)field(d, args) = (size_t)x;
    else
        *(long *)field(d, args) = (long)x;
    return 0;
}

void tl_opts_list_begin(const tl_optdef *d, void *args)
{
    ((tl_strlist *)field(d, args))->given = 1;
}

void tl_opts_list_push(const tl_optdef *d, void *args, const char *item)
{
    tl_strlist_push(field(d, args), item);
}

int tl_opts_set_text(const tl_optdef *d, void *args, const char *v, tl_error *err)
{
    char *end = NULL;
    switch (d->kind) {
    case TL_OPT_TEXT:
        if (!v || !*v)
            return needs(d, err);
        *(const char **)field(d, args) = v;
        return 0;
    case TL_OPT_NUMBER: {
        double x = v ? strtod(v, &end) : NAN;
        if (!v || end == v || *end)
            return needs(d, err);
        return tl_opts_set_number(d, args, x, err);
    }
    case TL_OPT_LONG:
    case TL_OPT_SIZE: {
        errno = 0;
        long long x = v ? strtoll(v, &end, 10) : 0;
        if (!v || end == v || *end || errno == ERANGE)
            return needs(d, err);
        return tl_opts_set_whole(d, args, x, err);
    }
    case TL_OPT_LIST:
        if (!v)
            return needs(d, err);
        tl_opts_list_begin(d, args);
        tl_opts_list_push(d, args, v);
        return 0;
    default:
        return tl_opts_set_flag(d, args, 1);
    }
}

/* ---- argv ------------------------------------------------------------------------- */

static int takes_value(const tl_optdef *d)
{
    switch (d->kind) {
    case TL_OPT_TEXT:
    case TL_OPT_NUMBER:
    case TL_OPT_LONG:
    case TL_OPT_SIZE:
    case TL_OPT_LIST:
        return 1;
    case TL_OPT_IGNORED:
        return d->metavar != NULL;
    default:
        return 0;
    }
}

/* Does argv[i] start another option?  ("-" alone and negative numbers do not.) */
static int is_option(const char *a)
{
    return a[0] == '-' && a[1] != '\0' && !(a[1] >= '0' && a[1] <= '9');
}

/* Every command-line spelling of the table as base/opts.h's rows, id = the row's index. */
static tl_opt *spellings(const tl_tool *t, size_t *n)
{
    size_t k = 0;
    for (size_t i = 0; i < t->nopts; i++)
        for (int s = 0; s < TL_OPT_MAX_SPELLINGS && t->opts[i].cli[s]; s++)
            k++;
    tl_opt *v = tl_xcalloc(k ? k : 1, sizeof *v);
    k = 0;
    for (size_t i = 0; i < t->nopts; i++)
        for (int s = 0; s < TL_OPT_MAX_SPELLINGS && t->opts[i].cli[s]; s++)
            v[k++] = (tl_opt){t->opts[i].cli[s], takes_value(&t->opts[i]), (int)i};
    *n = k;
    return v;
}

/* A single-dash spelling glued to its value ("-oFILE"): the row, with *value set. */
static const tl_optdef *short_glued(const tl_tool *t, const char *a, const char **value)
{
    for (size_t i = 0; i < t->nopts; i++)
        for (int s = 0; s < TL_OPT_MAX_SPELLINGS && t->opts[i].cli[s]; s++) {
            const char *sp = t->opts[i].cli[s];
            if (sp[1] != '-' && strlen(sp) == 2 && !strncmp(a, sp, 2) && takes_value(&t->opts[i])) {
                *value = a + 2;
                return &t->opts[i];
            }
        }
    return NULL;
}

/* One option at argv[*i] applied: 0 or TL_RUN_USAGE; *stop when parsing must end. */
static int apply_arg(const tl_tool *t, const tl_opt *sp, size_t nsp, int argc, char **argv, int *i, void *args,
                     int *stop, tl_error *err)
{
    const char *a = argv[*i], *value = NULL;
    const tl_optdef *d = NULL;
    if (a[1] != '-' && a[2] != '\0')
        d = short_glued(t, a, &value);
    if (!d) {
        char name[64];
        const char *eq = a[1] == '-' ? strchr(a, '=') : NULL;
        size_t len = eq ? (size_t)(eq - a) : strlen(a);
        if (len >= sizeof name) {
            tl_error_set(err, "unknown option '%.*s'", (int)len, a);
            return TL_RUN_USAGE;
        }
        memcpy(name, a, len);
        name[len] = 0;
        tl_buf why = {0};
        const tl_opt *o = tl_opt_find(sp, nsp, name, &why);
        if (!o) {
            tl_error_set(err, "%s", tl_buf_cstr(&why));
            tl_buf_free(&why);
            return TL_RUN_USAGE;
        }
        tl_buf_free(&why);
        d = &t->opts[o->id];
        if (eq && !takes_value(d)) {
            tl_error_set(err, "%s takes no value", tl_opts_label(d));
            return TL_RUN_USAGE;
        }
        value = eq ? eq + 1 : NULL;
    }
    if (d->kind == TL_OPT_HELP || d->kind == TL_OPT_VERSION) {
        *stop = 1;
        return tl_opts_set_flag(d, args, 1);
    }
    if (d->kind == TL_OPT_IGNORED) {
        if (d->metavar && !value && (*i + 1 >= argc || !*(value = argv[++*i])))
            return needs(d, err);
        tl_strlist_push(field(d, args), tl_opts_label(d));
        return 0;
    }
    if (d->kind == TL_OPT_LIST) {
        /* nargs='+': the value after '=', then every argument up to the next option */
        tl_opts_list_begin(d, args);
        if (value)
            tl_opts_list_push(d, args, value);
        while (*i + 1 < argc && !is_option(argv[*i + 1]))
            tl_opts_list_push(d, args, argv[++*i]);
        return ((tl_strlist *)field(d, args))->n ? 0 : needs(d, err);
    }
    if (takes_value(d) && !value) {
        if (*i + 1 >= argc)
            return needs(d, err);
        value = argv[++*i];
    }
    return tl_opts_set_text(d, args, value, err);
}

int tl_opts_parse_argv(const tl_tool *t, int argc, char **argv, void *args, tl_error *err)
{
    size_t nsp;
    tl_opt *sp = spellings(t, &nsp);
    tl_strlist *pos = (tl_strlist *)((char *)args + t->positional_off);
    int only_positional = 0, stop = 0, rc = 0;
    for (int i = 1; i < argc && !stop && rc == 0; i++) {
        const char *a = argv[i];
        if (only_positional || !is_option(a))
            tl_strlist_push(pos, a);
        else if (!strcmp(a, "--"))
            only_positional = 1;
        else
            rc = apply_arg(t, sp, nsp, argc, argv, &i, args, &stop, err);
    }
    free(sp);
    return rc;
}

const tl_optdef *tl_opts_find_key(const tl_tool *t, const char *key)
{
    for (size_t i = 0; i < t->nopts; i++)
        if (t->opts[i].key && (t->opts[i].where & TL_OPT_PY) && !strcmp(t->opts[i].key, key))
            return &t->opts[i];
    return NULL;
}

/* Whether row d's field holds a value in `args` that it does not in `defaults`. */
static int row_given(const tl_optdef *d, const void *args, const void *defaults)
{
    const void *a = (const char *)args + d->off, *z = (const char *)defaults + d->off;
    switch (d->kind) {
    case TL_OPT_FLAG: return *(const int *)a != *(const int *)z;
    case TL_OPT_TEXT: return *(const char *const *)a != *(const char *const *)z;
    case TL_OPT_NUMBER: return memcmp(a, z, sizeof(double)) != 0; /* NaN and -0 as given */
    case TL_OPT_LONG: return *(const long *)a != *(const long *)z;
    case TL_OPT_SIZE: return *(const size_t *)a != *(const size_t *)z;
    case TL_OPT_LIST: return ((const tl_strlist *)a)->given;
    case TL_OPT_IGNORED: {
        const tl_strlist *l = a;
        for (size_t i = 0; i < l->n; i++)
            if (!strcmp(l->v[i], tl_opts_label(d)))
                return 1;
        return 0;
    }
    default: return 0;
    }
}

const tl_optdef *tl_opts_given(const tl_tool *t, const void *args, const void *defaults, unsigned flag)
{
    for (size_t i = 0; i < t->nopts; i++)
        if ((t->opts[i].where & flag) && row_given(&t->opts[i], args, defaults))
            return &t->opts[i];
    return NULL;
}

void tl_opts_free(const tl_tool *t, void *args)
{
    for (size_t i = 0; i < t->nopts; i++)
        if (t->opts[i].kind == TL_OPT_LIST || t->opts[i].kind == TL_OPT_IGNORED)
            tl_strlist_free(field(&t->opts[i], args));
    tl_strlist_free((tl_strlist *)((char *)args + t->positional_off));
}

/* ---- --help ----------------------------------------------------------------------- */

enum { HELP_WIDTH = 90, HELP_COL = 28 };

static int listed(const tl_optdef *d)
{
    return (d->where & TL_OPT_CLI) && !(d->where & TL_OPT_HIDDEN);
}

/* `text` wrapped into lines of HELP_WIDTH, each after `indent` spaces; the first line's
 * indent is already written (its length: `col`). */
static void wrap(tl_buf *out, const char *text, size_t indent, size_t col)
{
    const char *p = text;
    while (*p) {
        while (*p == ' ')
            p++;
        size_t w = strcspn(p, " ");
        if (col > indent && col + 1 + w > HELP_WIDTH) {
            tl_buf_printf(out, "\n%*s", (int)indent, "");
            col = indent;
        } else if (col > indent) {
            tl_buf_printf(out, " ");
            col++;
        }
        tl_buf_printf(out, "%.*s", (int)w, p);
        col += w;
        p += w;
    }
    tl_buf_printf(out, "\n");
}

/* "-o, --output FILE" */
static void spelled(const tl_optdef *d, tl_buf *out)
{
    for (int s = 0; s < TL_OPT_MAX_SPELLINGS && d->cli[s]; s++)
        tl_buf_printf(out, "%s%s", s ? ", " : "", d->cli[s]);
    if (d->metavar)
        tl_buf_printf(out, " %s%s", d->metavar, d->kind == TL_OPT_LIST ? " ..." : "");
}

static void synopsis(const tl_tool *t, tl_buf *out)
{
    size_t indent = strlen("usage: ") + strlen(t->prog) + 1;
    tl_buf_printf(out, "usage: %s %s", t->prog, t->positional);
    size_t col = indent + strlen(t->positional);
    for (size_t i = 0; i < t->nopts; i++) {
        const tl_optdef *d = &t->opts[i];
        if (!listed(d) || d->kind == TL_OPT_HEADING || d->kind == TL_OPT_IGNORED || d->kind == TL_OPT_HELP ||
            d->kind == TL_OPT_VERSION)
            continue;
        tl_buf one = {0};
        tl_buf_printf(&one, "[%s", d->cli[0]);
        if (d->metavar)
            tl_buf_printf(&one, " %s%s", d->metavar, d->kind == TL_OPT_LIST ? " ..." : "");
        tl_buf_printf(&one, "]");
        if (col + 1 + one.len > HELP_WIDTH) {
            tl_buf_printf(out, "\n%*s", (int)indent, "");
            col = indent;
        } else {
            tl_buf_printf(out, " ");
            col++;
        }
        tl_buf_printf(out, "%s", tl_buf_cstr(&one));
        col += one.len;
        tl_buf_free(&one);
    }
    tl_buf_printf(out, "\n");
}

/* Which of the tool's HELP and VERSION rows argv set: TL_OPT_HELP, TL_OPT_VERSION, or
 * TL_OPT_FLAG for neither. */
static tl_opt_kind shown(const tl_tool *t, const void *args)
{
    for (size_t i = 0; i < t->nopts; i++) {
        const tl_optdef *d = &t->opts[i];
        if ((d->kind == TL_OPT_HELP || d->kind == TL_OPT_VERSION) && *(const int *)((const char *)args + d->off))
            return d->kind;
    }
    return TL_OPT_FLAG;
}

int tl_opts_cli(const tl_tool *t, const char *name, const char *version, int argc, char **argv, void *args,
                tl_buf *out, tl_error *err)
{
    int rc = tl_opts_parse_argv(t, argc, argv, args, err);
    tl_opt_kind asked = rc == 0 ? shown(t, args) : TL_OPT_FLAG;
    if (asked == TL_OPT_HELP) {
        tl_opts_help(t, out);
        return TL_OPTS_SHOWN;
    }
    if (asked == TL_OPT_VERSION) {
        tl_buf_printf(out, "%s %s\n", name ? name : t->prog, version);
        return TL_OPTS_SHOWN;
    }
    /* before the check: its warnings are quiet too */
    tl_quiet = *(const int *)((const char *)args + t->quiet_off);
    if (rc == 0 && t->check)
        rc = t->check(args, err);
    return rc;
}

void tl_opts_error_line(const tl_tool *t, const char *name, int status, const tl_error *err, tl_buf *out)
{
    tl_buf_printf(out, "%s: %s", name ? name : t->prog, err->msg);
    if (status == TL_RUN_USAGE)
        tl_buf_printf(out, " (see '%s --help')", t->prog);
    tl_buf_printf(out, "\n");
}

int tl_opts_main(const tl_tool *t, const char *version, int argc, char **argv, void *args, int *done)
{
    tl_buf out = {0};
    tl_error err = {0};
    int rc = tl_opts_cli(t, NULL, version, argc, argv, args, &out, &err);
    if (rc > 0)
        tl_opts_error_line(t, NULL, rc, &err, &out);
    fputs(tl_buf_cstr(&out), rc > 0 ? stderr : stdout);
    tl_buf_free(&out);
    *done = rc == TL_OPTS_SHOWN;
    return rc == TL_OPTS_SHOWN ? 0 : rc;
}

void tl_opts_help(const tl_tool *t, tl_buf *out)
{
    synopsis(t, out);
    tl_buf_printf(out, "\n");
    wrap(out, t->intro, 0, 0);
    tl_buf_printf(out, "\noptions:\n");
    for (size_t i = 0; i < t->nopts; i++) {
        const tl_optdef *d = &t->opts[i];
        if (!listed(d))
            continue;
        if (d->kind == TL_OPT_HEADING) {
            tl_buf_printf(out, "\n");
            wrap(out, d->help, 0, 0);
            continue;
        }
        tl_buf left = {0};
        spelled(d, &left);
        tl_buf_printf(out, "  %s", tl_buf_cstr(&left));
        size_t col = 2 + left.len;
        tl_buf_free(&left);
        if (col + 2 > HELP_COL) {
            tl_buf_printf(out, "\n%*s", HELP_COL, "");
        } else {
            tl_buf_printf(out, "%*s", (int)(HELP_COL - col), "");
        }
        wrap(out, d->help ? d->help : "", HELP_COL, HELP_COL);
    }
    tl_buf_printf(out, "\n%s", t->outro);
}
