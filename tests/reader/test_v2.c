/* The version-2 event chunks end to end: rows as the tracer's threads write
 * them (made with the test encoder), turned into v2 chunks by the tracer's
 * own transcoder (src/record/trace/transcode.c), read back by the reader;
 * every event must come back as it went in. And a hostile v2 file of many
 * tiny chunks of as many threads, which must be read with memory in
 * proportion to what it holds, not a fixed model per thread. Run under ASan
 * + UBSan. */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "record/trace/internal.h"
#include "trace/model.h"
#include "trace/reader.h"
#include "trace_builder.h"

/* The transcoder's memory comes from the tracer's mmap wrapper. */
void *hh__tr_map(size_t bytes) {
  void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? NULL : p;
}

#define THREADS 3

typedef struct v2file {
  tb file, rows;
  hh_tr_model *model[THREADS + 1];
  uint32_t rows_thread;
  uint8_t *introduced; /* a bit per thread index: its THREAD record written */
  size_t introduced_bytes;
} v2file;

/* The version the files get: what the tracer writes, unless a test says
 * otherwise (version 2: FNV-1a checksums; 2 and 3: seven streams, no FREED
 * address code, deltas as varints). */
static uint32_t v2_version = HH_TRACE_VERSION;
/* What the transcoder put in each stream since the last reset. */
static size_t stream_bytes[HH_STREAMS_MAX];

static void v2_begin(v2file *v, uint32_t flags) {
  memset(v, 0, sizeof *v);
  hh_trace_header h;
  memset(&h, 0, sizeof h);
  memcpy(h.magic, HH_TRACE_MAGIC, 8);
  h.version = v2_version;
  h.flags = flags;
  h.pid = 1234;
  h.ppid = 1;
  h.ticks_per_second = 1000000000u; /* ticks are ns */
  h.start_wall_ns = 1700000000000000000ull;
  tb_init_header(&v->file, &h);
}

/* A thread's buffer: rows in v->rows, from base_time. */
static void rows_begin(v2file *v, uint32_t thread, uint64_t base_time) {
  v->rows_thread = thread;
  tb_chunk_begin(&v->rows, thread, base_time);
  /* as the tracer does: a thread's first chunk introduces it (version 4's
   * reader calls events of a thread never introduced damage) */
  if (thread / 8 >= v->introduced_bytes) {
    size_t n = thread / 8 + 1024;
    v->introduced = realloc(v->introduced, n);
    memset(v->introduced + v->introduced_bytes, 0, n - v->introduced_bytes);
    v->introduced_bytes = n;
  }
  if (!(v->introduced[thread / 8] & (1u << (thread % 8)))) {
    v->introduced[thread / 8] |= (uint8_t)(1u << (thread % 8));
    tb_thread(&v->rows, thread, 100 + thread, "");
  }
}

/* The buffer (rows of thread t) transcoded with model m into a v2 chunk of
 * the file, stored with encoding enc. */
static void emit_chunk(v2file *v, hh_tr_model *m, uint32_t t, uint32_t enc) {
  size_t sizes[HH_STREAMS_MAX] = {0};
  uint8_t *dst = malloc(hh__tr_transcode_room(v->rows.pl_len));
  hh__tr_model_set_version(m, v2_version);
  size_t n = hh__tr_transcode(m, v->rows.pl, v->rows.pl_len, dst, sizes);
  assert_true(n > 0);
  for (int i = 0; i < HH_STREAMS_MAX; i++) stream_bytes[i] += sizes[i];
  tb_chunk_begin_untimed(&v->file, t);
  tb_bytes(&v->file, dst, n);
  tb_chunk_end(&v->file, enc);
  free(dst);
  v->rows.pl_len = 0;
  v->rows.in_chunk = 0;
}

/* The buffer as a chunk of its thread, whose model carries over. */
static void rows_end(v2file *v) {
  uint32_t t = v->rows_thread;
  if (v->model[t] == NULL) v->model[t] = hh__tr_model_new();
  emit_chunk(v, v->model[t], t, HH_CHUNK_ZSTD);
}

/* The buffer as the only chunk of a thread that starts from nothing (the
 * tests of many threads share one model, reset for each). */
static void rows_end_fresh(v2file *v, hh_tr_model *m, uint32_t enc) {
  hh__tr_model_reset(m);
  emit_chunk(v, m, v->rows_thread, enc);
}

static void v2_end(v2file *v) {
  tb_free_all(&v->rows);
  free(v->introduced);
  v->introduced = NULL;
  v->introduced_bytes = 0;
  for (int i = 0; i <= THREADS; i++) {
    if (v->model[i] != NULL) hh__tr_model_reset(v->model[i]);
  }
}

/* ---- round trip ------------------------------------------------------------ */

typedef struct want {
  hh_ev_kind kind;
  uint8_t fn;
  uint32_t thread;
  uint64_t time, addr, old_addr, size, align, stack, weight;
} want;

static uint64_t rnd_state = 88172645463325252ull;
static uint64_t rnd(void) {
  rnd_state ^= rnd_state << 13;
  rnd_state ^= rnd_state >> 7;
  rnd_state ^= rnd_state << 17;
  return rnd_state;
}

#define LIVE_MAX 200000

/* Per thread: a toy allocator (freed blocks reused most recently freed
 * first, else a bump pointer, now and then somewhere else) so that every
 * address code occurs: LIFO slots, next, delta, realloc in place. */
typedef struct sim {
  uint64_t live[LIVE_MAX], size[LIVE_MAX];
  size_t n;
  uint64_t bump, freed[64], freed_size[64];
  size_t nfreed;
} sim;

static uint64_t sim_place(sim *s, uint64_t size) {
  if (s->nfreed > 0 && rnd() % 8 == 0) { /* a freed block of any class (an allocator's split) */
    size_t i = rnd() % s->nfreed;
    uint64_t a = s->freed[i];
    memmove(s->freed + i, s->freed + i + 1, (s->nfreed - i - 1) * sizeof *s->freed);
    memmove(s->freed_size + i, s->freed_size + i + 1, (s->nfreed - i - 1) * sizeof *s->freed_size);
    s->nfreed--;
    return a;
  }
  if (rnd() % 64 == 0) return (s->bump += 16 * (1 + rnd() % 1000)) + 8; /* 8-aligned: no 16-byte delta */
  for (size_t i = s->nfreed; i-- > 0;) {
    if (hh_v2_class(s->freed_size[i]) == hh_v2_class(size) && rnd() % 4 != 0) {
      uint64_t a = s->freed[i];
      memmove(s->freed + i, s->freed + i + 1, (s->nfreed - i - 1) * sizeof *s->freed);
      memmove(s->freed_size + i, s->freed_size + i + 1, (s->nfreed - i - 1) * sizeof *s->freed_size);
      s->nfreed--;
      return a;
    }
  }
  if (rnd() % 8 == 0) s->bump += 16 * (1 + rnd() % 1000);
  uint64_t a = s->bump;
  s->bump = hh_v2_next(a, size);
  return a;
}

