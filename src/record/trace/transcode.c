/* A thread's buffer, as its thread encoded it (records of version 1: one
 * row per event, cheap to append), turned into a version-2 event chunk
 * (streams of like fields, events told by what the reader cannot predict:
 * src/trace/model.h) before it is compressed. This runs where chunks are
 * compressed: in the writer thread, or in the thread whose buffer it is
 * when there is no writer; never two at once for the same thread (its
 * chunks are written in order, one at a time).
 *
 * Inside the traced process: no allocation but mmap, no stdio. */
#include <string.h>
#include <sys/mman.h>

#include "internal.h"
#include "trace/model.h"

/* Per thread: the shared model state, a map from the addresses of the
 * thread's live allocations to (allocation number, size class), and in
 * version 4 the thread's last freed addresses. */
typedef struct entry {
  uint64_t addr; /* 0: empty */
  uint64_t val;  /* seq << 16 | class */
} entry;

struct hh_tr_model {
  hh_v2_state s;
  entry *e;
  size_t cap, n;
  uint32_t version; /* of the chunks it writes: HH_TRACE_VERSION, or 2-3 (tests) */
  /* v4: the last HH_V4_FREED_RING freed addresses by number, and a
   * direct-mapped table from an address's hash to the low 32 bits of its
   * number (mapped at the first free; NULL when that failed: no FREED
   * codes then, the count goes on) */
  uint64_t nfree;
  uint64_t *fring;
  uint32_t *ftab;
  bool fring_failed;
  uint64_t freed_d; /* addr_code's FREED distance */
};

#define MAP_MIN 4096u
#define MAP_MAX ((size_t)1 << 22) /* 64 MiB of map at most; then it starts over */

#define FTAB_BITS 14 /* 64 KiB: the frees an allocation reuses are mostly among the last few thousand */
#define FRING_BYTES (HH_V4_FREED_RING * sizeof(uint64_t) + ((size_t)1 << FTAB_BITS) * sizeof(uint32_t))

hh_tr_model *hh__tr_model_new(void) {
  hh_tr_model *m = hh__tr_map(sizeof *m); /* zeroed by mmap */
  if (m != NULL) m->version = HH_TRACE_VERSION;
  return m;
}

void hh__tr_model_set_version(hh_tr_model *m, uint32_t version) { m->version = version; }

/* The model as hh__tr_model_new makes it, its version kept (in a forked
 * child; for the next thread of a reused thread state). Its memory goes
 * back to the kernel rather than being cleared page by page: the map, up
 * to 64 MiB, and the model itself (a mapping of its own, zero again at the
 * next touch), whose ~30 KiB of LIFOs a memset made resident in every
 * thread state waiting for reuse (recorder.c). */
void hh__tr_model_reset(hh_tr_model *m) {
  if (m == NULL) return;
  if (m->e != NULL) munmap(m->e, m->cap * sizeof *m->e);
  if (m->fring != NULL) munmap(m->fring, FRING_BYTES);
  uint32_t version = m->version;
  if (madvise(m, sizeof *m, MADV_DONTNEED) != 0) memset(m, 0, sizeof *m);
  m->version = version;
}

static inline uint32_t ftab_slot(uint64_t addr) {
  return (uint32_t)(((addr >> 4) * 0x9E3779B97F4A7C15ull) >> (64 - FTAB_BITS));
}

/* v4: a block freed (its number is the count after it). */
static void note_freed(hh_tr_model *m, uint64_t addr) {
  m->nfree++;
  if (m->fring == NULL) {
    if (m->fring_failed) return;
    m->fring = hh__tr_map(FRING_BYTES);
    if (m->fring == NULL) {
      m->fring_failed = true;
      return;
    }
    m->ftab = (uint32_t *)(m->fring + HH_V4_FREED_RING);
  }
  m->fring[m->nfree & (HH_V4_FREED_RING - 1)] = addr;
  m->ftab[ftab_slot(addr)] = (uint32_t)m->nfree;
}

