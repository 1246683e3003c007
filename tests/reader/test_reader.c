/* Unit tests of the trace reader on traces made by the test encoder
 * (trace_builder.h): round trips of every record, header refusals, a trace
 * cut at every byte, flipped bytes, hostile lengths, the stack trie, the
 * time-ordered merge. Run under ASan + UBSan. */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "trace/reader.h"
#include "trace_builder.h"

#define MAX_EV 4096

typedef struct evlist {
  hh_event ev[MAX_EV];
  size_t n;
} evlist;

static evlist *read_all(hh_reader *r) {
  evlist *l = calloc(1, sizeof *l);
  hh_event ev;
  while (l->n < MAX_EV && hh_reader_next(r, &ev)) l->ev[l->n++] = ev;
  return l;
}

static evlist *merge_all(hh_reader *r, size_t window) {
  evlist *l = calloc(1, sizeof *l);
  hh_merge *m = hh_merge_new(r, window);
  hh_event ev;
  while (l->n < MAX_EV && hh_merge_next(m, &ev)) l->ev[l->n++] = ev;
  hh_merge_free(m);
  return l;
}

static size_t count_kind(const evlist *l, hh_ev_kind k) {
  size_t n = 0;
  for (size_t i = 0; i < l->n; i++) n += l->ev[i].kind == k;
  return n;
}

/* A small, complete trace: process chunk (command, thread, module, stacks),
 * one chunk of thread 1, one of thread 2, the end. Events: 6. */
static void build_small(tb *b, uint32_t enc) {
  tb_init(b, HH_TRACE_FLAG_STACKS | (enc == HH_CHUNK_ZSTD ? HH_TRACE_FLAG_ZSTD : 0), 1000000000u);
  tb_chunk_begin(b, 0, 0);
  const char *argv[] = {"prog", "--flag"};
  tb_command(b, 2, argv, "/usr/bin/prog");
  tb_thread(b, 1, 4242, "main");
  tb_thread(b, 2, 4243, "worker");
  tb_segment segs[2] = {{0x400000, 0x1000, 0}, {0x401000, 0x2000, 0x1000}};
  tb_module(b, 0x400000, "/usr/bin/prog", "0123abcd", 2, segs);
  tb_stack(b, 1, 0, 0x401100);
  tb_stack(b, 2, 1, 0x401200);
  tb_stack(b, 3, 1, 0x401300);
  tb_chunk_end(b, enc);

  tb_chunk_begin(b, 1, 1000);
  tb_alloc(b, 0, 1000, 0x10000, 100, 2, 0);
  tb_alloc(b, 4, 1500, 0x20000, 64, 3, 64); /* posix_memalign */
  tb_realloc(b, 2, 2000, 0x10000, 0x30000, 200, 2);
  tb_free(b, 9, 2500, 0x30000);
  tb_chunk_end(b, enc);

  tb_chunk_begin(b, 2, 1200);
  tb_alloc(b, 1, 1200, 0x8000, 16, 3, 0); /* calloc, lower address: negative delta */
  tb_marker(b, 1300, "phase 2");
  tb_rss(b, 1400, 1 << 20);
  tb_free(b, 9, 3000, 0x8000);
  tb_chunk_end(b, enc);

  tb_chunk_begin(b, 0, 4000);
  tb_end(b, 4000, 6);
  tb_chunk_end(b, enc);
}

static void check_small_roundtrip(uint32_t enc) {
  tb b;
  build_small(&b, enc);
  char err[256];
  hh_reader *r = hh_reader_open_mem(b.buf, b.len, err, sizeof err);
  assert_non_null(r);
  assert_int_equal(hh_reader_header(r)->pid, 1234);
  evlist *l = read_all(r);
  assert_int_equal(hh_reader_status(r), HH_READ_OK);
  assert_string_equal(hh_reader_message(r), "");
  assert_int_equal(hh_reader_chunks(r), 4);
  assert_int_equal(hh_reader_end_events(r), 6);

  /* file order: command, 2 threads, module, 3 stacks, 4 events, 4 events, end */
  assert_int_equal(l->n, 1 + 2 + 1 + 3 + 4 + 4 + 1);
  const hh_event *e = l->ev;
  assert_int_equal(e[0].kind, HH_EV_COMMAND);
  const char *const *argv;
  const char *exe;
  assert_int_equal(hh_reader_command(r, &argv, &exe), 2);
  assert_string_equal(argv[0], "prog");
  assert_string_equal(argv[1], "--flag");
  assert_null(argv[2]);
  assert_string_equal(exe, "/usr/bin/prog");
  assert_int_equal(e[1].kind, HH_EV_THREAD);
  assert_string_equal(e[1].u.thread->name, "main");
  assert_int_equal(e[1].u.thread->tid, 4242);
  assert_int_equal(e[3].kind, HH_EV_MODULE_LOAD);
  const hh_trace_module *m = e[3].u.module;
  assert_string_equal(m->path, "/usr/bin/prog");
  assert_string_equal(m->build_id, "0123abcd");
  assert_int_equal(m->nsegments, 2);
  assert_int_equal(m->segments[1].start, 0x401000);
  assert_int_equal(m->segments[1].size, 0x2000);
  assert_int_equal(m->segments[1].offset, 0x1000);
  assert_int_equal(m->load_epoch, 1);
  assert_int_equal(m->unload_epoch, UINT32_MAX);
  assert_int_equal(e[4].kind, HH_EV_STACK);
  assert_int_equal(e[5].u.stack.parent, 1);
  assert_int_equal(e[5].u.stack.ip, 0x401200);

  const hh_event *a = &e[7];
  assert_int_equal(a->kind, HH_EV_ALLOC);
  assert_int_equal(a->fn, 0);
  assert_int_equal(a->thread, 1);
  assert_int_equal(a->time, 1000);
  assert_int_equal(a->addr, 0x10000);
  assert_int_equal(a->size, 100);
  assert_int_equal(a->weight, 100);
  assert_int_equal(a->stack, 2);
  assert_int_equal(a->align, 0);
  assert_int_equal(e[8].fn, 4);
  assert_int_equal(e[8].align, 64);
  assert_int_equal(e[8].addr, 0x20000);
  assert_int_equal(e[9].kind, HH_EV_REALLOC);
  assert_int_equal(e[9].old_addr, 0x10000);
  assert_int_equal(e[9].addr, 0x30000);
  assert_int_equal(e[9].size, 200);
  assert_int_equal(e[9].time, 2000);
  assert_int_equal(e[10].kind, HH_EV_FREE);
  assert_int_equal(e[10].addr, 0x30000);
  assert_int_equal(e[10].fn, 9);
  assert_int_equal(e[11].kind, HH_EV_ALLOC);
  assert_int_equal(e[11].addr, 0x8000);
  assert_int_equal(e[11].thread, 2);
  assert_int_equal(e[12].kind, HH_EV_MARKER);
  assert_string_equal(e[12].u.marker, "phase 2");
  assert_int_equal(e[12].time, 1300);
  assert_int_equal(e[13].kind, HH_EV_RSS);
  assert_int_equal(e[13].u.rss, 1 << 20);
  assert_int_equal(e[14].addr, 0x8000);
  assert_int_equal(e[15].kind, HH_EV_END);
  assert_int_equal(e[15].time, 4000);

  /* tables */
  assert_int_equal(hh_reader_stack_count(r), 3);
  assert_int_equal(hh_reader_stack(r, 2)->depth, 2);
  assert_int_equal(hh_reader_stack(r, 2)->epoch, 1);
  assert_null(hh_reader_stack(r, 4));
  assert_int_equal(hh_reader_thread_count(r), 2);
  assert_string_equal(hh_reader_thread(r, 2)->name, "worker");
  assert_null(hh_reader_thread(r, 3));
  assert_int_equal(hh_reader_module_count(r), 1);
  free(l);
  hh_reader_close(r);
  tb_free_all(&b);
}

static void test_roundtrip_raw(void **state) {
  (void)state;
  check_small_roundtrip(HH_CHUNK_RAW);
}
static void test_roundtrip_zstd(void **state) {
  (void)state;
  check_small_roundtrip(HH_CHUNK_ZSTD);
}

