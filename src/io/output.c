/*
 * output.c - atomic outputs, committed together, and their cleanup (see output.h).
 */
#include "io/output.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
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

static void track(const char *path)
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
    tl_set_fatal_cleanup(remove_tracked); /* out of memory: the same clean-up */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
}


struct tl_output {
    char *target;  /* as given, for messages */
    char *path;    /* where it goes: the target with the links of its last component followed */
    char *tmp;     /* the temporary file or directory */
    int dir;       /* a directory of files */
    int through;   /* a FIFO or character device: written through, never renamed over */
    int inside;    /* dir: the temporary directory is inside the existing target */
    char **names;  /* dir: the files written into tmp */
    size_t nnames, cap;
    int fd;        /* through: the target, opened by the commit's checks */
    int committed;
    char **made;   /* the missing directories above the target, made for it (outermost first) */
    size_t nmade, cap_made;
};

/* A file name has at most NAME_MAX bytes; the temporary name adds these. */
#define TEMP_SUFFIX ".tmp-XXXXXX"
#define TEMP_EXTRA (1 + sizeof TEMP_SUFFIX - 1)

/* "<dir>/.<name>.tmp-XXXXXX": `name` cut (at a character boundary) so that the whole
 * fits in a file name even when `name` itself is as long as one may be. */
static char *temp_template(const char *dir, size_t dirlen, const char *name, size_t n)
{
    size_t room = NAME_MAX - TEMP_EXTRA;
    if (n > room) {
        n = room;
        while (n > 0 && ((unsigned char)name[n] & 0xC0) == 0x80)
            n--;
    }
    tl_buf b = {0};
    tl_buf_add(&b, dir, dirlen);
    if (dirlen && dir[dirlen - 1] != '/')
        tl_buf_addc(&b, '/');
    tl_buf_addc(&b, '.');
    tl_buf_add(&b, name, n);
    tl_buf_adds(&b, TEMP_SUFFIX);
    return b.data;
}

/* `path` with its last component's symbolic links followed (the directories on the way
 * need not be: rename goes through them).  A dangling link gives the path it points to,
 * where the output will be created. */
static char *follow_links(const char *path)
{
    char *p = tl_xstrdup(path);
    for (int hops = 0; hops < 40; hops++) {
        struct stat st;
        char link[PATH_MAX];
        ssize_t n;
        if (lstat(p, &st) != 0 || !S_ISLNK(st.st_mode) || (n = readlink(p, link, sizeof link - 1)) < 0)
            break;
        link[n] = '\0';
        tl_buf b = {0};
        if (link[0] != '/') {
            size_t start, end;
            tl_path_base(p, &start, &end);
            tl_buf_add(&b, p, start);
        }
        tl_buf_adds(&b, link);
        free(p);
        p = b.data;
    }
    return p;
}

static const char *file_kind(mode_t m)
{
    return S_ISFIFO(m) ? "a FIFO" : S_ISCHR(m) ? "a character device" : S_ISBLK(m) ? "a block device"
         : S_ISSOCK(m) ? "a socket" : S_ISDIR(m) ? "a directory" : "not a regular file";
}

/* A new temporary file (dir = 0) or directory (dir = 1) from template `tmp`, tracked. */
static int make_temp(char *tmp, int dir)
{
    /* block signals while it exists but is not yet tracked */
    sigset_t all, old;
    sigfillset(&all);
    sigprocmask(SIG_BLOCK, &all, &old);
    int fd = -1, made = dir ? mkdtemp(tmp) != NULL : (fd = mkstemp(tmp)) >= 0;
    if (made)
        track(tmp);
    sigprocmask(SIG_SETMASK, &old, NULL);
    if (!made)
        return -1;
    /* mkstemp and mkdtemp make 0600 and 0700; an output should have the usual permissions */
    mode_t mask = umask(0);
    umask(mask);
    if (dir) {
        chmod(tmp, 0777 & ~mask);
    } else {
        fchmod(fd, 0666 & ~mask);
        close(fd);
    }
    return 0;
}

/*
 * The missing directories above o->path (its first `dirlen` bytes), made as TraceLens
 * makes them (Python's os.makedirs): `-o a/b/c.xlsx` creates a/b.  Each is tracked, so
 * that a run that fails, or is interrupted, leaves none behind; the commit keeps them.
 * Returns 0, or -1 with errno set.
 */
