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
 * and the call raises KeyboardInterrupt.  Once a run's outputs are committed (its last
 * step) it is done: the call returns, and Python raises the KeyboardInterrupt right
 * after it (finished_despite_signal).  One run at a time: the library keeps a little
 * process-wide state (the timings, the warnings' quiet flag).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "base/numfmt.h"
#include "base/util.h"
#include "compare/groups.h"
#include "io/cleanup.h"
#include "run/compare_args.h"
#include "run/memreport.h"
#include "run/report_args.h"
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

/* A run that finished although Ctrl-C came meanwhile (after its last check: its outputs
 * are committed, or it had none to write): the call returns its result, and the
 * KeyboardInterrupt the handler raised is delivered again, so that Python raises it
 * right after the call.  A KeyboardInterrupt raised by a call thus always means that
 * the call wrote nothing.  1 when the caller is to return its result; 0 when another
 * exception (a handler of the caller's) stays raised. */
static int finished_despite_signal(void)
{
    if (!PyErr_Occurred())
        return 1;
    if (!PyErr_ExceptionMatches(PyExc_KeyboardInterrupt))
        return 0;
    PyErr_Clear();
    PyErr_SetInterrupt();
    return 1;
}

typedef struct job {
    void (*work)(struct job *);
    void *arg;
    tl_cancel cancel; /* the run's flag, passed down to every loop it stops (base/cancel.h) */
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
        /* the run's helpers still at work stop at their next check (their state is
         * abandoned with the run's); its temporaries go now */
        tl_cancel_set(&j->cancel);
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
    atomic_init(&j->cancel, 0);
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
                tl_cancel_set(&j->cancel);
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

/* ---- keyword arguments through a tool's option table (run/options.h) -------------- */

/* The strings made for a call's arguments, freed together. */
typedef struct strings {
    char **v;
    size_t n, cap;
} strings;

static const char *keep(strings *s, char *p)
{
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 16;
        s->v = tl_xrealloc(s->v, s->cap * sizeof *s->v);
    }
    s->v[s->n++] = p;
    return p;
}

static void strings_free(strings *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->v[i]);
    free(s->v);
}

/* A LIST row from a str (one item) or a sequence of paths (None items where the row allows). */
static int list_value(const tl_optdef *d, void *args, PyObject *v, strings *keepv)
{
    tl_opts_list_begin(d, args);
    if (PyUnicode_Check(v)) {
        char *p = NULL;
        if (path_arg(v, d->key, &p) != 0)
            return -1;
        tl_opts_list_push(d, args, keep(keepv, p));
        return 0;
    }
    PyObject *fast = PySequence_List(v);
    if (!fast)
        return -1;
    for (Py_ssize_t i = 0; i < PyList_Size(fast); i++) {
        PyObject *x = PyList_GetItem(fast, i);
        char *p = NULL;
        if (x == Py_None && (d->where & TL_OPT_NONES)) {
            tl_opts_list_push(d, args, NULL);
            continue;
        }
        if (path_arg(x, d->key, &p) != 0 || !p) {
            if (!PyErr_Occurred())
                PyErr_Format(PyExc_TypeError, "%s: a str is needed", d->key);
            Py_DECREF(fast);
            return -1;
        }
        tl_opts_list_push(d, args, keep(keepv, p));
    }
    Py_DECREF(fast);
    return 0;
}

/* One keyword argument into args by its row's kind: 0, or -1 with the exception set
 * (UsageError for a value out of the option's range, as the command line's). */
static int kw_value(const tl_optdef *d, void *args, PyObject *v, strings *keepv)
{
    tl_error err = {0};
    int rc = 0;
    switch (d->kind) {
    case TL_OPT_FLAG: {
        int on = PyObject_IsTrue(v);
        if (on < 0)
            return -1;
        return tl_opts_set_flag(d, args, on);
    }
    case TL_OPT_TEXT: {
        char *p = NULL;
        if (path_arg(v, d->key, &p) != 0)
            return -1;
        rc = tl_opts_set_text(d, args, p ? keep(keepv, p) : NULL, &err);
        break;
    }
    case TL_OPT_NUMBER: {
        if (PyBool_Check(v) || !PyNumber_Check(v)) {
            PyErr_Format(UsageError, "%s needs %s, got %R", tl_opts_label(d), d->needs, v);
            return -1;
        }
        double x = PyFloat_AsDouble(v);
        if (x == -1.0 && PyErr_Occurred())
            return -1;
        rc = tl_opts_set_number(d, args, x, &err);
        break;
    }
    case TL_OPT_LONG:
    case TL_OPT_SIZE: {
        int overflow = 0;
        long long x = PyLong_Check(v) && !PyBool_Check(v) ? PyLong_AsLongLongAndOverflow(v, &overflow) : -1;
        if (!PyLong_Check(v) || PyBool_Check(v) || overflow) {
            PyErr_Format(UsageError, "%s needs %s, got %R", tl_opts_label(d), d->needs, v);
            return -1;
        }
        rc = tl_opts_set_whole(d, args, x, &err);
        break;
    }
    case TL_OPT_LIST:
        return list_value(d, args, v, keepv);
    default:
        PyErr_Format(PyExc_TypeError, "%s is no keyword argument", d->key);
        return -1;
    }
    if (rc != 0)
        PyErr_SetString(UsageError, err.msg);
    return rc ? -1 : 0;
}