static void test_merge_orders_by_time_then_thread(void **state) {
  (void)state;
  tb b;
  build_small(&b, HH_CHUNK_ZSTD);
  hh_reader *r = hh_reader_open_mem(b.buf, b.len, NULL, 0);
  evlist *l = merge_all(r, 0);
  assert_int_equal(hh_reader_status(r), HH_READ_OK);
  /* definitions first (as their chunks are read), then timed events sorted */
  uint64_t last = 0;
  size_t timed = 0;
  for (size_t i = 0; i < l->n; i++) {
    hh_ev_kind k = l->ev[i].kind;
    if (k == HH_EV_ALLOC || k == HH_EV_FREE || k == HH_EV_REALLOC || k == HH_EV_RSS || k == HH_EV_MARKER) {
      assert_true(l->ev[i].time >= last);
      last = l->ev[i].time;
      timed++;
    }
  }
  assert_int_equal(timed, 8);
  assert_int_equal(l->ev[l->n - 1].kind, HH_EV_END);
  assert_int_equal(count_kind(l, HH_EV_STACK), 3);
  free(l);
  hh_reader_close(r);
  tb_free_all(&b);
}

/* Equal times in two threads: a free comes before an allocation whatever
 * the thread indices (a block freed by one thread and reused by another
 * within one clock tick was freed first), then lower thread first. */
static void test_merge_puts_frees_first_among_equal_times(void **state) {
  (void)state;
  tb b;
  tb_init(&b, 0, 1000000000u);
  tb_chunk_begin(&b, 0, 0);
  tb_thread(&b, 1, 11, "a");
  tb_thread(&b, 2, 12, "b");
  tb_chunk_end(&b, HH_CHUNK_RAW);
  tb_chunk_begin(&b, 1, 0);
  tb_alloc(&b, 0, 5, 0x1000, 16, 0, 0); /* thread 1 gets 0x1000 at t=5 ... */
  tb_alloc(&b, 0, 7, 0x3000, 16, 0, 0);
  tb_chunk_end(&b, HH_CHUNK_RAW);
  tb_chunk_begin(&b, 2, 0);
  tb_alloc(&b, 0, 1, 0x1000, 16, 0, 0);
  tb_free(&b, 9, 5, 0x1000); /* ... which thread 2 freed at t=5 */
  tb_alloc(&b, 0, 7, 0x2000, 16, 0, 0);
  tb_chunk_end(&b, HH_CHUNK_RAW);
  tb_chunk_begin(&b, 0, 10);
  tb_end(&b, 10, 5);
  tb_chunk_end(&b, HH_CHUNK_RAW);
  hh_reader *r = hh_reader_open_mem(b.buf, b.len, NULL, 0);
  evlist *l = merge_all(r, 0);
  assert_int_equal(hh_reader_status(r), HH_READ_OK);
  const struct {
    hh_ev_kind kind;
    uint32_t thread;
    uint64_t addr;
  } want[] = {{HH_EV_ALLOC, 2, 0x1000},
              {HH_EV_FREE, 2, 0x1000},
              {HH_EV_ALLOC, 1, 0x1000},
              {HH_EV_ALLOC, 1, 0x3000},
              {HH_EV_ALLOC, 2, 0x2000}};
  size_t got = 0;
  for (size_t i = 0; i < l->n; i++) {
    hh_ev_kind k = l->ev[i].kind;
    if (k != HH_EV_ALLOC && k != HH_EV_FREE) continue;
    assert_true(got < 5);
    assert_int_equal(k, want[got].kind);
    assert_int_equal(l->ev[i].thread, want[got].thread);
    assert_int_equal(l->ev[i].addr, want[got].addr);
    got++;
  }
  assert_int_equal(got, 5);
  free(l);
  hh_reader_close(r);
  tb_free_all(&b);
}

/* A chunk taken out of a trace: END counts more events than the file
 * holds. It read as whole. */
static void test_end_count_short(void **state) {
  (void)state;
  tb b;
  tb_init(&b, 0, 1000000000u);
  tb_chunk_begin(&b, 1, 10);
  tb_alloc(&b, 0, 10, 0x1000, 8, 0, 0);
  tb_alloc(&b, 0, 20, 0x2000, 8, 0, 0);
  tb_chunk_end(&b, HH_CHUNK_RAW);
  tb_chunk_begin(&b, 0, 100);
  tb_end(&b, 100, 5); /* 3 more were in a chunk that is gone */
  tb_chunk_end(&b, HH_CHUNK_RAW);
  for (int merged = 0; merged <= 1; merged++) {
    hh_reader *r = hh_reader_open_mem(b.buf, b.len, NULL, 0);
    hh_merge *m = merged ? hh_merge_new(r, 0) : NULL;
    hh_event ev;
    int n = 0;
    while (merged ? hh_merge_next(m, &ev) : hh_reader_next(r, &ev)) n += ev.kind == HH_EV_ALLOC;
    assert_int_equal(n, 2);
    assert_int_equal(hh_reader_status(r), HH_READ_DAMAGED);
    assert_string_equal(
        hh_reader_message(r),
        "trace damaged: its end record counts 5 events, the file holds 2 (chunks are missing)");
    if (m) hh_merge_free(m);
    hh_reader_close(r);
  }
  tb_free_all(&b);
}

/* A chunk copied into a trace: END counts fewer events than the file
 * holds. It read as whole, with the copy's events counted twice. */
static void test_end_count_long(void **state) {
  (void)state;
  tb b;
  tb_init(&b, 0, 1000000000u);
  for (int copy = 0; copy < 2; copy++) {
    tb_chunk_begin(&b, 1, 10);
    tb_alloc(&b, 0, 10, 0x1000, 8, 0, 0);
    tb_alloc(&b, 0, 20, 0x2000, 8, 0, 0);
    tb_chunk_end(&b, HH_CHUNK_RAW);
  }
  tb_chunk_begin(&b, 0, 100);
  tb_end(&b, 100, 2);
  tb_chunk_end(&b, HH_CHUNK_RAW);
  for (int merged = 0; merged <= 1; merged++) {
    hh_reader *r = hh_reader_open_mem(b.buf, b.len, NULL, 0);
    hh_merge *m = merged ? hh_merge_new(r, 0) : NULL;
    hh_event ev;
    while (merged ? hh_merge_next(m, &ev) : hh_reader_next(r, &ev)) {
    }
    assert_int_equal(hh_reader_status(r), HH_READ_DAMAGED);
    assert_string_equal(hh_reader_message(r),
                        "trace damaged: its end record counts 2 events, the file holds 4 "
                        "(chunks are there twice, or not its own)");
    if (m) hh_merge_free(m);
    hh_reader_close(r);
  }
  tb_free_all(&b);
}

/* A chunk whose stored size was damaged to run past the end of the file,
 * whole chunks after it: damaged, not cut short (it read as cut short,
 * the chunks after it dropped as a torn write's). Cut inside its last
 * chunk instead, the same trace reads as cut short. */
static void test_size_past_end_damaged(void **state) {
  (void)state;
  tb b;
  tb_init(&b, 0, 1000000000u);
  size_t first = 0, last = 0;
  for (int i = 0; i < 3; i++) {
    tb_chunk_begin(&b, 1, 10);
    tb_alloc(&b, 0, 10 + (uint64_t)i, 0x1000 + 0x100 * (uint64_t)i, 8, 0, 0);
    size_t at = tb_chunk_end(&b, i == 1 ? HH_CHUNK_ZSTD : HH_CHUNK_RAW);
    if (i == 0) first = at;
    last = at;
  }
  uint8_t *d = malloc(b.len);
  assert_non_null(d);
  memcpy(d, b.buf, b.len);
  uint32_t huge = (uint32_t)b.len; /* past the end, within the sizes allowed */
  memcpy(d + first + 8, &huge, 4);
  memcpy(d + first + 12, &huge, 4);
  hh_reader *r = hh_reader_open_mem(d, b.len, NULL, 0);
  hh_event ev;
  while (hh_reader_next(r, &ev)) {
  }
  assert_int_equal(hh_reader_status(r), HH_READ_DAMAGED);
  char want[160];
  snprintf(want, sizeof want,
           "trace damaged at byte offset %zu: chunk 0's size runs past the end of the file, and whole "
           "chunks follow",
           first);
  assert_string_equal(hh_reader_message(r), want);
  hh_reader_close(r);
  r = hh_reader_open_mem(b.buf, last + HH_CHUNK_HEADER_BYTES + 2, NULL, 0);
  while (hh_reader_next(r, &ev)) {
  }
  assert_int_equal(hh_reader_status(r), HH_READ_CUT_SHORT);
  hh_reader_close(r);
  free(d);
  tb_free_all(&b);
}

