/* TLSF core: blocks, size classes, free lists, pools, invariant checks.
 *
 * Written from the TLSF papers (Masmano et al., ECRTS 2004 and the 2008
 * "Implementation of a constant-time dynamic storage allocator"); see
 * docs/tlsf.md for the design and how it differs from TLSF 2.4.6. Nothing
 * here locks, maps memory, prints or allocates. */
#include "alloc/tlsf/tlsf.h"

#include <stdbool.h>
#include <string.h>

/* ---- Blocks ------------------------------------------------------------
 *
 * A pool is a sequence of physically adjacent blocks. A block starts at a
 * 16-aligned address B:
 *
 *   B+0   prev_phys  address of the previous block. This word is NOT part of
 *                    this block: it is the last 8 bytes of the previous
 *                    block's usable area, so it is valid only while the
 *                    previous block is free (PREV_FREE set below); while the
 *                    previous block is in use it holds that block's data.
 *   B+8   size       payload bytes (a multiple of 16, at least 16) with two
 *                    flags in the low bits: FREE (this block is free) and
 *                    PREV_FREE (the previous block is free).
 *   B+16  payload    the user pointer. A free block keeps its free-list
 *                    links here (next_free, prev_free).
 *
 * The next block starts at B + 16 + size, so a used block may use
 * size + 8 bytes: its payload plus the next block's prev_phys word.
 *
 * Invariants (checked by tlsf_check):
 *   - FREE of a block equals PREV_FREE of the next one, and when it is set
 *     the next block's prev_phys points back to it;
 *   - no two free blocks are adjacent (free merges at once);
 *   - every free block is on exactly the free list of its size class, and
 *     only free blocks are on lists;
 *   - the first block of a pool never has PREV_FREE; the last "block" is a
 *     sentinel of size 0, marked used, 16 bytes before the pool's end. */
typedef struct block {
  struct block *prev_phys;
  size_t size;
  struct block *next_free;
  struct block *prev_free;
} block;

#define FLAG_FREE ((size_t)1)
#define FLAG_PREV_FREE ((size_t)2)
#define FLAG_MASK ((size_t)15)

/* Distance from a block's start to its payload. */
#define BLOCK_HDR ((size_t)16)
/* Bytes a used block can use beyond its size (the next prev_phys word). */
#define BLOCK_TAIL ((size_t)8)
/* Smallest payload: room for the two free-list links. */
#define BLOCK_MIN ((size_t)16)

/* ---- Size classes --------------------------------------------------------
 *
 * First level (fl): the power of two of the size; second level (sl): which
 * of SL_COUNT equal slices of that power of two. Sizes below SMALL_LIMIT
 * (512) all have fl 0 and are binned linearly in steps of 16 (sl = size/16),
 * so no class is narrower than the 16-byte granule. A size s >= 512 with
 * highest set bit m has fl = m - 8 and sl = the SL_LOG2 bits below bit m.
 * Block sizes are below 2^62, so fl < FL_COUNT = 54 and fl_bitmap (64 bits)
 * covers every class: no truncation to 32 bits anywhere. */
#define SL_LOG2 5
#define SL_COUNT (1u << SL_LOG2)
#define ALIGN_LOG2 4
#define FL_SHIFT (SL_LOG2 + ALIGN_LOG2)
#define SMALL_LIMIT ((size_t)1 << FL_SHIFT)
#define FL_MAX_LOG2 62
#define FL_COUNT (FL_MAX_LOG2 - FL_SHIFT + 1)

/* ---- Pools ---------------------------------------------------------------
 *
 * Each pool opens with this header, 16 bytes, followed by its first block;
 * the pools form a singly linked list in the order they were added. */
typedef struct pool_hdr {
  struct pool_hdr *next;
  size_t bytes; /* whole pool, header and sentinel included */
} pool_hdr;