static void sim_freed(sim *s, uint64_t addr, uint64_t size) {
  if (s->nfreed == 64) {
    memmove(s->freed, s->freed + 1, 63 * sizeof *s->freed);
    memmove(s->freed_size, s->freed_size + 1, 63 * sizeof *s->freed_size);
    s->nfreed--;
  }
  s->freed[s->nfreed] = addr;
  s->freed_size[s->nfreed++] = size;
}

static void check_event(const hh_event *got, const want *w, size_t i) {
  if (got->kind != w->kind || got->fn != w->fn || got->thread != w->thread || got->time != w->time ||
      got->addr != w->addr || (w->kind == HH_EV_REALLOC && got->old_addr != w->old_addr) ||
      (w->kind != HH_EV_FREE && (got->size != w->size || got->align != w->align || got->stack != w->stack ||
                                 got->weight != w->weight)))
    fail_msg(
        "event %zu: got kind %d fn %d T%u t=%lu addr %#lx old %#lx size %lu align %lu stack %lu weight %lu; "
        "want kind %d fn %d T%u t=%lu addr %#lx old %#lx size %lu align %lu stack %lu weight %lu",
        i, got->kind, got->fn, got->thread, got->time, got->addr, got->old_addr, got->size, got->align,
        got->stack, got->weight, w->kind, w->fn, w->thread, w->time, w->addr, w->old_addr, w->size, w->align,
        w->stack, w->weight);
}

/* Random events of THREADS threads in chunks of random lengths, with an
 * allocation at address 0, frees of blocks more than HH_V2_RING
 * allocations old, sampled weights and every allocating function; in
 * version 4 every stream gets bytes. */
static void round_trip(void **state) {
  (void)state;
  memset(stream_bytes, 0, sizeof stream_bytes);
  enum { EVENTS = 400000 };
  want *w = calloc(EVENTS + 16, sizeof *w);
  size_t nw = 0;
  sim *sims = calloc(THREADS + 1, sizeof *sims);
  v2file v;
  v2_begin(&v, HH_TRACE_FLAG_STACKS);
  /* the process chunk: stacks 1..50 */
  tb_chunk_begin(&v.file, 0, 0);
  for (uint64_t id = 1; id <= 50; id++) tb_stack(&v.file, id, id > 1 ? id / 2 : 0, 0x400000 + id);
  tb_chunk_end(&v.file, HH_CHUNK_RAW);
  for (int t = 1; t <= THREADS; t++) sims[t].bump = 0x10000000ull * (uint64_t)t;
  uint64_t now = 1000;
  bool zero_done = false;
  while (nw < EVENTS) {
    uint32_t t = 1 + (uint32_t)(rnd() % THREADS);
    sim *s = &sims[t];
    rows_begin(&v, t, now);
    size_t len = 1 + rnd() % 3000;
    for (size_t k = 0; k < len && nw < EVENTS; k++) {
      now += rnd() % 4 == 0 ? rnd() % 100000 : rnd() % 20;
      want *e = &w[nw];
      memset(e, 0, sizeof *e);
      e->thread = t;
      e->time = now;
      unsigned op = (unsigned)(rnd() % 100);
      if (s->n == 0 || (s->n < LIVE_MAX && op < 48)) {
        unsigned fns[] = {0, 0, 0, 0, 1, 4, 5, 6, 7, 8};
        unsigned fn = fns[rnd() % 10];
        uint64_t size = rnd() % 8 == 0 ? rnd() % 300000 : 1 + rnd() % 600;
        uint64_t align = hh_trace_fn_has_align(fn) ? (uint64_t)16 << (rnd() % 6) : 0;
        uint64_t addr = sim_place(s, size);
        if (!zero_done && nw > EVENTS / 2) { /* never from a real allocator: still told exactly */
          addr = 0;
          zero_done = true;
        }
        uint64_t stack = 1 + rnd() % 50, weight = size;
        if (rnd() % 16 == 0) {
          weight = size + rnd() % 100000;
          tb_weight(&v.rows, weight);
        }
        tb_alloc(&v.rows, fn, now, addr, size, stack, align);
        *e = (want){HH_EV_ALLOC, (uint8_t)fn, t, now, addr, 0, size, align, stack, weight};
        if (addr != 0) {
          s->live[s->n] = addr;
          s->size[s->n++] = size;
        }
      } else if (op < 90) {
        /* mostly recent blocks, now and then a very old one */
        size_t i = rnd() % 4 == 0 ? rnd() % s->n : s->n - 1 - rnd() % (s->n < 16 ? s->n : 16);
        unsigned fn = rnd() % 10 == 0 ? 10 : 9;
        tb_free(&v.rows, fn, now, s->live[i]);
        *e = (want){HH_EV_FREE, (uint8_t)fn, t, now, s->live[i], 0, 0, 0, 0, 0};
        sim_freed(s, s->live[i], s->size[i]);
        s->live[i] = s->live[--s->n];
        s->size[i] = s->size[s->n];
      } else {
        size_t i = s->n - 1 - rnd() % (s->n < 8 ? s->n : 8);
        uint64_t old = s->live[i], size = 1 + rnd() % 2000, addr = old;
        if (rnd() % 2) { /* moved */
          addr = sim_place(s, size);
          sim_freed(s, old, s->size[i]);
        }
        unsigned fn = rnd() % 4 == 0 ? 3 : 2;
        uint64_t stack = 1 + rnd() % 50;
        tb_realloc(&v.rows, fn, now, old, addr, size, stack);
        *e = (want){HH_EV_REALLOC, (uint8_t)fn, t, now, addr, old, size, 0, stack, size};
        s->live[i] = addr;
        s->size[i] = size;
      }
      nw++;
    }
    rows_end(&v);
  }
  assert_true(zero_done);
  char err[256];
  hh_reader *r = hh_reader_open_mem(v.file.buf, v.file.len, err, sizeof err);
  assert_non_null(r);
  hh_event ev;
  size_t i = 0;
  while (hh_reader_next(r, &ev)) {
    if (ev.kind != HH_EV_ALLOC && ev.kind != HH_EV_FREE && ev.kind != HH_EV_REALLOC) continue;
    assert_true(i < nw);
    check_event(&ev, &w[i], i);
    i++;
  }
  if (hh_reader_status(r) != HH_READ_NO_END) fail_msg("%s", hh_reader_message(r));
  assert_int_equal(i, nw);
  for (int k = 0; k < hh_event_streams(v2_version); k++)
    if (stream_bytes[k] == 0) fail_msg("stream %d got no bytes", k);
  hh_reader_close(r);
  v2_end(&v);
  tb_free_all(&v.file);
  free(sims);
  free(w);
}

