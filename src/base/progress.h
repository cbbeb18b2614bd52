/*
 * progress.h - one line of progress on stderr for long runs.
 *
 * Shown only when stderr is a terminal and the run has already taken more than a
 * second: short runs and logs stay clean.  Called from the main thread only.
 */
#ifndef TL_PROGRESS_H
#define TL_PROGRESS_H

#include <time.h>

/* Start timing (and decide whether to show anything at all). */
void tl_progress_start(int enabled);

/* Say what is being done now, e.g. tl_progress("comparing %s", sheet). */
void tl_progress(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A step that says nothing while it runs (the main thread waits for helper threads that
 * load the traces): from 1 s after the start, the line shows `what` with its seconds
 * counting, redrawn by a ticker thread until tl_progress_wait_end(). */
void tl_progress_wait_begin(const char *what);
void tl_progress_wait_end(void);

/* Erase the line (before the results are printed, or an error). */
void tl_progress_done(void);

/* Seconds on a monotonic clock, for phase timings. */
double tl_now(void);

/* The moment `ms` milliseconds from now on the clock pthread_cond_timedwait reads
 * (CLOCK_REALTIME), for a wait that looks up now and then. */
struct timespec tl_deadline_ms(long ms);

/*
 * Where a run's time went (--timings, and the benchmark): each phase adds its wall
 * time here.  Main thread only.
 */
typedef struct tl_timings {
    double read;        /* reading and typing sheets */
    double compare;     /* merge, diff, order, split */
    double summary;     /* the summary and its renderings */
    double format;      /* formatting the results' numbers, once for both writers */
    double write_xlsx;  /* the workbook: waiting for (and helping) its thread */
    double write_csv;   /* the CSV directory */
    double html;        /* the --html page */
    double total;
} tl_timings;
extern tl_timings tl_timing;

#endif
