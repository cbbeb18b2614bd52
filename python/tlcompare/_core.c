/*
 * _core.c - the CPython extension under `import tlcompare`: the library's runs
 * (src/run/) called with the GIL released, their tables handed over column by column.
 *
 * Built against the stable ABI (Py_LIMITED_API) and without numpy: a numeric column
 * comes out as the bytes of an int64 / float64 / bool array (numpy.frombuffer on the
 * Python side), a text column as a list of str.  The column's kind is the one
 * pandas.read_csv gives for the CSV the command line writes: what a user of the CSVs saw.
 *
 * Every run happens on a worker thread while the calling thread waits with the GIL
 * released, waking every few milliseconds to let Python handle signals: Ctrl-C sets the
 * run's cancel flag, the run stops at its next check and removes what it began to write,
 * and the call raises KeyboardInterrupt.  One run at a time: the library keeps a little
 * process-wide state (the timings, the warnings' quiet flag).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "base/numfmt.h"
#include "base/util.h"
#include "compare/groups.h"
#include "io/cleanup.h"
#include "run/compare.h"
#include "run/memreport.h"
#include "run/report.h"
#include "table/table.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- exceptions ------------------------------------------------------------------- */

static PyObject *Error, *InputError, *UsageError, *OutputError, *OutOfMemoryError;

/* The run's status as an exception: NULL returned, the error set. */
static PyObject *raise_status(int status, const char *msg, int writing)
{
    if (status == TL_RUN_CANCELLED) {
        PyErr_SetNone(PyExc_KeyboardInterrupt);
        return NULL;
    }
    PyObject *kind = status == TL_RUN_USAGE ? UsageError : writing ? OutputError : InputError;
    PyErr_SetString(kind, msg && *msg ? msg : "failed");
    return NULL;
}

/* ---- running with the GIL released, interruptible ---------------------------------- */

typedef struct job {
    void (*work)(struct job *);
    void *arg;
    volatile int cancel;
    int done;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int quiet; /* this run's: the warnings' flag is set from it under the run lock */
    int oom;   /* the run's thread ran out of memory: its state abandoned, never freed */
    char oom_msg[512];
} job;

static pthread_mutex_t one_run = PTHREAD_MUTEX_INITIALIZER;

/* The work, with allocation failures of this thread unwound to here: the run's temporary
 * outputs are removed (the module runs one at a time: every tracked path is this run's)
 * and the call raises OutOfMemoryError instead of ending the interpreter. */
static void *job_thread(void *p)
{
    job *j = p;
    jmp_buf at;
    if (setjmp(at) == 0) {
        tl_oom_catch(&at);
        j->work(j);
    } else {
        j->oom = 1;
        snprintf(j->oom_msg, sizeof j->oom_msg, "%s", tl_oom_message());
        tl_oom_reset();
        tl_cleanup_remove_all();
    }
    tl_oom_catch(NULL);
    pthread_mutex_lock(&j->mu);
    j->done = 1;
    pthread_cond_signal(&j->cv);
    pthread_mutex_unlock(&j->mu);
    return NULL;
}

/* Wait up to `ms` for the job; 1 when it is done. */
static int job_wait(job *j, long ms)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_nsec += ms * 1000000L;
    until.tv_sec += until.tv_nsec / 1000000000L;
    until.tv_nsec %= 1000000000L;
    pthread_mutex_lock(&j->mu);
    while (!j->done && ms >= 0) {
        if (pthread_cond_timedwait(&j->cv, &j->mu, &until) == ETIMEDOUT)
            break;
    }
    int done = j->done;
    pthread_mutex_unlock(&j->mu);
    return done;
}

/* Run j->work on a worker thread (with a big stack: the library recurses on call trees)
 * until it is done; a pending signal's handler (Ctrl-C: KeyboardInterrupt) cancels it.
 * Returns 0, or -1 with the handler's exception set (the work still finished first). */
static int run_job(job *j)
{
    j->cancel = 0;
    j->done = 0;
    pthread_mutex_init(&j->mu, NULL);
    pthread_cond_init(&j->cv, NULL);
    int rc = 0;
    PyThreadState *ts = PyEval_SaveThread();
    pthread_mutex_lock(&one_run);
    tl_quiet = j->quiet; /* taken with the lock: another thread's run cannot change it meanwhile */
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, (size_t)64 << 20);
    pthread_t th;
    int threaded = pthread_create(&th, &attr, job_thread, j) == 0;
    pthread_attr_destroy(&attr);
    if (!threaded) {
        job_thread(j);
    } else {
        while (!job_wait(j, 20)) {
            PyEval_RestoreThread(ts);
            int sig = PyErr_CheckSignals();
            ts = PyEval_SaveThread();
            if (sig != 0) {
                j->cancel = 1;
                rc = -1;
                break;
            }
        }
        pthread_join(th, NULL);
    }
    tl_quiet = 0;
    pthread_mutex_unlock(&one_run);
    PyEval_RestoreThread(ts);
    pthread_mutex_destroy(&j->mu);
    pthread_cond_destroy(&j->cv);
    return rc;
}

/* ---- tables out ----------------------------------------------------------------------- */

/* What pandas.read_csv makes of a column of the CSV the writer makes of it. */
enum { COL_INT, COL_FLOAT, COL_BOOL, COL_OBJECT };

/* A cell as read_csv sees its text: missing, an integer, another number, a boolean or text. */
enum { SEE_MISSING, SEE_INT, SEE_FLOAT, SEE_BOOL, SEE_TEXT };

/* Whether the text None is missing to pandas.read_csv (from pandas 2; set by the Python side
 * from the pandas it runs with).  Every other missing spelling is the library's own. */
static int none_is_missing = 1;

