/*
 * output.c - atomic outputs and their cleanup (see output.h).
 */
#include "io/output.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * Tracked temporary paths, newest last.  The signal handler reads this list, so it is a
 * fixed array of pointers published by bumping a sig_atomic_t count after the slot is
 * filled; the handler only calls unlink(), rmdir() and _exit(), which are async-signal-safe.
 */
#define MAX_TRACKED 4096
static char *tracked[MAX_TRACKED];
static volatile sig_atomic_t ntracked;

void tl_output_track(const char *path)
{
    if (ntracked < MAX_TRACKED) {
        tracked[ntracked] = tl_xstrdup(path);
        ntracked = ntracked + 1;
    }
}

static void untrack(const char *path)
{
    for (int i = 0; i < ntracked; i++) {
        if (tracked[i] && strcmp(tracked[i], path) == 0) {
            char *p = tracked[i];
            tracked[i] = NULL;
            free(p);
        }
    }
}

static void remove_tracked(void)
{
    /* newest first: files inside a temporary directory go before the directory */
    for (int i = ntracked; i-- > 0;) {
        if (tracked[i] && unlink(tracked[i]) != 0)
            rmdir(tracked[i]);
    }
}

void tl_output_cleanup(void)
{
    remove_tracked();
    for (int i = 0; i < ntracked; i++) {
        free(tracked[i]);
        tracked[i] = NULL;
    }
    ntracked = 0;
}

static void on_signal(int sig)
{
    remove_tracked();
    _exit(128 + sig);
}

void tl_output_install_cleanup(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
}

/* "<dir>/.<base>.tmp-XXXXXX" for target "<dir>/<base>". */
static char *temp_template(const char *target)
{
    size_t slash, n;
    tl_path_base(target, &slash, &n);
    tl_buf b = {0};
    tl_buf_add(&b, target, slash);
    tl_buf_addc(&b, '.');
    tl_buf_add(&b, target + slash, n - slash);
    tl_buf_adds(&b, ".tmp-XXXXXX");
    return b.data;
}

/*
 * A target that can never be committed is refused before anything is written: the
 * outputs are moved into place one after another, so finding out at the second that it
 * cannot go there would leave the first one replaced.
 */
static int check_target(const char *target, int want_dir, tl_error *err)
{
    struct stat st;
    if (stat(target, &st) != 0)
        return 0; /* absent: it will be created */
    if (want_dir && !S_ISDIR(st.st_mode)) {
        tl_error_set(err, "%s: exists and is not a directory", target);
        return -1;
    }
    if (!want_dir && S_ISDIR(st.st_mode)) {
        tl_error_set(err, "%s: is a directory", target);
        return -1;
    }
    return 0;
}

/* A new temporary file (dir = 0) or directory (dir = 1) beside `target`, tracked. */
static char *make_temp(const char *target, int dir, tl_error *err)
{
    if (check_target(target, dir, err) != 0)
        return NULL;
    char *tmp = temp_template(target);
    /* block signals while it exists but is not yet tracked */
    sigset_t all, old;
    sigfillset(&all);
    sigprocmask(SIG_BLOCK, &all, &old);
    int fd = -1, made = dir ? mkdtemp(tmp) != NULL : (fd = mkstemp(tmp)) >= 0;
    if (made)
        tl_output_track(tmp);
    sigprocmask(SIG_SETMASK, &old, NULL);
    if (!made) {
        tl_error_set(err, dir ? "%s: cannot create a directory beside it: %s"
                              : "%s: cannot create a file in its directory: %s",
                     target, strerror(errno));
        free(tmp);
        return NULL;
    }
    /* mkstemp and mkdtemp make 0600 and 0700; an output should have the usual permissions */
    mode_t mask = umask(0);
    umask(mask);
    if (dir) {
        chmod(tmp, 0777 & ~mask);
    } else {
        fchmod(fd, 0666 & ~mask);
        close(fd);
    }
    return tmp;
}

char *tl_output_temp_file(const char *target, tl_error *err) { return make_temp(target, 0, err); }

char *tl_output_temp_dir(const char *target, tl_error *err) { return make_temp(target, 1, err); }

int tl_output_commit_file(const char *tmp, const char *target, tl_error *err)
{
    if (rename(tmp, target) != 0) {
        tl_error_set(err, "%s: cannot move the finished file into place: %s", target, strerror(errno));
        return -1;
    }
    untrack(tmp);
    return 0;
}

int tl_output_commit_dir(const char *tmp, const char *target, const char *const *names, size_t n,
                         tl_error *err)
{
    struct stat st;
    if (stat(target, &st) != 0) {
        /* No directory yet: the whole temporary one becomes it in one step. */
        if (rename(tmp, target) != 0) {
            tl_error_set(err, "%s: cannot create the directory: %s", target, strerror(errno));
            return -1;
        }
        for (size_t i = 0; i < n; i++) {
            char *p = tl_xmalloc(strlen(tmp) + strlen(names[i]) + 2);
            sprintf(p, "%s/%s", tmp, names[i]);
            untrack(p);
            free(p);
        }
        untrack(tmp);
        return 0;
    }
    if (!S_ISDIR(st.st_mode)) {
        tl_error_set(err, "%s: exists and is not a directory", target);
        return -1;
    }
    /* An existing directory may hold the user's other files: move ours in one by one,
     * each rename atomic, all of them complete already. */
    for (size_t i = 0; i < n; i++) {
        size_t lt = strlen(tmp), lg = strlen(target), ln = strlen(names[i]);
        char *from = tl_xmalloc(lt + ln + 2), *to = tl_xmalloc(lg + ln + 2);
        sprintf(from, "%s/%s", tmp, names[i]);
        sprintf(to, "%s/%s", target, names[i]);
        int rc = rename(from, to);
        if (rc == 0)
            untrack(from);
        else
            tl_error_set(err, "%s: cannot move into place: %s", to, strerror(errno));
        free(from);
        free(to);
        if (rc != 0)
            return -1;
    }
    rmdir(tmp);
    untrack(tmp);
    return 0;
}