/* ---- Control -------------------------------------------------------------
 *
 * heads[fl][sl] is the first free block of class (fl, sl), NULL when the
 * list is empty. Bit sl of sl_bitmap[fl] is set iff heads[fl][sl] != NULL;
 * bit fl of fl_bitmap is set iff sl_bitmap[fl] != 0. Finding a non-empty
 * class at or above a given one is therefore two bit scans. The byte
 * counters are kept up to date by every operation (checked by tlsf_check). */
struct tlsf {
  uint64_t fl_bitmap;
  uint32_t sl_bitmap[FL_COUNT];
  block *heads[FL_COUNT][SL_COUNT];
  pool_hdr *first_pool, *last_pool;
  size_t pool_count, pool_bytes;
  size_t used_bytes; /* sum of tlsf_block_size over used blocks */
  size_t free_bytes; /* sum of sizes of free blocks */
};

_Static_assert(sizeof(struct tlsf) <= TLSF_CONTROL_SIZE, "TLSF_CONTROL_SIZE too small");
_Static_assert(sizeof(block) == 2 * BLOCK_HDR, "block layout");
_Static_assert(sizeof(pool_hdr) == 16, "pool header layout");
_Static_assert(TLSF_POOL_OVERHEAD == sizeof(pool_hdr) + 2 * BLOCK_HDR, "pool overhead");
_Static_assert(FL_COUNT <= 64, "fl_bitmap has 64 bits");
_Static_assert(sizeof(size_t) == 8, "64-bit sizes");
/* tlsf_used_block_size and tlsf_prefetch_free in tlsf.h know this much. */
_Static_assert(offsetof(block, size) + sizeof(size_t) == BLOCK_HDR && FLAG_FREE == 1 && FLAG_MASK == 15,
               "size word right below the payload, FREE in bit 0");

/* ---- Small helpers ------------------------------------------------------ */

static inline size_t align_up(size_t x, size_t a) { return (x + a - 1) & ~(a - 1); }
static inline size_t align_down(size_t x, size_t a) { return x & ~(a - 1); }
static inline unsigned msb64(uint64_t x) { return 63u - (unsigned)__builtin_clzll(x); }
static inline unsigned lsb64(uint64_t x) { return (unsigned)__builtin_ctzll(x); }
static inline unsigned lsb32(uint32_t x) { return (unsigned)__builtin_ctz(x); }

static inline size_t blk_size(const block *b) { return b->size & ~FLAG_MASK; }
static inline bool blk_free(const block *b) { return (b->size & FLAG_FREE) != 0; }
static inline bool blk_prev_free(const block *b) { return (b->size & FLAG_PREV_FREE) != 0; }
static inline void blk_set_size(block *b, size_t size) { b->size = size | (b->size & FLAG_MASK); }
static inline void *blk_payload(const block *b) { return (char *)b + BLOCK_HDR; }
static inline block *blk_from_payload(const void *p) { return (block *)((char *)p - BLOCK_HDR); }
static inline block *blk_next(const block *b) { return (block *)((char *)b + BLOCK_HDR + blk_size(b)); }

/* Marks b free and tells its successor (prev_phys, PREV_FREE). */
static void blk_mark_free(block *b) {
  block *next = blk_next(b);
  b->size |= FLAG_FREE;
  next->prev_phys = b;
  next->size |= FLAG_PREV_FREE;
}

/* Marks b used and tells its successor. */
static void blk_mark_used(block *b) {
  b->size &= ~FLAG_FREE;
  blk_next(b)->size &= ~FLAG_PREV_FREE;
}

/* Cuts b (size >= size + BLOCK_HDR + BLOCK_MIN) after size payload bytes and
 * returns the new block that starts there, flags clear. Touches nothing
 * outside b; the caller sets the flags and the successor's prev_phys. */
static block *blk_split(block *b, size_t size) {
  block *rest = (block *)((char *)blk_payload(b) + size);
  rest->size = blk_size(b) - size - BLOCK_HDR;
  blk_set_size(b, size);
  return rest;
}

