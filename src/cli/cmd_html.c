/* `heaphook html TRACE -o OUT.html`: the whole analysis as one
 * self-contained page (html_page.c writes it; html_assets/ holds its
 * template, CSS and JS). */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyze/analysis.h"
#include "cli.h"
#include "html_page.h"
#include "symbolize/symbolize.h"

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

typedef struct stack_ctx {
  hh_symbolizer *sym;
  const hh_reader *reader;
} stack_ctx;

static size_t stack_frames(void *arg, uint64_t stack, const hh_frame **out, size_t max) {
  stack_ctx *c = arg;
  return hh_sym_stack(c->sym, c->reader, stack, HH_SYM_FOLD, out, max);
}

/* The recorded command line, words separated by spaces (NULL when none). */
static char *command_line(const hh_reader *r) {
  const char *const *argv;
  const char *exe;
  int argc = hh_reader_command(r, &argv, &exe);
  if (argc <= 0) return NULL;
  size_t len = 1;
  for (int i = 0; i < argc; i++) len += strlen(argv[i]) + 1;
  char *s = malloc(len), *p = s;
  if (!s) return NULL;
  for (int i = 0; i < argc; i++) {
    if (i) *p++ = ' ';
    size_t n = strlen(argv[i]);
    memcpy(p, argv[i], n);
    p += n;
  }
  *p = 0;
  return s;
}

int hh_cmd_html(int argc, char **argv) {
  static const struct option opts[] = {
      {"output", required_argument, NULL, 'o'},
      {"sites", required_argument, NULL, 'S'},
      {"help", no_argument, NULL, 'h'},
      {NULL, 0, NULL, 0},
  };
  const char *output = NULL;
  size_t site_cap = 0;
  opterr = 0;
  optind = 1;
  int c;
  while ((c = getopt_long(argc, argv, ":ho:", opts, NULL)) != -1) {
    switch (c) {
      case 'o':
        output = optarg;
        break;
      case 'S': {
        char *end;
        errno = 0;
        unsigned long long n = strtoull(optarg, &end, 10);
        if (errno || end == optarg || *end || n == 0 || optarg[0] == '-' || n > 100000000ull)
          return hh_cli_usage_error("html", usage, "--sites wants a count from 1 on, not \"%s\"", optarg);
        site_cap = (size_t)n;
        break;
      }
      case 'h':
        fputs(usage, stdout);
        return HH_EXIT_OK;
      case ':':
        return hh_cli_usage_error("html", usage, "%s needs a value", argv[optind - 1]);
      default:
        return hh_cli_usage_error("html", usage, "unknown option %s", argv[optind - 1]);
    }
  }
  if (optind >= argc) return hh_cli_usage_error("html", usage, "no trace given");
  if (optind + 1 < argc)
    return hh_cli_usage_error("html", usage, "one trace at a time (got \"%s\" too)", argv[optind + 1]);
  if (!output) return hh_cli_usage_error("html", usage, "no output given (-o OUT.html)");
  const char *path = argv[optind];

  hh_reader *r = hh_cli_open_trace("html", path);
  if (!r) return HH_EXIT_FAIL;
  char err[512];
  hh_analyze_options opt = {.peak_blocks = true, .progress = true};
  hh_analysis *a = NULL;
  if (hh_analyze(r, &opt, &a, err, sizeof err) != 0) {
    hh_cli_error("html", "%s", err);
    hh_reader_close(r);
    return HH_EXIT_FAIL;
  }
  int status = hh_cli_report_status("html", r);

  hh_symbolizer *sym = hh_sym_new(NULL, NULL);
  char *command = command_line(r);
  int rc = HH_EXIT_FAIL;
  if (!sym) {
    hh_cli_error("html", "out of memory");
    goto done;
  }
  hh_sym_sync(sym, r);
  stack_ctx ctx = {sym, r};
  const char *slash = strrchr(path, '/');
  hh_html_input in = {
      .a = a,
      .trace_name = slash ? slash + 1 : path,
      .command = command,
      .stack = stack_frames,
      .stack_arg = &ctx,
      .site_cap = site_cap,
  };

  bool to_stdout = strcmp(output, "-") == 0;
  FILE *out = to_stdout ? stdout : fopen(output, "w");
  if (!out) {
    hh_cli_error("html", "cannot write %s: %s", output, strerror(errno));
    goto done;
  }
  int w = hh_html_write(out, &in);
  int saved = errno;
  if (!to_stdout && fclose(out) != 0 && w == 0) {
    w = -1;
    saved = errno;
  }
  if (w != 0) {
    hh_cli_error("html", "cannot write %s: %s", to_stdout ? "the page" : output, strerror(saved));
    if (!to_stdout) unlink(output);
    goto done;
  }
  rc = status;
done:
  free(command);
  if (sym) hh_sym_free(sym);
  hh_analysis_free(a);
  hh_reader_close(r);
  return rc;
}