/* Every keyword argument of `kw` (a dict; None values: the default) through the tool's
 * table: 0, or -1 with the exception set. */
static int apply_kwargs(const tl_tool *t, const char *fn, PyObject *kw, void *args, strings *keepv)
{
    PyObject *key, *value;
    Py_ssize_t pos = 0;
    if (!kw || kw == Py_None)
        return 0;
    if (!PyDict_Check(kw)) {
        PyErr_Format(PyExc_TypeError, "%s(): the options come as a dict", fn);
        return -1;
    }
    while (PyDict_Next(kw, &pos, &key, &value)) {
        const char *k = PyUnicode_Check(key) ? PyUnicode_AsUTF8AndSize(key, NULL) : NULL;
        const tl_optdef *d = k ? tl_opts_find_key(t, k) : NULL;
        if (!d) {
            PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword argument %R", fn, key);
            return -1;
        }
        if (value != Py_None && kw_value(d, args, value, keepv) != 0)
            return -1;
    }
    return 0;
}

/* options(tool) -> [(keyword or None, kind, (spellings...), where)]: the table, for the
 * tests that hold the signatures, --help and the manual to it. */
static PyObject *py_options(PyObject *self, PyObject *arg)
{
    static const char *const kinds[] = {"flag", "text", "number", "long", "size", "list", "ignored", "help",
                                        "version", "heading"};
    const char *name = PyUnicode_Check(arg) ? PyUnicode_AsUTF8AndSize(arg, NULL) : NULL;
    const tl_tool *t = name && !strcmp(name, "tlcompare") ? &tl_compare_tool
                       : name && !strcmp(name, "tlreport") ? &tl_report_tool
                                                            : NULL;
    if (!t) {
        PyErr_SetString(PyExc_ValueError, "options(): 'tlcompare' or 'tlreport'");
        return NULL;
    }
    PyObject *list = PyList_New(0);
    for (size_t i = 0; list && i < t->nopts; i++) {
        const tl_optdef *d = &t->opts[i];
        PyObject *sp = PyList_New(0);
        for (int k = 0; sp && k < TL_OPT_MAX_SPELLINGS && d->cli[k]; k++) {
            PyObject *u = PyUnicode_FromString(d->cli[k]);
            if (!u || PyList_Append(sp, u) != 0)
                Py_CLEAR(sp);
            Py_XDECREF(u);
        }
        PyObject *row = sp ? Py_BuildValue("(zsNI)", d->key, kinds[d->kind], sp, d->where) : NULL;
        if (!row || PyList_Append(list, row) != 0)
            Py_CLEAR(list);
        Py_XDECREF(row);
    }
    return list;
}

/* The check's status as the exception the command line's exit status stands for. */
static int check_failed(int rc, const tl_error *err)
{
    if (rc == 0)
        return 0;
    raise_status(rc, err->msg, 0);
    return -1;
}

/* ---- report() ------------------------------------------------------------------------ */

/* A call's state is on the heap, the run's job in it: after an allocation failure the
 * run's helpers may still be at work, reading it (its arguments, its strings, its cancel
 * flag), so it is then abandoned, never freed. */