/* The same in versions 2 (FNV-1a checksums) and 3 (seven streams): traces
 * written by earlier tracers still read. */
static void round_trip_version_2(void **state) {
  v2_version = 2;
  round_trip(state);
  v2_version = HH_TRACE_VERSION;
}
static void round_trip_version_3(void **state) {
  v2_version = 3;
  round_trip(state);
  v2_version = HH_TRACE_VERSION;
}
/* and 4 (frees by distance, sizes in their own streams) */
static void round_trip_version_4(void **state) {
  v2_version = 4;
  round_trip(state);
  v2_version = HH_TRACE_VERSION;
}

/* ---- version 4's address fields ---------------------------------------------- */

/* One thread's chunk: every way version 4 tells an address, read back
 * exactly, each in the stream it belongs to. */
static const uint64_t addr_cases[][2] = {
    /* address, size */
    {0x10000, 24},          /* DELTA, 3 bytes */
    {0x20000, 24},          /* DELTA */
    {0x20008, 100},         /* DELTA not a multiple of 16: escaped to WIDE */
    {0x7f0000000000, 4096}, /* DELTA too far for 3 bytes: escaped */
    {0x30000, 3000},        /* DELTA, negative */
};

static void v4_address_fields(void **state) {
  (void)state;
  memset(stream_bytes, 0, sizeof stream_bytes);
  v2file v;
  v2_begin(&v, 0);
  hh_tr_model *m = hh__tr_model_new();
  rows_begin(&v, 1, 10);
  size_t n = sizeof addr_cases / sizeof *addr_cases;
  for (size_t i = 0; i < n; i++) tb_alloc(&v.rows, 0, 10, addr_cases[i][0], addr_cases[i][1], 0, 0);
  tb_free(&v.rows, 9, 11, 0x10000);                   /* freed: class of 24 bytes */
  tb_free(&v.rows, 9, 11, 0x7f0000000000);            /* freed */
  tb_alloc(&v.rows, 0, 12, 0x10000, 500, 0, 0);       /* another class: FREED, 1 back */
  tb_alloc(&v.rows, 1, 12, 0x7f0000000000, 64, 0, 0); /* calloc: FREED in WIDE's code, 0 back */
  rows_end_fresh(&v, m, HH_CHUNK_RAW);
  hh__tr_model_reset(m);
  assert_int_equal(stream_bytes[HH_V4_ADDR0], n);
  assert_int_equal(stream_bytes[HH_V4_FREED_LO], 2);
  assert_int_equal(stream_bytes[HH_V4_FREED_HI], 2);
  assert_true(stream_bytes[HH_V4_OPS_ALLOC] > 0);
  hh_reader *r = hh_reader_open_mem(v.file.buf, v.file.len, NULL, 0);
  hh_event ev;
  size_t i = 0, frees = 0;
  uint64_t later[] = {0x10000, 0x7f0000000000};
  while (hh_reader_next(r, &ev)) {
    if (ev.kind == HH_EV_FREE) frees++;
    if (ev.kind != HH_EV_ALLOC) continue;
    uint64_t want = i < n ? addr_cases[i][0] : later[i - n];
    if (ev.addr != want)
      fail_msg("allocation %zu at %#lx, want %#lx", i, (unsigned long)ev.addr, (unsigned long)want);
    i++;
  }
  if (hh_reader_status(r) != HH_READ_NO_END) fail_msg("%s", hh_reader_message(r));
  assert_int_equal(i, n + 2);
  assert_int_equal(frees, 2);
  hh_reader_close(r);

  /* The first FREED distance made 5: it names no free the reader knows. */
  const uint8_t *pl = v.file.buf + HH_TRACE_HEADER_BYTES + HH_CHUNK_HEADER_BYTES;
  const uint8_t *p = pl, *end = v.file.buf + v.file.len;
  uint64_t len[HH_STREAMS_MAX], at = 0;
  for (int k = 0; k < hh_event_streams(v2_version); k++) assert_int_equal(hh_get_varint(&p, end, &len[k]), 0);
  at = (uint64_t)(p - v.file.buf);
  for (int k = 0; k < HH_V4_FREED_LO; k++) at += len[k];
  uint8_t *copy = malloc(v.file.len);
  memcpy(copy, v.file.buf, v.file.len);
  copy[at] = 5;
  /* (a raw chunk: its checksum made again) */
  uint32_t sum = hh_chunk_sum(HH_TRACE_VERSION, copy + HH_TRACE_HEADER_BYTES + HH_CHUNK_HEADER_BYTES,
                              v.file.len - HH_TRACE_HEADER_BYTES - HH_CHUNK_HEADER_BYTES);
  memcpy(copy + HH_TRACE_HEADER_BYTES + offsetof(hh_chunk_header, checksum), &sum, 4);
  r = hh_reader_open_mem(copy, v.file.len, NULL, 0);
  size_t allocs = 0;
  while (hh_reader_next(r, &ev)) allocs += ev.kind == HH_EV_ALLOC;
  assert_int_equal(hh_reader_status(r), HH_READ_DAMAGED);
  if (!strstr(hh_reader_message(r), "allocation at the block freed 6 frees back, of 2 known"))
    fail_msg("message: %s", hh_reader_message(r));
  assert_int_equal(allocs, n); /* those before the damage */
  hh_reader_close(r);
  free(copy);
  v2_end(&v);
  tb_free_all(&v.file);
}

/* ---- version 5 ------------------------------------------------------------------ */

/* Offset in the file of stream `k` of the first chunk's payload (a raw chunk). */
static uint64_t stream_at(const v2file *v, int k, uint64_t *len_out) {
  const uint8_t *pl = v->file.buf + HH_TRACE_HEADER_BYTES + HH_CHUNK_HEADER_BYTES;
  const uint8_t *p = pl, *end = v->file.buf + v->file.len;
  uint64_t len[HH_STREAMS_MAX];
  for (int i = 0; i < hh_event_streams(v2_version); i++) assert_int_equal(hh_get_varint(&p, end, &len[i]), 0);
  uint64_t at = (uint64_t)(p - v->file.buf);
  for (int i = 0; i < k; i++) at += len[i];
  *len_out = len[k];
  return at;
}

