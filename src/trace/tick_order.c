/* Events of one clock tick in different threads, put in an order the heap
 * allows (tick_order.h). */
#include "trace/tick_order.h"

#include <stdlib.h>
#include <string.h>

#include "trace/strset.h"
#include "trace/xalloc.h"

void hh_ticks_init(hh_ticks *t, bool sampled, hh_live_fn live, void *ctx) {
  *t = (hh_ticks){.live = live, .ctx = ctx, .sampled = sampled};
}

void hh_ticks_free(hh_ticks *t) {
  free(t->carry);
  free(t->keys);
  free(t->vals);
  free(t->state);
  free(t->tmp);
  free(t->next);
  free(t->slot);
  free(t->steps);
  *t = (hh_ticks){0};
}

void hh_ticks_batch(hh_ticks *t, hh_event *evs, size_t n, bool last) {
  t->evs = evs;
  t->n = n;
  t->at = 0;
  t->last = last;
}

static inline bool heap_event(const hh_event *e) {
  return e->kind == HH_EV_ALLOC || e->kind == HH_EV_FREE || e->kind == HH_EV_REALLOC;
}

/* ---- the run's addresses (open addressing, cleared for each run) --------
 * Each address of the run's heap events: the thread that touched it
 * first, whether another thread touched it too, and what the heap holds
 * there as the run goes on (asked of the caller when first needed). Each
 * event keeps the slots of its addresses (slot[2i]: its block, slot[2i+1]:
 * a realloc's old block; NO_SLOT: none). */
enum { ADDR_UNKNOWN = 0, ADDR_LIVE = 1, ADDR_FREE = 2, ADDR_SHARED = 4 };
#define NO_SLOT UINT32_MAX

static void scratch_reserve(hh_ticks *t, size_t m) {
  size_t want = 16;
  unsigned bits = 4;
  while (want < 4 * m) want *= 2, bits++;
  if (want > t->map_cap) {
    free(t->keys);
    free(t->vals);
    free(t->state);
    t->map_cap = want;
    t->keys = xmalloc(want * sizeof *t->keys);
    t->vals = xmalloc(want * sizeof *t->vals);
    t->state = xmalloc(want);
  }
  t->map_used = want; /* a short run clears a small map */
  t->map_shift = 64 - bits;
  memset(t->keys, 0, want * sizeof *t->keys);
  if (m > t->tmp_cap) {
    free(t->tmp);
    free(t->next);
    free(t->slot);
    free(t->steps);
    t->tmp_cap = m;
    t->steps = xmalloc(m * sizeof *t->steps);
    t->tmp = xmalloc(m * sizeof *t->tmp);
    t->next = xmalloc(m * sizeof *t->next);
    t->slot = xmalloc(2 * m * sizeof *t->slot);
  }
}

/* The slot of addr (not 0), taken for it if new; *shared set when a thread
 * other than the first touches it. */
static inline uint32_t map_add(hh_ticks *t, uint64_t addr, uint32_t thread, bool *shared) {
  size_t mask = t->map_used - 1;
  size_t i = (size_t)((addr * 0x9e3779b97f4a7c15ull) >> t->map_shift);
  while (t->keys[i] && t->keys[i] != addr) i = (i + 1) & mask;
  if (!t->keys[i]) {
    t->keys[i] = addr;
    t->vals[i] = thread;
    t->state[i] = ADDR_UNKNOWN;
  } else if (t->vals[i] != thread && !(t->state[i] & ADDR_SHARED)) {
    t->state[i] |= ADDR_SHARED;
    *shared = true;
  }
  return (uint32_t)i;
}

/* Fills the map and the events' slots; whether two threads' heap events
 * of the run touch one address: the only case where the merge's order can
 * be one the heap does not allow. */
static bool map_run(hh_ticks *t, const hh_event *g, size_t m) {
  scratch_reserve(t, m);
  bool shared = false;
  for (size_t i = 0; i < m; i++) {
    uint32_t *s = &t->slot[2 * i];
    s[0] = s[1] = NO_SLOT;
    if (!heap_event(&g[i])) continue;
    if (g[i].addr) s[0] = map_add(t, g[i].addr, g[i].thread, &shared);
    if (g[i].kind == HH_EV_REALLOC && g[i].old_addr && g[i].old_addr != g[i].addr)
      s[1] = map_add(t, g[i].old_addr, g[i].thread, &shared);
  }
  return shared;
}

/* ---- the heap as the run leaves it -----------------------------------
 * Only shared addresses matter: one thread's events at an address it
 * alone touches in the run are in its own order, the right one. */
static inline bool shared(const hh_ticks *t, uint32_t s) {
  return s != NO_SLOT && (t->state[s] & ADDR_SHARED);
}

static inline bool is_live(hh_ticks *t, uint32_t s) {
  uint8_t st = t->state[s] & 3;
  if (st == ADDR_UNKNOWN) {
    st = t->live(t->ctx, t->keys[s]) ? ADDR_LIVE : ADDR_FREE;
    t->state[s] = ADDR_SHARED | st;
  }
  return st == ADDR_LIVE;
}

