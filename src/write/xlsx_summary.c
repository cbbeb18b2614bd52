/*
 * xlsx_summary.c - the summary worksheet (titled tables, written like results), the
 * clustered bar chart of its chart data and the drawing that places the chart (see
 * xlsx_internal.h).
 */
#include "write/xlsx_internal.h"

#include "base/numfmt.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the summary worksheet ------------------------------------------------------------- */

/* What an empty cell right of a text shows: a spreadsheet draws a text over the empty
 * cells to its right, so a long op name in an "only in" block would run across the
 * columns of the side it is absent from; a dash there stops it and reads as "none". */
static const char NO_VALUE[] = "\xe2\x80\x93";

/* t, or (when some text cell has an empty cell right of it that is not a diff column,
 * whose colouring would take a text for a large number) a copy whose such cells hold
 * NO_VALUE; the copy's columns are new, their cells too, the strings t's. */
static tl_table *without_spill(const tl_table *t)
{
    tl_table *copy = NULL;
    for (size_t c = 0; c + 1 < t->ncols; c++) {
        const tl_column *right = &t->cols[c + 1];
        if (right->role == TL_ROLE_DIFF)
            continue;
        for (size_t r = 0; r < t->nrows; r++) {
            const tl_cell *left = &t->cols[c].cells[r], *next = copy ? &copy->cols[c + 1].cells[r] : &right->cells[r];
            if (left->kind != TL_STR || !tl_cell_len(left) || next->kind != TL_MISSING)
                continue;
            if (!copy) {
                copy = tl_xcalloc(1, sizeof *copy);
                copy->nrows = t->nrows;
                copy->ncols = t->ncols;
                copy->cols = tl_xcalloc(t->ncols, sizeof *copy->cols);
                for (size_t k = 0; k < t->ncols; k++) {
                    copy->cols[k] = t->cols[k];
                    copy->cols[k].cells = tl_xmalloc((t->nrows ? t->nrows : 1) * sizeof(tl_cell));
                    memcpy(copy->cols[k].cells, t->cols[k].cells, t->nrows * sizeof(tl_cell));
                }
            }
            copy->cols[c + 1].cells[r] = tl_cell_str(NO_VALUE);
        }
    }
    return copy;
}

static void free_copy(tl_table *t)
{
    if (!t)
        return;
    for (size_t c = 0; c < t->ncols; c++)
        free(t->cols[c].cells);
    free(t->cols);
    free(t);
}


void tl_summary_plan_init(summary_plan *pl, const tl_summary_sheet *s)
{
    memset(pl, 0, sizeof *pl);
    pl->s = s;
    const tl_sheet_chart *ch = s->chart;
    pl->blocks = tl_xcalloc(s->nblocks + 1, sizeof *pl->blocks);
    pl->filled = tl_xcalloc(s->nblocks + 1, sizeof *pl->filled);
    for (size_t i = 0; i < s->nblocks; i++) {
        pl->blocks[i] = s->blocks[i];
        if (s->blocks[i].table && (pl->filled[i] = without_spill(s->blocks[i].table)) != NULL)
            pl->blocks[i].table = pl->filled[i];
    }
    pl->nblocks = s->nblocks;
    if (ch) {
        /* A chart plots cells: its data goes on the sheet, as one more block. */
        tl_table *t = &pl->chart_table;
        t->ncols = 1 + ch->nseries;
        t->nrows = ch->ncategories;
        t->cols = tl_xcalloc(t->ncols, sizeof *t->cols);
        for (size_t c = 0; c < t->ncols; c++) {
            tl_column *col = &t->cols[c];
            col->name = c == 0 ? "category" : ch->series[c - 1].name ? ch->series[c - 1].name : "";
            col->type = c == 0 ? TL_COL_STR : TL_COL_NUM;
            col->cells = tl_xcalloc(t->nrows ? t->nrows : 1, sizeof *col->cells);
            for (size_t r = 0; r < t->nrows; r++) {
                if (c == 0) {
                    const char *cat = ch->categories[r];
                    col->cells[r] = cat && *cat ? tl_cell_str(cat) : tl_cell_missing();
                } else {
                    double v = ch->series[c - 1].values[r];
                    col->cells[r] = isnan(v) ? tl_cell_missing() : tl_cell_float(v);
                }
            }
        }
        pl->chart_block = pl->nblocks;
        pl->blocks[pl->nblocks++] = (tl_sheet_block){"chart data", t};
    }
    pl->title_row = tl_xcalloc(pl->nblocks + 1, sizeof *pl->title_row);
    pl->head_row = tl_xcalloc(pl->nblocks + 1, sizeof *pl->head_row);
    size_t r = 1;
    for (size_t i = 0; i < pl->nblocks; i++) {
        const tl_sheet_block *bl = &pl->blocks[i];
        if (i > 0)
            r++; /* a blank row between blocks */
        if (bl->title)
            pl->title_row[i] = r++;
        if (bl->table && bl->table->ncols) {
            pl->head_row[i] = r;
            r += 1 + bl->table->nrows;
            if (bl->table->ncols > pl->ncols)
                pl->ncols = bl->table->ncols;
        }
    }
    pl->nrows = r - 1;
}

