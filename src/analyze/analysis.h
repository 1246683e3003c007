/* The analysis of a trace: everything the heaphook command's reports,
 * charts, flame graphs, exports and the HTML page show, computed in one
 * time-ordered pass over the events (src/analyze/analysis.c).
 *
 * Memory is bounded by the live blocks at any one time and the distinct
 * stacks, never by the number of events. Numbers are exact for a full trace
 * and unbiased estimates for a sampled one (event weights).
 *
 * Consumers (cmd_report.c, cmd_plot.c, cmd_flame.c, cmd_export.c,
 * cmd_diff.c, cmd_html.c) read this structure and symbolize stacks with
 * src/symbolize; they never re-read the trace. */
#ifndef HH_ANALYZE_ANALYSIS_H
#define HH_ANALYZE_ANALYSIS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "trace/reader.h"

/* One call site: every allocation made from one distinct stack (the trace's
 * stack id: the full stack, innermost frame first once symbolized). */
typedef struct hh_site {
  uint64_t stack;       /* trace stack id (0: no stack recorded) */
  uint64_t allocations; /* allocation calls (realloc that moves or grows counts) */
  uint64_t bytes;       /* bytes requested in all */
  uint64_t temporary;   /* allocations freed before their thread's next allocation or free
                           (heaptrack's rule, per thread) */
  uint64_t peak_bytes;  /* bytes of this site live at the global peak */
  uint64_t peak_blocks;
  uint64_t leaked_bytes; /* live at the end of the trace */
  uint64_t leaked_blocks;
} hh_site;

/* Which number a site is ranked or weighed by (flame graphs, tables). */
typedef enum hh_cost {
  HH_COST_PEAK,        /* peak_bytes */
  HH_COST_ALLOCATIONS, /* allocations */
  HH_COST_TEMPORARY,   /* temporary */
  HH_COST_LEAKED,      /* leaked_bytes */
  HH_COST_BYTES,       /* bytes */
} hh_cost;

uint64_t hh_site_cost(const hh_site *s, hh_cost cost);
/* "peak", "allocations", "temporary", "leaked", "bytes"; parse returns -1
 * for an unknown name. */
const char *hh_cost_name(hh_cost cost);
int hh_cost_parse(const char *name, hh_cost *out);

/* Heap in use over time, downsampled for charts: each point is the maximum
 * of heap bytes over its time bucket (so the peak is never lost), and,
 * when the heap at the end is not the last bucket's maximum, one more point
 * at duration_ns with the heap there (the leaked bytes). */
typedef struct hh_point {
  uint64_t time_ns;
  uint64_t heap_bytes;
} hh_point;

typedef struct hh_rss_point {
  uint64_t time_ns;
  uint64_t rss_bytes;
} hh_rss_point;

typedef struct hh_marker_at {
  uint64_t time_ns;
  const char *name;
} hh_marker_at;

typedef struct hh_thread_stats {
  uint32_t index;
  uint64_t tid;
  const char *name;
  uint64_t allocations, frees, bytes;
  uint64_t peak_bytes; /* bytes this thread's allocations held at the global peak */
  /* added with the analysis itself: */
  uint64_t temporary;                   /* temporary allocations made by this thread */
  uint64_t leaked_bytes, leaked_blocks; /* this thread's allocations live at the end */
} hh_thread_stats;

/* Sizes of all allocations by power of two: bucket i holds sizes in
 * [2^i, 2^(i+1)), bucket 0 also size 0. */
#define HH_HISTOGRAM_BUCKETS 64
typedef struct hh_histogram {
  uint64_t count[HH_HISTOGRAM_BUCKETS];
  uint64_t bytes[HH_HISTOGRAM_BUCKETS];
} hh_histogram;

/* Blocks live at the peak, for the fragmentation map: address-sorted. */
typedef struct hh_live_block {
  uint64_t addr, size;
} hh_live_block;

typedef struct hh_analysis {
  /* The trace itself. */
  const hh_reader *reader;
  hh_read_status status; /* OK, or what the reader reported (cut short, damaged) */
  const char *status_message;
  bool sampled;
  uint64_t duration_ns;

  /* Totals. allocations and frees count ALLOC and FREE records (as `heaphook
   * run` does; estimated counts in a sampled trace), reallocs REALLOC
   * records; bytes_allocated includes the new sizes of reallocs. */
  uint64_t allocations, frees, reallocs;
  /* Allocation calls: ALLOC records and the REALLOC records that moved or
   * grew their block, what call sites, threads and the histogram count
   * (estimated in a sampled trace); temporary allocations are among them. */
  uint64_t allocation_calls;
  uint64_t bytes_allocated;
  uint64_t temporary;
  /* false in a sampled trace (unless its period is 1 byte, which samples
   * every allocation): the allocations between a sample and its free are
   * not recorded, so no free is known to come right after its allocation,
   * and temporary is 0 everywhere (before, every sampled block freed
   * before the thread's next sample counted: 98% of the churn's
   * allocations, against 0.01% in its full trace) */
  bool temporary_known;
  uint64_t peak_bytes, peak_blocks, peak_time_ns;
  uint64_t leaked_bytes, leaked_blocks;

  /* Per call site, in no particular order. */
  size_t nsites;
  hh_site *sites;

  hh_histogram histogram;

  size_t nthreads;
  hh_thread_stats *threads;

  size_t nmarkers;
  hh_marker_at *markers;

  size_t npoints; /* <= options.max_points + 1 (the end) */
  hh_point *timeline;
  size_t nrss;
  hh_rss_point *rss;

  size_t npeak_blocks; /* only when options.peak_blocks */
  hh_live_block *peak_block_list;

  /* added with the analysis itself: */
  uint64_t events;         /* ALLOC, FREE and REALLOC records read */
  uint64_t unknown_frees;  /* frees (and reallocs) of blocks the trace never saw allocated */
  uint64_t late_events;    /* events that came too late to be put in time order (hh_merge_late) */
  uint64_t sample_bytes;   /* the sampling period when sampled, else 0 */
  uint64_t peak_rss_bytes; /* largest RSS sample; 0 when there were none */
} hh_analysis;

typedef struct hh_analyze_options {
  size_t max_points; /* timeline resolution; 0: 2000 */
  bool peak_blocks;  /* keep the list of blocks live at the peak */
  /* Progress on stderr: a bar when stderr is a terminal and the analysis
   * has taken more than progress_after seconds (0: one second). */
  bool progress;
  double progress_after;
} hh_analyze_options;

/* Reads every event of r in time order: the analysis (out of memory ends
 * the process, as everywhere here). A trace that is cut short or damaged is
 * analysed up to there, even one broken inside its first chunk (an empty
 * analysis: until 2026-11-25 that was an error and `report --json` wrote
 * nothing); ->status says so and the command prints ->status_message. */
hh_analysis *hh_analyze(hh_reader *r, const hh_analyze_options *opt);
void hh_analysis_free(hh_analysis *a);

/* Sites sorted by cost, descending (ties by stack id); the array is the
 * caller's to free(). Sites with cost 0 are left out. */
size_t hh_sites_by(const hh_analysis *a, hh_cost cost, hh_site ***out);

#endif