/* Thread 2's chunk is written after thread 1's although its events are
 * interleaved with them; equal times go to the lower thread index. */
static void test_merge_interleaved_chunks(void **state) {
  (void)state;
  tb b;
  tb_init(&b, 0, 1000000000u);
  tb_chunk_begin(&b, 3, 10);
  for (uint64_t t = 10; t <= 100; t += 10) tb_alloc(&b, 0, t, 0x1000 + t, t, 0, 0);
  tb_chunk_end(&b, HH_CHUNK_RAW);
  tb_chunk_begin(&b, 2, 5);
  for (uint64_t t = 5; t <= 105; t += 10) tb_alloc(&b, 0, t, 0x9000 + t, t, 0, 0);
  tb_alloc(&b, 0, 105, 0xa000, 1, 0, 0);
  tb_chunk_end(&b, HH_CHUNK_ZSTD);
  tb_chunk_begin(&b, 3, 105);
  tb_alloc(&b, 0, 105, 0xb000, 2, 0, 0);
  tb_chunk_end(&b, HH_CHUNK_RAW);
  tb_chunk_begin(&b, 0, 200);
  tb_end(&b, 200, 23);
  tb_chunk_end(&b, HH_CHUNK_RAW);

  hh_reader *r = hh_reader_open_mem(b.buf, b.len, NULL, 0);
  hh_merge *m = hh_merge_new(r, 0);
  hh_event ev;
  uint64_t last = 0;
  uint32_t last_thread = 0;
  size_t n = 0;
  while (hh_merge_next(m, &ev)) {
    if (ev.kind == HH_EV_END) break;
    assert_int_equal(ev.kind, HH_EV_ALLOC);
    assert_true(ev.time > last || (ev.time == last && ev.thread >= last_thread));
    last = ev.time;
    last_thread = ev.thread;
    n++;
  }
  assert_int_equal(n, 10 + 11 + 1 + 1);
  assert_int_equal(ev.kind, HH_EV_END);
  assert_int_equal(hh_merge_late(m), 0);
  assert_int_equal(hh_reader_status(r), HH_READ_OK);
  hh_merge_free(m);
  hh_reader_close(r);

  /* A window of one byte holds one chunk at a time: thread 2's events
   * earlier than thread 3's last are late, and counted. */
  r = hh_reader_open_mem(b.buf, b.len, NULL, 0);
  m = hh_merge_new(r, 1);
  n = 0;
  while (hh_merge_next(m, &ev)) n++;
  assert_int_equal(n, 24);
  assert_true(hh_merge_late(m) > 0);
  hh_merge_free(m);
  hh_reader_close(r);
  tb_free_all(&b);
}

/* hh_merge_offset, what a progress bar shows, counts the chunks whose
 * events were all handed out, not what the merge read ahead (the whole of
 * a trace under its window before the first event: the bar stood at 100%
 * from the start). Three chunks of one thread, then the end. */
static void test_merge_offset_follows_the_events(void **state) {
  (void)state;
  tb b;
  tb_init(&b, 0, 1000000000u);
  size_t chunk_at[3];
  for (int k = 0; k < 3; k++) {
    tb_chunk_begin(&b, 1, 100 * (uint64_t)k + 10);
    for (uint64_t t = 10; t <= 100; t += 10)
      tb_alloc(&b, 0, 100 * (uint64_t)k + t, 0x1000 + 100 * k + t, 8, 0, 0);
    chunk_at[k] = tb_chunk_end(&b, k == 1 ? HH_CHUNK_ZSTD : HH_CHUNK_RAW);
  }
  tb_chunk_begin(&b, 0, 400);
  tb_end(&b, 400, 30);
  size_t end_at = tb_chunk_end(&b, HH_CHUNK_RAW);
  uint64_t end_bytes = b.len - end_at;

  hh_reader *r = hh_reader_open_mem(b.buf, b.len, NULL, 0);
  hh_merge *m = hh_merge_new(r, 0);
  hh_event ev;
  uint64_t last = 0;
  size_t n = 0;
  while (hh_merge_next(m, &ev)) {
    uint64_t at = hh_merge_offset(m);
    assert_true(at >= last);
    last = at;
    if (ev.kind != HH_EV_ALLOC) continue;
    /* at the first event of chunk k: the file's header and the chunks
     * before it, and the END chunk (read ahead, it holds nothing timed) */
    if (n % 10 == 0) assert_int_equal(at, chunk_at[n / 10] + end_bytes);
    n++;
  }
  assert_int_equal(n, 30);
  assert_int_equal(hh_reader_offset(r), b.len);
  assert_int_equal(hh_merge_offset(m), b.len);
  assert_int_equal(hh_reader_status(r), HH_READ_OK);
  hh_merge_free(m);
  hh_reader_close(r);
  tb_free_all(&b);
}

/* Four threads whose events interleave in time, with many equal times, in
 * chunks of 50 written round-robin: the merge's order is exactly that of a
 * naive merge (each step takes, among the threads' next events, the
 * earliest; equal times: frees first, then the lower thread), each thread's
 * events in their order. The merge hands runs of one thread out without its
 * heap (reader.c, "runs"): every run here is broken by another thread. */
typedef struct want_ev {
  uint64_t time, addr;
  uint32_t thread;
  hh_ev_kind kind;
} want_ev;

static bool want_before(const want_ev *a, const want_ev *b) {
  if (a->time != b->time) return a->time < b->time;
  int ra = a->kind == HH_EV_ALLOC, rb = b->kind == HH_EV_ALLOC;
  return ra < rb || (ra == rb && a->thread < b->thread);
}

static void test_merge_runs_match_a_naive_merge(void **state) {
  (void)state;
  enum { THREADS = 4, PER = 400, CHUNK = 50 };
  static want_ev per[THREADS * PER], want[THREADS * PER];
  size_t n = 0;
  uint64_t rng = 88172645463325252ull;
  for (uint32_t t = 1; t <= THREADS; t++) {
    uint64_t time = 0, live[PER];
    size_t nlive = 0;
    for (uint32_t i = 0; i < PER; i++) {
      rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
      time += rng % 3; /* equal times are common */
      bool do_free = nlive > 0 && (rng >> 8) % 2;
      want_ev *w = &per[n++];
      *w = (want_ev){time, 0, t, do_free ? HH_EV_FREE : HH_EV_ALLOC};
      w->addr = do_free ? live[--nlive] : 0x100000ull * t + 0x100 * i;
      if (!do_free) live[nlive++] = w->addr;
    }
  }
  tb b;
  tb_init(&b, 0, 1000000000u);
  for (uint32_t c = 0; c < PER / CHUNK; c++) {
    for (uint32_t t = 1; t <= THREADS; t++) {
      const want_ev *w = &per[(t - 1) * PER + c * CHUNK];
      tb_chunk_begin(&b, t, w[0].time);
      for (uint32_t i = 0; i < CHUNK; i++) {
        if (w[i].kind == HH_EV_FREE)
          tb_free(&b, 9, w[i].time, w[i].addr);
        else
          tb_alloc(&b, 0, w[i].time, w[i].addr, 16, 0, 0);
      }
      tb_chunk_end(&b, c % 2 ? HH_CHUNK_ZSTD : HH_CHUNK_RAW);
    }
  }
  tb_chunk_begin(&b, 0, 100000);
  tb_end(&b, 100000, THREADS * PER);
  tb_chunk_end(&b, HH_CHUNK_RAW);
  size_t next[THREADS] = {0};
  for (size_t k = 0; k < n; k++) {
    const want_ev *best = NULL;
    uint32_t bt = 0;
    for (uint32_t t = 0; t < THREADS; t++) {
      const want_ev *w = next[t] < PER ? &per[t * PER + next[t]] : NULL;
      if (w && (!best || want_before(w, best))) best = w, bt = t;
    }
    want[k] = *best;
    next[bt]++;
  }
  hh_reader *r = hh_reader_open_mem(b.buf, b.len, NULL, 0);
  hh_merge *m = hh_merge_new(r, 0);
  hh_event ev;
  size_t got = 0;
  while (hh_merge_next(m, &ev)) {
    if (ev.kind != HH_EV_ALLOC && ev.kind != HH_EV_FREE) continue;
    assert_true(got < n);
    if (ev.thread != want[got].thread || ev.time != want[got].time || ev.kind != want[got].kind ||
        ev.addr != want[got].addr)
      fail_msg("event %zu: thread %u t=%" PRIu64 " %s %#" PRIx64 ", want thread %u t=%" PRIu64
               " %s %#" PRIx64,
               got, ev.thread, ev.time, hh_ev_kind_name(ev.kind), ev.addr, want[got].thread, want[got].time,
               hh_ev_kind_name(want[got].kind), want[got].addr);
    got++;
  }
  assert_int_equal(got, n);
  assert_int_equal(hh_merge_late(m), 0);
  assert_int_equal(hh_reader_status(r), HH_READ_OK);
  hh_merge_free(m);
  hh_reader_close(r);
  tb_free_all(&b);
}