void tl_summary_plan_free(summary_plan *pl)
{
    for (size_t c = 0; c < pl->chart_table.ncols; c++)
        free(pl->chart_table.cols[c].cells);
    free(pl->chart_table.cols);
    for (size_t i = 0; pl->filled && i < pl->nblocks; i++)
        free_copy(pl->filled[i]);
    free(pl->filled);
    free(pl->blocks);
    free(pl->title_row);
    free(pl->head_row);
}

/* 1 when the column's numbers are all integers (cells of kind TL_INT; text and missing
 * cells aside), and it has one at least. */
static int whole_numbers(const tl_column *col, size_t nrows)
{
    int any = 0;
    for (size_t r = 0; r < nrows; r++) {
        if (col->cells[r].kind == TL_FLOAT)
            return 0;
        any |= col->cells[r].kind == TL_INT;
    }
    return any;
}

/* rows' XML into b, every row hidden in an outline group of level 1 */
static void hide_rows(tl_buf *b, const tl_buf *rows)
{
    static const char tag[] = "<row r=\"";
    const char *p = rows->data, *end = rows->data + rows->len;
    while (p && p < end) {
        const char *q = strstr(p, tag);
        if (!q) {
            tl_buf_add(b, p, (size_t)(end - p));
            break;
        }
        const char *close = strchr(q + sizeof tag - 1, '"');
        if (!close) {
            tl_buf_add(b, p, (size_t)(end - p));
            break;
        }
        tl_buf_add(b, p, (size_t)(close + 1 - p));
        tl_buf_adds(b, " hidden=\"1\" outlineLevel=\"1\"");
        p = close + 1;
    }
}