static int seen_as(const tl_cell *c, int64_t *i, double *f, int *b)
{
    switch (c->kind) {
    case TL_INT:
        *i = c->v.i;
        *f = (double)c->v.i;
        return SEE_INT;
    case TL_FLOAT:
        if (isnan(c->v.f))
            return SEE_MISSING; /* written "nan" */
        *f = c->v.f;
        return SEE_FLOAT;
    case TL_BOOL:
        *b = c->v.b;
        return SEE_BOOL;
    case TL_STR: {
        size_t n = tl_cell_len(c);
        tl_cell num;
        if (tl_text_is_missing(c->v.s, n))
            return none_is_missing || n != 4 || memcmp(c->v.s, "None", 4) != 0 ? SEE_MISSING : SEE_TEXT;
        if (tl_text_to_number(c->v.s, n, &num)) {
            if (num.kind == TL_INT) {
                *i = num.v.i;
                *f = (double)num.v.i;
                return SEE_INT;
            }
            if (num.kind == TL_FLOAT && isnan(num.v.f))
                return SEE_MISSING;
            *f = num.kind == TL_FLOAT ? num.v.f : tl_cell_number(&num);
            return SEE_FLOAT;
        }
        if (tl_text_to_bool(c->v.s, n, b))
            return SEE_BOOL;
        return SEE_TEXT;
    }
    default:
        return SEE_MISSING;
    }
}

static int column_kind(const tl_column *col, size_t nrows)
{
    if (nrows == 0)
        return COL_OBJECT; /* a header alone: read_csv types nothing */
    int missing = 0, ints = 1, nums = 1, bools = 1, present = 0;
    for (size_t r = 0; r < nrows; r++) {
        int64_t i;
        double f;
        int b;
        switch (seen_as(&col->cells[r], &i, &f, &b)) {
        case SEE_MISSING: missing = 1; break;
        case SEE_INT: present = 1, bools = 0; break;
        case SEE_FLOAT: present = 1, bools = 0, ints = 0; break;
        case SEE_BOOL: present = 1, ints = 0, nums = 0; break;
        default: return COL_OBJECT;
        }
        if (!ints && !nums && !bools)
            return COL_OBJECT;
    }
    if (!present)
        return COL_FLOAT; /* all NaN */
    if (ints && !missing)
        return COL_INT;
    if (nums)
        return COL_FLOAT;
    if (bools && !missing)
        return COL_BOOL;
    return COL_OBJECT; /* booleans with NaN */
}

/* A small cache of the str objects made for one column's strings, by their address:
 * a report's repeated texts (op names, categories) share one copy in the arena. */
#define STR_CACHE 1024
typedef struct str_cache {
    const char *key[STR_CACHE];
    PyObject *val[STR_CACHE];
} str_cache;

static PyObject *text_object(str_cache *sc, const char *s, size_t n)
{
    size_t h = ((uintptr_t)s >> 3) % STR_CACHE;
    if (sc && sc->key[h] == s && sc->val[h]) {
        Py_INCREF(sc->val[h]);
        return sc->val[h];
    }
    PyObject *o = PyUnicode_DecodeUTF8(s, (Py_ssize_t)n, "replace");
    if (o && sc) {
        Py_XDECREF(sc->val[h]);
        sc->key[h] = s;
        sc->val[h] = o;
        Py_INCREF(o);
    }
    return o;
}

static PyObject *object_column(const tl_column *col, size_t nrows, PyObject *nan)
{
    PyObject *list = PyList_New((Py_ssize_t)nrows);
    if (!list)
        return NULL;
    str_cache *sc = calloc(1, sizeof *sc);
    for (size_t r = 0; r < nrows; r++) {
        const tl_cell *c = &col->cells[r];
        PyObject *o = NULL;
        int64_t i;
        double f;
        int b;
        int seen = seen_as(c, &i, &f, &b);
        if (seen == SEE_MISSING) {
            Py_INCREF(nan);
            o = nan;
        } else if (c->kind == TL_STR) {
            /* read_csv keeps the text of a column it cannot type, as written */
            o = text_object(sc, c->v.s, tl_cell_len(c));
        } else if (c->kind == TL_BOOL) {
            o = PyUnicode_FromString(c->v.b ? "True" : "False");
        } else {
            char buf[TL_NUMFMT_MAX + 8];
            size_t n = c->kind == TL_INT ? tl_fmt_int(c->v.i, buf) : tl_fmt_double(c->v.f, buf);
            o = PyUnicode_FromStringAndSize(buf, (Py_ssize_t)n);
        }
        if (!o) {
            Py_DECREF(list);
            list = NULL;
            break;
        }
        PyList_SetItem(list, (Py_ssize_t)r, o);
    }
    if (sc) {
        for (size_t k = 0; k < STR_CACHE; k++)
            Py_XDECREF(sc->val[k]);
        free(sc);
    }
    return list;
}

/* A column of booleans with NaN: read_csv gives Python booleans and NaN (object). */
static int bools_with_nan(const tl_column *col, size_t nrows)
{
    int any_bool = 0;
    for (size_t r = 0; r < nrows; r++) {
        int64_t i;
        double f;
        int b;
        int s = seen_as(&col->cells[r], &i, &f, &b);
        if (s == SEE_BOOL)
            any_bool = 1;
        else if (s != SEE_MISSING)
            return 0;
    }
    return any_bool;
}

static PyObject *bool_nan_column(const tl_column *col, size_t nrows, PyObject *nan)
{
    PyObject *list = PyList_New((Py_ssize_t)nrows);
    for (size_t r = 0; list && r < nrows; r++) {
        int64_t i;
        double f;
        int b = 0;
        PyObject *o = seen_as(&col->cells[r], &i, &f, &b) == SEE_BOOL ? PyBool_FromLong(b) : (Py_INCREF(nan), nan);
        PyList_SetItem(list, (Py_ssize_t)r, o);
    }
    return list;
}

