/*
 * output.c - atomic outputs, committed together, and their cleanup (see output.h).
 */
#define _GNU_SOURCE /* sync_file_range */
#include "io/output.h"

#include "io/cleanup.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

void tl_output_cleanup(void) { tl_cleanup_remove_all(); }

void tl_output_install_cleanup(void) { tl_cleanup_install(); }

static void track(const char *path) { tl_cleanup_track(path); }

static void untrack(const char *path) { tl_cleanup_untrack(path); }

/* The test hook: called after each rename and each fsync of a commit. */
static void (*test_hook)(const char *step, unsigned k);
static unsigned nrenames, nfsyncs;

void tl_output_set_test_hook(void (*hook)(const char *step, unsigned k)) { test_hook = hook; }

static void step_done(const char *step, unsigned *k)
{
    ++*k;
    if (test_hook)
        test_hook(step, *k);
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
    /* signals blocked while it exists but is not yet tracked */
    sigset_t old;
    tl_cleanup_block(&old);
    int fd = -1, made = dir ? mkdtemp(tmp) != NULL : (fd = mkstemp(tmp)) >= 0;
    int e = errno;
    if (made)
        track(tmp);
    tl_cleanup_unblock(&old);
    errno = e;
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
            sigset_t old;
            tl_cleanup_block(&old); /* made and tracked as one step */
            int made = mkdir(d, 0777) == 0, e = errno;
            if (made)
                track(d);
            tl_cleanup_unblock(&old);
            if (made) {
                TL_GROW(o->made, o->cap_made, o->nmade + 1);
                o->made[o->nmade++] = tl_xstrdup(d);
            } else if (e != EEXIST) {
                errno = e;
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
    step_done("fsync", &nfsyncs);
    errno = e;
    return rc;
}

/* Start writing a staged file to disk without waiting: the commit's fsyncs, one file
 * after another, then wait for writes already under way together rather than each
 * starting its own.  Only a hint: where it cannot be given, the fsync does it all. */
static void start_writeback(const char *path)
{
#ifdef SYNC_FILE_RANGE_WRITE
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE);
        close(fd);
    }
#else
    (void)path;
#endif
}

static void start_writeback_all(tl_output *const *outs, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const tl_output *o = outs[i];
        if (!o || o->committed || o->through)
            continue;
        if (!o->dir) {
            start_writeback(o->tmp);
            continue;
        }
        for (size_t k = 0; k < o->nnames; k++) {
            char *p = join(o->tmp, o->names[k]);
            start_writeback(p);
            free(p);
        }
    }
}

/* The directory holding `path` (malloc'd; "." for a bare name). */
static char *parent_of(const char *path)
{
    size_t start, end;
    tl_path_base(path, &start, &end);
    if (!start)
        return tl_xstrdup(".");
    char *d = tl_xmalloc(start + 1);
    memcpy(d, path, start);
    d[start] = '\0';
    return d;
}

/*
 * Make `path` a file of its own when it has other names (one output's bytes staged under
 * two names as hard links): its bytes copied into a new file put in its place, so that
 * what is done to it next leaves the other name as it is.  Returns 0, or -1 with errno.
 */