/* Absorbs next (the block right after b) into b; b keeps its flags. */
static void blk_absorb(block *b, block *next) { blk_set_size(b, blk_size(b) + BLOCK_HDR + blk_size(next)); }

static inline bool can_split(const block *b, size_t size) {
  return blk_size(b) >= size + BLOCK_HDR + BLOCK_MIN;
}

/* ---- Size classes ------------------------------------------------------- */

/* The class a block of this size belongs to (size < 2^62). */
static void mapping_insert(size_t size, unsigned *fl, unsigned *sl) {
  if (size < SMALL_LIMIT) {
    *fl = 0;
    *sl = (unsigned)(size >> ALIGN_LOG2);
    return;
  }
  unsigned m = msb64(size);
  *fl = m - (FL_SHIFT - 1);
  *sl = (unsigned)(size >> (m - SL_LOG2)) & (SL_COUNT - 1);
}

/* The smallest class whose every block holds size bytes: size rounded up
 * to the next class boundary (good fit). Sizes here are <= 2^61. */
static void mapping_search(size_t size, unsigned *fl, unsigned *sl) {
  if (size >= SMALL_LIMIT) size += ((size_t)1 << (msb64(size) - SL_LOG2)) - 1;
  mapping_insert(size, fl, sl);
}

/* Payload size of a block that serves a request of size bytes (which is
 * <= TLSF_MAX_REQUEST, checked by the callers before any arithmetic). */
static size_t adjust_request(size_t size) {
  if (size <= BLOCK_MIN + BLOCK_TAIL) return BLOCK_MIN;
  return align_up(size - BLOCK_TAIL, TLSF_ALIGN);
}

/* ---- Free lists --------------------------------------------------------- */

static void list_insert(tlsf_t *t, block *b) {
  unsigned fl, sl;
  mapping_insert(blk_size(b), &fl, &sl);
  block *head = t->heads[fl][sl];
  b->prev_free = NULL;
  b->next_free = head;
  if (head != NULL) head->prev_free = b;
  t->heads[fl][sl] = b;
  t->sl_bitmap[fl] |= 1u << sl;
  t->fl_bitmap |= (uint64_t)1 << fl;
  t->free_bytes += blk_size(b);
}

static void list_remove(tlsf_t *t, block *b) {
  unsigned fl, sl;
  mapping_insert(blk_size(b), &fl, &sl);
  if (b->prev_free != NULL) b->prev_free->next_free = b->next_free;
  if (b->next_free != NULL) b->next_free->prev_free = b->prev_free;
  if (t->heads[fl][sl] == b) {
    t->heads[fl][sl] = b->next_free;
    if (b->next_free == NULL) {
      t->sl_bitmap[fl] &= ~(1u << sl);
      if (t->sl_bitmap[fl] == 0) t->fl_bitmap &= ~((uint64_t)1 << fl);
    }
  }
  t->free_bytes -= blk_size(b);
}

/* Takes a free block of at least size bytes (size <= 2^61) off its list, or
 * returns NULL. Two bit scans; no list is walked. */
static block *find_free(tlsf_t *t, size_t size) {
  unsigned fl, sl;
  mapping_search(size, &fl, &sl);
  if (fl >= FL_COUNT) return NULL;
  uint32_t sl_map = t->sl_bitmap[fl] & (~0u << sl);
  if (sl_map == 0) {
    uint64_t fl_map = t->fl_bitmap & (~(uint64_t)0 << (fl + 1));
    if (fl_map == 0) return NULL;
    fl = lsb64(fl_map);
    sl_map = t->sl_bitmap[fl];
  }
  block *b = t->heads[fl][lsb32(sl_map)];
  list_remove(t, b);
  return b;
}

/* ---- Turning free blocks into used ones and back ------------------------ */

/* b is free, off the lists, with size >= size: gives its tail beyond size
 * back as a free block when that is big enough. The tail cannot have a free
 * successor (b's successor is not free). */