/* Sizes in version 5: malloc's sizes below 0x300 have their high byte in
 * the op byte (1aaassdd) and only their low byte in SIZE_LO; 0x300 and more
 * are two-byte fields as before (0xffff and more in WIDE). Time deltas of
 * 0-2 ticks are in the op byte, 3 and more in WIDE. calloc's sizes are not
 * in its op byte. Every size and time read back. */
static void v5_sizes_in_op(void **state) {
  (void)state;
  v2file v;
  v2_begin(&v, 0);
  hh_tr_model *m = hh__tr_model_new();
  rows_begin(&v, 1, 100);
  const uint64_t sizes[] = {0, 1, 0xff, 0x100, 0x2ff, 0x300, 0x301, 0xfffe, 0xffff, 70000, 5};
  const uint64_t times[] = {100, 100, 101, 103, 106, 106, 200, 200, 201, 202, 202};
  const size_t n = sizeof sizes / sizeof *sizes;
  for (size_t i = 0; i < n; i++) tb_alloc(&v.rows, 0, times[i], 0x100000 * (i + 1), sizes[i], 0, 0);
  tb_alloc(&v.rows, 1, 300, 0x100000 * (n + 1), 0x10, 0, 0); /* calloc */
  rows_end_fresh(&v, m, HH_CHUNK_RAW);
  hh__tr_model_reset(m);
  uint64_t lo_len, hi_len;
  stream_at(&v, HH_V2_SIZE_LO, &lo_len);
  stream_at(&v, HH_V2_SIZE_HI, &hi_len);
  assert_int_equal(lo_len, n + 1);
  assert_int_equal(hi_len, 5 + 1); /* 0x300, 0x301, 0xfffe, 0xffff, 70000; calloc's */
  hh_reader *r = hh_reader_open_mem(v.file.buf, v.file.len, NULL, 0);
  assert_non_null(r);
  uint64_t tps = hh_reader_header(r)->ticks_per_second;
  hh_event ev;
  size_t i = 0;
  while (hh_reader_next(r, &ev)) {
    if (ev.kind != HH_EV_ALLOC) continue;
    assert_true(i <= n);
    assert_int_equal(ev.addr, 0x100000 * (i + 1));
    assert_int_equal(ev.size, i < n ? sizes[i] : 0x10);
    assert_int_equal(ev.time, (i < n ? times[i] : 300) * 1000000000ull / tps);
    i++;
  }
  if (hh_reader_status(r) != HH_READ_NO_END) fail_msg("%s", hh_reader_message(r));
  assert_int_equal(i, n + 1);
  hh_reader_close(r);
  v2_end(&v);
  tb_free_all(&v.file);
}

/* ---- checksums ------------------------------------------------------------------ */

/* Every bit flipped in a chunk's payload is damage, found by the checksum of
 * the trace's version (XXH3 in version 3, FNV-1a in 2); the same file with
 * the other version in its header fails every chunk. */
static void checksums_by_version(void **state) {
  (void)state;
  for (uint32_t version = 2; version <= HH_TRACE_VERSION; version++) {
    v2_version = version;
    v2file v;
    v2_begin(&v, 0);
    hh_tr_model *m = hh__tr_model_new();
    rows_begin(&v, 1, 100);
    for (uint64_t i = 0; i < 40; i++) {
      tb_alloc(&v.rows, 0, 100 + i, 0x10000 + 64 * i, 24 + i, 0, 0);
      if (i % 3 == 0) tb_free(&v.rows, 9, 100 + i, 0x10000 + 64 * i);
    }
    rows_end_fresh(&v, m, HH_CHUNK_RAW);
    hh__tr_model_reset(m);
    size_t payload = HH_TRACE_HEADER_BYTES + HH_CHUNK_HEADER_BYTES;
    uint8_t *copy = malloc(v.file.len);
    for (size_t i = payload; i < v.file.len; i++) {
      for (int bit = 0; bit < 8; bit++) {
        memcpy(copy, v.file.buf, v.file.len);
        copy[i] ^= (uint8_t)(1u << bit);
        hh_reader *r = hh_reader_open_mem(copy, v.file.len, NULL, 0);
        hh_event ev;
        while (hh_reader_next(r, &ev)) {
        }
        assert_int_equal(hh_reader_status(r), HH_READ_DAMAGED);
        assert_non_null(strstr(hh_reader_message(r), "checksum mismatch in chunk 0"));
        hh_reader_close(r);
      }
    }
    /* intact: read whole; with the other version's number: every chunk fails */
    memcpy(copy, v.file.buf, v.file.len);
    for (int other = 0; other < 2; other++) {
      uint32_t ver = other ? (version == 2 ? 3 : 2) : version; /* the other checksum */
      memcpy(copy + offsetof(hh_trace_header, version), &ver, 4);
      hh_reader *r = hh_reader_open_mem(copy, v.file.len, NULL, 0);
      hh_event ev;
      size_t n = 0;
      while (hh_reader_next(r, &ev)) n += ev.kind == HH_EV_ALLOC;
      assert_int_equal(hh_reader_status(r), other ? HH_READ_DAMAGED : HH_READ_NO_END);
      assert_int_equal(n, other ? 0 : 40);
      hh_reader_close(r);
    }
    free(copy);
    v2_end(&v);
    tb_free_all(&v.file);
  }
  v2_version = HH_TRACE_VERSION;
}

/* ---- provisional chunks ----------------------------------------------------------- */

/* Thread 1: a chunk of 3 allocations (0x1000...), then a buffer of 2 more
 * (0x9000...) written provisionally (the writer's copy while the thread was
 * idle), then the same buffer with a third one written by the thread.
 * Returns the file offset where the thread's own chunk of that buffer
 * starts. */
static size_t build_provisional(v2file *v) {
  v2_begin(v, 0);
  rows_begin(v, 1, 100);
  for (uint64_t i = 0; i < 3; i++) tb_alloc(&v->rows, 0, 100 + i, 0x1000 + 0x100 * i, 40, 0, 0);
  rows_end(v);
  rows_begin(v, 1, 200);
  for (uint64_t i = 0; i < 2; i++) tb_alloc(&v->rows, 0, 200 + i, 0x9000 + 0x100 * i, 40, 0, 0);
  tb_chunk_begin_untimed(&v->file, 1);
  tb_bytes(&v->file, v->rows.pl, v->rows.pl_len);
  tb_chunk_end(&v->file, HH_CHUNK_RAW | HH_CHUNK_PROVISIONAL);
  size_t own = v->file.len;
  tb_alloc(&v->rows, 0, 300, 0x9200, 40, 0, 0);
  rows_end(v);
  return own;
}

