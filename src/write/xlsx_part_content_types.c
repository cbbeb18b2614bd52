/*
 * xlsx_part_content_types.c - [Content_Types].xml: the content type of every part of the package
 * (one file per package part, as libxlsxwriter lays its writer out; xlsx_write.c puts
 * the parts into the zip).
 */
#include "write/xlsx_internal.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

void tl_part_content_types(const book *bk, tl_buf *b)
{
    tl_buf_adds(b, XML_DECL);
    tl_buf_adds(b,
                "<Types xmlns=\"http://schemas.openxmlformats.org/package/2006/content-types\">"
                "<Default Extension=\"rels\" ContentType=\"application/vnd.openxmlformats-package.relationships+xml\"/>"
                "<Default Extension=\"xml\" ContentType=\"application/xml\"/>"
                "<Override PartName=\"/xl/workbook.xml\" "
                "ContentType=\"application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml\"/>"
                "<Override PartName=\"/xl/styles.xml\" "
                "ContentType=\"application/vnd.openxmlformats-officedocument.spreadsheetml.styles+xml\"/>"
                "<Override PartName=\"/docProps/core.xml\" "
                "ContentType=\"application/vnd.openxmlformats-package.core-properties+xml\"/>"
                "<Override PartName=\"/docProps/app.xml\" "
                "ContentType=\"application/vnd.openxmlformats-officedocument.extended-properties+xml\"/>");
    for (size_t i = 0; i < bk->nsheets; i++)
        tl_buf_printf(b,
                      "<Override PartName=\"/xl/worksheets/sheet%zu.xml\" "
                      "ContentType=\"application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml\"/>",
                      bk->jobs[i].file);
    if (bk->has_chart)
        tl_buf_adds(b, "<Override PartName=\"/xl/drawings/drawing1.xml\" "
                       "ContentType=\"application/vnd.openxmlformats-officedocument.drawing+xml\"/>"
                       "<Override PartName=\"/xl/charts/chart1.xml\" "
                       "ContentType=\"application/vnd.openxmlformats-officedocument.drawingml.chart+xml\"/>");
    tl_buf_adds(b, "</Types>");
}
