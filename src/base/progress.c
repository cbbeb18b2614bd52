/*
 * progress.c - the progress line (see progress.h).
 */
#include "base/progress.h"

#include <stdarg.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

static int enabled, shown;
static struct timespec start;

tl_timings tl_timing;

double tl_now(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)now.tv_sec + (double)now.tv_nsec / 1e9;
}

static double elapsed(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)(now.tv_sec - start.tv_sec) + (double)(now.tv_nsec - start.tv_nsec) / 1e9;
}

void tl_progress_start(int on)
{
    enabled = on && isatty(STDERR_FILENO);
    shown = 0;
    clock_gettime(CLOCK_MONOTONIC, &start);
}

void tl_progress(const char *fmt, ...)
{
    if (!enabled)
        return;
    double t = elapsed();
    if (t < 1.0)
        return;
    char line[96];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    /* \r and erase-to-end keep it on one line, overwritten by the next step */
    fprintf(stderr, "\r\033[K[%5.1fs] %s", t, line);
    fflush(stderr);
    shown = 1;
}

void tl_progress_done(void)
{
    if (shown) {
        fputs("\r\033[K", stderr);
        fflush(stderr);
    }
    shown = 0;
}
