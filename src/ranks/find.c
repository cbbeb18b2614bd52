/*
 * find.c - the rank files of a run (MULTIRANK.md §1): by directory, by pattern, or by a
 * glob whose paths name their ranks through a regex in Python's syntax (translated to a
 * POSIX extended regex: the default `rank[\[\-_/]?(?P<rank>\d+)` and its like).
 */
#include "ranks/ranks.h"

#include <dirent.h>
#include <fnmatch.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* A formatted malloc'd string. */
static char *xfmt(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *xfmt(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *s = tl_xmalloc((size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return s;
}

/* ---- the rank regex ------------------------------------------------------------------ */

/* The members of a class escape (\d \w \s) as bracket-expression text, or NULL. */
static const char *class_members(char c)
{
    switch (c) {
    case 'd': return "0-9";
    case 'w': return "[:alnum:]_";
    case 's': return "[:space:]";
    default: return NULL;
    }
}

/* A Python bracket set at p (after '['): appended to b as a POSIX one; p past its ']'. */
static int translate_set(const char **pp, tl_buf *b, tl_error *err)
{
    const char *p = *pp;
    tl_buf body = {0};
    int neg = 0, close = 0, dash = 0, first = 1;
    if (*p == '^') {
        neg = 1;
        p++;
    }
    for (; *p && (*p != ']' || first); p++, first = 0) {
        char c = *p;
        if (c == '\\' && p[1]) {
            const char *cls = class_members(p[1]);
            if (cls) {
                tl_buf_adds(&body, cls);
                p++;
                continue;
            }
            if ((p[1] >= 'A' && p[1] <= 'Z') || (p[1] >= 'a' && p[1] <= 'z')) {
                tl_buf_free(&body);
                tl_error_set(err, "the rank regex's \\%c in a [] set is not supported", p[1]);
                return -1;
            }
            c = *++p; /* an escaped literal: inside a POSIX set, every byte but ] - ^ is one */
            if (c == ']') {
                close = 1;
                continue;
            }
            if (c == '-') {
                dash = 1;
                continue;
            }
            tl_buf_add(&body, &c, 1);
            continue;
        }
        if (c == ']') {
            close = 1;
            continue;
        }
        tl_buf_add(&body, &c, 1);
    }
    if (*p != ']') {
        tl_buf_free(&body);
        tl_error_set(err, "the rank regex has a [ without its ]");
        return -1;
    }
    tl_buf_adds(b, neg ? "[^" : "[");
    if (close)
        tl_buf_adds(b, "]");
    if (body.len)
        tl_buf_add(b, body.data, body.len);
    if (dash)
        tl_buf_adds(b, "-");
    tl_buf_adds(b, "]");
    tl_buf_free(&body);
    *pp = p + 1;
    return 0;
}

int tl_ranks_regex(const char *py, regex_t *re, size_t *group, tl_error *err)
{
    tl_buf b = {0};
    size_t ngroups = 0, named = 0;
    for (const char *p = py; *p;) {
        if (*p == '\\' && p[1]) {
            const char *cls = class_members(p[1]);
            if (cls) {
                tl_buf_adds(&b, "[");
                tl_buf_adds(&b, cls);
                tl_buf_adds(&b, "]");
            } else if (p[1] == 'D') {
                tl_buf_adds(&b, "[^0-9]");
            } else if ((p[1] >= 'a' && p[1] <= 'z') || (p[1] >= 'A' && p[1] <= 'Z') || (p[1] >= '0' && p[1] <= '9')) {
                tl_error_set(err, "the rank regex's \\%c is not supported (POSIX extended regexes with \\d \\w \\s)", p[1]);
                goto fail;
            } else {
                tl_buf_add(&b, p, 2);
            }
            p += 2;
        } else if (*p == '[') {
            p++;
            if (translate_set(&p, &b, err) < 0)
                goto fail;
        } else if (*p == '(') {
            ngroups++;
            if (p[1] == '?') {
                if (p[2] == 'P' && p[3] == '<') {
                    const char *e = strchr(p + 4, '>');
                    if (!e) {
                        tl_error_set(err, "the rank regex has a (?P< group without its >");
                        goto fail;
                    }
                    if ((size_t)(e - (p + 4)) == 4 && strncmp(p + 4, "rank", 4) == 0)
                        named = ngroups;
                    p = e + 1;
                } else if (p[2] == ':') {
                    p += 3;
                } else {
                    tl_error_set(err, "the rank regex's (?%c is not supported (groups, (?P<name>...) and (?:...) are)", p[2]);
                    goto fail;
                }
            } else {
                p++;
            }
            tl_buf_adds(&b, "(");
        } else if ((*p == '*' || *p == '+' || *p == '?' || *p == '}') && p[1] == '?') {
            tl_error_set(err, "the rank regex's lazy %c? is not supported", *p);
            goto fail;
        } else {
            tl_buf_add(&b, p, 1);
            p++;
        }
    }
    int rc = regcomp(re, tl_buf_cstr(&b), REG_EXTENDED);
    if (rc != 0) {
        char why[160];
        regerror(rc, re, why, sizeof why);
        tl_error_set(err, "the rank regex '%s' is not valid: %s", py, why);
        goto fail;
    }
    tl_buf_free(&b);
    *group = named ? named : 1;
    if (*group > re->re_nsub) {
        regfree(re);
        tl_error_set(err, "the rank regex '%s' has no group to take the rank from", py);
        return -1;
    }
    return 0;
fail:
    tl_buf_free(&b);
    return -1;
}

static long rank_in(const char *s, const regex_t *re, size_t group)
{
    regmatch_t m[16];
    if (group >= 16 || regexec(re, s, group + 1, m, 0) != 0 || m[group].rm_so < 0)
        return -1;
    long r = 0;
    if (m[group].rm_eo == m[group].rm_so)
        return -1;
    for (regoff_t i = m[group].rm_so; i < m[group].rm_eo; i++) {
        if (s[i] < '0' || s[i] > '9' || r > 100000000L)
            return -1;
        r = r * 10 + (s[i] - '0');
    }
    return r;
}

long tl_ranks_rank_of(const char *path, const regex_t *re, size_t group)
{
    const char *base = strrchr(path, '/');
    long r = rank_in(base ? base + 1 : path, re, group);
    return r >= 0 ? r : rank_in(path, re, group);
}

/* ---- glob (Python's glob.glob(recursive=True)) -------------------------------------- */

typedef struct paths {
    char **v;
    size_t n, cap;
} paths;

static void paths_add(paths *p, char *s)
{
    TL_GROW(p->v, p->cap, p->n + 1);
    p->v[p->n++] = s;
}

static void paths_free(paths *p)
{
    for (size_t i = 0; i < p->n; i++)
        free(p->v[i]);
    free(p->v);
}

static char *join(const char *base, const char *name)
{
    size_t a = strlen(base), n = strlen(name);
    char *s = tl_xmalloc(a + n + 2);
    memcpy(s, base, a);
    size_t k = a;
    if (a && base[a - 1] != '/')
        s[k++] = '/';
    memcpy(s + k, name, n + 1);
    return s;
}

static int has_magic(const char *s) { return strpbrk(s, "*?[") != NULL; }

static int is_dir(const char *p)
{
    struct stat st;
    return stat(*p ? p : ".", &st) == 0 && S_ISDIR(st.st_mode);
}

/* The matches of comps[k..] under `base` ("" for the current directory). */
static void glob_at(const char *base, char **comps, size_t ncomp, size_t k, paths *out, int depth);

/* `**`: base itself and every directory below it (not through symbolic links, so that a
 * loop cannot make it endless), each followed by the rest of the pattern. */
static void glob_recursive(const char *base, char **comps, size_t ncomp, size_t k, paths *out, int depth)
{
    glob_at(base, comps, ncomp, k + 1, out, depth + 1);
    DIR *d = opendir(*base ? base : ".");
    if (!d || depth > 64) {
        if (d)
            closedir(d);
        return;
    }
    paths sub = {0};
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.')
            continue;
        char *p = join(base, e->d_name);
        struct stat st;
        if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode))
            paths_add(&sub, p);
        else
            free(p);
    }
    closedir(d);
    for (size_t i = 0; i < sub.n; i++)
        glob_recursive(sub.v[i], comps, ncomp, k, out, depth + 1);
    paths_free(&sub);
}

