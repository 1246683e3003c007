/* Opening, analysing and symbolizing a trace (load.h). */
#include "load.h"

#include <stdlib.h>
#include <string.h>

#include "cli.h"

size_t hh_loaded_stack_frames(void *arg, uint64_t stack, const hh_frame **out, size_t max) {
  hh_loaded *l = arg;
  return hh_sym_stack(l->sym, l->reader, stack, HH_SYM_FOLD, out, max);
}

static char *command_line(const hh_reader *r, const char *path, bool *recorded) {
  const char *const *argv;
  const char *exe;
  int argc = hh_reader_command(r, &argv, &exe);
  *recorded = argc > 0;
  size_t len = 1;
  for (int i = 0; i < argc; i++) len += strlen(argv[i]) + 1;
  char *s = malloc(argc ? len : strlen(path) + 1);
  if (!s) return NULL;
  if (argc == 0) return strcpy(s, path);
  s[0] = 0;
  for (int i = 0; i < argc; i++) {
    if (i) strcat(s, " ");
    strcat(s, argv[i]);
  }
  return s;
}

int hh_load(const char *cmd, const char *path, const hh_load_options *opt, hh_loaded *out) {
  memset(out, 0, sizeof *out);
  out->reader = hh_cli_open_trace(cmd, path);
  if (!out->reader) return HH_EXIT_FAIL;
  char err[512];
  hh_analyze_options aopt = {.peak_blocks = opt->peak_blocks, .progress = true};
  /* HEAPHOOK_PROGRESS_AFTER=SECONDS: show the bar sooner or later than
   * after one second (the tests use 0.000001 to see it on a small trace). */
  const char *after = getenv("HEAPHOOK_PROGRESS_AFTER");
  if (after && *after) {
    char *end;
    double v = strtod(after, &end);
    if (*end || !(v > 0)) {
      hh_cli_error(cmd, "HEAPHOOK_PROGRESS_AFTER=%s is not a number of seconds above 0", after);
      hh_loaded_free(out);
      return HH_EXIT_FAIL;
    }
    aopt.progress_after = v;
  }
  if (hh_analyze(out->reader, &aopt, &out->analysis, err, sizeof err) != 0) {
    hh_cli_error(cmd, "%s", err);
    hh_loaded_free(out);
    return HH_EXIT_FAIL;
  }
  if (!opt->status_later) out->status = hh_cli_report_status(cmd, out->reader);
  out->command = command_line(out->reader, path, &out->has_command);
  if (!out->command) goto oom;
  if (opt->symbols || opt->profile) {
    out->sym = hh_sym_new(opt->warn, opt->warn_arg);
    hh_sym_sync(out->sym, out->reader);
  }
  if (opt->profile && hh_profile_build(&out->profile, out->analysis, hh_loaded_stack_frames, out) != 0)
    goto oom;
  return 0;
oom:
  hh_cli_error(cmd, "out of memory");
  hh_loaded_free(out);
  return HH_EXIT_FAIL;
}

void hh_loaded_free(hh_loaded *l) {
  hh_profile_free(&l->profile);
  if (l->sym) hh_sym_free(l->sym);
  if (l->analysis) hh_analysis_free(l->analysis);
  if (l->reader) hh_reader_close(l->reader);
  free(l->command);
  memset(l, 0, sizeof *l);
}
