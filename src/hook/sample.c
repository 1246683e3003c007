/* The hook's sampler (see sample.h). */
#include "sample.h"

#include "base/backoff.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define IE __attribute__((tls_model("initial-exec")))

__thread uint64_t hh__sample_left IE;
_Atomic uintptr_t hh__sample_filter;

static uint64_t period;
static __thread bool t_forking IE; /* (the fork handlers', below) */
static __thread uint64_t rng IE;   /* xorshift state; 0: not seeded */
static uint64_t seed_base;
static _Atomic uint64_t seed_next;

/* ---- the countdown ---------------------------------------------------------- */

static uint64_t splitmix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

static uint64_t rng_next(void) {
  uint64_t x = rng;
  if (x == 0) x = splitmix(seed_base + atomic_fetch_add(&seed_next, 1) + (uintptr_t)&rng) | 1;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  rng = x;
  return x * 0x2545F4914F6CDD1Dull;
}

/* Bytes until the next sample: exponential with mean period. */
static uint64_t draw(void) {
  double u = ((double)(rng_next() >> 11) + 1.0) * (1.0 / 9007199254740992.0); /* (0, 1] */
  double v = -log(u) * (double)period;
  return v >= 9e18 ? (uint64_t)9e18 : (uint64_t)v + 1;
}

