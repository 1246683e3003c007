/* Opening, analysing and symbolizing a trace (load.h). */
#include "load.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "side_thread.h"

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
  /* (appended at its end, not by strcat: that went through the whole
   * string for each argument, seconds for a crafted trace of many) */
  size_t n = 0;
  for (int i = 0; i < argc; i++) {
    if (i) s[n++] = ' ';
    size_t k = strlen(argv[i]);
    memcpy(s + n, argv[i], k);
    n += k;
  }
  s[n] = 0;
  return s;
}

/* ---- symbols while the analysis runs --------------------------------------
 * Opening a module's debug information is the slow part of symbolizing
 * (libdw decompresses whole sections: ~40 ms for glibc's separate debug
 * file), and it used to start only when the analysis was done. A thread of
 * its own now reads the trace's first chunk with a reader of its own and
 * symbolizes the return addresses of the stacks defined there, which opens
 * the modules they are in; the symbolizer is handed over when the analysis
 * ends (the thread stops at its next address when asked) and goes on with
 * the main reader if its modules are that reader's first ones, in the same
 * order (hh_sym_agrees; otherwise a fresh one is used). Results are cached by
 * address and module, so a lookup made with the first chunk's knowledge is
 * the one made later. The warm-up holds the symbolizer's warnings: a module
 * that cannot be read is told of when the report looks up an address in it
 * (symbolize.h), as without the warm-up. Before, the warm-up's own warnings
 * were told too, so whether a report warned of a module it never showed
 * depended on how far the warm-up had got (test_symbolize: held warnings). */
typedef struct warm {
  const char *path;
  hh_symbolizer *sym;
} warm;

static void warm_free(void *arg) {
  warm *w = arg;
  if (w->sym) hh_sym_free(w->sym);
  free(w);
}

/* Runs in a thread of its own at low priority (side_thread.h): mostly the
 * time the other threads leave, a core idle while the analysis waits for
 * events. Modules the report never needs then cost little. */
static void warm_run(void *arg, const atomic_bool *stop) {
  warm *w = arg;
  hh_reader *r = hh_reader_open(w->path, NULL, 0);
  /* (the first chunks of a crafted trace can hold millions of records: the
   * warm-up is only a head start, and stops at a quarter of the limit) */
  if (r && hh_reader_memory_limit(r) != UINT64_MAX)
    hh_reader_set_memory_limit(r, hh_reader_memory_limit(r) / 4);
  hh_event ev;
  while (r && !atomic_load_explicit(stop, memory_order_relaxed) && hh_reader_chunks(r) <= 1 &&
         hh_reader_next(r, &ev)) {
    if (ev.kind != HH_EV_STACK) continue;
    const hh_stack_node *node = hh_reader_stack(r, ev.u.stack.id);
    if (!node) continue;
    hh_sym_sync(w->sym, r);
    const hh_frame *frames;
    hh_sym_ip(w->sym, node->ip, node->epoch, &frames);
  }
  if (r) hh_reader_close(r);
}

/* Ends the warm-up. The symbolizer is kept when its modules are the
 * reader's first ones (else a fresh one is made). A thread that gets no
 * processor time (a busy machine) is not waited for: it is left to end
 * alone. */
static hh_symbolizer *warm_end(hh_side *side, warm *w, const hh_reader *r, const hh_load_options *opt) {
  if (!hh_side_end(side, 20)) return NULL;
  hh_symbolizer *sym = NULL;
  if (r && hh_sym_agrees(w->sym, r)) {
    sym = w->sym;
    w->sym = NULL;
    hh_sym_set_warn(sym, opt->warn, opt->warn_arg);
    hh_sym_hold_warnings(sym, false);
  }
  warm_free(w);
  return sym;
}

int hh_load(const char *cmd, const char *path, const hh_load_options *opt, hh_loaded *out) {
  memset(out, 0, sizeof *out);
  out->reader = hh_cli_open_trace(cmd, path);
  if (!out->reader) return HH_EXIT_FAIL;
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
  /* Only a regular file can be read twice. */
  struct stat st;
  warm *w = NULL;
  hh_side *side = NULL;
  if ((opt->symbols || opt->profile) && stat(path, &st) == 0 && S_ISREG(st.st_mode) &&
      (w = calloc(1, sizeof *w)) != NULL) {
    w->path = path;
    w->sym = hh_sym_new(NULL, NULL);
    if (w->sym != NULL) hh_sym_hold_warnings(w->sym, true);
    if (w->sym == NULL || (side = hh_side_start("hh-symbols", warm_run, warm_free, w)) == NULL) warm_free(w);
  }
  out->analysis = hh_analyze(out->reader, &aopt);
  if (side) out->sym = warm_end(side, w, out->reader, opt);
  if (!opt->status_later) out->status = hh_cli_report_status_of(cmd, path, out->reader);
  out->command = command_line(out->reader, path, &out->has_command);
  if (!out->command) goto oom;
  if (opt->symbols || opt->profile) {
    if (!out->sym) out->sym = hh_sym_new(opt->warn, opt->warn_arg);
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
