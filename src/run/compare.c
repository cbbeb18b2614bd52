/*
 * compare.c - one comparison run (see compare.h): the inputs' tags, the checks that need
 * no input read, the reports opened, the comparison streamed into the outputs, the
 * summary and the gate.
 */
#include "run/compare.h"

#include "base/progress.h"
#include "compare/groups.h"
#include "io/cleanup.h"
#include "io/output.h"
#include "perf/gpu_arch.h"
#include "perf/perf.h"
#include "read/open.h"
#include "run/memreport.h"
#include "run/page.h"
#include "run/report.h"
#include "run/steps.h"
#include "run/tracediff.h"
#include "summary/comparable.h"
#include "summary/efficiency.h"
#include "summary/lca.h"
#include "summary/page.h"
#include "summary/verdict.h"
#include "trace/trace_report.h"
#include "write/sink.h"
#include "write/xlsx_write.h"

#include <errno.h>
#include <stdarg.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Everything a comparison holds until it is freed: the reports (their arenas hold the
 * results' strings), the diff, the summary and what it points to. */
struct tl_compare_state {
    tl_compare_opts o;
    tl_report *reports;
    size_t nreports, opened;
    char **tags;       /* per input, until its report takes it */
    const char **tagv; /* the sides' tags */
    size_t nsides;
    tl_arena arena;
    tl_gpu_arch arch; /* the reports that read it hold a pointer: the state never moves */
    tl_gpu_arch arch_var; /* the variants' own (--gpu-arch BASE,VARIANT) */
    int have_arch, have_arch_var;
    tl_out *outputs;
    tl_results kept;  /* without outputs: every result */
    tl_output *texts[4]; /* --summary-md, --summary-json, --tracediff-dir, --html */
    tl_run_diff cdiff;
    tl_run_steps steps; /* two traces: their ProfilerStep#N steps */
    tl_run_page page;   /* what the page takes from runs' sheets as they pass */
    tl_comparability comp;
    tl_lca_summary lsum;
    tl_efficiency eff;
    tl_noise *noise;
    tl_eff_cache *eff_cache;
    tl_summary summary;
    int summarised;
    int both_traces, infer; /* two traces, aligned; inference mode */
    uint8_t *trace_input;   /* per input: 1 when it is a trace (input_is_trace) */
    int inputs_read;        /* read_inputs has run */
};

void tl_compare_opts_init(tl_compare_opts *o)
{
    memset(o, 0, sizeof *o);
    o->run = TL_GROUP_ALL;
    o->fail_pct = -1;
    o->min_ms = 1;
}

/* ---- default tags (SPEC §1, TRACES.md §0) ------------------------------------------- */

static int has_suffix(const char *s, size_t n, const char *suffix)
{
    size_t k = strlen(suffix);
    return n >= k && memcmp(s + n - k, suffix, k) == 0;
}

/* 1 when `path` names a trace by its file name: *.json or *.json.gz. */
static int is_trace_name(const char *path)
{
    size_t start, end;
    tl_path_base(path, &start, &end);
    return has_suffix(path + start, end - start, ".json") || has_suffix(path + start, end - start, ".json.gz");
}

/*
 * A report's default tag: a trace file's name without ".json.gz"/".json" and a trailing
 * ".pt.trace" (the profiler's own suffix, the same in every file); a directory's name whole
 * (a dot in "Qwen1.5-0.5B_csvs" is no extension); a workbook's name without its extension.
 */
static char *default_tag(const char *path)
{
    size_t start, end;
    tl_path_base(path, &start, &end);
    const char *name = path + start;
    size_t n = end - start;
    if (is_trace_name(path)) {
        n -= has_suffix(name, n, ".json.gz") ? 8 : 5;
        if (has_suffix(name, n, ".pt.trace"))
            n -= 9;
    } else if ((*path && path[strlen(path) - 1] == '/') || tl_is_dir(path)) {
        /* the whole name */
    } else {
        return tl_path_stem(path);
    }
    char *t = tl_xmalloc(n + 1);
    memcpy(t, name, n);
    t[n] = '\0';
    return t;
}

/* The components of a path ("runs//h100/./perf_csvs/" -> runs, h100, perf_csvs), as
 * [start, end) offsets in starts[]/ends[]; returns how many. */
static size_t path_parts(const char *p, size_t *starts, size_t *ends)
{
    size_t n = 0;
    for (size_t i = 0; p[i];) {
        while (p[i] == '/')
            i++;
        size_t b = i;
        while (p[i] && p[i] != '/')
            i++;
        if (i > b && !(i - b == 1 && p[b] == '.'))
            starts[n] = b, ends[n++] = i;
    }
    return n;
}

static int same_part(const char *a, size_t as, size_t ae, const char *b, size_t bs, size_t be)
{
    return ae - as == be - bs && memcmp(a + as, b + bs, ae - as) == 0;
}

/*
 * Default tags that collide (reports all called perf_csvs) are replaced by the part of
 * each path where the paths differ: the leading and trailing components common to every
 * report dropped, the rest joined with '_' (the last component given as its default tag).
 * A report whose path has nothing of its own keeps its tag.
 */
static void differing_tags(char **tags, const char *const *paths, size_t n)
{
    int collide = 0;
    for (size_t i = 0; i < n && !collide; i++)
        for (size_t j = 0; j < i && !collide; j++)
            collide = strcmp(tags[i], tags[j]) == 0;
    if (!collide)
        return;
    size_t **st = tl_xcalloc(n, sizeof *st), **en = tl_xcalloc(n, sizeof *en), *np = tl_xcalloc(n, sizeof *np);
    size_t shortest = SIZE_MAX;
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(paths[i]) / 2 + 1;
        st[i] = tl_xmalloc(len * sizeof **st);
        en[i] = tl_xmalloc(len * sizeof **en);
        np[i] = path_parts(paths[i], st[i], en[i]);
        shortest = np[i] < shortest ? np[i] : shortest;
    }
    size_t lead = 0, trail = 0;
    for (int same = 1; lead < shortest && same; lead += same)
        for (size_t i = 1; i < n && same; i++)
            same = same_part(paths[0], st[0][lead], en[0][lead], paths[i], st[i][lead], en[i][lead]);
    for (int same = 1; lead + trail < shortest && same; trail += same) {
        for (size_t i = 1; i < n && same; i++) {
            size_t a = np[0] - 1 - trail, b = np[i] - 1 - trail;
            same = same_part(paths[0], st[0][a], en[0][a], paths[i], st[i][b], en[i][b]);
        }
    }
    for (size_t i = 0; i < n; i++) {
        if (lead + trail >= np[i])
            continue;
        tl_buf b = {0};
        for (size_t k = lead; k < np[i] - trail; k++) {
            if (k > lead)
                tl_buf_addc(&b, '_');
            if (k + 1 == np[i]) {
                tl_buf_adds(&b, tags[i]); /* the last component: its default tag */
            } else {
                tl_buf_add(&b, paths[i] + st[i][k], en[i][k] - st[i][k]);
            }
        }
        free(tags[i]);
        tags[i] = tl_xstrdup(tl_buf_cstr(&b));
        tl_buf_free(&b);
    }
    for (size_t i = 0; i < n; i++) {
        free(st[i]);
        free(en[i]);
    }
    free(st);
    free(en);
    free(np);
}

