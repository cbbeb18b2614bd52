/*
 * test_xlsx_stream.c - the streaming workbook writer (xlsx_write.h) on a pool: a big
 * result is rendered and compressed in pieces, by the pool's thread and by the caller
 * helping, and joined into one part.  The joined sheet must be the very XML the writer
 * makes in one piece (tl_xlsx_write_opts.piece_cells), with the CRC-32 the zip records
 * for it,
 * with numbers formatted once beforehand (tl_table_format_floats) or not.
 */
#include "testutil.h"

#include "base/pool.h"
#include "write/xlsx_write.h"

#include <math.h>
#include <zip.h>
#include <zlib.h>

/* rows x 10 columns of mixed cells: text with XML specials, floats, ints, bools, gaps */
static tl_table *big_table(size_t rows)
{
    static const char *const texts[] = {"aten::mm", "a < b & \"c\"", "", "(1, 2, 3)", "\xc2\xb5s", "_x0041_"};
    tl_table *t = tl_table_new();
    t->nrows = rows;
    const char *names[] = {"name", "Kernel Time (\xc2\xb5s)_sum", "count", "flag", "ratio", "note",
                           "TFLOPS/s_mean__t_diff", "x", "y", "z"};
    for (size_t c = 0; c < 10; c++)
        tl_table_add_column(t, names[c]);
    t->cols[6].role = TL_ROLE_DIFF;
    for (size_t r = 0; r < rows; r++) {
        t->cols[0].cells[r] = tl_cell_str(texts[r % 6]);
        t->cols[1].cells[r] = tl_cell_float((double)r / 7.0);
        t->cols[2].cells[r] = tl_cell_int((int64_t)r * 3 - 5);
        t->cols[3].cells[r] = r % 5 ? tl_cell_bool(r % 2) : tl_cell_missing();
        t->cols[4].cells[r] = r % 11 ? tl_cell_float(1e-7 * (double)r) : tl_cell_float(NAN);
        t->cols[5].cells[r] = r % 3 ? tl_cell_str(texts[(r / 3) % 6]) : tl_cell_missing();
        t->cols[6].cells[r] = tl_cell_float(r % 13 ? -(double)r : INFINITY);
        for (size_t c = 7; c < 10; c++)
            t->cols[c].cells[r] = tl_cell_float((double)(r * c) + 0.5);
    }
    return t;
}

/* The inflated text of one part, whose CRC-32 must be the one the zip records. */
static char *part_text(const char *path, const char *name, size_t *len)
{
    int zerr = 0;
    zip_t *z = zip_open(path, ZIP_RDONLY, &zerr);
    assert_non_null(z);
    zip_stat_t st;
    assert_int_equal(zip_stat(z, name, 0, &st), 0);
    char *buf = malloc(st.size + 1);
    zip_file_t *f = zip_fopen(z, name, 0);
    assert_non_null(f);
    assert_int_equal(zip_fread(f, buf, st.size), (zip_int64_t)st.size);
    assert_int_equal(zip_fclose(f), 0);
    zip_close(z);
    assert_int_equal(crc32(0, (const unsigned char *)buf, (uInt)st.size), st.crc);
    *len = st.size;
    return buf;
}

static void check_streamed(size_t rows, int threads, int formatted)
{
    tl_table *t = big_table(rows);
    if (formatted)
        tl_table_format_floats(t);
    tl_result r = {"GEMM_intersect_candidate", t, NULL, t->nrows, t->ncols, NULL};
    tl_results one = {&r, 1, 1};
    char *dir = tt_tmpdir();
    char whole[512], streamed[512];
    snprintf(whole, sizeof whole, "%s/whole.xlsx", dir);
    snprintf(streamed, sizeof streamed, "%s/streamed.xlsx", dir);

    tl_error err = {0};
    tl_xlsx_write_opts opts = {NULL, 1, (size_t)-1}; /* the whole sheet in one piece */
    int rc = tl_xlsx_write(&one, &opts, whole, &err);
    if (rc != 0)
        fail_msg("tl_xlsx_write: %s", err.msg);

    tl_pool *pool = tl_pool_new(threads);
    tl_xlsx_writer *w = tl_xlsx_writer_open(streamed, 0, pool, &err);
    assert_non_null(w);
    assert_int_equal(tl_xlsx_writer_add(w, &r, &err), 0);
    assert_int_equal(tl_xlsx_writer_sync(w, 1, &err), 0);
    if (tl_xlsx_writer_close(w, NULL, &err) != 0)
        fail_msg("tl_xlsx_writer_close: %s", err.msg);
    tl_pool_free(pool, 0);

    size_t n1, n2;
    char *a = part_text(whole, "xl/worksheets/sheet1.xml", &n1);
    char *b = part_text(streamed, "xl/worksheets/sheet1.xml", &n2);
    assert_int_equal(n1, n2);
    assert_memory_equal(a, b, n1);
    /* the last record is there, and the sheet is closed once */
    char last[64];
    snprintf(last, sizeof last, "<row r=\"%zu\">", rows + 1);
    assert_non_null(strstr(a, last));
    assert_non_null(strstr(b + n2 - 32, "</worksheet>"));
    free(a);
    free(b);
    tl_table_free(t);
    tt_rmrf(dir);
    free(dir);
}

/* 60,000 x 10 cells: three pieces. */
static void test_pieces_join_to_the_whole(void **state)
{
    (void)state;
    check_streamed(60000, 1, 0);
    check_streamed(60000, 1, 1);
    check_streamed(60000, 0, 1); /* no thread: the caller renders every piece */
    check_streamed(60000, 3, 1);
}

/* Small results are one piece; a result with fewer rows than pieces would have is too. */
static void test_small_results(void **state)
{
    (void)state;
    check_streamed(1, 1, 1);
    check_streamed(7, 1, 0);
    check_streamed(25001, 1, 1); /* just over one piece */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pieces_join_to_the_whole),
        cmocka_unit_test(test_small_results),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
