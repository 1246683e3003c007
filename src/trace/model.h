/* Format version 2's event model: what the writer and the reader of a
 * thread's event chunks both keep, so that an event is written as what the
 * reader cannot guess (docs/trace-format.md, "Event chunks, versions 2 to 5").
 *
 * - A free names its block by distance in the thread's allocation history
 *   (1: the thread's latest allocation); the reader keeps the last
 *   HH_V2_RING allocations' addresses and size classes.
 * - An allocation's address is most often a block the same thread freed
 *   recently in the same size class (allocators keep LIFO caches per class),
 *   or the one just after its previous allocation (a block split off the
 *   same free area): per class, the HH_V2_LIFO_DEPTH latest freed addresses.
 *
 * Everything here is deterministic, allocation-free and bounded: the writer
 * runs it inside the traced process. */
#ifndef HH_TRACE_MODEL_H
#define HH_TRACE_MODEL_H

#include <stdint.h>
#include <string.h>

#define HH_V2_RING 65536u /* allocations a free can name by distance */
#define HH_V2_LIFO_DEPTH 8u
#define HH_V2_CLASSES 468u

/* Streams of a version-2 event chunk, in payload order; version 4 adds
 * six after them, version 5 one more. */
enum {
  HH_V2_OPS,     /* one op byte per record (v4: a record after an allocation's
                    puts its op byte in HH_V4_OPS_ALLOC instead) */
  HH_V2_WIDE,    /* varints and strings that do not fit the op byte */
  HH_V2_REF_LO,  /* free: distance, low byte */
  HH_V2_REF_HI,  /* free: distance, high byte */
  HH_V2_SIZE_LO, /* allocation: size, low byte */
  HH_V2_SIZE_HI, /* allocation: size, high byte */
  HH_V2_STACK,   /* allocation: svarint stack id - previous one */
  HH_V2_STREAMS,
  HH_V4_OPS_ALLOC = HH_V2_STREAMS, /* op bytes of records that follow an allocation */
  HH_V4_ADDR0,                     /* address code DELTA: zigzag(delta / 16), byte 0 */
  HH_V4_ADDR1,                     /* ... byte 1 */
  HH_V4_ADDR2,                     /* ... byte 2 (0xffffff: the svarint delta is in WIDE) */
  HH_V4_FREED_LO,                  /* address code FREED: distance, low byte */
  HH_V4_FREED_HI,                  /* ... high byte */
  HH_V4_STREAMS,
  HH_V5_CODE = HH_V4_STREAMS, /* v5: a MALLOC op's address code when its aaa is 7 */
  HH_V5_STREAMS,
  HH_STREAMS_MAX = HH_V5_STREAMS,
};

/* The streams of an event chunk in a trace of format `version` (2 or more). */
static inline int hh_event_streams(uint32_t version) {
  return version >= 5 ? HH_V5_STREAMS : version >= 4 ? HH_V4_STREAMS : HH_V2_STREAMS;
}

/* Op bytes. */
#define HH_V2_OP_FREE 0x40u   /* 01dddddd: free() of a block, time delta d (63: in WIDE) */
#define HH_V2_OP_MALLOC 0x80u /* 1aaadddd: malloc(), address code a, time delta d (15: in WIDE) */
/* 00xxxxxx: everything else, fields in WIDE */
#define HH_V2_OP_ALLOC 0x00u   /* + fn */
#define HH_V2_OP_FREE_FN 0x10u /* + fn */
#define HH_V2_OP_REALLOC 0x20u /* + fn */
#define HH_V2_OP_WEIGHT 0x30u
#define HH_V2_OP_CHUNK_TIME 0x31u
#define HH_V2_OP_THREAD 0x32u

/* Address codes: 0..DEPTH-1 the class's LIFO entry, then these. */
#define HH_V2_ADDR_NEXT HH_V2_LIFO_DEPTH            /* just after the previous allocation */
#define HH_V2_ADDR_DELTA (HH_V2_LIFO_DEPTH + 1u)    /* svarint from the previous address follows */
#define HH_V2_ADDR_SAME_OLD (HH_V2_LIFO_DEPTH + 2u) /* realloc in place */
#define HH_V4_ADDR_FREED (HH_V2_LIFO_DEPTH + 3u)    /* v4: a block the thread freed (distance follows) */
#define HH_V2_ADDR_CODES (HH_V2_LIFO_DEPTH + 4u)
/* In a MALLOC op byte, versions 2-3: codes 0..5 and NEXT (6) fit; 7 means
 * "code in WIDE". */
#define HH_V2_FAST_LIFO 6u
#define HH_V2_FAST_NEXT 6u
#define HH_V2_FAST_WIDE 7u
/* Version 4: codes 0..3, NEXT (4), FREED (5), DELTA (6); 7 "code in WIDE". */
#define HH_V4_FAST_LIFO 4u
#define HH_V4_FAST_NEXT 4u
#define HH_V4_FAST_FREED 5u
#define HH_V4_FAST_DELTA 6u