static void trim_free(tlsf_t *t, block *b, size_t size) {
  if (!can_split(b, size)) return;
  block *rest = blk_split(b, size);
  blk_mark_free(rest); /* successor keeps PREV_FREE, prev_phys -> rest */
  list_insert(t, rest);
}

/* b is used: gives its tail beyond size back, merged with a free successor. */
static void trim_used(tlsf_t *t, block *b, size_t size) {
  if (!can_split(b, size)) return;
  block *rest = blk_split(b, size);
  block *next = blk_next(rest);
  if (blk_free(next)) {
    list_remove(t, next);
    blk_absorb(rest, next);
  }
  blk_mark_free(rest);
  list_insert(t, rest);
}

/* Hands out b (free, off the lists) for a request of size payload bytes. */
static void *use_block(tlsf_t *t, block *b, size_t size) {
  trim_free(t, b, size);
  blk_mark_used(b);
  t->used_bytes += blk_size(b) + BLOCK_TAIL;
  return blk_payload(b);
}

/* ---- Public operations -------------------------------------------------- */

tlsf_t *tlsf_create(void *mem, size_t bytes) {
  uintptr_t start = align_up((uintptr_t)mem, TLSF_ALIGN);
  size_t lost = start - (uintptr_t)mem;
  if (mem == NULL || bytes < lost || bytes - lost < TLSF_CONTROL_SIZE) return NULL;
  tlsf_t *t = (tlsf_t *)start;
  memset(t, 0, sizeof *t);
  size_t rest = bytes - lost - TLSF_CONTROL_SIZE;
  if (rest >= TLSF_POOL_OVERHEAD + BLOCK_MIN) {
    tlsf_add_pool(t, (char *)start + TLSF_CONTROL_SIZE, rest);
  }
  return t;
}

void *tlsf_add_pool(tlsf_t *t, void *mem, size_t bytes) {
  uintptr_t start = align_up((uintptr_t)mem, TLSF_ALIGN);
  size_t lost = start - (uintptr_t)mem;
  if (mem == NULL || bytes < lost) return NULL;
  bytes = align_down(bytes - lost, TLSF_ALIGN);
  if (bytes < TLSF_POOL_OVERHEAD + BLOCK_MIN || bytes > TLSF_MAX_POOL) return NULL;

  pool_hdr *pool = (pool_hdr *)start;
  pool->next = NULL;
  pool->bytes = bytes;
  block *first = (block *)(pool + 1);
  first->size = bytes - TLSF_POOL_OVERHEAD; /* flags clear: no previous block */
  block *sentinel = blk_next(first);
  sentinel->size = 0; /* used, size 0 */
  blk_mark_free(first);
  list_insert(t, first);

  if (t->last_pool != NULL)
    t->last_pool->next = pool;
  else
    t->first_pool = pool;
  t->last_pool = pool;
  t->pool_count++;
  t->pool_bytes += bytes;
  return pool;
}

void *tlsf_malloc(tlsf_t *t, size_t size) {
  if (size > TLSF_MAX_REQUEST) return NULL;
  size_t adj = adjust_request(size);
  block *b = find_free(t, adj);
  return b != NULL ? use_block(t, b, adj) : NULL;
}

/* Where the aligned payload goes inside free block b: the first address
 * aligned to align whose leading gap is 0 or can be a block of its own
 * (BLOCK_HDR + BLOCK_MIN bytes). The gap is at most align + 16. */
static size_t aligned_gap(const block *b, size_t align) {
  uintptr_t p = (uintptr_t)blk_payload(b);
  size_t gap = align_up(p, align) - p;
  if (gap != 0 && gap < BLOCK_HDR + BLOCK_MIN) {
    gap = align_up(p + BLOCK_HDR + BLOCK_MIN, align) - p;
  }
  return gap;
}

