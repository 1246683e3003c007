/* The hook's sampler: Poisson sampling of allocated bytes for recorders that
 * want a sample of the allocations instead of all of them (recorder.h,
 * sample_period).
 *
 * Each thread counts down an exponentially distributed number of bytes
 * (mean: the period); the allocation that brings the countdown to zero is
 * sampled, with the weight size / (1 - exp(-size / period)), an unbiased
 * estimate of the bytes it stands for, and a new countdown is drawn.
 *
 * The countdown is the only test an allocation pays: one that leaves it
 * above zero goes straight to glibc from the exported functions (entry.c).
 * A sampled block is told from the others by its header, not by a set of
 * addresses: the hook gives it a lead of its own whose header word carries
 * HH_BLOCK_MAGIC_SAMPLED (block.h), so a free looks at the 8 bytes in front
 * of the block, which glibc's free reads next anyway (its chunk's size
 * word). The sampler itself keeps no block and takes no lock. */
#ifndef HH_HOOK_SAMPLE_H
#define HH_HOOK_SAMPLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Bytes this thread may still allocate before an allocation is sampled;
 * 0 until the thread's first countdown is drawn, and while the recursion
 * guard is set (guard.h). initial-exec TLS. */
extern __thread uint64_t hh__sample_left __attribute__((tls_model("initial-exec")));

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

/* Registers the sampler's fork handler (a child draws a countdown of its
 * own); called at start-up before any recorder starts, so that it runs
 * before theirs in the child. */
void hh__sampler_atfork(void);

/* Counts an allocation of size bytes down: 0 when it is not sampled, else
 * the bytes it stands for (>= 1). */
uint64_t hh__sample_take(size_t size);

#endif