void tl_render_summary(const summary_plan *pl, const char *tab, int selected, tl_buf *b,
                           tl_zip_compressor *comp)
{
    sheet_ctx sc = {tab};
    if (pl->nrows == 0) {
        tl_render_empty(b, selected);
        return;
    }
    size_t ncols = pl->ncols ? pl->ncols : 1;
    colinfo *width = tl_xcalloc(ncols, sizeof *width);
    colinfo **ci = tl_xcalloc(pl->nblocks, sizeof *ci);
    for (size_t i = 0; i < pl->nblocks; i++) {
        const tl_table *t = pl->blocks[i].table;
        if (!t || !t->ncols)
            continue;
        ci[i] = tl_xcalloc(t->ncols, sizeof **ci);
        for (size_t c = 0; c < t->ncols; c++) {
            const tl_column *col = &t->cols[c];
            ci[i][c].reflen = (uint8_t)tl_excel_col_letters(c, ci[i][c].ref);
            tl_classify_column(col, t->nrows, &ci[i][c]);
            /* a summary is read, not computed with: no column of long raw digits; counts
             * (kernels, calls) stay whole numbers */
            if (ci[i][c].xf == XF_GENERAL)
                ci[i][c].xf = whole_numbers(col, t->nrows) ? XF_COUNT : XF_MS;
            size_t head = col->name ? tl_text_chars(col->name, strlen(col->name), XL_WIDTH_MAX) + 1 : 0;
            size_t body = tl_column_chars(t, c, ci[i][c].xf);
            size_t w = tl_fit_width(head > body ? head : body);
            if (w > width[c].width)
                width[c].width = w;
        }
    }
    for (size_t c = 0; c < ncols; c++)
        if (!width[c].width)
            width[c].width = tl_fit_width(0);

    tl_xb_sheet_open(b);
    /* printed landscape, one page wide: the blocks and the chart side by side; a group's
     * button (the chart data's) on its title row, above it */
    tl_buf_adds(b, "<sheetPr><outlinePr summaryBelow=\"0\"/><pageSetUpPr fitToPage=\"1\"/></sheetPr>");
    char last[8];
    tl_excel_col_letters(ncols - 1, last);
    tl_buf_printf(b, "<dimension ref=\"A1:%s%zu\"/>", last, pl->nrows);
    tl_buf_printf(b,
                  "<sheetViews><sheetView%s workbookViewId=\"0\"/></sheetViews>"
                  "<sheetFormatPr defaultRowHeight=\"15\"%s/>",
                  selected ? " tabSelected=\"1\"" : "", pl->s->chart ? " outlineLevelRow=\"1\"" : "");
    tl_xb_cols(b, width, pl->ncols);
    tl_buf_adds(b, "<sheetData>");
    tl_buf lower = {0}, higher = {0};
    for (size_t i = 0; i < pl->nblocks; i++) {
        const tl_sheet_block *bl = &pl->blocks[i];
        int grouped = pl->s->chart && i == pl->chart_block;
        if (pl->title_row[i]) {
            char row[24] = {0};
            size_t rowlen = tl_xb_dec(pl->title_row[i], row);
            colinfo a = {.ref = "A", .reflen = 1};
            char *p = xb_room(b, 48);
            PUT(p, "<row r=\"");
            memcpy(p, row, rowlen);
            p += rowlen;
            if (grouped)
                PUT(p, "\" collapsed=\"1\">");
            else
                PUT(p, "\">");
            if (*bl->title)
                p = tl_put_str_cell(b, p, &a, row, rowlen, XF_BOLD, bl->title, strlen(bl->title), &sc, "A",
                                 pl->title_row[i]);
            xb_done(b, p);
            tl_buf_adds(b, "</row>");
        }
        if (pl->head_row[i] && grouped) {
            /* the chart's numbers: there for whoever wants them, not in the reader's way */
            tl_buf rows = {0};
            tl_xb_header_row(&rows, bl->table, ci[i], pl->head_row[i], &sc);
            tl_xb_rows(&rows, bl->table, ci[i], 0, bl->table->nrows, pl->head_row[i] + 1, &sc, NULL);
            hide_rows(b, &rows);
            tl_buf_free(&rows);
        } else if (pl->head_row[i]) {
            const tl_table *t = bl->table;
            tl_xb_header_row(b, t, ci[i], pl->head_row[i], &sc);
            tl_xb_rows(b, t, ci[i], 0, t->nrows, pl->head_row[i] + 1, &sc, comp);
            if (t->nrows)
                for (size_t c = 0; c < t->ncols; c++)
                    if (ci[i][c].cf != CF_NONE)
                        tl_xb_range(ci[i][c].cf == CF_LOWER_BETTER ? &lower : &higher, c, pl->head_row[i] + 1,
                                 pl->head_row[i] + t->nrows);
        }
    }
    tl_buf_adds(b, "</sheetData>");
    tl_xb_cf(b, &lower, &higher);
    tl_buf_free(&lower);
    tl_buf_free(&higher);
    tl_buf_adds(b, SHEET_TAIL);
    tl_buf_adds(b, "<pageSetup orientation=\"landscape\" fitToWidth=\"1\" fitToHeight=\"0\"/>");
    if (pl->s->chart)
        tl_buf_adds(b, "<drawing r:id=\"rId1\"/>");
    tl_buf_adds(b, "</worksheet>");
    for (size_t i = 0; i < pl->nblocks; i++)
        free(ci[i]);
    free(ci);
    free(width);
}

/* ---- the chart ----------------------------------------------------------------------- */

static const char *const SERIES_COLOURS[] = {"4472C4", "ED7D31", "A5A5A5", "FFC000", "5B9BD5", "70AD47"};

static void xb_rich(tl_buf *b, const char *text, int size)
{
    tl_buf_printf(b,
                  "<c:tx><c:rich><a:bodyPr/><a:lstStyle/><a:p><a:pPr><a:defRPr sz=\"%d\" b=\"1\"/></a:pPr>"
                  "<a:r><a:rPr lang=\"en-US\" sz=\"%d\" b=\"1\"/><a:t>",
                  size, size);
    tl_xb_texts(b, text, TX_PLAIN);
    tl_buf_adds(b, "</a:t></a:r></a:p></c:rich></c:tx><c:overlay val=\"0\"/>");
}

