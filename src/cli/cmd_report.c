/* `heaphook report`: the analysis of a trace as text, or as JSON in the
 * schema of docs/report-json.md. */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "escape.h"
#include "load.h"
#include "report_common.h"

static const char usage[] =
    "usage: heaphook report [--json] [--top N] [--frames N] TRACE\n"
    "\n"
    "Analyses TRACE (heaphook run's output) and prints: totals (allocations, frees,\n"
    "reallocs, bytes, temporary allocations, run time); the peak of heap bytes in use,\n"
    "when it was reached and the call sites holding it; the top call sites by bytes at\n"
    "the peak, by number of allocations, by temporary allocations (freed right after,\n"
    "with no other allocation or free of the thread in between, as heaptrack counts\n"
    "them) and by bytes still allocated at exit; a histogram of allocation sizes; a\n"
    "breakdown per thread; the markers. Call sites are shown with their stacks,\n"
    "allocator frames left out.\n"
    "\n"
    "A trace cut short or damaged is analysed up to where it breaks off; the report\n"
    "says so in its first lines and heaphook exits with status 1. A trace with no END\n"
    "record (its program killed between two chunks, or still running) is read whole\n"
    "and the report says so as a warning: status 0. One whose reading would keep more\n"
    "than the memory limit (HEAPHOOK_MEMORY_LIMIT=SIZE, 0 for none; by default half of\n"
    "what this process may use) is read up to there, as a damaged one: status 1.\n"
    "\n"
    "options:\n"
    "  --json       the same content as JSON (schema: docs/report-json.md)\n"
    "  --top N      call sites per list (default 10; 0: all)\n"
    "  --frames N   stack frames shown per call site in the text report (default 5; 0: all)\n"
    "  -h, --help   this help\n";

typedef struct ctx {
  const hh_analysis *a;
  const hh_reader *r;
  hh_symbolizer *sym;
  FILE *out;
  size_t top, frames;
} ctx;

static void warn_cb(void *arg, const char *message) {
  (void)arg;
  fprintf(stderr, "heaphook report: warning: %s\n", message);
}

