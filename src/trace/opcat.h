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

#endif