static void expect_open_error(const void *data, size_t n, const char *want) {
  char err[256] = "";
  hh_reader *r = hh_reader_open_mem(data, n, err, sizeof err);
  assert_null(r);
  if (!strstr(err, want)) fail_msg("message \"%s\" lacks \"%s\"", err, want);
}

static void test_header_refusals(void **state) {
  (void)state;
  expect_open_error("", 0, "not a heaphook trace");
  expect_open_error("hello world, this is text", 25, "not a heaphook trace");
  tb b;
  tb_init(&b, 0, 1000000000u);
  expect_open_error(b.buf, 40, "truncated header (40 of 64 bytes)");
  expect_open_error(b.buf, 8, "truncated header (8 of 64 bytes)");
  hh_trace_header h;
  memcpy(&h, b.buf, sizeof h);
  h.version = 7;
  expect_open_error(&h, sizeof h, "trace format version 7 is newer than this heaphook reads (5)");
  h.version = 0;
  expect_open_error(&h, sizeof h, "version 0");
  h.version = 1;
  h.ticks_per_second = 0;
  expect_open_error(&h, sizeof h, "0 ticks per second");
  tb_free_all(&b);

  char err[256];
  assert_null(hh_reader_open("/nonexistent/x.hhtrace", err, sizeof err));
  assert_string_equal(err, "cannot open /nonexistent/x.hhtrace: No such file or directory");
  assert_null(hh_reader_open("/", err, sizeof err));
  assert_non_null(strstr(err, "is a directory"));
}

/* A header alone: no chunks, no end. */
static void test_header_only_has_no_end(void **state) {
  (void)state;
  tb b;
  tb_init(&b, 0, 1000000000u);
  hh_reader *r = hh_reader_open_mem(b.buf, b.len, NULL, 0);
  hh_event ev;
  assert_int_equal(hh_reader_next(r, &ev), 0);
  assert_int_equal(hh_reader_status(r), HH_READ_NO_END);
  assert_non_null(strstr(hh_reader_message(r), "no end record after 0 chunks"));
  hh_reader_close(r);
  tb_free_all(&b);
}

/* EXEC records (a program that execs another): one followed by more
 * records and END is an exec that failed; one where the trace ends makes
 * the trace whole, the last event of the merge, and hh_reader_exec names
 * the program. A record cut inside its string is damage. */
static void build_exec(tb *b, bool then_end) {
  tb_init(b, 0, 1000000000u);
  tb_chunk_begin(b, 0, 0);
  tb_stack(b, 1, 0, 0x1000);
  tb_chunk_end(b, HH_CHUNK_RAW);
  tb_chunk_begin(b, 1, 100);
  tb_alloc(b, 0, 100, 0x5000, 64, 1, 0);
  tb_alloc(b, 0, 200, 0x6000, 64, 1, 0);
  tb_chunk_end(b, HH_CHUNK_RAW);
  tb_chunk_begin(b, 0, 300);
  tb_exec(b, 300, 2, "/no/such/program"); /* failed: the program goes on */
  tb_chunk_end(b, HH_CHUNK_RAW);
  tb_chunk_begin(b, 1, 400);
  tb_free(b, 9, 400, 0x5000);
  tb_alloc(b, 0, 500, 0x7000, 64, 1, 0);
  tb_chunk_end(b, HH_CHUNK_RAW);
  tb_chunk_begin(b, 0, 600);
  if (then_end)
    tb_end(b, 600, 4);
  else
    tb_exec(b, 600, 4, "/usr/bin/next");
  tb_chunk_end(b, HH_CHUNK_ZSTD);
}

/* A failed exec, more events, then nothing: the program was killed. It
 * read as whole ("exec'd /no/such/program; the trace ends there"). */
static void test_exec_failed_then_killed(void **state) {
  (void)state;
  tb b;
  build_exec(&b, true);
  /* drop the last chunk (END) */
  size_t cut = b.len;
  for (size_t off = HH_TRACE_HEADER_BYTES; off < b.len;) {
    uint32_t stored;
    memcpy(&stored, b.buf + off + 8, 4);
    if (off + HH_CHUNK_HEADER_BYTES + stored == b.len) cut = off;
    off += HH_CHUNK_HEADER_BYTES + stored;
  }
  assert_true(cut < b.len);
  for (int merged = 0; merged <= 1; merged++) {
    hh_reader *r = hh_reader_open_mem(b.buf, cut, NULL, 0);
    hh_merge *m = merged ? hh_merge_new(r, 0) : NULL;
    hh_event ev;
    int n = 0, nexec = 0;
    while (merged ? hh_merge_next(m, &ev) : hh_reader_next(r, &ev)) {
      n += ev.kind == HH_EV_ALLOC || ev.kind == HH_EV_FREE;
      nexec += ev.kind == HH_EV_EXEC;
    }
    assert_int_equal(n, 4);
    assert_int_equal(nexec, merged ? 0 : 1); /* file order: the failed one, where it is */
    assert_int_equal(hh_reader_status(r), HH_READ_NO_END);
    assert_null(hh_reader_exec(r));
    if (m) hh_merge_free(m);
    hh_reader_close(r);
  }
  tb_free_all(&b);
}

