/*
 * test_coll_analysis.c - one trace's coll_analysis sheet (docs/traces.md, "coll_analysis"):
 * the collective kernels grouped by their 11 metadata keys, a row with any key missing
 * dropped (pandas' dropna), and the number text that follows from the rows as read: a key
 * column is int only when every collective row, dropped ones included, holds an int there;
 * dur_sum/min/max are ints only when every collective kernel's dur was written as one.
 */
#include "testutil.h"

#include "trace/collective.h"
#include "trace/trace.h"

#include <math.h>

/* A collective kernel with correlation c on stream 7; `meta` is spliced into its args. */
#define NCCL(c, ts, dur, meta)                                                                                         \
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"ncclDevKernel_AllReduce_Sum_f32_RING_LL\",\"pid\":0,\"tid\":7,"     \
    "\"ts\":" ts ",\"dur\":" dur ",\"args\":{\"correlation\":" #c ",\"stream\":7" meta "}}"
#define META(group_size, nelems)                                                                                       \
    ",\"Process Group Name\":\"0\",\"Process Group Ranks\":\"[0, 1]\",\"Collective name\":\"allreduce\","             \
    "\"Group size\":" group_size ",\"dtype\":\"Float\",\"In msg nelems\":" nelems ",\"Out msg nelems\":" nelems     \
    ",\"In split size\":\"[]\",\"Out split size\":\"[]\""
#define META_NO_GROUP_SIZE                                                                                             \
    ",\"Process Group Name\":\"0\",\"Process Group Ranks\":\"[0, 1]\",\"Collective name\":\"allreduce\","             \
    "\"dtype\":\"Float\",\"In msg nelems\":1024,\"Out msg nelems\":1024,\"In split size\":\"[]\","                   \
    "\"Out split size\":\"[]\""
#define CPU_OP "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::add\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":1}"

typedef struct sheet {
    tl_trace *t;
    tl_table *tab;
    tl_arena arena;
} sheet;

static void build(sheet *s, const char *json)
{
    tl_error err = {0};
    memset(s, 0, sizeof *s);
    tl_arena_init(&s->arena);
    s->t = tl_trace_load_mem(json, strlen(json), "t.json", &err);
    if (!s->t)
        fail_msg("load: %s", err.msg);
    s->tab = tl_coll_analysis(s->t, &s->arena);
}

static void drop(sheet *s)
{
    if (s->tab)
        tl_table_free(s->tab);
    tl_trace_free(s->t);
    tl_arena_free(&s->arena);
}

static const tl_cell *cell(const sheet *s, const char *col, size_t row)
{
    assert_non_null(s->tab);
    long c = tl_table_find(s->tab, col);
    if (c < 0)
        fail_msg("no column '%s'", col);
    assert_true(row < s->tab->nrows);
    return &s->tab->cols[c].cells[row];
}

static void want_int(const sheet *s, const char *col, size_t row, int64_t v)
{
    const tl_cell *c = cell(s, col, row);
    if (c->kind != TL_INT || c->v.i != v)
        fail_msg("'%s' row %zu: want the int %lld, got kind %d", col, row, (long long)v, c->kind);
}

static void want_float(const sheet *s, const char *col, size_t row, double v)
{
    const tl_cell *c = cell(s, col, row);
    if (c->kind != TL_FLOAT || c->v.f != v)
        fail_msg("'%s' row %zu: want the float %g, got kind %d (%g)", col, row, v, c->kind,
                 c->kind == TL_INT ? (double)c->v.i : c->v.f);
}

/* Two kernels of one collective and size group into one row; a second size is its own
 * row, and the rows come largest dur_sum first.  Every value an int: ints throughout. */
static void test_grouping(void **state)
{
    (void)state;
    sheet s;
    build(&s, "{\"traceEvents\":[" CPU_OP "," NCCL(1, "10", "5", META("2", "1024")) ","
              NCCL(2, "30", "7", META("2", "1024")) "," NCCL(3, "50", "3", META("2", "4096")) "]}");
    assert_non_null(s.tab);
    assert_int_equal(s.tab->nrows, 2);
    want_int(&s, "In msg nelems", 0, 1024); /* dur_sum 12 before 3 */
    want_int(&s, "operation_count", 0, 2);
    want_int(&s, "dur_sum", 0, 12);
    want_int(&s, "dur_min", 0, 5);
    want_int(&s, "dur_max", 0, 7);
    want_float(&s, "dur_mean", 0, 6.0);
    want_float(&s, "dur_std", 0, sqrt(2.0));
    want_float(&s, "In msg size (MB)_first", 0, 1024.0 * 4 / 1048576);
    want_int(&s, "Group size", 0, 2);
    want_int(&s, "In msg nelems", 1, 4096);
    want_int(&s, "operation_count", 1, 1);
    assert_int_equal(cell(&s, "dur_std", 1)->kind, TL_MISSING); /* one row: no sample std */
    drop(&s);
}

/* A kernel without Group size is dropped, and its missing value makes the column float
 * in the rows that stay (pandas' float64 column: "2.0"). */
static void test_missing_key_dropped(void **state)
{
    (void)state;
    sheet s;
    build(&s, "{\"traceEvents\":[" CPU_OP "," NCCL(1, "10", "5", META("2", "1024")) ","
              NCCL(2, "30", "7", META_NO_GROUP_SIZE) "]}");
    assert_non_null(s.tab);
    assert_int_equal(s.tab->nrows, 1);
    want_int(&s, "operation_count", 0, 1);
    want_int(&s, "dur_sum", 0, 5);
    want_float(&s, "Group size", 0, 2.0);
    want_int(&s, "In msg nelems", 0, 1024); /* present on every row: stays int */
    drop(&s);
}

/* One dur written as a float turns dur_sum/min/max float, even on a dropped row. */
static void test_float_dur_on_dropped_row(void **state)
{
    (void)state;
    sheet s;
    build(&s, "{\"traceEvents\":[" CPU_OP "," NCCL(1, "10", "5", META("2", "1024")) ","
              NCCL(2, "30", "7.0", META_NO_GROUP_SIZE) "]}");
    assert_int_equal(s.tab->nrows, 1);
    want_float(&s, "dur_sum", 0, 5.0);
    want_float(&s, "dur_min", 0, 5.0);
    drop(&s);
}

/* No metadata at all (HTA's trace_diff pair): every row dropped, no sheet; nor for a
 * GPU-only trace. */
static void test_no_sheet(void **state)
{
    (void)state;
    sheet s;
    build(&s, "{\"traceEvents\":[" CPU_OP "," NCCL(1, "10", "5", "") "]}");
    assert_null(s.tab);
    drop(&s);
    build(&s, "{\"traceEvents\":[" NCCL(1, "10", "5", META("2", "1024")) "]}");
    assert_null(s.tab);
    drop(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_grouping),
        cmocka_unit_test(test_missing_key_dropped),
        cmocka_unit_test(test_float_dur_on_dropped_row),
        cmocka_unit_test(test_no_sheet),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
