/*
 * xlsx_part_workbook.c - xl/workbook.xml: the sheets, in order, and the defined names
 * (one file per package part, as libxlsxwriter lays its writer out; xlsx_write.c puts
 * the parts into the zip).
 */
#include "write/xlsx_internal.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

void tl_part_workbook(const book *bk, tl_buf *b)
{
    tl_buf_adds(b, XML_DECL);
    tl_buf_printf(b,
                  "<workbook xmlns=\"%s\" xmlns:r=\"%s\"><workbookPr/>"
                  "<bookViews><workbookView xWindow=\"0\" yWindow=\"0\" windowWidth=\"28800\" "
                  "windowHeight=\"15000\" activeTab=\"0\"/></bookViews><sheets>",
                  NS_MAIN, NS_REL);
    for (size_t i = 0; i < bk->nsheets; i++) {
        tl_buf_adds(b, "<sheet name=\"");
        tl_xb_texts(b, bk->jobs[i].tab, TX_ATTR);
        tl_buf_printf(b, "\" sheetId=\"%zu\" r:id=\"rId%zu\"/>", bk->jobs[i].file, bk->jobs[i].file);
    }
    tl_buf_adds(b, "</sheets>");
    /* Excel keeps an autofilter's range in a hidden name per sheet. */
    int any = 0;
    for (size_t i = 0; i < bk->nsheets; i++) {
        const sheet_job *j = &bk->jobs[i];
        if (j->kind != SHEET_RESULT || !j->ncols)
            continue;
        if (!any)
            tl_buf_adds(b, "<definedNames>");
        any = 1;
        tl_buf_printf(b, "<definedName name=\"_xlnm._FilterDatabase\" localSheetId=\"%zu\" hidden=\"1\">", i);
        tl_xb_sheet_ref(b, j->tab);
        tl_xb_ref(b, 0, 1, 1);
        tl_buf_addc(b, ':');
        tl_xb_ref(b, j->ncols - 1, j->nrows + 1, 1);
        tl_buf_adds(b, "</definedName>");
    }
    if (any)
        tl_buf_adds(b, "</definedNames>");
    tl_buf_adds(b, "<calcPr calcId=\"124519\" fullCalcOnLoad=\"1\"/></workbook>");
}