/* A column as (kind, data): kind "i", "f", "b" with the bytes of an array, "o" with a list. */
static PyObject *column_object(const tl_column *col, size_t nrows, PyObject *nan)
{
    int kind = column_kind(col, nrows);
    if (kind == COL_OBJECT) {
        PyObject *list = nrows && bools_with_nan(col, nrows) ? bool_nan_column(col, nrows, nan)
                                                              : object_column(col, nrows, nan);
        return list ? Py_BuildValue("(sN)", "o", list) : NULL;
    }
    size_t width = kind == COL_BOOL ? 1 : 8;
    PyObject *bytes = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(nrows * width));
    if (!bytes)
        return NULL;
    char *p = PyBytes_AsString(bytes);
    for (size_t r = 0; r < nrows; r++) {
        int64_t i = 0;
        double f = NAN;
        int b = 0;
        int seen = seen_as(&col->cells[r], &i, &f, &b);
        if (kind == COL_INT) {
            memcpy(p + r * 8, &i, 8);
        } else if (kind == COL_FLOAT) {
            if (seen == SEE_MISSING)
                f = NAN;
            memcpy(p + r * 8, &f, 8);
        } else {
            p[r] = (char)(b != 0);
        }
    }
    return Py_BuildValue("(sN)", kind == COL_INT ? "i" : kind == COL_FLOAT ? "f" : "b", bytes);
}

/* A table as (names, columns): names a list of str (read_csv's "Unnamed: i" for an empty
 * one), columns a list of (kind, data). */
static PyObject *table_object(const tl_table *t)
{
    PyObject *nan = PyFloat_FromDouble(NAN);
    PyObject *names = PyList_New((Py_ssize_t)t->ncols), *cols = PyList_New((Py_ssize_t)t->ncols);
    if (!nan || !names || !cols)
        goto fail;
    for (size_t c = 0; c < t->ncols; c++) {
        const char *nm = t->cols[c].name ? t->cols[c].name : "";
        PyObject *n = *nm ? PyUnicode_DecodeUTF8(nm, (Py_ssize_t)strlen(nm), "replace")
                          : PyUnicode_FromFormat("Unnamed: %zu", c);
        PyObject *col = n ? column_object(&t->cols[c], t->nrows, nan) : NULL;
        if (!n || !col) {
            Py_XDECREF(n);
            goto fail;
        }
        PyList_SetItem(names, (Py_ssize_t)c, n);
        PyList_SetItem(cols, (Py_ssize_t)c, col);
    }
    Py_DECREF(nan);
    return Py_BuildValue("(NN)", names, cols);
fail:
    Py_XDECREF(nan);
    Py_XDECREF(names);
    Py_XDECREF(cols);
    return NULL;
}

/* The results as a list of (sheet, names, columns), in order. */
static PyObject *results_object(const tl_results *res)
{
    PyObject *list = PyList_New(0);
    for (size_t i = 0; list && i < res->n; i++) {
        const tl_result *r = &res->items[i];
        if (!r->table)
            continue;
        PyObject *tab = table_object(r->table);
        PyObject *item = tab ? Py_BuildValue("(sN)", r->name, tab) : NULL;
        if (!item || PyList_Append(list, item) != 0) {
            Py_XDECREF(item);
            Py_DECREF(list);
            return NULL;
        }
        Py_DECREF(item);
    }
    return list;
}

/* ---- arguments ----------------------------------------------------------------------- */

/* A path argument (str, bytes or os.PathLike) as a malloc'd copy of the bytes the file
 * system sees (a str encoded as os.fsencode does: undecodable bytes round-trip); NULL
 * for None.  -1 on error: TypeError for another type, UsageError for a NUL. */
static int path_arg(PyObject *o, const char *what, char **out)
{
    *out = NULL;
    if (!o || o == Py_None)
        return 0;
    PyObject *b = NULL;
    if (!PyUnicode_FSConverter(o, &b)) {
        int nul = PyErr_ExceptionMatches(PyExc_ValueError);
        PyErr_Clear();
        if (nul)
            PyErr_Format(UsageError, "%s: a path holds a NUL character", what);
        else
            PyErr_Format(PyExc_TypeError, "%s: a path (str, bytes or os.PathLike) is needed, not %R", what,
                         (PyObject *)Py_TYPE(o));
        return -1;
    }
    char *bytes = NULL;
    Py_ssize_t n = 0;
    if (PyBytes_AsStringAndSize(b, &bytes, &n) != 0) {
        Py_DECREF(b);
        return -1;
    }
    *out = tl_xstrdup(bytes);
    Py_DECREF(b);
    return 0;
}

/* A sequence of str (None entries left NULL when allowed) as a malloc'd array of malloc'd
 * UTF-8 strings (free_strs), *n set; NULL for None.  -1 on error. */
static int str_list(PyObject *seq, const char *what, const char ***out, size_t *n, int allow_none)
{
    *out = NULL;
    *n = 0;
    if (!seq || seq == Py_None)
        return 0;
    PyObject *fast = PySequence_List(seq);
    if (!fast)
        return -1;
    Py_ssize_t k = PyList_Size(fast);
    const char **v = tl_xcalloc((size_t)(k ? k : 1), sizeof *v);
    for (Py_ssize_t i = 0; i < k; i++) {
        PyObject *x = PyList_GetItem(fast, i);
        if (allow_none && x == Py_None)
            continue;
        char *p = NULL;
        if (path_arg(x, what, &p) != 0 || !p) {
            if (!PyErr_Occurred())
                PyErr_Format(PyExc_TypeError, "%s: a str is needed", what);
            for (Py_ssize_t j = 0; j < i; j++)
                free((char *)v[j]);
            free(v);
            Py_DECREF(fast);
            return -1;
        }
        v[i] = p;
    }
    Py_DECREF(fast);
    *out = v;
    *n = (size_t)k;
    return 0;
}