static void test_exec_record(void **state) {
  (void)state;
  for (int then_end = 0; then_end <= 1; then_end++) {
    tb b;
    build_exec(&b, then_end);
    /* file order: both EXEC records where they are */
    hh_reader *r = hh_reader_open_mem(b.buf, b.len, NULL, 0);
    hh_event ev;
    const char *execs[3] = {0};
    uint64_t exec_events[3] = {0}, exec_time[3] = {0};
    int nexec = 0, nend = 0;
    while (hh_reader_next(r, &ev)) {
      if (ev.kind == HH_EV_EXEC && nexec < 3) {
        exec_time[nexec] = ev.time;
        exec_events[nexec] = ev.u.exec.events;
        execs[nexec++] = ev.u.exec.path;
      }
      nend += ev.kind == HH_EV_END;
    }
    assert_int_equal(hh_reader_status(r), HH_READ_OK);
    assert_string_equal(hh_reader_message(r), "");
    assert_int_equal(nexec, then_end ? 1 : 2);
    assert_int_equal(nend, then_end);
    assert_string_equal(execs[0], "/no/such/program");
    assert_int_equal(exec_events[0], 2);
    assert_int_equal(exec_time[0], 300);
    if (then_end) {
      assert_null(hh_reader_exec(r));
    } else {
      assert_string_equal(execs[1], "/usr/bin/next");
      assert_int_equal(exec_events[1], 4);
      assert_string_equal(hh_reader_exec(r), "/usr/bin/next");
    }
    hh_reader_close(r);
    /* merged: the last event is the EXEC that ended the trace, or END */
    r = hh_reader_open_mem(b.buf, b.len, NULL, 0);
    hh_merge *m = hh_merge_new(r, 0);
    hh_event last = {0};
    int n = 0;
    while (hh_merge_next(m, &ev)) {
      last = ev;
      n += ev.kind == HH_EV_ALLOC || ev.kind == HH_EV_FREE;
    }
    assert_int_equal(n, 4);
    assert_int_equal(hh_reader_status(r), HH_READ_OK);
    assert_int_equal(last.kind, then_end ? HH_EV_END : HH_EV_EXEC);
    assert_int_equal(last.time, 600);
    if (!then_end) {
      assert_string_equal(last.u.exec.path, "/usr/bin/next");
      assert_int_equal(last.u.exec.events, 4);
    }
    hh_merge_free(m);
    hh_reader_close(r);
    tb_free_all(&b);
  }
  /* an EXEC whose string runs past its chunk */
  tb b;
  tb_init(&b, 0, 1000000000u);
  tb_chunk_begin(&b, 0, 0);
  tb_bytes(&b, (const uint8_t[]){HH_REC_EXEC}, 1);
  tb_varint(&b, 10);
  tb_varint(&b, 0);
  tb_varint(&b, 200); /* 200 bytes of path announced, 3 given */
  tb_bytes(&b, "abc", 3);
  tb_chunk_end(&b, HH_CHUNK_RAW);
  hh_reader *r = hh_reader_open_mem(b.buf, b.len, NULL, 0);
  hh_event ev;
  while (hh_reader_next(r, &ev)) {
  }
  assert_int_equal(hh_reader_status(r), HH_READ_DAMAGED);
  assert_non_null(strstr(hh_reader_message(r), "record 0x49 runs past the end of its chunk"));
  assert_null(hh_reader_exec(r));
  hh_reader_close(r);
  tb_free_all(&b);
}

/* Cut the trace at every byte: never a crash; a cut inside a chunk is "cut
 * short after N chunks" with exactly the events of the N whole chunks; a cut
 * between chunks is "no end"; the whole file reads OK. Both readers. */
static void check_cut_everywhere(uint32_t enc, int merged) {
  tb b;
  build_small(&b, enc);
  /* chunk boundaries and events per chunk, from a full read */
  size_t bounds[8], nb = 0;
  {
    size_t off = HH_TRACE_HEADER_BYTES;
    bounds[nb++] = off;
    while (off < b.len) {
      uint32_t stored;
      memcpy(&stored, b.buf + off + 8, 4);
      off += HH_CHUNK_HEADER_BYTES + stored;
      bounds[nb++] = off;
    }
    assert_int_equal(off, b.len);
  }
  const size_t events_before[] = {0, 0, 4, 6, 6}; /* alloc/free/realloc events in chunks [0, i) */
  for (size_t cut = 0; cut <= b.len; cut++) {
    uint8_t *copy = malloc(cut ? cut : 1); /* exact size: ASan sees any overread */
    memcpy(copy, b.buf, cut);
    char err[256];
    hh_reader *r = hh_reader_open_mem(copy, cut, err, sizeof err);
    if (cut < HH_TRACE_HEADER_BYTES) {
      assert_null(r);
      assert_non_null(strstr(err, cut < 8 ? "not a heaphook trace" : "truncated header"));
      free(copy);
      continue;
    }
    assert_non_null(r);
    evlist *l = merged ? merge_all(r, 0) : read_all(r);
    size_t whole = 0;
    while (whole + 1 < nb && bounds[whole + 1] <= cut) whole++;
    size_t events = count_kind(l, HH_EV_ALLOC) + count_kind(l, HH_EV_FREE) + count_kind(l, HH_EV_REALLOC);
    assert_int_equal(events, events_before[whole]);
    assert_int_equal(hh_reader_chunks(r), whole);
    if (cut == b.len) {
      assert_int_equal(hh_reader_status(r), HH_READ_OK);
    } else if (cut == bounds[whole]) {
      assert_int_equal(hh_reader_status(r), HH_READ_NO_END);
    } else {
      assert_int_equal(hh_reader_status(r), HH_READ_CUT_SHORT);
      char want[128];
      snprintf(want, sizeof want, "trace cut short after %zu chunk%s; the rest of the run is missing", whole,
               whole == 1 ? "" : "s");
      assert_string_equal(hh_reader_message(r), want);
    }
    free(l);
    hh_reader_close(r);
    free(copy);
  }
  tb_free_all(&b);
}

static void test_cut_at_every_byte_raw(void **state) {
  (void)state;
  check_cut_everywhere(HH_CHUNK_RAW, 0);
  check_cut_everywhere(HH_CHUNK_RAW, 1);
}
static void test_cut_at_every_byte_zstd(void **state) {
  (void)state;
  check_cut_everywhere(HH_CHUNK_ZSTD, 0);
  check_cut_everywhere(HH_CHUNK_ZSTD, 1);
}

/* Flip each bit of every byte after the header: never a crash; a flip in a
 * payload is a checksum mismatch ("damaged"), reported with the offset of
 * its chunk. */
static void check_flips(uint32_t enc) {
  tb b;
  build_small(&b, enc);
  uint8_t *copy = malloc(b.len);
  for (size_t i = HH_TRACE_HEADER_BYTES; i < b.len; i++) {
    for (int bit = 0; bit < 8; bit++) {
      memcpy(copy, b.buf, b.len);
      copy[i] ^= (uint8_t)(1u << bit);
      hh_reader *r = hh_reader_open_mem(copy, b.len, NULL, 0);
      assert_non_null(r);
      evlist *l = read_all(r);
      free(l);
      hh_read_status st = hh_reader_status(r);
      hh_reader_close(r);
      r = hh_reader_open_mem(copy, b.len, NULL, 0);
      l = merge_all(r, 0);
      free(l);
      assert_int_equal(hh_reader_status(r), st);
      hh_reader_close(r);
      /* which chunk, and is the byte in its payload? */
      size_t off = HH_TRACE_HEADER_BYTES;
      for (;;) {
        uint32_t stored;
        memcpy(&stored, b.buf + off + 8, 4);
        size_t next = off + HH_CHUNK_HEADER_BYTES + stored;
        if (i < next) {
          if (i >= off + HH_CHUNK_HEADER_BYTES || (i >= off && i < off + 4) ||
              (i >= off + 16 && i < off + 20))
            assert_int_equal(st, HH_READ_DAMAGED); /* payload, magic, checksum */
          break;
        }
        off = next;
      }
    }
  }
  free(copy);
  tb_free_all(&b);
}

static void test_flipped_bits_raw(void **state) {
  (void)state;
  check_flips(HH_CHUNK_RAW);
}
static void test_flipped_bits_zstd(void **state) {
  (void)state;
  check_flips(HH_CHUNK_ZSTD);
}

/* One chunk whose payload is made by fill(); returns the status after
 * reading everything, the events handed out in *nev, the message in msg. */
static hh_read_status read_one_chunk(void (*fill)(tb *), uint32_t enc, size_t *nev, char *msg,
                                     size_t msg_size) {
  tb b;
  tb_init(&b, 0, 1000000000u);
  tb_chunk_begin(&b, 1, 0);
  fill(&b);
  tb_chunk_end(&b, enc);
  hh_read_status st[2];
  for (int merged = 0; merged < 2; merged++) {
    hh_reader *r = hh_reader_open_mem(b.buf, b.len, NULL, 0);
    /* a one-byte window: the merge holds one chunk at a time (a chunk cut
     * at its damage once made the window never empty: a hang) */
    evlist *l = merged ? merge_all(r, 1) : read_all(r);
    if (!merged) *nev = l->n;
    free(l);
    st[merged] = hh_reader_status(r);
    if (!merged) snprintf(msg, msg_size, "%s", hh_reader_message(r));
    hh_reader_close(r);
  }
  assert_int_equal(st[0], st[1]);
  tb_free_all(&b);
  return st[0];
}