typedef struct report_job {
    job j;
    strings keepv;    /* the texts the arguments point to */
    tl_report_args a; /* run.output / run.csv_dir stay NULL: written after the sheets are kept */
    tl_run_report r;
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
    const tl_strlist *only = &rj->a.only, *drop = &rj->a.drop;
    for (size_t k = 0; only->given && k < only->n; k++) {
        int found = 0;
        for (size_t i = 0; i < res->n && !found; i++)
            found = !strcmp(res->items[i].name, only->v[k]);
        if (!found) {
            tl_buf have = {0};
            for (size_t i = 0; i < res->n; i++)
                tl_buf_printf(&have, "%s%s", i ? ", " : "", res->items[i].name);
            tl_error_set(&rj->r.err, "%s: no sheet '%s' in its report (it has %s)", rj->a.run.trace, only->v[k],
                         tl_buf_cstr(&have));
            tl_buf_free(&have);
            return -1;
        }
    }
    size_t w = 0;
    for (size_t i = 0; i < res->n; i++) {
        tl_result *r = &res->items[i];
        if ((only->given && !listed(only->v, only->n, r->name)) || listed(drop->v, drop->n, r->name))
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
    rj->a.run.cancel = &j->cancel;
    tl_run_report_build(&rj->a.run, &rj->r);
    if (rj->r.status == TL_RUN_OK && select_sheets(rj) != 0)
        rj->r.status = TL_RUN_FAILED;
    if (rj->r.status == TL_RUN_OK && (rj->a.output || rj->a.csv_dir))
        rj->wrc = tl_run_report_write(&rj->r, rj->a.output, rj->a.csv_dir, &j->cancel, &rj->werr);
    /* a cancel after the write's last check finds the outputs committed: the run is done */
}

/* report(trace, {keyword: value}) -> ([(sheet, names, columns)], inference line): the
 * keywords are tlreport's table's (run/report_args.c). */
static PyObject *py_report(PyObject *self, PyObject *args)
{
    PyObject *trace = NULL, *kw = NULL;
    if (!PyArg_ParseTuple(args, "O|O:report", &trace, &kw))
        return NULL;
    report_job *rj = calloc(1, sizeof *rj);
    if (!rj)
        return PyErr_NoMemory();
    tl_report_args_init(&rj->a);
    PyObject *ret = NULL;
    char *p_trace = NULL;
    tl_error err = {0};
    if (path_arg(trace, "trace", &p_trace) || !p_trace) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_TypeError, "report(): a trace path is needed");
        goto done;
    }
    tl_strlist_push(&rj->a.traces, keep(&rj->keepv, p_trace));
    if (apply_kwargs(&tl_report_tool, "report", kw, &rj->a, &rj->keepv) != 0)
        goto done;
    if (check_failed(tl_report_args_check(&rj->a, &err), &err))
        goto done;
    rj->j = (job){.work = report_work, .arg = rj, .quiet = rj->a.quiet};
    int sig = run_job(&rj->j);
    if (rj->j.oom) {
        if (!PyErr_Occurred())
            PyErr_SetString(OutOfMemoryError, rj->j.oom_msg);
        return NULL; /* the run's state is half made: abandoned, with the call's */
    }
    if (sig != 0 && rj->r.status == TL_RUN_OK && rj->wrc == 0 && finished_despite_signal())
        sig = 0;
    if (sig != 0 || rj->r.status == TL_RUN_CANCELLED) {
        if (!PyErr_Occurred())
            PyErr_SetNone(PyExc_KeyboardInterrupt);
    } else if (rj->r.status != TL_RUN_OK) {
        raise_status(rj->r.status, rj->r.err.msg, 0);
    } else if (rj->wrc != 0) {
        raise_status(TL_RUN_FAILED, rj->werr.msg, 1);
    } else {
        PyObject *sheets = results_object(&rj->r.results);
        ret = sheets ? Py_BuildValue("(Ns)", sheets, tl_buf_cstr(&rj->r.infer_line)) : NULL;
    }
    tl_run_report_free(&rj->r);
done:
    tl_report_args_free(&rj->a);
    strings_free(&rj->keepv);
    free(rj);
    return ret;
}

/* ---- compare() ----------------------------------------------------------------------- */

typedef struct comparison_object {
    PyObject_HEAD
    tl_comparison c;
    int have;
} comparison_object;

static PyTypeObject *ComparisonType;

/* On the heap, as report_job is, and abandoned with the comparison it fills after an
 * allocation failure. */
typedef struct compare_job {
    job j;
    strings keepv;
    tl_compare_args a;
    tl_comparison *c;
} compare_job;