void *tlsf_memalign(tlsf_t *t, size_t align, size_t size) {
  if (align <= TLSF_ALIGN) return tlsf_malloc(t, size);
  if ((align & (align - 1)) != 0 || align > TLSF_MAX_REQUEST || size > TLSF_MAX_REQUEST) {
    return NULL;
  }
  size_t adj = adjust_request(size);
  /* Any block of this size has room for the worst gap plus adj bytes. */
  block *b = find_free(t, adj + align + BLOCK_HDR);
  if (b == NULL) return NULL;
  size_t gap = aligned_gap(b, align);
  if (gap != 0) {
    /* The gap becomes a free block of gap - 16 bytes. Its predecessor is
     * used (b was free), so it needs no merging; b's flags stay with it. */
    block *aligned = blk_split(b, gap - BLOCK_HDR);
    list_insert(t, b);
    aligned->prev_phys = b;
    aligned->size |= FLAG_FREE | FLAG_PREV_FREE;
    b = aligned;
  }
  return use_block(t, b, adj);
}

int tlsf_free(tlsf_t *t, void *ptr) {
  if (ptr == NULL) return 0;
  block *b = blk_from_payload(ptr);
  if (blk_free(b)) return -1;
  t->used_bytes -= blk_size(b) + BLOCK_TAIL;
  /* Free in its own header too, though a free predecessor absorbs it: a
   * second free of it found a used block there, went on, and corrupted the
   * heap (a later malloc handed out a live block; an aligned block, which
   * always has a free gap before it, crashed). */
  b->size |= FLAG_FREE;
  if (blk_prev_free(b)) {
    block *prev = b->prev_phys;
    list_remove(t, prev);
    blk_absorb(prev, b);
    b = prev;
  }
  block *next = blk_next(b);
  if (blk_free(next)) {
    list_remove(t, next);
    blk_absorb(b, next);
  }
  blk_mark_free(b);
  list_insert(t, b);
  return 0;
}

size_t tlsf_block_size_unlocked(const void *ptr) {
  const block *b = blk_from_payload(ptr);
  return (__atomic_load_n(&b->size, __ATOMIC_RELAXED) & ~FLAG_MASK) + BLOCK_TAIL;
}

int tlsf_block_in_use(const void *ptr) { return !blk_free(blk_from_payload(ptr)); }

int tlsf_resize_in_place(tlsf_t *t, void *ptr, size_t size) {
  if (size > TLSF_MAX_REQUEST) return 0;
  size_t adj = adjust_request(size);
  block *b = blk_from_payload(ptr);
  if (blk_free(b)) return 0;
  size_t old = blk_size(b);
  if (adj > old) {
    block *next = blk_next(b);
    if (!blk_free(next) || old + BLOCK_HDR + blk_size(next) < adj) return 0;
    list_remove(t, next);
    blk_absorb(b, next);
    blk_mark_used(b); /* the new successor's PREV_FREE was set for next */
  }
  trim_used(t, b, adj);
  t->used_bytes = t->used_bytes - old + blk_size(b);
  return 1;
}

void *tlsf_realloc(tlsf_t *t, void *ptr, size_t size) {
  if (ptr == NULL) return tlsf_malloc(t, size);
  if (!tlsf_block_in_use(ptr)) return NULL;
  if (size == 0) {
    tlsf_free(t, ptr);
    return NULL;
  }
  if (tlsf_resize_in_place(t, ptr, size)) return ptr;
  void *moved = tlsf_malloc(t, size);
  if (moved == NULL) return NULL;
  /* In-place failed, so the block grows: all old bytes are kept. */
  memcpy(moved, ptr, tlsf_block_size(ptr));
  tlsf_free(t, ptr);
  return moved;
}

size_t tlsf_block_size(const void *ptr) { return blk_size(blk_from_payload(ptr)) + BLOCK_TAIL; }

/* ---- Pools and statistics ----------------------------------------------- */

static block *pool_first_block(const pool_hdr *pool) { return (block *)(pool + 1); }
static block *pool_sentinel(const pool_hdr *pool) {
  return (block *)((char *)pool + pool->bytes - BLOCK_HDR);
}

