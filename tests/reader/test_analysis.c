/* The analysis (src/analyze) on traces made by the test-only encoder:
 * what needs many events or threads to show, checked exactly. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "analyze/analysis.h"
#include "cli/summary.h"
#include "trace/reader.h"
#include "trace_builder.h"

/* 70,000 threads, numbered 1, 2, ... as the tracer numbers them, and one
 * with an index no tracer gives: each its own slot, with its own numbers
 * (thread k allocates k bytes, once; the odd ones free their block at once:
 * a temporary allocation). A linear search for the slot of each event's
 * thread took 16 s for 60,000 threads; until 2026-11-25 the 65,535th
 * thread's slot took every later thread's numbers (a thread per request
 * reached that), the slot kept in 16 bits of each live block. */
static void many_threads(void **state) {
  (void)state;
  enum { N = 70000 };
  const uint32_t odd = 3000000000u;
  tb b;
  tb_init(&b, 0, 1000000000u);
  for (uint32_t k = 1; k <= N + 1; k++) {
    uint32_t index = k <= N ? k : odd;
    tb_chunk_begin(&b, index, k);
    tb_thread(&b, index, 100000 + k, "worker");
    tb_alloc(&b, 0, k, 0x10000 + 0x100 * (uint64_t)k, index == odd ? 7 : k, 0, 0);
    if (k % 2) tb_free(&b, 9, k, 0x10000 + 0x100 * (uint64_t)k); /* (9: free) */
    tb_chunk_end(&b, HH_CHUNK_RAW);
  }
  tb_chunk_begin(&b, 0, N + 2);
  tb_end(&b, N + 2, N + 1 + (N + 2) / 2);
  tb_chunk_end(&b, HH_CHUNK_ZSTD);
  hh_reader *r = hh_reader_open_mem(b.buf, b.len, NULL, 0);
  hh_analysis *a = hh_analyze(r, &(hh_analyze_options){0});
  assert_non_null(a);
  if (a->status != HH_READ_OK) fail_msg("%s", a->status_message);
  assert_int_equal(a->nthreads, N + 1);
  assert_int_equal(a->allocations, N + 1);
  assert_int_equal(a->temporary, (N + 2) / 2);
  size_t seen = 0;
  for (size_t i = 0; i < a->nthreads; i++) {
    const hh_thread_stats *t = &a->threads[i];
    uint32_t k = t->index == odd ? N + 1 : t->index;
    assert_int_equal(t->allocations, 1);
    assert_int_equal(t->bytes, t->index == odd ? 7 : t->index);
    assert_int_equal(t->frees, k % 2);
    assert_int_equal(t->temporary, k % 2);
    assert_int_equal(t->leaked_blocks, 1 - k % 2);
    seen++;
  }
  assert_int_equal(seen, N + 1);
  hh_analysis_free(a);
  hh_reader_close(r);
  tb_free_all(&b);
}

/* 1,200,000 blocks live at once, then every other one freed: the live
 * table past 2^21 slots, kept at most half full there (a third below),
 * finds every block. 4 million leaked blocks took 825 MB to report, the
 * table a third full; 432 MB half full. */
