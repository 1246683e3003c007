/* Frees handed out before the allocation they free (handoff.h). */
#include "trace/handoff.h"

#include <stdlib.h>
#include <string.h>

#include "trace/xalloc.h"

uint64_t hh_handoff_window(const hh_reader *r) {
  uint64_t tps = hh_reader_header(r)->ticks_per_second;
  uint64_t tick = tps ? (1000000000u + tps - 1) / tps : 1000000000u;
  return tick + 1000;
}

bool hh_handoff_park(hh_handoff *h, const hh_event *ev, hh_event *expired) {
  bool full = h->n - h->head == HH_HANDOFF_MAX;
  if (full) *expired = h->ev[h->head++];
  if (h->n == h->cap) {
    if (h->head > 0) { /* the expired ones' room first */
      memmove(h->ev, h->ev + h->head, (h->n - h->head) * sizeof *h->ev);
      h->n -= h->head;
      h->head = 0;
    } else {
      h->cap = h->cap ? 2 * h->cap : 16;
      h->ev = xrealloc(h->ev, h->cap * sizeof *h->ev);
    }
  }
  h->ev[h->n++] = *ev;
  return full;
}

/* The oldest entry at addr of another thread than e's, at most the window
 * before e, taken out into *out. own: an entry's address is its own block
 * (owed), else the block it frees (parked). */
static bool take(hh_handoff *h, uint64_t addr, const hh_event *e, bool own, hh_event *out) {
  for (size_t i = h->head; i < h->n; i++) {
    const hh_event *p = &h->ev[i];
    if ((own ? p->addr : hh_handoff_addr(p)) == addr && e->time >= p->time &&
        e->time - p->time <= h->window && p->thread != e->thread) {
      *out = *p;
      memmove(h->ev + i, h->ev + i + 1, (h->n - i - 1) * sizeof *h->ev);
      h->n--;
      return true;
    }
  }
  return false;
}

bool hh_handoff_take(hh_handoff *h, const hh_event *alloc, hh_event *out) {
  return take(h, alloc->addr, alloc, false, out);
}

bool hh_handoff_take_owed(hh_handoff *h, const hh_event *f, hh_event *out) {
  return take(h, hh_handoff_addr(f), f, true, out);
}

void hh_handoff_free(hh_handoff *h) {
  free(h->ev);
  *h = (hh_handoff){0};
}
