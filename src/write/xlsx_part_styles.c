/*
 * xlsx_part_styles.c - xl/styles.xml: the header's bold, the number formats, the conditional formats' colours
 * (one file per package part, as libxlsxwriter lays its writer out; xlsx_write.c puts
 * the parts into the zip).
 */
#include "write/xlsx_internal.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

void tl_part_styles(tl_buf *b)
{
    tl_buf_adds(b, XML_DECL);
    tl_buf_printf(b,
                  "<styleSheet xmlns=\"%s\">"
                  "<numFmts count=\"1\"><numFmt numFmtId=\"164\" formatCode=\"#,##0.000\"/></numFmts>"
                  "<fonts count=\"2\">"
                  "<font><sz val=\"11\"/><name val=\"Calibri\"/><family val=\"2\"/></font>"
                  "<font><b/><sz val=\"11\"/><name val=\"Calibri\"/><family val=\"2\"/></font></fonts>"
                  "<fills count=\"2\"><fill><patternFill patternType=\"none\"/></fill>"
                  "<fill><patternFill patternType=\"gray125\"/></fill></fills>"
                  "<borders count=\"1\"><border><left/><right/><top/><bottom/><diagonal/></border></borders>"
                  "<cellStyleXfs count=\"1\"><xf numFmtId=\"0\" fontId=\"0\" fillId=\"0\" borderId=\"0\"/>"
                  "</cellStyleXfs>"
                  "<cellXfs count=\"6\">"
                  "<xf numFmtId=\"0\" fontId=\"0\" fillId=\"0\" borderId=\"0\" xfId=\"0\"/>"
                  "<xf numFmtId=\"0\" fontId=\"1\" fillId=\"0\" borderId=\"0\" xfId=\"0\" applyFont=\"1\"/>"
                  "<xf numFmtId=\"2\" fontId=\"0\" fillId=\"0\" borderId=\"0\" xfId=\"0\" applyNumberFormat=\"1\"/>"
                  "<xf numFmtId=\"164\" fontId=\"0\" fillId=\"0\" borderId=\"0\" xfId=\"0\" applyNumberFormat=\"1\"/>"
                  "<xf numFmtId=\"4\" fontId=\"0\" fillId=\"0\" borderId=\"0\" xfId=\"0\" applyNumberFormat=\"1\"/>"
                  "<xf numFmtId=\"3\" fontId=\"0\" fillId=\"0\" borderId=\"0\" xfId=\"0\" applyNumberFormat=\"1\"/>"
                  "</cellXfs>"
                  "<cellStyles count=\"1\"><cellStyle name=\"Normal\" xfId=\"0\" builtinId=\"0\"/></cellStyles>"
                  "<dxfs count=\"2\">"
                  "<dxf><font><color rgb=\"FF9C0006\"/></font><fill><patternFill><bgColor rgb=\"FFFFC7CE\"/>"
                  "</patternFill></fill></dxf>"
                  "<dxf><font><color rgb=\"FF006100\"/></font><fill><patternFill><bgColor rgb=\"FFC6EFCE\"/>"
                  "</patternFill></fill></dxf></dxfs>"
                  "<tableStyles count=\"0\" defaultTableStyle=\"TableStyleMedium9\" "
                  "defaultPivotStyle=\"PivotStyleLight16\"/></styleSheet>",
                  NS_MAIN);
}