/* v4: whether addr is one of the last HH_V4_FREED_RING freed blocks (the
 * table's latest at its slot), its distance in m->freed_d. */
static inline bool find_freed(hh_tr_model *m, uint64_t addr) {
  if (m->fring == NULL || addr == 0) return false;
  uint64_t d = (uint32_t)((uint32_t)m->nfree - m->ftab[ftab_slot(addr)]);
  if (d >= HH_V4_FREED_RING || d >= m->nfree || m->fring[(m->nfree - d) & (HH_V4_FREED_RING - 1)] != addr)
    return false;
  m->freed_d = d;
  return true;
}

/* Fibonacci hashing of the address without its alignment bits: one
 * multiply (the map is the transcoder's hottest code). */
static inline size_t slot_of(uint64_t a, size_t mask) {
  return (size_t)(((a >> 4) * 0x9E3779B97F4A7C15ull) >> 40) & mask;
}

static void map_put(hh_tr_model *m, uint64_t addr, uint64_t val);
/* Room for one more, the map kept at most a third full (half full, the
 * backward shifts of map_remove and the probes made the transcoder ~35%
 * slower on the churn benchmark: 33 against 24 ns per event). When no
 * memory can be had, or the map is as large as it may grow, it is emptied:
 * frees of older blocks are then written with their addresses. */
static void map_room(hh_tr_model *m) {
  if ((m->n + 1) * 3 <= m->cap) return;
  size_t ncap = m->cap ? m->cap * 2 : MAP_MIN;
  entry *e = ncap <= MAP_MAX ? hh__tr_map(ncap * sizeof *e) : NULL;
  if (e == NULL) {
    if (m->e != NULL) memset(m->e, 0, m->cap * sizeof *m->e);
    m->n = 0;
    return;
  }
  entry *old = m->e;
  size_t ocap = m->cap;
  m->e = e;
  m->cap = ncap;
  m->n = 0;
  for (size_t i = 0; i < ocap; i++)
    if (old[i].addr) map_put(m, old[i].addr, old[i].val);
  if (old != NULL) munmap(old, ocap * sizeof *old);
}

static void map_put(hh_tr_model *m, uint64_t addr, uint64_t val) {
  size_t mask = m->cap - 1, i = slot_of(addr, mask);
  while (m->e[i].addr != 0 && m->e[i].addr != addr) i = (i + 1) & mask;
  if (m->e[i].addr == 0) m->n++;
  m->e[i].addr = addr;
  m->e[i].val = val;
}

static inline size_t map_find(const hh_tr_model *m, uint64_t addr) {
  if (m->cap == 0 || addr == 0) return SIZE_MAX;
  size_t mask = m->cap - 1;
  for (size_t i = slot_of(addr, mask);; i = (i + 1) & mask) {
    if (m->e[i].addr == addr) return i;
    if (m->e[i].addr == 0) return SIZE_MAX;
  }
}

static void map_remove(hh_tr_model *m, size_t i) {
  size_t mask = m->cap - 1;
  m->n--;
  for (size_t j = (i + 1) & mask; m->e[j].addr; j = (j + 1) & mask) {
    size_t home = slot_of(m->e[j].addr, mask);
    if (((j - home) & mask) >= ((j - i) & mask)) {
      m->e[i] = m->e[j];
      i = j;
    }
  }
  m->e[i].addr = 0;
}

/* ---- output streams --------------------------------------------------------- */

typedef struct out {
  uint8_t *p[HH_STREAMS_MAX];
} out;

static inline void put8(out *o, int s, uint8_t v) { *o->p[s]++ = v; }
static inline void putv(out *o, int s, uint64_t v) { o->p[s] = hh__tr_varint(o->p[s], v); }
static inline void putsv(out *o, int s, int64_t v) { o->p[s] = hh__tr_svarint(o->p[s], v); }