static void many_live_blocks(void **state) {
  (void)state;
  enum { N = 1200000, PER_CHUNK = 100000 };
  tb b;
  tb_init(&b, 0, 1000000000u);
  uint64_t t = 1, bytes = 0, leaked = 0;
  for (uint64_t i = 0; i < 2 * N; i++) {
    if (i % PER_CHUNK == 0) {
      if (i) tb_chunk_end(&b, HH_CHUNK_ZSTD);
      tb_chunk_begin(&b, 1, t);
      if (i == 0) tb_thread(&b, 1, 100, "main");
    }
    uint64_t k = i < N ? i : 2 * (i - N) % N + (i >= N + N / 2);
    if (i < N) {
      tb_alloc(&b, 0, t++, 0x100000 + 0x40 * k, 1 + k % 48, 0, 0);
      bytes += 1 + k % 48;
    } else if (k % 2 == 0) {
      tb_free(&b, 9, t++, 0x100000 + 0x40 * k);
    } else {
      leaked += 1 + k % 48;
    }
  }
  tb_chunk_end(&b, HH_CHUNK_ZSTD);
  tb_chunk_begin(&b, 0, t);
  tb_end(&b, t, N + N / 2);
  tb_chunk_end(&b, HH_CHUNK_ZSTD);
  hh_reader *r = hh_reader_open_mem(b.buf, b.len, NULL, 0);
  hh_analysis *a = hh_analyze(r, &(hh_analyze_options){.peak_blocks = true});
  assert_non_null(a);
  if (a->status != HH_READ_OK) fail_msg("%s", a->status_message);
  assert_int_equal(a->allocations, N);
  assert_int_equal(a->frees, N / 2);
  assert_int_equal(a->unknown_frees, 0);
  assert_int_equal(a->peak_blocks, N);
  assert_int_equal(a->peak_bytes, bytes);
  assert_int_equal(a->npeak_blocks, N);
  assert_int_equal(a->leaked_blocks, N / 2);
  assert_int_equal(a->leaked_bytes, leaked);
  hh_analysis_free(a);
  hh_reader_close(r);
  tb_free_all(&b);
}

/* Blocks handed from one thread to another (trace/handoff.h), on a clock
 * of 1 ns ticks (a window of 1,001 ns):
 *  - 0x1000: allocated by thread 1 and freed by thread 2 at the same time
 *    (the merge hands the free out first);
 *  - 0x2000: freed by thread 2 200 ns before thread 1's allocation
 *    (the consumer's clock ahead);
 *  - 0x3000: allocated by thread 3, freed by thread 2, which at once
 *    allocates it again, all at one time: the merge gives thread 2's free
 *    and allocation before thread 3's allocation;
 *  - 0x4000: freed by thread 2 without an allocation in the trace, and
 *    allocated by thread 1 5 us later: an unknown free, and a live block.
 * Before, the first three were unknown frees (four with 0x4000), their
 * allocations leaks, and the hand-off of 0x3000 lost thread 2's block. */
/* The analysis held to the reader's memory limit: a small file of a
 * million allocations, none freed (the live blocks grow; the reader's
 * tables do not), read under 4 MiB. The analysis stops before the batch
 * that would take its tables past the limit, with every event before it
 * applied, and the reader's status says so; no limit, it reads all. */
static void memory_limit(void **state) {
  (void)state;
  enum { N = 1000000 };
  tb b;
  tb_init(&b, 0, 1000000000u);
  tb_chunk_begin(&b, 1, 1);
  tb_thread(&b, 1, 100, "main");
  for (uint64_t i = 0; i < N; i++) tb_alloc(&b, 0, 1 + i / 1000, 0x10000 + 16 * i, 16, 0, 0);
  tb_chunk_end(&b, HH_CHUNK_ZSTD);
  tb_chunk_begin(&b, 0, N);
  tb_end(&b, N, N);
  tb_chunk_end(&b, HH_CHUNK_ZSTD);
  assert_true(b.len < 64 * 1024);
  for (int limited = 1; limited >= 0; limited--) {
    hh_reader *r = hh_reader_open_mem(b.buf, b.len, NULL, 0);
    assert_non_null(r);
    if (limited) hh_reader_set_memory_limit(r, 4 << 20);
    hh_analysis *a = hh_analyze(r, NULL);
    if (limited) {
      assert_int_equal(a->status, HH_READ_LIMIT);
      assert_string_equal(
          a->status_message,
          "analysis stopped after 20479 events (20479 blocks live): the reader's tables (1085 "
          "bytes) and the analysis's (6.9 MiB, with the next events) would take more than 4 MiB, "
          "the memory limit (HEAPHOOK_MEMORY_LIMIT raises it)");
      /* five batches of 4096 (the THREAD record the first's), the sixth
       * would grow the live table from 2 to 4 MiB (with the old held) */
      assert_int_equal(a->allocations, 20479);
      assert_int_equal(a->leaked_blocks, 20479);
    } else {
      assert_int_equal(a->status, HH_READ_OK);
      assert_int_equal(a->allocations, N);
    }
    hh_analysis_free(a);
    hh_reader_close(r);
  }
  tb_free_all(&b);
}

