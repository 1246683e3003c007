/* The TLSF allocator behind heaphook's plug-in API (hh_allocator), plus the
 * hooks its tests use. See tlsf_allocator.c and docs/tlsf.md. */
#ifndef HH_ALLOC_TLSF_ALLOCATOR_H
#define HH_ALLOC_TLSF_ALLOCATOR_H

#include <stdbool.h>
#include <stddef.h>

#include "heaphook/allocator.h"

/* Most payload bytes one thread's cache of freed blocks may hold (docs/tlsf.md,
 * "Per-thread cache"). */
#define HH_TLSF_CACHE_MAX_BYTES ((size_t)1 << 20)

/* The allocator table ("tlsf"). */
const hh_allocator *hh__tlsf_allocator_get(void);

/* Runs tlsf_check on the live allocator under its lock. Returns 0 when all
 * invariants hold, otherwise logs the broken one to fd 2 and returns -1.
 * Returns 0 before init. */
int hh__tlsf_allocator_check(void);

/* Times a thread tries the lock before it sleeps in the kernel, set by
 * init: 0 when the process may run on one CPU only. */
unsigned hh__tlsf_allocator_spin_tries(void);

/* Pools added after init because the pools were exhausted. */
size_t hh__tlsf_allocator_growths(void);

/* Copies the mapped size of up to max pools, oldest first (the initial pool,
 * if any, then each growth's addition), into out; returns the pool count. */
size_t hh__tlsf_allocator_pool_sizes(size_t *out, size_t max);

/* For tests, with no other thread using the allocator: unmaps every pool,
 * forgets all statistics, and makes the next init read the environment
 * again. */
void hh__tlsf_allocator_reset(void);

/* For tests: reset, then make the next init use these sizes instead of
 * INITIAL_MEMPOOL_SIZE / ADDITIONAL_MEMPOOL_SIZE (both in bytes, rounded up
 * to pages; initial 0 = no initial pool, additional 0 = never grow). */
void hh__tlsf_allocator_configure(size_t initial, size_t additional);

/* For tests, after configure and before init: turn the per-thread cache on
 * or off (configure() leaves it off; the environment default is on). */
void hh__tlsf_allocator_set_cache(bool on);

/* For tests, after configure and before init: map pools of 2 MiB or more on
 * transparent huge pages (configure() leaves this off; the environment
 * default is on). */
void hh__tlsf_allocator_set_hugepages(bool on);

/* Bytes the core counts as used (blocks in thread caches included). */
size_t hh__tlsf_allocator_used_bytes(void);

#endif