void tl_render_chart(const summary_plan *pl, const char *tab, tl_buf *b)
{
    const tl_sheet_chart *ch = pl->s->chart;
    size_t head = pl->head_row[pl->chart_block], first = head + 1, lastr = head + ch->ncategories;
    tl_buf_adds(b, XML_DECL);
    tl_buf_printf(b,
                  "<c:chartSpace xmlns:c=\"http://schemas.openxmlformats.org/drawingml/2006/chart\" "
                  "xmlns:a=\"http://schemas.openxmlformats.org/drawingml/2006/main\" xmlns:r=\"%s\">"
                  "<c:roundedCorners val=\"0\"/><c:chart>",
                  NS_REL);
    if (ch->title && *ch->title) {
        tl_buf_adds(b, "<c:title>");
        xb_rich(b, ch->title, 1400);
        tl_buf_adds(b, "</c:title><c:autoTitleDeleted val=\"0\"/>");
    } else {
        tl_buf_adds(b, "<c:autoTitleDeleted val=\"1\"/>");
    }
    tl_buf_adds(b, "<c:plotArea><c:layout/><c:barChart><c:barDir val=\"bar\"/><c:grouping val=\"clustered\"/>"
                   "<c:varyColors val=\"0\"/>");
    for (size_t s = 0; s < ch->nseries; s++) {
        const tl_chart_series *se = &ch->series[s];
        tl_buf_printf(b, "<c:ser><c:idx val=\"%zu\"/><c:order val=\"%zu\"/><c:tx><c:strRef><c:f>", s, s);
        tl_xb_sheet_ref(b, tab);
        tl_xb_ref(b, 1 + s, head, 1);
        tl_buf_adds(b, "</c:f><c:strCache><c:ptCount val=\"1\"/><c:pt idx=\"0\"><c:v>");
        tl_xb_texts(b, se->name ? se->name : "", TX_PLAIN);
        tl_buf_printf(b,
                      "</c:v></c:pt></c:strCache></c:strRef></c:tx>"
                      "<c:spPr><a:solidFill><a:srgbClr val=\"%s\"/></a:solidFill></c:spPr>"
                      "<c:invertIfNegative val=\"0\"/>",
                      SERIES_COLOURS[s % (sizeof SERIES_COLOURS / sizeof *SERIES_COLOURS)]);
        if (ch->ncategories) {
            tl_buf_adds(b, "<c:cat><c:strRef><c:f>");
            tl_xb_sheet_ref(b, tab);
            tl_xb_ref(b, 0, first, 1);
            tl_buf_addc(b, ':');
            tl_xb_ref(b, 0, lastr, 1);
            tl_buf_printf(b, "</c:f><c:strCache><c:ptCount val=\"%zu\"/>", ch->ncategories);
            for (size_t k = 0; k < ch->ncategories; k++) {
                const char *cat = ch->categories[k];
                if (!cat || !*cat)
                    continue;
                tl_buf_printf(b, "<c:pt idx=\"%zu\"><c:v>", k);
                tl_xb_texts(b, cat, TX_PLAIN);
                tl_buf_adds(b, "</c:v></c:pt>");
            }
            tl_buf_adds(b, "</c:strCache></c:strRef></c:cat><c:val><c:numRef><c:f>");
            tl_xb_sheet_ref(b, tab);
            tl_xb_ref(b, 1 + s, first, 1);
            tl_buf_addc(b, ':');
            tl_xb_ref(b, 1 + s, lastr, 1);
            tl_buf_printf(b, "</c:f><c:numCache><c:formatCode>General</c:formatCode><c:ptCount val=\"%zu\"/>",
                          ch->ncategories);
            for (size_t k = 0; k < ch->ncategories; k++) {
                double v = se->values[k];
                if (!isfinite(v))
                    continue;
                char num[TL_NUMFMT_MAX];
                tl_fmt_double(v, num);
                tl_buf_printf(b, "<c:pt idx=\"%zu\"><c:v>%s</c:v></c:pt>", k, num);
            }
            tl_buf_adds(b, "</c:numCache></c:numRef></c:val>");
        }
        tl_buf_adds(b, "</c:ser>");
    }
    /* Categories top to bottom in sheet order: the category axis reversed, and the value
     * axis crossing it at its (now bottom) maximum. */
    tl_buf_adds(b, "<c:gapWidth val=\"60\"/><c:axId val=\"50010001\"/><c:axId val=\"50010002\"/></c:barChart>"
                   "<c:catAx><c:axId val=\"50010001\"/><c:scaling><c:orientation val=\"maxMin\"/></c:scaling>"
                   "<c:delete val=\"0\"/><c:axPos val=\"l\"/><c:numFmt formatCode=\"General\" sourceLinked=\"0\"/>"
                   "<c:majorTickMark val=\"none\"/><c:minorTickMark val=\"none\"/><c:tickLblPos val=\"nextTo\"/>"
                   "<c:crossAx val=\"50010002\"/><c:crosses val=\"autoZero\"/><c:auto val=\"1\"/>"
                   "<c:lblAlgn val=\"ctr\"/><c:lblOffset val=\"100\"/><c:noMultiLvlLbl val=\"0\"/></c:catAx>"
                   "<c:valAx><c:axId val=\"50010002\"/><c:scaling><c:orientation val=\"minMax\"/></c:scaling>"
                   "<c:delete val=\"0\"/><c:axPos val=\"b\"/><c:majorGridlines/>");
    if (ch->value_axis_title && *ch->value_axis_title) {
        tl_buf_adds(b, "<c:title>");
        xb_rich(b, ch->value_axis_title, 1000);
        tl_buf_adds(b, "</c:title>");
    }
    /* the data's rows are hidden (grouped under their title): plotted all the same */
    tl_buf_adds(b, "<c:numFmt formatCode=\"General\" sourceLinked=\"0\"/><c:majorTickMark val=\"out\"/>"
                   "<c:minorTickMark val=\"none\"/><c:tickLblPos val=\"nextTo\"/><c:crossAx val=\"50010001\"/>"
                   "<c:crosses val=\"max\"/><c:crossBetween val=\"between\"/></c:valAx></c:plotArea>"
                   "<c:legend><c:legendPos val=\"b\"/><c:overlay val=\"0\"/></c:legend>"
                   "<c:plotVisOnly val=\"0\"/><c:dispBlanksAs val=\"gap\"/></c:chart></c:chartSpace>");
}