static void handoff(void **state) {
  (void)state;
  tb b;
  tb_init(&b, 0, 1000000000u);
  tb_chunk_begin(&b, 1, 100);
  tb_thread(&b, 1, 101, "producer");
  tb_alloc(&b, 0, 100, 0x1000, 10, 0, 0);
  tb_alloc(&b, 0, 5000, 0x2000, 20, 0, 0);
  tb_alloc(&b, 0, 15000, 0x4000, 40, 0, 0);
  tb_chunk_end(&b, HH_CHUNK_RAW);
  tb_chunk_begin(&b, 2, 100);
  tb_thread(&b, 2, 102, "consumer");
  tb_free(&b, 9, 100, 0x1000);
  tb_free(&b, 9, 4800, 0x2000);
  tb_free(&b, 9, 9000, 0x3000);
  tb_alloc(&b, 0, 9000, 0x3000, 31, 0, 0);
  tb_free(&b, 9, 10000, 0x4000);
  tb_free(&b, 9, 12000, 0); /* crafted: a free at 0, then an allocation at 0 by thread 3 (a crash) */
  tb_chunk_end(&b, HH_CHUNK_RAW);
  tb_chunk_begin(&b, 3, 9000);
  tb_thread(&b, 3, 103, "other");
  tb_alloc(&b, 0, 9000, 0x3000, 30, 0, 0);
  tb_alloc(&b, 0, 12000, 0, 5, 0, 0);
  tb_chunk_end(&b, HH_CHUNK_RAW);
  tb_chunk_begin(&b, 0, 20000);
  tb_end(&b, 20000, 11);
  tb_chunk_end(&b, HH_CHUNK_RAW);

  hh_reader *r = hh_reader_open_mem(b.buf, b.len, NULL, 0);
  hh_analysis *a = hh_analyze(r, &(hh_analyze_options){0});
  assert_non_null(a);
  assert_int_equal(a->allocations, 6);
  assert_int_equal(a->frees, 5);
  assert_int_equal(a->unknown_frees, 2);
  assert_int_equal(a->leaked_blocks, 3); /* the block at 0 counts, though the table does not keep it */
  assert_int_equal(a->leaked_bytes, 31 + 40 + 5);
  assert_int_equal(a->peak_bytes, 76);
  assert_int_equal(a->peak_time_ns, 15000);
  assert_int_equal(a->temporary, 0);
  for (size_t i = 0; i < a->nthreads; i++) {
    const hh_thread_stats *t = &a->threads[i];
    assert_int_equal(t->frees, t->index == 2 ? 5 : 0);
    assert_int_equal(t->allocations, t->index == 1 ? 3 : t->index == 3 ? 2 : 1);
    assert_int_equal(t->leaked_bytes, t->index == 1 ? 40 : t->index == 2 ? 31 : 5);
  }
  hh_analysis_free(a);
  hh_reader_close(r);

  /* heaphook run's summary: the same replay */
  r = hh_reader_open_mem(b.buf, b.len, NULL, 0);
  hh_summary s;
  hh_summarize(r, &s);
  assert_int_equal(s.allocs, 6);
  assert_int_equal(s.frees, 5);
  assert_int_equal(s.unknown_frees, 2);
  assert_int_equal(s.leaked_blocks, 3);
  assert_int_equal(s.leaked_bytes, 76);
  assert_int_equal(s.peak_bytes, 76);
  assert_int_equal(s.peak_time, 15000);
  hh_reader_close(r);
  tb_free_all(&b);
}

