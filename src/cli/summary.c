/* The replay behind hh_summarize: live blocks in an open-addressing table
 * (address -> bytes and the allocations it stands for), deleted by
 * backward shift so no tombstones build up over millions of events. */
#include "summary.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "trace/handoff.h"
#include "trace/tick_order.h"
#include "trace/xalloc.h"

typedef struct live_table {
  uint64_t *addr; /* 0 = empty (no block lives at address 0) */
  uint64_t *bytes;
  uint64_t *count; /* 1, or a sample's estimate (hh_event_count) */
  size_t cap, n;
  uint64_t total, blocks; /* bytes, and blocks estimated */
} live_table;

static inline size_t slot_of(const live_table *t, uint64_t a) {
  a ^= a >> 33;
  a *= 0xff51afd7ed558ccdull;
  a ^= a >> 33;
  return (size_t)a & (t->cap - 1);
}

static void live_put(live_table *t, uint64_t a, uint64_t bytes, uint64_t count);

static void live_grow(live_table *t) {
  live_table old = *t;
  t->cap = old.cap ? old.cap * 2 : 4096;
  t->addr = xcalloc(t->cap, sizeof *t->addr);
  t->bytes = xcalloc(t->cap, sizeof *t->bytes);
  t->count = xcalloc(t->cap, sizeof *t->count);
  t->n = 0;
  t->total = 0;
  t->blocks = 0;
  for (size_t i = 0; i < old.cap; i++)
    if (old.addr[i]) live_put(t, old.addr[i], old.bytes[i], old.count[i]);
  free(old.addr);
  free(old.bytes);
  free(old.count);
}

/* Inserts; a block already live at a (the trace missed its free) is replaced. */
static void live_put(live_table *t, uint64_t a, uint64_t bytes, uint64_t count) {
  if ((t->n + 1) * 4 > t->cap * 3) live_grow(t);
  size_t i = slot_of(t, a);
  while (t->addr[i] && t->addr[i] != a) i = (i + 1) & (t->cap - 1);
  if (t->addr[i]) {
    t->total -= t->bytes[i];
    t->blocks -= t->count[i];
  } else {
    t->addr[i] = a;
    t->n++;
  }
  t->bytes[i] = bytes;
  t->count[i] = count;
  t->total += bytes;
  t->blocks += count;
}

static bool live_has(const live_table *t, uint64_t a) {
  if (!t->cap) return false;
  size_t i = slot_of(t, a);
  while (t->addr[i] && t->addr[i] != a) i = (i + 1) & (t->cap - 1);
  return t->addr[i] != 0;
}

/* Removes a; returns the allocations it stood for, 0 when it was not live. */
static uint64_t live_del(live_table *t, uint64_t a) {
  if (!t->cap) return 0;
  size_t mask = t->cap - 1, i = slot_of(t, a);
  while (t->addr[i] != a) {
    if (!t->addr[i]) return 0;
    i = (i + 1) & mask;
  }
  uint64_t count = t->count[i];
  t->total -= t->bytes[i];
  t->blocks -= count;
  t->n--;
  /* backward shift: pull later entries of the run into the hole */
  for (size_t j = (i + 1) & mask; t->addr[j]; j = (j + 1) & mask) {
    size_t home = slot_of(t, t->addr[j]);
    if (((j - home) & mask) >= ((j - i) & mask)) {
      t->addr[i] = t->addr[j];
      t->bytes[i] = t->bytes[j];
      t->count[i] = t->count[j];
      i = j;
    }
  }
  t->addr[i] = 0;
  return count;
}

/* A parked free that no allocation took back (trace/handoff.h). */
static void unknown_free(hh_summary *s, const hh_event *ev) {
  s->unknown_frees++;
  if (ev->kind == HH_EV_FREE) s->frees++;
}

/* A free (or a realloc's old block) of a block that is not live, as the
 * analysis parks it. */
static void park(hh_summary *s, hh_handoff *parked, const hh_event *ev) {
  hh_event expired;
  if (hh_handoff_addr(ev) == 0)
    unknown_free(s, ev);
  else if (hh_handoff_park(parked, ev, &expired))
    unknown_free(s, &expired);
}

static void expire(hh_summary *s, hh_handoff *parked, uint64_t time) {
  const hh_event *e;
  while ((e = hh_handoff_expire(parked, time)) != NULL) unknown_free(s, e);
}

static void peak_check(hh_summary *s, uint64_t total, uint64_t time) {
  if (total > s->peak_bytes) {
    s->peak_bytes = total;
    s->peak_time = time;
  }
}

/* The replay's state. */
typedef struct replay {
  hh_summary *s;
  live_table t;
  hh_handoff parked;
  hh_handoff owed; /* blocks allocated over (weight: the old block's count), as the analysis keeps them */
} replay;

/* A new block at a: a block live there goes, its free perhaps still to
 * come (the analysis's over_live); then the new one is put. */
static void put_new(replay *p, const hh_event *ev, uint64_t a, uint64_t bytes, uint64_t count) {
  uint64_t old = live_del(&p->t, a);
  if (old) {
    hh_event owed = *ev, dropped;
    owed.weight = old;
    hh_handoff_park(&p->owed, &owed, &dropped);
  }
  live_put(&p->t, a, bytes, count);
}