static double pct(uint64_t part, uint64_t whole) {
  return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

static void put_bytes(FILE *out, uint64_t bytes) {
  char buf[32];
  if (bytes < 1024)
    fprintf(out, "%" PRIu64 " byte%s", bytes, hh_cli_s(bytes));
  else
    fprintf(out, "%" PRIu64 " bytes (%s)", bytes, hh_cli_bytes(buf, sizeof buf, bytes));
}

static const char *when(char *buf, size_t size, uint64_t ns) { return hh_cli_duration(buf, size, ns); }

/* ---- text ----------------------------------------------------------------- */

static void text_site_line(const ctx *c, hh_cost cost, size_t rank, const hh_site *s) {
  const hh_analysis *a = c->a;
  FILE *out = c->out;
  fprintf(out, "  #%zu ", rank);
  switch (cost) {
    case HH_COST_PEAK:
      put_bytes(out, s->peak_bytes);
      fprintf(out, " in %" PRIu64 " block%s, %.1f%% of the peak\n", s->peak_blocks, hh_cli_s(s->peak_blocks),
              pct(s->peak_bytes, a->peak_bytes));
      break;
    case HH_COST_ALLOCATIONS:
      fprintf(out, "%" PRIu64 " allocation%s, %.1f%% of all; ", s->allocations, hh_cli_s(s->allocations),
              pct(s->allocations, c->a->allocation_calls));
      put_bytes(out, s->bytes);
      fputs(" in all\n", out);
      break;
    case HH_COST_TEMPORARY:
      fprintf(out, "%" PRIu64 " temporary of %" PRIu64 " allocation%s\n", s->temporary, s->allocations,
              hh_cli_s(s->allocations));
      break;
    case HH_COST_LEAKED:
      put_bytes(out, s->leaked_bytes);
      fprintf(out, " in %" PRIu64 " block%s\n", s->leaked_blocks, hh_cli_s(s->leaked_blocks));
      break;
    case HH_COST_BYTES:
      put_bytes(out, s->bytes);
      fputc('\n', out);
      break;
  }
  hh_report_text_stack(c->out, c->sym, c->r, s->stack, c->frames);
}

static void text_ranking(const ctx *c, hh_cost cost, const char *title) {
  hh_site **v;
  size_t n = hh_sites_by(c->a, cost, &v);
  fprintf(c->out, "\n%s", title);
  if (n == 0) {
    fputs(": none\n", c->out);
    free(v);
    return;
  }
  size_t show = c->top && n > c->top ? c->top : n;
  if (show < n)
    fprintf(c->out, " (top %zu of %zu call sites):\n", show, n); /* (show < n: n > 1) */
  else
    fprintf(c->out, " (%zu call site%s):\n", n, hh_cli_s(n));
  for (size_t i = 0; i < show; i++) text_site_line(c, cost, i + 1, v[i]);
  free(v);
}

static void histogram_label(char *buf, size_t size, unsigned k) {
  char lo[32], hi[32];
  uint64_t a = k ? (uint64_t)1 << k : 0, b = k < 63 ? ((uint64_t)1 << (k + 1)) - 1 : UINT64_MAX;
  if (a < 1024)
    snprintf(lo, sizeof lo, "%" PRIu64, a);
  else
    hh_cli_bytes(lo, sizeof lo, a);
  if (b < 1024)
    snprintf(hi, sizeof hi, "%" PRIu64, b);
  else
    hh_cli_bytes(hi, sizeof hi, b + 1);
  snprintf(buf, size, b < 1024 ? "%s - %s B" : "%s - <%s", lo, hi);
}

static void text_report(const ctx *c, const char *path) {
  const hh_analysis *a = c->a;
  FILE *out = c->out;
  const hh_trace_header *h = hh_reader_header(c->r);
  char b1[64], b2[64], safe[1024]; /* safe: a program's text for the terminal (escape.h) */
  fprintf(out, "heaphook report: %s (pid %" PRIu32 ")\n", path, h->pid);
  const char *const *argv;
  const char *exe;
  int argc = hh_reader_command(c->r, &argv, &exe);
  if (argc > 0) {
    fputs("command:", out);
    for (int i = 0; i < argc; i++) fprintf(out, " %s", hh_text_safe(argv[i], safe, sizeof safe));
    fputc('\n', out);
  }
  if (hh_reader_exec(c->r))
    fprintf(out, "exec'd: %s; the trace ends there (what was allocated then counts as leaked)\n",
            hh_reader_exec(c->r)[0] ? hh_text_safe(hh_reader_exec(c->r), safe, sizeof safe)
                                    : "a program by descriptor");
  if (a->status != HH_READ_OK)
    fprintf(out, "%s: %s; the numbers cover the run up to there\n",
            a->status == HH_READ_NO_END ? "warning" : "error", a->status_message);
  if (a->sampled) {
    fprintf(out,
            "sampled trace (one sample per %" PRIu64 " byte%s on average): bytes and counts are estimates\n",
            a->sample_bytes, hh_cli_s(a->sample_bytes));
    /* Each estimate is unbiased, their highest is not: a heap that rises
     * and falls again and again shows a peak above the true one (51 rises
     * of a 16 MB heap sampled at 512K read 1.47x on average, 1 MB rises at
     * 64K 1.8x), which the report showed as if it were as sound as the
     * rest. */
    fputs(
        "the peak is the highest the estimate reached, and reads high when the heap rose and fell "
        "again and again\n",
        out);
  }
  if (a->late_events)
    fprintf(out, "warning: %" PRIu64 " event%s came too late to be put in time order\n", a->late_events,
            hh_cli_s(a->late_events));

  fputs("\ntotals:\n", out);
  fprintf(out, "  run time       %s\n", when(b1, sizeof b1, a->duration_ns));
  fprintf(out, "  allocations    %" PRIu64 "\n", a->allocations);
  fprintf(out, "  frees          %" PRIu64 "\n", a->frees);
  if (a->allocation_calls > a->allocations)
    fprintf(out, "  reallocs       %" PRIu64 " (%" PRIu64 " moved or grew a block: an allocation call)\n",
            a->reallocs, a->allocation_calls - a->allocations);
  else
    fprintf(out, "  reallocs       %" PRIu64 "\n", a->reallocs);
  fputs("  allocated      ", out);
  put_bytes(out, a->bytes_allocated);
  fputc('\n', out);
  if (a->temporary_known)
    fprintf(out, "  temporary      %" PRIu64 " (%.1f%% of the %" PRIu64 " allocation call%s)\n", a->temporary,
            pct(a->temporary, a->allocation_calls), a->allocation_calls, hh_cli_s(a->allocation_calls));
  else
    fputs(
        "  temporary      not known: a sampled trace does not record the allocations between a sample "
        "and its free\n",
        out);
  fputs("  peak           ", out);
  put_bytes(out, a->peak_bytes);
  fprintf(out, " in %" PRIu64 " block%s at %s\n", a->peak_blocks, hh_cli_s(a->peak_blocks),
          when(b2, sizeof b2, a->peak_time_ns));
  /* (not whole: the program was killed, there was no exit; as run and
   * plot say it) */
  bool whole = a->status == HH_READ_OK;
  fputs("  leaked         ", out);
  put_bytes(out, a->leaked_bytes);
  fprintf(out, " in %" PRIu64 " block%s%s\n", a->leaked_blocks, hh_cli_s(a->leaked_blocks),
          whole ? "" : " (still in use where the trace ends)");
  if (a->peak_rss_bytes) {
    fputs("  peak RSS       ", out);
    put_bytes(out, a->peak_rss_bytes);
    fputc('\n', out);
  }
  if (a->unknown_frees)
    fprintf(out,
            "  unknown frees  %" PRIu64
            " (blocks allocated before the trace started, by a signal handler inside heaphook, or by an"
            " allocator's own API such as jemalloc's mallocx)\n",
            a->unknown_frees);

  text_ranking(c, HH_COST_PEAK, "peak: call sites holding the peak, by bytes");
  text_ranking(c, HH_COST_ALLOCATIONS, "call sites by number of allocations");
  if (a->temporary_known) text_ranking(c, HH_COST_TEMPORARY, "call sites by temporary allocations");
  text_ranking(c, HH_COST_LEAKED,
               !whole                 ? "call sites by bytes still in use where the trace ends"
               : hh_reader_exec(c->r) ? "call sites by bytes still allocated at the exec"
                                      : "call sites by bytes leaked at exit");

  fputs("\nallocation sizes:\n", out);
  uint64_t maxc = 0;
  for (unsigned k = 0; k < HH_HISTOGRAM_BUCKETS; k++)
    if (a->histogram.count[k] > maxc) maxc = a->histogram.count[k];
  if (!maxc) fputs("  none\n", out);
  int width = 20; /* the widest label, so that the columns line up */
  for (unsigned k = 0; k < HH_HISTOGRAM_BUCKETS; k++) {
    char label[80];
    histogram_label(label, sizeof label, k);
    if (a->histogram.count[k] && (int)strlen(label) > width) width = (int)strlen(label);
  }
  for (unsigned k = 0; k < HH_HISTOGRAM_BUCKETS; k++) {
    if (!a->histogram.count[k]) continue;
    char label[80];
    histogram_label(label, sizeof label, k);
    int bar = (int)((a->histogram.count[k] * 30 + maxc - 1) / maxc);
    /* (the word padded to its plural's width: the bars stay in line) */
    fprintf(out, "  %-*s %10" PRIu64 " %-11s  %-30.*s  ", width, label, a->histogram.count[k],
            a->histogram.count[k] == 1 ? "allocation" : "allocations", bar, "##############################");
    put_bytes(out, a->histogram.bytes[k]);
    fputc('\n', out);
  }

  if (a->nthreads == 0)
    fputs("\nthreads: none\n", out);
  else
    fprintf(out, "\nthreads (%zu):\n", a->nthreads);
  for (size_t i = 0; i < a->nthreads; i++) {
    const hh_thread_stats *t = &a->threads[i];
    fprintf(out,
            "  thread %" PRIu32 " \"%s\" (tid %" PRIu64 "): %" PRIu64 " allocation%s, %" PRIu64 " free%s, ",
            t->index, t->name ? hh_text_safe_quoted(t->name, safe, sizeof safe) : "", t->tid, t->allocations,
            hh_cli_s(t->allocations), t->frees, hh_cli_s(t->frees));
    put_bytes(out, t->bytes);
    fputs(" allocated, ", out);
    put_bytes(out, t->peak_bytes);
    fputs(" at the peak, ", out);
    put_bytes(out, t->leaked_bytes);
    fputs(" leaked\n", out);
  }

  if (a->nmarkers == 0)
    fputs("\nmarkers: none\n", out);
  else
    fprintf(out, "\nmarkers (%zu):\n", a->nmarkers);
  for (size_t i = 0; i < a->nmarkers; i++)
    fprintf(out, "  %s  %s\n", when(b1, sizeof b1, a->markers[i].time_ns),
            hh_text_safe(a->markers[i].name, safe, sizeof safe));
}

/* ---- JSON ----------------------------------------------------------------- */

static void json_site(const ctx *c, const hh_site *s, const char *indent) {
  FILE *out = c->out;
  const hh_frame *frames[HH_REPORT_MAX_FRAMES];
  size_t n = hh_report_frames(c->sym, c->r, s->stack, frames, HH_REPORT_MAX_FRAMES);
  fprintf(out,
          "%s{\"stack_id\": %" PRIu64 ", \"allocations\": %" PRIu64 ", \"bytes\": %" PRIu64
          ", \"temporary\": %" PRIu64 ", \"peak_bytes\": %" PRIu64 ", \"peak_blocks\": %" PRIu64
          ", \"leaked_bytes\": %" PRIu64 ", \"leaked_blocks\": %" PRIu64 ",\n%s \"function\": ",
          indent, s->stack, s->allocations, s->bytes, s->temporary, s->peak_bytes, s->peak_blocks,
          s->leaked_bytes, s->leaked_blocks, indent);
  hh_json_put_string(out, n ? frames[0]->function : NULL, 0);
  fputs(", \"location\": ", out);
  if (n && frames[0]->file) {
    const char *slash = strrchr(frames[0]->file, '/');
    char loc[512];
    snprintf(loc, sizeof loc, "%s:%" PRIu32, slash ? slash + 1 : frames[0]->file, frames[0]->line);
    hh_json_put_string(out, loc, 0);
  } else {
    fputs("null", out);
  }
  fprintf(out, ",\n%s \"frames\": ", indent);
  hh_report_json_frames(out, frames, n);
  fputc('}', out);
}

static void json_ranking(const ctx *c, hh_cost cost, bool last) {
  hh_site **v;
  size_t n = hh_sites_by(c->a, cost, &v);
  size_t show = c->top && n > c->top ? c->top : n;
  fprintf(c->out, "    \"%s\": {\"sites_with_cost\": %zu, \"sites\": [", hh_cost_name(cost), n);
  for (size_t i = 0; i < show; i++) {
    fputs(i ? ",\n" : "\n", c->out);
    json_site(c, v[i], "      ");
  }
  fprintf(c->out, "%s]}%s\n", show ? "\n    " : "", last ? "" : ",");
  free(v);
}

static void json_report(const ctx *c, const char *path) {
  const hh_analysis *a = c->a;
  FILE *out = c->out;
  const hh_trace_header *h = hh_reader_header(c->r);
  fputs("{\n  \"schema\": \"heaphook-report\",\n  \"version\": 1,\n", out);
  fputs("  \"trace\": {\"path\": ", out);
  hh_json_put_string(out, path, 0);
  fprintf(out, ", \"pid\": %" PRIu32 ", \"ppid\": %" PRIu32 ", \"start_wall_ns\": %" PRIu64 ",\n", h->pid,
          h->ppid, h->start_wall_ns);
  fprintf(out, "    \"status\": \"%s\", \"message\": ", hh_report_status_word(a->status));
  hh_json_put_string(out, a->status_message, 0);
  fprintf(out,
          ",\n    \"sampled\": %s, \"sample_bytes\": %" PRIu64
          ", \"temporary_known\": %s, \"late_events\": %" PRIu64 ",\n",
          a->sampled ? "true" : "false", a->sample_bytes, a->temporary_known ? "true" : "false",
          a->late_events);
  const char *const *argv;
  const char *exe;
  int argc = hh_reader_command(c->r, &argv, &exe);
  fputs("    \"exe\": ", out);
  hh_json_put_string(out, argc ? exe : NULL, 0);
  fputs(", \"argv\": [", out);
  for (int i = 0; i < argc; i++) {
    if (i) fputs(", ", out);
    hh_json_put_string(out, argv[i], 0);
  }
  fputs("], \"exec\": ", out);
  hh_json_put_string(out, hh_reader_exec(c->r), 0);
  fputs("},\n", out);
  fprintf(out,
          "  \"totals\": {\"duration_ns\": %" PRIu64 ", \"events\": %" PRIu64 ", \"allocations\": %" PRIu64
          ", \"frees\": %" PRIu64 ", \"reallocs\": %" PRIu64 ", \"allocation_calls\": %" PRIu64
          ",\n    \"bytes_allocated\": %" PRIu64 ", \"temporary\": %" PRIu64 ", \"peak_bytes\": %" PRIu64
          ", \"peak_blocks\": %" PRIu64 ", \"peak_time_ns\": %" PRIu64 ",\n    \"leaked_bytes\": %" PRIu64
          ", \"leaked_blocks\": %" PRIu64 ", \"unknown_frees\": %" PRIu64 ", \"peak_rss_bytes\": %" PRIu64
          ", \"sites\": %zu},\n",
          a->duration_ns, a->events, a->allocations, a->frees, a->reallocs, a->allocation_calls,
          a->bytes_allocated, a->temporary, a->peak_bytes, a->peak_blocks, a->peak_time_ns, a->leaked_bytes,
          a->leaked_blocks, a->unknown_frees, a->peak_rss_bytes, a->nsites);
  fputs("  \"top\": {\n", out);
  json_ranking(c, HH_COST_PEAK, false);
  json_ranking(c, HH_COST_ALLOCATIONS, false);
  json_ranking(c, HH_COST_TEMPORARY, false);
  json_ranking(c, HH_COST_LEAKED, true);
  fputs("  },\n  \"histogram\": [", out);
  bool first = true;
  for (unsigned k = 0; k < HH_HISTOGRAM_BUCKETS; k++) {
    if (!a->histogram.count[k]) continue;
    uint64_t lo = k ? (uint64_t)1 << k : 0, hi = k < 63 ? ((uint64_t)1 << (k + 1)) - 1 : UINT64_MAX;
    fprintf(out,
            "%s\n    {\"min_size_bytes\": %" PRIu64 ", \"max_size_bytes\": %" PRIu64
            ", \"allocations\": %" PRIu64 ", \"bytes\": %" PRIu64 "}",
            first ? "" : ",", lo, hi, a->histogram.count[k], a->histogram.bytes[k]);
    first = false;
  }
  fputs(first ? "],\n" : "\n  ],\n", out);
  fputs("  \"threads\": [", out);
  for (size_t i = 0; i < a->nthreads; i++) {
    const hh_thread_stats *t = &a->threads[i];
    fprintf(out, "%s\n    {\"index\": %" PRIu32 ", \"tid\": %" PRIu64 ", \"name\": ", i ? "," : "", t->index,
            t->tid);
    hh_json_put_string(out, t->name ? t->name : "", 0);
    fprintf(out,
            ", \"allocations\": %" PRIu64 ", \"frees\": %" PRIu64 ", \"bytes\": %" PRIu64
            ", \"temporary\": %" PRIu64 ", \"peak_bytes\": %" PRIu64 ", \"leaked_bytes\": %" PRIu64
            ", \"leaked_blocks\": %" PRIu64 "}",
            t->allocations, t->frees, t->bytes, t->temporary, t->peak_bytes, t->leaked_bytes,
            t->leaked_blocks);
  }
  fputs(a->nthreads ? "\n  ],\n" : "],\n", out);
  fputs("  \"markers\": [", out);
  for (size_t i = 0; i < a->nmarkers; i++) {
    fprintf(out, "%s\n    {\"time_ns\": %" PRIu64 ", \"name\": ", i ? "," : "", a->markers[i].time_ns);
    hh_json_put_string(out, a->markers[i].name, 0);
    fputc('}', out);
  }
  fputs(a->nmarkers ? "\n  ]\n}\n" : "]\n}\n", out);
}

/* ---- the command ---------------------------------------------------------- */

int hh_cmd_report(int argc, char **argv) {
  hh_cli_args args = HH_CLI_ARGS("report", usage, argc, argv);
  bool json = false;
  size_t top = 10, frames = 5;
  if (!hh_report_options(&args, &json, &top, &frames)) return args.status;
  const char *path = hh_cli_one_trace(&args);
  if (!path) return args.status;
  hh_loaded l;
  hh_load_options opt = {.symbols = true, .status_later = true, .warn = warn_cb};
  int rc = hh_load("report", path, &opt, &l);
  if (rc != 0) return rc;
  ctx c = {l.analysis, l.reader, l.sym, stdout, top, frames};
  if (json)
    json_report(&c, path);
  else
    text_report(&c, path);
  fflush(stdout);
  rc = hh_cli_report_status_of("report", path, l.reader);
  hh_loaded_free(&l);
  return rc;
}