/* Temporary allocations, thread by thread. Thread 1 allocates 0x1000 at
 * 100 and frees it at 200: its last allocation, temporary, although thread
 * 2 allocated 0x2000 at 150 (heaptrack's rule across threads: not
 * temporary; the old rule here, which within one clock tick depended on
 * the merge's order). Thread 2 allocates 0x3000 at 250, frees 0x2000 at
 * 260 and 0x3000 at 400: not temporary (a free of a known block in
 * between). Thread 1 allocates 0x4000 at 500 and thread 2 frees it at 600:
 * another thread's block, not temporary (thread 2's allocation of 0x5000
 * at 550 keeps it from being one under the old rule too). */
static void temporary_per_thread(void **state) {
  (void)state;
  tb b;
  tb_init(&b, 0, 1000000000u);
  tb_chunk_begin(&b, 1, 100);
  tb_alloc(&b, 0, 100, 0x1000, 10, 0, 0);
  tb_free(&b, 9, 200, 0x1000);
  tb_alloc(&b, 0, 500, 0x4000, 40, 0, 0);
  tb_chunk_end(&b, HH_CHUNK_RAW);
  tb_chunk_begin(&b, 2, 150);
  tb_alloc(&b, 0, 150, 0x2000, 20, 0, 0);
  tb_alloc(&b, 0, 250, 0x3000, 30, 0, 0);
  tb_free(&b, 9, 260, 0x2000);
  tb_free(&b, 9, 400, 0x3000);
  tb_alloc(&b, 0, 550, 0x5000, 50, 0, 0);
  tb_free(&b, 9, 600, 0x4000);
  tb_chunk_end(&b, HH_CHUNK_RAW);
  tb_chunk_begin(&b, 0, 700);
  tb_end(&b, 700, 9);
  tb_chunk_end(&b, HH_CHUNK_RAW);
  hh_reader *r = hh_reader_open_mem(b.buf, b.len, NULL, 0);
  hh_analysis *a = hh_analyze(r, &(hh_analyze_options){0});
  assert_non_null(a);
  assert_int_equal(a->allocations, 5);
  assert_int_equal(a->frees, 4);
  assert_int_equal(a->temporary, 1);
  for (size_t i = 0; i < a->nthreads; i++)
    assert_int_equal(a->threads[i].temporary, a->threads[i].index == 1 ? 1 : 0);
  hh_analysis_free(a);
  hh_reader_close(r);
  tb_free_all(&b);
}

static hh_analysis *analyze_built(tb *b, size_t max_points, hh_reader **rp) {
  hh_reader *r = hh_reader_open_mem(b->buf, b->len, NULL, 0);
  hh_analysis *a = hh_analyze(r, &(hh_analyze_options){.max_points = max_points});
  assert_non_null(a);
  *rp = r;
  return a;
}

/* The hand-off repair's edges, found by a review:
 *  - a realloc's new block freed by another thread first (a buffer grown,
 *    then handed over): its free was unknown and the block a leak;
 *  - a pair applied beside a live block in a later timeline bucket: the
 *    timeline showed the two blocks at once (1,100 bytes, above the peak
 *    of 1,000);
 *  - the freeing thread's temporary allocation after its parked free: the
 *    take, later, reset its chain (0 temporary, 1 by the per-thread rule). */
