/*
 * distreport.c - a distributed run given as per-rank TraceLens reports (distreport.h): the
 * run's entries classified by name and content, each rank's report opened in turn and
 * reduced to the two sheets a comparison of runs reads, the collective report's sheets.
 */
#include "run/distreport.h"

#include "read/open.h"

#include <glob.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* What an entry of a run is, by content. */
enum { E_NONE, E_RANK_CSV, E_ZIP, E_COLL_CSV };

/* The sheets of the collective report a comparison of runs reads (the first two compared,
 * the third read for the straggler's lateness). */
static const char *const kCollSheets[] = {"nccl_summary_implicit_sync", "straggler_summary", "nccl_implicit_sync"};
enum { NCOLL = sizeof kCollSheets / sizeof *kCollSheets };

static int has_file(const char *dir, const char *name)
{
    char *p = tl_xmalloc(strlen(dir) + strlen(name) + 2);
    sprintf(p, "%s/%s", dir, name);
    int ok = access(p, F_OK) == 0;
    free(p);
    return ok;
}

static int classify(const char *path)
{
    if (tl_is_dir(path)) {
        if (has_file(path, "gpu_timeline.csv"))
            return E_RANK_CSV;
        char csv[64];
        for (int i = 0; i < 2; i++) {
            snprintf(csv, sizeof csv, "%s.csv", kCollSheets[i]);
            if (has_file(path, csv))
                return E_COLL_CSV;
        }
        return E_NONE;
    }
    unsigned char magic[4] = {0};
    FILE *f = fopen(path, "rb");
    size_t n = f ? fread(magic, 1, sizeof magic, f) : 0;
    if (f)
        fclose(f);
    return n == 4 && memcmp(magic, "PK\3\4", 4) == 0 ? E_ZIP : E_NONE;
}

/* The entries a run names (a directory's, or a pattern's matches), sorted; 0 when none. */
static int entries(const char *path, glob_t *g)
{
    char *pattern = strchr(path, '*') ? tl_xstrdup(path) : tl_xmalloc(strlen(path) + 3);
    if (!strchr(path, '*'))
        sprintf(pattern, "%s/*", path);
    int rc = glob(pattern, 0, NULL, g);
    free(pattern);
    return rc == 0 && g->gl_pathc > 0;
}

/* The rank an entry's base name names under the default rank regex, or -1. */
static long rank_of(const char *entry, const regex_t *re, size_t group)
{
    const char *slash = strrchr(entry, '/');
    return tl_ranks_rank_of(slash ? slash + 1 : entry, re, group);
}

int tl_dist_reports_claims(const char *path)
{
    if (!strchr(path, '*') && !tl_is_dir(path))
        return 0;
    regex_t re;
    size_t group;
    tl_error err = {0};
    glob_t g;
    int claims = 0;
    if (tl_ranks_regex(TL_RANKS_DEFAULT_REGEX, &re, &group, &err) != 0)
        return 0;
    if (entries(path, &g)) {
        for (size_t i = 0; i < g.gl_pathc && !claims; i++) {
            int k = rank_of(g.gl_pathv[i], &re, group) >= 0 ? classify(g.gl_pathv[i]) : E_NONE;
            claims = k == E_RANK_CSV || k == E_ZIP;
        }
        globfree(&g);
    }
    regfree(&re);
    return claims;
}

/* A gpu_timeline the comparison can read: columns type and time ms, rows total_time and
 * busy_time with a number. */
static int timeline_ok(const tl_table *t)
{
    long tc = tl_table_find(t, "type"), mc = tl_table_find(t, "time ms");
    int found = 0; /* bit 0: total_time, bit 1: busy_time */
    for (size_t r = 0; tc >= 0 && mc >= 0 && r < t->nrows; r++) {
        const tl_cell *k = &t->cols[tc].cells[r];
        if (k->kind != TL_STR || isnan(tl_column_number_at(&t->cols[mc], r)))
            continue;
        found |= strcmp(k->v.s, "total_time") == 0 ? 1 : strcmp(k->v.s, "busy_time") == 0 ? 2 : 0;
    }
    return found == 3;
}

/* Rank `rank`'s report at `file`: its gpu_timeline (required) and ops_summary into f. */
static int read_rank(const char *run, long rank, const char *file, tl_rank_facts *f, tl_error *err)
{
    memset(f, 0, sizeof *f);
    tl_arena_init(&f->arena);
    f->ndevices = f->dist_rank = f->dist_world = -1;
    tl_report r;
    tl_error e = {0};
    int rc = -1;
    if (tl_report_open(&r, file, &e) != 0) {
        tl_error_set(err, "%s: rank %ld: %s", run, rank, e.msg);
    } else if (!tl_report_has_sheet(&r, "gpu_timeline")) {
        tl_error_set(err, "%s: rank %ld (%s): no sheet 'gpu_timeline': not a TraceLens performance report", run, rank,
                     file);
    } else if (!(f->gpu_timeline = tl_report_read_sheet(&r, "gpu_timeline", &f->arena, &e)) ||
               (tl_report_has_sheet(&r, "ops_summary") &&
                !(f->ops_summary = tl_report_read_sheet(&r, "ops_summary", &f->arena, &e)))) {
        tl_error_set(err, "%s: rank %ld: %s", run, rank, e.msg);
    } else if (!timeline_ok(f->gpu_timeline)) {
        tl_error_set(err, "%s: rank %ld (%s): gpu_timeline has no total_time and busy_time rows of 'type' and "
                          "'time ms'", run, rank, file);
    } else {
        rc = 0;
    }
    tl_report_close(&r);
    return rc;
}

