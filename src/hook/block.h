/* The block prefix: how the hook keeps per-block bytes for recorders, and
 * how it marks the blocks the sampler picked.
 *
 * With no recorder asking for bytes, the prefix size P is 0 and the hook
 * returns the allocator's block unchanged. Otherwise every block handed to
 * the program looks like this:
 *
 *   base (from the allocator)                      user (to the program)
 *   |<----------------- lead ----------------------->|
 *   | padding (aligned blocks) | recorder slots | hdr | user bytes ...
 *                              |<-------- P ------->|
 *
 *   lead = P for plain blocks; for an alignment A > 16 it is P rounded up to
 *   A, so user keeps the alignment. P is a multiple of 16, so user keeps the
 *   16-byte guarantee. hdr (8 bytes) holds lead and a magic word.
 *
 * Sampled blocks. With sampling recorders (sample.h) the magic word says
 * whether the sampler picked the block: HH_BLOCK_MAGIC_SAMPLED. With no
 * prefix, a sampled block alone gets a lead, HH_SAMPLED_LEAD bytes (or A)
 * ending in the same header, and the other blocks have none. A lead of
 * HH_SAMPLED_LEAD is kept through a realloc that is not sampled
 * (HH_BLOCK_MAGIC then: a lead, not sampled) rather than move the bytes; a
 * lead of A moves to a plain block. The hook reads the header word of every
 * block it is given back. That is safe where the word in front of a block
 * is the allocator's size word (glibc's chunk header, TLSF's block header),
 * whose high half is far below either magic word, or the header a bootstrap
 * block carries (HH_BLOCK_MAGIC, lead 0: bootstrap.c), which sends it into
 * the hook, where it is recognised by its address before any header is
 * believed (api.c, owner_of). Other allocators get a prefix when sampling
 * is on (runtime.c). A program that hands a sampled block to glibc's own
 * __libc_free would give glibc a pointer 16 bytes into its chunk: as with
 * any prefix, only the exported names may free heaphook's blocks.
 *
 * The magic word also tells our blocks from glibc blocks made before
 * heaphook took over: in a glibc block the same 8 bytes are the chunk size
 * word, whose high half would have to exceed 2^62 bytes to match. */
#ifndef HH_HOOK_BLOCK_H
#define HH_HOOK_BLOCK_H

#include <stdbool.h>
#include <stdint.h>

#define HH_BLOCK_MAGIC 0x4848b10cu
#define HH_BLOCK_MAGIC_SAMPLED (HH_BLOCK_MAGIC | 1u)
#define HH_BLOCK_HEADER 8u
#define HH_SAMPLED_LEAD 16u

typedef struct hh_block_header {
  uint32_t lead16; /* (user - base) / 16: leads up to 64 GiB */
  uint32_t magic;  /* HH_BLOCK_MAGIC or HH_BLOCK_MAGIC_SAMPLED */
} hh_block_header;

static inline hh_block_header *hh__block_header(void *user) {
  return (hh_block_header *)((char *)user - HH_BLOCK_HEADER);
}

static inline uint32_t hh__block_magic(const void *user) {
  return ((const hh_block_header *)((const char *)user - HH_BLOCK_HEADER))->magic;
}

/* True when user has our header (always, with a prefix, for our blocks). */
static inline bool hh__block_is_ours(const void *user) {
  return (hh__block_magic(user) | 1u) == HH_BLOCK_MAGIC_SAMPLED;
}

/* Clears the header of a block heaphook gives back: an allocator that keeps
 * nothing in front of its blocks (jemalloc, tcmalloc) hands the bytes on as
 * they are, and a block of its own API (mallocx) later found right behind
 * a header left there was taken for heaphook's, and the allocator was
 * given the block 16 bytes before it, another live one
 * (preload.bare_allocator_reused*, until 2026-11-28). One store into the
 * cache line the free has read. */
static inline void hh__block_forget(void *user) { hh__block_header(user)->magic = 0; }

/* False when the header word of user lies on another page than user (a
 * page-aligned pointer), which may be unmapped: the first block of a
 * mapping, as jemalloc's and tcmalloc's large blocks can be. Mappings are
 * at least 4 KiB apart on Linux whatever the page size. */
static inline bool hh__block_front_on_page(const void *user) { return ((uintptr_t)user & 4095u) != 0; }

/* Whether the header word of a page-aligned user pointer can be read
 * (api.c): a system call. */
bool hh__block_front_mapped(const void *user);

/* With the program's own allocator (hh__rt.foreign_bare), the lead to use
 * for a block of n bytes at base whose user bytes, lead bytes in, would
 * start a page: 16 bytes more when the allocator's block has room for them
 * (its size classes round up; zero: those bytes are zeroed), so that free
 * knows a plain block of heaphook's without asking whether the page in
 * front is mapped, a system call of ~2 us (api.c; a tcmalloc program's C++
 * churn, sampled: 1 free in ~770 made it, 6% of its time). Else lead: the
 * block stays, and its free takes the system call. A first version
 * exchanged such a block for another, and gave it back: jemalloc and
 * tcmalloc hand a block given back out again at once, so a program
 * allocating small blocks without freeing exchanged up to 4 times at
 * each malloc of the class, 1.7x slower (found by review). */
size_t hh__block_off_page(char *base, size_t n, size_t lead, bool zero);

static inline bool hh__block_is_sampled(const void *user) {
  return hh__block_magic(user) == HH_BLOCK_MAGIC_SAMPLED;
}

#endif