static void glob_at(const char *base, char **comps, size_t ncomp, size_t k, paths *out, int depth)
{
    if (k == ncomp) {
        if (*base)
            paths_add(out, tl_xstrdup(base));
        return;
    }
    const char *c = comps[k];
    if (strcmp(c, "**") == 0) {
        glob_recursive(base, comps, ncomp, k, out, depth);
        return;
    }
    if (!has_magic(c)) {
        char *p = join(base, c);
        struct stat st;
        if ((k + 1 == ncomp ? lstat(p, &st) == 0 : is_dir(p)))
            glob_at(p, comps, ncomp, k + 1, out, depth);
        free(p);
        return;
    }
    DIR *d = opendir(*base ? base : ".");
    if (!d)
        return;
    paths hit = {0};
    for (struct dirent *e; (e = readdir(d));) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        if (fnmatch(c, e->d_name, FNM_PERIOD) == 0)
            paths_add(&hit, join(base, e->d_name));
    }
    closedir(d);
    for (size_t i = 0; i < hit.n; i++)
        if (k + 1 == ncomp || is_dir(hit.v[i]))
            glob_at(hit.v[i], comps, ncomp, k + 1, out, depth);
    paths_free(&hit);
}

static int str_cmp(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Every path `pattern` matches, sorted as strings, each once. */
static void glob_paths(const char *pattern, paths *out)
{
    char *pat = tl_xstrdup(pattern);
    char **comps = NULL;
    size_t ncomp = 0, cap = 0;
    for (char *s = pat, *tok; (tok = strsep(&s, "/"));) {
        if (!*tok)
            continue;
        TL_GROW(comps, cap, ncomp + 1);
        comps[ncomp++] = tok;
    }
    glob_at(pattern[0] == '/' ? "/" : "", comps, ncomp, 0, out, 0);
    qsort(out->v, out->n, sizeof *out->v, str_cmp);
    size_t w = 0;
    for (size_t i = 0; i < out->n; i++) {
        if (w && strcmp(out->v[w - 1], out->v[i]) == 0)
            free(out->v[i]);
        else
            out->v[w++] = out->v[i];
    }
    out->n = w;
    free(comps);
    free(pat);
}

/* ---- the rank files ---------------------------------------------------------------- */

/* One line naming the ranks without a file (at most a few listed by path). */
static int missing_error(const tl_rank_set *s, const char *const *expect, tl_error *err)
{
    tl_buf b = {0};
    size_t nmiss = 0, shown = 0;
    for (size_t i = 0; i < s->n; i++)
        nmiss += s->paths[i] == NULL;
    if (nmiss == 0)
        return 0;
    tl_buf_printf(&b, nmiss == 1 ? "rank " : "ranks ");
    for (size_t i = 0; i < s->n; i++) {
        if (s->paths[i])
            continue;
        if (shown == 8) {
            tl_buf_printf(&b, ", ... (%zu in all)", nmiss);
            break;
        }
        tl_buf_printf(&b, "%s%zu", shown++ ? ", " : "", i);
    }
    tl_buf_printf(&b, " of %zu: no file", s->n);
    if (expect) {
        shown = 0;
        for (size_t i = 0; i < s->n && shown < 3; i++)
            if (!s->paths[i])
                tl_buf_printf(&b, "%s%s", shown++ ? ", " : " ", expect[i]);
        if (nmiss > 3)
            tl_buf_printf(&b, ", ...");
    }
    tl_error_set(err, "%s", tl_buf_cstr(&b));
    tl_buf_free(&b);
    return -1;
}

static int exists(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && !S_ISDIR(st.st_mode);
}

/* dir and pattern modes: rank i's file is named by i. */
static int find_named(const tl_ranks_opts *o, tl_rank_set *s, tl_error *err)
{
    char **expect = tl_xcalloc(s->n, sizeof *expect);
    const char *star = o->mode == TL_RANKS_PATTERN ? strchr(o->spec, '*') : NULL;
    for (size_t i = 0; i < s->n; i++) {
        if (star)
            expect[i] = xfmt("%.*s%zu%s", (int)(star - o->spec), o->spec, i, star + 1);
        else
            expect[i] = xfmt("%s%srank%zu_trace.json", o->spec,
                                     o->spec[strlen(o->spec) - 1] == '/' ? "" : "/", i);
        if (exists(expect[i]))
            s->paths[i] = tl_xstrdup(expect[i]);
    }
    int rc = missing_error(s, (const char *const *)expect, err);
    for (size_t i = 0; i < s->n; i++)
        free(expect[i]);
    free(expect);
    return rc;
}

/* glob and scan modes: ranks from the paths' names. */
static int find_globbed(const tl_ranks_opts *o, tl_rank_set *s, tl_error *err)
{
    regex_t re;
    size_t group;
    if (tl_ranks_regex(o->rank_regex ? o->rank_regex : TL_RANKS_DEFAULT_REGEX, &re, &group, err) < 0)
        return -1;
    paths all = {0};
    char *pattern = o->mode == TL_RANKS_SCAN ? xfmt("%s/*", o->spec) : tl_xstrdup(o->spec);
    glob_paths(pattern, &all);
    int rc = -1;
    long *rank = tl_xmalloc((all.n ? all.n : 1) * sizeof *rank);
    size_t named = 0;
    long maxr = -1;
    for (size_t i = 0; i < all.n; i++) {
        rank[i] = exists(all.v[i]) ? tl_ranks_rank_of(all.v[i], &re, group) : -1;
        if (rank[i] >= 0) {
            named++;
            maxr = rank[i] > maxr ? rank[i] : maxr;
        }
    }
    if (all.n == 0) {
        tl_error_set(err, "no file matches '%s'", o->spec);
        goto done;
    }
    if (named == 0) {
        tl_error_set(err, "no path of the %zu that '%s' matches names a rank by the regex '%s'", all.n, pattern,
                     o->rank_regex ? o->rank_regex : TL_RANKS_DEFAULT_REGEX);
        goto done;
    }
    if (o->mode == TL_RANKS_SCAN) {
        /* the world size: the distinct ranks found */
        char *seen = tl_xcalloc((size_t)maxr + 1, 1);
        size_t distinct = 0;
        for (size_t i = 0; i < all.n; i++)
            if (rank[i] >= 0 && !seen[rank[i]]++)
                distinct++;
        free(seen);
        s->n = distinct;
        s->paths = tl_xcalloc(s->n, sizeof *s->paths);
    }
    for (size_t i = 0; i < all.n; i++) {
        if (rank[i] < 0 || (size_t)rank[i] >= s->n)
            continue;
        if (s->paths[rank[i]]) {
            tl_warn("rank %ld: two files, %s and %s; the first (in sorted order) is read", rank[i], s->paths[rank[i]],
                    all.v[i]);
            continue;
        }
        s->paths[rank[i]] = tl_xstrdup(all.v[i]);
    }
    tl_error miss = {0};
    rc = missing_error(s, NULL, &miss);
    if (rc < 0)
        tl_error_set(err, "%s matching '%s'", miss.msg, o->spec);
done:
    regfree(&re);
    free(rank);
    free(pattern);
    paths_free(&all);
    return rc;
}

int tl_ranks_find(const tl_ranks_opts *o, tl_rank_set *s, tl_error *err)
{
    memset(s, 0, sizeof *s);
    if (o->mode == TL_RANKS_PATTERN) {
        const char *star = strchr(o->spec, '*');
        if (!star || strchr(star + 1, '*')) {
            tl_error_set(err, "--trace_pattern '%s' must hold exactly one '*' (where the rank goes)", o->spec);
            return -1;
        }
    }
    if (o->mode != TL_RANKS_SCAN) {
        if (o->world_size <= 0 || o->world_size > (1L << 24)) {
            tl_error_set(err, "--world_size must be a whole number from 1 to %ld", 1L << 24);
            return -1;
        }
        s->n = (size_t)o->world_size;
        s->paths = tl_xcalloc(s->n, sizeof *s->paths);
    }
    if (o->mode == TL_RANKS_DIR && !is_dir(o->spec)) {
        tl_error_set(err, "--trace_dir '%s' is not a directory", o->spec);
        return -1;
    }
    if (o->mode == TL_RANKS_SCAN && !is_dir(o->spec)) {
        tl_error_set(err, "--ranks '%s' is not a directory", o->spec);
        return -1;
    }
    return o->mode == TL_RANKS_DIR || o->mode == TL_RANKS_PATTERN ? find_named(o, s, err) : find_globbed(o, s, err);
}

/* The directory part of a path ("." for none). */
static char *dir_of(const char *p)
{
    const char *sl = strrchr(p, '/');
    if (!sl)
        return tl_xstrdup(".");
    if (sl == p)
        return tl_xstrdup("/");
    return xfmt("%.*s", (int)(sl - p), p);
}

char *tl_ranks_default_dir(const tl_ranks_opts *o, const tl_rank_set *s)
{
    if (o->mode == TL_RANKS_DIR || o->mode == TL_RANKS_SCAN || s->n == 0)
        return tl_xstrdup(o->spec);
    size_t upto = o->mode == TL_RANKS_PATTERN ? (s->n < 2 ? s->n : 2) : s->n;
    /* os.path.commonpath of the files: whole components in common */
    char *common = dir_of(s->paths[0]);
    for (size_t i = 1; i < upto; i++) {
        char *d = dir_of(s->paths[i]);
        size_t k = 0, last = 0;
        while (common[k] && common[k] == d[k]) {
            k++;
            if (common[k] == '/' || common[k] == 0)
                last = (d[k] == '/' || d[k] == 0) ? k : last;
        }
        common[last] = 0;
        free(d);
        if (!*common) {
            free(common);
            common = tl_xstrdup(".");
            break;
        }
    }
    return common;
}