static int make_parents(tl_output *o, size_t dirlen)
{
    char *d = tl_xmalloc(dirlen + 1);
    memcpy(d, o->path, dirlen);
    d[dirlen] = '\0';
    while (dirlen > 1 && d[dirlen - 1] == '/')
        d[--dirlen] = '\0';
    struct stat st;
    int rc = 0;
    if (dirlen && stat(d, &st) != 0 && errno == ENOENT) {
        /* outermost first: every prefix at a '/' that does not exist yet */
        for (size_t i = 1; i <= dirlen && rc == 0; i++) {
            if (i < dirlen && d[i] != '/')
                continue;
            char c = d[i];
            d[i] = '\0';
            if (mkdir(d, 0777) == 0) {
                track(d);
                TL_GROW(o->made, o->cap_made, o->nmade + 1);
                o->made[o->nmade++] = tl_xstrdup(d);
            } else if (errno != EEXIST) {
                rc = -1;
            }
            d[i] = c;
        }
    }
    free(d);
    return rc;
}

tl_output *tl_output_new(const char *target, int dir, tl_error *err)
{
    struct stat st;
    int exists = stat(target, &st) == 0;
    if (exists && dir && !S_ISDIR(st.st_mode)) {
        tl_error_set(err, "%s: exists and is not a directory", target);
        return NULL;
    }
    if (exists && !dir && S_ISDIR(st.st_mode)) {
        tl_error_set(err, "%s: is a directory", target);
        return NULL;
    }
    int through = exists && !dir && (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode));
    if (exists && !dir && !through && !S_ISREG(st.st_mode)) {
        tl_error_set(err, "%s: is %s, not a file; refusing to write it", target, file_kind(st.st_mode));
        return NULL;
    }
    tl_output *o = tl_xcalloc(1, sizeof *o);
    o->target = tl_xstrdup(target);
    o->dir = dir;
    o->through = through;
    o->fd = -1;
    /* A pipe's /dev/stdout is a link to "pipe:[N]": opened as given, never followed. */
    o->path = through ? tl_xstrdup(target) : follow_links(target);
    size_t start, end;
    tl_path_base(o->path, &start, &end);
    if (through) {
        const char *t = getenv("TMPDIR");
        t = t && *t ? t : "/tmp";
        o->tmp = temp_template(t, strlen(t), o->path + start, end - start);
    } else if (dir && exists) {
        o->inside = 1;
        o->tmp = temp_template(o->path, strlen(o->path), o->path + start, end - start);
    } else {
        o->tmp = temp_template(o->path, start, o->path + start, end - start);
    }
    if ((!through && !o->inside && make_parents(o, start) != 0) || make_temp(o->tmp, dir) != 0) {
        const char *where = through ? "cannot stage it in the temporary directory"
                          : o->inside ? "cannot create a directory inside it"
                          : dir ? "cannot create a directory beside it" : "cannot create a file in its directory";
        tl_error_set(err, "%s: %s: %s", target, where, strerror(errno));
        free(o->tmp);
        o->tmp = NULL;
        tl_output_free(o);
        return NULL;
    }
    return o;
}

const char *tl_output_temp(const tl_output *o) { return o->tmp; }

const char *tl_output_target(const tl_output *o) { return o->target; }

static char *join(const char *dir, const char *name)
{
    char *p = tl_xmalloc(strlen(dir) + strlen(name) + 2);
    sprintf(p, "%s/%s", dir, name);
    return p;
}

char *tl_output_add(tl_output *o, const char *name)
{
    TL_GROW(o->names, o->cap, o->nnames + 1);
    o->names[o->nnames++] = tl_xstrdup(name);
    char *p = join(o->tmp, name);
    track(p);
    return p;
}

/* Flush a file or directory to disk.  File systems that cannot (EINVAL) need not. */
static int sync_path(const char *path, int dir)
{
    int fd = open(path, O_RDONLY | (dir ? O_DIRECTORY : 0) | O_CLOEXEC);
    if (fd < 0)
        return -1;
    int rc = fsync(fd);
    if (rc != 0 && (errno == EINVAL || errno == EROFS))
        rc = 0;
    int e = errno;
    close(fd);
    errno = e;
    return rc;
}