/* A two-byte field (distance or size) with its escape. */
static inline void put16(out *o, int lo, uint64_t v) {
  if (v >= HH_V2_WIDE16) {
    put8(o, lo, 0xff);
    put8(o, lo + 1, 0xff);
    putv(o, HH_V2_WIDE, v);
  } else {
    put8(o, lo, (uint8_t)v);
    put8(o, lo + 1, (uint8_t)(v >> 8));
  }
}

/* The code of an allocation's address (model.h), the model updated. */
static unsigned addr_code(hh_tr_model *m, uint64_t addr, uint64_t size, uint64_t old) {
  hh_v2_state *s = &m->s;
  unsigned code;
  uint64_t *lifo = s->lifo[hh_v2_class(size)];
  /* (0 marks an empty slot: an allocation at address 0 is never found there) */
  int li = addr != 0 ? hh_v2_lifo_find(lifo, addr) : -1;
  if (old != 0 && addr == old)
    code = HH_V2_ADDR_SAME_OLD;
  else if (li >= 0)
    code = (unsigned)li;
  else if (addr == s->next_addr)
    code = HH_V2_ADDR_NEXT;
  else if (m->version >= 4 && find_freed(m, addr))
    code = HH_V4_ADDR_FREED;
  else
    code = HH_V2_ADDR_DELTA;
  if (li >= 0 && code == (unsigned)li) hh_v2_lifo_take(lifo, (unsigned)li);
  return code;
}

static void addr_fields(hh_tr_model *m, out *o, unsigned code, uint64_t addr) {
  if (code == HH_V4_ADDR_FREED) {
    put8(o, HH_V4_FREED_LO, (uint8_t)m->freed_d);
    put8(o, HH_V4_FREED_HI, (uint8_t)(m->freed_d >> 8));
  } else if (code == HH_V2_ADDR_DELTA) {
    int64_t d = (int64_t)(addr - m->s.prev_addr);
    if (m->version < 4) {
      putsv(o, HH_V2_WIDE, d);
      return;
    }
    uint64_t z = (d & 15) == 0 ? hh_zigzag(d / 16) : HH_V4_ADDR_ESCAPE;
    if (z >= HH_V4_ADDR_ESCAPE) z = HH_V4_ADDR_ESCAPE;
    put8(o, HH_V4_ADDR0, (uint8_t)z);
    put8(o, HH_V4_ADDR1, (uint8_t)(z >> 8));
    put8(o, HH_V4_ADDR2, (uint8_t)(z >> 16));
    if (z == HH_V4_ADDR_ESCAPE) putsv(o, HH_V2_WIDE, d);
  }
}

/* Notes a new allocation (after its fields are written). */
static void allocated(hh_tr_model *m, out *o, uint64_t addr, uint64_t size, uint64_t stack) {
  hh_v2_state *s = &m->s;
  putsv(o, HH_V2_STACK, (int64_t)(stack - s->prev_stack));
  s->prev_stack = stack;
  s->seq++;
  if (addr != 0) {
    map_room(m);
    if (m->cap) map_put(m, addr, s->seq << 16 | hh_v2_class(size));
  }
  s->prev_addr = addr;
  s->next_addr = hh_v2_next(addr, size);
}

/* A free's reference to its block; push: the freed block goes on its
 * class's LIFO (frees; not the old half of a realloc). */
static void freed(hh_tr_model *m, out *o, uint64_t addr, bool push) {
  hh_v2_state *s = &m->s;
  size_t i = map_find(m, addr);
  uint64_t k = 0;
  if (i != SIZE_MAX) {
    uint64_t seq = m->e[i].val >> 16;
    unsigned cls = (unsigned)(m->e[i].val & 0xffff);
    map_remove(m, i);
    if (seq <= s->seq && s->seq - seq < HH_V2_RING) {
      k = s->seq - seq + 1;
      if (push) hh_v2_lifo_push(s->lifo[cls], addr); /* (never 0: map_find does not find 0) */
    }
  }
  put16(o, HH_V2_REF_LO, k);
  if (k == 0) putsv(o, HH_V2_WIDE, (int64_t)(addr - s->prev_addr));
  s->prev_addr = addr;
  if (push && m->version >= 4) note_freed(m, addr);
}