static int unshare_copy(const char *path)
{
    size_t n = strlen(path);
    char *own = tl_xmalloc(n + sizeof ".own");
    memcpy(own, path, n);
    memcpy(own + n, ".own", sizeof ".own");
    track(own);
    int in = open(path, O_RDONLY | O_CLOEXEC), rc = -1;
    int out = in < 0 ? -1 : open(own, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (out >= 0) {
        char *buf = tl_xmalloc((size_t)1 << 20);
        ssize_t k;
        rc = 0;
        while (rc == 0 && (k = read(in, buf, (size_t)1 << 20)) != 0) {
            if (k < 0) {
                rc = errno == EINTR ? 0 : -1;
                continue;
            }
            for (ssize_t done = 0; rc == 0 && done < k;) {
                ssize_t w = write(out, buf + done, (size_t)(k - done));
                if (w > 0)
                    done += w;
                else if (w == 0 || errno != EINTR)
                    rc = -1;
            }
        }
        free(buf);
        if (close(out) != 0)
            rc = -1;
        if (rc == 0)
            rc = rename(own, path);
    }
    int e = errno;
    if (in >= 0)
        close(in);
    if (rc != 0)
        unlink(own);
    untrack(own);
    free(own);
    errno = e;
    return rc;
}

/*
 * `tmp` is to replace `to`: refuse a `to` that is no longer a file, give `tmp` the mode
 * of the file it replaces (made a file of its own first if another output shares it and
 * would change mode with it), and flush it.  Nothing is changed at a target.
 */
static int check_file(const char *tmp, const char *to, const char *label, tl_error *err)
{
    struct stat st;
    if (stat(to, &st) == 0) {
        if (!S_ISREG(st.st_mode)) {
            tl_error_set(err, "%s: is %s, not a file; refusing to replace it", label, file_kind(st.st_mode));
            return -1;
        }
        struct stat cur;
        if (stat(tmp, &cur) == 0 && cur.st_nlink > 1 && (cur.st_mode & 07777) != (st.st_mode & 07777) &&
            unshare_copy(tmp) != 0) {
            tl_error_set(err, "%s: cannot write: %s", label, strerror(errno));
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
        tl_error_set(err, "%s: cannot write: %s", o->target,
                     errno == EPIPE ? "its reader closed it early" : strerror(errno));
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

/* The directories a commit flushes after its renames: each once. */
typedef struct dirlist {
    char **d;
    size_t n, cap;
} dirlist;

static void dirlist_add(dirlist *l, char *dir)
{
    for (size_t i = 0; i < l->n; i++) {
        if (strcmp(l->d[i], dir) == 0) {
            free(dir);
            return;
        }
    }
    TL_GROW(l->d, l->cap, l->n + 1);
    l->d[l->n++] = dir;
}

static void dirlist_free(dirlist *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->d[i]);
    free(l->d);
}

static int renamed(const char *from, const char *to)
{
    int rc = rename(from, to);
    if (rc == 0) {
        step_done("rename", &nrenames);
        untrack(from);
    }
    return rc;
}

/* The renames of one output, checked already; the directories to flush go to `sync`. */
static int move_into_place(tl_output *o, dirlist *sync, tl_error *err)
{
    if (!o->dir) {
        if (renamed(o->tmp, o->path) != 0) {
            tl_error_set(err, "%s: cannot move the finished file into place: %s", o->target, strerror(errno));
            return -1;
        }
        dirlist_add(sync, parent_of(o->path));
        return 0;
    }
    if (!o->inside) {
        /* No directory yet: the whole temporary one becomes it in one step.  Another run
         * may have made it meanwhile: then ours joins it file by file, as below. */
        if (renamed(o->tmp, o->path) == 0) {
            for (size_t i = 0; i < o->nnames; i++) {
                char *p = join(o->tmp, o->names[i]);
                untrack(p);
                free(p);
            }
            dirlist_add(sync, parent_of(o->path));
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
        int rc = renamed(from, to);
        if (rc != 0)
            tl_error_set(err, "%s/%s: cannot move into place: %s", o->target, o->names[i], strerror(errno));
        free(from);
        free(to);
        if (rc != 0)
            return -1;
    }
    rmdir(o->tmp);
    untrack(o->tmp);
    dirlist_add(sync, tl_xstrdup(o->path));
    if (!o->inside)
        dirlist_add(sync, parent_of(o->tmp));
    return 0;
}

/*
 * The advisory locks of a commit: an exclusive flock on the directory that holds each
 * target (a directory output's parent, whether it exists yet or not), so that two runs
 * writing one output set commit one after the other and the later one's set is the one
 * left whole.  Taken in the order of (device, inode), each directory once, so that runs
 * sharing several directories cannot wait on each other in a circle.  A directory that
 * cannot be opened or locked (no read permission, a file system without locks) is
 * committed without: the lock only orders runs, it guards nothing else.
 */
typedef struct dirlock {
    int fd;
    dev_t dev;
    ino_t ino;
} dirlock;

static int by_inode(const void *a, const void *b)
{
    const dirlock *x = a, *y = b;
    if (x->dev != y->dev)
        return x->dev < y->dev ? -1 : 1;
    return x->ino < y->ino ? -1 : x->ino > y->ino;
}

static size_t lock_dirs(tl_output *const *outs, size_t n, dirlock **out)
{
    dirlock *l = tl_xmalloc((n ? n : 1) * sizeof *l);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (!outs[i] || outs[i]->committed || outs[i]->through)
            continue;
        char *d = parent_of(outs[i]->path);
        int fd = open(d, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        free(d);
        struct stat st;
        if (fd < 0 || fstat(fd, &st) != 0) {
            if (fd >= 0)
                close(fd);
            continue;
        }
        l[k++] = (dirlock){fd, st.st_dev, st.st_ino};
    }
    qsort(l, k, sizeof *l, by_inode);
    size_t u = 0;
    for (size_t i = 0; i < k; i++) {
        if (u && l[u - 1].dev == l[i].dev && l[u - 1].ino == l[i].ino) {
            close(l[i].fd); /* a second lock of one directory would wait for the first */
            continue;
        }
        l[u++] = l[i];
    }
    for (size_t i = 0; i < u; i++)
        while (flock(l[i].fd, LOCK_EX) != 0 && errno == EINTR)
            ;
    *out = l;
    return u;
}

static void unlock_dirs(dirlock *l, size_t n)
{
    for (size_t i = 0; i < n; i++)
        close(l[i].fd); /* releases its flock */
    free(l);
}

/*
 * The set's renames, with the terminating signals blocked so that a signal cannot stop
 * it half way; the directories flushed after all of them (a flush between two renames
 * would widen the window in which the set is mixed).  A signal that came meanwhile is
 * delivered when they are unblocked, and its handler says the outputs were written.
 */
static int rename_all(tl_output *const *outs, size_t n, tl_error *err)
{
    dirlist sync = {0};
    sigset_t old;
    tl_cleanup_block(&old);
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++)
        if (outs[i] && !outs[i]->committed && !outs[i]->through)
            rc = move_into_place(outs[i], &sync, err);
    if (rc == 0) {
        for (size_t i = 0; i < n; i++)
            if (outs[i] && !outs[i]->committed && !outs[i]->through)
                outs[i]->committed = 1;
        tl_cleanup_set_written(1);
    }
    for (size_t i = 0; i < sync.n; i++)
        sync_path(sync.d[i], 1);
    dirlist_free(&sync);
    tl_cleanup_unblock(&old);
    return rc;
}

int tl_output_commit(tl_output *const *outs, size_t n, tl_error *err)
{
    nrenames = nfsyncs = 0;
    dirlock *locks;
    size_t nlocks = lock_dirs(outs, n, &locks);
    start_writeback_all(outs, n);
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++)
        if (outs[i] && !outs[i]->committed && check_output(outs[i], err) != 0)
            rc = -1;
    if (rc == 0)
        rc = rename_all(outs, n, err);
    unlock_dirs(locks, nlocks);
    /* The pipes and devices after the renames: nothing can take back what was written
     * there. */
    for (size_t i = 0; i < n && rc == 0; i++) {
        if (outs[i] && !outs[i]->committed) {
            outs[i]->committed = 1;
            rc = write_through(outs[i], err);
        }
    }
    for (size_t i = 0; i < n; i++) {
        if (outs[i] && outs[i]->fd >= 0) {
            close(outs[i]->fd);
            outs[i]->fd = -1;
        }
    }
    return rc;
}

/*
 * Directories made for outputs that could not be removed when their output was freed,
 * because another output of the run still had its temporary inside: retried after each
 * later free, so that a failed run leaves none of them behind.
 */
static char **orphans;
static size_t norphans, cap_orphans;

static void retry_orphans(void)
{
    size_t k = 0;
    for (size_t i = 0; i < norphans; i++) {
        if (rmdir(orphans[i]) == 0 || errno == ENOENT) {
            untrack(orphans[i]);
            free(orphans[i]);
        } else {
            orphans[k++] = orphans[i]; /* kept innermost first, as they were tried */
        }
    }
    norphans = k;
    if (!k) {
        free(orphans);
        orphans = NULL;
        cap_orphans = 0;
    }
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
    /* the directories made for it: kept when it was committed, else removed (innermost
     * first), or left to the next free when another output still has a file inside */
    for (size_t i = o->nmade; i-- > 0;) {
        if (o->committed || rmdir(o->made[i]) == 0 || errno == ENOENT) {
            untrack(o->made[i]);
            free(o->made[i]);
        } else {
            TL_GROW(orphans, cap_orphans, norphans + 1);
            orphans[norphans++] = o->made[i];
        }
    }
    if (!o->committed)
        retry_orphans();
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

int tl_output_dir_holds(const char *dir, const char *const *names, size_t nnames, const char *suffix,
                        const char *input)
{
    struct stat sd, si;
    if (!dir || !input || stat(dir, &sd) != 0 || !S_ISDIR(sd.st_mode))
        return 0; /* a directory still to be made holds no input */
    if (stat(input, &si) == 0 && si.st_dev == sd.st_dev && si.st_ino == sd.st_ino)
        return 1;
    char *parent = parent_of(input);
    struct stat sp;
    int inside = stat(parent, &sp) == 0 && sp.st_dev == sd.st_dev && sp.st_ino == sd.st_ino;
    free(parent);
    if (!inside)
        return 0;
    size_t start, end;
    tl_path_base(input, &start, &end);
    const char *base = input + start;
    size_t len = end - start, slen = suffix ? strlen(suffix) : 0;
    if (suffix && len >= slen && memcmp(base + len - slen, suffix, slen) == 0)
        return 1;
    for (size_t i = 0; i < nnames; i++)
        if (strlen(names[i]) == len && memcmp(names[i], base, len) == 0)
            return 1;
    return 0;
}