/* 1 when paths a and b name the same existing file. */
static int same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* A usage error: the message into c, the status returned. */
static int usage(tl_comparison *c, int hint, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int usage(tl_comparison *c, int hint, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->err.msg, sizeof c->err.msg, fmt, ap);
    va_end(ap);
    c->err.set = 1;
    c->usage_hint = hint;
    return c->status = TL_RUN_USAGE;
}

/* 1 when input i is a trace (by content, looked at once by prepare: the checks, the
 * count of readers and the opening all ask); a report given open is none. */
static int input_is_trace(const struct tl_compare_state *s, size_t i) { return s->trace_input[i]; }

/*
 * Tags that repeat.  One input given twice (a trace against itself, TRACES.md §5.2's
 * identical traces, or any report) with default tags: the later ones are tagged <tag>_2,
 * <tag>_3, ... with a warning, whatever the input.  Default tags of different inputs that
 * no part of their paths tells apart are an error.  A --names tag given to several reports
 * makes them runs of one side (left as it is here).  Returns 0, or TL_RUN_USAGE.
 */
static int repeated_tags(tl_comparison *c, char **tags, const tl_compare_opts *o)
{
    const char *const *paths = o->inputs;
    size_t n = o->ninputs;
    int given = o->names_given;
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; j < i; j++) {
            if (strcmp(tags[i], tags[j]) != 0)
                continue;
            /* A --names tag given to several reports makes them runs of one side, except for
             * exactly two traces: the call-tree diff of a trace against itself needs no tags,
             * and the sheet comparison gets a distinct one. */
            int two_traces = n == 2 && !(o->given && (o->given[0].ops || o->given[1].ops)) &&
                             tl_trace_sniff(paths[0]) && tl_trace_sniff(paths[1]);
            if (given && !two_traces)
                continue;
            if (!given && strcmp(paths[i], paths[j]) != 0 && !same_file(paths[i], paths[j]))
                return usage(c, 0, "reports %zu and %zu both have the tag '%s'; tags must be unique: use "
                                   "--names to disambiguate", j + 1, i + 1, tags[i]);
            char *t = NULL;
            for (size_t k = 2, taken = 1; taken; k++) {
                free(t);
                t = tl_xmalloc(strlen(tags[i]) + 24);
                sprintf(t, "%s_%zu", tags[i], k);
                taken = 0;
                for (size_t m = 0; m < n && !taken; m++)
                    taken = m != i && strcmp(tags[m], t) == 0;
            }
            tl_warn("reports %zu and %zu are the same input, tagged '%s'; report %zu is tagged '%s' (--names gives "
                    "tags)", j + 1, i + 1, tags[i], i + 1, t);
            free(tags[i]);
            tags[i] = t;
            break;
        }
    }
    return 0;
}

/* 1 when writing the file `out` would change the input report `report`: it is that
 * workbook, or a <sheet>.csv inside that CSV directory (existing or not: a new one
 * would be read as a sheet next time). */
static int clobbers(const char *out, const char *report)
{
    size_t n = strlen(out);
    if (same_file(out, report))
        return 1;
    if (n < 4 || strcmp(out + n - 4, ".csv") != 0 || !tl_is_dir(report))
        return 0;
    char *dir = tl_xstrdup(out);
    char *slash = strrchr(dir, '/');
    if (slash)
        slash[slash == dir ? 1 : 0] = '\0';
    int r = same_file(slash ? dir : ".", report);
    free(dir);
    return r;
}

/* Write `text` (made valid UTF-8: op names come from the input) to output `out`'s
 * temporary file.  Returns 0 or -1. */
static int write_text(tl_output *out, tl_buf *text, tl_error *err)
{
    tl_utf8_sanitize(text);
    FILE *f = fopen(tl_output_temp(out), "wb");
    int bad = !f || fwrite(text->data ? text->data : "", 1, text->len, f) != text->len;
    if (f && fclose(f) != 0)
        bad = 1;
    if (bad) {
        tl_error_set(err, "%s: cannot write: %s", tl_output_target(out), strerror(errno));
        return -1;
    }
    return 0;
}

/* A usage error when two outputs of the run name one path (the last one written would
 * silently win), or when a --names tag holds a control character.  0 or TL_RUN_USAGE. */
static int check_outputs_and_tags(tl_comparison *c, const tl_compare_opts *o)
{
    const char *what[6] = {"-o", "--output_csvs_dir", "--summary-md", "--summary-json", "--tracediff-dir", "--html"};
    const char *path[6] = {o->output, o->csv_dir, o->summary_md, o->summary_json, o->tracediff_dir, o->html};
    for (int i = 0; i < 6; i++) {
        for (int j = 0; j < i; j++) {
            if (path[i] && path[j] && tl_output_same_target(path[i], path[j])) {
                tl_buf m = {0};
                tl_message_clean(&m, path[i], strlen(path[i]));
                usage(c, 1, "%s and %s both name '%s'; give each output its own path", what[j], what[i],
                      tl_buf_cstr(&m));
                tl_buf_free(&m);
                return TL_RUN_USAGE;
            }
        }
    }
    for (size_t i = 0; o->names_given && i < o->nnames; i++)
        for (const unsigned char *p = (const unsigned char *)o->names[i]; *p; p++)
            if (*p < 0x20 || *p == 0x7F)
                return usage(c, 1, "--names: tag %zu holds a control character (0x%02X); tags name "
                                   "sheets and files", i + 1, *p);
    return 0;
}

