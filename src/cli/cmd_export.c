/* `heaphook export`: a trace's analysis in the formats other tools read:
 * valgrind massif's (ms_print, massif-visualizer), pprof's gzipped
 * profile.proto (go tool pprof, pprof's web UI) and speedscope's JSON. */
#define _GNU_SOURCE
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "load.h"

static const char usage[] =
    "usage: heaphook export --format massif|pprof|speedscope -o OUT TRACE\n"
    "\n"
    "formats:\n"
    "  massif       valgrind massif's massif.out (ms_print, massif-visualizer): the heap\n"
    "               over time, with the allocation tree at the peak and at the end\n"
    "  pprof        pprof's profile.proto, gzipped (go tool pprof, pprof -http): sample\n"
    "               types alloc_objects, alloc_space, inuse_objects, inuse_space, where\n"
    "               \"inuse\" is what was live at the heap's peak\n"
    "  speedscope   speedscope's JSON (https://www.speedscope.app): profiles \"peak\"\n"
    "               (bytes), \"allocations\" (count) and \"leaked\" (bytes)\n"
    "\n"
    "options:\n"
    "  -f, --format FORMAT  the format (required)\n"
    "  -o, --output FILE    where to write (required; \"-\" is standard output, except\n"
    "                       for pprof)\n"
    "  -h, --help           this help\n";

enum { FMT_NONE, FMT_MASSIF, FMT_PPROF, FMT_SPEEDSCOPE };

int hh_cmd_export(int argc, char **argv) {
  static const struct option opts[] = {
      {"format", required_argument, NULL, 'f'},
      {"output", required_argument, NULL, 'o'},
      {"help", no_argument, NULL, 'h'},
      {NULL, 0, NULL, 0},
  };
  const char *output = NULL;
  int format = FMT_NONE;
  hh_cli_args args = HH_CLI_ARGS("export", usage, argc, argv);
  int c;
  while ((c = hh_cli_getopt(&args, ":hf:o:", opts)) != -1) {
    switch (c) {
      case HH_CLI_STOP:
        return args.status;
      case 'f':
        if (strcmp(optarg, "massif") == 0)
          format = FMT_MASSIF;
        else if (strcmp(optarg, "pprof") == 0)
          format = FMT_PPROF;
        else if (strcmp(optarg, "speedscope") == 0)
          format = FMT_SPEEDSCOPE;
        else
          return hh_cli_usage_error("export", usage, "unknown format \"%s\"", optarg);
        break;
      case 'o':
        output = optarg;
        break;
    }
  }
  const char *path = hh_cli_one_trace(&args);
  if (!path) return args.status;
  if (format == FMT_NONE) return hh_cli_usage_error("export", usage, "no format given (--format)");
  if (!output) return hh_cli_usage_error("export", usage, "no output given (-o FILE)");
  if (strcmp(output, "-") == 0 && format == FMT_PPROF)
    return hh_cli_usage_error("export", usage, "pprof's output is a gzipped file: name it with -o");

  hh_loaded l;
  if (hh_cli_output_is_trace("export", output, path)) return HH_EXIT_USAGE;
  int rc = hh_load("export", path, &(hh_load_options){.profile = true}, &l);
  if (rc != 0) return rc;
  int wrc = 0;
  if (format == FMT_PPROF) {
    size_t n = hh_reader_module_count(l.reader);
    const hh_trace_module **modules = malloc((n ? n : 1) * sizeof *modules);
    char err[512];
    if (!modules) {
      hh_cli_error("export", "out of memory");
      wrc = -1;
    } else {
      for (size_t i = 0; i < n; i++) modules[i] = hh_reader_module(l.reader, i);
      wrc = hh_write_pprof(output, &l.profile, modules, n, l.command, err, sizeof err);
      if (wrc != 0) hh_cli_error("export", "%s", err);
      free(modules);
    }
  } else {
    FILE *out = hh_cli_open_output("export", output);
    if (!out) {
      hh_loaded_free(&l);
      return HH_EXIT_FAIL;
    }
    if (format == FMT_MASSIF)
      wrc = hh_write_massif(out, &l.profile, l.command, 0);
    else
      wrc = hh_write_speedscope(out, &l.profile, l.command);
    if (wrc == HH_WRITE_LIMIT)
      hh_cli_memory_limit_error("export", path, "massif's allocation tree", &l.profile);
    else if (wrc != 0)
      hh_cli_error("export", "out of memory");
    if (hh_cli_close_output("export", out, output) != 0) wrc = -1;
    if (wrc == HH_WRITE_LIMIT) hh_cli_discard_output(output); /* (a file cut in its tree) */
  }
  rc = wrc != 0 ? HH_EXIT_FAIL : l.status;
  hh_loaded_free(&l);
  return rc;
}