static void free_strs(const char **v, size_t n)
{
    for (size_t i = 0; v && i < n; i++)
        free((char *)v[i]);
    free(v);
}

/* ---- report() ------------------------------------------------------------------------ */

typedef struct report_job {
    tl_run_report_opts o;
    tl_run_report r;
    const char *xlsx, *csv_dir; /* written after the sheets are kept */
    const char **only, **drop;  /* the sheets kept (NULL: all), and those left out */
    size_t nonly, ndrop;
    tl_error werr;
    int wrc;
} report_job;

static int listed(const char *const *v, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(v[i], name))
            return 1;
    return 0;
}

/* Keep the sheets asked for, in the report's order: 0, or -1 with the message (one named
 * is not in the report) and nothing changed. */
static int select_sheets(report_job *rj)
{
    tl_results *res = &rj->r.results;
    for (size_t k = 0; rj->only && k < rj->nonly; k++) {
        int found = 0;
        for (size_t i = 0; i < res->n && !found; i++)
            found = !strcmp(res->items[i].name, rj->only[k]);
        if (!found) {
            tl_buf have = {0};
            for (size_t i = 0; i < res->n; i++)
                tl_buf_printf(&have, "%s%s", i ? ", " : "", res->items[i].name);
            tl_error_set(&rj->r.err, "%s: no sheet '%s' in its report (it has %s)", rj->o.trace, rj->only[k],
                         tl_buf_cstr(&have));
            tl_buf_free(&have);
            return -1;
        }
    }
    size_t w = 0;
    for (size_t i = 0; i < res->n; i++) {
        tl_result *r = &res->items[i];
        if ((rj->only && !listed(rj->only, rj->nonly, r->name)) || listed(rj->drop, rj->ndrop, r->name))
            tl_table_free(r->table);
        else
            res->items[w++] = *r;
    }
    res->n = w;
    return 0;
}

static void report_work(job *j)
{
    report_job *rj = j->arg;
    rj->o.cancel = &j->cancel;
    tl_run_report_build(&rj->o, &rj->r);
    if (rj->r.status == TL_RUN_OK && select_sheets(rj) != 0)
        rj->r.status = TL_RUN_FAILED;
    if (rj->r.status == TL_RUN_OK && (rj->xlsx || rj->csv_dir))
        rj->wrc = tl_run_report_write(&rj->r, rj->xlsx, rj->csv_dir, &j->cancel, &rj->werr);
    if (rj->r.status == TL_RUN_OK && j->cancel)
        rj->r.status = TL_RUN_CANCELLED; /* and nothing was written */
}

/* report(trace, capture=None, gpu_arch=None, unlinked=False, topk_ops=-1, inference=False,
 *        parent_module=False, num_kernels=False, call_stack=False, pseudo_ops=False,
 *        output=None, csv_dir=None, quiet=False) -> list of (sheet, names, columns) */
static PyObject *py_report(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"trace", "capture", "gpu_arch", "unlinked", "topk_ops", "inference", "parent_module",
                             "num_kernels", "call_stack", "pseudo_ops", "output", "csv_dir", "quiet", "only", "drop",
                             NULL};
    PyObject *trace = NULL, *capture = Py_None, *gpu = Py_None, *out = Py_None, *csv = Py_None, *only = Py_None,
             *drop = Py_None;
    int unlinked = 0, inference = 0, parent = 0, numk = 0, stack = 0, pseudo = 0, quiet = 0;
    long topk = -1;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|OOplpppppOOpOO", kwlist, &trace, &capture, &gpu, &unlinked, &topk,
                                     &inference, &parent, &numk, &stack, &pseudo, &out, &csv, &quiet, &only, &drop))
        return NULL;
    const char **onlyv = NULL, **dropv = NULL;
    size_t nonly = 0, ndrop = 0;
    char *p_trace = NULL, *p_cap = NULL, *p_gpu = NULL, *p_out = NULL, *p_csv = NULL;
    PyObject *ret = NULL;
    if (path_arg(trace, "trace", &p_trace) || !p_trace || path_arg(capture, "capture", &p_cap) ||
        path_arg(gpu, "gpu_arch", &p_gpu) || path_arg(out, "output", &p_out) || path_arg(csv, "csv_dir", &p_csv) ||
        str_list(only, "sheets", &onlyv, &nonly, 0) || str_list(drop, "drop", &dropv, &ndrop, 0)) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_TypeError, "report(): a trace path is needed");
        goto done;
    }
    report_job rj;
    memset(&rj, 0, sizeof rj);
    tl_run_report_opts_init(&rj.o);
    rj.o.trace = p_trace;
    rj.o.capture_dir = p_cap;
    rj.o.gpu_arch = p_gpu;
    rj.o.unlinked = unlinked;
    rj.o.topk_ops = topk;
    rj.o.inference = inference;
    rj.o.parent_module = parent;
    rj.o.num_kernels = numk;
    rj.o.call_stack = stack;
    rj.o.pseudo_ops = pseudo;
    rj.xlsx = p_out;
    rj.csv_dir = p_csv;
    rj.only = onlyv;
    rj.nonly = nonly;
    rj.drop = dropv;
    rj.ndrop = ndrop;
    job j = {.work = report_work, .arg = &rj, .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER, .quiet = quiet};
    int sig = run_job(&j);
    if (j.oom) {
        if (!PyErr_Occurred())
            PyErr_SetString(OutOfMemoryError, j.oom_msg);
        goto done; /* the run's state is half made: abandoned, not freed */
    }
    if (sig != 0 || rj.r.status == TL_RUN_CANCELLED) {
        if (!PyErr_Occurred())
            PyErr_SetNone(PyExc_KeyboardInterrupt);
    } else if (rj.r.status != TL_RUN_OK) {
        raise_status(rj.r.status, rj.r.err.msg, 0);
    } else if (rj.wrc != 0) {
        raise_status(TL_RUN_FAILED, rj.werr.msg, 1);
    } else {
        PyObject *sheets = results_object(&rj.r.results);
        ret = sheets ? Py_BuildValue("(Ns)", sheets, tl_buf_cstr(&rj.r.infer_line)) : NULL;
    }
    tl_run_report_free(&rj.r);