/* The collective report at `file` (when it is one): its sheets into coll.  Returns 1 when
 * read, 0 when the file is no collective report, -1 on an error. */
static int read_coll(const char *run, const char *file, tl_results *coll, tl_arena *a, tl_error *err)
{
    tl_report r;
    tl_error e = {0};
    if (tl_report_open(&r, file, &e) != 0 ||
        !(tl_report_has_sheet(&r, kCollSheets[0]) || tl_report_has_sheet(&r, kCollSheets[1]))) {
        tl_report_close(&r);
        return 0;
    }
    int rc = 1;
    for (int i = 0; i < NCOLL && rc == 1; i++) {
        if (!tl_report_has_sheet(&r, kCollSheets[i]))
            continue;
        tl_table *t = tl_report_read_sheet(&r, kCollSheets[i], a, &e);
        if (!t) {
            tl_error_set(err, "%s: collective report: %s", run, e.msg);
            rc = -1;
        } else {
            tl_results_add(coll, kCollSheets[i], t);
        }
    }
    tl_report_close(&r);
    return rc;
}

/* Every rank named exactly once, from 0 up: the ranks' entries into s->paths. */
static int place_ranks(const char *run, const glob_t *g, const long *rank, tl_rank_set *s, tl_error *err)
{
    long max = -1;
    for (size_t i = 0; i < g->gl_pathc; i++)
        max = rank[i] > max ? rank[i] : max;
    if (max < 0) {
        tl_error_set(err, "%s: no report named like a rank (rank<N>...)", run);
        return -1;
    }
    size_t named = 0;
    for (size_t i = 0; i < g->gl_pathc; i++)
        named += rank[i] >= 0;
    if (max >= (long)named) { /* then some rank up to `named` is missing: the lowest said */
        unsigned char *seen = tl_xcalloc(named + 1, 1);
        for (size_t i = 0; i < g->gl_pathc; i++)
            if (rank[i] >= 0 && rank[i] <= (long)named)
                seen[rank[i]] = 1;
        size_t r = 0;
        while (seen[r])
            r++;
        free(seen);
        tl_error_set(err, "%s: no report for rank %zu (ranks 0 to %ld are named)", run, r, max);
        return -1;
    }
    s->n = (size_t)max + 1;
    s->paths = tl_xcalloc(s->n, sizeof *s->paths);
    for (size_t i = 0; i < g->gl_pathc; i++) {
        if (rank[i] < 0)
            continue;
        if (s->paths[rank[i]]) {
            tl_error_set(err, "%s: rank %ld has two reports: %s and %s", run, rank[i], s->paths[rank[i]], g->gl_pathv[i]);
            return -1;
        }
        s->paths[rank[i]] = tl_xstrdup(g->gl_pathv[i]);
    }
    for (size_t r = 0; r < s->n; r++) {
        if (!s->paths[r]) {
            tl_error_set(err, "%s: no report for rank %zu (ranks 0 to %ld are named)", run, r, max);
            return -1;
        }
    }
    return 0;
}

int tl_dist_reports_read(const char *path, tl_rank_set *s, tl_results *coll, char **coll_path, tl_arena *a,
                         tl_error *err)
{
    memset(s, 0, sizeof *s);
    *coll_path = NULL;
    regex_t re;
    size_t group;
    if (tl_ranks_regex(TL_RANKS_DEFAULT_REGEX, &re, &group, err) != 0)
        return -1;
    glob_t g;
    if (!entries(path, &g)) {
        regfree(&re);
        tl_error_set(err, "%s: no report in this run", path);
        return -1;
    }
    long *rank = tl_xcalloc(g.gl_pathc, sizeof *rank);
    int *kind = tl_xcalloc(g.gl_pathc, sizeof *kind);
    for (size_t i = 0; i < g.gl_pathc; i++) {
        kind[i] = classify(g.gl_pathv[i]);
        long r = rank_of(g.gl_pathv[i], &re, group);
        rank[i] = r >= 0 && (kind[i] == E_RANK_CSV || kind[i] == E_ZIP) ? r : -1;
    }
    regfree(&re);
    int rc = place_ranks(path, &g, rank, s, err);
    if (rc == 0) {
        s->facts = tl_xcalloc(s->n, sizeof *s->facts);
        for (size_t r = 0; r < s->n && rc == 0; r++)
            rc = read_rank(path, (long)r, s->paths[r], &s->facts[r], err);
    }
    /* the collective report: the first entry naming no rank that is one */
    for (size_t i = 0; i < g.gl_pathc && rc == 0 && !*coll_path; i++) {
        if (rank[i] >= 0 || kind[i] == E_NONE || kind[i] == E_RANK_CSV)
            continue;
        int got = read_coll(path, g.gl_pathv[i], coll, a, err);
        if (got < 0)
            rc = -1;
        else if (got)
            *coll_path = tl_xstrdup(g.gl_pathv[i]);
    }
    free(rank);
    free(kind);
    globfree(&g);
    return rc;
}
