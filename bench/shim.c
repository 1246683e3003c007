/* The least a preloaded library can do: the malloc family's four hot names,
 * each a jump to glibc's own entry point, nothing tested, nothing counted.
 * bench/sample_pair_bench.sh runs the churn under it as the floor of
 * LD_PRELOAD interposition on this machine: what a preloaded sampler pays
 * before its first test. */
#include <stddef.h>

extern void *__libc_malloc(size_t);
extern void __libc_free(void *);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);

#define EXPORT __attribute__((visibility("default")))

EXPORT void *malloc(size_t size) { return __libc_malloc(size); }
EXPORT void free(void *ptr) { __libc_free(ptr); }
EXPORT void *calloc(size_t nmemb, size_t size) { return __libc_calloc(nmemb, size); }
EXPORT void *realloc(void *ptr, size_t size) { return __libc_realloc(ptr, size); }