static void compare_work(job *j)
{
    compare_job *cj = j->arg;
    cj->a.run.cancel = &j->cancel;
    tl_compare_run(&cj->a.run, cj->c);
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

/* compare(inputs, {keyword: value}) -> Comparison: the keywords are tlcompare's table's
 * (run/compare_args.c).  An input is a path, or (name, sheets) for a report in memory (see
 * memory_report). */
static PyObject *py_compare(PyObject *self, PyObject *args)
{
    PyObject *inputs = NULL, *kw = NULL;
    if (!PyArg_ParseTuple(args, "O|O:compare", &inputs, &kw))
        return NULL;
    PyObject *list = PySequence_List(inputs);
    if (!list)
        return NULL;
    size_t n = (size_t)PyList_Size(list);
    compare_job *cj = calloc(1, sizeof *cj);
    tl_report *given = calloc(n ? n : 1, sizeof *given);
    if (!cj || !given) {
        free(cj);
        free(given);
        Py_DECREF(list);
        return PyErr_NoMemory();
    }
    tl_compare_args_init(&cj->a);
    cj->a.run.output = NULL; /* kept: Comparison.to_excel writes later */
    comparison_object *obj = NULL;
    tl_error err = {0};
    int ok = 0;
    for (size_t i = 0; i < n; i++) {
        PyObject *x = PyList_GetItem(list, (Py_ssize_t)i);
        char *p = NULL;
        if (PyTuple_Check(x)) {
            if (memory_report(x, &given[i]) != 0)
                goto done;
            p = tl_xstrdup(given[i].path);
        } else if (path_arg(x, "input", &p) != 0 || !p) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_TypeError, "an input is a path or a dict of DataFrames");
            goto done;
        }
        tl_strlist_push(&cj->a.inputs, keep(&cj->keepv, p));
    }
    cj->a.run.given = given;
    if (apply_kwargs(&tl_compare_tool, "compare", kw, &cj->a, &cj->keepv) != 0)
        goto done;
    if (check_failed(tl_compare_args_check(&cj->a, &err), &err))
        goto done;
    obj = PyObject_New(comparison_object, ComparisonType);
    if (!obj)
        goto done;
    memset(&obj->c, 0, sizeof obj->c);
    obj->have = 0;
    cj->c = &obj->c;
    cj->j = (job){.work = compare_work, .arg = cj, .quiet = cj->a.quiet};
    int sig = run_job(&cj->j); /* the run owns the given reports from here */
    if (cj->j.oom) {
        /* the run's state is half made: abandoned, with the call's and the object it
         * was filling (never freed: the run's helpers may still read them) */
        if (!PyErr_Occurred())
            PyErr_SetString(OutOfMemoryError, cj->j.oom_msg);
        Py_DECREF(list);
        return NULL;
    }
    memset(given, 0, n * sizeof *given);
    obj->have = 1;
    if (sig != 0 && (obj->c.status == TL_RUN_OK || obj->c.status == TL_RUN_REGRESSION) &&
        finished_despite_signal())
        sig = 0;
    if (sig != 0 || obj->c.status == TL_RUN_CANCELLED) {
        if (!PyErr_Occurred())
            PyErr_SetNone(PyExc_KeyboardInterrupt);
    } else if (obj->c.status != TL_RUN_OK && obj->c.status != TL_RUN_REGRESSION) {
        raise_status(obj->c.status, obj->c.err.msg, obj->c.output_failed);
    } else {
        ok = 1;
    }
done:
    /* a failed run's comparison first: freeing it joins the threads it left reading the
     * call's state (the alignment of two traces, which reads the cancel flag) */
    if (!ok)
        Py_XDECREF((PyObject *)obj);
    for (size_t i = 0; i < n; i++)
        if (given[i].ops)
            tl_report_close(&given[i]);
    free(given);
    tl_compare_args_free(&cj->a);
    strings_free(&cj->keepv);
    free(cj);
    Py_DECREF(list);
    return ok ? (PyObject *)obj : NULL;
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
    job j = {.work = write_work, .arg = &w, .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};
    int sig = run_job(&j); /* Ctrl-C before the commit: nothing written */
    free(px);
    free(pd);
    if (j.oom && !PyErr_Occurred())
        PyErr_SetString(OutOfMemoryError, j.oom_msg);
    if (!j.oom && sig != 0 && w.rc == 0 && finished_despite_signal())
        sig = 0;
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
    static const char *const arg_names[6] = {"--fail-on-regression", "--min-time-ms", "--min-delta-ms",
                                             "--min-delta-pct", "--top", "--confidence"};
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
    {"report", py_report, METH_VARARGS, "report(trace, {option: value}) -> ([(sheet, names, columns)], inference line)"},
    {"compare", py_compare, METH_VARARGS, "compare(inputs, {option: value}) -> Comparison"},
    {"options", py_options, METH_O, "options(tool) -> [(keyword, kind, spellings, where)]: the option table"},
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
