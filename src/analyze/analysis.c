/* The analysis of a trace (analysis.h): one pass over the events in time
 * order (hh_merge_next).
 *
 * State, all bounded by the live blocks and the distinct stacks:
 *  - live blocks: an open-addressing table keyed by address (linear probing,
 *    backward-shift deletion, grown past 1/3 load): size (the event weight),
 *    estimated block count, call site, thread slot, allocation ordinal;
 *  - per call site (indexed by the reader's dense stack index, 0 = no
 *    stack) and per thread: counters, bytes and blocks live now, and the
 *    value at the peak;
 *  - the timeline: max_points buckets of a power-of-two width in ns, each
 *    the maximum of heap bytes over its time; when an event falls past the
 *    last bucket, neighbouring buckets are merged pairwise (max) and the
 *    width doubles, so the duration need not be known in advance and the
 *    peak is never lost; at the end, a last point with the heap where
 *    the trace ends when that is not the last bucket's maximum;
 *  - blocks live at the peak (opt->peak_blocks): blocks freed after the
 *    peak that were allocated at or before it go to a list that is emptied
 *    at every new peak; at the end that list plus the live blocks allocated
 *    at or before the peak are the blocks live at the peak.
 *
 * The peak per site without copying all sites at every new maximum: while
 * the heap is at its maximum so far (at_peak), the live values are the peak
 * values. When the heap first changes other than by growing past the
 * maximum, an epoch counter is bumped (the live values of that moment are
 * now "the peak"); from then on a site (or thread) whose live values are
 * about to change first saves them, stamped with the epoch, unless it has
 * already done so in this epoch. At the end a site's peak is its saved
 * value when stamped with the current epoch, else its live value. O(1) per
 * event.
 *
 * Temporary allocations: a free (or the free half of a realloc) of the
 * block its thread allocated last, by that thread, with no other free by
 * it in between. heaptrack's rule is the same across all threads in time
 * order, and a free of a block it never saw allocated resets nothing
 * there; here the rule runs per thread, because heaphook's clock ticks
 * (~1.6 us) leave the order of two threads' events within a tick open (the
 * count would depend on the tick), and such a free ends the chain too
 * (most are hand-offs from another thread: park).
 *
 * Sampled traces: bytes are the event weights (unbiased estimates); counts
 * are estimates too, weight / size rounded, at least 1 per sample. */
#define _GNU_SOURCE
#include "analyze/analysis.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "trace/handoff.h"
#include "trace/tick_order.h"
#include "trace/xalloc.h"

/* ---- costs ---------------------------------------------------------------- */

uint64_t hh_site_cost(const hh_site *s, hh_cost cost) {
  switch (cost) {
    case HH_COST_PEAK:
      return s->peak_bytes;
    case HH_COST_ALLOCATIONS:
      return s->allocations;
    case HH_COST_TEMPORARY:
      return s->temporary;
    case HH_COST_LEAKED:
      return s->leaked_bytes;
    case HH_COST_BYTES:
      return s->bytes;
  }
  return 0;
}

static const char *const cost_names[] = {"peak", "allocations", "temporary", "leaked", "bytes"};

const char *hh_cost_name(hh_cost cost) {
  return (unsigned)cost < sizeof cost_names / sizeof *cost_names ? cost_names[cost] : "?";
}

int hh_cost_parse(const char *name, hh_cost *out) {
  for (unsigned i = 0; i < sizeof cost_names / sizeof *cost_names; i++)
    if (name && strcmp(name, cost_names[i]) == 0) {
      *out = (hh_cost)i;
      return 0;
    }
  return -1;
}

/* ---- live blocks ---------------------------------------------------------- */

/* A live block's allocation ordinal and its thread's slot share a word:
 * 2^40 allocations (past those only the list of blocks at the peak can be
 * wrong), 2^24 - 1 threads (past those the last slot takes the rest). Until
 * 2026-11-25 the slot had 16 bits: the 65,535th thread's numbers took
 * every later thread's, which a thread per request reached. */
#define SLOT_BITS 24
#define SLOT_MASK ((1u << SLOT_BITS) - 1)
#define ORDINAL_OF(o) ((o) >> SLOT_BITS)
#define SLOT_OF(o) ((uint32_t)(o)&SLOT_MASK)

typedef struct block {
  uint64_t addr; /* 0: empty slot */
  uint64_t bytes;
  uint64_t ordinal; /* allocation ordinal << SLOT_BITS | thread slot */
  uint32_t site;
  uint32_t count; /* estimated blocks it stands for (1 unless sampled) */
} block;

/* Open addressing with linear probing over the blocks themselves (32 bytes,
 * the address the key, 0 for an empty slot: one cache line per probe), and
 * the table kept at most a third full: a probe then nearly always ends at
 * its first or second slot. At half full (the first choice) the probe
 * loops' exits were mispredicted often enough to cost ~25% of the whole
 * report on the churn benchmark (0.70 -> 0.56 s of CPU, 10M events,
 * docs/benchmarks.md); the price is 3-6 slots of 32 bytes per live block.
 * A table past BIG_TABLE slots (64 MiB, far past the caches: each probe
 * is a miss to memory anyway) is kept at most half full instead: 4 million
 * leaked blocks took 825 MB to report (a 512 MiB table, and the 256 MiB
 * one before it while it was filled), now half that. */
typedef struct block_table {
  block *slots;
  size_t cap, n;
  unsigned shift; /* 64 - log2(cap) */
} block_table;

#define BIG_TABLE ((size_t)1 << 21)

/* Whether the table has room for one more block. */
static inline bool table_room(const block_table *t) {
  return t->cap >= BIG_TABLE ? (t->n + 1) * 2 <= t->cap : (t->n + 1) * 3 <= t->cap;
}

/* Fibonacci hashing: the product's top bits. One multiply, which matters
 * where a removal rehashes each block it shifts back. */
static inline size_t slot_of(const block_table *t, uint64_t a) {
  return (size_t)((a * 0x9E3779B97F4A7C15ull) >> t->shift);
}

/* A hint: the slot where addr's probe will start (consume() issues it a few
 * events ahead, so that the probe finds its cache line loaded). */
static inline void table_prefetch(const block_table *t, uint64_t addr) {
  if (t->cap) __builtin_prefetch(&t->slots[slot_of(t, addr)]);
}

static void table_insert_new(block_table *t, const block *b);