static void fill_unknown_type(tb *b) {
  tb_alloc(b, 0, 5, 0x1000, 8, 0, 0);
  uint8_t t = 0x50;
  tb_bytes(b, &t, 1);
  tb_alloc(b, 0, 6, 0x2000, 8, 0, 0);
}
static void fill_alloc_with_free_fn(tb *b) {
  uint8_t t = HH_REC_ALLOC + 9;
  tb_bytes(b, &t, 1);
  tb_varint(b, 0);
  tb_varint(b, 0);
}
static void fill_long_varint(tb *b) {
  uint8_t t[12] = {HH_REC_ALLOC, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
  tb_bytes(b, t, sizeof t);
}
static void fill_truncated_record(tb *b) {
  uint8_t t[3] = {HH_REC_ALLOC, 0x01, 0x02};
  tb_bytes(b, t, sizeof t);
}
static void fill_huge_string(tb *b) {
  uint8_t t = HH_REC_THREAD;
  tb_bytes(b, &t, 1);
  tb_varint(b, 1);
  tb_varint(b, 2);
  tb_varint(b, 1ull << 40);
  tb_bytes(b, "abc", 3);
}
static void fill_huge_segments(tb *b) {
  uint8_t t = HH_REC_MODULE_LOAD;
  tb_bytes(b, &t, 1);
  tb_varint(b, 0x1000);
  tb_varint(b, 1);
  tb_bytes(b, "x", 1);
  tb_varint(b, 0);
  tb_varint(b, UINT64_MAX);
}
static void fill_huge_argc(tb *b) {
  uint8_t t = HH_REC_COMMAND;
  tb_bytes(b, &t, 1);
  tb_varint(b, 1ull << 62);
  tb_bytes(b, "\x01x", 2);
}
static void fill_undefined_stack(tb *b) { tb_alloc(b, 0, 5, 0x1000, 8, 77, 0); }
static void fill_undefined_parent(tb *b) { tb_stack(b, 1, 5, 0x1234); }
static void fill_stack_twice(tb *b) {
  tb_stack(b, 1, 0, 0x1234);
  tb_stack(b, 1, 0, 0x1235);
}
static void fill_dangling_weight(tb *b) { tb_weight(b, 100); }
static void fill_weight_before_free(tb *b) {
  tb_alloc(b, 0, 5, 0x1000, 8, 0, 0);
  tb_weight(b, 100);
  tb_free(b, 9, 6, 0x1000);
}

/* sizes near 2^64 wrapped the report's sums in a trace read as whole */
static void fill_huge_size(tb *b) {
  tb_alloc(b, 0, 5, 0x1000, 8, 0, 0);
  tb_alloc(b, 0, 6, 0x2000, UINT64_MAX, 0, 0);
}

/* then weights near 2^64, or many sizes just under 2^57, still did */
static void fill_huge_weight(tb *b) {
  tb_alloc(b, 0, 5, 0x1000, 8, 0, 0);
  tb_weight(b, UINT64_MAX - 7);
  tb_alloc(b, 0, 6, 0x2000, 8, 0, 0);
}
static void fill_huge_sum(tb *b) {
  for (int i = 0; i < 40; i++)
    tb_alloc(b, 0, (uint64_t)i + 1, 0x1000 + 0x1000 * (uint64_t)i, 1ull << 57, 0, 0);
}

static void test_damaged_records(void **state) {
  (void)state;
  static const struct {
    void (*fill)(tb *);
    const char *what;
    size_t events;
  } cases[] = {
      {fill_unknown_type, "unknown record type 0x50", 1},
      {fill_alloc_with_free_fn, "unknown record type 0x19", 0},
      {fill_long_varint, "varint longer than 10 bytes in record 0x10", 0},
      {fill_truncated_record, "runs past the end of its chunk", 0},
      {fill_huge_string, "string in record 0x41 runs past the end of its chunk", 0},
      {fill_huge_segments, "segments runs past the end", 0},
      {fill_huge_argc, "arguments runs past the end", 0},
      {fill_undefined_stack, "stack id 77 used before it was defined", 0},
      {fill_undefined_parent, "undefined parent 5", 0},
      {fill_stack_twice, "stack id 1 defined twice", 1},
      {fill_dangling_weight, "sample weight not followed by an allocation", 0},
      {fill_weight_before_free, "sample weight not followed by an allocation", 1},
      {fill_huge_size, "an allocation of 18446744073709551615 bytes, more than an address space", 1},
      {fill_huge_weight, "a sample weight of 18446744073709551608 bytes, more than a sampling period allows",
       1},
      {fill_huge_sum, "the allocations add up to more than 2^62 bytes", 32},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    for (uint32_t enc = 0; enc < 2; enc++) {
      size_t nev;
      char msg[320];
      hh_read_status st = read_one_chunk(cases[i].fill, enc, &nev, msg, sizeof msg);
      assert_int_equal(st, HH_READ_DAMAGED);
      if (!strstr(msg, cases[i].what) || strncmp(msg, "trace damaged at byte offset ", 29) != 0)
        fail_msg("case %zu: \"%s\" lacks \"%s\"", i, msg, cases[i].what);
      assert_int_equal(nev, cases[i].events);
    }
  }
  /* in a raw chunk the offset is the record's own: header 64 + chunk
   * header 24 + CHUNK_TIME (2 bytes) + the first ALLOC (6 bytes) */
  size_t nev;
  char msg[320];
  read_one_chunk(fill_unknown_type, HH_CHUNK_RAW, &nev, msg, sizeof msg);
  assert_string_equal(msg, "trace damaged at byte offset 96: unknown record type 0x50 (chunk 0)");
}

static void put32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }

