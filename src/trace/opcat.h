/*
 * opcat.h - the name rules the report sheets use, for the layers above (the perf
 * models' unified_perf_summary applies the same ones: PERF.md §7).
 */
#ifndef TL_TRACE_OPCAT_H
#define TL_TRACE_OPCAT_H

/* TRACES.md §4.0: the op category of an op named `name` whose earliest kernel in its
 * kernel_details is `first_kernel` (NULL when the list is empty).  A static string. */
const char *tl_trace_op_category(const char *name, const char *first_kernel);

/* 1 when `name` is a communication kernel (nccl / rccl / cross_device_reduce, any case,
 * anywhere in the name: TRACES.md §3). */
int tl_trace_is_comm(const char *name);

#include "base/util.h"
#include "table/table.h"
#include "trace/trace.h"

#include <stddef.h>
#include <stdint.h>

/* One kernel's statistics over a group's calls (TRACES.md §4.2). */
typedef struct tl_kernel_stat {
    const char *name;
    int64_t stream; /* TL_TEV_NO_STREAM for none */
    size_t count;
    double total, mean, median, std, min, max;
    int ints; /* every duration was an int: total, min and max print as ints (TRACES.md §4.6) */
} tl_kernel_stat;

/* The statistics of kernel `k` of t over the n >= 1 durations d of a group's calls
 * (numpy's sum, mean, median and population std, as pandas applies them); `ints`: every
 * one of the durations was written as an integer. */
tl_kernel_stat tl_kernel_stat_of(const tl_trace *t, const tl_tev *k, const double *d, size_t n, int ints);

/* Append one kernel's entry to the texts of kernel_details__summarize_kernel_stats
 * (`summary`: every statistic) and trunc_kernel_details (`trunc`: the name cut to 64
 * characters, the mean rounded to 2 places), as Python dict reprs; the caller writes the
 * brackets and the ", " between entries. */
void tl_kernel_stat_texts(tl_buf *summary, tl_buf *trunc, const tl_kernel_stat *s);

/* A time's cell (TRACES.md §4.6): an int when `ints` says the reference holds it as a
 * Python int (made only of times written as JSON integers) and it fits int64, else a
 * float. */
tl_cell tl_trace_time_cell(double v, int ints);

#endif
