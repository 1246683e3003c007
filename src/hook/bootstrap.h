/* The bootstrap arena: a static area that serves the allocations made while
 * heaphook itself is starting (dlsym and dlopen call calloc and malloc before
 * any allocator is ready).
 *
 * Bump allocation, lock-free, zero-filled (it lives in .bss and is never
 * reused), so calloc needs no memset. free of a bootstrap block does nothing:
 * start-up allocations are few and small. Blocks are recognized by address;
 * the word in front of each is a block header of the hook's (block.h). */
#ifndef HH_HOOK_BOOTSTRAP_H
#define HH_HOOK_BOOTSTRAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HH_BOOTSTRAP_BYTES (1u << 20)

extern unsigned char hh__bootstrap_arena[HH_BOOTSTRAP_BYTES] __attribute__((visibility("hidden")));

/* A block of size bytes aligned to max(align, 16), or NULL (errno ENOMEM)
 * when the arena is spent. */
void *hh__bootstrap_alloc(size_t size, size_t align);

static inline bool hh__bootstrap_owns(const void *ptr) {
  return (uintptr_t)ptr - (uintptr_t)hh__bootstrap_arena < HH_BOOTSTRAP_BYTES;
}

/* The size that was asked for the bootstrap block at ptr. */
size_t hh__bootstrap_size(const void *ptr);

#endif
