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

/* Writes s with '<', '>', '&' and '"' as entities, the control
 * characters XML 1.0 forbids (all but tab and newline) as '?', unless flags
 * say otherwise (HH_XML_HTML), and bytes that are not valid UTF-8 as
 * U+FFFD (an SVG with a program's Latin-1 argument was not well-formed). */
void hh_xml_put_text(FILE *out, const char *s, unsigned flags);

/* UTF-8, which XML, protobuf strings and cairo's text require, where a
 * program's own bytes (argv, markers, thread and file names) need not be.
 * hh_utf8_safe: s as it is when it is valid UTF-8 and fits in size bytes,
 * else copied into buf with each byte that starts no valid sequence as
 * U+FFFD, cut at the end of a character where buf is too small.
 * hh_utf8_dup: the same in a new malloc'd string (NULL: out of memory).
 * hh_utf8_cut: the length of s's first n bytes (n <= strlen(s)), less the
 * bytes of a character that the cut would split. */
const char *hh_utf8_safe(const char *s, char *buf, size_t size);
char *hh_utf8_dup(const char *s);
size_t hh_utf8_cut(const char *s, size_t n);

/* s for a line of text on a terminal: as it is when it holds no control
 * character and no backslash, else copied into buf (size bytes) with \n,
 * \t, \r and \xHH for the others (ESC included), and \\ for a backslash,
 * so that the escapes read one way (until 2026-11-25 a backslash came out
 * as it is: a backslash and a tab, and two backslashes and "t", both came
 * out as \\t). A
 * program's name, argv, thread names and markers are its own: a newline
 * split heaphook's line in two, an escape sequence reached the terminal. */
const char *hh_text_safe(const char *s, char *buf, size_t size);
/* The same for text shown between double quotes: a quote is \" too (a
 * thread named q"t showed as "q"t"). */
const char *hh_text_safe_quoted(const char *s, char *buf, size_t size);

#endif