static void reseed(void) {
  struct timespec t = {0, 0};
  clock_gettime(CLOCK_MONOTONIC, &t);
  seed_base = splitmix((uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec) ^ ((uint64_t)getpid() << 32);
}

static void filter_init(void);

void hh__sampler_start(uint64_t bytes) {
  period = bytes;
  reseed();
  filter_init();
}

uint64_t hh__sample_take(size_t size) {
  if (t_forking) return 0;
  int saved = errno;
  if (hh__sample_left == 0) hh__sample_left = draw(); /* this thread's first */
  uint64_t weight = 0;
  if (size < hh__sample_left) {
    hh__sample_left -= size;
  } else {
    hh__sample_left = draw();
    /* P(sampled) = 1 - exp(-size / period); the sample stands for size / P. */
    double p = -expm1(-(double)size / (double)period);
    double w = p > 0 ? (double)size / p : (double)period;
    weight = w >= 1.8e19 ? UINT64_MAX : (uint64_t)(w + 0.5);
    if (weight == 0) weight = 1;
  }
  errno = saved;
  return weight;
}

/* ---- the live sampled blocks ---------------------------------------------------
 * Samples are rare (one per period bytes), so an open-addressing table of
 * addresses serves, written under a lock (at a sampled allocation or free)
 * and read without one, only for frees that pass the filter. Replaced
 * tables are never unmapped (a reader may still be in one). The same
 * address may be in the table twice for a moment (freed while the hook
 * did not record, then sampled again): each forget removes one.
 *
 * What a note or a forget touches besides the table slot and the filter's
 * count and bit is in one cache line: between two samples the program has
 * usually evicted it, and each line is a miss. The lock is a spin lock
 * (held for a few dozen instructions, by samples only). */
#define TOMB ((uintptr_t)1)
#define FILTER_FIRST 12 /* log2 of the first filter's bits */
#define FILTER_LAST 20

static struct {
  atomic_int lock;
  unsigned shift;             /* the filter's: 64 - log2 of its bits */
  _Atomic(uintptr_t *) table; /* [0]: capacity (a power of two), then slots */
  size_t used;                /* live + tombstones */
  atomic_size_t live;
  _Atomic uint64_t *map; /* the filter's bitmap ... */
  uint32_t *count;       /* ... and live samples per bit */
} st __attribute__((aligned(64)));

/* The first filter (static; larger ones are mapped). */
static _Atomic uint64_t first_map[(1u << FILTER_FIRST) / 64] __attribute__((aligned(64)));
static uint32_t first_count[1u << FILTER_FIRST];

/* Whether this thread holds the lock: a fork from a signal handler that
 * interrupted it there leaves the lock alone (at_prepare). */
static __thread bool t_holds IE;

static void lock(void) {
  unsigned turns = 0;
  t_holds = true; /* (before: a handler that comes between must not wait) */
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  while (atomic_exchange_explicit(&st.lock, 1, memory_order_acquire) != 0) hh__backoff(&turns);
}
static void unlock(void) {
  atomic_store_explicit(&st.lock, 0, memory_order_release);
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  t_holds = false;
}

static void filter_init(void) {
  if (st.map == NULL) {
    st.map = first_map;
    st.count = first_count;
    st.shift = 64 - FILTER_FIRST;
  }
  atomic_store_explicit(&hh__fast.sample_filter, (uintptr_t)st.map | st.shift, memory_order_release);
}

static void *map_zeroed(size_t bytes) {
  int saved = errno;
  void *m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  errno = saved;
  return m == MAP_FAILED ? NULL : m;
}

static void filter_add(_Atomic uint64_t *map, uint32_t *count, unsigned shift, uintptr_t a) {
  uint64_t h = hh__sample_hash((const void *)a, shift);
  if (count[h]++ == 0) atomic_fetch_or_explicit(&map[h >> 6], 1ull << (h & 63), memory_order_relaxed);
}

/* With the lock: a filter four times larger once the live samples exceed
 * 1/16 of its bits, built from the table and then published. */
static void filter_grow(const uintptr_t *t) {
  unsigned bits = 64 - st.shift;
  if (bits >= FILTER_LAST || atomic_load(&st.live) * 16 <= (1ull << bits)) return;
  bits += 2;
  size_t map_bytes = (1ull << bits) / 8;
  char *m = map_zeroed(map_bytes + ((size_t)1 << bits) * sizeof(uint32_t));
  if (m == NULL) return; /* the smaller filter still works, with more false hits */
  _Atomic uint64_t *map = (_Atomic uint64_t *)m;
  uint32_t *count = (uint32_t *)(m + map_bytes);
  for (size_t i = 0; i < t[0]; i++) {
    if (t[1 + i] > TOMB) filter_add(map, count, 64 - bits, t[1 + i]);
  }
  st.map = map;
  st.count = count;
  st.shift = 64 - bits;
  atomic_store_explicit(&hh__fast.sample_filter, (uintptr_t)map | st.shift, memory_order_release);
}

static inline size_t slot_hash(uintptr_t a) {
  return (size_t)(((uint64_t)a >> 4) * 0x9E3779B97F4A7C15ull >> 20);
}

static bool table_has(uintptr_t a) {
  if (atomic_load_explicit(&st.live, memory_order_relaxed) == 0) return false;
  uintptr_t *t = atomic_load_explicit(&st.table, memory_order_acquire);
  size_t mask = t[0] - 1;
  for (size_t i = slot_hash(a) & mask;; i = (i + 1) & mask) {
    uintptr_t v = __atomic_load_n(&t[1 + i], __ATOMIC_RELAXED);
    if (v == a) return true;
    if (v == 0) return false;
  }
}

/* With the lock: a table with room for one more, or NULL (no memory). */
static uintptr_t *table_room(void) {
  uintptr_t *t = atomic_load_explicit(&st.table, memory_order_relaxed);
  size_t cap = t ? t[0] : 0;
  if (t != NULL && (st.used + 1) * 2 <= cap) return t;
  size_t n_live = atomic_load(&st.live), ncap = 1024;
  while ((n_live + 1) * 4 > ncap) ncap *= 2;
  uintptr_t *n = map_zeroed((ncap + 1) * sizeof(uintptr_t));
  if (n == NULL) return NULL;
  n[0] = ncap;
  for (size_t i = 0; i < cap; i++) {
    uintptr_t v = t[1 + i];
    if (v <= TOMB) continue;
    size_t j = slot_hash(v) & (ncap - 1);
    while (n[1 + j] != 0) j = (j + 1) & (ncap - 1);
    n[1 + j] = v;
  }
  st.used = n_live;
  atomic_store_explicit(&st.table, n, memory_order_release);
  return n;
}

void hh__sample_note(const void *ptr) {
  if (t_forking) return;
  uintptr_t a = (uintptr_t)ptr;
  lock();
  uintptr_t *t = table_room();
  if (t != NULL) {
    size_t mask = t[0] - 1, i = slot_hash(a) & mask;
    while (t[1 + i] > TOMB) i = (i + 1) & mask;
    if (t[1 + i] == 0) st.used++;
    __atomic_store_n(&t[1 + i], a, __ATOMIC_RELEASE);
    atomic_fetch_add_explicit(&st.live, 1, memory_order_relaxed);
    filter_add(st.map, st.count, st.shift, a);
    filter_grow(t);
  }
  unlock();
}

bool hh__sample_forget(const void *ptr) {
  uintptr_t a = (uintptr_t)ptr;
  if (t_forking || !table_has(a)) return false;
  bool found = false;
  lock();
  uintptr_t *t = atomic_load_explicit(&st.table, memory_order_relaxed);
  size_t mask = t[0] - 1;
  for (size_t i = slot_hash(a) & mask; t[1 + i] != 0; i = (i + 1) & mask) {
    if (t[1 + i] == a) {
      __atomic_store_n(&t[1 + i], TOMB, __ATOMIC_RELEASE);
      atomic_fetch_sub_explicit(&st.live, 1, memory_order_relaxed);
      uint64_t h = hh__sample_hash(ptr, st.shift);
      if (--st.count[h] == 0)
        atomic_fetch_and_explicit(&st.map[h >> 6], ~(1ull << (h & 63)), memory_order_relaxed);
      found = true;
      break;
    }
  }
  unlock();
  return found;
}

/* ---- fork ----------------------------------------------------------------------
 * The set is kept in the child (its blocks are the child's too). The
 * forking thread draws a fresh countdown from a fresh seed, so that parent
 * and child do not sample the same allocations. */
/* Set on the forking thread between the handlers: the prepare handlers of
 * other libraries, which run after this one when they were registered
 * before it, may allocate and free. Those calls are not sampled, and a
 * free there does not look at the set (it waited for the lock this thread
 * held: the fork hung, trace.atfork_malloc). */
/* (a fork from a signal handler that interrupted this thread while it held
 * the lock: waiting for it hung the fork; the interrupted code, which goes
 * on in both processes, gives it back) */
static __thread bool t_fork_untouched IE;

static void at_prepare(void) {
  if (t_holds) {
    t_fork_untouched = true;
    return;
  }
  lock();
  t_forking = true;
}
static void at_parent(void) {
  if (t_fork_untouched) {
    t_fork_untouched = false;
    return;
  }
  t_forking = false;
  unlock();
}
static void at_child(void) {
  if (t_fork_untouched) {
    t_fork_untouched = false;
    return;
  }
  t_forking = false;
  unlock();
  if (period == 0) return;
  reseed();
  rng = 0;
  hh__sample_left = 0;
}

void hh__sampler_atfork(void) {
  static bool once;
  if (once) return;
  once = true;
  pthread_atfork(at_prepare, at_parent, at_child);
}