static void handoff_edges(void **state) {
  (void)state;
  hh_reader *r;
  hh_analysis *a;
  hh_summary s;
  tb b;

  tb_init(&b, 0, 1000000000u);
  tb_chunk_begin(&b, 1, 1000);
  tb_thread(&b, 1, 101, "consumer");
  tb_free(&b, 9, 1000, 0x2000);
  tb_chunk_end(&b, HH_CHUNK_RAW);
  tb_chunk_begin(&b, 2, 500);
  tb_thread(&b, 2, 102, "producer");
  tb_alloc(&b, 0, 500, 0x1000, 10, 0, 0);
  tb_realloc(&b, 2, 1000, 0x1000, 0x2000, 100, 0);
  tb_chunk_end(&b, HH_CHUNK_RAW);
  tb_chunk_begin(&b, 0, 20000);
  tb_end(&b, 20000, 3);
  tb_chunk_end(&b, HH_CHUNK_RAW);
  a = analyze_built(&b, 0, &r);
  assert_int_equal(a->unknown_frees, 0);
  assert_int_equal(a->frees, 1);
  assert_int_equal(a->leaked_blocks, 0);
  assert_int_equal(a->peak_bytes, 100);
  hh_analysis_free(a);
  hh_reader_close(r);
  r = hh_reader_open_mem(b.buf, b.len, NULL, 0);
  hh_summarize(r, &s);
  assert_int_equal(s.unknown_frees, 0);
  assert_int_equal(s.frees, 1);
  assert_int_equal(s.leaked_blocks, 0);
  hh_reader_close(r);
  tb_free_all(&b);

  tb_init(&b, 0, 1000000000u);
  tb_chunk_begin(&b, 2, 9000);
  tb_thread(&b, 2, 102, "reuser");
  tb_free(&b, 9, 9000, 0x3000);
  tb_alloc(&b, 0, 9000, 0x3000, 100, 0, 0);
  tb_chunk_end(&b, HH_CHUNK_RAW);
  tb_chunk_begin(&b, 3, 9900);
  tb_thread(&b, 3, 103, "producer");
  tb_alloc(&b, 0, 9900, 0x3000, 1000, 0, 0);
  tb_chunk_end(&b, HH_CHUNK_RAW);
  tb_chunk_begin(&b, 0, 20000);
  tb_end(&b, 20000, 3);
  tb_chunk_end(&b, HH_CHUNK_RAW);
  a = analyze_built(&b, 64, &r);
  assert_int_equal(a->unknown_frees, 0);
  assert_int_equal(a->peak_bytes, 100);
  assert_int_equal(a->leaked_bytes, 100);
  for (size_t i = 0; i < a->npoints; i++)
    if (a->timeline[i].heap_bytes > a->peak_bytes)
      fail_msg("timeline at %lu ns: %lu bytes, above the peak", (unsigned long)a->timeline[i].time_ns,
               (unsigned long)a->timeline[i].heap_bytes);
  hh_analysis_free(a);
  hh_reader_close(r);
  tb_free_all(&b);

  tb_init(&b, 0, 1000000000u);
  tb_chunk_begin(&b, 1, 1001);
  tb_thread(&b, 1, 101, "producer");
  tb_alloc(&b, 0, 1001, 0x1000, 10, 0, 0);
  tb_chunk_end(&b, HH_CHUNK_RAW);
  tb_chunk_begin(&b, 2, 1000);
  tb_thread(&b, 2, 102, "consumer");
  tb_free(&b, 9, 1000, 0x1000);
  tb_alloc(&b, 0, 1000, 0x2000, 20, 0, 0);
  tb_free(&b, 9, 1500, 0x2000);
  tb_chunk_end(&b, HH_CHUNK_RAW);
  tb_chunk_begin(&b, 0, 20000);
  tb_end(&b, 20000, 4);
  tb_chunk_end(&b, HH_CHUNK_RAW);
  a = analyze_built(&b, 0, &r);
  assert_int_equal(a->unknown_frees, 0);
  assert_int_equal(a->temporary, 1);
  assert_int_equal(a->leaked_blocks, 0);
  hh_analysis_free(a);
  hh_reader_close(r);
  tb_free_all(&b);
}

/* Many frees of blocks the trace never saw allocated, 10 ns apart (a
 * forked child freeing what its parent allocated, at full speed), between
 * allocations of another thread: the parked list stays as short as the
 * window. Before, only the newest parked free was checked for expiry, the
 * list grew to 4,096 and every allocation searched all of it. */