static void table_grow(block_table *t) {
  block_table old = *t;
  t->cap = old.cap ? old.cap * 2 : 4096;
  t->shift = 64u - (unsigned)__builtin_ctzll(t->cap);
  t->slots = xcalloc(t->cap, sizeof *t->slots);
  t->n = 0;
  for (size_t i = 0; i < old.cap; i++)
    if (old.slots[i].addr) table_insert_new(t, &old.slots[i]);
  free(old.slots);
}

/* A free slot for addr, which must not be in the table. */
static inline block *table_slot_new(block_table *t, uint64_t addr) {
  if (!table_room(t)) table_grow(t);
  size_t mask = t->cap - 1, i = slot_of(t, addr);
  while (t->slots[i].addr) i = (i + 1) & mask;
  t->n++;
  return &t->slots[i];
}

/* b->addr must not be in the table. (A block just made field by field
 * goes in through table_slot_new instead: copied whole, it is read back
 * with wider loads than the stores that wrote it, which the processor does
 * not forward; the load waits for the stores to reach the cache, and the
 * profile had 44% of the insertion's samples on it.) */
static void table_insert_new(block_table *t, const block *b) { *table_slot_new(t, b->addr) = *b; }

/* The slot holding addr, or NULL; then *hole is the empty slot where the
 * probe ended (where addr would go while the table does not change). */
static inline block *table_probe(const block_table *t, uint64_t addr, block **hole) {
  *hole = NULL;
  if (!t->cap || !addr) return NULL;
  size_t mask = t->cap - 1, i = slot_of(t, addr);
  for (;;) {
    uint64_t k = t->slots[i].addr;
    if (k == addr) return &t->slots[i];
    if (!k) {
      *hole = &t->slots[i];
      return NULL;
    }
    i = (i + 1) & mask;
  }
}

/* The slot holding addr, or NULL. */
static inline block *table_find(const block_table *t, uint64_t addr) {
  block *hole;
  return table_probe(t, addr, &hole);
}

static void table_remove(block_table *t, block *b) {
  size_t mask = t->cap - 1, i = (size_t)(b - t->slots);
  t->n--;
  for (size_t j = (i + 1) & mask; t->slots[j].addr; j = (j + 1) & mask) {
    size_t home = slot_of(t, t->slots[j].addr);
    if (((j - home) & mask) >= ((j - i) & mask)) {
      t->slots[i] = t->slots[j];
      i = j;
    }
  }
  t->slots[i].addr = 0;
}

/* ---- accumulators --------------------------------------------------------- */

typedef struct acc {
  uint64_t allocations, frees, bytes, temporary;
  uint64_t live_bytes, live_blocks;
  uint64_t saved_bytes, saved_blocks, saved_epoch;
} acc;

typedef struct state {
  hh_reader *r;
  bool sampled, want_blocks;
  block_table live;

  acc *sites;           /* by slot; slot 0: no stack */
  uint64_t *site_stack; /* stack id of each slot */
  size_t nsites, sites_cap;
  uint64_t *smap_keys; /* stack id -> slot + 1 (open addressing) */
  uint32_t *smap_vals;
  size_t smap_cap;
  uint64_t last_stack;
  uint32_t last_site;

  acc *threads;
  uint32_t *thread_index; /* trace thread index of each slot */
  /* slot + 1 of each trace thread index below SLOT_BY_INDEX_MAX (0: none
   * yet): the tracer numbers threads 1, 2, ... A linear search took 16 s
   * for a trace of 60,000 threads; larger indexes (crafted traces) still
   * search. */
  uint32_t *slot_by_index;
  size_t slot_by_index_cap;
  size_t nthreads, threads_cap;
  uint32_t last_thread, last_slot;
  bool have_last_thread;

  uint64_t heap, live_blocks;
  uint64_t epoch;
  bool at_peak;
  uint64_t peak_ordinal;
  uint64_t ordinal;
  uint64_t *last_alloc; /* by thread slot: its most recent allocation's address (temporary rule) */
  hh_handoff parked;    /* frees that may have come before their allocation */
  hh_handoff owed;      /* blocks allocated over, whose free may come after (weight: the old block's count) */
  hh_ticks ticks;       /* runs of one time put in an order the heap allows */

  hh_live_block *grave;
  size_t ngrave, grave_cap;

  /* timeline */
  uint64_t *tl;
  size_t tl_n, tl_cap;
  unsigned tl_shift;

  hh_analysis *a;
  size_t markers_cap, rss_cap, rss_limit;
  bool stopped; /* at the memory limit (within_limit): with what was held then */
  uint64_t stop_reader_bytes, stop_bytes;
} state;

static inline uint64_t mix_id(uint64_t x) {
  x ^= x >> 31;
  x *= 0x9e3779b97f4a7c15ull;
  return x ^ (x >> 29);
}

static void smap_put(state *s, uint64_t id, uint32_t slot) {
  size_t mask = s->smap_cap - 1, i = mix_id(id) & mask;
  while (s->smap_vals[i]) i = (i + 1) & mask;
  s->smap_keys[i] = id;
  s->smap_vals[i] = slot + 1;
}

/* The slot of stack id (a new one for an id not seen yet). The analysis
 * keeps its own map: it runs beside the thread that reads the trace and
 * so never looks at the reader's tables while they grow. */
static uint32_t site_slot(state *s, uint64_t id) {
  if (id == 0) return 0; /* slot 0: no stack (made by hh_analyze) */
  if (id == s->last_stack) return s->last_site;
  if ((s->nsites + 1) * 2 > s->smap_cap) {
    size_t old_cap = s->smap_cap;
    uint64_t *ok = s->smap_keys;
    uint32_t *ov = s->smap_vals;
    s->smap_cap = old_cap ? old_cap * 2 : 1024;
    s->smap_keys = xcalloc(s->smap_cap, sizeof *s->smap_keys);
    s->smap_vals = xcalloc(s->smap_cap, sizeof *s->smap_vals);
    for (size_t i = 0; i < old_cap; i++)
      if (ov[i]) smap_put(s, ok[i], ov[i] - 1);
    free(ok);
    free(ov);
  }
  uint32_t slot;
  size_t mask = s->smap_cap - 1, i = mix_id(id) & mask;
  for (;; i = (i + 1) & mask) {
    if (!s->smap_vals[i]) break;
    if (s->smap_keys[i] == id) {
      slot = s->smap_vals[i] - 1;
      goto found;
    }
  }
  if (s->nsites == s->sites_cap) {
    size_t cap = s->sites_cap * 2;
    s->sites = xrealloc(s->sites, cap * sizeof *s->sites);
    s->site_stack = xrealloc(s->site_stack, cap * sizeof *s->site_stack);
    memset(s->sites + s->sites_cap, 0, (cap - s->sites_cap) * sizeof *s->sites);
    memset(s->site_stack + s->sites_cap, 0, (cap - s->sites_cap) * sizeof *s->site_stack);
    s->sites_cap = cap;
  }
  slot = (uint32_t)s->nsites++;
  s->site_stack[slot] = id;
  smap_put(s, id, slot);
found:
  s->last_stack = id;
  s->last_site = slot;
  return slot;
}

