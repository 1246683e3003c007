/* Opening, analysing and symbolizing a trace (load.h). */
#define _GNU_SOURCE /* SCHED_IDLE */
#include "load.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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
 * the one made later. */
typedef struct warm {
  const char *path;
  hh_symbolizer *sym;
  atomic_bool stop;
  char **said; /* its warnings, told after the analysis (stderr may show the progress bar meanwhile) */
  size_t nsaid;
} warm;

static void warm_warn(void *arg, const char *message) {
  warm *w = arg;
  char **said = realloc(w->said, (w->nsaid + 1) * sizeof *said);
  char *copy = strdup(message);
  if (said) w->said = said;
  if (said && copy)
    w->said[w->nsaid++] = copy;
  else
    free(copy);
}

/* Ends the warm-up. The symbolizer is kept when its modules are the
 * reader's first ones; its warnings are then told (else the fresh one made
 * instead gives its own). */
static hh_symbolizer *warm_end(warm *w, pthread_t thread, const hh_reader *r, const hh_load_options *opt) {
  atomic_store(&w->stop, true);
  pthread_join(thread, NULL);
  bool keep = r && hh_sym_agrees(w->sym, r);
  if (keep) hh_sym_set_warn(w->sym, opt->warn, opt->warn_arg);
  for (size_t i = 0; i < w->nsaid; i++) {
    if (keep) hh_sym_warn(w->sym, w->said[i]);
    free(w->said[i]);
  }
  free(w->said);
  if (keep) return w->sym;
  hh_sym_free(w->sym);
  return NULL;
}

static void *warm_main(void *arg) {
  warm *w = arg;
  /* Only the time the other threads leave: a core idle while the analysis
   * waits for events. Modules the report never needs then cost nothing. */
  struct sched_param idle = {0};
  pthread_setschedparam(pthread_self(), SCHED_IDLE, &idle);
  hh_reader *r = hh_reader_open(w->path, NULL, 0);
  if (!r) return NULL;
  hh_event ev;
  while (!atomic_load_explicit(&w->stop, memory_order_relaxed) && hh_reader_chunks(r) <= 1 &&
         hh_reader_next(r, &ev)) {
    if (ev.kind != HH_EV_STACK) continue;
    const hh_stack_node *node = hh_reader_stack(r, ev.u.stack.id);
    if (!node) continue;
    hh_sym_sync(w->sym, r);
    const hh_frame *frames;
    hh_sym_ip(w->sym, node->ip, node->epoch, &frames);
  }
  hh_reader_close(r);
  return NULL;
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
  /* Only a regular file can be read twice. */
  struct stat st;
  warm w = {.path = path};
  pthread_t warm_thread;
  bool warming = false;
  if ((opt->symbols || opt->profile) && stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
    w.sym = hh_sym_new(warm_warn, &w);
    warming = pthread_create(&warm_thread, NULL, warm_main, &w) == 0;
    if (!warming) hh_sym_free(w.sym);
  }
  int rc = hh_analyze(out->reader, &aopt, &out->analysis, err, sizeof err);
  if (warming) out->sym = warm_end(&w, warm_thread, rc == 0 ? out->reader : NULL, opt);
  if (rc != 0) {
    hh_cli_error(cmd, "%s", err);
    hh_loaded_free(out);
    return HH_EXIT_FAIL;
  }
  if (!opt->status_later) out->status = hh_cli_report_status(cmd, out->reader);
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