static void handoff_many_unknown(void **state) {
  (void)state;
  enum { N = 200000 };
  tb b;
  tb_init(&b, 0, 1000000000u);
  tb_chunk_begin(&b, 1, 1000);
  tb_thread(&b, 1, 101, "freer");
  for (uint64_t i = 0; i < N; i++) tb_free(&b, 9, 1000 + 10 * i, 0x10000000ull + 64 * i);
  tb_chunk_end(&b, HH_CHUNK_ZSTD);
  tb_chunk_begin(&b, 2, 1000);
  tb_thread(&b, 2, 102, "allocator");
  for (uint64_t i = 0; i < N; i++) {
    tb_alloc(&b, 0, 1005 + 10 * i, 0x90000000ull + 64 * i, 16, 0, 0);
    tb_free(&b, 9, 1006 + 10 * i, 0x90000000ull + 64 * i);
  }
  tb_chunk_end(&b, HH_CHUNK_ZSTD);
  tb_chunk_begin(&b, 0, 10 * N + 5000);
  tb_end(&b, 10 * N + 5000, 3 * N);
  tb_chunk_end(&b, HH_CHUNK_RAW);
  hh_reader *r;
  hh_analysis *a = analyze_built(&b, 0, &r);
  assert_int_equal(a->unknown_frees, N);
  assert_int_equal(a->frees, 2 * N);
  assert_int_equal(a->leaked_blocks, 0);
  hh_analysis_free(a);
  hh_reader_close(r);
  tb_free_all(&b);
}

/* A producer and a consumer in the same ticks (trace/tick_order.h), the
 * pattern of a consumer that allocates a buffer of its own before freeing
 * what it was handed. Cycles of three ticks, 5 us apart (past the
 * hand-off window): thread 1 allocates A; then thread 1 allocates Y and
 * gets A back, while thread 2 allocates and frees C, then frees the first
 * A; then thread 2 frees the second A and Y. In the middle tick the merge
 * hands out thread 1's allocations first (both threads' next events
 * allocate): A while it is live. Before the run reordering, thread 2's
 * free in that tick freed the second A, and its free in the last tick was
 * unknown: 3,000 unknown frees, every A's life a tick short.
 * 3,000 cycles of 9 events: runs cut by the ends of the analysis's
 * batches (4,096 events) and of the summary's (256). */
static void producer_consumer_ticks(void **state) {
  (void)state;
  enum { K = 3000 };
  const uint64_t A = 0xa000, C = 0xc000;
  tb b;
  tb_init(&b, 0, 1000000000u);
  tb_chunk_begin(&b, 1, 10000);
  tb_thread(&b, 1, 101, "producer");
  for (uint64_t j = 0; j < K; j++) {
    uint64_t t = 10000 + 15000 * j;
    tb_alloc(&b, 0, t, A, 16, 0, 0);
    tb_alloc(&b, 0, t + 5000, 0x100000 + 0x40 * j, 24, 0, 0);
    tb_alloc(&b, 0, t + 5000, A, 16, 0, 0);
  }
  tb_chunk_end(&b, HH_CHUNK_ZSTD);
  tb_chunk_begin(&b, 2, 15000);
  tb_thread(&b, 2, 102, "consumer");
  for (uint64_t j = 0; j < K; j++) {
    uint64_t t = 10000 + 15000 * j;
    tb_alloc(&b, 0, t + 5000, C, 40, 0, 0);
    tb_free(&b, 9, t + 5000, C);
    tb_free(&b, 9, t + 5000, A);
    tb_free(&b, 9, t + 10000, A);
    tb_free(&b, 9, t + 10000, 0x100000 + 0x40 * j);
  }
  tb_chunk_end(&b, HH_CHUNK_ZSTD);
  tb_chunk_begin(&b, 0, 15000 * (K + 1));
  tb_end(&b, 15000 * (K + 1), 8 * K);
  tb_chunk_end(&b, HH_CHUNK_RAW);
  hh_reader *r;
  hh_analysis *a = analyze_built(&b, 0, &r);
  assert_int_equal(a->unknown_frees, 0);
  assert_int_equal(a->allocations, 4 * K);
  assert_int_equal(a->frees, 4 * K);
  assert_int_equal(a->leaked_blocks, 0);
  assert_int_equal(a->temporary, K);
  assert_int_equal(a->peak_bytes, 16 + 24 + 40); /* the first A, Y and C */
  for (size_t i = 0; i < a->nthreads; i++) {
    const hh_thread_stats *t = &a->threads[i];
    assert_int_equal(t->allocations, t->index == 1 ? 3 * K : K);
    assert_int_equal(t->frees, t->index == 1 ? 0 : 4 * K);
  }
  hh_analysis_free(a);
  hh_reader_close(r);
  r = hh_reader_open_mem(b.buf, b.len, NULL, 0);
  hh_summary s;
  hh_summarize(r, &s);
  assert_int_equal(s.unknown_frees, 0);
  assert_int_equal(s.allocs, 4 * K);
  assert_int_equal(s.frees, 4 * K);
  assert_int_equal(s.leaked_blocks, 0);
  assert_int_equal(s.peak_bytes, 16 + 24 + 40);
  hh_reader_close(r);
  tb_free_all(&b);
}

