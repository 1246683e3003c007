/* The hook's sampler: Poisson sampling of allocated bytes for recorders that
 * want a sample of the allocations instead of all of them (recorder.h,
 * sample_period).
 *
 * Each thread counts down an exponentially distributed number of bytes
 * (mean: the period); the allocation that brings the countdown to zero is
 * sampled, with the weight size / (1 - exp(-size / period)), an unbiased
 * estimate of the bytes it stands for, and a new countdown is drawn. The
 * sampler remembers the addresses of the live sampled blocks so that the
 * recorders hear of their frees and of no other.
 *
 * Both tests are cheap enough for the exported functions to run them inline
 * before anything else (entry.c): an allocation that leaves the countdown
 * above zero and a free whose address is not in the filter go straight to
 * glibc. The filter is a bitmap indexed by a hash of the address: a bit is
 * set while at least one live sampled block hashes to it (a count per bit,
 * changed under the sampler's lock, says how many), so a clear bit proves
 * the block was not sampled and a set one sends the free to the exact set
 * of addresses. It starts at 4096 bits (512 bytes, which stay in the
 * cache: every free reads it) and grows fourfold whenever the live samples
 * exceed 1/16 of its bits, so at most ~6% of the frees are sent on. */
#ifndef HH_HOOK_SAMPLE_H
#define HH_HOOK_SAMPLE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "runtime.h"

/* Bytes this thread may still allocate before an allocation is sampled;
 * 0 until the thread's first countdown is drawn. initial-exec TLS. */
extern __thread uint64_t hh__sample_left __attribute__((tls_model("initial-exec")));

/* The filter, hh__fast.sample_filter (runtime.h): the bitmap's address
 * (64-byte aligned) | 64 - log2 of its bits, the hash's shift. Replaced
 * bitmaps stay mapped (a reader may still be in one). */
static inline uint64_t hh__sample_hash(const void *ptr, unsigned shift) {
  return ((uint64_t)(uintptr_t)ptr >> 4) * 0x9E3779B97F4A7C15ull >> shift;
}

/* False when ptr is certainly not a live sampled block. */
static inline bool hh__sample_maybe(const void *ptr) {
  uintptr_t f = atomic_load_explicit(&hh__fast.sample_filter, memory_order_acquire);
  const _Atomic uint64_t *map = (const _Atomic uint64_t *)(f & ~(uintptr_t)63);
  uint64_t h = hh__sample_hash(ptr, (unsigned)(f & 63));
  return (atomic_load_explicit(&map[h >> 6], memory_order_relaxed) >> (h & 63)) & 1;
}

/* True, with size counted down, when an allocation of size bytes is not
 * sampled; false when it would be (or the countdown is not drawn yet):
 * the caller then goes to hh__sample_take, which decides. */
static inline bool hh__sample_skip(size_t size) {
  uint64_t left = hh__sample_left;
  if (__builtin_expect(size < left, 1)) {
    hh__sample_left = left - size;
    return true;
  }
  return false;
}

/* At start-up, with the period of the sampled recorders (bytes, > 0). */
void hh__sampler_start(uint64_t period);

/* Registers the sampler's fork handlers; called at start-up before any
 * recorder starts, so that its prepare handler runs after theirs. */
void hh__sampler_atfork(void);

/* Counts an allocation of size bytes down: 0 when it is not sampled, else
 * the bytes it stands for (>= 1). */
uint64_t hh__sample_take(size_t size);

/* Remembers ptr as a live sampled block. */
void hh__sample_note(const void *ptr);

/* Forgets ptr: true when it was a live sampled block. */
bool hh__sample_forget(const void *ptr);

#endif