/* A free (or a realloc's old block) of a live block allocated over one
 * still owed its free: it is that free (the analysis's owed_free). */
static bool owed_free(replay *p, const hh_event *ev) {
  hh_event f;
  if (!hh_handoff_any(&p->owed) || !live_has(&p->t, hh_handoff_addr(ev)) ||
      !hh_handoff_take_owed(&p->owed, ev, &f))
    return false;
  if (ev->kind == HH_EV_FREE) p->s->frees += f.weight;
  return true;
}

/* The oracle of the run reordering (trace/tick_order.h). */
static bool live_at(void *ctx, uint64_t addr) { return live_has(&((replay *)ctx)->t, addr); }

static void on_event(replay *p, const hh_event *e) {
  hh_summary *s = p->s;
  live_table *t = &p->t;
  hh_event ev = *e, f;
  uint64_t count;
  if ((ev.kind == HH_EV_ALLOC || ev.kind == HH_EV_FREE || ev.kind == HH_EV_REALLOC) &&
      hh_handoff_any(&p->parked))
    expire(s, &p->parked, ev.time);
  if (hh_handoff_any(&p->owed))
    while (hh_handoff_expire(&p->owed, ev.time)) { /* its free was not recorded after all */
    }
  switch (ev.kind) {
    case HH_EV_ALLOC:
      count = hh_event_count(s->sampled, &ev);
      s->allocs += count;
      s->allocated_bytes += ev.weight;
      if (hh_handoff_any(&p->parked) && hh_handoff_take(&p->parked, &ev, &f)) {
        /* allocated, then freed by the parked event: a block live at
         * the address already stays (handoff.h; as the analysis does) */
        if (!live_has(t, ev.addr)) peak_check(s, t->total + ev.weight, ev.time);
        if (f.kind == HH_EV_FREE) s->frees += count;
        break;
      }
      put_new(p, &ev, ev.addr, ev.weight, count);
      break;
    case HH_EV_REALLOC:
      /* sampled: the old block may not have been sampled, and a weight
       * of 0 says the new one is not followed (trace-format.md) */
      s->reallocs += !s->sampled ? 1 : ev.weight ? hh_event_count(true, &ev) : 0;
      s->allocated_bytes += ev.weight;
      if (ev.addr != ev.old_addr && owed_free(p, &ev)) {
        /* its old block was the one allocated over: gone already */
      } else if (!live_del(t, ev.old_addr) && (!s->sampled || ev.weight == 0)) {
        /* (sampled: a weight of 0 is written only for a sampled old block) */
        if (ev.addr != ev.old_addr)
          park(s, &p->parked, &ev);
        else
          s->unknown_frees++;
      }
      if (s->sampled && ev.weight == 0) break;
      count = hh_event_count(s->sampled, &ev);
      if (ev.addr != ev.old_addr && hh_handoff_any(&p->parked) && hh_handoff_take(&p->parked, &ev, &f)) {
        /* a new block another thread freed first (a buffer grown, then
         * handed over), as for an allocation above */
        if (!live_has(t, ev.addr)) peak_check(s, t->total + ev.weight, ev.time);
        if (f.kind == HH_EV_FREE) s->frees += count;
        break;
      }
      if (ev.addr != ev.old_addr)
        put_new(p, &ev, ev.addr, ev.weight, count);
      else
        live_put(t, ev.addr, ev.weight, count);
      break;
    case HH_EV_FREE:
      if (owed_free(p, &ev)) return;
      count = live_del(t, ev.addr);
      if (!count) {
        park(s, &p->parked, &ev);
        return;
      }
      s->frees += count;
      break;
    case HH_EV_END:
    case HH_EV_EXEC:
      if (ev.time > s->end_time) s->end_time = ev.time;
      return;
    default:
      return;
  }
  if (ev.time > s->end_time) s->end_time = ev.time;
  peak_check(s, t->total, ev.time);
}

void hh_summarize(hh_reader *r, hh_summary *s) {
  memset(s, 0, sizeof *s);
  s->sampled = (hh_reader_header(r)->flags & HH_TRACE_FLAG_SAMPLED) != 0;
  uint64_t window = hh_handoff_window(r);
  replay p = {.s = s, .parked = {.window = window}, .owed = {.window = window}};
  hh_ticks ticks;
  hh_ticks_init(&ticks, s->sampled, live_at, &p);
  hh_merge *m = hh_merge_new(r, 0);
  hh_event batch[256];
  for (bool last = false; !last;) {
    size_t n = hh_merge_next_n(m, batch, sizeof batch / sizeof *batch), len;
    last = n == 0;
    const hh_event *span;
    hh_ticks_batch(&ticks, batch, n, last);
    while ((span = hh_ticks_span(&ticks, &len)) != NULL)
      for (size_t i = 0; i < len; i++) on_event(&p, &span[i]);
  }
  expire(s, &p.parked, UINT64_MAX);
  s->leaked_bytes = p.t.total;
  s->leaked_blocks = p.t.blocks;
  s->threads = hh_reader_thread_count(r);
  hh_ticks_free(&ticks);
  hh_merge_free(m);
  hh_handoff_free(&p.parked);
  hh_handoff_free(&p.owed);
  free(p.t.addr);
  free(p.t.count);
  free(p.t.bytes);
}