/* The directory holding `path`, flushed so that a rename into it survives a power cut. */
static void sync_parent(const char *path)
{
    size_t start, end;
    tl_path_base(path, &start, &end);
    char *d = start ? tl_xmalloc(start + 1) : tl_xstrdup(".");
    if (start) {
        memcpy(d, path, start);
        d[start] = '\0';
    }
    sync_path(d, 1);
    free(d);
}

/*
 * `tmp` is to replace `to`: refuse a `to` that is no longer a file, give `tmp` the mode
 * of the file it replaces, and flush it.  Nothing is changed at a target.
 */
static int check_file(const char *tmp, const char *to, const char *label, tl_error *err)
{
    struct stat st;
    if (stat(to, &st) == 0) {
        if (!S_ISREG(st.st_mode)) {
            tl_error_set(err, "%s: is %s, not a file; refusing to replace it", label, file_kind(st.st_mode));
            return -1;
        }
        chmod(tmp, st.st_mode & 07777);
    }
    if (sync_path(tmp, 0) != 0) {
        tl_error_set(err, "%s: cannot write: %s", label, strerror(errno));
        return -1;
    }
    return 0;
}

/* Every check of the commit for one output: afterwards only renames remain. */
static int check_output(tl_output *o, tl_error *err)
{
    if (o->through) {
        /* O_NONBLOCK: a FIFO nobody reads is an error now, not a hang. */
        o->fd = open(o->path, O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
        if (o->fd < 0) {
            tl_error_set(err, "%s: cannot open for writing: %s", o->target,
                         errno == ENXIO ? "a FIFO with no reader" : strerror(errno));
            return -1;
        }
        fcntl(o->fd, F_SETFL, fcntl(o->fd, F_GETFL) & ~O_NONBLOCK);
        return 0;
    }
    if (!o->dir)
        return check_file(o->tmp, o->path, o->target, err);
    struct stat st;
    int exists = stat(o->path, &st) == 0;
    if (exists && !S_ISDIR(st.st_mode)) {
        tl_error_set(err, "%s: exists and is not a directory", o->target);
        return -1;
    }
    for (size_t i = 0; i < o->nnames; i++) {
        char *from = join(o->tmp, o->names[i]), *to = join(o->path, o->names[i]);
        char *label = join(o->target, o->names[i]);
        int rc = exists ? check_file(from, to, label, err) : sync_path(from, 0);
        if (!exists && rc != 0)
            tl_error_set(err, "%s: cannot write: %s", label, strerror(errno));
        free(from);
        free(to);
        free(label);
        if (rc != 0)
            return -1;
    }
    sync_path(o->tmp, 1);
    return 0;
}

/* Copy the staged output into the FIFO or device. */
static int write_through(tl_output *o, tl_error *err)
{
    int in = open(o->tmp, O_RDONLY | O_CLOEXEC), rc = in < 0 ? -1 : 0;
    char buf[1 << 16];
    ssize_t got = 0;
    while (rc == 0 && (got = read(in, buf, sizeof buf)) != 0) {
        if (got < 0) {
            rc = errno == EINTR ? 0 : -1;
            continue;
        }
        for (ssize_t off = 0; rc == 0 && off < got;) {
            ssize_t put = write(o->fd, buf + off, (size_t)(got - off));
            if (put > 0)
                off += put;
            else if (errno != EINTR)
                rc = -1;
        }
    }
    if (rc != 0)
        tl_error_set(err, "%s: cannot write: %s", o->target, strerror(errno));
    if (in >= 0)
        close(in);
    if (close(o->fd) != 0 && rc == 0) {
        tl_error_set(err, "%s: cannot write: %s", o->target, strerror(errno));
        rc = -1;
    }
    o->fd = -1;
    unlink(o->tmp);
    untrack(o->tmp);
    return rc;
}

/* The renames of one output, checked already. */
static int move_into_place(tl_output *o, tl_error *err)
{
    if (!o->dir) {
        if (rename(o->tmp, o->path) != 0) {
            tl_error_set(err, "%s: cannot move the finished file into place: %s", o->target, strerror(errno));
            return -1;
        }
        untrack(o->tmp);
        sync_parent(o->path);
        return 0;
    }
    if (!o->inside) {
        /* No directory yet: the whole temporary one becomes it in one step.  Another run
         * may have made it meanwhile: then ours joins it file by file, as below. */
        if (rename(o->tmp, o->path) == 0) {
            for (size_t i = 0; i < o->nnames; i++) {
                char *p = join(o->tmp, o->names[i]);
                untrack(p);
                free(p);
            }
            untrack(o->tmp);
            sync_parent(o->path);
            return 0;
        }
        if (errno != EEXIST && errno != ENOTEMPTY) {
            tl_error_set(err, "%s: cannot create the directory: %s", o->target, strerror(errno));
            return -1;
        }
    }
    /* An existing directory may hold the user's other files: ours go in one by one,
     * each rename atomic, all of them complete already. */
    for (size_t i = 0; i < o->nnames; i++) {
        char *from = join(o->tmp, o->names[i]), *to = join(o->path, o->names[i]);
        int rc = rename(from, to);
        if (rc == 0)
            untrack(from);
        else
            tl_error_set(err, "%s/%s: cannot move into place: %s", o->target, o->names[i], strerror(errno));
        free(from);
        free(to);
        if (rc != 0)
            return -1;
    }
    rmdir(o->tmp);
    untrack(o->tmp);
    sync_path(o->path, 1);
    if (!o->inside)
        sync_parent(o->tmp);
    return 0;
}

int tl_output_commit(tl_output *const *outs, size_t n, tl_error *err)
{
    for (size_t i = 0; i < n; i++)
        if (outs[i] && !outs[i]->committed && check_output(outs[i], err) != 0)
            goto fail;
    /* Renames last, all together; the pipes and devices after them (nothing can take
     * back what was written there). */
    for (size_t i = 0; i < n; i++)
        if (outs[i] && !outs[i]->committed && !outs[i]->through && move_into_place(outs[i], err) != 0)
            goto fail;
    for (size_t i = 0; i < n; i++)
        if (outs[i] && !outs[i]->committed && !outs[i]->through)
            outs[i]->committed = 1;
    for (size_t i = 0; i < n; i++) {
        if (outs[i] && !outs[i]->committed) {
            outs[i]->committed = 1;
            if (write_through(outs[i], err) != 0)
                goto fail;
        }
    }
    return 0;
fail:
    for (size_t i = 0; i < n; i++) {
        if (outs[i] && outs[i]->fd >= 0) {
            close(outs[i]->fd);
            outs[i]->fd = -1;
        }
    }
    return -1;
}

void tl_output_free(tl_output *o)
{
    if (!o)
        return;
    if (o->fd >= 0)
        close(o->fd);
    for (size_t i = 0; i < o->nnames; i++) {
        if (!o->committed && o->tmp) {
            char *p = join(o->tmp, o->names[i]);
            unlink(p);
            untrack(p);
            free(p);
        }
        free(o->names[i]);
    }
    if (!o->committed && o->tmp) {
        if (o->dir)
            rmdir(o->tmp);
        else
            unlink(o->tmp);
        untrack(o->tmp);
    }
    /* the directories made for it: kept when it was committed, else removed (innermost first) */
    for (size_t i = o->nmade; i-- > 0;) {
        if (!o->committed)
            rmdir(o->made[i]);
        untrack(o->made[i]);
        free(o->made[i]);
    }
    free(o->made);
    free(o->names);
    free(o->tmp);
    free(o->path);
    free(o->target);
    free(o);
}

/* `path` made absolute and free of ".", ".." and links, as far as it exists; the rest
 * (an output not made yet) appended as written. */
static char *canonical(const char *path)
{
    char *p = follow_links(path);
    size_t start, end;
    tl_path_base(p, &start, &end);
    char *dir = start ? tl_xmalloc(start + 1) : tl_xstrdup(".");
    if (start) {
        memcpy(dir, p, start);
        dir[start] = '\0';
    }
    char *real = realpath(dir, NULL);
    tl_buf b = {0};
    tl_buf_adds(&b, real ? real : dir);
    tl_buf_addc(&b, '/');
    tl_buf_add(&b, p + start, end - start);
    free(real);
    free(dir);
    free(p);
    return b.data;
}

int tl_output_same_target(const char *a, const char *b)
{
    struct stat sa, sb;
    /* A character device (/dev/null, a terminal) takes each output in turn: no loss. */
    if (stat(a, &sa) == 0 && stat(b, &sb) == 0)
        return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino && !S_ISCHR(sa.st_mode);
    char *ca = canonical(a), *cb = canonical(b);
    int same = strcmp(ca, cb) == 0;
    free(ca);
    free(cb);
    return same;
}
