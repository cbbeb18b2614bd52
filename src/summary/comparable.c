/*
 * comparable.c - are two traces runs of one workload? (see comparable.h)
 */
#include "summary/comparable.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void tl_comparability_build(tl_comparability *c, const tl_diff_cover cover[2], const tl_diff_call *v, size_t n,
                            const size_t steps[2], const char *const gpu[2], const char *const tags[2])
{
    memset(c, 0, sizeof *c);
    c->comparable = 1;
    c->known = 1;
    double calls[2] = {0, 0};
    for (size_t i = 0; i < n; i++)
        for (int k = 0; k < 2; k++)
            calls[k] += !isnan(k ? v[i].us2 : v[i].us1);
    for (int k = 0; k < 2; k++) {
        double whole = cover[k].busy_us - cover[k].graph_us;
        c->paired_share[k] = whole > 0 ? cover[k].lca_us / whole : NAN;
        c->steps[k] = steps ? steps[k] : 0;
        c->calls[k] = calls[k] / (double)(c->steps[k] ? c->steps[k] : 1);
        c->gpu[k] = gpu ? gpu[k] : NULL;
    }
    /* the reasons, in the order a person would check them */
    size_t len = 0;
    for (int k = 0; k < 2; k++) {
        if (!(c->paired_share[k] < TL_COMPARABLE_MIN_PAIRED))
            continue;
        len += (size_t)snprintf(c->why + len, sizeof c->why - len, "%sonly %.0f%% of %s's GPU time aligns with the other's",
                                len ? "; " : "", 100 * c->paired_share[k], tags[k]);
        len = len < sizeof c->why ? len : sizeof c->why - 1;
    }
    double r = c->calls[0] > 0 && c->calls[1] > 0 ? c->calls[1] / c->calls[0] : NAN;
    if (!isnan(r) && (r > TL_COMPARABLE_MAX_CALL_RATIO || r < 1 / TL_COMPARABLE_MAX_CALL_RATIO)) {
        snprintf(c->why + len, sizeof c->why - len, "%s%.0f vs %.0f calls per %s", len ? "; " : "", c->calls[0],
                 c->calls[1], c->steps[0] && c->steps[1] ? "step" : "trace");
        len = 1;
    }
    c->comparable = len == 0;
}

void tl_comparability_line(const tl_comparability *c, tl_buf *out)
{
    if (!c->known)
        return;
    tl_buf_adds(out, c->comparable ? "comparable: " : "NOT COMPARABLE: ");
    if (!c->comparable) {
        tl_buf_adds(out, c->why);
        tl_buf_adds(out, " (another workload? --force-compare judges anyway); ");
    }
    if (c->gpu[0] && c->gpu[1] && strcmp(c->gpu[0], c->gpu[1]) != 0)
        tl_buf_printf(out, "%s vs %s; ", c->gpu[0], c->gpu[1]);
    else if (c->gpu[0] || c->gpu[1])
        tl_buf_printf(out, "%s; ", c->gpu[0] ? c->gpu[0] : c->gpu[1]);
    for (int k = 0; k < 2; k++) {
        if (isnan(c->paired_share[k]))
            tl_buf_adds(out, k ? " and -" : "-");
        else
            tl_buf_printf(out, "%s%.0f%%", k ? " and " : "", 100 * c->paired_share[k]);
    }
    tl_buf_adds(out, " of the GPU time aligned");
    if ((c->steps[0] || c->steps[1]) && c->comparable)
        tl_buf_printf(out, "; %zu vs %zu steps, %.0f vs %.0f calls per step", c->steps[0], c->steps[1], c->calls[0],
                      c->calls[1]);
}
