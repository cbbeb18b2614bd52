/*
 * xlsx_part_app.c - docProps/app.xml: the application that wrote the package
 * (one file per package part, as libxlsxwriter lays its writer out; xlsx_write.c puts
 * the parts into the zip).
 */
#include "write/xlsx_internal.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

void tl_part_app(tl_buf *b)
{
    tl_buf_adds(b, XML_DECL);
    tl_buf_adds(b, "<Properties xmlns=\"http://schemas.openxmlformats.org/officeDocument/2006/extended-properties\" "
                   "xmlns:vt=\"http://schemas.openxmlformats.org/officeDocument/2006/docPropsVTypes\">"
                   "<Application>tlcompare</Application><DocSecurity>0</DocSecurity>"
                   "<ScaleCrop>false</ScaleCrop></Properties>");
}