static inline acc *site_acc(state *s, size_t slot) { return &s->sites[slot]; }

#define SLOT_BY_INDEX_MAX (1u << 22)

static uint32_t thread_slot_lookup(state *s, uint32_t index);

/* (the same thread as the last event's, inline: nearly every event) */
static inline uint32_t thread_slot(state *s, uint32_t index) {
  if (__builtin_expect(s->have_last_thread && s->last_thread == index, 1)) return s->last_slot;
  return thread_slot_lookup(s, index);
}

static uint32_t thread_slot_lookup(state *s, uint32_t index) {
  size_t i = 0;
  bool mapped = index < SLOT_BY_INDEX_MAX;
  if (mapped && index >= s->slot_by_index_cap) {
    size_t cap = s->slot_by_index_cap ? s->slot_by_index_cap : 64;
    while (cap <= index) cap *= 2;
    s->slot_by_index = xrealloc(s->slot_by_index, cap * sizeof *s->slot_by_index);
    memset(s->slot_by_index + s->slot_by_index_cap, 0,
           (cap - s->slot_by_index_cap) * sizeof *s->slot_by_index);
    s->slot_by_index_cap = cap;
  }
  if (mapped)
    i = s->slot_by_index[index] ? s->slot_by_index[index] - 1 : s->nthreads;
  else
    while (i < s->nthreads && s->thread_index[i] != index) i++;
  if (i == s->nthreads) {
    if (s->nthreads == SLOT_MASK) {
      i = SLOT_MASK - 1; /* absurdly many threads: the last slot takes the rest */
    } else {
      if (s->nthreads == s->threads_cap) {
        s->threads_cap = s->threads_cap ? s->threads_cap * 2 : 16;
        s->threads = xrealloc(s->threads, s->threads_cap * sizeof *s->threads);
        s->thread_index = xrealloc(s->thread_index, s->threads_cap * sizeof *s->thread_index);
        s->last_alloc = xrealloc(s->last_alloc, s->threads_cap * sizeof *s->last_alloc);
      }
      memset(&s->threads[i], 0, sizeof *s->threads);
      s->thread_index[i] = index;
      s->last_alloc[i] = 0;
      s->nthreads++;
    }
    if (mapped) s->slot_by_index[index] = (uint32_t)i + 1;
  }
  s->last_thread = index;
  s->last_slot = (uint32_t)i;
  s->have_last_thread = true;
  return (uint32_t)i;
}

/* The live values of x are about to change: keep the peak's first. */
static inline void touch(const state *s, acc *x) {
  if (!s->at_peak && x->saved_epoch != s->epoch) {
    x->saved_bytes = x->live_bytes;
    x->saved_blocks = x->live_blocks;
    x->saved_epoch = s->epoch;
  }
}

/* The heap is about to change other than by growing past its maximum. */
static inline void freeze(state *s) {
  if (s->at_peak) {
    s->at_peak = false;
    s->epoch++;
  }
}

static inline uint64_t peak_of(const state *s, const acc *x, bool blocks) {
  if (!s->at_peak && x->saved_epoch == s->epoch) return blocks ? x->saved_blocks : x->saved_bytes;
  return blocks ? x->live_blocks : x->live_bytes;
}

/* ---- timeline ------------------------------------------------------------- */

static void tl_record_grow(state *s, uint64_t t, uint64_t before, uint64_t after);

/* (a bucket already started, inline: nearly every event) */
static inline void tl_record(state *s, uint64_t t, uint64_t before, uint64_t after) {
  uint64_t b = t >> s->tl_shift;
  if (__builtin_expect(b < s->tl_n, 1)) {
    if (after > s->tl[b]) s->tl[b] = after;
    return;
  }
  tl_record_grow(s, t, before, after);
}

static void tl_record_grow(state *s, uint64_t t, uint64_t before, uint64_t after) {
  uint64_t b = t >> s->tl_shift;
  while (b >= s->tl_cap) {
    size_t n = (s->tl_n + 1) / 2;
    for (size_t i = 0; i < n; i++) {
      uint64_t x = s->tl[2 * i], y = 2 * i + 1 < s->tl_n ? s->tl[2 * i + 1] : 0;
      s->tl[i] = x > y ? x : y;
    }
    s->tl_n = n;
    s->tl_shift++;
    b = t >> s->tl_shift;
  }
  while (s->tl_n <= b) s->tl[s->tl_n++] = before;
  if (after > s->tl[b]) s->tl[b] = after;
}

/* ---- events --------------------------------------------------------------- */

static inline uint32_t est_count(const state *s, const hh_event *ev) {
  uint64_t n = hh_event_count(s->sampled, ev);
  return n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
}

static inline unsigned size_bucket(uint64_t size) { return size ? 63u - (unsigned)__builtin_clzll(size) : 0; }

/* Removes a live block (a free, or the old half of a realloc). */
static void release(state *s, block *b, uint32_t free_slot, bool is_free, bool temporary) {
  acc *site = site_acc(s, b->site);
  acc *owner = &s->threads[SLOT_OF(b->ordinal)];
  touch(s, site);
  touch(s, owner);
  site->live_bytes -= b->bytes;
  site->live_blocks -= b->count;
  owner->live_bytes -= b->bytes;
  owner->live_blocks -= b->count;
  if (is_free) {
    s->threads[free_slot].frees += b->count;
    s->a->frees += b->count;
  }
  if (temporary) {
    site->temporary += b->count;
    owner->temporary += b->count;
    s->a->temporary += b->count;
  }
  s->heap -= b->bytes;
  s->live_blocks -= b->count;
  if (s->want_blocks && ORDINAL_OF(b->ordinal) <= s->peak_ordinal) {
    if (s->ngrave == s->grave_cap) {
      s->grave_cap = s->grave_cap ? s->grave_cap * 2 : 1024;
      s->grave = xrealloc(s->grave, s->grave_cap * sizeof *s->grave);
    }
    s->grave[s->ngrave++] = (hh_live_block){b->addr, b->bytes};
  }
  table_remove(&s->live, b);
}