/* The chart sits to the right of the blocks, one column apart, from the second row. */
void tl_render_drawing(const summary_plan *pl, tl_buf *b)
{
    const tl_sheet_chart *ch = pl->s->chart;
    size_t col = pl->ncols + 1, row = 1;
    size_t bars = ch->ncategories * (ch->nseries ? ch->nseries : 1);
    size_t height = bars + 8 < 20 ? 20 : bars + 8 > 60 ? 60 : bars + 8;
    tl_buf_adds(b, XML_DECL);
    tl_buf_printf(b,
                  "<xdr:wsDr xmlns:xdr=\"http://schemas.openxmlformats.org/drawingml/2006/spreadsheetDrawing\" "
                  "xmlns:a=\"http://schemas.openxmlformats.org/drawingml/2006/main\">"
                  "<xdr:twoCellAnchor editAs=\"oneCell\">"
                  "<xdr:from><xdr:col>%zu</xdr:col><xdr:colOff>0</xdr:colOff><xdr:row>%zu</xdr:row>"
                  "<xdr:rowOff>0</xdr:rowOff></xdr:from>"
                  "<xdr:to><xdr:col>%zu</xdr:col><xdr:colOff>0</xdr:colOff><xdr:row>%zu</xdr:row>"
                  "<xdr:rowOff>0</xdr:rowOff></xdr:to>"
                  "<xdr:graphicFrame macro=\"\"><xdr:nvGraphicFramePr><xdr:cNvPr id=\"2\" name=\"Chart 1\"/>"
                  "<xdr:cNvGraphicFramePr/></xdr:nvGraphicFramePr>"
                  "<xdr:xfrm><a:off x=\"0\" y=\"0\"/><a:ext cx=\"0\" cy=\"0\"/></xdr:xfrm>"
                  "<a:graphic><a:graphicData uri=\"http://schemas.openxmlformats.org/drawingml/2006/chart\">"
                  "<c:chart xmlns:c=\"http://schemas.openxmlformats.org/drawingml/2006/chart\" "
                  "xmlns:r=\"%s\" r:id=\"rId1\"/></a:graphicData></a:graphic></xdr:graphicFrame>"
                  "<xdr:clientData/></xdr:twoCellAnchor></xdr:wsDr>",
                  col, row, col + 12, row + height, NS_REL);
}

