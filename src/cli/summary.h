/* Replaying a trace in time order to get its totals: allocations, frees,
 * the peak of bytes in use and when, what was still allocated at the end.
 * Memory is one table entry per live block. `heaphook run` prints it; the
 * analyzer's report starts from the same replay. */
#ifndef HH_CLI_SUMMARY_H
#define HH_CLI_SUMMARY_H

#include <stdint.h>

#include "trace/reader.h"

typedef struct hh_summary {
  uint64_t allocs;                      /* ALLOC events (malloc, calloc, aligned forms, realloc(NULL, n)) */
  uint64_t frees;                       /* FREE events (free, realloc(p, 0), ...) */
  uint64_t reallocs;                    /* REALLOC events (a block resized or moved) */
  uint64_t allocated_bytes;             /* bytes requested by ALLOC and REALLOC, all told */
  uint64_t peak_bytes, peak_time;       /* most bytes in use at once (requested sizes), and when (ns) */
  uint64_t leaked_bytes, leaked_blocks; /* still in use at the end */
  uint64_t unknown_frees;               /* frees of blocks the trace never saw allocated */
  uint64_t end_time;                    /* ns of the last event */
  uint64_t threads;
  int sampled; /* numbers are estimates from a sampled trace */
} hh_summary;

/* Reads the whole trace (time-ordered merge) into *s. The reader's status
 * tells whether it was all there. */
void hh_summarize(hh_reader *r, hh_summary *s);

#endif
