/* bench/shim.c plus the two tests sampled mode's hot path makes, and no
 * more: malloc takes the size off a thread's countdown, free reads the
 * word before the block and compares it with the sampled-block mark
 * (src/hook/sample.h, src/hook/block.h; the path word is read first, as
 * src/hook/entry.c does). Nothing is ever sampled: the countdown starts
 * out of reach and the mark is never written. bench/sample_pair_bench.sh
 * runs the churn under it beside libheaphook.so with nothing sampled: the
 * difference is what libheaphook.so pays beyond its design's two tests
 * (docs/benchmarks.md, "Sampled mode's per-call tests"). */
#include <stddef.h>
#include <stdint.h>

extern void *__libc_malloc(size_t);
extern void __libc_free(void *);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);

#define EXPORT __attribute__((visibility("default")))
#define MARK 0x4848b10du /* HH_BLOCK_MAGIC_SAMPLED */

enum { PATH_SAMPLED = 2 };
static struct { _Alignas(64) int path; } fast = {PATH_SAMPLED};
static __thread size_t countdown __attribute__((tls_model("initial-exec"))) = SIZE_MAX;

/* (out of line, as libheaphook's slow paths are; never reached) */
__attribute__((noinline)) static void *slow_malloc(size_t size) {
  countdown = SIZE_MAX;
  return __libc_malloc(size);
}
__attribute__((noinline)) static void slow_free(void *ptr) { __libc_free(ptr); }

EXPORT void *malloc(size_t size) {
  if (__builtin_expect(__atomic_load_n(&fast.path, __ATOMIC_RELAXED) == PATH_SAMPLED, 1)) {
    size_t left = countdown;
    if (__builtin_expect(size < left, 1)) {
      countdown = left - size;
      return __libc_malloc(size);
    }
  }
  return slow_malloc(size);
}

EXPORT void free(void *ptr) {
  if (__builtin_expect(__atomic_load_n(&fast.path, __ATOMIC_RELAXED) == PATH_SAMPLED, 1) &&
      __builtin_expect(ptr == NULL || (((const uint32_t *)ptr)[-1] | 1u) != MARK, 1)) {
    __libc_free(ptr);
    return;
  }
  slow_free(ptr);
}

EXPORT void *calloc(size_t nmemb, size_t size) { return __libc_calloc(nmemb, size); }
EXPORT void *realloc(void *ptr, size_t size) { return __libc_realloc(ptr, size); }
