/*
 * comparison.c - tl_compare_run (compare.h): the one choice above the two comparisons,
 * runs (rank sets, dist.h) or reports (compare.c's engine).  It sits above both so that
 * the comparison of runs is built on the comparison of reports and nothing flows back.
 */
#include "run/compare.h"

#include "run/dist.h"

int tl_compare_run(const tl_compare_opts *o, tl_comparison *c)
{
    /* reports given open (the Python module's) are no runs, nor are the inputs of a
     * comparison that a comparison of runs already made of its ranks */
    int any_given = 0;
    for (size_t i = 0; o->given && i < o->ninputs; i++)
        any_given |= o->given[i].ops != NULL;
    if (!o->owner.ctx && !any_given) {
        int rc = tl_dist_compare_run(o, c);
        if (rc >= 0)
            return rc;
    }
    return tl_compare_reports(o, c);
}