/* ---- the transcoder ----------------------------------------------------------- */

/* Each stream gets 2 * len + 64 bytes while being written: no record adds
 * more than twice its version-1 length to one stream. */
#define REGION(len) (2 * (len) + 64)
size_t hh__tr_transcode_room(size_t len) { return HH_STREAMS_MAX * REGION(len); }

static inline int get(const uint8_t **p, const uint8_t *end, uint64_t *v) { return hh_get_varint(p, end, v); }

size_t hh__tr_transcode(hh_tr_model *m, const uint8_t *raw, size_t len, uint8_t *dst, size_t sizes[]) {
  /* Streams are laid out REGION(len) bytes apart while written, then
   * packed behind each other. */
  out o;
  const int nstreams = hh_event_streams(m->version);
  const bool v4 = m->version >= 4;
  uint8_t *base[HH_STREAMS_MAX];
  for (int i = 0; i < nstreams; i++) base[i] = o.p[i] = dst + (size_t)i * REGION(len);
  const uint8_t *p = raw, *end = raw + len;
  uint64_t prev = 0;        /* version-1 rows: address deltas restart with each buffer */
  bool after_alloc = false; /* v4: the previous record was an allocation (each chunk starts without) */
  while (p < end) {
    unsigned type = *p++;
    /* v4: the op byte of a record that follows an allocation goes to a
     * stream of its own (what follows an allocation is another mix) */
    const int ops = v4 && after_alloc ? HH_V4_OPS_ALLOC : HH_V2_OPS;
    after_alloc = (type & 0xf0) == HH_REC_ALLOC || (type & 0xf0) == HH_REC_REALLOC;
    uint64_t dt, da, size, stack, align = 0, v, w;
    const uint8_t *s;
    switch (type & 0xf0) {
      case HH_REC_ALLOC: {
        unsigned fn = type & 0x0f;
        if (get(&p, end, &dt) || get(&p, end, &da) || get(&p, end, &size) || get(&p, end, &stack)) goto bad;
        if (hh_trace_fn_has_align(fn) && get(&p, end, &align)) goto bad;
        uint64_t addr = prev + (uint64_t)hh_unzigzag(da);
        prev = addr;
        unsigned code = addr_code(m, addr, size, 0);
        unsigned ss = HH_V5_SIZE_WIDE; /* v5: the size's high byte in the op byte */
        if (fn == 0 && m->version >= 5) {
          unsigned fast = hh_v2_fast_of(m->version, code);
          if (size < (uint64_t)HH_V5_SIZE_WIDE << 8) ss = (unsigned)(size >> 8);
          put8(&o, ops, (uint8_t)(HH_V2_OP_MALLOC | fast << 4 | ss << 2 | (dt < 3 ? dt : 3)));
          if (dt >= 3) putv(&o, HH_V2_WIDE, dt);
          if (fast == HH_V2_FAST_WIDE) put8(&o, HH_V5_CODE, (uint8_t)code); /* (codes are below 16) */
        } else if (fn == 0) {
          unsigned fast = hh_v2_fast_of(m->version, code);
          put8(&o, ops, (uint8_t)(HH_V2_OP_MALLOC | fast << 4 | (dt < 15 ? dt : 15)));
          if (dt >= 15) putv(&o, HH_V2_WIDE, dt);
          if (fast == HH_V2_FAST_WIDE) putv(&o, HH_V2_WIDE, code);
        } else {
          put8(&o, ops, (uint8_t)(HH_V2_OP_ALLOC + fn));
          putv(&o, HH_V2_WIDE, dt);
          putv(&o, HH_V2_WIDE, code);
        }
        addr_fields(m, &o, code, addr);
        if (ss < HH_V5_SIZE_WIDE)
          put8(&o, HH_V2_SIZE_LO, (uint8_t)size);
        else
          put16(&o, HH_V2_SIZE_LO, size);
        if (hh_trace_fn_has_align(fn)) putv(&o, HH_V2_WIDE, align);
        allocated(m, &o, addr, size, stack);
        break;
      }
      case HH_REC_FREE: {
        unsigned fn = type & 0x0f;
        if (get(&p, end, &dt) || get(&p, end, &da)) goto bad;
        uint64_t addr = prev + (uint64_t)hh_unzigzag(da);
        prev = addr;
        if (fn == 9) {
          put8(&o, ops, (uint8_t)(HH_V2_OP_FREE | (dt < 63 ? dt : 63)));
          if (dt >= 63) putv(&o, HH_V2_WIDE, dt);
        } else {
          put8(&o, ops, (uint8_t)(HH_V2_OP_FREE_FN + fn));
          putv(&o, HH_V2_WIDE, dt);
        }
        freed(m, &o, addr, true);
        break;
      }
      case HH_REC_REALLOC: {
        unsigned fn = type & 0x0f;
        uint64_t dn;
        if (get(&p, end, &dt) || get(&p, end, &da) || get(&p, end, &dn) || get(&p, end, &size) ||
            get(&p, end, &stack))
          goto bad;
        uint64_t old = prev + (uint64_t)hh_unzigzag(da), addr = old + (uint64_t)hh_unzigzag(dn);
        prev = addr;
        put8(&o, ops, (uint8_t)(HH_V2_OP_REALLOC + fn));
        putv(&o, HH_V2_WIDE, dt);
        freed(m, &o, old, false);
        unsigned code = addr_code(m, addr, size, old);
        putv(&o, HH_V2_WIDE, code);
        addr_fields(m, &o, code, addr);
        put16(&o, HH_V2_SIZE_LO, size);
        allocated(m, &o, addr, size, stack);
        break;
      }
      default:
        switch (type) {
          case HH_REC_CHUNK_TIME:
            if (get(&p, end, &v)) goto bad;
            put8(&o, ops, HH_V2_OP_CHUNK_TIME);
            putv(&o, HH_V2_WIDE, v);
            break;
          case HH_REC_SAMPLE_WEIGHT:
            if (get(&p, end, &v)) goto bad;
            put8(&o, ops, HH_V2_OP_WEIGHT);
            putv(&o, HH_V2_WIDE, v);
            break;
          case HH_REC_THREAD:
            if (get(&p, end, &v) || get(&p, end, &w) || get(&p, end, &size) || size > (uint64_t)(end - p))
              goto bad;
            s = p;
            p += size;
            put8(&o, ops, HH_V2_OP_THREAD);
            putv(&o, HH_V2_WIDE, v);
            putv(&o, HH_V2_WIDE, w);
            putv(&o, HH_V2_WIDE, size);
            memcpy(o.p[HH_V2_WIDE], s, size);
            o.p[HH_V2_WIDE] += size;
            break;
          default:
            goto bad;
        }
    }
  }
  /* The payload: the streams' lengths, then the streams. */
  uint8_t table[HH_STREAMS_MAX * HH_VARINT_MAX], *t = table;
  size_t total = 0;
  for (int i = 0; i < nstreams; i++) {
    sizes[i] = (size_t)(o.p[i] - base[i]);
    t = hh__tr_varint(t, sizes[i]);
  }
  /* Move the streams behind the table, in order: the first moves up by the
   * table's length (less than its region's slack), the others down. */
  size_t tlen = (size_t)(t - table);
  uint8_t *w8 = dst + tlen;
  for (int i = 0; i < nstreams; i++) {
    memmove(w8, base[i], sizes[i]);
    w8 += sizes[i];
  }
  memcpy(dst, table, tlen);
  total = (size_t)(w8 - dst);
  sizes[HH_V2_OPS] += tlen; /* the table travels with the first stream */
  return total;
bad:
  return 0; /* our own rows do not parse: a bug; the caller stops the trace (writer.c) */
}