done:
    free_strs(onlyv, nonly);
    free_strs(dropv, ndrop);
    free(p_trace);
    free(p_cap);
    free(p_gpu);
    free(p_out);
    free(p_csv);
    return ret;
}

/* ---- compare() ----------------------------------------------------------------------- */

typedef struct comparison_object {
    PyObject_HEAD
    tl_comparison c;
    int have;
} comparison_object;

static PyTypeObject *ComparisonType;

typedef struct compare_job {
    tl_compare_opts o;
    tl_comparison *c;
} compare_job;

static void compare_work(job *j)
{
    compare_job *cj = j->arg;
    cj->o.cancel = &j->cancel;
    tl_compare_run(&cj->o, cj->c);
}

/* A str argument, kept by the caller's object list. */
static const char *str_item(PyObject *o)
{
    return PyUnicode_Check(o) ? PyUnicode_AsUTF8AndSize(o, NULL) : NULL;
}

/* A Python value as a raw cell of a sheet being built (its text copied into the report). */
static int value_cell(tl_report *rep, PyObject *v, tl_cell *cell)
{
    *cell = tl_cell_missing();
    if (v == Py_None)
        return 0;
    if (PyBool_Check(v)) {
        *cell = tl_cell_bool(v == Py_True);
        return 0;
    }
    if (PyLong_Check(v)) {
        int over = 0;
        long long x = PyLong_AsLongLongAndOverflow(v, &over);
        if (!over) {
            if (x == -1 && PyErr_Occurred())
                return -1;
            *cell = tl_cell_int((int64_t)x);
            return 0;
        }
        double d = PyLong_AsDouble(v);
        if (d == -1.0 && PyErr_Occurred())
            return -1;
        *cell = tl_cell_float(d);
        return 0;
    }
    if (PyFloat_Check(v)) {
        double d = PyFloat_AsDouble(v);
        if (!isnan(d))
            *cell = tl_cell_float(d);
        return 0;
    }
    PyObject *s = PyUnicode_Check(v) ? (Py_INCREF(v), v) : PyObject_Str(v);
    if (!s)
        return -1;
    Py_ssize_t n = 0;
    const char *u = PyUnicode_AsUTF8AndSize(s, &n);
    if (!u) {
        /* a lone surrogate: its text with the replacement character */
        PyErr_Clear();
        PyObject *b = PyUnicode_AsEncodedString(s, "utf-8", "replace");
        if (!b) {
            Py_DECREF(s);
            return -1;
        }
        char *bs = NULL;
        Py_ssize_t bn = 0;
        PyBytes_AsStringAndSize(b, &bs, &bn);
        *cell = tl_cell_strn(tl_mem_report_text(rep, bs, (size_t)bn), (size_t)bn);
        Py_DECREF(b);
        Py_DECREF(s);
        return 0;
    }
    *cell = tl_cell_strn(tl_mem_report_text(rep, u, (size_t)n), (size_t)n);
    Py_DECREF(s);
    return 0;
}

/* A report given as (name, [(sheet, [column names], [column value lists]), ...]) into rep.
 * Returns 0, or -1 with the exception set (rep to be closed by the caller). */
static int memory_report(PyObject *spec, tl_report *rep)
{
    PyObject *name = NULL, *sheets = NULL;
    if (!PyArg_ParseTuple(spec, "UO:report", &name, &sheets))
        return -1;
    tl_mem_report_open(rep, str_item(name));
    PyObject *it = PyObject_GetIter(sheets);
    if (!it)
        return -1;
    PyObject *sh;
    int rc = 0;
    while (rc == 0 && (sh = PyIter_Next(it)) != NULL) {
        PyObject *sname = NULL, *cols = NULL, *vals = NULL;
        if (!PyArg_ParseTuple(sh, "UOO:sheet", &sname, &cols, &vals) || !PyList_Check(cols) || !PyList_Check(vals) ||
            PyList_Size(cols) != PyList_Size(vals)) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_TypeError, "a sheet is (name, [columns], [values per column])");
            Py_DECREF(sh);
            rc = -1;
            break;
        }
        Py_ssize_t ncols = PyList_Size(cols), nrows = -1;
        const char **names = tl_xcalloc((size_t)(ncols ? ncols : 1), sizeof *names);
        for (Py_ssize_t c = 0; c < ncols && rc == 0; c++) {
            PyObject *cn = PyList_GetItem(cols, c), *cv = PyList_GetItem(vals, c);
            names[c] = str_item(cn);
            if (!names[c] || !PyList_Check(cv) || (nrows >= 0 && PyList_Size(cv) != nrows)) {
                if (!PyErr_Occurred())
                    PyErr_Format(PyExc_TypeError, "sheet '%U': column %zd needs a str name and a list of as many "
                                 "values as the others", sname, c);
                rc = -1;
            }
            nrows = PyList_Check(cv) ? PyList_Size(cv) : nrows;
        }
        if (rc == 0) {
            const char *sn = str_item(sname);
            tl_builder *b = sn ? tl_mem_report_begin_sheet(rep, sn, names, (size_t)ncols) : NULL;
            if (!b)
                rc = -1;
            for (Py_ssize_t r = 0; rc == 0 && r < (nrows < 0 ? 0 : nrows); r++) {
                for (Py_ssize_t c = 0; c < ncols && rc == 0; c++) {
                    tl_cell cell;
                    if (value_cell(rep, PyList_GetItem(PyList_GetItem(vals, c), r), &cell) != 0)
                        rc = -1;
                    else
                        tl_builder_cell(b, (size_t)c, cell);
                }
                if (rc == 0)
                    tl_builder_end_row(b, 1);
                if (b->too_big)
                    break;
            }
            tl_error err = {0};
            if (rc == 0 && tl_mem_report_end_sheet(rep, &err) != 0) {
                PyErr_SetString(InputError, err.msg);
                rc = -1;
            }
        }
        free(names);
        Py_DECREF(sh);
    }
    Py_DECREF(it);
    return rc == 0 && PyErr_Occurred() ? -1 : rc;
}