const void *tlsf_pool_first(const tlsf_t *t) { return t->first_pool; }
const void *tlsf_pool_next(const void *pool) { return ((const pool_hdr *)pool)->next; }
size_t tlsf_pool_size(const void *pool) { return ((const pool_hdr *)pool)->bytes; }

void tlsf_walk_pool(const void *pool, tlsf_walker walker, void *user) {
  const pool_hdr *p = pool;
  block *end = pool_sentinel(p);
  for (block *b = pool_first_block(p); b < end; b = blk_next(b)) {
    bool used = !blk_free(b);
    walker(blk_payload(b), blk_size(b) + (used ? BLOCK_TAIL : 0), used, user);
  }
}

size_t tlsf_bytes_used(const tlsf_t *t) { return t->used_bytes; }
size_t tlsf_bytes_free(const tlsf_t *t) { return t->free_bytes; }
size_t tlsf_pool_count(const tlsf_t *t) { return t->pool_count; }
size_t tlsf_pool_bytes(const tlsf_t *t) { return t->pool_bytes; }

/* Whether b, a block on a free list, lies with its whole size inside one
 * of t's pools. */
static bool in_a_pool(const tlsf_t *t, const block *b) {
  size_t n = 0;
  for (const pool_hdr *p = t->first_pool; p != NULL && n < t->pool_count; p = p->next, n++) {
    uintptr_t lo = (uintptr_t)pool_first_block(p), hi = (uintptr_t)p + p->bytes, at = (uintptr_t)b;
    if (at >= lo && at < hi && hi - at >= sizeof(block)) return blk_size(b) <= hi - at - BLOCK_HDR;
  }
  return false;
}

/* The walk believes no link: a program whose heap is damaged (a write past
 * a block's end over the next free block's links) may end by _exit in its
 * SIGSEGV handler, where HEAPHOOK_STATS's report calls this. Following a
 * wild link there faulted with SIGSEGV blocked, and the program died of
 * SIGSEGV instead of its handler's status (preload.reports_at_end,
 * crash_handler). So it stops at the first block that is not inside a
 * pool, and after as many blocks as the pools could hold (a cycle), and
 * says so (*damaged): the report then says the heap is damaged rather
 * than print the largest block seen before the damage (0 when the list's
 * first link was the damaged one) as if it were the answer. */
size_t tlsf_largest_free(const tlsf_t *t, bool *damaged) {
  *damaged = false;
  if (t->fl_bitmap == 0) return 0;
  unsigned fl = msb64(t->fl_bitmap);
  unsigned sl = msb64(t->sl_bitmap[fl]);
  size_t largest = 0, budget = t->pool_bytes / (2 * BLOCK_HDR) + 1;
  const block *b = t->heads[fl][sl];
  for (; b != NULL && budget > 0 && in_a_pool(t, b); b = b->next_free, budget--) {
    if (blk_size(b) > largest) largest = blk_size(b);
  }
  *damaged = b != NULL;
  return largest;
}

/* ---- Invariant checks --------------------------------------------------- */

/* Totals gathered by walking the pools. */
typedef struct walk_totals {
  size_t free_blocks, free_bytes, used_bytes, pools, pool_bytes;
} walk_totals;

