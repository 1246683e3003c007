/* TLSF: the OS-free core of heaphook's real-time allocator.
 *
 * A two-level segregated fit allocator (Masmano, Ripoll, Crespo, Real:
 * "TLSF: a new dynamic memory allocator for real-time systems", ECRTS 2004)
 * working only on memory handed to it: no locks, no mmap, no printf, no
 * malloc. malloc, free and memalign run in constant time (a handful of bit
 * scans and list operations, no loops over blocks); realloc also, apart from
 * the copy when it has to move the block.
 *
 * Every pointer returned is 16-byte aligned. Sizes are 64-bit throughout:
 * pools and blocks may be larger than 4 GiB (up to TLSF_MAX_POOL bytes).
 * The caller serialises calls on one tlsf_t (the glue in tlsf_allocator.c
 * holds a mutex). */
#ifndef HH_TLSF_H
#define HH_TLSF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Alignment of every block (and of the memory a pool needs, see below). */
#define TLSF_ALIGN 16

/* Largest request tlsf_malloc accepts (2^60 bytes); larger ones get NULL.
 * Also the largest alignment tlsf_memalign accepts. */
#define TLSF_MAX_REQUEST ((size_t)1 << 60)

/* Largest pool tlsf_add_pool accepts (2^61 bytes). */
#define TLSF_MAX_POOL ((size_t)1 << 61)

/* Bytes tlsf_create needs for the control structure (a compile-time bound,
 * checked against the real structure in tlsf.c). */
#define TLSF_CONTROL_SIZE ((size_t)14336)

/* Bytes of a pool that never become usable: pool header, first block
 * header and the end sentinel. */
#define TLSF_POOL_OVERHEAD ((size_t)48)

/* The allocator's control structure (free-list heads and bitmaps). */
typedef struct tlsf tlsf_t;

/* Creates an allocator in mem[0, bytes). The first TLSF_CONTROL_SIZE bytes
 * (after aligning mem up to 16) hold the control structure; when the rest
 * is large enough it becomes the first pool. Returns NULL when bytes is too
 * small for the control structure. */
tlsf_t *tlsf_create(void *mem, size_t bytes);

/* Adds mem[0, bytes) as a pool. The memory must stay valid (and untouched by
 * anyone else) for the allocator's lifetime. Returns the pool handle (for
 * tlsf_walk_pool) or NULL when the area, once aligned to 16, is smaller than
 * TLSF_POOL_OVERHEAD + 16 or larger than TLSF_MAX_POOL. */
void *tlsf_add_pool(tlsf_t *t, void *mem, size_t bytes);

/* A block of at least size usable bytes, 16-aligned, or NULL when no free
 * block is large enough or size > TLSF_MAX_REQUEST. size 0 gives the
 * smallest block. */
void *tlsf_malloc(tlsf_t *t, size_t size);

/* A block of at least size bytes aligned to align (a power of two; values
 * below 16 mean 16), or NULL. Constant time: one search for a block of
 * size + align + 16 bytes, whose leading gap is split off as a free block. */
void *tlsf_memalign(tlsf_t *t, size_t align, size_t size);

/* Releases a block from tlsf_malloc/memalign/realloc; NULL is ignored. The
 * block is merged with free neighbours at once. Returns 0, or -1 without
 * changing anything when the block is already free (a double free). */
int tlsf_free(tlsf_t *t, void *ptr);

/* 1 when ptr's block is in use, 0 when it is free (a cheap double-free
 * test; ptr must point into a pool of t). */
int tlsf_block_in_use(const void *ptr);

/* Resizes a block, keeping min(old usable size, size) bytes of content.
 * Grows in place when the next block is free and large enough, shrinks in
 * place, otherwise allocates, copies and frees. ptr NULL: tlsf_malloc.
 * size 0: frees ptr and returns NULL. On failure (also when ptr's block is
 * already free) returns NULL and ptr is left intact. The result is 16-aligned (a memalign'd block may move to
 * a less aligned place). */
void *tlsf_realloc(tlsf_t *t, void *ptr, size_t size);