/* A report whose GPU was all but idle (a graph's capture run records its kernels without
 * running them: 11 µs of GPU work) compares as noise: say so, once per report. */
static void warn_little_gpu_work(const tl_summary *s)
{
    enum { LITTLE_MS_X1000 = 100 }; /* 0.1 ms */
    for (size_t i = 0; i <= s->nvariants && s->nvariants; i++) {
        const tl_variant_summary *v = &s->variants[i ? i - 1 : 0];
        if (!v->has_timeline)
            continue;
        double busy = i ? v->timeline[TL_TL_BUSY].var : v->timeline[TL_TL_BUSY].base;
        if (!isnan(busy) && busy < LITTLE_MS_X1000 / 1000.0)
            tl_warn("'%s' has almost no GPU work (busy_time %.3f ms): a graph capture trace, or a run that did not "
                    "reach the GPU? its times compare as noise", i ? v->tag : s->baseline, busy);
    }
}

/* ---- cancelling ------------------------------------------------------------------- */

/* The sink between the comparison and the outputs that stops the run when asked: a
 * result sheet is the unit of work. */
typedef struct cancel_tap {
    tl_sink next;
    tl_cancel *flag;
} cancel_tap;

static int cancelled(tl_cancel *flag, tl_error *err)
{
    if (!tl_cancelled(flag))
        return 0;
    tl_error_set(err, "interrupted");
    return 1;
}

static int cancel_put(void *ctx, const tl_result *r, tl_error *err)
{
    cancel_tap *t = ctx;
    if (cancelled(t->flag, err)) {
        tl_table_free(r->table);
        return -1;
    }
    return t->next.put(t->next.ctx, r, err);
}

static int cancel_sync(void *ctx, size_t upto, tl_error *err)
{
    cancel_tap *t = ctx;
    if (cancelled(t->flag, err))
        return -1;
    return t->next.sync(t->next.ctx, upto, err);
}

/* ---- the run ----------------------------------------------------------------------- */

/* The checks that need no input read, and the tags: 0, or the status. */
static int prepare(tl_comparison *c, struct tl_compare_state *s, int *both_traces, int *infer)
{
    const tl_compare_opts *o = &s->o;
    size_t n = o->ninputs;
    if (n < 2)
        return usage(c, 1, "need at least two reports, got %s", n == 0 ? "none" : "one");
    if (o->names_given && o->nnames != n)
        return usage(c, 1, "--names gives %zu tag%s for %zu reports; give exactly one per report", o->nnames,
                     o->nnames == 1 ? "" : "s", n);
    /* Tags first: a usage error should not wait for the reports to be read. */
    s->tags = tl_xcalloc(n, sizeof *s->tags);
    for (size_t i = 0; i < n; i++)
        s->tags[i] = o->names_given ? tl_xstrdup(o->names[i]) : default_tag(o->inputs[i]);
    s->trace_input = tl_xmalloc(n);
    for (size_t i = 0; i < n; i++)
        s->trace_input[i] = !(o->given && o->given[i].ops) && tl_trace_claims(o->inputs[i]);
    if (!o->names_given)
        differing_tags(s->tags, o->inputs, n);
    for (size_t i = 0; i < n; i++)
        if (!*s->tags[i])
            return usage(c, 0, "report %zu has an empty tag; use --names", i + 1);
    if (repeated_tags(c, s->tags, o) != 0)
        return TL_RUN_USAGE;
    /* A --names tag given to several reports makes them runs of one side: */
    size_t nsides = 0;
    s->tagv = tl_xcalloc(n, sizeof *s->tagv);
    for (size_t i = 0; i < n; i++) {
        size_t k = 0;
        while (k < nsides && strcmp(s->tagv[k], s->tags[i]) != 0)
            k++;
        if (k == nsides)
            s->tagv[nsides++] = s->tags[i];
    }
    if (nsides < 2)
        return usage(c, 0, "every report has the tag '%s': the runs of one side leave nothing to "
                           "compare; give the other side's reports another tag", s->tags[0]);
    for (size_t i = 0; i < n; i++) {
        const char *in = o->inputs[i];
        size_t nfiles;
        const char *const *files = tl_run_diff_files(&nfiles);
        const char *out = o->output && clobbers(o->output, in)                                ? o->output
                          : tl_output_dir_holds(o->csv_dir, NULL, 0, ".csv", in)              ? o->csv_dir
                          : o->summary_md && clobbers(o->summary_md, in)                      ? o->summary_md
                          : o->summary_json && clobbers(o->summary_json, in)                  ? o->summary_json
                          : o->html && clobbers(o->html, in)                                  ? o->html
                          : tl_output_dir_holds(o->tracediff_dir, files, nfiles, NULL, in) ? o->tracediff_dir
                                                                                              : NULL;
        if (out)
            return usage(c, 0, "the output '%s' would overwrite the input report '%s'; refusing", out, in);
    }
    if (check_outputs_and_tags(c, o) != 0)
        return TL_RUN_USAGE;
    /* Two traces: their call trees are aligned too (TRACES.md §5). */
    *both_traces = n == 2 && nsides == 2 && input_is_trace(s, 0) && input_is_trace(s, 1);
    /* inference mode: any capture folder, or an inference option, puts every trace in it */
    const char *infer_option = tl_compare_infer_option(o);
    *infer = infer_option != NULL;
    /* an input that cannot be opened is not an input of the wrong kind: the checks of
     * kinds below leave it to the reading, which says why (exit 1) */
    int any_trace = 0, all_open = 1;
    for (size_t i = 0; i < n; i++) {
        any_trace |= input_is_trace(s, i);
        all_open &= (o->given && o->given[i].ops) || access(o->inputs[i], R_OK) == 0;
    }
    if (*infer && !any_trace && all_open)
        return usage(c, 1, "%s reads traces as TraceLens' inference generator does; none of the inputs is a trace",
                     infer_option);
    int any_capture = tl_compare_capture_given(o);
    *infer |= any_capture;
    if (*both_traces && any_capture) {
        /* neither the morphology diff nor the steps are specified on merged trees
         * (INFERENCE.md §4) */
        if (o->tracediff_dir)
            return usage(c, 1, "--tracediff-dir is not available for traces with capture folders");
        if (o->steps)
            return usage(c, 1, "--steps is not available for traces with capture folders");
        tl_note("traces with capture folders: the morphology (call-tree) sheets are left out");
        *both_traces = 0;
    }
    if (o->steps && !*both_traces && all_open)
        return usage(c, 1, "--steps chooses the steps of two traces compared with each other; %s",
                     n != 2 ? "give exactly two inputs, both traces" : "these inputs are not two traces");
    if (o->tracediff_dir && !*both_traces && all_open) {
        if (n != 2)
            return usage(c, 1, "--tracediff-dir needs exactly two inputs, both traces; %zu given", n);
        const char *other = input_is_trace(s, 0) ? o->inputs[1] : o->inputs[0];
        tl_buf m = {0};
        tl_message_clean(&m, other, strlen(other));
        usage(c, 1, "--tracediff-dir needs two traces: '%s' is not a PyTorch trace (a trace is "
                    "JSON, plain or gzip)", tl_buf_cstr(&m));
        tl_buf_free(&m);
        return TL_RUN_USAGE;
    }
    return 0;
}

