/* `heaphook html TRACE -o OUT.html`: the whole analysis as one
 * self-contained page (html_page.c writes it; html_assets/ holds its
 * template, CSS and JS). */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "html_page.h"
#include "load.h"
#include "report_common.h"

static const char usage[] =
    "usage: heaphook html [--sites N] -o OUT.html TRACE\n"
    "\n"
    "Writes the analysis of TRACE as one self-contained HTML page that loads\n"
    "nothing from anywhere: the heap (and RSS, and markers) over time with the peak,\n"
    "a flame graph switchable between bytes at the peak, allocations, temporary\n"
    "allocations and bytes leaked, a sortable table of call sites (click one for its\n"
    "stack), the sizes allocated, and a map of the address ranges occupied at the\n"
    "peak. Exits 1 when the trace is damaged or cut short (after writing the page\n"
    "for what could be read).\n"
    "\n"
    "options:\n"
    "  -o, --output OUT  the page to write (\"-\": standard output)\n"
    "  --sites N         call sites on the page: the top N by each of peak,\n"
    "                    allocations, temporary, leaked and bytes (default 2000;\n"
    "                    the page says when some were left out)\n"
    "  -h, --help        this help\n";

int hh_cmd_html(int argc, char **argv) {
  static const struct option opts[] = {
      {"output", required_argument, NULL, 'o'},
      {"sites", required_argument, NULL, 'S'},
      {"help", no_argument, NULL, 'h'},
      {NULL, 0, NULL, 0},
  };
  const char *output = NULL;
  size_t site_cap = 0;
  hh_cli_args args = HH_CLI_ARGS("html", usage, argc, argv);
  int c;
  while ((c = hh_cli_getopt(&args, ":ho:", opts)) != -1) {
    switch (c) {
      case HH_CLI_STOP:
        return args.status;
      case 'o':
        output = optarg;
        break;
      case 'S': {
        size_t n;
        if (hh_cli_parse_count(optarg, &n) != 0 || n == 0 || n > 100000000u)
          return hh_cli_usage_error("html", usage, "--sites wants a count from 1 to 100000000, not \"%s\"",
                                    optarg);
        site_cap = n;
        break;
      }
    }
  }
  const char *path = hh_cli_one_trace(&args);
  if (!path) return args.status;
  if (!output) return hh_cli_usage_error("html", usage, "no output given (-o OUT.html)");

  hh_loaded l;
  if (hh_cli_output_is_trace("html", output, path)) return HH_EXIT_USAGE;
  int rc = hh_load("html", path, &(hh_load_options){.symbols = true, .peak_blocks = true}, &l);
  if (rc != 0) return rc;
  hh_html_input in = {
      .a = l.analysis,
      .trace_name = hh_basename(path),
      .command = l.has_command ? l.command : NULL,
      .stack = hh_loaded_stack_frames,
      .stack_arg = &l,
      .site_cap = site_cap,
  };

  rc = HH_EXIT_FAIL;
  FILE *out = hh_cli_open_output("html", output);
  if (!out) goto done;
  bool to_stdout = out == stdout;
  int w = hh_html_write(out, &in);
  int saved = hh_cli_write_error(out) ? hh_cli_write_error(out) : errno;
  if (!to_stdout && fclose(out) != 0 && w == 0) {
    w = -1;
    saved = errno;
  }
  if (w != 0) {
    hh_cli_error("html", "cannot write %s: %s", to_stdout ? "standard output" : output, strerror(saved));
    if (!to_stdout) hh_cli_discard_output(output); /* the half-written page */
    goto done;
  }
  rc = l.status;
done:
  hh_loaded_free(&l);
  return rc;
}