/* hole: where ev->addr goes, from a probe since which the table has not
 * changed (NULL: probed here). */
static void acquire(state *s, const hh_event *ev, uint32_t slot, bool counts, block *hole) {
  size_t idx = site_slot(s, ev->stack);
  acc *site = site_acc(s, idx);
  acc *th = &s->threads[slot];
  uint32_t n = est_count(s, ev);
  touch(s, site);
  touch(s, th);
  if (counts) {
    site->allocations += n;
    th->allocations += n;
    s->a->allocation_calls += n;
    unsigned k = size_bucket(ev->size);
    s->a->histogram.count[k] += n;
    s->a->histogram.bytes[k] += ev->weight;
  }
  site->bytes += ev->weight;
  th->bytes += ev->weight;
  site->live_bytes += ev->weight;
  site->live_blocks += n;
  th->live_bytes += ev->weight;
  th->live_blocks += n;
  s->a->bytes_allocated += ev->weight;
  s->heap += ev->weight;
  s->live_blocks += n;
  s->ordinal++;
  if (ev->addr) {
    block *b;
    if (hole && table_room(&s->live)) {
      b = hole;
      s->live.n++;
    } else {
      b = table_slot_new(&s->live, ev->addr);
    }
    b->addr = ev->addr;
    b->bytes = ev->weight;
    b->ordinal = s->ordinal << SLOT_BITS | slot;
    b->site = (uint32_t)idx;
    b->count = n;
  }
  /* a block a realloc shrank in place is no allocation call, so no
   * temporary allocation either (a site showed "1 temporary of 0
   * allocations") */
  s->last_alloc[slot] = counts ? ev->addr : 0;
}

/* Block b, freed by thread slot `slot`, is a temporary allocation: that
 * thread allocated it last, and freed nothing known since. */
static inline bool temporary(const state *s, const block *b, uint32_t slot) {
  return s->a->temporary_known && b->addr == s->last_alloc[slot] && SLOT_OF(b->ordinal) == slot;
}

static void new_max_check(state *s, uint64_t t) {
  if (s->heap > s->a->peak_bytes) {
    s->a->peak_bytes = s->heap;
    s->a->peak_blocks = s->live_blocks;
    s->a->peak_time_ns = t;
    s->at_peak = true;
    s->peak_ordinal = s->ordinal;
    s->ngrave = 0;
  }
}

/* A parked free that no allocation took back: a free (or a realloc's old
 * block) the trace never saw allocated. */
static void unknown_free(state *s, const hh_event *ev) {
  s->a->unknown_frees++;
  if (ev->kind == HH_EV_FREE) {
    s->a->frees++;
    s->threads[thread_slot(s, ev->thread)].frees++;
  }
}

/* Parked frees past their window, or all of them at the end (UINT64_MAX). */
static void expire_parked(state *s, uint64_t time) {
  const hh_event *e;
  while ((e = hh_handoff_expire(&s->parked, time)) != NULL) unknown_free(s, e);
}

/* A free (or a realloc's old block) of a block that is not live. The
 * freeing thread's temporary-allocation chain ends here, as a free of a
 * known block ends it: most of these are (a hand-off), and the thread's
 * later events must not wait for the allocation that takes it back. */
static void park(state *s, const hh_event *ev) {
  hh_event expired;
  s->last_alloc[thread_slot(s, ev->thread)] = 0;
  if (hh_handoff_addr(ev) == 0) /* no block lives at 0 (the live table keeps none there) */
    unknown_free(s, ev);
  else if (hh_handoff_park(&s->parked, ev, &expired))
    unknown_free(s, &expired);
}

/* A new block (ev: an allocation, or a realloc's new block) whose free f
 * (another thread's, within the window) the merge handed out first
 * (trace/handoff.h): the block is made, then freed. When a block is live
 * at the address already, it is the one the freeing thread allocated
 * right after its free (glibc's per-thread cache hands it the block it just
 * freed): it stays live, and the pair is applied beside it, the timeline
 * and the peak left as they were. */
static void new_then_parked(state *s, const hh_event *ev, bool counts, const hh_event *f, block *live) {
  block saved;
  uint64_t h0 = s->heap;
  if (live) {
    saved = *live;
    table_remove(&s->live, live);
  }
  freeze(s);
  if (ev->kind == HH_EV_ALLOC) s->a->allocations += est_count(s, ev);
  acquire(s, ev, thread_slot(s, ev->thread), counts, NULL);
  if (!live) {
    new_max_check(s, ev->time);
    tl_record(s, ev->time, h0, s->heap);
  }
  block *b = table_find(&s->live, ev->addr);
  uint64_t before = live ? h0 : s->heap;
  freeze(s);
  /* not a temporary allocation: the other thread got the block through
   * the program, most likely after allocations in between */
  release(s, b, thread_slot(s, f->thread), f->kind == HH_EV_FREE, false);
  tl_record(s, ev->time, before, s->heap);
  if (live) table_insert_new(&s->live, &saved);
}

/* A new block (ev: an allocation, or a realloc's new block) where a block
 * is live (old): the old block's free was not recorded, or it is another
 * thread's that comes later in the merge, timed after the allocation that
 * got the address back (a realloc is timed before it runs: another thread
 * can free the address it returns meanwhile). The old block goes now; its
 * free, when it comes from another thread within the window, counts for it
 * and leaves the new block alone (hh_handoff_take_owed). */
static void over_live(state *s, const hh_event *ev, block *old, uint32_t slot) {
  hh_event owed = *ev, dropped;
  owed.weight = old->count;
  release(s, old, slot, false, false);
  hh_handoff_park(&s->owed, &owed,
                  &dropped); /* the oldest dropped when full: its free will free the new block */
}

/* A free (or a realloc's old block, ev) of a live block that another
 * thread allocated over a block still owed its free: it is that free. */
static bool owed_free(state *s, const hh_event *ev, uint32_t slot) {
  hh_event f;
  if (!hh_handoff_any(&s->owed) || !hh_handoff_take_owed(&s->owed, ev, &f)) return false;
  if (ev->kind == HH_EV_FREE) {
    s->threads[slot].frees += f.weight;
    s->a->frees += f.weight;
  }
  return true;
}

