/* `heaphook flame`: the call sites' stacks weighed by a cost, as collapsed
 * stacks (flamegraph.pl, inferno, speedscope) or an SVG flame graph
 * (flame.c). */
#define _GNU_SOURCE
#include <getopt.h>
#include <stdio.h>
#include <strings.h>

#include "cli.h"
#include "load.h"

static const char usage[] =
    "usage: heaphook flame [--cost peak|allocations|temporary|leaked|bytes] [--svg] [-o OUT] TRACE\n"
    "\n"
    "Writes every call site's stack, outermost frame first, with its cost:\n"
    "  main;parse;read_line 4096\n"
    "(the collapsed stacks that flamegraph.pl, inferno and speedscope read), or with\n"
    "--svg a flame graph whose boxes show each function's cost on hover. Allocator\n"
    "and heaphook frames are left out.\n"
    "\n"
    "costs:\n"
    "  peak          bytes held at the heap's peak (the default)\n"
    "  allocations   number of allocations\n"
    "  temporary     allocations freed before any other allocation or free of their thread\n"
    "  leaked        bytes still allocated at exit\n"
    "  bytes         bytes allocated in all\n"
    "\n"
    "options:\n"
    "  --cost COST         what the widths show\n"
    "  --svg               an SVG flame graph instead of collapsed stacks (the\n"
    "                      default when OUT ends in .svg)\n"
    "  -o, --output FILE   where to write (default: standard output)\n"
    "  -h, --help          this help\n";

int hh_cmd_flame(int argc, char **argv) {
  static const struct option opts[] = {
      {"cost", required_argument, NULL, 'c'},
      {"svg", no_argument, NULL, 's'},
      {"output", required_argument, NULL, 'o'},
      {"help", no_argument, NULL, 'h'},
      {NULL, 0, NULL, 0},
  };
  const char *output = NULL;
  hh_cost cost = HH_COST_PEAK;
  bool svg = false;
  hh_cli_args args = HH_CLI_ARGS("flame", usage, argc, argv);
  int c;
  while ((c = hh_cli_getopt(&args, ":ho:", opts)) != -1) {
    switch (c) {
      case HH_CLI_STOP:
        return args.status;
      case 'c':
        if (hh_cost_parse(optarg, &cost) != 0)
          return hh_cli_usage_error("flame", usage, "unknown cost \"%s\"", optarg);
        break;
      case 's':
        svg = true;
        break;
      case 'o':
        output = optarg;
        break;
    }
  }
  const char *path = hh_cli_one_trace(&args);
  if (!path) return args.status;
  /* (-o flame.svg without --svg wrote the collapsed stacks' text there) */
  const char *dot = output ? strrchr(output, '.') : NULL;
  if (dot && strcasecmp(dot, ".svg") == 0) svg = true;
  hh_loaded l;
  if (hh_cli_output_is_trace("flame", output, path)) return HH_EXIT_USAGE;
  int rc = hh_load("flame", path, &(hh_load_options){.profile = true}, &l);
  if (rc != 0) return rc;
  if (cost == HH_COST_TEMPORARY && !l.analysis->temporary_known) {
    hh_cli_error("flame",
                 "--cost temporary: %s is a sampled trace, which does not record the allocations between a "
                 "sample and its free",
                 path);
    hh_loaded_free(&l);
    return HH_EXIT_FAIL;
  }
  FILE *out = hh_cli_open_output("flame", output);
  if (!out) {
    hh_loaded_free(&l);
    return HH_EXIT_FAIL;
  }
  char title[512];
  snprintf(title, sizeof title, "%s: %s", hh_cost_name(cost), l.command);
  int wrc =
      svg ? hh_write_flame_svg(out, &l.profile, cost, title) : hh_write_collapsed(out, &l.profile, cost);
  if (wrc == HH_WRITE_LIMIT)
    hh_cli_memory_limit_error("flame", path, "the collapsed stacks", &l.profile);
  else if (wrc != 0)
    hh_cli_error("flame", "out of memory");
  if (hh_cli_close_output("flame", out, output) != 0) wrc = -1;
  /* the collapsed stacks have no place for it (the SVG has a line) */
  char note[160];
  if (wrc == 0 && !svg && hh_sampled_note(l.analysis, note, sizeof note))
    fprintf(stderr, "heaphook flame: %s: %s\n", path, note);
  rc = wrc != 0 ? HH_EXIT_FAIL : l.status;
  hh_loaded_free(&l);
  return rc;
}
