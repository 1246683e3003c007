/* A test-only trace encoder that follows docs/trace-format.md: builds a
 * whole trace file in memory, record by record, with absolute times and
 * addresses (the builder writes the deltas). It lets tests make traces the
 * real tracer never would: damaged, cut short, hostile. */
#ifndef HH_TESTS_TRACE_BUILDER_H
#define HH_TESTS_TRACE_BUILDER_H

#include <stddef.h>
#include <stdint.h>

#include "trace/format.h"

typedef struct tb {
  uint8_t *buf; /* the file so far */
  size_t len, cap;
  uint8_t *pl; /* the open chunk's payload */
  size_t pl_len, pl_cap;
  uint32_t thread;
  uint64_t prev_time, prev_addr;
  int in_chunk;
  uint32_t version; /* the header's: which checksum the chunks get */
} tb;

/* Starts a trace: header with version 1, the flags, pid 1234, ppid 1, the
 * clock (ticks per second), start wall time 1.7e18, start ticks 0. */
void tb_init(tb *b, uint32_t flags, uint64_t ticks_per_second);
void tb_init_header(tb *b, const hh_trace_header *h);
void tb_free_all(tb *b);

void tb_chunk_begin(tb *b, uint32_t thread, uint64_t base_time); /* writes CHUNK_TIME */
void tb_chunk_begin_untimed(tb *b, uint32_t thread);
/* Ends the open chunk: encoding HH_CHUNK_RAW or HH_CHUNK_ZSTD. Returns the
 * file offset of the chunk header. */
size_t tb_chunk_end(tb *b, uint32_t encoding);

void tb_alloc(tb *b, unsigned fn, uint64_t time, uint64_t addr, uint64_t size, uint64_t stack,
              uint64_t align);
void tb_free(tb *b, unsigned fn, uint64_t time, uint64_t addr);
void tb_realloc(tb *b, unsigned fn, uint64_t time, uint64_t old_addr, uint64_t new_addr, uint64_t size,
                uint64_t stack);
void tb_weight(tb *b, uint64_t weight);
void tb_stack(tb *b, uint64_t id, uint64_t parent, uint64_t ip);
void tb_thread(tb *b, uint64_t index, uint64_t tid, const char *name);
typedef struct tb_segment {
  uint64_t start, size, offset;
} tb_segment;
void tb_module(tb *b, uint64_t base, const char *path, const char *build_id, unsigned nseg,
               const tb_segment *segs);
void tb_unload(tb *b, uint64_t base);
void tb_rss(tb *b, uint64_t time, uint64_t bytes);
void tb_marker(tb *b, uint64_t time, const char *name);
void tb_command(tb *b, int argc, const char *const *argv, const char *exe);
void tb_end(tb *b, uint64_t time, uint64_t events);
void tb_exec(tb *b, uint64_t time, uint64_t events, const char *path);

/* Raw payload bytes (for records the format does not have). */
void tb_bytes(tb *b, const void *p, size_t n);
void tb_varint(tb *b, uint64_t v);

#endif
