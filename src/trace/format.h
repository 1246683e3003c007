/* The heaphook trace format, versions 1 to 5: constants and the primitive
 * encodings shared by the writer (inside the traced process: no allocation)
 * and the reader (the heaphook command). docs/trace-format.md describes it. */
#ifndef HH_TRACE_FORMAT_H
#define HH_TRACE_FORMAT_H

#include <stddef.h>
#include <stdint.h>

/* xxHash's XXH3, inlined (header only: nothing more for the preloaded
 * library to load). */
#define XXH_INLINE_ALL
#include <xxhash.h>

#define HH_TRACE_MAGIC "HHTRACE" /* 8 bytes with the NUL */
#define HH_TRACE_VERSION 5u      /* what the tracer writes; readers read 1 to 5 */
#define HH_TRACE_HEADER_BYTES 64u

enum {
  HH_TRACE_FLAG_STACKS = 1u << 0,
  HH_TRACE_FLAG_SAMPLED = 1u << 1,
  HH_TRACE_FLAG_ZSTD = 1u << 2,
};

typedef struct hh_trace_header {
  char magic[8];
  uint32_t version;
  uint32_t flags;
  uint32_t pid;
  uint32_t ppid;
  uint64_t ticks_per_second;
  uint64_t start_wall_ns;
  uint64_t start_ticks;
  uint64_t sample_bytes;
  uint64_t reserved;
} hh_trace_header;
_Static_assert(sizeof(hh_trace_header) == HH_TRACE_HEADER_BYTES, "header layout");

/* The header's checksum (its last field, "reserved" until 2026-11-24, when
 * the tracer began to fill it): XXH3-64 of the 56 bytes before it, with
 * its lowest bit set, so that 0 keeps meaning "none" (older traces). The
 * chunks' checksums cover their payloads only: before, a flipped bit in
 * the clock gave a report of wrong times read as whole. */
static inline uint64_t hh_header_sum(const hh_trace_header *h) {
  return XXH3_64bits(h, offsetof(hh_trace_header, reserved)) | 1;
}

#define HH_CHUNK_MAGIC "HHCK" /* 4 bytes, no NUL */
#define HH_CHUNK_HEADER_BYTES 24u
#define HH_CHUNK_MAX_DECODED (16u << 20)

enum { HH_CHUNK_RAW = 0, HH_CHUNK_ZSTD = 1 };
/* Version 4: or'ed into a program thread's chunk encoding, "provisional":
 * the thread's buffer so far, as rows (version 1's records), written by
 * the tracer's writer while the thread was idle. It counts only when no
 * later chunk of that thread follows in the file (the process was killed
 * before the thread wrote its buffer itself); otherwise that later chunk
 * holds the same events again. */
#define HH_CHUNK_PROVISIONAL 0x100u

typedef struct hh_chunk_header {
  char magic[4];
  uint32_t encoding;
  uint32_t stored_bytes;
  uint32_t decoded_bytes;
  uint32_t checksum; /* of the stored payload: hh_chunk_sum */
  uint32_t thread;   /* thread index; 0 for process records */
} hh_chunk_header;
_Static_assert(sizeof(hh_chunk_header) == HH_CHUNK_HEADER_BYTES, "chunk header layout");

/* Record types. ALLOC, FREE and REALLOC carry the hooked function (enum
 * hh_call order) in their low nibble. */
enum {
  HH_REC_CHUNK_TIME = 0x01,
  HH_REC_ALLOC = 0x10,
  HH_REC_FREE = 0x20,
  HH_REC_REALLOC = 0x30,
  HH_REC_STACK = 0x40,
  HH_REC_THREAD = 0x41,
  HH_REC_MODULE_LOAD = 0x42,
  HH_REC_MODULE_UNLOAD = 0x43,
  HH_REC_RSS = 0x44,
  HH_REC_MARKER = 0x45,
  HH_REC_COMMAND = 0x46,
  HH_REC_SAMPLE_WEIGHT = 0x47,
  HH_REC_END = 0x48,
  HH_REC_EXEC = 0x49, /* version 4 */
};

/* Bounds a trace's sizes keep. No block is larger than an address space
 * (2^57 bytes with 5-level paging); a sampling period is at most 2^56 bytes
 * (64 PiB), so a sample's weight (size / P(sampled) <= size + period) is
 * below 2^58; and all the bytes of a trace's allocations add up to less
 * than 2^62, so that no sum a reader keeps can wrap (a real program would
 * allocate for years to get there). A reader calls a trace past any of
 * them damaged. */
#define HH_SIZE_MAX (1ull << 57)
#define HH_SAMPLE_PERIOD_MAX (1ull << 56)
#define HH_WEIGHT_MAX (1ull << 58)
#define HH_BYTES_TOTAL_MAX (1ull << 62)

/* Hooked functions whose ALLOC record carries an alignment. */
static inline int hh_trace_fn_has_align(unsigned fn) { return fn >= 4 && fn <= 8; }

/* ---- primitive encodings -------------------------------------------------- */

#define HH_VARINT_MAX 10

/* Writes v as LEB128 at p; returns the bytes written (1..10). */
static inline size_t hh_put_varint(uint8_t *p, uint64_t v) {
  size_t n = 0;
  while (v >= 0x80) {
    p[n++] = (uint8_t)(v | 0x80);
    v >>= 7;
  }
  p[n++] = (uint8_t)v;
  return n;
}

static inline uint64_t hh_zigzag(int64_t v) { return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63); }
static inline int64_t hh_unzigzag(uint64_t v) { return (int64_t)(v >> 1) ^ -(int64_t)(v & 1); }

/* Reads a LEB128 value from [*p, end); returns 0 and advances *p, or -1 when
 * the bytes end first or the value is longer than 10 bytes. */
static inline int hh_get_varint(const uint8_t **p, const uint8_t *end, uint64_t *out) {
  uint64_t v = 0;
  unsigned shift = 0;
  for (const uint8_t *q = *p; q < end && shift < 70; q++, shift += 7) {
    v |= (uint64_t)(*q & 0x7f) << shift;
    if ((*q & 0x80) == 0) {
      *p = q + 1;
      *out = v;
      return 0;
    }
  }
  return -1;
}

static inline uint32_t hh_fnv1a32(const void *data, size_t n) {
  const uint8_t *p = data;
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 16777619u;
  return h;
}

/* A chunk's checksum in a trace of format `version`: FNV-1a up to version
 * 2, then the low 32 bits of XXH3-64 (FNV-1a goes a byte at a time through
 * a multiply, ~4 cycles a byte: ~5% of reading a trace, ~9% of the
 * tracer's writer; XXH3 reads 16+ bytes a cycle, docs/trace-format.md). */
static inline uint32_t hh_chunk_sum(uint32_t version, const void *data, size_t n) {
  return version >= 3 ? (uint32_t)XXH3_64bits(data, n) : hh_fnv1a32(data, n);
}

#endif