static void test_damaged_chunk_headers(void **state) {
  (void)state;
  tb b;
  build_small(&b, HH_CHUNK_ZSTD);
  uint8_t *copy = malloc(b.len);
  size_t c0 = HH_TRACE_HEADER_BYTES;
  static const struct {
    size_t field;
    uint32_t value;
    hh_read_status st;
    const char *what;
  } cases[] = {
      {4, 7, HH_READ_DAMAGED, "unknown chunk encoding 7"},
      {12, HH_CHUNK_MAX_DECODED + 1, HH_READ_DAMAGED, "impossible chunk sizes"},
      {8, 0xffffffffu, HH_READ_DAMAGED, "impossible chunk sizes"},
      /* (whole chunks follow: not a torn write; it read as cut short) */
      {8, 1000000, HH_READ_DAMAGED, "chunk 0's size runs past the end of the file, and whole chunks follow"},
      {12, 3, HH_READ_DAMAGED, "does not decompress"},
      {16, 0, HH_READ_DAMAGED, "checksum mismatch in chunk 0"},
      {0, 0x4b434849, HH_READ_DAMAGED, "trace damaged at byte offset 64: bad chunk magic"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    memcpy(copy, b.buf, b.len);
    put32(copy + c0 + cases[i].field, cases[i].value);
    hh_reader *r = hh_reader_open_mem(copy, b.len, NULL, 0);
    evlist *l = read_all(r);
    assert_int_equal(l->n, 0);
    free(l);
    assert_int_equal(hh_reader_status(r), cases[i].st);
    if (!strstr(hh_reader_message(r), cases[i].what))
      fail_msg("case %zu: \"%s\" lacks \"%s\"", i, hh_reader_message(r), cases[i].what);
    hh_reader_close(r);
  }
  /* a raw chunk whose stored and decoded sizes differ */
  tb_free_all(&b);
  build_small(&b, HH_CHUNK_RAW);
  free(copy);
  copy = malloc(b.len);
  memcpy(copy, b.buf, b.len);
  put32(copy + c0 + 12, 5);
  hh_reader *r = hh_reader_open_mem(copy, b.len, NULL, 0);
  free(read_all(r));
  assert_int_equal(hh_reader_status(r), HH_READ_DAMAGED);
  hh_reader_close(r);
  free(copy);
  tb_free_all(&b);
}

/* The merge leaves program threads' compressed chunks compressed until
 * their turn comes (the read-ahead window then holds compressed bytes); a
 * chunk that does not decompress must still be reported as reading in file
 * order reports it, with the same events before it. */
static void test_merge_damage_in_deferred_chunk(void **state) {
  (void)state;
  tb b;
  build_small(&b, HH_CHUNK_ZSTD);
  /* the third chunk: thread 2's */
  size_t off = HH_TRACE_HEADER_BYTES;
  for (int i = 0; i < 2; i++) {
    uint32_t stored;
    memcpy(&stored, b.buf + off + 8, 4);
    off += HH_CHUNK_HEADER_BYTES + stored;
  }
  uint32_t thread, decoded;
  memcpy(&thread, b.buf + off + 20, 4);
  memcpy(&decoded, b.buf + off + 12, 4);
  assert_int_equal(thread, 2);
  const uint32_t sizes[] = {3, decoded + 1};
  for (size_t i = 0; i < 2; i++) {
    uint8_t *copy = malloc(b.len);
    memcpy(copy, b.buf, b.len);
    put32(copy + off + 12, sizes[i]);
    hh_reader *r = hh_reader_open_mem(copy, b.len, NULL, 0);
    evlist *file = read_all(r);
    char want[320];
    snprintf(want, sizeof want, "%s", hh_reader_message(r));
    assert_int_equal(hh_reader_status(r), HH_READ_DAMAGED);
    assert_non_null(strstr(want, "chunk 2 does not decompress"));
    hh_reader_close(r);
    r = hh_reader_open_mem(copy, b.len, NULL, 0);
    evlist *merged = merge_all(r, 0);
    assert_int_equal(hh_reader_status(r), HH_READ_DAMAGED);
    assert_string_equal(hh_reader_message(r), want);
    /* thread 1's four events, in both orders; nothing of thread 2 */
    assert_int_equal(
        count_kind(file, HH_EV_ALLOC) + count_kind(file, HH_EV_REALLOC) + count_kind(file, HH_EV_FREE), 4);
    assert_int_equal(
        count_kind(merged, HH_EV_ALLOC) + count_kind(merged, HH_EV_REALLOC) + count_kind(merged, HH_EV_FREE),
        4);
    for (size_t j = 0; j < merged->n; j++) assert_int_not_equal(merged->ev[j].thread, 2);
    free(file);
    free(merged);
    hh_reader_close(r);
    free(copy);
  }
  tb_free_all(&b);
}

/* Stack ids that are not 1, 2, 3...: the index map takes over. */
static void test_sparse_stack_ids(void **state) {
  (void)state;
  tb b;
  tb_init(&b, HH_TRACE_FLAG_STACKS, 1000000000u);
  tb_chunk_begin(&b, 0, 0);
  tb_stack(&b, 1, 0, 0x10);
  tb_stack(&b, 2, 1, 0x20);
  tb_stack(&b, 1ull << 60, 2, 0x30);
  tb_stack(&b, 5, 1ull << 60, 0x40);
  for (uint64_t i = 0; i < 2000; i++) tb_stack(&b, 1000000 + i * 7, i ? 1000000 + (i - 1) * 7 : 5, i);
  tb_alloc(&b, 0, 1, 0x100, 1, 1ull << 60, 0);
  tb_end(&b, 2, 1);
  tb_chunk_end(&b, HH_CHUNK_ZSTD);
  hh_reader *r = hh_reader_open_mem(b.buf, b.len, NULL, 0);
  evlist *l = read_all(r);
  assert_int_equal(hh_reader_status(r), HH_READ_OK);
  assert_int_equal(hh_reader_stack_count(r), 2004);
  const hh_stack_node *n = hh_reader_stack(r, 5);
  assert_non_null(n);
  assert_int_equal(n->depth, 4);
  assert_int_equal(n->parent, 1ull << 60);
  assert_int_equal(hh_reader_stack_index(r, 1ull << 60), 3);
  assert_int_equal(hh_reader_stack_at(r, 3)->ip, 0x30);
  assert_int_equal(hh_reader_stack(r, 1000000 + 1999 * 7)->depth, 2004);
  assert_null(hh_reader_stack(r, 3));
  assert_int_equal(hh_reader_stack_index(r, 0), 0);
  free(l);
  hh_reader_close(r);
  tb_free_all(&b);
}

static void test_sampled_weights_and_clock(void **state) {
  (void)state;
  tb b;
  tb_init(&b, HH_TRACE_FLAG_SAMPLED, 1000000u); /* microsecond ticks */
  tb_chunk_begin(&b, 1, 3);
  tb_weight(&b, 524288);
  tb_alloc(&b, 0, 3, 0x1000, 16, 0, 0);
  tb_alloc(&b, 0, 4, 0x2000, 1 << 20, 0, 0); /* big: no weight record */
  tb_weight(&b, 600000);
  tb_realloc(&b, 2, 5, 0x1000, 0x3000, 32, 0);
  tb_free(&b, 9, 7, 0x2000);
  tb_end(&b, 9, 4);
  tb_chunk_end(&b, HH_CHUNK_RAW);
  hh_reader *r = hh_reader_open_mem(b.buf, b.len, NULL, 0);
  evlist *l = read_all(r);
  assert_int_equal(hh_reader_status(r), HH_READ_OK);
  assert_int_equal(l->n, 5);
  assert_int_equal(l->ev[0].weight, 524288);
  assert_int_equal(l->ev[0].time, 3000);
  assert_int_equal(l->ev[1].weight, 1 << 20);
  assert_int_equal(l->ev[2].weight, 600000);
  assert_int_equal(l->ev[2].time, 5000);
  assert_int_equal(l->ev[3].weight, 0);
  assert_int_equal(l->ev[4].time, 9000);
  assert_int_equal(hh_reader_ticks_to_ns(r, 7), 7000);
  assert_int_equal(hh_reader_ticks_to_ns(r, 1ull << 62), UINT64_MAX); /* saturates */
  free(l);
  hh_reader_close(r);
  tb_free_all(&b);
}

static void test_modules_epochs_and_renames(void **state) {
  (void)state;
  tb b;
  tb_init(&b, HH_TRACE_FLAG_STACKS, 1000000000u);
  tb_chunk_begin(&b, 0, 0);
  tb_segment seg = {0x7000, 0x1000, 0};
  tb_module(&b, 0x7000, "/lib/a.so", "aa", 1, &seg);
  tb_stack(&b, 1, 0, 0x7010);
  tb_unload(&b, 0x7000);
  tb_unload(&b, 0x9999); /* nothing there: not an error */
  tb_module(&b, 0x7000, "/lib/b.so", "", 1, &seg);
  tb_stack(&b, 2, 0, 0x7010);
  tb_thread(&b, 1, 10, "main");
  tb_thread(&b, 1, 10, "renamed");
  tb_end(&b, 1, 0);
  tb_chunk_end(&b, HH_CHUNK_RAW);
  hh_reader *r = hh_reader_open_mem(b.buf, b.len, NULL, 0);
  evlist *l = read_all(r);
  assert_int_equal(hh_reader_status(r), HH_READ_OK);
  const hh_trace_module *a = hh_reader_module(r, 0), *bm = hh_reader_module(r, 1);
  assert_int_equal(a->load_epoch, 1);
  assert_int_equal(a->unload_epoch, 2);
  assert_int_equal(bm->load_epoch, 3);
  assert_int_equal(bm->unload_epoch, UINT32_MAX);
  assert_int_equal(hh_reader_stack(r, 1)->epoch, 1);
  assert_int_equal(hh_reader_stack(r, 2)->epoch, 3);
  assert_ptr_equal(l->ev[2].u.module, a);
  assert_null(l->ev[3].u.module);
  assert_int_equal(hh_reader_thread_count(r), 1);
  assert_string_equal(hh_reader_thread(r, 1)->name, "renamed");
  assert_string_equal(l->ev[6].u.thread->name, "main"); /* still valid */
  free(l);
  hh_reader_close(r);
  tb_free_all(&b);
}

/* A file is mapped at open and its chunks used in place; what is written
 * after the open (a trace read while the program still runs) is read
 * through the file: the same events as the whole file read at once. The
 * cut falls inside a chunk, so that chunk is half mapped, half not. */
static void test_file_grown_after_open(void **state) {
  (void)state;
  tb b;
  build_small(&b, HH_CHUNK_ZSTD);
  hh_reader *whole = hh_reader_open_mem(b.buf, b.len, NULL, 0);
  evlist *want = read_all(whole);
  assert_int_equal(hh_reader_status(whole), HH_READ_OK);
  hh_reader_close(whole);
  for (int merged = 0; merged < 2; merged++) {
    char path[] = "/tmp/hh_reader_test_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    size_t first = b.len / 2;
    assert_int_equal(write(fd, b.buf, first), (ssize_t)first);
    char err[256];
    hh_reader *r = hh_reader_open(path, err, sizeof err);
    assert_non_null(r);
    assert_int_equal(write(fd, b.buf + first, b.len - first), (ssize_t)(b.len - first));
    close(fd);
    evlist *l = merged ? merge_all(r, 0) : read_all(r);
    assert_int_equal(hh_reader_status(r), HH_READ_OK);
    assert_int_equal(hh_reader_chunks(r), 4);
    assert_int_equal(l->n, want->n);
    for (hh_ev_kind k = HH_EV_ALLOC; k <= HH_EV_END; k++)
      assert_int_equal(count_kind(l, k), count_kind(want, k));
    if (!merged)
      for (size_t i = 0; i < l->n; i++) {
        assert_int_equal(l->ev[i].kind, want->ev[i].kind);
        assert_int_equal(l->ev[i].time, want->ev[i].time);
        assert_int_equal(l->ev[i].addr, want->ev[i].addr);
      }
    free(l);
    hh_reader_close(r);
    unlink(path);
  }
  free(want);
  tb_free_all(&b);
}

/* A small file that decodes to a million THREAD records (renames of one
 * thread: each kept, ~70 bytes a record) read under a memory limit of
 * 1 MiB: in file order and merged, the events before that chunk are
 * handed out, reading stops in it with HH_READ_LIMIT and a message that
 * names the limit, and the tables hold the limit and less than a step of
 * growth more. Before, nothing stopped it: a 16 KB file of ten such
 * chunks took the report past 3 GB until an allocation failed (abort). */
static void test_memory_limit(void **state) {
  (void)state;
  tb b;
  tb_init(&b, HH_TRACE_FLAG_STACKS | HH_TRACE_FLAG_ZSTD, 1000000000u);
  tb_chunk_begin(&b, 0, 0);
  tb_thread(&b, 1, 100, "main");
  tb_stack(&b, 1, 0, 0x401000);
  tb_chunk_end(&b, HH_CHUNK_RAW);
  tb_chunk_begin(&b, 1, 10);
  for (int i = 0; i < 3; i++) tb_alloc(&b, 0, 10 + i, 0x10000 + 64 * i, 32, 1, 0);
  tb_chunk_end(&b, HH_CHUNK_RAW);
  tb_chunk_begin(&b, 0, 15);
  for (int i = 0; i < 1000000; i++) tb_thread(&b, 1, 100, "");
  size_t bomb = tb_chunk_end(&b, HH_CHUNK_ZSTD);
  tb_chunk_begin(&b, 1, 20);
  for (int i = 0; i < 3; i++) tb_alloc(&b, 0, 20 + i, 0x20000 + 64 * i, 32, 1, 0);
  tb_chunk_end(&b, HH_CHUNK_RAW);
  tb_chunk_begin(&b, 0, 30);
  tb_end(&b, 30, 6);
  tb_chunk_end(&b, HH_CHUNK_RAW);
  assert_true(b.len < 4096);
  char want[320];
  snprintf(
      want, sizeof want,
      "trace read up to byte offset %zu (chunk 2): its stacks, threads, modules, names and thread models "
      "take more than 1 MiB, the memory limit (HEAPHOOK_MEMORY_LIMIT raises it)",
      bomb);
  for (int merged = 0; merged < 3; merged++) {
    char err[256];
    hh_reader *r = hh_reader_open_mem(b.buf, b.len, err, sizeof err);
    assert_non_null(r);
    assert_int_equal(hh_reader_memory_limit(r), UINT64_MAX); /* none unless set */
    if (merged < 2) hh_reader_set_memory_limit(r, 1 << 20);
    hh_merge *m = merged ? hh_merge_new(r, 0) : NULL;
    hh_event ev;
    size_t allocs = 0, threads = 0;
    uint64_t last = 0;
    while (m ? hh_merge_next(m, &ev) : hh_reader_next(r, &ev)) {
      allocs += ev.kind == HH_EV_ALLOC;
      threads += ev.kind == HH_EV_THREAD;
      if (ev.kind == HH_EV_ALLOC) last = ev.time;
    }
    if (merged == 2) { /* no limit: all of it */
      assert_int_equal(hh_reader_status(r), HH_READ_OK);
      assert_int_equal(allocs, 6);
      assert_int_equal(threads, 1000001);
    } else {
      assert_int_equal(hh_reader_status(r), HH_READ_LIMIT);
      assert_string_equal(hh_reader_message(r), want);
      assert_int_equal(allocs, 3);
      assert_int_equal(last, 12);
      if (threads < 1000 || threads > 100000) fail_msg("%zu THREAD records", threads);
      uint64_t bytes = hh_reader_table_bytes(r);
      if (bytes <= 1 << 20 || bytes > (1 << 20) + (256 << 10))
        fail_msg("the tables hold %lu bytes", (unsigned long)bytes);
    }
    if (m) hh_merge_free(m);
    hh_reader_close(r);
  }
  tb_free_all(&b);
}

static void test_read_from_file(void **state) {
  (void)state;
  tb b;
  build_small(&b, HH_CHUNK_ZSTD);
  char path[] = "/tmp/hh_reader_test_XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  assert_int_equal(write(fd, b.buf, b.len - 5), (ssize_t)(b.len - 5));
  close(fd);
  char err[256];
  hh_reader *r = hh_reader_open(path, err, sizeof err);
  assert_non_null(r);
  assert_int_equal(hh_reader_file_size(r), b.len - 5);
  evlist *l = read_all(r);
  assert_int_equal(hh_reader_status(r), HH_READ_CUT_SHORT);
  assert_string_equal(hh_reader_message(r), "trace cut short after 3 chunks; the rest of the run is missing");
  assert_int_equal(count_kind(l, HH_EV_ALLOC), 3);
  free(l);
  hh_reader_close(r);
  unlink(path);
  tb_free_all(&b);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_roundtrip_raw),
      cmocka_unit_test(test_roundtrip_zstd),
      cmocka_unit_test(test_merge_orders_by_time_then_thread),
      cmocka_unit_test(test_merge_puts_frees_first_among_equal_times),
      cmocka_unit_test(test_merge_interleaved_chunks),
      cmocka_unit_test(test_merge_offset_follows_the_events),
      cmocka_unit_test(test_merge_runs_match_a_naive_merge),
      cmocka_unit_test(test_header_refusals),
      cmocka_unit_test(test_header_only_has_no_end),
      cmocka_unit_test(test_exec_record),
      cmocka_unit_test(test_exec_failed_then_killed),
      cmocka_unit_test(test_end_count_short),
      cmocka_unit_test(test_end_count_long),
      cmocka_unit_test(test_size_past_end_damaged),
      cmocka_unit_test(test_cut_at_every_byte_raw),
      cmocka_unit_test(test_cut_at_every_byte_zstd),
      cmocka_unit_test(test_flipped_bits_raw),
      cmocka_unit_test(test_flipped_bits_zstd),
      cmocka_unit_test(test_damaged_records),
      cmocka_unit_test(test_damaged_chunk_headers),
      cmocka_unit_test(test_merge_damage_in_deferred_chunk),
      cmocka_unit_test(test_sparse_stack_ids),
      cmocka_unit_test(test_sampled_weights_and_clock),
      cmocka_unit_test(test_modules_epochs_and_renames),
      cmocka_unit_test(test_read_from_file),
      cmocka_unit_test(test_memory_limit),
      cmocka_unit_test(test_file_grown_after_open),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
