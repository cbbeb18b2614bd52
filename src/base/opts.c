/*
 * opts.c - long options by argparse's rule (see opts.h).
 */
#include "base/opts.h"

#include <string.h>

const tl_opt *tl_opt_find(const tl_opt *opts, size_t n, const char *name, tl_buf *why)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(opts[i].name, name))
            return &opts[i];
    /* argparse abbreviates long options only, and only from "--x" on */
    const tl_opt *hit = NULL;
    size_t nhits = 0, len = strlen(name);
    if (len > 2 && name[0] == '-' && name[1] == '-') {
        for (size_t i = 0; i < n; i++) {
            if (!strncmp(opts[i].name, "--", 2) && !strncmp(opts[i].name, name, len)) {
                hit = &opts[i];
                nhits++;
            }
        }
    }
    if (nhits == 1)
        return hit;
    if (why) {
        why->len = 0;
        if (nhits > 1) {
            tl_buf_printf(why, "ambiguous option: %s could match", name);
            size_t k = 0;
            for (size_t i = 0; i < n; i++)
                if (!strncmp(opts[i].name, "--", 2) && !strncmp(opts[i].name, name, len))
                    tl_buf_printf(why, "%s %s", k++ ? "," : "", opts[i].name);
        } else {
            tl_buf_printf(why, "unknown option '%s'", name);
        }
    }
    return NULL;
}