static size_t read_allocs(hh_reader *r, uint64_t *addrs, size_t max, size_t stop_after) {
  hh_event ev;
  size_t n = 0;
  while (n < stop_after && hh_reader_next(r, &ev)) {
    if (ev.kind == HH_EV_ALLOC && n < max) addrs[n++] = ev.addr;
  }
  return n;
}

/* A provisional chunk counts only as its thread's last chunk: superseded by
 * the thread's own chunk of the same buffer it is skipped, at the end of a
 * killed process's trace it is read, and in a file that grows after it was
 * read, the thread's next chunk gives only the events that are new. */
static void provisional_chunks(void **state) {
  (void)state;
  v2file v;
  size_t own = build_provisional(&v);
  const uint64_t all[] = {0x1000, 0x1100, 0x1200, 0x9000, 0x9100, 0x9200};
  uint64_t got[16];
  /* whole: every allocation once, in file order and merged */
  hh_reader *r = hh_reader_open_mem(v.file.buf, v.file.len, NULL, 0);
  size_t n = read_allocs(r, got, 16, SIZE_MAX);
  assert_int_equal(n, 6);
  for (size_t i = 0; i < n; i++) assert_int_equal(got[i], all[i]);
  assert_int_equal(hh_reader_status(r), HH_READ_NO_END);
  hh_reader_close(r);
  r = hh_reader_open_mem(v.file.buf, v.file.len, NULL, 0);
  hh_merge *m = hh_merge_new(r, 0);
  hh_event ev;
  n = 0;
  while (hh_merge_next(m, &ev))
    if (ev.kind == HH_EV_ALLOC) assert_int_equal(ev.addr, all[n++]);
  assert_int_equal(n, 6);
  hh_merge_free(m);
  hh_reader_close(r);
  /* killed before the thread wrote its buffer: the provisional copy's two */
  r = hh_reader_open_mem(v.file.buf, own, NULL, 0);
  n = read_allocs(r, got, 16, SIZE_MAX);
  assert_int_equal(n, 5);
  for (size_t i = 0; i < n; i++) assert_int_equal(got[i], all[i]);
  hh_reader_close(r);
  /* the thread's own chunk cut short, or damaged: the provisional copy's
   * two read (they were lost: the copy was skipped for a chunk that could
   * not be read) */
  for (int how = 0; how < 2; how++) {
    uint8_t *copy = malloc(v.file.len);
    memcpy(copy, v.file.buf, v.file.len);
    size_t len = how == 0 ? v.file.len - 3 : v.file.len;
    if (how == 1) copy[v.file.len - 2] ^= 0x40;
    r = hh_reader_open_mem(copy, len, NULL, 0);
    n = read_allocs(r, got, 16, SIZE_MAX);
    assert_int_equal(n, 5);
    for (size_t i = 0; i < n; i++) assert_int_equal(got[i], all[i]);
    assert_int_equal(hh_reader_status(r), how == 0 ? HH_READ_CUT_SHORT : HH_READ_DAMAGED);
    hh_reader_close(r);
    free(copy);
  }
  /* read while it grows: the provisional copy read, then the thread's chunk
   * appended; its first two allocations are not handed out again */
  char path[] = "/tmp/hh_v2_test_XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  assert_int_equal(write(fd, v.file.buf, own), (ssize_t)own);
  r = hh_reader_open(path, NULL, 0);
  assert_non_null(r);
  n = read_allocs(r, got, 16, 5);
  assert_int_equal(n, 5);
  assert_int_equal(write(fd, v.file.buf + own, v.file.len - own), (ssize_t)(v.file.len - own));
  close(fd);
  n += read_allocs(r, got + n, 16 - n, SIZE_MAX);
  assert_int_equal(n, 6);
  assert_int_equal(got[5], 0x9200);
  assert_int_equal(hh_reader_status(r), HH_READ_NO_END);
  hh_reader_close(r);
  unlink(path);
  v2_end(&v);
  tb_free_all(&v.file);

  /* 200,000 provisional chunks in a row, all superseded: skipped one after
   * the other (a recursion per chunk once overflowed the stack here) */
  v2_begin(&v, 0);
  rows_begin(&v, 1, 100);
  tb_alloc(&v.rows, 0, 100, 0x1000, 40, 0, 0);
  for (int i = 0; i < 200000; i++) {
    tb_chunk_begin_untimed(&v.file, 1);
    tb_bytes(&v.file, v.rows.pl, v.rows.pl_len);
    tb_chunk_end(&v.file, HH_CHUNK_RAW | HH_CHUNK_PROVISIONAL);
  }
  rows_end(&v);
  r = hh_reader_open_mem(v.file.buf, v.file.len, NULL, 0);
  n = read_allocs(r, got, 16, SIZE_MAX);
  assert_int_equal(n, 1);
  assert_int_equal(hh_reader_chunks(r), 200001);
  hh_reader_close(r);
  v2_end(&v);
  tb_free_all(&v.file);
}

/* A thread's provisional copy far ahead of its own chunk (the main thread
 * allocated, then waited in pthread_join while a worker's chunks filled
 * more than the merge's window): the merge hands the copy's events out in
 * time, and the own chunk's first events not again. Before, the copy was
 * skipped and its events came too late (101 of a real 88 MiB trace). */
static void provisional_far_from_own_chunk(void **state) {
  (void)state;
  v2file v;
  v2_begin(&v, 0);
  rows_begin(&v, 1, 100);
  for (uint64_t i = 0; i < 2; i++) tb_alloc(&v.rows, 0, 100 + i, 0x9000 + 0x100 * i, 40, 0, 0);
  tb_chunk_begin_untimed(&v.file, 1);
  tb_bytes(&v.file, v.rows.pl, v.rows.pl_len);
  tb_chunk_end(&v.file, HH_CHUNK_RAW | HH_CHUNK_PROVISIONAL);
  tb kept = v.rows; /* thread 1's buffer goes on after the worker's chunks */
  memset(&v.rows, 0, sizeof v.rows);
  for (uint64_t c = 0; c < 40; c++) {
    rows_begin(&v, 2, 1000 + 100 * c);
    for (uint64_t i = 0; i < 10; i++)
      tb_alloc(&v.rows, 0, 1000 + 100 * c + i, 0x100000 + 0x100 * (10 * c + i), 40, 0, 0);
    rows_end(&v);
  }
  tb_free_all(&v.rows);
  v.rows = kept;
  v.rows_thread = 1;
  tb_alloc(&v.rows, 0, 9000, 0x9200, 40, 0, 0);
  rows_end(&v);
  for (int merged = 0; merged < 2; merged++) {
    hh_reader *r = hh_reader_open_mem(v.file.buf, v.file.len, NULL, 0);
    hh_merge *m = merged ? hh_merge_new(r, 256) : NULL; /* a window of a few chunks */
    hh_event ev;
    size_t n = 0, first = 0;
    uint64_t last = 0;
    while (merged ? hh_merge_next(m, &ev) : hh_reader_next(r, &ev)) {
      if (ev.kind != HH_EV_ALLOC) continue;
      if (merged) assert_true(ev.time >= last);
      last = ev.time;
      if (ev.addr == 0x9000 || ev.addr == 0x9100) first += n < 2 || !merged;
      n++;
    }
    assert_int_equal(n, 403);
    assert_int_equal(first, 2);
    if (merged) {
      assert_int_equal(hh_merge_late(m), 0);
      hh_merge_free(m);
    }
    assert_int_equal(hh_reader_status(r), HH_READ_NO_END);
    hh_reader_close(r);
  }
  v2_end(&v);
  tb_free_all(&v.file);
}