static void on_event(state *s, const hh_event *ev) {
  hh_analysis *a = s->a;
  if (hh_handoff_any(&s->parked)) expire_parked(s, ev->time);
  if (hh_handoff_any(&s->owed))
    while (hh_handoff_expire(&s->owed, ev->time)) { /* its free was not recorded after all */
    }
  uint64_t before = s->heap;
  uint32_t slot = thread_slot(s, ev->thread);
  hh_event f;
  switch (ev->kind) {
    case HH_EV_ALLOC: {
      block *hole, *old = table_probe(&s->live, ev->addr, &hole);
      if (hh_handoff_any(&s->parked) && hh_handoff_take(&s->parked, ev, &f)) {
        new_then_parked(s, ev, true, &f, old);
        break;
      }
      if (old || ev->weight == 0) freeze(s);
      if (old) over_live(s, ev, old, slot);
      a->allocations += est_count(s, ev);
      acquire(s, ev, slot, true, hole);
      break;
    }
    case HH_EV_FREE: {
      block *b = table_find(&s->live, ev->addr);
      if (!b) {
        park(s, ev);
        return;
      }
      if (owed_free(s, ev, slot)) { /* the block allocated over's: the live one stays */
        s->last_alloc[slot] = 0;
        return;
      }
      freeze(s);
      release(s, b, slot, true, temporary(s, b, slot));
      s->last_alloc[slot] = 0;
      break;
    }
    case HH_EV_REALLOC: {
      freeze(s);
      /* sampled: estimated by the new block's draw alone (its own, whatever
       * the old block's), so a realloc whose new block was not drawn
       * (weight 0) adds nothing */
      a->reallocs += !s->sampled ? 1 : ev->weight ? est_count(s, ev) : 0;
      block *b = table_find(&s->live, ev->old_addr);
      bool counts = true;
      if (b && ev->addr != ev->old_addr && owed_free(s, ev, slot)) {
        s->last_alloc[slot] = 0; /* its old block was the one allocated over: gone already */
      } else if (b) {
        counts = ev->addr != ev->old_addr || ev->weight > b->bytes; /* moved or grew */
        /* not a free in the totals; a temporary allocation only when the
         * realloc counts as its free (a block shrunk in place and kept to
         * the end was "temporary" and leaked at once) */
        release(s, b, slot, false, counts && temporary(s, b, slot));
        s->last_alloc[slot] = 0;
      } else if (s->sampled && ev->weight != 0) {
        /* the old block was not sampled: moved, or not known to grow (a
         * weight of 0 is written only for a sampled old block: below) */
        counts = ev->addr != ev->old_addr;
      } else if (ev->addr != ev->old_addr) {
        park(s, ev); /* its old block: perhaps allocated by another thread in the same tick */
      } else {
        a->unknown_frees++;
      }
      /* sampled: the new block is not followed (trace-format.md, REALLOC) */
      if (s->sampled && ev->weight == 0) break;
      block *dup = ev->addr != ev->old_addr ? table_find(&s->live, ev->addr) : NULL;
      /* a new block another thread freed first (a buffer grown, then handed over) */
      if (ev->addr != ev->old_addr && hh_handoff_any(&s->parked) && hh_handoff_take(&s->parked, ev, &f)) {
        new_then_parked(s, ev, counts, &f, dup);
        break;
      }
      if (dup) over_live(s, ev, dup, slot);
      acquire(s, ev, slot, counts, NULL);
      break;
    }
    default:
      return;
  }
  new_max_check(s, ev->time);
  tl_record(s, ev->time, before, s->heap);
}

/* ---- progress ------------------------------------------------------------- */

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

typedef struct progress {
  bool on, shown;
  double start, after;
  int last_pct;
  int width; /* of the widest line drawn */
} progress;

static void progress_tick(progress *p, uint64_t offset, uint64_t size) {
  if (!p->on) return;
  double t = now_s() - p->start;
  if (t < p->after) return;
  if (!size) return;
  int pct = (int)(100.0 * (double)offset / (double)size);
  if (pct > 100) pct = 100;
  if (p->shown && pct == p->last_pct) return;
  p->shown = true;
  p->last_pct = pct;
  char bar[41];
  int fill = pct * 40 / 100;
  for (int i = 0; i < 40; i++) bar[i] = i < fill ? '#' : '.';
  bar[40] = 0;
  int n = fprintf(stderr, "\rheaphook: analysing [%s] %3d%%", bar, pct);
  if (n > p->width) p->width = n;
  fflush(stderr);
}

/* The bar's line blanked, all of it (blanked to 60 columns of its 67,
 * "#] 100%" stayed on the report's first line). */
static void progress_done(progress *p) {
  if (p->shown) {
    fprintf(stderr, "\r%*s\r", p->width, "");
    fflush(stderr);
  }
}

/* ---- the pass ------------------------------------------------------------- */

static int cmp_block(const void *x, const void *y) {
  const hh_live_block *a = x, *b = y;
  return a->addr < b->addr ? -1 : a->addr > b->addr;
}

static void add_rss(state *s, uint64_t t, uint64_t rss) {
  hh_analysis *a = s->a;
  if (rss > a->peak_rss_bytes) a->peak_rss_bytes = rss;
  if (a->nrss == s->rss_limit) { /* halve: max of pairs */
    size_t n = 0;
    for (size_t i = 0; i < a->nrss; i += 2) {
      hh_rss_point p = a->rss[i];
      if (i + 1 < a->nrss && a->rss[i + 1].rss_bytes > p.rss_bytes) p.rss_bytes = a->rss[i + 1].rss_bytes;
      a->rss[n++] = p;
    }
    a->nrss = n;
  }
  if (a->nrss == s->rss_cap) {
    s->rss_cap = s->rss_cap ? s->rss_cap * 2 : 256;
    a->rss = xrealloc(a->rss, s->rss_cap * sizeof *a->rss);
  }
  a->rss[a->nrss++] = (hh_rss_point){t, rss};
}

/* ---- the reading thread ---------------------------------------------------
 * Reading (file, zstd, records, the time-ordered merge) runs in a thread of
 * its own and hands the events over in batches; the analysis never touches
 * the reader's tables until that thread is done. */
#define FEED_BATCH 4096
#define FEED_BATCHES 8

typedef struct feed {
  hh_merge *m;
  const hh_reader *r;
  pthread_mutex_t mu;
  pthread_cond_t not_full, not_empty;
  hh_event *buf[FEED_BATCHES];
  size_t len[FEED_BATCHES];
  uint64_t table_bytes[FEED_BATCHES]; /* the reader's tables when the batch was filled */
  size_t head, count;
  bool done;
  bool stop;       /* the analysis wants no more (its memory limit) */
  uint64_t offset; /* file bytes merged, for the progress bar (atomic) */
} feed;