int tl_compare_capture_given(const tl_compare_opts *o)
{
    for (size_t i = 0; o->captures && i < o->ninputs; i++)
        if (o->captures[i])
            return 1;
    return 0;
}

const char *tl_compare_infer_option(const tl_compare_opts *o)
{
    return o->inference       ? "--inference"
           : o->parent_module ? "--group_by_parent_module"
           : o->num_kernels   ? "--group_by_num_kernels"
           : o->pseudo_ops    ? "--enable_pseudo_ops"
                              : NULL;
}

char **tl_compare_default_tags(const char *const *paths, size_t n)
{
    char **tags = tl_xcalloc(n ? n : 1, sizeof *tags);
    for (size_t i = 0; i < n; i++)
        tags[i] = default_tag(paths[i]);
    differing_tags(tags, paths, n);
    return tags;
}

/* How a phase of the run ended: the run stops at the first that did not end well. */
enum { STEP_OK = 0, STEP_FAIL, STEP_OUTPUT_FAIL, STEP_CANCEL };

static int step_cancelled(tl_cancel *flag, tl_error *err)
{
    return cancelled(flag, err) ? STEP_CANCEL : STEP_OK;
}

/* Open input i: a report given open is taken over; a profiler trace (by content) has its
 * report sheets built on opening, on a helper thread, against its side's GPU. */
static int open_input(tl_comparison *c, struct tl_compare_state *s, size_t i)
{
    const tl_compare_opts *o = &s->o;
    tl_error *err = &c->err;
    tl_report *r = &s->reports[i];
    const char *path = o->inputs[i], *capture = o->captures ? o->captures[i] : NULL;
    if (o->given && o->given[i].ops) {
        *r = o->given[i];
        memset(&o->given[i], 0, sizeof o->given[i]);
    } else {
        int is_trace = input_is_trace(s, i);
        const tl_gpu_arch *arch = !s->have_arch                                       ? NULL
                                  : s->have_arch_var && strcmp(s->tags[i], s->tagv[0]) ? &s->arch_var
                                                                                       : &s->arch;
        tl_trace_infer_spec spec = {capture, o->parent_module, o->num_kernels, 0, o->pseudo_ops, o->cancel};
        if (capture && !is_trace) {
            tl_error_set(err, "%s: not a trace, so it cannot take the capture folder %s", path, capture);
            return STEP_FAIL;
        }
        if ((is_trace && s->infer ? tl_perf_report_open_infer(r, path, &spec, err)
             : is_trace           ? tl_perf_report_open_cancel(r, path, arch, o->cancel, err)
                                  : tl_report_open(r, path, err)) != 0) {
            tl_report_close(r);
            return STEP_FAIL;
        }
    }
    free(r->tag);
    r->tag = s->tags[i];
    s->tags[i] = NULL;
    return STEP_OK;
}

/* Every input opened (the traces load at once, on helper threads). */
static int open_inputs(tl_comparison *c, struct tl_compare_state *s)
{
    const tl_compare_opts *o = &s->o;
    tl_error *err = &c->err;
    if (o->gpu_arch) {
        if (tl_gpu_arch_load(o->gpu_arch, &s->arch, err) != 0)
            return STEP_FAIL;
        s->have_arch = 1;
    }
    if (o->gpu_arch_variant) {
        if (tl_gpu_arch_load(o->gpu_arch_variant, &s->arch_var, err) != 0)
            return STEP_FAIL;
        s->have_arch_var = 1;
    }
    /* every trace counted among the readers before the first starts loading: each
     * decides at its start whether a core is free for a second thread of its own */
    int ntraces = 0;
    for (size_t i = s->opened; i < o->ninputs; i++)
        ntraces += input_is_trace(s, i);
    tl_trace_readers_add(ntraces);
    int rc = STEP_OK;
    while (rc == STEP_OK && s->opened < o->ninputs) {
        rc = open_input(c, s, s->opened);
        s->opened += rc == STEP_OK;
    }
    tl_trace_readers_add(-ntraces);
    return rc;
}

/* Two traces to align, both loaded: their sheets may still be in the making (a trace
 * that failed to load is read_inputs' to report). */
static int traces_loaded(struct tl_compare_state *s)
{
    if (!s->both_traces)
        return 0;
    double t0 = tl_now();
    tl_progress_wait_begin("reading the traces");
    int ok = tl_trace_report_loaded(&s->reports[0]) && tl_trace_report_loaded(&s->reports[1]);
    tl_progress_wait_end();
    tl_timing.read += tl_now() - t0;
    return ok;
}

/* Every input read, and a report that holds no TraceLens sheet at all refused rather
 * than compared as nothing (a gate would pass on it).  Once. */
