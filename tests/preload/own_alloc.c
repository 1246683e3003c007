/* A program's own allocator for preload.own_allocator: a library that
 * defines the malloc family, as jemalloc, tcmalloc and mimalloc do, and
 * counts what it serves so that the test can tell its blocks from
 * glibc's. Built twice: whole, and with -DOWN_ALLOC_NO_MEMALIGN (no
 * posix_memalign of its own, which heaphook must refuse).
 *
 * Blocks come from one mmap'ed region, bumped, never reused: enough for a
 * test program. Each block has a 16-byte header in front: its size and a
 * magic word. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#define REGION ((size_t)256 << 20)
#define MAGIC 0x6f776e61u
/* (the project builds with hidden visibility) */
#define EXPORT __attribute__((visibility("default")))

typedef struct header {
  size_t size;
  uint32_t pad;
  uint32_t magic;
} header;

static char *region;
static atomic_size_t used;
static atomic_long served, released;

static char *base(void) {
  char *r = atomic_load(&region);
  if (r == NULL) {
    char *m = mmap(NULL, REGION, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED) return NULL;
    char *expected = NULL;
    if (!atomic_compare_exchange_strong((_Atomic(char *) *)&region, &expected, m)) {
      munmap(m, REGION);
      return expected;
    }
    r = m;
  }
  return r;
}

/* A block of size bytes aligned to align (a power of two >= 16), with
 * 16-31 bytes to spare, as an allocator's size classes leave (its usable
 * size: malloc_usable_size(malloc(100)) is 128); off bytes past that
 * alignment (8: see small). */
static void *take_off(size_t size, size_t align, size_t off) {
  char *r = base();
  if (r == NULL || size > REGION) return NULL;
  size = (size + 16 + 15) & ~(size_t)15;
  size_t need = sizeof(header) + align + off + size;
  size_t at = atomic_fetch_add(&used, (need + 15) & ~(size_t)15);
  if (at + need > REGION) {
    errno = ENOMEM;
    return NULL;
  }
  uintptr_t user = (((uintptr_t)(r + at) + sizeof(header) + align - 1) & ~(uintptr_t)(align - 1)) + off;
  header *h = (header *)user - 1;
  h->size = size;
  h->magic = MAGIC;
  atomic_fetch_add(&served, 1);
  return (void *)user;
}

static void *take(size_t size, size_t align) { return take_off(size, align, 0); }

/* malloc, calloc and realloc's block of size bytes (> 0): 8 bytes off a
 * multiple of 16 up to 8 bytes, as jemalloc, tcmalloc and mimalloc serve
 * those from an 8-byte size class (heaphook must not hand such a block
 * to aligned_alloc(16, 1): own_alloc_prog.c). */
static void *small(size_t size) { return take_off(size, 16, size <= 8 ? 8 : 0); }

/* True when p lies in a block of this allocator (heaphook may hand the
 * program a pointer a prefix into it). */
EXPORT int own_alloc_owns(const void *p) {
  char *r = atomic_load(&region);
  return p != NULL && r != NULL && (const char *)p >= r && (const char *)p < r + REGION;
}
EXPORT long own_alloc_served(void) { return atomic_load(&served); }
EXPORT long own_alloc_released(void) { return atomic_load(&released); }

/* The library's own entry point, as jemalloc's mallocx: its blocks reach
 * the program's free without passing through malloc. */
EXPORT void *own_alloc_direct(size_t size) { return take(size, 16); }

/* Its functions call each other by these names, not by the exported
 * ones, which are heaphook's when it is preloaded (as a real allocator's
 * internals do). */
static void release(void *p) {
  if (p == NULL) return;
  /* not one of its blocks: what glibc's abort would be */
  if (!own_alloc_owns(p) || ((header *)p - 1)->magic != MAGIC) __builtin_trap();
  atomic_fetch_add(&released, 1);
}

static size_t usable(void *p) { return p != NULL ? ((header *)p - 1)->size : 0; }

EXPORT void *malloc(size_t size) { return small(size ? size : 1); }

EXPORT void free(void *p) { release(p); }

EXPORT void *calloc(size_t n, size_t size) {
  size_t total;
  if (__builtin_mul_overflow(n, size, &total)) {
    errno = ENOMEM;
    return NULL;
  }
  return small(total ? total : 1); /* (mmap'ed pages, never reused: zero) */
}

EXPORT size_t malloc_usable_size(void *p) { return usable(p); }

EXPORT void *realloc(void *p, size_t size) {
  void *q = small(size ? size : 1);
  if (p == NULL || q == NULL) return q;
  size_t old = usable(p);
  memcpy(q, p, old < size ? old : size);
  release(p);
  return q;
}

#ifndef OWN_ALLOC_NO_MEMALIGN
static void *take_aligned(size_t align, size_t size) {
  if (align < sizeof(void *) || (align & (align - 1)) != 0) {
    errno = EINVAL;
    return NULL;
  }
  return take(size ? size : 1, align < 16 ? 16 : align);
}

/* posix_memalign, the one heaphook calls, has mimalloc 2.0.9's fault:
 * a size that is a multiple of 256, 512 or 1024 up to 1024 gets a block
 * half its alignment off it (mimalloc takes its size class's blocks to
 * be aligned). aligned_alloc and memalign, the program's, do not. */
EXPORT int posix_memalign(void **out, size_t align, size_t size) {
  if (align < sizeof(void *) || (align & (align - 1)) != 0) return EINVAL;
  bool off = align >= 256 && align <= 1024 && size != 0 && size <= 1024 && size % align == 0;
  void *p = off ? take_off(size, align, align / 2) : take_aligned(align, size);
  if (p == NULL) return ENOMEM;
  *out = p;
  return 0;
}

EXPORT void *aligned_alloc(size_t align, size_t size) { return take_aligned(align, size); }

EXPORT void *memalign(size_t align, size_t size) { return take_aligned(align, size); }
#endif

/* operator new(size_t) and operator delete(void *), served here as the
 * allocators named above do. */
static atomic_long new_calls;
EXPORT long own_alloc_new_calls(void) { return atomic_load(&new_calls); }
EXPORT void *_Znwm(size_t size) {
  atomic_fetch_add(&new_calls, 1);
  return take(size ? size : 1, 16);
}
EXPORT void _ZdlPv(void *p) { release(p); }