/* Fills b with the next events the analysis wants; returns how many (fewer
 * than FEED_BATCH only at the end). */
static size_t feed_fill(feed *f, hh_event *b) {
  size_t n = 0;
  while (n < FEED_BATCH) {
    size_t got = hh_merge_next_n(f->m, &b[n], FEED_BATCH - n), kept = n;
    /* definitions are the reader's business (its tables have them) */
    for (size_t i = n; i < n + got; i++) {
      hh_ev_kind k = b[i].kind;
      if (k == HH_EV_STACK || k == HH_EV_MODULE_LOAD || k == HH_EV_MODULE_UNLOAD || k == HH_EV_COMMAND)
        continue;
      if (kept != i) b[kept] = b[i];
      kept++;
    }
    bool end = n + got < FEED_BATCH;
    n = kept;
    if (end) break;
  }
  /* what the merge has been through, not what it read ahead: a trace
   * under its 64 MiB window was all read before the first event, and the
   * bar stood at 100% through the whole analysis */
  __atomic_store_n(&f->offset, hh_merge_offset(f->m), __ATOMIC_RELAXED);
  return n;
}

static void *feed_main(void *arg) {
  feed *f = arg;
  for (;;) {
    pthread_mutex_lock(&f->mu);
    while (f->count == FEED_BATCHES && !f->stop) pthread_cond_wait(&f->not_full, &f->mu);
    if (f->stop) {
      pthread_mutex_unlock(&f->mu);
      return NULL;
    }
    size_t slot = (f->head + f->count) % FEED_BATCHES;
    pthread_mutex_unlock(&f->mu);
    size_t n = feed_fill(f, f->buf[slot]);
    uint64_t table_bytes = hh_reader_table_bytes(f->r);
    pthread_mutex_lock(&f->mu);
    f->len[slot] = n;
    f->table_bytes[slot] = table_bytes;
    if (n) f->count++;
    if (n < FEED_BATCH) f->done = true;
    pthread_cond_signal(&f->not_empty);
    pthread_mutex_unlock(&f->mu);
    if (n < FEED_BATCH) return NULL;
  }
}

typedef struct pass_state {
  uint64_t last_time, end_time;
  bool end;
} pass_state;

/* How many events ahead consume() prefetches the live table's slots: the
 * table's probes are cache misses on large heaps, and the events of a batch
 * are known in advance. */
#define PREFETCH_AHEAD 8

static void consume(state *s, pass_state *p, const hh_event *evs, size_t n) {
  hh_analysis *a = s->a;
  for (size_t i = 0; i < n; i++) {
    const hh_event *ev = &evs[i];
    if (i + PREFETCH_AHEAD < n) {
      const hh_event *later = &evs[i + PREFETCH_AHEAD];
      table_prefetch(&s->live, later->kind == HH_EV_REALLOC ? later->old_addr : later->addr);
    }
    switch (ev->kind) {
      case HH_EV_ALLOC:
      case HH_EV_FREE:
      case HH_EV_REALLOC:
        a->events++;
        on_event(s, ev);
        if (ev->time > p->last_time) p->last_time = ev->time;
        break;
      case HH_EV_RSS:
        add_rss(s, ev->time, ev->u.rss);
        if (ev->time > p->last_time) p->last_time = ev->time;
        break;
      case HH_EV_MARKER:
        if (a->nmarkers == s->markers_cap) {
          s->markers_cap = s->markers_cap ? s->markers_cap * 2 : 16;
          a->markers = xrealloc(a->markers, s->markers_cap * sizeof *a->markers);
        }
        a->markers[a->nmarkers++] = (hh_marker_at){ev->time, ev->u.marker};
        if (ev->time > p->last_time) p->last_time = ev->time;
        break;
      case HH_EV_THREAD:
        thread_slot(s, ev->u.thread->index); /* threads that never allocate are listed too */
        break;
      case HH_EV_END:
      case HH_EV_EXEC: /* the program went on as another: its own run ended here */
        p->end = true;
        p->end_time = ev->time;
        break;
      default:
        break;
    }
  }
}

static void state_free(state *s) {
  free(s->sites);
  free(s->site_stack);
  free(s->smap_keys);
  free(s->smap_vals);
  free(s->threads);
  free(s->thread_index);
  free(s->last_alloc);
  free(s->slot_by_index);
  free(s->live.slots);
  free(s->grave);
  hh_handoff_free(&s->parked);
  hh_handoff_free(&s->owed);
  hh_ticks_free(&s->ticks);
}

/* The oracle of s->ticks: whether a block is live at addr. */
static bool live_at(void *ctx, uint64_t addr) { return table_find(&((state *)ctx)->live, addr) != NULL; }

/* ---- memory ----------------------------------------------------------------
 * The analysis's tables count against the reader's memory limit
 * (hh_reader_memory_limit) together with the reader's own: before each
 * batch, what they hold and what the batch's events could make them grow
 * to (a table that that many more entries would make grow, at its next
 * size: the old one is held while the new one is filled), with what the
 * reader's tables held when the batch was filled (so the point where the
 * analysis stops does not depend on how far the reading thread has got).
 * The live blocks are what grows without bound (a small file can hold
 * millions of allocations, docs/trace-format.md, "The reader's memory").
 * A batch's events are counted by kind first: allocations may add live
 * blocks and call sites, frees blocks live at the peak, markers markers. */
static uint64_t grown_bytes(size_t need, size_t cap, size_t first, size_t elem) {
  if (need <= cap) return 0;
  size_t c = cap ? cap : first;
  while (c < need) c *= 2;
  return c > cap ? (uint64_t)c * elem : 0;
}

typedef struct batch_kinds {
  size_t allocs, frees, markers;
} batch_kinds;

static batch_kinds count_kinds(const hh_event *evs, size_t n) {
  batch_kinds k = {0};
  for (size_t i = 0; i < n; i++) {
    hh_ev_kind kind = evs[i].kind;
    k.allocs += kind == HH_EV_ALLOC || kind == HH_EV_REALLOC;
    k.frees += kind == HH_EV_FREE || kind == HH_EV_REALLOC;
    k.markers += kind == HH_EV_MARKER;
  }
  return k;
}