static int read_inputs(tl_comparison *c, struct tl_compare_state *s)
{
    const tl_compare_opts *o = &s->o;
    tl_error *err = &c->err;
    if (s->inputs_read)
        return STEP_OK;
    s->inputs_read = 1;
    double t0 = tl_now();
    tl_progress_wait_begin("reading the traces");
    int bad = 0;
    for (size_t i = 0; i < s->opened && !bad; i++)
        bad = tl_trace_report_wait(&s->reports[i], err) != 0;
    tl_progress_wait_end();
    if (bad)
        return STEP_FAIL;
    tl_timing.read += tl_now() - t0;
    if (cancelled(o->cancel, err))
        return STEP_CANCEL;
    for (size_t i = 0; i < o->ninputs; i++) {
        if (!tl_groups_any_sheet(&s->reports[i], TL_GROUP_ALL)) {
            tl_error_set(err, "%s: no TraceLens sheet in this report (a TraceLens report holds gpu_timeline, "
                              "ops_summary, kernel_summary, ops_all, ops_unique_args, GEMM, ... sheets)",
                         o->inputs[i]);
            return STEP_FAIL;
        }
    }
    /* the sides (a tag given to several reports is one side, its reports its runs) */
    s->nsides = 0;
    for (size_t i = 0; i < o->ninputs; i++) {
        size_t k = 0;
        while (k < s->nsides && strcmp(s->tagv[k], s->reports[i].tag) != 0)
            k++;
        if (k == s->nsides)
            s->tagv[s->nsides++] = s->reports[i].tag;
    }
    c->tags = s->tagv;
    c->nsides = s->nsides;
    return STEP_OK;
}

/* Two traces: their call trees aligned (TRACES.md §5). */
static int align_traces(tl_comparison *c, struct tl_compare_state *s)
{
    const tl_compare_opts *o = &s->o;
    if (!s->both_traces)
        return STEP_OK;
    tl_progress_wait_begin("aligning the call trees");
    int rc = tl_run_diff_align(&s->cdiff, tl_trace_report_loaded(&s->reports[0]), tl_trace_report_loaded(&s->reports[1]),
                               o->tracediff_dir != NULL, s->texts[2], &c->err);
    tl_progress_wait_end();
    return rc != 0 ? STEP_FAIL : STEP_OK;
}

/* Every output prepared (and so checked) before the work.  The sheets are written as the
 * results come, under temporary names; without any output, every result is kept. */
static int open_outputs(tl_comparison *c, struct tl_compare_state *s)
{
    const tl_compare_opts *o = &s->o;
    tl_error *err = &c->err;
    if (o->output || o->csv_dir) {
        s->outputs = tl_out_open(o->output, o->csv_dir, !o->no_summary, err);
        if (!s->outputs)
            return STEP_OUTPUT_FAIL;
    }
    const char *paths[4] = {o->summary_md, o->summary_json, o->tracediff_dir, o->html};
    for (int i = 0; i < 4; i++)
        if (paths[i] && !(s->texts[i] = tl_output_new(paths[i], i == 2, err)))
            return STEP_OUTPUT_FAIL;
    return STEP_OK;
}

/* The comparison proper, streamed into the outputs: the sheet groups, the morphology
 * sheets, the steps and a comparison of runs' own sheets.  The per-call spread and the
 * perf sheets' figures are taken as the results pass. */
static int compare_sheets(tl_comparison *c, struct tl_compare_state *s)
{
    const tl_compare_opts *o = &s->o;
    tl_error *err = &c->err;
    s->noise = tl_noise_new(s->tagv, s->nsides);
    if (o->ranks_as_runs)
        tl_noise_ranks_as_runs(s->noise);
    tl_sink out_sink = s->outputs ? tl_out_sink(s->outputs) : tl_results_sink(&s->kept);
    cancel_tap ctap = {out_sink, o->cancel};
    tl_sink csink = {cancel_put, out_sink.sync ? cancel_sync : NULL, &ctap};
    tl_sink sink = tl_noise_tap(s->noise, &csink);
    if (!csink.sync)
        sink.sync = NULL; /* a sink that keeps the results keeps their strings (compare/groups.h) */
    s->eff_cache = tl_eff_cache_new_sides(s->have_arch ? &s->arch : NULL, s->have_arch_var ? &s->arch_var : NULL);
    /* Read once: the efficiency lines take the perf sheets' figures as the groups read them
     * (the observer), and read only the sheets no group read. */
    unsigned flags = TL_RUN_READ_ONCE | (o->tracelens_keys ? TL_RUN_TRACELENS_KEYS : 0);
    if (tl_run_groups_observed(s->reports, o->ninputs, o->run, o->named, flags, tl_eff_cache_observe, s->eff_cache,
                               &sink, &s->arena, err) != 0)
        return STEP_FAIL;
    if (s->both_traces) {
        /* measured from the traces alone while the alignment's thread still works (the
         * diff's sheets come first in the outputs: they are put before the steps') */
        double t_steps = tl_now(); /* the steps are the verdicts': the summary's cost */
        tl_run_steps_measure(&s->steps, tl_trace_report_trace(&s->reports[0]), tl_trace_report_trace(&s->reports[1]),
                             o->step_first, o->step_last);
        tl_timing.summary += tl_now() - t_steps;
    }
    if (tl_run_diff_put(&s->cdiff, &sink, err) != 0)
        return STEP_FAIL;
    if (s->both_traces && tl_run_steps_put(&s->steps, s->tagv, &sink, err) != 0)
        return STEP_FAIL;
    for (size_t i = 0; o->extra && i < o->extra->n; i++) {
        tl_result r = o->extra->items[i];
        o->extra->items[i].table = NULL;
        tl_run_page_observe(&s->page, &r);
        if (sink.put(sink.ctx, &r, err) != 0)
            return STEP_FAIL;
    }
    return step_cancelled(o->cancel, err);
}

