/*
 * xlsx_part_rels.c - the relationships parts: _rels/.rels, xl/_rels/workbook.xml.rels, and a part's own
 * (one file per package part, as libxlsxwriter lays its writer out; xlsx_write.c puts
 * the parts into the zip).
 */
#include "write/xlsx_internal.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

void tl_part_root_rels(tl_buf *b)
{
    tl_buf_adds(b, XML_DECL);
    tl_buf_printf(b,
                  "<Relationships xmlns=\"%s\">"
                  "<Relationship Id=\"rId1\" Type=\"%s/officeDocument\" Target=\"xl/workbook.xml\"/>"
                  "<Relationship Id=\"rId2\" "
                  "Type=\"http://schemas.openxmlformats.org/package/2006/relationships/metadata/core-properties\" "
                  "Target=\"docProps/core.xml\"/>"
                  "<Relationship Id=\"rId3\" Type=\"%s/extended-properties\" Target=\"docProps/app.xml\"/>"
                  "</Relationships>",
                  NS_PKGREL, NS_REL, NS_REL);
}

void tl_part_workbook_rels(const book *bk, tl_buf *b)
{
    tl_buf_adds(b, XML_DECL);
    tl_buf_printf(b, "<Relationships xmlns=\"%s\">", NS_PKGREL);
    for (size_t i = 0; i < bk->nsheets; i++)
        tl_buf_printf(b, "<Relationship Id=\"rId%zu\" Type=\"%s/worksheet\" Target=\"worksheets/sheet%zu.xml\"/>",
                      bk->jobs[i].file, NS_REL, bk->jobs[i].file);
    tl_buf_printf(b, "<Relationship Id=\"rId%zu\" Type=\"%s/styles\" Target=\"styles.xml\"/></Relationships>",
                  bk->nsheets + 1, NS_REL);
}

void tl_part_rels_one(tl_buf *b, const char *type, const char *target)
{
    tl_buf_adds(b, XML_DECL);
    tl_buf_printf(b,
                  "<Relationships xmlns=\"%s\"><Relationship Id=\"rId1\" Type=\"%s/%s\" Target=\"%s\"/>"
                  "</Relationships>",
                  NS_PKGREL, NS_REL, type, target);
}
