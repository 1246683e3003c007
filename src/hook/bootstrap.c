/* The bootstrap arena (see bootstrap.h). Each block is preceded by 16 bytes:
 * the requested size, then a block header word of the hook's (block.h), so
 * that the sampled path's free, which tests only that word, sends the block
 * into the hook, where it is recognised by its address (entry.c). */
#include "bootstrap.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>

#include "block.h"

_Alignas(4096) unsigned char hh__bootstrap_arena[HH_BOOTSTRAP_BYTES];
static _Atomic size_t used;

#define HEADER 16u

void *hh__bootstrap_alloc(size_t size, size_t align) {
  if (align < HEADER) align = HEADER;
  if (size > HH_BOOTSTRAP_BYTES || align > HH_BOOTSTRAP_BYTES) goto full;
  size_t start = atomic_load_explicit(&used, memory_order_relaxed);
  size_t user, end;
  uintptr_t base = (uintptr_t)hh__bootstrap_arena;
  do {
    /* Align the address, not the offset: the arena is only page-aligned. */
    user = ((base + start + HEADER + align - 1) & ~(uintptr_t)(align - 1)) - base;
    end = user + ((size + HEADER - 1) & ~(size_t)(HEADER - 1));
    if (end > HH_BOOTSTRAP_BYTES) goto full;
  } while (
      !atomic_compare_exchange_weak_explicit(&used, &start, end, memory_order_relaxed, memory_order_relaxed));
  size_t *header = (size_t *)(hh__bootstrap_arena + user - HEADER);
  header[0] = size;
  void *block = hh__bootstrap_arena + user;
  *hh__block_header(block) = (hh_block_header){.lead16 = 0, .magic = HH_BLOCK_MAGIC};
  return block;
full:
  errno = ENOMEM;
  return NULL;
}

size_t hh__bootstrap_size(const void *ptr) { return ((const size_t *)ptr)[-2]; }