/* The results are something to summarise, and to judge when a gate is asked for. */
static int check_results(tl_comparison *c, struct tl_compare_state *s)
{
    static const char *const judged_sheets[] = {"gpu_timeline", "lca_summary", "ops_summary", "kernel_summary"};
    const tl_compare_opts *o = &s->o;
    const tl_results *results = s->outputs ? tl_out_results(s->outputs) : &s->kept;
    c->results = results;
    if (results->n == 0) {
        tl_error_set(&c->err, "nothing to compare: no sheet of the groups asked for is in every report "
                              "(see the warnings above)");
        return STEP_FAIL;
    }
    if (o->fail_pct >= 0) {
        /* a gate that has nothing to judge has not passed */
        int judged = 0;
        for (size_t i = 0; i < results->n && !judged; i++)
            for (size_t k = 0; k < sizeof judged_sheets / sizeof *judged_sheets; k++)
                judged |= !strcmp(results->items[i].name, judged_sheets[k]);
        if (!judged) {
            tl_error_set(&c->err, "--fail-on-regression: nothing to judge: no gpu_timeline, ops_summary or "
                                  "kernel_summary was compared");
            return STEP_FAIL;
        }
    }
    /* one note for all empty results: usually many only_* sheets, and not news */
    tl_buf empty = {0};
    size_t nempty = 0;
    for (size_t i = 0; i < results->n; i++)
        if (results->items[i].nrows == 0)
            tl_buf_printf(&empty, "%s%s", nempty++ ? ", " : "", results->items[i].name);
    if (nempty)
        tl_note("%zu result sheet%s with no matching rows: %s", nempty, nempty == 1 ? "" : "s", tl_buf_cstr(&empty));
    tl_buf_free(&empty);
    return STEP_OK;
}

/* Two traces: the lowest-common-op summary and how alike the two runs are. */
static void summarise_traces(struct tl_compare_state *s, const tl_diff_call *calls, size_t ncalls)
{
    const tl_compare_opts *o = &s->o;
    tl_summary *summary = &s->summary;
    tl_lca_summary_build(&s->lsum, tl_run_diff_result(&s->cdiff), s->tagv[0], s->tagv[1],
                         o->top ? o->top : TL_SUMMARY_TOP, o->fail_pct, o->min_ms, &s->arena);
    const tl_trace *ta = tl_trace_report_trace(&s->reports[0]), *tb = tl_trace_report_trace(&s->reports[1]);
    size_t nsteps[2] = {s->steps.s[0].n, s->steps.s[1].n};
    const char *gpu[2] = {ta->gpu_name, tb->gpu_name};
    tl_comparability_build(&s->comp, s->lsum.cover, calls, ncalls, nsteps, gpu, s->tagv);
    summary->comp = &s->comp;
    tl_run_steps_lca(&s->steps, ta, tb, tl_run_diff_result(&s->cdiff), &s->lsum);
    tl_lca_summary_judge(&s->lsum, o->confidence, o->fdr);
    summary->lca = &s->lsum;
    if (s->lsum.nviolations)
        summary->gate_failed = 1;
}

/* The summary, read from the results: the verdicts (on the calls paired through the
 * alignment and the steps, where there are), the gate, the efficiency lines. */
static int summarise(tl_comparison *c, struct tl_compare_state *s)
{
    const tl_compare_opts *o = &s->o;
    double t0 = tl_now();
    tl_summary *summary = &s->summary;
    tl_noise_read_runs(s->noise, c->results);
    tl_diff_call *calls = NULL;
    size_t ncalls = tl_run_diff_result(&s->cdiff) ? tl_diff_calls(tl_run_diff_result(&s->cdiff), &calls) : 0;
    tl_noise_add_calls(s->noise, calls, ncalls);
    tl_run_steps_judge(&s->steps, s->noise);
    if (cancelled(o->cancel, &c->err)) { /* the pairing takes a while on large traces */
        free(calls);
        return STEP_CANCEL;
    }
    tl_gate gate = {o->fail_pct, o->min_ms, o->min_delta_ms, o->min_delta_pct, o->top, s->noise, o->confidence, o->fdr};
    tl_summary_build(summary, c->results, s->tagv, s->nsides, &gate, &s->arena);
    s->summarised = 1;
    summary->lead_text = o->lead_text;
    summary->lead_md = o->lead_md;
    summary->lead_json = o->lead_json;
    summary->lead_tables = o->lead_tables;
    summary->lead_titles = o->lead_titles;
    summary->nlead = o->nlead;
    summary->lead_violations = o->lead_violations;
    if (o->lead_gate_failed && o->fail_pct >= 0)
        summary->gate_failed = 1;
    c->summary = summary;
    tl_run_steps_locate(&s->steps, summary);
    if (tl_run_diff_result(&s->cdiff))
        summarise_traces(s, calls, ncalls);
    free(calls);
    tl_eff_options eff_opt = {0};
    eff_opt.gpu_arch = s->have_arch ? &s->arch : NULL;
    eff_opt.gpu_arch_variant = s->have_arch_var ? &s->arch_var : NULL;
    eff_opt.cache = s->eff_cache;
    tl_efficiency_build(&s->eff, summary, s->reports, o->ninputs, &eff_opt, &s->arena);
    summary->eff = &s->eff;
    warn_little_gpu_work(summary);
    tl_timing.summary += tl_now() - t0;
    return STEP_OK;
}

/* The summary sheet, the summaries and the page rendered, then everything moved into
 * place together. */
static int write_outputs(tl_comparison *c, struct tl_compare_state *s)
{
    const tl_compare_opts *o = &s->o;
    const tl_summary *summary = &s->summary;
    tl_error *err = &c->err;
    double t_summary = tl_now();
    tl_summary_sheet *sheet = NULL;
    if (s->outputs && !o->no_summary &&
        ((summary->nvariants && (summary->source || summary->variants[0].has_timeline)) || s->lsum.ntop))
        sheet = tl_summary_sheet_build(summary, &s->arena);
    tl_timing.summary += tl_now() - t_summary;
    tl_buf md = {0}, json = {0}, html = {0};
    if (o->html) {
        double t_html = tl_now();
        tl_comparison_html(c, &html);
        tl_timing.html += tl_now() - t_html;
    }
    t_summary = tl_now();
    if (o->summary_md)
        tl_summary_markdown(summary, &md);
    if (o->summary_json)
        tl_summary_json(summary, &json);
    tl_timing.summary += tl_now() - t_summary;

    int rc = step_cancelled(o->cancel, err);
    if (!rc && s->outputs && tl_out_finish(s->outputs, sheet, err) != 0)
        rc = STEP_OUTPUT_FAIL;
    tl_summary_sheet_free(sheet);
    tl_buf *texts[4] = {&md, &json, NULL, &html};
    for (int i = 0; i < 4; i++)
        if (!rc && s->texts[i] && texts[i] && write_text(s->texts[i], texts[i], err) != 0)
            rc = STEP_OUTPUT_FAIL;
    tl_buf_free(&md);
    tl_buf_free(&json);
    tl_buf_free(&html);
    if (!rc)
        rc = step_cancelled(o->cancel, err);
    if (!rc && (s->outputs ? tl_out_commit_with(s->outputs, s->texts, 4, err) : tl_output_commit(s->texts, 4, err)) != 0)
        rc = STEP_OUTPUT_FAIL;
    return rc;
}

