/*
 * progress.c - the progress line (see progress.h).
 */
#include "base/progress.h"

#include "base/thread.h"

#include <pthread.h>
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

struct timespec tl_deadline_ms(long ms)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    t.tv_sec += ms / 1000;
    t.tv_nsec += ms % 1000 * 1000000L;
    if (t.tv_nsec >= 1000000000L) {
        t.tv_sec++;
        t.tv_nsec -= 1000000000L;
    }
    return t;
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

/* The ticker: the line of a step that says nothing while it runs. */
static pthread_mutex_t tick_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t tick_cv = PTHREAD_COND_INITIALIZER;
static pthread_t ticker;
static int ticking, tick_stop;
static char tick_what[96];

static void *tick_main(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&tick_mu);
    while (!tick_stop) {
        struct timespec until = tl_deadline_ms(200);
        pthread_cond_timedwait(&tick_cv, &tick_mu, &until);
        double t = elapsed();
        if (!tick_stop && t >= 1.0) {
            fprintf(stderr, "\r\033[K[%5.1fs] %s", t, tick_what);
            fflush(stderr);
            shown = 1;
        }
    }
    pthread_mutex_unlock(&tick_mu);
    return NULL;
}

void tl_progress_wait_begin(const char *what)
{
    if (!enabled || ticking)
        return;
    snprintf(tick_what, sizeof tick_what, "%s", what);
    tick_stop = 0;
    ticking = tl_thread_create(&ticker, tick_main, NULL) == 0;
}

void tl_progress_wait_end(void)
{
    if (!ticking)
        return;
    pthread_mutex_lock(&tick_mu);
    tick_stop = 1;
    pthread_cond_signal(&tick_cv);
    pthread_mutex_unlock(&tick_mu);
    pthread_join(ticker, NULL);
    ticking = 0;
}

void tl_progress_done(void)
{
    tl_progress_wait_end();
    if (shown) {
        fputs("\r\033[K", stderr);
        fflush(stderr);
    }
    shown = 0;
}
