/* `heaphook plot`: heap in use over time, with RSS and markers, as an SVG,
 * PDF or PNG chart (chart.c, drawn with cairo). */
#define _GNU_SOURCE
#include <getopt.h>
#include <stdio.h>

#include "cli.h"
#include "load.h"

static const char usage[] =
    "usage: heaphook plot TRACE -o OUT.svg|OUT.pdf|OUT.png\n"
    "\n"
    "Draws the heap in use over the run (bytes against time), the resident set\n"
    "size when the trace has it, markers as labelled vertical lines, and the peak.\n"
    "The output's extension picks the format: .svg, .pdf or .png.\n"
    "\n"
    "options:\n"
    "  -o, --output FILE   where to write the chart (required)\n"
    "  -h, --help          this help\n";

int hh_cmd_plot(int argc, char **argv) {
  static const struct option opts[] = {
      {"output", required_argument, NULL, 'o'},
      {"help", no_argument, NULL, 'h'},
      {NULL, 0, NULL, 0},
  };
  const char *output = NULL;
  hh_cli_args args = HH_CLI_ARGS("plot", usage, argc, argv);
  int c;
  while ((c = hh_cli_getopt(&args, ":ho:", opts)) != -1) {
    switch (c) {
      case HH_CLI_STOP:
        return args.status;
      case 'o':
        output = optarg;
        break;
    }
  }
  const char *path = hh_cli_one_trace(&args);
  if (!path) return args.status;
  if (!output) return hh_cli_usage_error("plot", usage, "no output given (-o OUT.svg, OUT.pdf or OUT.png)");
  hh_chart_format format;
  if (hh_chart_format_of(output, &format) != 0) {
    hh_cli_error("plot", "cannot tell the format of \"%s\": name it .svg, .pdf or .png", output);
    return HH_EXIT_USAGE;
  }
  hh_loaded l;
  if (hh_cli_output_is_trace("plot", output, path)) return HH_EXIT_USAGE;
  int rc = hh_load("plot", path, &(hh_load_options){0}, &l);
  if (rc != 0) return rc;
  char err[512];
  if (hh_chart_write(output, format, l.analysis, l.command, err, sizeof err) != 0) {
    hh_cli_error("plot", "%s", err);
    rc = HH_EXIT_FAIL;
  } else {
    rc = l.status;
  }
  hh_loaded_free(&l);
  return rc;
}
