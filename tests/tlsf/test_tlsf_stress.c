/* Stress test of the TLSF allocator glue: 4 threads run 10 million mixed
 * operations in total (alloc, free, realloc, aligned alloc, zeroed alloc),
 * hand blocks to each other through a lock-free exchange array so that
 * blocks are freed by other threads than their allocator, and check every
 * block's content pattern before it is touched again. The pools start small
 * so that growth happens under contention. Ends with the invariant walker.
 * argv[1], when given, replaces the total operation count; argv[2] "cache"
 * turns the per-thread cache on (off otherwise: a strictly global heap). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
// cmocka needs the headers above first
#include <cmocka.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "alloc/tlsf/tlsf_allocator.h"

#define THREADS 4
#define SLOTS 256
#define EXCHANGE 1024

static const hh_allocator *A;
static size_t total_ops = 10000000;
static void *exchange_slots[EXCHANGE];
static size_t failures; /* atomic */
static size_t growth_seen;
static bool with_cache; /* argv[2] "cache": the per-thread cache on */

/* A block carries its own description so any thread can verify it:
 * word 0 = requested length, word 1 = tag, then tag-derived bytes up to
 * 64, and the last 8 bytes = tag ^ length. Lengths are >= 24. */
static void stamp(void *p, size_t len, uint64_t tag) {
  uint64_t *w = p;
  w[0] = len;
  w[1] = tag;
  unsigned char *c = p;
  size_t end = len < 64 ? len - 8 : 56;
  for (size_t i = 16; i < end; i++) c[i] = (unsigned char)(tag + i);
  uint64_t last = tag ^ len;
  memcpy(c + len - 8, &last, 8);
}

/* Length of a stamped block, or 0 when the stamp is broken. */
static size_t verify(const void *p) {
  const uint64_t *w = p;
  size_t len = w[0];
  uint64_t tag = w[1];
  if (len < 24 || len > ((size_t)1 << 21)) return 0;
  const unsigned char *c = p;
  size_t end = len < 64 ? len - 8 : 56;
  for (size_t i = 16; i < end; i++) {
    if (c[i] != (unsigned char)(tag + i)) return 0;
  }
  uint64_t last;
  memcpy(&last, c + len - 8, 8);
  return last == (tag ^ len) ? len : 0;
}

static void note_failure(void) { __atomic_fetch_add(&failures, 1, __ATOMIC_RELAXED); }

static uint64_t rng_next(uint64_t *s) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}

/* 90% 24-528 bytes, 9.5% up to 33 KiB, 0.5% 64 KiB-1 MiB. */
static size_t pick_size(uint64_t r) {
  unsigned k = (unsigned)(r % 1000);
  r >>= 10;
  if (k < 900) return 24 + (size_t)(r % 505);
  if (k < 995) return 528 + (size_t)(r % (33 * 1024 - 528));
  return ((size_t)64 << 10) + (size_t)(r % (960u << 10));
}

static void *new_block(uint64_t r, size_t len) {
  unsigned kind = (unsigned)((r >> 50) % 10);
  if (kind == 0) {
    size_t align = (size_t)32 << ((r >> 40) % 8); /* 32 .. 4096 */
    void *p = A->alloc(len, align);
    if (p != NULL && (uintptr_t)p % align != 0) note_failure();
    return p;
  }
  if (kind == 1) {
    unsigned char *p = A->alloc_zeroed(len);
    if (p != NULL && (p[0] | p[len / 2] | p[len - 1]) != 0) note_failure();
    return p;
  }
  return A->alloc(len, 1);
}

static void *resize(void *p, uint64_t r, uint64_t tag) {
  size_t old = verify(p);
  size_t len = pick_size(r);
  void *q = A->realloc(p, len);
  if (q == NULL) return p;
  size_t keep = old < len ? old : len;
  const uint64_t *w = q;
  if (w[0] != old) note_failure(); /* prefix kept */
  if (keep >= 64 && ((unsigned char *)q)[40] != (unsigned char)(w[1] + 40)) note_failure();
  stamp(q, len, tag);
  return q;
}

/* One thread's share of the operations on its own slots. */
static void *worker(void *arg) {
  uint64_t rng = 0x2545F4914F6CDD1Dull * ((uintptr_t)arg + 1);
  void *slot[SLOTS] = {0};
  size_t ops = total_ops / THREADS;
  for (size_t op = 0; op < ops; op++) {
    uint64_t r = rng_next(&rng);
    unsigned i = (unsigned)(r % SLOTS);
    r >>= 8;
    uint64_t tag = rng_next(&rng);
    if (slot[i] == NULL) {
      size_t len = pick_size(r);
      slot[i] = new_block(rng_next(&rng), len);
      if (slot[i] != NULL) stamp(slot[i], len, tag);
      continue;
    }
    if (verify(slot[i]) == 0 || !A->owns(slot[i])) note_failure();
    unsigned what = (unsigned)(r % 4);
    if (what <= 1) {
      A->dealloc(slot[i]);
      slot[i] = NULL;
    } else if (what == 2) {
      slot[i] = resize(slot[i], rng_next(&rng), tag);
    } else { /* trade with whoever comes next: cross-thread frees */
      unsigned e = (unsigned)(tag % EXCHANGE);
      slot[i] = __atomic_exchange_n(&exchange_slots[e], slot[i], __ATOMIC_ACQ_REL);
      if (slot[i] != NULL && verify(slot[i]) == 0) note_failure();
    }
  }
  for (unsigned i = 0; i < SLOTS; i++) {
    if (slot[i] != NULL) A->dealloc(slot[i]);
  }
  return NULL;
}

static void test_four_threads_mixed_operations(void **state) {
  (void)state;
  hh__tlsf_allocator_configure((size_t)16 << 20, (size_t)4 << 20);
  hh__tlsf_allocator_set_cache(with_cache);
  assert_int_equal(A->init(), 0);
  pthread_t th[THREADS];
  for (uintptr_t t = 0; t < THREADS; t++) {
    assert_int_equal(pthread_create(&th[t], NULL, worker, (void *)t), 0);
  }
  for (unsigned t = 0; t < THREADS; t++) pthread_join(th[t], NULL);
  for (unsigned e = 0; e < EXCHANGE; e++) {
    if (exchange_slots[e] == NULL) continue;
    assert_true(verify(exchange_slots[e]) != 0);
    A->dealloc(exchange_slots[e]);
  }
  assert_int_equal(failures, 0);
  assert_int_equal(hh__tlsf_allocator_check(), 0);
  growth_seen = hh__tlsf_allocator_growths();
  print_message("%zu operations, %zu growths\n", total_ops, growth_seen);
  A->report(1);
  hh__tlsf_allocator_reset();
}

int main(int argc, char **argv) {
  A = hh__tlsf_allocator_get();
  if (argc > 1) total_ops = strtoull(argv[1], NULL, 10);
  with_cache = argc > 2 && strcmp(argv[2], "cache") == 0;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_four_threads_mixed_operations),
  };
  return cmocka_run_group_tests_name("tlsf_stress", tests, NULL, NULL);
}
