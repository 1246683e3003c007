/* Opening, analysing and symbolizing a trace: what every command that
 * reads one (report, diff, plot, flame, export, html) does first. */
#ifndef HH_CLI_LOAD_H
#define HH_CLI_LOAD_H

#include <stdbool.h>

#include "render.h"

typedef struct hh_load_options {
  bool symbols;        /* l->sym: a symbolizer that knows the trace's modules */
  bool profile;        /* l->profile: every site's stack symbolized (implies symbols) */
  bool peak_blocks;    /* hh_analyze_options.peak_blocks: the blocks live at the peak */
  bool status_later;   /* the caller prints the trace's status (hh_cli_report_status_of) after its output */
  hh_sym_warn_fn warn; /* the symbolizer's warnings (NULL: its default) */
  void *warn_arg;
} hh_load_options;

typedef struct hh_loaded {
  hh_reader *reader;
  hh_analysis *analysis;
  hh_symbolizer *sym; /* with symbols or profile only */
  hh_profile profile; /* with profile only */
  char *command;      /* the recorded command line, or the trace's path */
  bool has_command;   /* whether the trace recorded its command line */
  int status;         /* exit status the trace implies (hh_cli_report_status_of); 0 with status_later */
} hh_loaded;

/* Returns 0, or an exit status (after printing why) when nothing could be
 * analysed. A trace cut short or damaged is loaded as far as it goes, its
 * message printed and out->status set to 1 (unless opt->status_later). */
int hh_load(const char *cmd, const char *path, const hh_load_options *opt, hh_loaded *out);
void hh_loaded_free(hh_loaded *l);

/* The folded frames of a stack (hh_stack_frames_fn, hh_html_stack_fn) for
 * arg, a loaded trace with symbols. */
size_t hh_loaded_stack_frames(void *arg, uint64_t stack, const hh_frame **out, size_t max);

#endif
