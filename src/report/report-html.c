/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Putting the page together: the embedded template with its placeholders replaced by the title
 * (HTML-escaped), the styles, the script and the JSON document (with '<' written as \u003c, so no
 * string in it can end the <script> element it sits in).
 */
#include <errno.h>
#include <string.h>

#include "report/report-internal.h"

static int write_escaped_html(FILE *out, const char *s) {
        for (; *s; s++)
                switch (*s) {
                case '<':
                        fputs("&lt;", out);
                        break;
                case '>':
                        fputs("&gt;", out);
                        break;
                case '&':
                        fputs("&amp;", out);
                        break;
                case '"':
                        fputs("&quot;", out);
                        break;
                default:
                        fputc(*s, out);
                }
        return 0;
}

static int write_json_for_script(FILE *out, const char *json) {
        for (const char *p = json; *p;) {
                const char *lt = strchr(p, '<');
                if (!lt) {
                        fputs(p, out);
                        break;
                }
                fwrite(p, 1, (size_t) (lt - p), out);
                fputs("\\u003c", out);
                p = lt + 1;
        }
        return 0;
}

int report_html_write(FILE *out, const char *title, const char *json) {
        static const char *const markers[] = { "@TITLE@", "/*@CSS@*/", "/*@JS@*/", "@DATA@" };
        const char *p = report_asset_html;

        for (;;) {
                const char *next = NULL;
                size_t which = 0;

                for (size_t i = 0; i < sizeof markers / sizeof markers[0]; i++) {
                        const char *q = strstr(p, markers[i]);
                        if (q && (!next || q < next)) {
                                next = q;
                                which = i;
                        }
                }
                if (!next) {
                        fputs(p, out);
                        break;
                }
                fwrite(p, 1, (size_t) (next - p), out);
                switch (which) {
                case 0:
                        write_escaped_html(out, title ?: "tprof");
                        break;
                case 1:
                        fputs(report_asset_css, out);
                        break;
                case 2:
                        fputs(report_asset_js, out);
                        break;
                default:
                        write_json_for_script(out, json);
                }
                p = next + strlen(markers[which]);
        }
        return ferror(out) ? -EIO : 0;
}