/* Checks one pool's physical chain; adds to *w. */
static const char *check_pool(const pool_hdr *pool, walk_totals *w) {
  if (((uintptr_t)pool & (TLSF_ALIGN - 1)) != 0) return "pool header not 16-aligned";
  if (pool->bytes < TLSF_POOL_OVERHEAD + BLOCK_MIN || (pool->bytes & (TLSF_ALIGN - 1)) != 0) {
    return "pool size corrupt";
  }
  const block *end = pool_sentinel(pool);
  const block *b = pool_first_block(pool);
  if (blk_prev_free(b)) return "first block of a pool has PREV_FREE";
  bool prev_free = false;
  const block *prev = NULL;
  while (b != end) {
    size_t size = blk_size(b);
    if (size < BLOCK_MIN || (b->size & (FLAG_MASK & ~(FLAG_FREE | FLAG_PREV_FREE))) != 0) {
      return "block size below minimum or unknown flag bits";
    }
    if (size > (size_t)((const char *)end - (const char *)b) - BLOCK_HDR) {
      return "block runs past the end of its pool";
    }
    if (blk_prev_free(b) != prev_free) return "PREV_FREE disagrees with the previous block";
    if (prev_free && b->prev_phys != prev) return "prev_phys of a block after a free block is wrong";
    if (prev_free && blk_free(b)) return "two adjacent free blocks (missed merge)";
    if (blk_free(b)) {
      w->free_blocks++;
      w->free_bytes += size;
    } else {
      w->used_bytes += size + BLOCK_TAIL;
    }
    prev_free = blk_free(b);
    prev = b;
    b = blk_next(b);
  }
  if ((end->size & ~FLAG_PREV_FREE) != 0) return "pool sentinel corrupt";
  if (blk_prev_free(end) != prev_free) return "sentinel PREV_FREE disagrees with the last block";
  if (prev_free && end->prev_phys != prev) return "sentinel prev_phys is wrong";
  w->pools++;
  w->pool_bytes += pool->bytes;
  return NULL;
}

/* Checks one free list; *budget bounds the walk (catches cycles). */
static const char *check_list(const tlsf_t *t, unsigned fl, unsigned sl, size_t *budget) {
  const block *prev = NULL;
  for (const block *b = t->heads[fl][sl]; b != NULL; prev = b, b = b->next_free) {
    if (*budget == 0) return "more blocks on free lists than free blocks in pools (cycle?)";
    (*budget)--;
    unsigned bfl, bsl;
    if (!blk_free(b)) return "used block on a free list";
    if (b->prev_free != prev) return "free list prev link broken";
    if (blk_size(b) < BLOCK_MIN) return "free block below minimum size";
    mapping_insert(blk_size(b), &bfl, &bsl);
    if (bfl != fl || bsl != sl) return "free block on the wrong size class list";
    if (blk_free(blk_next(b))) return "free block followed by a free block";
  }
  return NULL;
}

/* Checks bitmaps against list heads and walks every list. */
static const char *check_lists(const tlsf_t *t, size_t free_blocks) {
  size_t budget = free_blocks;
  for (unsigned fl = 0; fl < FL_COUNT; fl++) {
    bool fl_bit = (t->fl_bitmap >> fl) & 1u;
    if (fl_bit != (t->sl_bitmap[fl] != 0)) return "first-level bitmap disagrees with second level";
    for (unsigned sl = 0; sl < SL_COUNT; sl++) {
      bool sl_bit = (t->sl_bitmap[fl] >> sl) & 1u;
      if (sl_bit != (t->heads[fl][sl] != NULL)) return "second-level bitmap disagrees with list";
      const char *err = check_list(t, fl, sl, &budget);
      if (err != NULL) return err;
    }
  }
  if (t->fl_bitmap >> FL_COUNT != 0) return "first-level bitmap has bits past the last class";
  if (budget != 0) return "free block in a pool missing from the free lists";
  return NULL;
}

const char *tlsf_check(const tlsf_t *t) {
  walk_totals w = {0, 0, 0, 0, 0};
  const pool_hdr *last = NULL;
  for (const pool_hdr *p = t->first_pool; p != NULL; p = p->next) {
    const char *err = check_pool(p, &w);
    if (err != NULL) return err;
    last = p;
  }
  if (last != t->last_pool) return "pool list tail is wrong";
  if (w.pools != t->pool_count || w.pool_bytes != t->pool_bytes) return "pool counters wrong";
  if (w.free_bytes != t->free_bytes) return "free byte counter disagrees with the pools";
  if (w.used_bytes != t->used_bytes) return "used byte counter disagrees with the pools";
  return check_lists(t, w.free_blocks);
}
