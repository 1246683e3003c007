/* The HTML report (`heaphook html`): one self-contained page, the data as a
 * JSON blob in a <script type="application/json"> element and the page's
 * own CSS and JS (src/cli/html_assets/, embedded into the binary at build
 * time by embed.cmake) rendering it. No network, no external files.
 *
 * The writer reads an hh_analysis and asks a callback for each call site's
 * frames (hh_sym_stack in the command; canned frames in the tests), so it
 * can be exercised without a trace. Nothing here touches a->reader. */
#ifndef HH_CLI_HTML_PAGE_H
#define HH_CLI_HTML_PAGE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "analyze/analysis.h"
#include "symbolize/symbolize.h"

/* Sites sent per cost (the page gets the union of the top sites by peak,
 * allocations, temporary, leaked and bytes) when hh_html_input.site_cap is 0. */
#define HH_HTML_SITE_CAP 2000

/* The frames of `stack`, innermost first, into out[0..max); returns how many.
 * Frames must stay valid until hh_html_write returns. */
typedef size_t (*hh_html_stack_fn)(void *arg, uint64_t stack, const hh_frame **out, size_t max);

typedef struct hh_html_input {
  const hh_analysis *a;
  const char *trace_name; /* shown in the title */
  const char *command;    /* the recorded command line; NULL when unknown */
  hh_html_stack_fn stack;
  void *stack_arg;
  size_t site_cap; /* 0: HH_HTML_SITE_CAP */
} hh_html_input;

/* Writes the page to out. Returns 0, or -1 when out reports a write error
 * (errno set) or memory runs out. */
int hh_html_write(FILE *out, const hh_html_input *in);

/* The page's pieces (generated from src/cli/html_assets/ at build time). */
extern const unsigned char hh_asset_page_html[], hh_asset_page_css[], hh_asset_page_js[];
extern const size_t hh_asset_page_html_len, hh_asset_page_css_len, hh_asset_page_js_len;

#endif
