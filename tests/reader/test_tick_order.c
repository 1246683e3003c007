/* The run reordering (src/trace/tick_order.h) on its own: events handed
 * over in batches of every size from 1 up, so that each run is cut by a
 * batch's end somewhere, and applied to a set of live addresses kept here
 * (the caller's oracle). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "trace/tick_order.h"

typedef struct heap {
  uint64_t live[256];
  size_t n;
} heap;

static bool heap_has(void *ctx, uint64_t addr) {
  heap *h = ctx;
  for (size_t i = 0; i < h->n; i++)
    if (h->live[i] == addr) return true;
  return false;
}

static void heap_set(heap *h, uint64_t addr, bool live) {
  for (size_t i = 0; i < h->n; i++)
    if (h->live[i] == addr) {
      if (!live) h->live[i] = h->live[--h->n];
      return;
    }
  if (live) h->live[h->n++] = addr;
}

static void heap_apply(heap *h, const hh_event *e, bool sampled) {
  if (e->kind == HH_EV_ALLOC) heap_set(h, e->addr, true);
  if (e->kind == HH_EV_FREE) heap_set(h, e->addr, false);
  if (e->kind == HH_EV_REALLOC) {
    heap_set(h, e->old_addr, false);
    if (!sampled || e->weight) heap_set(h, e->addr, true); /* sampled, weight 0: not followed */
  }
}

static hh_event ev(hh_ev_kind kind, uint32_t thread, uint64_t time, uint64_t addr, uint64_t old) {
  return (hh_event){.kind = kind, .thread = thread, .time = time, .addr = addr, .old_addr = old, .weight = 8};
}

/* Runs the events in batches of `batch`; the order applied, as indexes
 * into evs (by a tag kept in `size`), into order[]. */
static size_t replay(const hh_event *evs, size_t n, size_t batch, bool sampled, size_t *order,
                     uint64_t *reordered) {
  hh_event *copy = malloc(n * sizeof *copy);
  memcpy(copy, evs, n * sizeof *copy);
  for (size_t i = 0; i < n; i++) copy[i].size = i;
  heap h = {.n = 0};
  hh_ticks t;
  hh_ticks_init(&t, sampled, heap_has, &h);
  size_t out = 0;
  for (size_t at = 0;; at += batch) {
    size_t len = at < n ? (n - at < batch ? n - at : batch) : 0;
    hh_ticks_batch(&t, copy + at, len, len == 0);
    const hh_event *span;
    size_t k;
    while ((span = hh_ticks_span(&t, &k)) != NULL)
      for (size_t i = 0; i < k; i++) {
        assert_true(out < n);
        order[out++] = span[i].size;
        heap_apply(&h, &span[i], sampled);
      }
    if (len == 0) break;
  }
  *reordered = t.reordered;
  hh_ticks_free(&t);
  free(copy);
  return out;
}

/* A producer (thread 1) and a consumer (thread 2) in one tick at 100: the
 * producer allocates B, then gets A back; the consumer allocates and frees
 * C, then frees A (the producer's block from tick 50). The merge's order
 * (thread 1's allocations first) has A allocated while it is live; the
 * heap's: the consumer's events, then A again. At 300 the threads touch no
 * common address: the merge's order stays, though thread 1's free of an
 * unknown block is not allowed by the heap. At 400 a realloc by thread 2
 * moves D to E, which thread 1 frees in the same tick. */
