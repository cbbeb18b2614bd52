/*
 * xlsx_part_core.c - docProps/core.xml: the package's creation time
 * (one file per package part, as libxlsxwriter lays its writer out; xlsx_write.c puts
 * the parts into the zip).
 */
#include "write/xlsx_internal.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

void tl_part_core(tl_buf *b)
{
    char when[32] = "1980-01-01T00:00:00Z";
    time_t now = tl_output_time();
    struct tm tm;
    if (now != (time_t)-1 && gmtime_r(&now, &tm))
        strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
    tl_buf_adds(b, XML_DECL);
    tl_buf_printf(b,
                  "<cp:coreProperties "
                  "xmlns:cp=\"http://schemas.openxmlformats.org/package/2006/metadata/core-properties\" "
                  "xmlns:dc=\"http://purl.org/dc/elements/1.1/\" xmlns:dcterms=\"http://purl.org/dc/terms/\" "
                  "xmlns:dcmitype=\"http://purl.org/dc/dcmitype/\" "
                  "xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\">"
                  "<dc:title>TraceLens performance comparison</dc:title><dc:creator>tlcompare</dc:creator>"
                  "<dcterms:created xsi:type=\"dcterms:W3CDTF\">%s</dcterms:created>"
                  "<dcterms:modified xsi:type=\"dcterms:W3CDTF\">%s</dcterms:modified>"
                  "</cp:coreProperties>",
                  when, when);
}
