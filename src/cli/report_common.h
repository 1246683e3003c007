/* Pieces shared by `heaphook report` and `heaphook diff`: call-site stacks
 * as text and JSON, the trace status as a word (JSON strings: escape.h). */
#ifndef HH_CLI_REPORT_COMMON_H
#define HH_CLI_REPORT_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "analyze/analysis.h"
#include "cli.h"
#include "escape.h"
#include "symbolize/symbolize.h"

#define HH_REPORT_MAX_FRAMES 64

/* A count given on the command line: digits only, at most SIZE_MAX; 0 or
 * -1. */
int hh_cli_parse_count(const char *s, size_t *out);

/* The options report and diff share: --json, --top N, --frames N (and -h).
 * Returns false when the command should return a->status now (help printed,
 * or a usage error); optind is then past the options. */
bool hh_report_options(hh_cli_args *a, bool *json, size_t *top, size_t *frames);

/* The folded frames of stack id (allocator frames at the inner end left
 * out), innermost first; returns the count (0 for stack 0). */
size_t hh_report_frames(hh_symbolizer *sym, const hh_reader *r, uint64_t stack, const hh_frame **out,
                        size_t max);
/* "function (file:line)", "function (module+0xoff)" or "0xip". */
void hh_report_put_frame(FILE *out, const hh_frame *f);
/* The text report's stack: a frame per line, indented, at most `frames`
 * (0: all) and "... N more frames"; "[no stack recorded]" for none. */
void hh_report_text_stack(FILE *out, hh_symbolizer *sym, const hh_reader *r, uint64_t stack, size_t frames);
/* The key diff matches sites by: "outer;...;inner" function names (a frame
 * without one: its module's file name and offset); "[no stack]" for stack
 * 0. malloc'd. */
char *hh_report_site_key(hh_symbolizer *sym, const hh_reader *r, uint64_t stack);
/* The same key's bytes into *buf (grown as needed, *cap its size),
 * NUL-terminated; returns its length. */
size_t hh_report_site_key_into(hh_symbolizer *sym, const hh_reader *r, uint64_t stack, char **buf,
                               size_t *cap);
/* [{"function":..,"file":..,"line":..,"module":..,"inlined":..}, ...] */
void hh_report_json_frames(FILE *out, const hh_frame *const *frames, size_t n);
/* "ok", "no_end", "cut_short", "damaged", "io_error" */
const char *hh_report_status_word(hh_read_status st);

#endif