/* compare(inputs, names=None, sheets=None, captures=None, ...) -> Comparison.  An input is
 * a path, or (name, sheets) for a report in memory (see memory_report). */
static PyObject *py_compare(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"inputs", "names", "sheets", "captures", "gpu_arch", "tracelens_keys", "min_delta_ms",
                             "min_delta_pct", "top", "confidence", "fdr", "fail_pct", "min_time_ms",
                             "inference", "parent_module", "num_kernels", "pseudo_ops", "tracediff_dir",
                             "summary_md", "summary_json", "no_summary", "quiet", NULL};
    PyObject *inputs = NULL, *names = Py_None, *sheets = Py_None, *captures = Py_None, *gpu = Py_None,
             *tddir = Py_None, *smd = Py_None, *sjson = Py_None;
    int tlkeys = 0, fdr = 0, inference = 0, parent = 0, numk = 0, pseudo = 0, nosum = 0, quiet = 0;
    double min_delta_ms = 0, min_delta_pct = 0, confidence = 0, fail_pct = -1, min_ms = 1;
    Py_ssize_t top = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|OOOOpddndpddppppOOOpp", kwlist, &inputs, &names, &sheets, &captures,
                                     &gpu, &tlkeys, &min_delta_ms, &min_delta_pct, &top, &confidence, &fdr, &fail_pct,
                                     &min_ms, &inference, &parent, &numk, &pseudo, &tddir, &smd, &sjson, &nosum,
                                     &quiet))
        return NULL;
    PyObject *list = PySequence_List(inputs);
    if (!list)
        return NULL;
    size_t n = (size_t)PyList_Size(list);
    const char **paths = tl_xcalloc(n ? n : 1, sizeof *paths);
    tl_report *given = tl_xcalloc(n ? n : 1, sizeof *given);
    const char **namev = NULL, **capv = NULL, **sheetv = NULL;
    size_t nnames = 0, ncap = 0, nsheets = 0;
    char *p_gpu = NULL, *p_td = NULL, *p_md = NULL, *p_json = NULL;
    comparison_object *obj = NULL;
    int ok = 0;
    for (size_t i = 0; i < n; i++) {
        PyObject *x = PyList_GetItem(list, (Py_ssize_t)i);
        if (PyTuple_Check(x)) {
            if (memory_report(x, &given[i]) != 0)
                goto done;
            paths[i] = tl_xstrdup(given[i].path);
        } else {
            char *p = NULL;
            if (path_arg(x, "input", &p) != 0 || !p) {
                if (!PyErr_Occurred())
                    PyErr_SetString(PyExc_TypeError, "an input is a path or a dict of DataFrames");
                goto done;
            }
            paths[i] = p;
        }
    }
    if (str_list(names, "names", &namev, &nnames, 0) || str_list(captures, "captures", &capv, &ncap, 1) ||
        str_list(sheets, "sheets", &sheetv, &nsheets, 0) || path_arg(gpu, "gpu_arch", &p_gpu) ||
        path_arg(tddir, "tracediff_dir", &p_td) || path_arg(smd, "summary_md", &p_md) ||
        path_arg(sjson, "summary_json", &p_json))
        goto done;
    if (capv && ncap != n) {
        PyErr_Format(UsageError, "captures: %zu given for %zu inputs; give one (or None) per input", ncap, n);
        goto done;
    }
    static const char *const arg_names[6] = {"fail_on_regression", "min_time_ms", "min_delta_ms", "min_delta_pct",
                                             "top", "confidence"};
    tl_gate_args ga = {fail_pct, fail_pct != -1, min_ms, min_delta_ms, min_delta_pct, top, confidence};
    tl_error gerr = {0};
    if (tl_gate_args_check(&ga, arg_names, &gerr) != 0) {
        PyErr_SetString(UsageError, gerr.msg);
        goto done;
    }
    confidence = ga.confidence;
    compare_job cj;
    tl_compare_opts_init(&cj.o);
    unsigned named = 0;
    int all = !sheetv;
    for (size_t i = 0; i < nsheets; i++) {
        unsigned bit = tl_group_from_name(sheetv[i]);
        if (!bit) {
            PyErr_Format(UsageError, "sheets: unknown group '%s' (choose from gpu_timeline, ops_summary, "
                         "kernel_summary, ops_all, roofline, perf, all)", sheetv[i]);
            goto done;
        }
        if (bit == TL_GROUP_ALL)
            all = 1;
        else
            named |= bit;
    }
    if (sheetv && nsheets == 0) {
        PyErr_SetString(UsageError, "sheets: at least one group is needed");
        goto done;
    }
    cj.o.inputs = paths;
    cj.o.ninputs = n;
    cj.o.captures = capv;
    cj.o.given = given;
    cj.o.names = namev;
    cj.o.nnames = nnames;
    cj.o.names_given = namev != NULL;
    cj.o.gpu_arch = p_gpu;
    cj.o.tracediff_dir = p_td;
    cj.o.summary_md = p_md;
    cj.o.summary_json = p_json;
    cj.o.run = (all ? TL_GROUP_ALL : 0) | named;
    cj.o.named = named;
    cj.o.no_summary = nosum;
    cj.o.tracelens_keys = tlkeys;
    cj.o.fail_pct = fail_pct;
    cj.o.min_ms = min_ms;
    cj.o.min_delta_ms = min_delta_ms;
    cj.o.min_delta_pct = min_delta_pct;
    cj.o.top = (size_t)top;
    cj.o.confidence = confidence;
    cj.o.fdr = fdr;
    cj.o.inference = inference;
    cj.o.parent_module = parent;
    cj.o.num_kernels = numk;
    cj.o.pseudo_ops = pseudo;
    obj = PyObject_New(comparison_object, ComparisonType);
    if (!obj)
        goto done;
    memset(&obj->c, 0, sizeof obj->c);
    obj->have = 0;
    cj.c = &obj->c;
    job j = {.work = compare_work, .arg = &cj, .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER, .quiet = quiet};
    int sig = run_job(&j); /* the run owns the given reports from here */
    memset(given, 0, n * sizeof *given);
    obj->have = !j.oom; /* out of memory: the run's state is half made, abandoned */
    if (j.oom) {
        if (!PyErr_Occurred())
            PyErr_SetString(OutOfMemoryError, j.oom_msg);
    } else if (sig != 0 || obj->c.status == TL_RUN_CANCELLED) {
        if (!PyErr_Occurred())
            PyErr_SetNone(PyExc_KeyboardInterrupt);
    } else if (obj->c.status != TL_RUN_OK && obj->c.status != TL_RUN_REGRESSION) {
        raise_status(obj->c.status, obj->c.err.msg, obj->c.output_failed);
    } else {
        ok = 1;
    }