static void producer_consumer(void **state) {
  (void)state;
  const hh_event evs[] = {
      ev(HH_EV_ALLOC, 1, 50, 0xa0, 0),  ev(HH_EV_ALLOC, 2, 60, 0xd0, 0),       /* 0 1 */
      ev(HH_EV_ALLOC, 1, 100, 0xb0, 0), ev(HH_EV_ALLOC, 1, 100, 0xa0, 0),      /* 2 3 */
      ev(HH_EV_ALLOC, 2, 100, 0xc0, 0), ev(HH_EV_FREE, 2, 100, 0xc0, 0),       /* 4 5 */
      ev(HH_EV_FREE, 2, 100, 0xa0, 0),  ev(HH_EV_FREE, 1, 200, 0xa0, 0),       /* 6 7 */
      ev(HH_EV_FREE, 1, 300, 0x999, 0), ev(HH_EV_ALLOC, 2, 300, 0xf0, 0),      /* 8 9 */
      ev(HH_EV_FREE, 1, 400, 0xe0, 0),  ev(HH_EV_REALLOC, 2, 400, 0xe0, 0xd0), /* 10 11 */
      ev(HH_EV_FREE, 2, 500, 0xb0, 0),                                         /* 12 */
  };
  const size_t want[] = {0, 1, 2, 4, 5, 6, 3, 7, 8, 9, 11, 10, 12};
  enum { N = sizeof evs / sizeof *evs };
  for (size_t batch = 1; batch <= N + 1; batch++) {
    size_t order[N];
    uint64_t reordered;
    size_t got = replay(evs, N, batch, false, order, &reordered);
    assert_int_equal(got, N);
    for (size_t i = 0; i < N; i++)
      if (order[i] != want[i])
        fail_msg("batches of %zu: step %zu applied event %zu, %zu expected", batch, i, order[i], want[i]);
    assert_int_equal(reordered, 2);
  }
}

static void expect_order(const hh_event *evs, size_t n, bool sampled, const size_t *want) {
  for (size_t batch = 1; batch <= n + 1; batch++) {
    size_t order[16];
    uint64_t reordered;
    assert_int_equal(replay(evs, n, batch, sampled, order, &reordered), n);
    for (size_t i = 0; i < n; i++)
      if (order[i] != want[i])
        fail_msg("batches of %zu: step %zu applied event %zu, %zu expected", batch, i, order[i], want[i]);
    assert_int_equal(reordered, 1);
  }
}

/* In one tick the consumer (thread 2) frees X, which the producer (thread
 * 1) allocated in that tick after a temporary block at X of its own: no
 * block lived at X before. The first allowed event at each step gave the
 * producer's temporary allocation, then the consumer's free (the merge's
 * first), freeing the temporary block; the producer's own free of it was
 * then unknown. The search backs off that choice: the producer's three
 * events, then the consumer's free. */
static void search_not_greedy(void **state) {
  (void)state;
  const hh_event evs[] = {
      ev(HH_EV_FREE, 2, 100, 0x10, 0), ev(HH_EV_ALLOC, 1, 100, 0x10, 0), /* 0 1 */
      ev(HH_EV_FREE, 1, 100, 0x10, 0), ev(HH_EV_ALLOC, 1, 100, 0x10, 0), /* 2 3 */
  };
  expect_order(evs, 4, false, (const size_t[]){1, 2, 3, 0});
}

/* Sampled: a realloc whose new block is not followed (weight 0) is written
 * only because its old block was sampled, so the old block must be live:
 * thread 1's allocation of it in the same tick comes first. Before, a
 * sampled realloc's old block was taken for one perhaps not sampled, the
 * realloc applied first, and thread 1's block stayed "leaked". */
static void sampled_weight_zero(void **state) {
  (void)state;
  hh_event evs[] = {
      ev(HH_EV_REALLOC, 2, 100, 0x30, 0x10), /* 0: weight 0 below */
      ev(HH_EV_ALLOC, 1, 100, 0x10, 0),      /* 1 */
  };
  evs[0].weight = 0;
  expect_order(evs, 2, true, (const size_t[]){1, 0});
}

/* Found by a helper: thread 2 mallocs X and frees it, and thread 1 mallocs
 * X, in one tick; the merge gives thread 1's allocation first (both
 * threads' next events allocate). Keeping the merge's order up to its
 * first event not allowed (thread 2's allocation) left no order for the
 * rest: thread 2's free then freed thread 1's block, whose free later was
 * unknown. The whole run is searched now. */