/* The chunk header's thread index is outside the payload's checksum: a
 * flipped bit there made a thread 4294967295 with no name and moved the
 * events to it, with the trace read as whole. Now every flip of it is
 * damage (events of a thread no THREAD record introduced, or a chunk that
 * does not decode as the thread it names). */
static void thread_index_flips_are_damage(void **state) {
  (void)state;
  v2file v;
  v2_begin(&v, 0);
  hh_tr_model *m = hh__tr_model_new();
  rows_begin(&v, 1, 100);
  for (uint64_t i = 0; i < 40; i++) tb_alloc(&v.rows, 0, 100 + i, 0x10000 + 64 * i, 24 + i, 0, 0);
  rows_end_fresh(&v, m, HH_CHUNK_RAW);
  hh__tr_model_reset(m);
  size_t at = HH_TRACE_HEADER_BYTES + 20; /* the only chunk's thread index */
  uint8_t *copy = malloc(v.file.len);
  for (int bit = 0; bit < 32; bit++) {
    memcpy(copy, v.file.buf, v.file.len);
    copy[at + bit / 8] ^= (uint8_t)(1u << (bit % 8));
    hh_reader *r = hh_reader_open_mem(copy, v.file.len, NULL, 0);
    assert_non_null(r);
    hh_event ev;
    while (hh_reader_next(r, &ev))
      if (ev.kind == HH_EV_ALLOC && ev.thread != 1)
        fail_msg("bit %d: an allocation of thread %u", bit, ev.thread);
    if (hh_reader_status(r) != HH_READ_DAMAGED) fail_msg("bit %d: %s", bit, hh_reader_message(r));
    if (bit > 0 && !strstr(hh_reader_message(r), "which no THREAD record introduced"))
      fail_msg("bit %d: %s", bit, hh_reader_message(r));
    hh_reader_close(r);
    /* merged, in batches: the same */
    r = hh_reader_open_mem(copy, v.file.len, NULL, 0);
    hh_merge *mg = hh_merge_new(r, 0);
    hh_event evs[64];
    size_t n;
    while ((n = hh_merge_next_n(mg, evs, 64)) > 0)
      for (size_t i = 0; i < n; i++)
        if (evs[i].kind == HH_EV_ALLOC && evs[i].thread != 1)
          fail_msg("bit %d, merged: an allocation of thread %u", bit, evs[i].thread);
    if (hh_reader_status(r) != HH_READ_DAMAGED) fail_msg("bit %d, merged: %s", bit, hh_reader_message(r));
    if (bit > 0 && !strstr(hh_reader_message(r), "which no THREAD record introduced"))
      fail_msg("bit %d, merged: %s", bit, hh_reader_message(r));
    hh_merge_free(mg);
    hh_reader_close(r);
  }
  free(copy);
  v2_end(&v);
  tb_free_all(&v.file);
}

/* An event chunk with a size no address space holds: damage, the events
 * before it read (sizes near 2^64 wrapped the report's sums). */
static void huge_size_is_damage(void **state) {
  (void)state;
  v2file v;
  v2_begin(&v, 0);
  hh_tr_model *m = hh__tr_model_new();
  rows_begin(&v, 1, 100);
  tb_alloc(&v.rows, 0, 100, 0x10000, 24, 0, 0);
  tb_alloc(&v.rows, 0, 101, 0x20000, UINT64_MAX - 7, 0, 0);
  rows_end_fresh(&v, m, HH_CHUNK_RAW);
  hh__tr_model_reset(m);
  hh_reader *r = hh_reader_open_mem(v.file.buf, v.file.len, NULL, 0);
  assert_non_null(r);
  hh_event ev;
  size_t allocs = 0;
  while (hh_reader_next(r, &ev)) allocs += ev.kind == HH_EV_ALLOC;
  assert_int_equal(allocs, 1);
  assert_int_equal(hh_reader_status(r), HH_READ_DAMAGED);
  if (!strstr(hh_reader_message(r),
              "an allocation of 18446744073709551608 bytes, more than an address space"))
    fail_msg("%s", hh_reader_message(r));
  hh_reader_close(r);
  v2_end(&v);
  tb_free_all(&v.file);
}

/* ---- hostile: many threads, one tiny chunk each ------------------------------ */

/* 40000 threads, each a chunk with one allocation and its free (about 50
 * bytes of file each): a reader that gave each thread its whole model (30
 * KiB of LIFOs, 640 KiB of history) at once wanted 26 GiB for this ~2 MB
 * file. Now a thread costs what it uses: every event is read, with the
 * models holding a few hundred bytes per thread. */
static void hostile_many_threads(void **state) {
  (void)state;
  enum { N = 40000 };
  v2file v;
  v2_begin(&v, 0);
  hh_tr_model *m = hh__tr_model_new();
  for (uint32_t t = 1; t <= N; t++) {
    rows_begin(&v, t, t);
    tb_alloc(&v.rows, 0, t, 0x1000 + 16 * (uint64_t)(t % 400), 24 + 16 * (t % 400), 0, 0);
    tb_free(&v.rows, 9, t, 0x1000 + 16 * (uint64_t)(t % 400));
    rows_end_fresh(&v, m, HH_CHUNK_RAW);
  }
  hh__tr_model_reset(m);
  /* (version 4: 13 stream lengths a chunk; its THREAD record, ~6 bytes) */
  if (v.file.len >= (size_t)N * 62) fail_msg("%zu bytes a thread", v.file.len / N);
  char err[256];
  hh_reader *r = hh_reader_open_mem(v.file.buf, v.file.len, err, sizeof err);
  assert_non_null(r);
  hh_event ev;
  size_t events = 0;
  while (hh_reader_next(r, &ev)) events += ev.kind == HH_EV_ALLOC || ev.kind == HH_EV_FREE;
  if (hh_reader_status(r) != HH_READ_NO_END) fail_msg("%s", hh_reader_message(r));
  assert_int_equal(events, 2 * N);
  uint64_t per_thread = hh_reader_model_bytes(r) / N;
  if (per_thread > 400) fail_msg("the models hold %lu bytes per thread", (unsigned long)per_thread);
  hh_reader_close(r);
  v2_end(&v);
  tb_free_all(&v.file);
}

