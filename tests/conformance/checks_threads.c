/* Threads: blocks cross threads (allocated in one, freed or resized in
 * another), and a 4-thread random mix over a shared slot array, so most frees
 * and reallocs hit blocks another thread allocated. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conformance.h"

/* ---- cross-thread hand-over -------------------------------------------- */

enum { HANDOVER_N = 256 };

struct handover {
  struct hh_ctx *c;
  int stage; /* what the thread does, see handover_main */
  void *blocks[HANDOVER_N];
  size_t sizes[HANDOVER_N];
};

static size_t handover_size(int i) {
  /* Small, medium, large (mmapped in glibc), and aligned blocks. */
  static const size_t base[] = {1, 24, 100, 1000, 5000, 70000, 300000, 2 << 20};
  return base[i % 8] + (size_t)i;
}

static void *handover_main(void *arg) {
  struct handover *h = arg;
  struct hh_ctx *c = h->c;
  const struct hh_api *a = c->api;
  for (int i = 0; i < HANDOVER_N; i++) {
    size_t n = h->sizes[i];
    switch (h->stage) {
      case 0: /* allocate: every fourth block over-aligned */
        h->sizes[i] = n = handover_size(i);
        h->blocks[i] = (i % 4 == 3) ? a->aligned_alloc((size_t)64 << (i % 8), n) : a->malloc(n);
        if (HH_EXPECT(c, h->blocks[i] != NULL, "alloc of %zu gave NULL", n))
          hh_fill(h->blocks[i], n, (uint64_t)i);
        break;
      case 1: /* verify and resize in another thread */
        if (!h->blocks[i]) break;
        {
          size_t bad = hh_verify(h->blocks[i], n, (uint64_t)i);
          HH_EXPECT(c, bad == SIZE_MAX,
                    "block %d from thread A changed at %zu "
                    "when seen by thread B",
                    i, bad);
          size_t m = (i % 2) ? n * 2 + 17 : n / 2 + 1;
          void *q = a->realloc(h->blocks[i], m);
          if (!HH_EXPECT(c, q != NULL,
                         "realloc in thread B of %zu -> %zu gave "
                         "NULL",
                         n, m))
            break;
          size_t keep = n < m ? n : m;
          bad = hh_verify(q, keep, (uint64_t)i);
          HH_EXPECT(c, bad == SIZE_MAX,
                    "realloc in thread B of a thread A "
                    "block %zu -> %zu lost byte %zu",
                    n, m, bad);
          hh_fill(q, m, (uint64_t)i + 1000);
          h->blocks[i] = q;
          h->sizes[i] = m;
        }
        break;
      default: /* verify and free in a third thread */
        if (!h->blocks[i]) break;
        {
          size_t bad = hh_verify(h->blocks[i], n, (uint64_t)i + 1000);
          HH_EXPECT(c, bad == SIZE_MAX,
                    "block %d changed at %zu when seen by "
                    "thread C",
                    i, bad);
          a->free(h->blocks[i]);
          h->blocks[i] = NULL;
        }
        break;
    }
  }
  return NULL;
}

static void run_stage(struct hh_ctx *c, struct handover *h, int stage) {
  pthread_t t;
  h->stage = stage;
  int rc = pthread_create(&t, NULL, handover_main, h);
  if (!HH_EXPECT(c, rc == 0, "pthread_create: %s", strerror(rc))) {
    handover_main(h); /* still release the blocks */
    return;
  }
  pthread_join(t, NULL);
}

/* Allocated in thread A, realloc'ed in thread B, freed in thread C; and a
 * plain pair: allocated in A, freed in B. */
static void check_cross_thread(struct hh_ctx *c) {
  static struct handover h;
  memset(&h, 0, sizeof h);
  h.c = c;
  for (int round = 0; round < 4; round++) {
    run_stage(c, &h, 0);
    run_stage(c, &h, 1);
    run_stage(c, &h, 2);
  }
  /* Allocated in A, freed directly in B (no realloc in between). */
  run_stage(c, &h, 0);
  for (int i = 0; i < HANDOVER_N; i++) {
    /* Stage 2 expects tag i + 1000: refill here, in the main thread. */
    if (h.blocks[i]) hh_fill(h.blocks[i], h.sizes[i], (uint64_t)i + 1000);
  }
  run_stage(c, &h, 2);
}

/* ---- stress ------------------------------------------------------------ */

enum { STRESS_THREADS = 4, STRESS_SLOTS = 2048 };

struct stress {
  struct hh_ctx *c;
  struct hh_slot *slots;
  size_t ops;
  uint64_t next_tag; /* shared counter, __atomic */
};

struct stress_arg {
  struct stress *st;
  unsigned id;
};

static void *stress_main(void *arg) {
  struct stress_arg *sa = arg;
  struct stress *st = sa->st;
  struct hh_rng r;
  hh_rng_init(&r, st->c->seed, 100 + sa->id);
  for (size_t i = 0; i < st->ops; i++) {
    struct hh_slot *s = &st->slots[hh_rng_below(&r, STRESS_SLOTS)];
    /* Claim the slot; if another thread holds it, pick another. */
    if (__atomic_exchange_n(&s->busy, 1, __ATOMIC_ACQUIRE) != 0) continue;
    uint64_t tag = __atomic_fetch_add(&st->next_tag, 1, __ATOMIC_RELAXED);
    hh_slot_op(st->c, &r, s, tag);
    __atomic_store_n(&s->busy, 0, __ATOMIC_RELEASE);
    if ((i & 4095) == 0 && hh_failed(st->c) > 10) break;
  }
  return NULL;
}

/* 4 threads x 100k random operations (malloc, calloc, realloc, reallocarray,
 * free, aligned_alloc, memalign, posix_memalign, valloc, pvalloc) over one
 * shared array of 2048 slots: each block carries the pattern of its id and is
 * verified before every free and realloc, whichever thread does it. */
static void check_stress(struct hh_ctx *c) {
  static struct hh_slot slots[STRESS_SLOTS];
  memset(slots, 0, sizeof slots);
  struct stress st = {c, slots, hh_iterations(c, 100000, 25000), 1};
  struct stress_arg args[STRESS_THREADS];
  pthread_t t[STRESS_THREADS];
  int started[STRESS_THREADS] = {0};
  for (unsigned i = 0; i < STRESS_THREADS; i++) {
    args[i].st = &st;
    args[i].id = i;
    int rc = pthread_create(&t[i], NULL, stress_main, &args[i]);
    started[i] = HH_EXPECT(c, rc == 0, "pthread_create: %s", strerror(rc));
  }
  for (unsigned i = 0; i < STRESS_THREADS; i++)
    if (started[i]) pthread_join(t[i], NULL);
  for (int i = 0; i < STRESS_SLOTS; i++) hh_slot_clear(c, &slots[i]);
}

const struct hh_check hh_checks_threads[] = {
    {"threads.cross_thread_free_realloc", check_cross_thread},
    {"threads.stress_shared_slots", check_stress},
    {NULL, NULL},
};