/* Whether the heap allows event i now: an allocation where no block is
 * live, a free of a live block, a realloc of a live block (in a sampled
 * trace its old block may be one not followed) to where no other block is
 * live. */
static bool allowed(hh_ticks *t, const hh_event *g, size_t i) {
  uint32_t s = t->slot[2 * i], old = t->slot[2 * i + 1];
  /* sampled: a realloc of weight != 0 may have an old block not followed,
   * but only when no order gives it a live one (t->strict) */
  bool lenient = t->sampled && g[i].weight && !t->strict;
  switch (g[i].kind) {
    case HH_EV_ALLOC:
      return !shared(t, s) || !is_live(t, s);
    case HH_EV_FREE:
      return !shared(t, s) || is_live(t, s);
    case HH_EV_REALLOC:
      /* sampled: a weight of 0 is written only for a sampled old block */
      if (g[i].addr == g[i].old_addr) /* in place: s is its old block */
        return !shared(t, s) || lenient || is_live(t, s);
      if (shared(t, old) && !lenient && !is_live(t, old)) return false;
      return !shared(t, s) || !is_live(t, s);
    default:
      return true;
  }
}

static void apply(hh_ticks *t, const hh_event *g, size_t i) {
  uint32_t s = t->slot[2 * i], old = t->slot[2 * i + 1];
  switch (g[i].kind) {
    case HH_EV_ALLOC:
      if (shared(t, s)) t->state[s] = ADDR_SHARED | ADDR_LIVE;
      break;
    case HH_EV_FREE:
      if (shared(t, s)) t->state[s] = ADDR_SHARED | ADDR_FREE;
      break;
    case HH_EV_REALLOC:
      if (shared(t, old)) t->state[old] = ADDR_SHARED | ADDR_FREE;
      /* sampled: a new block of weight 0 is not followed (trace-format.md) */
      if (shared(t, s)) t->state[s] = ADDR_SHARED | (t->sampled && g[i].weight == 0 ? ADDR_FREE : ADDR_LIVE);
      break;
    default:
      break;
  }
}

/* Depth-first search for an order of g[p, m) in which the heap allows
 * every event, each thread's events in their order, trying at each step
 * the threads' next events in the merge's order: the allowed order
 * nearest the merge's. A greedy choice (the first allowed event at each
 * step) can take a wrong one: a producer's temporary block at an address
 * that a consumer frees later in the tick, taken before the producer's
 * allocation the consumer's free was for. At most 4 * SEARCH_STEPS
 * threads' next events looked at per event;
 * false when it finds none (a free of a block the trace never saw makes
 * every order wrong), the map as it was at p. Into t->tmp[p, m). */
#define SEARCH_STEPS 64

static inline void undo(hh_ticks *t, const hh_ticks_step *st) {
  for (int j = 1; j >= 0; j--)
    if (st->undo_slot[j] != NO_SLOT) t->state[st->undo_slot[j]] = st->undo_state[j];
}

static bool search(hh_ticks *t, hh_event *g, size_t p, size_t m, uint32_t *head, size_t nthreads,
                   bool *moved) {
  hh_ticks_step *st = t->steps;
  /* the budget counts the threads' next events looked at (a crafted run
   * of 64 threads that no order allows took 16 times the report's time
   * when it counted steps) */
  size_t d = p, budget = 4 * SEARCH_STEPS * (m - p);
  st[d].tried = UINT32_MAX; /* nothing tried at this step yet */
  while (d < m) {
    uint32_t lo = st[d].tried, best = UINT32_MAX;
    size_t bk = 0;
    for (size_t k = 0; k < nthreads; k++) {
      uint32_t h = head[k];
      if (h == UINT32_MAX || (lo != UINT32_MAX && h <= lo)) continue;
      if (h < best && allowed(t, g, h)) best = h, bk = k;
    }
    if (budget < nthreads) break;
    budget -= nthreads;
    if (best == UINT32_MAX) { /* a dead end: back to the step before, its next choice */
      if (d == p) return false;
      d--;
      undo(t, &st[d]);
      head[st[d].k] = st[d].pick;
      continue;
    }
    hh_ticks_step *x = &st[d];
    x->tried = x->pick = best;
    x->k = (uint16_t)bk;
    for (int j = 0; j < 2; j++) {
      uint32_t sl = t->slot[2 * best + j];
      x->undo_slot[j] = sl;
      x->undo_state[j] = sl != NO_SLOT ? t->state[sl] : 0;
    }
    apply(t, g, best);
    head[bk] = t->next[best];
    if (++d < m) st[d].tried = UINT32_MAX;
  }
  if (d < m) { /* out of steps: the map back as it was at p */
    while (d > p) {
      d--;
      undo(t, &st[d]);
      head[st[d].k] = st[d].pick;
    }
    return false;
  }
  for (d = p; d < m; d++) {
    *moved |= st[d].pick != d;
    t->tmp[d] = g[st[d].pick];
  }
  return true;
}