/* A block allocated where a block is still live, whose free another
 * thread's event gives a little later (trace/handoff.h, "owed"), on a clock
 * of 1 ns ticks (a window of 1,001 ns):
 *  - thread 1 reallocs P (thread 3's) to Z at 10,000 while thread 2's Z is
 *    live; thread 2 frees Z at 10,800 (it freed it while thread 1 waited
 *    for the allocator's lock: a realloc timed at its start); thread 1
 *    frees its Z at 20,000;
 *  - thread 1 allocates Y at 30,000 over thread 2's Y, which thread 2 frees
 *    at 30,500; thread 1 frees its Y at 40,000;
 *  - thread 2 allocates X at 50,000 over thread 1's X, whose realloc to W
 *    at 50,400 gave it up; thread 2 frees X at 60,000, thread 1 W at 61,000.
 * Before, each late free freed the new block, and its real free later was
 * unknown (3 unknown frees, 1 free too many). */
static void owed_frees(void **state) {
  (void)state;
  tb b;
  tb_init(&b, 0, 1000000000u);
  tb_chunk_begin(&b, 3, 1000);
  tb_thread(&b, 3, 103, "producer");
  tb_alloc(&b, 0, 1000, 0x1000, 10, 0, 0);
  tb_chunk_end(&b, HH_CHUNK_RAW);
  tb_chunk_begin(&b, 2, 5000);
  tb_thread(&b, 2, 102, "other");
  tb_alloc(&b, 0, 5000, 0x2000, 20, 0, 0);
  tb_free(&b, 9, 10800, 0x2000);
  tb_alloc(&b, 0, 25000, 0x3000, 30, 0, 0);
  tb_free(&b, 9, 30500, 0x3000);
  tb_alloc(&b, 0, 50000, 0x4000, 40, 0, 0);
  tb_free(&b, 9, 60000, 0x4000);
  tb_chunk_end(&b, HH_CHUNK_RAW);
  tb_chunk_begin(&b, 1, 10000);
  tb_thread(&b, 1, 101, "consumer");
  tb_realloc(&b, 2, 10000, 0x1000, 0x2000, 100, 0);
  tb_free(&b, 9, 20000, 0x2000);
  tb_alloc(&b, 0, 30000, 0x3000, 300, 0, 0);
  tb_free(&b, 9, 40000, 0x3000);
  tb_alloc(&b, 0, 45000, 0x4000, 400, 0, 0);
  tb_realloc(&b, 2, 50400, 0x4000, 0x5000, 500, 0);
  tb_free(&b, 9, 61000, 0x5000);
  tb_chunk_end(&b, HH_CHUNK_RAW);
  tb_chunk_begin(&b, 0, 70000);
  tb_end(&b, 70000, 15);
  tb_chunk_end(&b, HH_CHUNK_RAW);
  hh_reader *r;
  hh_analysis *a = analyze_built(&b, 0, &r);
  assert_int_equal(a->unknown_frees, 0);
  assert_int_equal(a->allocations, 6);
  assert_int_equal(a->reallocs, 2);
  assert_int_equal(a->frees, 6);
  assert_int_equal(a->leaked_blocks, 0);
  for (size_t i = 0; i < a->nthreads; i++) {
    const hh_thread_stats *t = &a->threads[i];
    assert_int_equal(t->frees, t->index == 3 ? 0 : 3);
  }
  hh_analysis_free(a);
  hh_reader_close(r);
  r = hh_reader_open_mem(b.buf, b.len, NULL, 0);
  hh_summary s;
  hh_summarize(r, &s);
  assert_int_equal(s.unknown_frees, 0);
  assert_int_equal(s.allocs, 6);
  assert_int_equal(s.frees, 6);
  assert_int_equal(s.leaked_blocks, 0);
  hh_reader_close(r);
  tb_free_all(&b);
}