/* A run that stopped early: its status and message, and nothing half-written left. */
static int stop(tl_comparison *c, struct tl_compare_state *s, int step)
{
    const tl_compare_opts *o = &s->o;
    tl_error *err = &c->err;
    if (step == STEP_OUTPUT_FAIL)
        c->output_failed = 1;
    if (step == STEP_CANCEL || tl_cancelled(o->cancel)) { /* a step that stopped on the flag failed with its own words */
        c->status = TL_RUN_CANCELLED;
        tl_error_set(err, "interrupted");
    } else {
        c->status = TL_RUN_FAILED;
        if (!err->msg[0])
            tl_error_set(err, "failed");
    }
    /* the reports given open that the run did not reach are the run's too */
    for (size_t i = s->opened; o->given && i < o->ninputs; i++)
        if (o->given[i].ops)
            tl_report_close(&o->given[i]);
    /* the alignment's thread first (it writes into --tracediff-dir), then the outputs:
     * the workbook's workers may still be rendering tables whose strings live in the
     * reports' arenas and the diff's */
    tl_run_diff_wait(&s->cdiff);
    tl_out_free(s->outputs);
    s->outputs = NULL;
    for (int i = 0; i < 4; i++) {
        tl_output_free(s->texts[i]);
        s->texts[i] = NULL;
    }
    tl_progress_wait_end();
    c->results = NULL;
    c->summary = NULL;
    return c->status;
}

int tl_compare_reports(const tl_compare_opts *opts, tl_comparison *c)
{
    memset(c, 0, sizeof *c);
    struct tl_compare_state *s = tl_xcalloc(1, sizeof *s);
    c->st = s;
    s->o = *opts;
    const tl_compare_opts *o = &s->o;
    tl_arena_init(&s->arena);
    tl_run_page_init(&s->page);
    s->nreports = o->ninputs;
    s->reports = tl_xcalloc(o->ninputs ? o->ninputs : 1, sizeof *s->reports);
    if (prepare(c, s, &s->both_traces, &s->infer) != 0) {
        /* the reports given open are the run's */
        for (size_t i = 0; o->given && i < o->ninputs; i++)
            if (o->given[i].ops)
                tl_report_close(&o->given[i]);
        return c->status;
    }
    /* Two traces are aligned as soon as both are loaded, beside their sheets' making; a
     * bad input is still reported before the outputs are made */
    int step = open_inputs(c, s);
    if (!step && !traces_loaded(s))
        step = read_inputs(c, s);
    if (!step)
        step = open_outputs(c, s); /* the alignment writes into --tracediff-dir as it goes */
    if (!step)
        step = align_traces(c, s);
    if (!step)
        step = read_inputs(c, s);
    if (!step)
        step = compare_sheets(c, s);
    if (!step)
        step = check_results(c, s);
    if (!step)
        step = summarise(c, s);
    if (!step)
        step = write_outputs(c, s);
    if (step)
        return stop(c, s, step);
    if (o->fail_pct >= 0 && s->comp.known && !s->comp.comparable && !o->force_compare) {
        /* a gate on unlike runs would pass or fail on nothing: it refuses, after the outputs */
        tl_error_set(&c->err, "--fail-on-regression: the runs are not comparable: %s; --force-compare judges them anyway",
                     s->comp.why);
        c->status = TL_RUN_FAILED;
        return c->status;
    }
    c->status = s->summary.gate_failed ? TL_RUN_REGRESSION : TL_RUN_OK;
    /* the traces outlive the run (tl_comparison_free closes them), its flag may not;
     * every thread that read the flag through them is joined by now */
    for (size_t i = 0; i < s->opened; i++) {
        tl_trace *t = tl_trace_report_trace(&s->reports[i]);
        if (t)
            tl_trace_uncancel(t);
    }
    return c->status;
}

/* ---- after the run ---------------------------------------------------------------- */

int tl_comparison_write(tl_comparison *c, const char *xlsx, const char *csv_dir, tl_cancel *cancel, tl_error *err)
{
    struct tl_compare_state *s = c->st;
    if (!s || !c->results || !c->summary || c->results != &s->kept) {
        tl_error_set(err, "no comparison kept in memory to write");
        return -1;
    }
    if (!xlsx && !csv_dir)
        return 0;
    for (size_t i = 0; i < s->nreports; i++) {
        const char *in = s->reports[i].path ? s->reports[i].path : "";
        const char *out = xlsx && clobbers(xlsx, in)                       ? xlsx
                          : tl_output_dir_holds(csv_dir, NULL, 0, ".csv", in) ? csv_dir
                                                                              : NULL;
        if (out) {
            tl_error_set(err, "the output '%s' would overwrite the input report '%s'; refusing", out, in);
            return -1;
        }
    }
    tl_summary_sheet *sheet = NULL;
    const tl_summary *sum = c->summary;
    tl_arena arena;
    tl_arena_init(&arena);
    if (xlsx && !s->o.no_summary && ((sum->nvariants && (sum->source || sum->variants[0].has_timeline)) || s->lsum.ntop))
        sheet = tl_summary_sheet_build(sum, &arena);
    int rc = tl_run_write_kept(&s->kept, xlsx, csv_dir, !s->o.no_summary, sheet, cancel, err);
    tl_summary_sheet_free(sheet);
    tl_arena_free(&arena);
    return rc;
}

void tl_comparison_summary_json(const tl_comparison *c, tl_buf *out)
{
    if (c->summary) {
        tl_summary_json(c->summary, out);
        tl_utf8_sanitize(out);
    }
}

