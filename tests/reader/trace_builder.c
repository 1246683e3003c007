/* The test-only trace encoder (trace_builder.h). */
#include "trace_builder.h"

#include <stdlib.h>
#include <string.h>
#include <zstd.h>

static void grow(uint8_t **buf, size_t *cap, size_t need) {
  if (need <= *cap) return;
  size_t c = *cap ? *cap : 256;
  while (c < need) c *= 2;
  *buf = realloc(*buf, c);
  if (!*buf) abort();
  *cap = c;
}

static void file_put(tb *b, const void *p, size_t n) {
  grow(&b->buf, &b->cap, b->len + n);
  memcpy(b->buf + b->len, p, n);
  b->len += n;
}

void tb_bytes(tb *b, const void *p, size_t n) {
  grow(&b->pl, &b->pl_cap, b->pl_len + n);
  memcpy(b->pl + b->pl_len, p, n);
  b->pl_len += n;
}

void tb_varint(tb *b, uint64_t v) {
  uint8_t tmp[HH_VARINT_MAX];
  tb_bytes(b, tmp, hh_put_varint(tmp, v));
}
static void put_byte(tb *b, uint8_t v) { tb_bytes(b, &v, 1); }
static void put_svarint(tb *b, int64_t v) { tb_varint(b, hh_zigzag(v)); }
static void put_string(tb *b, const char *s) {
  size_t n = strlen(s);
  tb_varint(b, n);
  tb_bytes(b, s, n);
}

void tb_init_header(tb *b, const hh_trace_header *h) {
  memset(b, 0, sizeof *b);
  b->version = h->version;
  file_put(b, h, sizeof *h);
}

void tb_init(tb *b, uint32_t flags, uint64_t tps) {
  hh_trace_header h;
  memset(&h, 0, sizeof h);
  memcpy(h.magic, HH_TRACE_MAGIC, 8);
  h.version = 1; /* the builder writes version-1 records (rows in every chunk) */
  h.flags = flags;
  h.pid = 1234;
  h.ppid = 1;
  h.ticks_per_second = tps;
  h.start_wall_ns = 1700000000000000000ull;
  h.start_ticks = 0;
  tb_init_header(b, &h);
}

void tb_free_all(tb *b) {
  free(b->buf);
  free(b->pl);
  memset(b, 0, sizeof *b);
}

void tb_chunk_begin_untimed(tb *b, uint32_t thread) {
  b->pl_len = 0;
  b->thread = thread;
  b->prev_time = 0;
  b->prev_addr = 0;
  b->in_chunk = 1;
}

void tb_chunk_begin(tb *b, uint32_t thread, uint64_t base_time) {
  tb_chunk_begin_untimed(b, thread);
  put_byte(b, HH_REC_CHUNK_TIME);
  tb_varint(b, base_time);
  b->prev_time = base_time;
}

static void put_u32(uint8_t *p, uint32_t v) {
  p[0] = (uint8_t)v;
  p[1] = (uint8_t)(v >> 8);
  p[2] = (uint8_t)(v >> 16);
  p[3] = (uint8_t)(v >> 24);
}

size_t tb_chunk_end(tb *b, uint32_t encoding) {
  size_t at = b->len;
  uint8_t *stored = b->pl;
  size_t nstored = b->pl_len;
  uint8_t *z = NULL;
  if (encoding == HH_CHUNK_ZSTD) {
    size_t bound = ZSTD_compressBound(b->pl_len);
    z = malloc(bound ? bound : 1);
    nstored = ZSTD_compress(z, bound, b->pl, b->pl_len, 1);
    if (ZSTD_isError(nstored)) abort();
    stored = z;
  }
  uint8_t h[HH_CHUNK_HEADER_BYTES];
  memcpy(h, HH_CHUNK_MAGIC, 4);
  put_u32(h + 4, encoding);
  put_u32(h + 8, (uint32_t)nstored);
  put_u32(h + 12, (uint32_t)b->pl_len);
  put_u32(h + 16, hh_chunk_sum(b->version, stored, nstored));
  put_u32(h + 20, b->thread);
  file_put(b, h, sizeof h);
  file_put(b, stored, nstored);
  free(z);
  b->in_chunk = 0;
  b->pl_len = 0;
  return at;
}