/* What the tables hold now, and in *growth what the batch may add. */
static uint64_t analysis_bytes(const state *s, batch_kinds k, uint64_t *growth) {
  size_t n = k.allocs;
  uint64_t g = 0, b = (uint64_t)s->live.cap * sizeof(block) +
                      s->sites_cap * (sizeof(acc) + sizeof(uint64_t)) +
                      s->smap_cap * (sizeof(uint64_t) + sizeof(uint32_t)) +
                      s->threads_cap * (sizeof(acc) + sizeof(uint32_t) + sizeof(uint64_t)) +
                      s->slot_by_index_cap * sizeof(uint32_t) + s->markers_cap * sizeof(hh_marker_at) +
                      s->grave_cap * sizeof(hh_live_block);
  size_t c = s->live.cap ? s->live.cap : 4096, live = s->live.n + n;
  while (c >= BIG_TABLE ? (live + 1) * 2 > c : (live + 1) * 3 > c) c *= 2;
  if (n && c > s->live.cap) g += (uint64_t)c * sizeof(block);
  g += grown_bytes(s->nsites + n, s->sites_cap, 1024, sizeof(acc) + sizeof(uint64_t));
  g += grown_bytes((s->nsites + n + 1) * 2, s->smap_cap, 1024, sizeof(uint64_t) + sizeof(uint32_t));
  g += grown_bytes(s->a->nmarkers + k.markers, s->markers_cap, 16, sizeof(hh_marker_at));
  if (s->want_blocks) g += grown_bytes(s->ngrave + k.frees, s->grave_cap, 1024, sizeof(hh_live_block));
  *growth = g;
  return b + g;
}

/* Whether a batch of n events, the reader's tables holding reader_bytes,
 * may be applied; if not, the reader's status says why. A batch that
 * grows no table of the analysis's is applied (a reader that reaches the
 * limit says so itself). */
static bool within_limit(state *s, const hh_event *evs, size_t n, uint64_t reader_bytes) {
  uint64_t limit = hh_reader_memory_limit(s->r);
  if (limit == UINT64_MAX) return true;
  batch_kinds k = count_kinds(evs, n);
  /* (a reader past the limit has stopped at it, and says so: what it
   * handed out before is still applied, within the limit of its own) */
  if (reader_bytes > limit) reader_bytes = 0;
  uint64_t growth, bytes = analysis_bytes(s, k, &growth);
  if (growth == 0 || reader_bytes + bytes <= limit) return true;
  s->stopped = true;
  s->stop_reader_bytes = reader_bytes;
  s->stop_bytes = bytes;
  return false;
}

/* The reader's status once the analysis stopped at the limit (the events
 * of the batches before all applied). */
static void say_stopped(state *s) {
  char lim[32], rb[32], ab[32], msg[320];
  hh_reader_format_bytes(lim, sizeof lim, hh_reader_memory_limit(s->r));
  hh_reader_format_bytes(rb, sizeof rb, s->stop_reader_bytes);
  hh_reader_format_bytes(ab, sizeof ab, s->stop_bytes);
  snprintf(
      msg, sizeof msg,
      "analysis stopped after %" PRIu64 " event%s (%" PRIu64
      " block%s live): the reader's tables (%s) and the analysis's (%s, with the next events) would take "
      "more than %s, the memory limit (HEAPHOOK_MEMORY_LIMIT raises it)",
      s->a->events, s->a->events == 1 ? "" : "s", s->live_blocks, s->live_blocks == 1 ? "" : "s", rb, ab,
      lim);
  hh_reader_stop(s->r, msg);
}

/* Applies a batch of merged events, runs of one time in another order
 * where the heap says so (trace/tick_order.h); an empty last batch at the
 * end applies what waited for a batch that did not come. */
static void consume_batch(state *s, pass_state *p, hh_event *evs, size_t n, bool last) {
  const hh_event *span;
  size_t len;
  hh_ticks_batch(&s->ticks, evs, n, last);
  while ((span = hh_ticks_span(&s->ticks, &len)) != NULL) consume(s, p, span, len);
}