static void search_whole_run(void **state) {
  (void)state;
  const hh_event evs[] = {
      ev(HH_EV_ALLOC, 1, 100, 0x50, 0), ev(HH_EV_ALLOC, 2, 100, 0x50, 0), /* 0 1 */
      ev(HH_EV_FREE, 2, 100, 0x50, 0),                                    /* 2 */
  };
  expect_order(evs, 3, false, (const size_t[]){1, 2, 0});
}

/* Sampled, found by a helper: thread 2 shrinks its sampled block X in
 * place (a realloc of weight != 0) and hands it to thread 1, which frees
 * it in the same tick; the merge gives the free first. A realloc of weight
 * != 0 may have an old block not followed, so the free was allowed first
 * and the realloc's new block then "leaked". Now a realloc's old block must
 * be live unless no order gives it one. */
static void sampled_strict(void **state) {
  (void)state;
  hh_event evs[] = {
      ev(HH_EV_ALLOC, 2, 100, 0x50, 0),      /* 0 */
      ev(HH_EV_FREE, 1, 200, 0x50, 0),       /* 1 */
      ev(HH_EV_REALLOC, 2, 200, 0x50, 0x50), /* 2: in place, weight 8 */
  };
  expect_order(evs, 3, true, (const size_t[]){0, 2, 1});
}

/* The consumer pattern of producer_consumer in a tick where 200 other
 * threads allocate too (a machine of many cores): reordered all the same.
 * Until 2026-11-25 a run of more than 64 threads stayed in the merge's
 * order. */
static void many_threads(void **state) {
  (void)state;
  enum { OTHERS = 200, N = 6 + OTHERS };
  hh_event evs[N];
  size_t n = 0;
  evs[n++] = ev(HH_EV_ALLOC, 1, 50, 0xa0, 0);
  evs[n++] = ev(HH_EV_ALLOC, 1, 100, 0xb0, 0);
  evs[n++] = ev(HH_EV_ALLOC, 1, 100, 0xa0, 0); /* 2: A again */
  evs[n++] = ev(HH_EV_ALLOC, 2, 100, 0xc0, 0);
  evs[n++] = ev(HH_EV_FREE, 2, 100, 0xc0, 0);
  evs[n++] = ev(HH_EV_FREE, 2, 100, 0xa0, 0); /* 5: the first A's free */
  for (uint32_t k = 0; k < OTHERS; k++) evs[n++] = ev(HH_EV_ALLOC, 3 + k, 100, 0x10000 + 16 * k, 0);
  size_t order[N], at[N];
  uint64_t reordered;
  assert_int_equal(replay(evs, N, 64, false, order, &reordered), N);
  for (size_t i = 0; i < N; i++) at[order[i]] = i;
  if (at[5] > at[2])
    fail_msg("thread 2's free of A applied at step %zu, after thread 1's new A (%zu)", at[5], at[2]);
  assert_int_equal(reordered, 1);
}

/* A run longer than HH_TICKS_RUN_MAX, all at one time, is handed out
 * whole, in the merge's order, in pieces; nothing is lost or repeated. */
static void long_run(void **state) {
  (void)state;
  enum { N = 3 * HH_TICKS_RUN_MAX + 5 };
  hh_event *evs = malloc(N * sizeof *evs);
  for (size_t i = 0; i < N; i++)
    evs[i] = ev(i % 2 ? HH_EV_FREE : HH_EV_ALLOC, (uint32_t)(i % 3), 7, 0x1000 + 16 * (i / 2), 0);
  size_t *order = malloc(N * sizeof *order);
  uint64_t reordered;
  assert_int_equal(replay(evs, N, 1000, false, order, &reordered), N);
  for (size_t i = 0; i < N; i++) assert_int_equal(order[i], i);
  free(order);
  free(evs);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(producer_consumer),
                                     cmocka_unit_test(search_not_greedy),
                                     cmocka_unit_test(sampled_weight_zero),
                                     cmocka_unit_test(search_whole_run),
                                     cmocka_unit_test(sampled_strict),
                                     cmocka_unit_test(many_threads),
                                     cmocka_unit_test(long_run)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
