/* Frees handed out before the allocation they free.
 *
 * The time-ordered merge (hh_merge_next) puts frees first among events of
 * equal time in different threads: right when a block freed by one thread
 * is allocated by another within one clock tick. The other hand-off, a
 * block allocated by one thread and freed by another (a producer and a
 * consumer), then comes out free first when both fall in one tick; and in
 * traces written before 2026-11-24 the consumer's time can even be a tick
 * or two before the producer's (the consumer's clock read ran ahead of its
 * load of the pointer, and the cores' clocks may differ a little; the
 * tracer now gives no event a time before the latest any thread has
 * given: src/record/trace/event_clock.h). A consumer that keeps the live
 * blocks finds no block for such a free: it parks it here instead of
 * calling it unknown, and an allocation of the same address by another
 * thread at most `window` ns later takes it back (the consumer applies the
 * allocation, then the free). What is still parked when the merge's time
 * moves past its window was a free of an unknown block after all
 * (docs/trace-format.md, "Ties", under "Records").
 */
#ifndef HH_TRACE_HANDOFF_H
#define HH_TRACE_HANDOFF_H

#include <stdbool.h>
#include <stddef.h>

#include "trace/reader.h"

/* At most this many are parked: a crafted trace whose events all have one
 * time would otherwise make every allocation search a growing list; the
 * oldest goes when it is full. */
#define HH_HANDOFF_MAX 4096

typedef struct hh_handoff {
  hh_event *ev; /* parked: ev[head, n), oldest first */
  size_t head, n, cap;
  uint64_t window; /* ns */
} hh_handoff;

/* The window for a trace: one clock tick and 1 us more (two ticks of the
 * default clock, where the measured lag of a consumer reached two ticks). */
uint64_t hh_handoff_window(const hh_reader *r);

/* The address a parked event frees: a FREE's block, a REALLOC's old one. */
static inline uint64_t hh_handoff_addr(const hh_event *ev) {
  return ev->kind == HH_EV_REALLOC ? ev->old_addr : ev->addr;
}

static inline bool hh_handoff_any(const hh_handoff *h) { return h->n != h->head; }

/* The oldest parked event, taken out, when no event at `time` or later can
 * take it back (it is older than its window); else NULL. The caller counts
 * it unknown; it stays valid until the next park. Expiring from the oldest
 * end keeps the list as short as the window: a program that frees many
 * blocks the trace never saw allocated, a few ns apart, made it grow to
 * HH_HANDOFF_MAX when only the newest was looked at. A time before the
 * oldest (an event the merge handed out late) expires nothing. */
static inline const hh_event *hh_handoff_expire(hh_handoff *h, uint64_t time) {
  if (h->n == h->head) return NULL;
  const hh_event *e = &h->ev[h->head];
  if (time <= e->time || time - e->time <= h->window) return NULL;
  h->head++;
  return e;
}

/* Parks ev; when HH_HANDOFF_MAX are parked already, the oldest is copied
 * to *expired and true returned (the caller counts it unknown). */
bool hh_handoff_park(hh_handoff *h, const hh_event *ev, hh_event *expired);

/* Takes back the oldest parked free of `alloc`'s address (an allocation's
 * block, or a realloc's new one) by another thread within the window, into
 * *out. */
bool hh_handoff_take(hh_handoff *h, const hh_event *alloc, hh_event *out);

/* The other way round: a list of new blocks allocated (an ALLOC, or a
 * REALLOC's new block) where a block was live, whose free may come after
 * them in the merge (the allocating thread got the address back from
 * another thread whose free is timed later, or comes behind events of its
 * own in the tick). Takes back the oldest one at the address `f` frees (a
 * FREE's block, a REALLOC's old one), of another thread than f's, at most
 * `window` ns before f, into *out: f is the old block's free. */
bool hh_handoff_take_owed(hh_handoff *h, const hh_event *f, hh_event *out);

void hh_handoff_free(hh_handoff *h);

#endif
