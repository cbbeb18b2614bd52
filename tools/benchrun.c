/*
 * benchrun.c - run one command, report its wall time and exact peak RSS
 * (build: make build/tools/benchrun; used by tools/bench.sh).
 *
 *   benchrun [-e STDERR_FILE] [-o STDOUT_FILE] -- COMMAND [ARG ...]
 *
 * Runs COMMAND (searched in PATH) once, with its stderr/stdout sent to the files given
 * (default: inherited), waits for it with wait4() and prints one line on stdout:
 *
 *   wall=1.234567 rss_kb=412345 user=1.100 sys=0.200 status=0
 *
 * wall is monotonic-clock seconds from just before fork() to the end of wait4();
 * rss_kb is the child's ru_maxrss (peak resident set, KiB on Linux); status is the exit
 * status, or 128+N when the child died of signal N.  benchrun exits with the child's
 * status (so a crash is visible to the caller), 125 when it could not run the command.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static double tv_s(struct timeval tv) { return (double)tv.tv_sec + tv.tv_usec * 1e-6; }

static int redirect(const char *path, int fd)
{
    int f = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (f < 0 || dup2(f, fd) < 0) {
        fprintf(stderr, "benchrun: %s: %s\n", path, strerror(errno));
        return -1;
    }
    close(f);
    return 0;
}

static int usage(void)
{
    fprintf(stderr, "usage: benchrun [-e STDERR_FILE] [-o STDOUT_FILE] -- COMMAND [ARG ...]\n");
    return 125;
}

int main(int argc, char **argv)
{
    const char *err_file = NULL, *out_file = NULL;
    int i = 1;
    for (; i < argc; i++) {
        if (!strcmp(argv[i], "--")) {
            i++;
            break;
        } else if (!strcmp(argv[i], "-e") && i + 1 < argc) {
            err_file = argv[++i];
        } else if (!strcmp(argv[i], "-o") && i + 1 < argc) {
            out_file = argv[++i];
        } else {
            return usage();
        }
    }
    if (i >= argc)
        return usage();

    fflush(stdout);
    double t0 = now();
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "benchrun: fork: %s\n", strerror(errno));
        return 125;
    }
    if (pid == 0) {
        if ((out_file && redirect(out_file, STDOUT_FILENO) != 0) ||
            (err_file && redirect(err_file, STDERR_FILENO) != 0))
            _exit(125);
        execvp(argv[i], argv + i);
        fprintf(stderr, "benchrun: %s: %s\n", argv[i], strerror(errno));
        _exit(127);
    }

    int wstatus = 0;
    struct rusage ru;
    pid_t w;
    do
        w = wait4(pid, &wstatus, 0, &ru);
    while (w < 0 && errno == EINTR);
    double wall = now() - t0;
    if (w < 0) {
        fprintf(stderr, "benchrun: wait4: %s\n", strerror(errno));
        return 125;
    }
    int status = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : WIFSIGNALED(wstatus) ? 128 + WTERMSIG(wstatus) : 125;
    printf("wall=%.6f rss_kb=%ld user=%.3f sys=%.3f status=%d\n", wall, (long)ru.ru_maxrss, tv_s(ru.ru_utime),
           tv_s(ru.ru_stime), status);
    return status;
}
