/*
 * a2a.c - the all_to_allv sheets (MULTIRANK.md §6): nccl_all2allv, its summary by
 * process group and dtype, and the (src, dst) heatmap.
 */
#include "ranks/ranks_impl.h"

#include <stdlib.h>
#include <string.h>

int rk_a2a_build(const tl_rank_set *set, const tl_coll_rows *rows, const rk_colls *cs, tl_arena *a, rk_a2a *x,
                 tl_error *err)
{
    memset(x, 0, sizeof *x);
    x->rows = rows;
    x->cs = cs;
    for (size_t k = 0; k < cs->n; k++) {
        const tl_cval *name = &rows->v[cs->first[k]].v[TL_COLL_NAME];
        if (name->kind == TL_CV_STR && strcmp(name->s, "all_to_allv") == 0) {
            tl_error_set(err, "collective %s is an all_to_allv: its sheets (MULTIRANK.md §6) are not made yet",
                         rows->v[cs->first[k]].id);
            return -1;
        }
    }
    (void)set;
    (void)a;
    return 0;
}

tl_table *rk_a2a_table(rk_a2a *x)
{
    tl_table *t = x->table;
    x->table = NULL;
    return t;
}

tl_table *rk_a2a_summary(const rk_a2a *x, const char *const *aggs, size_t naggs, tl_arena *a)
{
    (void)x;
    (void)aggs;
    (void)naggs;
    (void)a;
    return NULL;
}

tl_table *rk_a2a_heatmap(const tl_coll_rows *rows)
{
    (void)rows;
    return NULL;
}

void rk_a2a_free(rk_a2a *x)
{
    tl_table_free(x->table);
    free(x->coll);
    memset(x, 0, sizeof *x);
}
