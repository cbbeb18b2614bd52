/*
 * opcat.c - the communication kernels' name rule (see opcat.h), which the reader (to keep
 * a collective's flow links) and the report sheets both ask.
 */
#include "trace/opcat.h"

#include <string.h>
#include <strings.h>

/* A communication kernel (TraceLens' nccl / rccl / custom collective patterns: a
 * case-insensitive search anywhere in the name).  One pass: kernel names are long and
 * every GPU event is asked, several times. */
int tl_trace_is_comm(const char *name)
{
    for (const unsigned char *p = (const unsigned char *)name; *p; p++) {
        unsigned c = *p | 0x20u;
        if (c == 'n' || c == 'r') {
            if ((p[1] | 0x20u) == 'c' && (p[2] | 0x20u) == 'c' && (p[3] | 0x20u) == 'l' && p[1] && p[2] && p[3])
                return 1;
        } else if (c == 'c' && strncasecmp((const char *)p, "cross_device_reduce", 19) == 0) {
            return 1;
        }
    }
    return 0;
}
