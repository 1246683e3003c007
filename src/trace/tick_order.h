/* Events of one clock tick in different threads, put in an order the heap
 * allows.
 *
 * The time-ordered merge (hh_merge_next) cannot order the events of
 * different threads that carry one time: it puts frees first and the lower
 * thread first, looking at each thread's next event only. That is wrong
 * when a thread's free comes behind other events of its own in the tick:
 * a consumer allocates and frees a buffer of its own, then frees the
 * producer's block, and the producer gets that address back within the
 * same tick; the merge hands out the producer's new allocation first, the
 * consumer's free then frees the new block, and the producer's later free
 * of it is "unknown" (4% to 12% of the frees of such a program, before).
 *
 * A consumer that keeps the live blocks can tell the order apart: an
 * allocation at an address that is live comes after that block's free, a
 * free of a block that is not live after its allocation. hh_ticks hands
 * the merge's events out as they come, except a run of one time in which
 * two threads touch one address: that run it reorders, keeping each
 * thread's own order, taking at each step the first event (in the merge's
 * order) of any thread that the heap allows at that point, or the merge's
 * next when none is allowed (a free of a block the trace never saw).
 * It asks the caller which blocks are live when the run starts (`live`),
 * and follows the run's own events from there.
 *
 * Use: hand each batch of merged events to hh_ticks_batch, then apply the
 * spans hh_ticks_span returns, in order, until it returns NULL; the run at
 * the end of a batch waits for the next batch (it may go on there), so
 * hand over an empty last batch at the end.
 */
#ifndef HH_TRACE_TICK_ORDER_H
#define HH_TRACE_TICK_ORDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "trace/reader.h"

/* A run of one time longer than this (a crafted trace, a clock of
 * milliseconds) is handed out in the merge's order, in pieces this long. */
#define HH_TICKS_RUN_MAX 4096
/* A run of events of more threads than this stays in the merge's order. */
#define HH_TICKS_THREADS_MAX 256

/* Whether a block of the caller's is live at addr (not 0). */
typedef bool (*hh_live_fn)(void *ctx, uint64_t addr);

/* A step of the search for an order (tick_order.c): the event taken, the
 * latest tried at this step, its thread, and the map's states it changed. */
typedef struct hh_ticks_step {
  uint32_t pick, tried, undo_slot[2];
  uint16_t k;
  uint8_t undo_state[2];
} hh_ticks_step;

typedef struct hh_ticks {
  hh_live_fn live;
  void *ctx;
  bool sampled; /* a sampled trace: a realloc's old block may be one not followed */
  bool strict;  /* (resolve) sampled reallocs need their old block live too */
  /* the batch */
  hh_event *evs;
  size_t n, at;
  bool last;
  /* a run cut by the end of a batch (a copy) */
  hh_event *carry;
  size_t ncarry, carry_cap;
  bool carry_out; /* handed out by the last call */
  /* scratch: an address map, the reordered run, each event's next of its thread */
  uint64_t *keys;
  uint32_t *vals;           /* the first thread to touch keys[i]; keys[i] 0: empty (no block is at 0) */
  uint8_t *state;           /* the heap at keys[i] as the run goes on; shared by threads */
  size_t map_cap, map_used; /* allocated; in use for this run (powers of two) */
  unsigned map_shift;
  hh_event *tmp;
  uint32_t *next;
  uint32_t *slot; /* each event's addresses' slots in the map */
  hh_ticks_step *steps;
  size_t tmp_cap;
  uint64_t reordered; /* runs put in another order */
} hh_ticks;

void hh_ticks_init(hh_ticks *t, bool sampled, hh_live_fn live, void *ctx);

/* The next batch: evs[0, n), writable (runs are reordered in place), kept
 * valid by the caller until hh_ticks_span returns NULL. last: no more
 * events follow. */
void hh_ticks_batch(hh_ticks *t, hh_event *evs, size_t n, bool last);

/* The next events to apply, in order, and how many (*len); NULL when the
 * batch is used up. Apply them before the next call: a run is reordered
 * by what is live when its turn comes. */
const hh_event *hh_ticks_span(hh_ticks *t, size_t *len);

void hh_ticks_free(hh_ticks *t);

#endif