/* Puts the run g[0, m) of one time in an order the heap allows
 * (tick_order.h), each thread's events in their own order. The merge's
 * order stays when the heap allows it all; else the whole run takes the
 * allowed order nearest the merge's (search), or when there is none, at
 * each step the first allowed event of any thread, or the merge's next
 * when none is allowed. In a sampled trace a realloc's old block must be
 * live at first (strict); only when no order gives every one a live block
 * may one be a block not followed. */
static void resolve(hh_ticks *t, hh_event *g, size_t m) {
  if (m < 2 || m > HH_TICKS_RUN_MAX || !map_run(t, g, m)) return;
  size_t p = 0;
  t->strict = true;
  for (; p < m && allowed(t, g, p); p++) apply(t, g, p);
  if (p == m) goto out;
  /* The merge's prefix may be what no order of the rest allows (another
   * thread's event in it really came after the event at p): search the
   * whole run, from the heap as it was at its start (asked again). */
  for (size_t i = 0; i < t->map_used; i++)
    if (t->keys[i]) t->state[i] &= ADDR_SHARED;
  p = 0;
  uint32_t tid[HH_TICKS_THREADS_MAX];
  uint32_t head[HH_TICKS_THREADS_MAX]; /* each thread's first event left; UINT32_MAX: none */
  size_t nthreads = 0;
  for (size_t i = m; i-- > p;) {
    size_t k = 0;
    while (k < nthreads && tid[k] != g[i].thread) k++;
    if (k == nthreads) {
      if (nthreads == HH_TICKS_THREADS_MAX) goto out;
      tid[nthreads] = g[i].thread;
      head[nthreads++] = UINT32_MAX;
    }
    t->next[i] = head[k];
    head[k] = (uint32_t)i;
  }
  bool moved = false;
  if (search(t, g, p, m, head, nthreads, &moved)) goto done;
  t->strict = false;
  if (t->sampled && search(t, g, p, m, head, nthreads, &moved)) goto done;
  for (size_t out = p; out < m; out++) {
    size_t first = SIZE_MAX, pick = SIZE_MAX, first_k = 0, pick_k = 0;
    for (size_t k = 0; k < nthreads; k++) {
      uint32_t h = head[k];
      if (h == UINT32_MAX) continue;
      if (h < first) first = h, first_k = k;
      if (h < pick && allowed(t, g, h)) pick = h, pick_k = k;
    }
    if (pick == SIZE_MAX) pick = first, pick_k = first_k;
    moved |= pick != out;
    t->tmp[out] = g[pick];
    apply(t, g, pick);
    head[pick_k] = t->next[pick];
  }
done:
  if (moved) { /* else nothing allowed at p: the merge's order after all */
    memcpy(g + p, t->tmp + p, (m - p) * sizeof *g);
    t->reordered++;
  }
out:
  t->strict = false;
}

static void carry_append(hh_ticks *t, const hh_event *evs, size_t n) {
  if (!n) return;
  if (t->ncarry + n > t->carry_cap) {
    t->carry_cap = 2 * (t->ncarry + n);
    t->carry = xrealloc(t->carry, t->carry_cap * sizeof *t->carry);
  }
  memcpy(t->carry + t->ncarry, evs, n * sizeof *evs);
  t->ncarry += n;
}

const hh_event *hh_ticks_span(hh_ticks *t, size_t *len) {
  if (t->carry_out) {
    t->carry_out = false;
    t->ncarry = 0;
  }
  hh_event *e = t->evs;
  if (t->ncarry) { /* a run cut by the last batch's end: what of it this batch holds */
    size_t j = t->at;
    while (j < t->n && e[j].time == t->carry[0].time) j++;
    if (j > t->at) carry_append(t, e + t->at, j - t->at); /* (e is NULL in an empty last batch) */
    t->at = j;
    if (j == t->n && !t->last && t->ncarry < HH_TICKS_RUN_MAX) return NULL;
    resolve(t, t->carry, t->ncarry);
    t->carry_out = true;
    *len = t->ncarry;
    return t->carry;
  }
  if (t->at == t->n) return NULL;
  /* up to the first run of one time with events of two threads */
  size_t start = t->at, i = start, rs = start;
  for (; i < t->n; i++) {
    if (e[i].time != e[rs].time)
      rs = i;
    else if (e[i].thread != e[rs].thread)
      break;
  }
  if (i == t->n && t->last) { /* no such run, and nothing follows */
    t->at = t->n;
    *len = t->n - start;
    return e + start;
  }
  if (rs > start) { /* the events before the run (or before the batch's last run) */
    t->at = rs;
    *len = rs - start;
    return e + start;
  }
  size_t j = rs + 1;
  while (j < t->n && e[j].time == e[rs].time) j++;
  if (j == t->n && !t->last) { /* it may go on in the next batch */
    carry_append(t, e + rs, j - rs);
    t->at = j;
    return NULL;
  }
  resolve(t, e + rs, j - rs);
  t->at = j;
  *len = j - rs;
  return e + rs;
}