static void put_dtime_daddr(tb *b, uint64_t time, uint64_t addr) {
  tb_varint(b, time - b->prev_time);
  put_svarint(b, (int64_t)(addr - b->prev_addr));
  b->prev_time = time;
  b->prev_addr = addr;
}

void tb_alloc(tb *b, unsigned fn, uint64_t time, uint64_t addr, uint64_t size, uint64_t stack,
              uint64_t align) {
  put_byte(b, (uint8_t)(HH_REC_ALLOC + fn));
  put_dtime_daddr(b, time, addr);
  tb_varint(b, size);
  tb_varint(b, stack);
  if (hh_trace_fn_has_align(fn)) tb_varint(b, align);
}

void tb_free(tb *b, unsigned fn, uint64_t time, uint64_t addr) {
  put_byte(b, (uint8_t)(HH_REC_FREE + fn));
  put_dtime_daddr(b, time, addr);
}

void tb_realloc(tb *b, unsigned fn, uint64_t time, uint64_t old_addr, uint64_t new_addr, uint64_t size,
                uint64_t stack) {
  put_byte(b, (uint8_t)(HH_REC_REALLOC + fn));
  put_dtime_daddr(b, time, old_addr);
  put_svarint(b, (int64_t)(new_addr - old_addr));
  b->prev_addr = new_addr;
  tb_varint(b, size);
  tb_varint(b, stack);
}

void tb_weight(tb *b, uint64_t weight) {
  put_byte(b, HH_REC_SAMPLE_WEIGHT);
  tb_varint(b, weight);
}

void tb_stack(tb *b, uint64_t id, uint64_t parent, uint64_t ip) {
  put_byte(b, HH_REC_STACK);
  tb_varint(b, id);
  tb_varint(b, parent);
  tb_varint(b, ip);
}

void tb_thread(tb *b, uint64_t index, uint64_t tid, const char *name) {
  put_byte(b, HH_REC_THREAD);
  tb_varint(b, index);
  tb_varint(b, tid);
  put_string(b, name);
}

void tb_module(tb *b, uint64_t base, const char *path, const char *build_id, unsigned nseg,
               const tb_segment *segs) {
  put_byte(b, HH_REC_MODULE_LOAD);
  tb_varint(b, base);
  put_string(b, path);
  put_string(b, build_id);
  tb_varint(b, nseg);
  for (unsigned i = 0; i < nseg; i++) {
    tb_varint(b, segs[i].start);
    tb_varint(b, segs[i].size);
    tb_varint(b, segs[i].offset);
  }
}

void tb_unload(tb *b, uint64_t base) {
  put_byte(b, HH_REC_MODULE_UNLOAD);
  tb_varint(b, base);
}

void tb_rss(tb *b, uint64_t time, uint64_t bytes) {
  put_byte(b, HH_REC_RSS);
  tb_varint(b, time);
  tb_varint(b, bytes);
}

void tb_marker(tb *b, uint64_t time, const char *name) {
  put_byte(b, HH_REC_MARKER);
  tb_varint(b, time);
  put_string(b, name);
}

void tb_command(tb *b, int argc, const char *const *argv, const char *exe) {
  put_byte(b, HH_REC_COMMAND);
  tb_varint(b, (uint64_t)argc);
  for (int i = 0; i < argc; i++) put_string(b, argv[i]);
  put_string(b, exe);
}

void tb_end(tb *b, uint64_t time, uint64_t events) {
  put_byte(b, HH_REC_END);
  tb_varint(b, time);
  tb_varint(b, events);
}

void tb_exec(tb *b, uint64_t time, uint64_t events, const char *path) {
  put_byte(b, HH_REC_EXEC);
  tb_varint(b, time);
  tb_varint(b, events);
  put_string(b, path);
}