/* The timeline's last point is the heap where the trace ends: a block
 * allocated and freed in the last bucket (a 5 MB buffer made and dropped
 * just before exit, 3 s into the run) left the bucket's maximum as the
 * last point, and the chart and the HTML page drew the heap at 5,001,000
 * bytes to the end, where 1,000 bytes were leaked (massif's end snapshot
 * said 1,000). */
static void timeline_ends_at_the_end(void **state) {
  (void)state;
  tb b;
  tb_init(&b, 0, 1000000000u);
  tb_chunk_begin(&b, 1, 1000);
  tb_thread(&b, 1, 101, "main");
  tb_alloc(&b, 0, 1000, 0x1000, 1000, 0, 0);
  tb_alloc(&b, 0, 2999000000u, 0x100000, 5000000, 0, 0);
  tb_free(&b, 9, 2999500000u, 0x100000);
  tb_chunk_end(&b, HH_CHUNK_RAW);
  tb_chunk_begin(&b, 0, 3000000000u);
  tb_end(&b, 3000000000u, 3);
  tb_chunk_end(&b, HH_CHUNK_RAW);
  hh_reader *r;
  hh_analysis *a = analyze_built(&b, 64, &r);
  assert_int_equal(a->duration_ns, 3000000000u);
  assert_int_equal(a->peak_bytes, 5001000);
  assert_int_equal(a->leaked_bytes, 1000);
  assert_true(a->npoints >= 2 && a->npoints <= 65);
  const hh_point *last = &a->timeline[a->npoints - 1], *before = last - 1;
  assert_int_equal(last->time_ns, 3000000000u);
  assert_int_equal(last->heap_bytes, 1000);
  assert_true(before->time_ns <= 2999000000u);
  assert_int_equal(before->heap_bytes, 5001000);
  hh_analysis_free(a);
  hh_reader_close(r);

  /* where the last bucket's maximum is the heap at the end, no point is
   * added: 64 buckets at most */
  tb_free_all(&b);
  tb_init(&b, 0, 1000000000u);
  tb_chunk_begin(&b, 1, 1000);
  tb_thread(&b, 1, 101, "main");
  for (uint64_t k = 0; k < 200; k++) tb_alloc(&b, 0, 1000 + k * 15000000u, 0x1000 + 0x100 * k, 10, 0, 0);
  tb_chunk_end(&b, HH_CHUNK_RAW);
  tb_chunk_begin(&b, 0, 3000000000u);
  tb_end(&b, 3000000000u, 200);
  tb_chunk_end(&b, HH_CHUNK_RAW);
  a = analyze_built(&b, 64, &r);
  assert_true(a->npoints <= 64);
  assert_int_equal(a->timeline[a->npoints - 1].heap_bytes, 2000);
  hh_analysis_free(a);
  hh_reader_close(r);
  tb_free_all(&b);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(many_threads),         cmocka_unit_test(handoff),
      cmocka_unit_test(temporary_per_thread), cmocka_unit_test(handoff_edges),
      cmocka_unit_test(handoff_many_unknown), cmocka_unit_test(producer_consumer_ticks),
      cmocka_unit_test(owed_frees),           cmocka_unit_test(many_live_blocks),
      cmocka_unit_test(memory_limit),         cmocka_unit_test(timeline_ends_at_the_end),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