/* Resizes the block at ptr in place to at least size usable bytes (growing
 * into a free next block or giving back a tail). Returns 1 on success, 0 when
 * that is impossible (ptr then unchanged). Constant time; lets a caller copy
 * outside its lock when it has to move a block. */
int tlsf_resize_in_place(tlsf_t *t, void *ptr, size_t size);

/* Usable bytes of the block at ptr: every byte below it may be written. */
size_t tlsf_block_size(const void *ptr);
/* The same for a used block, safe without the lock: its size bits do not
 * change while it is used (only its flag bits, which a neighbour's free
 * writes), and the word is read atomically. */
size_t tlsf_block_size_unlocked(const void *ptr);
/* Usable bytes of a used block beyond its class size: tlsf_block_size(p) is
 * the block's class size (a multiple of 16) plus this. */
#define TLSF_BLOCK_TAIL ((size_t)8)

/* Usable bytes of the block at ptr when it is in use, 0 when it is free:
 * one atomic load of the word right below ptr (the block's payload size, a
 * multiple of 16, with the FREE flag in bit 0; see tlsf.c), safe without the
 * lock for the reason given at tlsf_block_size_unlocked. Inline because it
 * is the one header read on the glue's lock-free free path. */
static inline size_t tlsf_used_block_size(const void *ptr) {
  size_t word = __atomic_load_n((const size_t *)ptr - 1, __ATOMIC_RELAXED);
  return (word & 1) != 0 ? 0 : (word & ~(size_t)15) + TLSF_BLOCK_TAIL;
}

/* Starts fetching, for writing, the header of the block physically after
 * the used block at ptr, which tlsf_free reads and updates: called before
 * taking the lock, it overlaps that cache miss with the lock's atomic
 * operation. Reads only ptr's own size word; a hint, never a fault. */
static inline void tlsf_prefetch_free(const void *ptr) {
  size_t word = __atomic_load_n((const size_t *)ptr - 1, __ATOMIC_RELAXED);
  __builtin_prefetch((const char *)ptr + (word & ~(size_t)15) + 8, 1);
}

/* Walks every pool and every free list and checks all invariants. Returns
 * NULL (0) when they hold, otherwise a static description of the first one
 * found broken. Time linear in the number of blocks. */
const char *tlsf_check(const tlsf_t *t);

/* Called for every block of a pool, in address order: ptr is the block's
 * user pointer, size its usable bytes, used 1 for allocated blocks. */
typedef void (*tlsf_walker)(void *ptr, size_t size, int used, void *user);

/* Walks one pool (a handle from tlsf_add_pool or tlsf_pool_first/next). */
void tlsf_walk_pool(const void *pool, tlsf_walker walker, void *user);

/* The pools, oldest first: tlsf_pool_first, then tlsf_pool_next until NULL.*/
const void *tlsf_pool_first(const tlsf_t *t);
const void *tlsf_pool_next(const void *pool);

/* Bytes handed to tlsf_add_pool for this pool (after aligning to 16). */
size_t tlsf_pool_size(const void *pool);

/* Statistics, all O(1) except tlsf_largest_free (one free list). */
size_t tlsf_bytes_used(const tlsf_t *t); /* usable bytes of used blocks */
size_t tlsf_bytes_free(const tlsf_t *t); /* sum of free blocks' sizes */
size_t tlsf_pool_count(const tlsf_t *t); /* pools added */
size_t tlsf_pool_bytes(const tlsf_t *t); /* sum of tlsf_pool_size */
/* Size of the largest free block (as counted in tlsf_bytes_free). A request
 * of up to that many bytes is certain to succeed only when it is at or below
 * the lower bound of the block's size class (good-fit rounding, see tlsf.c);
 * when everything is free, one pool is one free block of
 * tlsf_pool_size - TLSF_POOL_OVERHEAD bytes. *damaged is set when the
 * free list's walk met a link that leads outside the pools, or a cycle (a
 * write past a block's end): the size is then that of the blocks before. */
size_t tlsf_largest_free(const tlsf_t *t, bool *damaged);

#endif