/* A file of threads (1..n) of allocs allocations each, none freed, one
 * zstd chunk per thread: every thread's model holds its whole history. */
static void histories_file(v2file *v, uint32_t n, uint64_t allocs) {
  v2_begin(v, 0);
  hh_tr_model *m = hh__tr_model_new();
  for (uint32_t t = 1; t <= n; t++) {
    rows_begin(v, t, t);
    for (uint64_t i = 0; i < allocs; i++) tb_alloc(&v->rows, 0, t, 0x10000000ull * t + 32 * i, 16, 0, 0);
    rows_end_fresh(v, m, HH_CHUNK_ZSTD);
  }
  hh__tr_model_reset(m);
}

/* What the models may take, and no more: 20 threads of 65,536 allocations
 * each (one zstd chunk per thread, a few hundred bytes of file) hold each
 * thread's whole history, ~10 bytes per allocation: the ceiling the
 * documentation gives. */
static void full_histories(void **state) {
  (void)state;
  enum { N = 20, ALLOCS = 65536 };
  v2file v;
  histories_file(&v, N, ALLOCS);
  assert_true(v.file.len < (size_t)N * 2048);
  char err[256];
  hh_reader *r = hh_reader_open_mem(v.file.buf, v.file.len, err, sizeof err);
  assert_non_null(r);
  hh_event ev;
  size_t allocs = 0;
  while (hh_reader_next(r, &ev)) allocs += ev.kind == HH_EV_ALLOC;
  if (hh_reader_status(r) != HH_READ_NO_END) fail_msg("%s", hh_reader_message(r));
  assert_int_equal(allocs, (size_t)N * ALLOCS);
  uint64_t bytes = hh_reader_model_bytes(r);
  if (bytes < (uint64_t)N * ALLOCS * 10 || bytes > (uint64_t)N * (ALLOCS * 10 + 1024))
    fail_msg("the models hold %lu bytes for %d threads of %d allocations", (unsigned long)bytes, N, ALLOCS);
  hh_reader_close(r);
  v2_end(&v);
  tb_free_all(&v.file);
}

/* The models held to the memory limit: 8 threads of 65,536 allocations
 * (~640 KiB of models each, in ~1 KB of file) read under a limit of 2 MiB,
 * in file order and merged (whose decoding of the current format skips
 * decode(): the limit is looked at there too). Reading stops at the limit
 * with its status and message; what came before is handed out; the
 * models stay within a step of their growth past the limit. */
static void models_at_the_memory_limit(void **state) {
  (void)state;
  enum { N = 8, ALLOCS = 65536 };
  v2file v;
  histories_file(&v, N, ALLOCS);
  for (int merged = 0; merged < 2; merged++) {
    char err[256];
    hh_reader *r = hh_reader_open_mem(v.file.buf, v.file.len, err, sizeof err);
    assert_non_null(r);
    hh_reader_set_memory_limit(r, 2 << 20);
    hh_merge *mg = merged ? hh_merge_new(r, 0) : NULL;
    hh_event ev;
    size_t allocs = 0;
    while (merged ? hh_merge_next(mg, &ev) : hh_reader_next(r, &ev)) allocs += ev.kind == HH_EV_ALLOC;
    assert_int_equal(hh_reader_status(r), HH_READ_LIMIT);
    const char *msg = hh_reader_message(r);
    if (strncmp(msg, "trace read up to byte offset ", 29) != 0 ||
        !strstr(msg,
                "): its stacks, threads, modules, names and thread models take more than 2 MiB, the memory "
                "limit (HEAPHOOK_MEMORY_LIMIT raises it)"))
      fail_msg("merged %d: %s", merged, msg);
    /* three threads' whole histories fit, the fourth's not */
    if (allocs < 3 * ALLOCS || allocs >= 4 * ALLOCS) fail_msg("merged %d: %zu allocations", merged, allocs);
    uint64_t bytes = hh_reader_table_bytes(r);
    if (bytes <= 2 << 20 || bytes > (2 << 20) + (512 << 10))
      fail_msg("merged %d: the tables hold %lu bytes", merged, (unsigned long)bytes);
    if (mg) hh_merge_free(mg);
    hh_reader_close(r);
  }
  v2_end(&v);
  tb_free_all(&v.file);
}

/* Many threads that reuse freed blocks through their LIFOs, many size
 * classes in one thread (the class map grows, then gives way to the direct
 * index past 32 classes): every address right. */
static void many_threads_many_classes(void **state) {
  (void)state;
  enum { N = 1500, CLASSES = 300 };
  v2file v;
  v2_begin(&v, 0);
  hh_tr_model *m = hh__tr_model_new();
  for (uint32_t t = 1; t <= N; t++) {
    rows_begin(&v, t, t);
    unsigned k = t == 1 ? CLASSES : 1;
    for (unsigned c = 0; c < k; c++) {
      uint64_t a = 0x100000 * (uint64_t)t + 0x1000 * (uint64_t)c, size = 24 + 16 * (uint64_t)c;
      tb_alloc(&v.rows, 0, t, a, size, 0, 0);
      tb_free(&v.rows, 9, t, a);
    }
    for (unsigned c = 0; c < k; c++) { /* each from its class's LIFO */
      uint64_t a = 0x100000 * (uint64_t)t + 0x1000 * (uint64_t)c, size = 24 + 16 * (uint64_t)c;
      tb_alloc(&v.rows, 0, t, a, size, 0, 0);
    }
    rows_end_fresh(&v, m, HH_CHUNK_RAW);
  }
  hh__tr_model_reset(m);
  char err[256];
  hh_reader *r = hh_reader_open_mem(v.file.buf, v.file.len, err, sizeof err);
  assert_non_null(r);
  hh_event ev;
  size_t allocs = 0, frees = 0, per[N + 1] = {0};
  while (hh_reader_next(r, &ev)) {
    if (ev.kind == HH_EV_ALLOC) {
      unsigned c = (unsigned)(per[ev.thread]++ % (ev.thread == 1 ? CLASSES : 1));
      assert_int_equal(ev.addr, 0x100000 * (uint64_t)ev.thread + 0x1000 * (uint64_t)c);
      allocs++;
    }
    frees += ev.kind == HH_EV_FREE;
  }
  if (hh_reader_status(r) != HH_READ_NO_END) fail_msg("%s", hh_reader_message(r));
  assert_int_equal(allocs, 2 * (N - 1 + CLASSES));
  assert_int_equal(frees, N - 1 + CLASSES);
  hh_reader_close(r);
  v2_end(&v);
  tb_free_all(&v.file);
}