static inline unsigned hh_v2_fast_of(uint32_t version, unsigned code) {
  if (version >= 4) {
    return code < HH_V4_FAST_LIFO     ? code
           : code == HH_V2_ADDR_NEXT  ? HH_V4_FAST_NEXT
           : code == HH_V4_ADDR_FREED ? HH_V4_FAST_FREED
           : code == HH_V2_ADDR_DELTA ? HH_V4_FAST_DELTA
                                      : HH_V2_FAST_WIDE;
  }
  return code < HH_V2_FAST_LIFO ? code : code == HH_V2_ADDR_NEXT ? HH_V2_FAST_NEXT : HH_V2_FAST_WIDE;
}

/* The code of a fast value other than HH_V2_FAST_WIDE. */
static inline unsigned hh_v2_code_of(uint32_t version, unsigned fast) {
  if (version >= 4) {
    return fast < HH_V4_FAST_LIFO     ? fast
           : fast == HH_V4_FAST_NEXT  ? HH_V2_ADDR_NEXT
           : fast == HH_V4_FAST_FREED ? HH_V4_ADDR_FREED
                                      : HH_V2_ADDR_DELTA;
  }
  return fast == HH_V2_FAST_NEXT ? HH_V2_ADDR_NEXT : fast;
}

/* Version 4: the blocks a thread freed (free() and its kin, not a
 * realloc's old block), numbered 1, 2, ... per thread; an allocation at the
 * address of one of the last HH_V4_FREED_RING names it by distance
 * (0: the latest). An address delta (code DELTA) that is a multiple of 16
 * is stored as the three bytes of zigzag(delta / 16) when that is below
 * HH_V4_ADDR_ESCAPE; else the three bytes are 0xff and the svarint delta is
 * in WIDE. */
#define HH_V4_FREED_RING 8192u
#define HH_V4_ADDR_ESCAPE 0xffffffu

/* Version 5 (docs/trace-format.md, "Version 5"): the MALLOC op byte is
 * 1aaassdd: the address code as in version 4, except that a code without
 * a value of aaa (7) is a byte in the CODE stream, not a varint in WIDE
 * (the churn's LIFO entries 4-7, 4% of its allocations, cost a byte each
 * in WIDE, ~2 bits in a stream of their own); ss the size's high byte when
 * the size is below 0x300 (3: the size is a two-byte field, SIZE_LO and
 * SIZE_HI, as before); dd the time delta (3: a varint in WIDE). With ticks
 * of ~1.6 us the delta is nearly always 0, and a size's high byte coded
 * with the op (one symbol for zstd's Huffman coder, which spends at least
 * a bit on each) costs less than in a stream of its own: 0.07 byte per
 * event on the churn benchmark. */
#define HH_V5_SIZE_WIDE 3u

/* Two-byte fields (distance, size): 0xffff means "the value is in WIDE". */
#define HH_V2_WIDE16 0xffffu

/* The size class of a block of size bytes: glibc's chunk sizes up to 4 KiB
 * (16-byte steps), then four classes per power of two. */
static inline unsigned hh_v2_class(uint64_t size) {
  uint64_t chunk = (size + 8 + 15) & ~(uint64_t)15;
  if (size > UINT64_MAX - 32) chunk = UINT64_MAX;
  if (chunk < 32) chunk = 32;
  if (chunk <= 4096) return (unsigned)(chunk >> 4);
  unsigned l = 63u - (unsigned)__builtin_clzll(chunk);
  return 256u + (l - 12u) * 4u + (unsigned)((chunk >> (l - 2)) & 3u);
}

/* Where the allocation after one of size bytes at addr is predicted. */
static inline uint64_t hh_v2_next(uint64_t addr, uint64_t size) {
  uint64_t chunk = (size + 8 + 15) & ~(uint64_t)15;
  if (chunk < 32) chunk = 32;
  return addr + chunk;
}

/* What both sides keep per thread besides the history of allocations. */
typedef struct hh_v2_state {
  uint64_t lifo[HH_V2_CLASSES][HH_V2_LIFO_DEPTH];
  uint64_t seq;        /* allocations so far (the next one gets seq + 1) */
  uint64_t prev_addr;  /* address of the previous record */
  uint64_t prev_stack; /* stack id of the previous allocation */
  uint64_t next_addr;  /* hh_v2_next of the previous allocation */
} hh_v2_state;

/* A size class's LIFO (HH_V2_LIFO_DEPTH addresses, 0 for an empty slot),
 * wherever the side keeps it: the writer in hh_v2_state, the reader only for
 * the classes it has seen freed. */
static inline void hh_v2_lifo_push(uint64_t *l, uint64_t addr) {
  for (unsigned i = HH_V2_LIFO_DEPTH - 1; i > 0; i--) l[i] = l[i - 1];
  l[0] = addr;
}

static inline int hh_v2_lifo_find(const uint64_t *l, uint64_t addr) {
  for (unsigned i = 0; i < HH_V2_LIFO_DEPTH; i++)
    if (l[i] == addr) return (int)i;
  return -1;
}

/* Takes entry i out of the LIFO and returns its address. */
static inline uint64_t hh_v2_lifo_take(uint64_t *l, unsigned i) {
  uint64_t a = l[i];
  for (; i + 1 < HH_V2_LIFO_DEPTH; i++) l[i] = l[i + 1];
  l[HH_V2_LIFO_DEPTH - 1] = 0;
  return a;
}

#endif