hh_analysis *hh_analyze(hh_reader *r, const hh_analyze_options *opt) {
  static const hh_analyze_options defaults = {0};
  if (!opt) opt = &defaults;
  hh_analysis *a = xcalloc(1, sizeof *a);
  state s = {0};
  s.r = r;
  s.a = a;
  s.sampled = (hh_reader_header(r)->flags & HH_TRACE_FLAG_SAMPLED) != 0;
  s.want_blocks = opt->peak_blocks;
  s.parked.window = hh_handoff_window(r);
  s.owed.window = s.parked.window;
  hh_ticks_init(&s.ticks, s.sampled, live_at, &s);
  s.tl_cap = opt->max_points ? opt->max_points : 2000;
  if (s.tl_cap < 2) s.tl_cap = 2;
  s.tl = xcalloc(s.tl_cap, sizeof *s.tl);
  s.sites_cap = 1024;
  s.nsites = 1;
  s.sites = xcalloc(s.sites_cap, sizeof *s.sites);
  s.site_stack = xcalloc(s.sites_cap, sizeof *s.site_stack);
  s.rss_limit = 2 * s.tl_cap;
  a->reader = r;
  a->sampled = s.sampled;
  a->sample_bytes = hh_reader_header(r)->sample_bytes;
  a->temporary_known = !s.sampled || a->sample_bytes <= 1;
  pass_state pass = {0};

  progress prog = {.on = opt->progress && isatty(2),
                   .start = now_s(),
                   .after = opt->progress_after > 0 ? opt->progress_after : 1.0};
  feed f = {0};
  f.m = hh_merge_new(r, 0);
  f.r = r;
  pthread_mutex_init(&f.mu, NULL);
  pthread_cond_init(&f.not_full, NULL);
  pthread_cond_init(&f.not_empty, NULL);
  for (int i = 0; i < FEED_BATCHES; i++) f.buf[i] = xcalloc(FEED_BATCH, sizeof *f.buf[i]);
  pthread_t reader_thread;
  bool threaded = pthread_create(&reader_thread, NULL, feed_main, &f) == 0;
  for (;;) {
    size_t slot, len;
    if (threaded) {
      pthread_mutex_lock(&f.mu);
      while (f.count == 0 && !f.done) pthread_cond_wait(&f.not_empty, &f.mu);
      if (f.count == 0) {
        pthread_mutex_unlock(&f.mu);
        break;
      }
      slot = f.head;
      len = f.len[slot];
      pthread_mutex_unlock(&f.mu);
    } else { /* no thread: read here */
      slot = 0;
      len = feed_fill(&f, f.buf[0]);
      if (!len) break;
      f.table_bytes[0] = hh_reader_table_bytes(r);
    }
    if (!within_limit(&s, f.buf[slot], len, f.table_bytes[slot])) {
      if (threaded) {
        pthread_mutex_lock(&f.mu);
        f.stop = true;
        pthread_cond_signal(&f.not_full);
        pthread_mutex_unlock(&f.mu);
      }
      break;
    }
    consume_batch(&s, &pass, f.buf[slot], len, false);
    if (prog.on) progress_tick(&prog, __atomic_load_n(&f.offset, __ATOMIC_RELAXED), hh_reader_file_size(r));
    if (threaded) {
      pthread_mutex_lock(&f.mu);
      f.head = (f.head + 1) % FEED_BATCHES;
      f.count--;
      pthread_cond_signal(&f.not_full);
      pthread_mutex_unlock(&f.mu);
    }
  }
  if (threaded) pthread_join(reader_thread, NULL);
  consume_batch(&s, &pass, NULL, 0, true);
  if (s.stopped) say_stopped(&s); /* (before anything the reader found further on) */
  progress_done(&prog);
  expire_parked(&s, UINT64_MAX);
  a->late_events = hh_merge_late(f.m);
  hh_merge_free(f.m);
  for (int i = 0; i < FEED_BATCHES; i++) free(f.buf[i]);
  pthread_mutex_destroy(&f.mu);
  pthread_cond_destroy(&f.not_full);
  pthread_cond_destroy(&f.not_empty);

  a->status = hh_reader_status(r);
  a->status_message = hh_reader_message(r);
  a->duration_ns = pass.end && pass.end_time > pass.last_time ? pass.end_time : pass.last_time;
  a->leaked_bytes = s.heap;
  a->leaked_blocks = s.live_blocks;

  /* sites */
  size_t nsites = 0;
  for (size_t i = 0; i < s.nsites; i++)
    nsites += s.sites[i].allocations || s.sites[i].bytes || s.sites[i].live_blocks;
  a->sites = xcalloc(nsites, sizeof *a->sites);
  for (size_t i = 0; i < s.nsites; i++) {
    const acc *x = &s.sites[i];
    if (!(x->allocations || x->bytes || x->live_blocks)) continue;
    hh_site *o = &a->sites[a->nsites++];
    o->stack = s.site_stack[i];
    o->allocations = x->allocations;
    o->bytes = x->bytes;
    o->temporary = x->temporary;
    o->peak_bytes = peak_of(&s, x, false);
    o->peak_blocks = peak_of(&s, x, true);
    o->leaked_bytes = x->live_bytes;
    o->leaked_blocks = x->live_blocks;
  }

  /* threads, in order of first appearance */
  a->threads = xcalloc(s.nthreads, sizeof *a->threads);
  a->nthreads = s.nthreads;
  for (size_t i = 0; i < s.nthreads; i++) {
    const acc *x = &s.threads[i];
    hh_thread_stats *o = &a->threads[i];
    const hh_trace_thread *t = hh_reader_thread(r, s.thread_index[i]);
    o->index = s.thread_index[i];
    o->tid = t ? t->tid : 0;
    o->name = t ? t->name : "";
    o->allocations = x->allocations;
    o->frees = x->frees;
    o->bytes = x->bytes;
    o->peak_bytes = peak_of(&s, x, false);
    o->temporary = x->temporary;
    o->leaked_bytes = x->live_bytes;
    o->leaked_blocks = x->live_blocks;
  }

  /* timeline: extend to the end, then the points, and the heap at the end
   * when the last bucket's maximum is not it (a block freed in the last
   * bucket: the chart and the HTML page drew that maximum to the end) */
  if (a->duration_ns) tl_record(&s, a->duration_ns, s.heap, s.heap);
  bool end_point = s.tl_n && s.tl[s.tl_n - 1] != s.heap;
  a->npoints = s.tl_n + end_point;
  a->timeline = xcalloc(a->npoints, sizeof *a->timeline);
  for (size_t i = 0; i < s.tl_n; i++) a->timeline[i] = (hh_point){(uint64_t)i << s.tl_shift, s.tl[i]};
  if (end_point) a->timeline[s.tl_n] = (hh_point){a->duration_ns, s.heap};
  free(s.tl);

  /* blocks live at the peak */
  if (s.want_blocks) {
    size_t nb = s.ngrave;
    for (size_t i = 0; i < s.live.cap; i++)
      if (s.live.slots[i].addr && (s.at_peak || ORDINAL_OF(s.live.slots[i].ordinal) <= s.peak_ordinal)) nb++;
    a->peak_block_list = xcalloc(nb, sizeof *a->peak_block_list);
    if (s.ngrave) memcpy(a->peak_block_list, s.grave, s.ngrave * sizeof *s.grave);
    a->npeak_blocks = s.ngrave;
    for (size_t i = 0; i < s.live.cap; i++)
      if (s.live.slots[i].addr && (s.at_peak || ORDINAL_OF(s.live.slots[i].ordinal) <= s.peak_ordinal))
        a->peak_block_list[a->npeak_blocks++] = (hh_live_block){s.live.slots[i].addr, s.live.slots[i].bytes};
    qsort(a->peak_block_list, a->npeak_blocks, sizeof *a->peak_block_list, cmp_block);
  }

  state_free(&s);
  return a;
}

void hh_analysis_free(hh_analysis *a) {
  if (!a) return;
  free(a->sites);
  free(a->threads);
  free(a->markers);
  free(a->timeline);
  free(a->rss);
  free(a->peak_block_list);
  free(a);
}

/* ---- ranking -------------------------------------------------------------- */

static int cmp_site(const void *x, const void *y, void *arg) {
  hh_cost cost = *(const hh_cost *)arg;
  const hh_site *a = *(const hh_site *const *)x, *b = *(const hh_site *const *)y;
  uint64_t ca = hh_site_cost(a, cost), cb = hh_site_cost(b, cost);
  if (ca != cb) return ca > cb ? -1 : 1;
  return a->stack < b->stack ? -1 : a->stack > b->stack;
}

size_t hh_sites_by(const hh_analysis *a, hh_cost cost, hh_site ***out) {
  hh_site **v = xcalloc(a->nsites, sizeof *v);
  size_t n = 0;
  for (size_t i = 0; i < a->nsites; i++)
    if (hh_site_cost(&a->sites[i], cost)) v[n++] = &a->sites[i];
  qsort_r(v, n, sizeof *v, cmp_site, &cost);
  *out = v;
  return n;
}