done:
    for (size_t i = 0; i < n; i++) {
        if (given[i].ops)
            tl_report_close(&given[i]);
        free((char *)paths[i]);
    }
    free(paths);
    free(given);
    free_strs(namev, nnames);
    free_strs(capv, ncap);
    free_strs(sheetv, nsheets);
    free(p_gpu);
    free(p_td);
    free(p_md);
    free(p_json);
    Py_DECREF(list);
    if (!ok) {
        Py_XDECREF((PyObject *)obj);
        return NULL;
    }
    return (PyObject *)obj;
}

static void comparison_dealloc(PyObject *self)
{
    comparison_object *o = (comparison_object *)self;
    if (o->have)
        tl_comparison_free(&o->c);
    PyTypeObject *tp = Py_TYPE(self);
    freefunc f = (freefunc)PyType_GetSlot(tp, Py_tp_free);
    f(self);
    Py_DECREF(tp);
}

static PyObject *cmp_sheets(PyObject *self, PyObject *unused)
{
    comparison_object *o = (comparison_object *)self;
    return o->c.results ? results_object(o->c.results) : PyList_New(0);
}

static PyObject *buf_result(tl_buf *b)
{
    PyObject *s = PyUnicode_DecodeUTF8(b->data ? b->data : "", (Py_ssize_t)b->len, "replace");
    tl_buf_free(b);
    return s;
}

static PyObject *cmp_summary_json(PyObject *self, PyObject *unused)
{
    tl_buf b = {0};
    tl_comparison_summary_json(&((comparison_object *)self)->c, &b);
    return buf_result(&b);
}

static PyObject *cmp_summary_md(PyObject *self, PyObject *unused)
{
    tl_buf b = {0};
    tl_comparison_summary_md(&((comparison_object *)self)->c, &b);
    return buf_result(&b);
}

static PyObject *cmp_summary_text(PyObject *self, PyObject *args)
{
    int color = 0;
    if (!PyArg_ParseTuple(args, "|p", &color))
        return NULL;
    tl_buf b = {0};
    tl_comparison_summary_text(&((comparison_object *)self)->c, color, &b);
    return buf_result(&b);
}

static PyObject *cmp_tags(PyObject *self, PyObject *unused)
{
    comparison_object *o = (comparison_object *)self;
    PyObject *l = PyList_New((Py_ssize_t)o->c.nsides);
    for (size_t i = 0; l && i < o->c.nsides; i++)
        PyList_SetItem(l, (Py_ssize_t)i, PyUnicode_DecodeUTF8(o->c.tags[i], (Py_ssize_t)strlen(o->c.tags[i]), "replace"));
    return l;
}

static PyObject *cmp_status(PyObject *self, PyObject *unused)
{
    return PyLong_FromLong(((comparison_object *)self)->c.status);
}

typedef struct write_job {
    tl_comparison *c;
    const char *xlsx, *csv_dir;
    tl_error err;
    int rc;
} write_job;

static void write_work(job *j)
{
    write_job *w = j->arg;
    w->rc = tl_comparison_write(w->c, w->xlsx, w->csv_dir, &j->cancel, &w->err);
}

static PyObject *cmp_write(PyObject *self, PyObject *args)
{
    PyObject *x = Py_None, *d = Py_None;
    if (!PyArg_ParseTuple(args, "|OO", &x, &d))
        return NULL;
    char *px = NULL, *pd = NULL;
    if (path_arg(x, "path", &px) || path_arg(d, "dir", &pd)) {
        free(px);
        return NULL;
    }
    write_job w = {&((comparison_object *)self)->c, px, pd, {0}, 0};
    job j = {.work = write_work, .arg = &w, .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER, .quiet = 0};
    int sig = run_job(&j); /* Ctrl-C: nothing written */
    free(px);
    free(pd);
    if (j.oom && !PyErr_Occurred())
        PyErr_SetString(OutOfMemoryError, j.oom_msg);
    if (sig != 0 || j.oom)
        return NULL;
    if (w.rc != 0)
        return raise_status(TL_RUN_FAILED, w.err.msg, 1);
    Py_RETURN_NONE;
}

