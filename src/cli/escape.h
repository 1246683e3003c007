/* Escaping text for the formats the heaphook command writes: JSON string
 * literals (report and diff --json, speedscope, the HTML page's data) and
 * XML/HTML text (the SVG flame graph, the HTML page's title). */
#ifndef HH_CLI_ESCAPE_H
#define HH_CLI_ESCAPE_H

#include <stdio.h>

enum {
  /* For JSON inside an HTML <script> element (html_page.c): every control
   * character and '<', '>', '&', '\'' as \u00XX (so neither "</script>" nor
   * "<!--" can appear), and U+2028 and U+2029 as \u escapes. */
  HH_JSON_SCRIPT = 1,
};

/* Writes s as a JSON string literal with its quotes, NULL as null. '"' and
 * '\\' are escaped, \n, \t and \r written as such and the other control
 * characters (DEL included) as \u00XX; bytes that are not valid UTF-8 (a
 * program's argv, a file name) as U+FFFD, as JSON must be UTF-8 (before,
 * they went out as they were and JSON readers refused the file); the rest
 * as it is, unless flags say otherwise (HH_JSON_SCRIPT). */
void hh_json_put_string(FILE *out, const char *s, unsigned flags);

enum {
  /* HTML text rather than XML's: '\'' as &#39; too, and control characters
   * kept as they are. */
  HH_XML_HTML = 1,
};

/* Writes s with '<', '>', '&' and '"' as entities, and the control
 * characters XML 1.0 forbids (all but tab and newline) as '?', unless flags
 * say otherwise (HH_XML_HTML). */
void hh_xml_put_text(FILE *out, const char *s, unsigned flags);

/* s for a line of text on a terminal: as it is when it holds no control
 * character, else copied into buf (size bytes) with \n, \t, \r and \xHH
 * for the others (ESC included). A program's name, argv, thread names and
 * markers are its own: a newline split heaphook's line in two, an escape
 * sequence reached the terminal. */
const char *hh_text_safe(const char *s, char *buf, size_t size);

#endif