void tl_comparison_html(const tl_comparison *c, tl_buf *out)
{
    struct tl_compare_state *s = c->st;
    if (!s || !c->summary)
        return;
    /* the page: drawn from the summary, the diff's call trees and the GPU's peaks */
    tl_page_opts popt = {.tool = "tlcompare", .diff = tl_run_diff_result(&s->cdiff),
                         .arch = s->have_arch ? &s->arch : NULL, .arch_variant = s->have_arch_var ? &s->arch_var : NULL};
    tl_run_page_opts(&s->page, &s->steps, s->tagv, &popt);
    tl_summary_html(c->summary, &popt, out);
}

void tl_comparison_summary_md(const tl_comparison *c, tl_buf *out)
{
    if (c->summary) {
        tl_summary_markdown(c->summary, out);
        tl_utf8_sanitize(out);
    }
}

/* What a printer writes to a FILE, into a buffer (made valid UTF-8 like the files). */
static void print_into(tl_buf *out, void (*print)(const tl_summary *, FILE *, int), void (*lca)(const tl_lca_summary *, FILE *),
                       const tl_summary *s, const tl_lca_summary *l, int color)
{
    char *text = NULL;
    size_t n = 0;
    FILE *mem = open_memstream(&text, &n);
    if (!mem)
        return;
    if (print)
        print(s, mem, color);
    if (lca)
        lca(l, mem);
    fclose(mem);
    tl_buf b = {text, n, n + 1};
    tl_utf8_sanitize(&b);
    tl_buf_add(out, b.data, b.len);
    tl_buf_free(&b);
}

void tl_comparison_summary_text(const tl_comparison *c, int color, tl_buf *out)
{
    if (c->summary)
        print_into(out, tl_summary_print, NULL, c->summary, NULL, color);
}

static void print_violations(const tl_summary *s, FILE *f, int color)
{
    (void)color;
    tl_summary_print_violations(s, f);
}

void tl_run_after_fork(void)
{
    tl_util_after_fork();
    tl_cleanup_after_fork();
    tl_xlsx_after_fork();
    tl_quiet = 0;
}

int tl_gate_args_check(tl_gate_args *a, const char *const names[6], tl_error *err)
{
    /* the words of the option table's checks (run/compare_args.c), so that a gate run
     * again refuses what the comparison refused, and says it the same way */
    const double *nums[4] = {&a->pct, &a->min_ms, &a->min_delta_ms, &a->min_delta_pct};
    for (int i = a->has_pct ? 0 : 1; i < 4; i++) {
        if (!(isfinite(*nums[i]) && *nums[i] >= 0)) {
            tl_error_set(err, "%s needs a number of at least 0", names[i]);
            return -1;
        }
    }
    if (a->top < 0 || a->top > 100000) {
        tl_error_set(err, "%s needs a whole number from 1 to 100000", names[4]);
        return -1;
    }
    double c = a->confidence;
    if (c >= 1)
        c /= 100; /* 95 is 95 %, as on the command line */
    if (c != 0 && !(c >= 0.5 && c < 1)) {
        tl_error_set(err, "%s needs a level from 50 to below 100 (percent)", names[5]);
        return -1;
    }
    a->confidence = c;
    return 0;
}

int tl_comparison_gate(const tl_comparison *c, const tl_gate *g, tl_buf *violations)
{
    struct tl_compare_state *s = c->st;
    if (!s || !c->summary || !c->results)
        return 0;
    tl_gate gate = *g;
    if (!gate.noise)
        gate.noise = s->noise;
    if (gate.confidence == 0)
        gate.confidence = s->o.confidence;
    tl_arena arena;
    tl_arena_init(&arena);
    tl_summary sum = {0};
    tl_lca_summary lsum = {0};
    tl_summary_build(&sum, c->results, s->tagv, s->nsides, &gate, &arena);
    const tl_diff *d = tl_run_diff_result(&s->cdiff);
    if (d) {
        tl_lca_summary_build(&lsum, d, s->tagv[0], s->tagv[1], gate.top ? gate.top : TL_SUMMARY_TOP, gate.pct,
                             gate.min_ms, &arena);
        tl_run_steps_lca(&s->steps, tl_trace_report_trace(&s->reports[0]), tl_trace_report_trace(&s->reports[1]), d,
                         &lsum);
        tl_lca_summary_judge(&lsum, gate.confidence, gate.fdr);
        sum.lca = &lsum;
        if (lsum.nviolations)
            sum.gate_failed = 1;
    }
    /* the owner's own gate (runs: the slowest rank, the collectives) at this percentage too */
    tl_buf runs = {0};
    if (s->o.owner.gate && s->o.owner.gate(s->o.owner.ctx, gate.pct, &runs)) {
        sum.gate_failed = 1;
        sum.lead_violations = tl_buf_cstr(&runs);
    }
    int failed = sum.gate_failed;
    if (violations && failed)
        print_into(violations, print_violations, NULL, &sum, NULL, 0);
    tl_buf_free(&runs);
    tl_lca_summary_free(&lsum);
    tl_summary_free(&sum);
    tl_arena_free(&arena);
    return failed;
}

void tl_comparison_free(tl_comparison *c)
{
    struct tl_compare_state *s = c->st;
    if (!s)
        return;
    /* The outputs first: on a failure the workbook's workers may still be rendering tables
     * whose strings live in the reports' arenas and in the diff's. */
    tl_out_free(s->outputs);
    for (size_t i = 0; i < s->kept.n; i++)
        tl_table_free(s->kept.items[i].table);
    free(s->kept.items);
    tl_run_steps_free(&s->steps);
    tl_run_page_free(&s->page);
    tl_run_diff_free(&s->cdiff); /* after the outputs: its strings are in the tables they hold */
    for (size_t i = 0; s->tags && i < s->nreports; i++)
        free(s->tags[i]);
    free(s->tags);
    free(s->trace_input);
    for (size_t i = 0; i < s->opened; i++)
        tl_report_close(&s->reports[i]);
    free(s->reports);
    tl_summary_free(&s->summary);
    tl_noise_free(s->noise);
    free(s->tagv);
    tl_lca_summary_free(&s->lsum);
    tl_efficiency_free(&s->eff);
    tl_eff_cache_free(s->eff_cache);
    for (int i = 0; i < 4; i++)
        tl_output_free(s->texts[i]);
    tl_arena_free(&s->arena);
    if (s->o.owner.free)
        s->o.owner.free(s->o.owner.ctx);
    free(s);
    memset(c, 0, sizeof *c);
}
