/*
 * cancel.h - the one flag that stops a run: set by another thread or a signal's handler
 * (Ctrl-C), read by every long loop the run passes it down to (the trace reader's two
 * threads, the phases of a run, the writers between sheets).  Lock-free, so a handler
 * may set it.
 */
#ifndef TL_BASE_CANCEL_H
#define TL_BASE_CANCEL_H

#include <stdatomic.h>

typedef atomic_int tl_cancel;

/* Whether the flag (may be NULL: never) is set. */
static inline int tl_cancelled(tl_cancel *c)
{
    return c && atomic_load_explicit(c, memory_order_relaxed) != 0;
}

static inline void tl_cancel_set(tl_cancel *c)
{
    atomic_store(c, 1);
}

#endif