/* ---- merged in batches ------------------------------------------------------ */

typedef struct merged {
  hh_event *ev;
  size_t n, cap;
  hh_read_status status;
  char message[512];
} merged;

/* The whole merge of data[0..len), one event at a time (batch 0) or batch
 * events at a time through hh_merge_next_n. */
static void merge_into(merged *out, const uint8_t *data, size_t len, size_t window, size_t batch) {
  memset(out, 0, sizeof *out);
  hh_reader *r = hh_reader_open_mem(data, len, NULL, 0);
  assert_non_null(r);
  hh_merge *m = hh_merge_new(r, window);
  for (;;) {
    if (out->n + 4096 > out->cap) {
      out->cap = out->cap ? out->cap * 2 : 8192;
      out->ev = realloc(out->ev, out->cap * sizeof *out->ev);
    }
    size_t got =
        batch ? hh_merge_next_n(m, &out->ev[out->n], batch) : (size_t)hh_merge_next(m, &out->ev[out->n]);
    out->n += got;
    if (got < (batch ? batch : 1)) break;
  }
  assert_int_equal(hh_merge_next_n(m, out->ev, 1), 0); /* the end stays the end */
  out->status = hh_reader_status(r);
  snprintf(out->message, sizeof out->message, "%s", hh_reader_message(r));
  hh_merge_free(m);
  hh_reader_close(r);
}

static void same_merge(const merged *a, const merged *b, size_t batch) {
  if (a->n != b->n) fail_msg("batch %zu: %zu events, one by one %zu", batch, b->n, a->n);
  for (size_t i = 0; i < a->n; i++) {
    const hh_event *x = &a->ev[i], *y = &b->ev[i];
    bool ev = x->kind == HH_EV_ALLOC || x->kind == HH_EV_FREE || x->kind == HH_EV_REALLOC;
    if (x->kind != y->kind || x->thread != y->thread || x->time != y->time ||
        (ev && (x->fn != y->fn || x->addr != y->addr || x->size != y->size || x->align != y->align ||
                x->old_addr != y->old_addr || x->stack != y->stack || x->weight != y->weight)))
      fail_msg("batch %zu: event %zu differs (%s at %" PRIu64 ", one by one %s at %" PRIu64 ")", batch, i,
               hh_ev_kind_name(y->kind), y->time, hh_ev_kind_name(x->kind), x->time);
  }
  assert_int_equal(a->status, b->status);
  assert_string_equal(a->message, b->message);
}

/* hh_merge_next_n hands out what hh_merge_next does, one by one, whatever
 * the batch: on a trace of three threads whose chunks interleave, read
 * whole, with a small read-ahead window, cut short and damaged. */
static void merge_in_batches(void **state) {
  (void)state;
  v2file v;
  v2_begin(&v, HH_TRACE_FLAG_STACKS);
  tb_chunk_begin(&v.file, 0, 0);
  for (uint64_t id = 1; id <= 8; id++) tb_stack(&v.file, id, 0, 0x400000 + id);
  tb_chunk_end(&v.file, HH_CHUNK_RAW);
  uint64_t now = 1000, live[THREADS + 1][256];
  size_t nlive[THREADS + 1] = {0}, next_addr[THREADS + 1] = {0};
  for (int c = 0; c < 60; c++) {
    uint32_t t = 1 + (uint32_t)(rnd() % THREADS);
    rows_begin(&v, t, now);
    for (int k = 0; k < 200; k++) {
      now += rnd() % 3; /* ties between threads are common */
      if (nlive[t] > 0 && (nlive[t] == 256 || rnd() % 2)) {
        size_t i = rnd() % nlive[t];
        tb_free(&v.rows, 9, now, live[t][i]);
        live[t][i] = live[t][--nlive[t]];
      } else {
        uint64_t a = 0x1000000ull * t + 64 * next_addr[t]++;
        tb_alloc(&v.rows, 0, now, a, 1 + rnd() % 48, 1 + rnd() % 8, 0);
        live[t][nlive[t]++] = a;
      }
    }
    rows_end(&v);
    now -= 150; /* the next chunk overlaps this one in time */
  }
  const size_t batches[] = {1, 2, 7, 100, 4096};
  merged one, many;
  /* whole, and with read-ahead windows of one chunk and of a few */
  const size_t windows[] = {0, 1, 1024};
  for (size_t w = 0; w < sizeof windows / sizeof *windows; w++) {
    size_t window = windows[w];
    merge_into(&one, v.file.buf, v.file.len, window, 0);
    assert_true(one.n > 12000);
    for (size_t b = 0; b < sizeof batches / sizeof *batches; b++) {
      merge_into(&many, v.file.buf, v.file.len, window, batches[b]);
      same_merge(&one, &many, batches[b]);
      free(many.ev);
    }
    free(one.ev);
  }
  /* cut short and damaged */
  uint8_t *copy = malloc(v.file.len);
  for (int k = 0; k < 24; k++) {
    memcpy(copy, v.file.buf, v.file.len);
    size_t len = v.file.len, at = HH_TRACE_HEADER_BYTES + rnd() % (v.file.len - HH_TRACE_HEADER_BYTES);
    if (k % 2)
      copy[at] ^= (uint8_t)(1u << (rnd() % 8));
    else
      len = at;
    merge_into(&one, copy, len, 0, 0);
    for (size_t b = 0; b < sizeof batches / sizeof *batches; b++) {
      merge_into(&many, copy, len, 0, batches[b]);
      same_merge(&one, &many, batches[b]);
      free(many.ev);
    }
    free(one.ev);
  }
  free(copy);
  v2_end(&v);
  tb_free_all(&v.file);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(round_trip),
      cmocka_unit_test(round_trip_version_2),
      cmocka_unit_test(round_trip_version_3),
      cmocka_unit_test(round_trip_version_4),
      cmocka_unit_test(v4_address_fields),
      cmocka_unit_test(v5_sizes_in_op),
      cmocka_unit_test(provisional_chunks),
      cmocka_unit_test(provisional_far_from_own_chunk),
      cmocka_unit_test(checksums_by_version),
      cmocka_unit_test(thread_index_flips_are_damage),
      cmocka_unit_test(huge_size_is_damage),
      cmocka_unit_test(hostile_many_threads),
      cmocka_unit_test(models_at_the_memory_limit),
      cmocka_unit_test(many_threads_many_classes),
      cmocka_unit_test(full_histories),
      cmocka_unit_test(merge_in_batches),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