static PyObject *cmp_gate(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"pct", "min_time_ms", "min_delta_ms", "min_delta_pct", "top", "confidence", "fdr", NULL};
    double pct = 0, min_ms = 1, dms = 0, dpct = 0, conf = 0;
    Py_ssize_t top = 0;
    int fdr = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "d|dddndp", kwlist, &pct, &min_ms, &dms, &dpct, &top, &conf, &fdr))
        return NULL;
    static const char *const arg_names[6] = {"pct", "min_time_ms", "min_delta_ms", "min_delta_pct", "top",
                                             "confidence"};
    tl_gate_args ga = {pct, 1, min_ms, dms, dpct, top, conf};
    tl_error gerr = {0};
    if (tl_gate_args_check(&ga, arg_names, &gerr) != 0) {
        PyErr_SetString(UsageError, gerr.msg);
        return NULL;
    }
    conf = ga.confidence;
    tl_gate g = {pct, min_ms, dms, dpct, (size_t)top, NULL, conf, fdr};
    tl_buf v = {0};
    int failed = tl_comparison_gate(&((comparison_object *)self)->c, &g, &v);
    PyObject *text = buf_result(&v);
    return text ? Py_BuildValue("(ON)", failed ? Py_True : Py_False, text) : NULL;
}

static PyMethodDef cmp_methods[] = {
    {"sheets", cmp_sheets, METH_NOARGS, "the result sheets: [(name, columns, data)]"},
    {"summary_json", cmp_summary_json, METH_NOARGS, "the summary as --summary-json writes it"},
    {"summary_md", cmp_summary_md, METH_NOARGS, "the summary as --summary-md writes it"},
    {"summary_text", cmp_summary_text, METH_VARARGS, "the summary as tlcompare prints it"},
    {"tags", cmp_tags, METH_NOARGS, "the sides' tags"},
    {"status", cmp_status, METH_NOARGS, "0, or 3 when the run's gate failed"},
    {"write", cmp_write, METH_VARARGS, "write(xlsx=None, csv_dir=None)"},
    {"gate", (PyCFunction)(void (*)(void))cmp_gate, METH_VARARGS | METH_KEYWORDS, "gate(pct, ...) -> (failed, text)"},
    {NULL, NULL, 0, NULL},
};

static PyType_Slot cmp_slots[] = {
    {Py_tp_dealloc, comparison_dealloc},
    {Py_tp_methods, cmp_methods},
    {Py_tp_doc, "a comparison's results, kept by the library"},
    {0, NULL},
};

static PyType_Spec cmp_spec = {"tlcompare._core.Comparison", sizeof(comparison_object), 0, Py_TPFLAGS_DEFAULT, cmp_slots};

static PyObject *py_version(PyObject *self, PyObject *unused)
{
#ifdef TL_VERSION
    return PyUnicode_FromString(TL_VERSION);
#else
    return PyUnicode_FromString("dev");
#endif
}

static PyObject *py_none_is_missing(PyObject *self, PyObject *arg)
{
    int v = PyObject_IsTrue(arg);
    if (v < 0)
        return NULL;
    none_is_missing = v;
    Py_RETURN_NONE;
}

/* os.register_at_fork(after_in_child=...): a fork made while another thread ran a
 * comparison copies the run lock held, by a thread the child does not have; the lock and
 * the library's process-wide state start afresh in the child. */
static PyObject *py_after_fork(PyObject *self, PyObject *unused)
{
    pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
    memcpy(&one_run, &fresh, sizeof fresh);
    tl_run_after_fork();
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"_after_fork", py_after_fork, METH_NOARGS, "reset the run lock in a forked child"},
    {"set_none_is_missing", py_none_is_missing, METH_O, "whether the text None reads as NaN (pandas >= 2)"},
    {"report", (PyCFunction)(void (*)(void))py_report, METH_VARARGS | METH_KEYWORDS,
     "report(trace, ...) -> ([(sheet, names, columns)], inference line)"},
    {"compare", (PyCFunction)(void (*)(void))py_compare, METH_VARARGS | METH_KEYWORDS, "compare(inputs, ...) -> Comparison"},
    {"version", py_version, METH_NOARGS, "the library's version"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "tlcompare._core", "tlcompare's C library", -1, methods,
                                    NULL, NULL, NULL, NULL};

static PyObject *new_error(PyObject *m, const char *name, PyObject *base, const char *doc)
{
    char full[64];
    snprintf(full, sizeof full, "tlcompare.%s", name);
    PyObject *e = PyErr_NewExceptionWithDoc(full, doc, base, NULL);
    if (e && PyModule_AddObject(m, name, e) == 0)
        Py_INCREF(e); /* the module's reference taken; ours kept */
    return e;
}

PyMODINIT_FUNC PyInit__core(void)
{
    PyObject *m = PyModule_Create(&module);
    if (!m)
        return NULL;
    tl_progname = "tlcompare";
    Error = new_error(m, "Error", PyExc_Exception, "A tlcompare run failed: the message is the command line's.");
    InputError = Error ? new_error(m, "InputError", Error, "An input cannot be read (bad file, missing sheet).") : NULL;
    UsageError = Error ? new_error(m, "UsageError", Error, "The arguments do not make a run.") : NULL;
    OutputError = Error ? new_error(m, "OutputError", Error, "An output cannot be written.") : NULL;
    /* both a tlcompare.Error and the builtin MemoryError: either except clause catches it */
    PyObject *bases = Error ? PyTuple_Pack(2, Error, PyExc_MemoryError) : NULL;
    OutOfMemoryError = bases ? new_error(m, "OutOfMemoryError", bases, "A run ran out of memory; its outputs were "
                                         "removed, the memory it had taken is not given back.") : NULL;
    Py_XDECREF(bases);
    ComparisonType = (PyTypeObject *)PyType_FromSpec(&cmp_spec);
    if (!Error || !InputError || !UsageError || !OutputError || !OutOfMemoryError || !ComparisonType) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
