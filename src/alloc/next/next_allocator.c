/* The program's own allocator behind the plug-in API (next_allocator.h).
 *
 * Every function comes from the one library that defines the malloc after
 * heaphook's: a block must go back to the allocator that made it, so a
 * library without (say) its own posix_memalign is left out, said in one
 * line, rather than have glibc's serve the aligned blocks. */
#define _GNU_SOURCE
#include "next_allocator.h"

#include <dlfcn.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "base/dl_next.h"
#include "base/dl_quiet.h"
#include "base/glibc.h"
#include "base/log.h"

typedef void *(*malloc_fn)(size_t);
typedef void (*free_fn)(void *);
typedef void *(*calloc_fn)(size_t, size_t);
typedef void *(*realloc_fn)(void *, size_t);
typedef int (*posix_memalign_fn)(void **, size_t, size_t);
typedef size_t (*usable_fn)(void *);

static struct {
  malloc_fn malloc;
  free_fn free;
  calloc_fn calloc;
  realloc_fn realloc;
  posix_memalign_fn posix_memalign;
  usable_fn usable_size;
} next;

/* Set once every pointer of next is: the hook layer may use them. */
static atomic_bool found;

/* "libjemalloc.so.2": the library's file name, for reports and
 * hh_allocator_of. */
static char name[64];

/* The size to ask for: at least HH_MIN_ALIGN bytes. jemalloc, tcmalloc
 * and mimalloc serve 1 to 8 bytes from an 8-byte size class, 8-aligned
 * only, and allocator.h promises HH_MIN_ALIGN for every block: until
 * 2026-11-28 aligned_alloc(16, 1), posix_memalign(&p, 16, 8) and
 * memalign(16, 8) (served as a malloc, api.c) gave the program a block
 * 8 bytes off 16 under tcmalloc or mimalloc, with no recorder or with
 * the tracer in full (preload.own_allocator). From 9 bytes on, their
 * blocks are 16-aligned. */
static inline size_t at_least_min(size_t size) { return size < HH_MIN_ALIGN ? HH_MIN_ALIGN : size; }

/* A block aligned to align (> HH_MIN_ALIGN), or NULL. The block is
 * looked at: mimalloc 2.0.9 (Debian 12's) gives a block off its alignment
 * for 256, 512 and 1024 when the size is a multiple of it up to 1024
 * (posix_memalign(&p, 256, 256) is 128 off 256), taking its size class's
 * blocks to be aligned. heaphook asks for such sizes where the program
 * did not: C++ aligned new rounds the size up to the alignment (new of an
 * alignas(256) struct of 5 bytes), a recorder's lead adds the alignment.
 * Until 2026-11-28 those blocks reached the program 128 bytes off, under
 * the tracer or HEAPHOOK_RECORD=counts (preload.own_allocator and
 * cxx_new_delete_own_allocator, whose allocator has that fault). Asked
 * once more for a byte more, which is no such multiple; NULL if that is
 * off too. */
static void *next_aligned(size_t size, size_t align) {
  void *p;
  if (next.posix_memalign(&p, align, size) != 0) return NULL;
  if (__builtin_expect(((uintptr_t)p & (align - 1)) == 0, 1)) return p;
  next.free(p);
  if (next.posix_memalign(&p, align, size + 1) != 0) return NULL;
  if (((uintptr_t)p & (align - 1)) == 0) return p;
  next.free(p);
  return NULL;
}

static void *next_alloc(size_t size, size_t align) {
  if (align <= HH_MIN_ALIGN) return next.malloc(at_least_min(size));
  return next_aligned(size, align);
}

static void next_dealloc(void *ptr) { next.free(ptr); }

static void *next_alloc_zeroed(size_t size) { return next.calloc(1, at_least_min(size)); }

static void *next_realloc(void *ptr, size_t new_size) { return next.realloc(ptr, at_least_min(new_size)); }

static size_t next_block_size(void *ptr) { return next.usable_size(ptr); }

static void next_report(int fd) {
  hh__dprint(fd, "heaphook: the program's own allocator (%s, found after heaphook)\n", name);
}

static const hh_allocator next_allocator = {
    .abi = HH_ALLOCATOR_ABI,
    .name = name,
    .alloc = next_alloc,
    .dealloc = next_dealloc,
    .alloc_zeroed = next_alloc_zeroed,
    .realloc = next_realloc,
    .block_size = next_block_size,
    .report = next_report,
};

/* The definition of sym after heaphook's, from the library at base: NULL
 * when that library has none (the lookup went on to another one). */
static void *from(const char *sym, void *base) {
  void *fn = hh__dlsym_next(sym);
  Dl_info info;
  if (fn == NULL || dladdr(fn, &info) == 0 || info.dli_fbase != base) return NULL;
  return fn;
}

/* Where libc.so.6 is loaded. Asked of libc.so.6 itself: the names
 * __libc_malloc & co. may be another allocator's (tcmalloc defines them,
 * to stand in for glibc's internal calls). */
static void *libc_base(void) {
  void *libc = hh__dlopen_quiet("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
  if (libc == NULL) return NULL;
  void *m = hh__dlsym_quiet(libc, "malloc");
  Dl_info info;
  void *base = m != NULL && dladdr(m, &info) != 0 ? info.dli_fbase : NULL;
  dlclose(libc);
  return base;
}

const hh_allocator *hh__next_allocator_find(void) {
  if (atomic_load(&found)) return &next_allocator;
  /* Past another heaphook library preloaded after this one (it never
   * starts: its constructor sees that malloc is not its own). Until
   * 2026-11-28 the search stopped there and glibc served the program: a
   * block of its allocator's own API, freed, aborted it
   * (preload.own_allocator, two_heaphook_own). */
  void *m = hh__dlsym_next("malloc");
  Dl_info info;
  if (m == NULL || dladdr(m, &info) == 0 || info.dli_fbase == libc_base()) return NULL;
  const char *path = info.dli_fname != NULL && *info.dli_fname != '\0' ? info.dli_fname : "the program";
  const char *slash = strrchr(path, '/');
  const char *file = slash != NULL ? slash + 1 : path;
  size_t n = strlen(file) < sizeof name - 1 ? strlen(file) : sizeof name - 1;
  memcpy(name, file, n);
  name[n] = '\0';
  static const char *const needed[] = {"free", "calloc", "realloc", "posix_memalign", "malloc_usable_size"};
  void *fns[sizeof needed / sizeof needed[0]];
  for (size_t i = 0; i < sizeof needed / sizeof needed[0]; i++) {
    fns[i] = from(needed[i], info.dli_fbase);
    if (fns[i] == NULL) {
      /* As before there was this lookup: glibc serves the program (a
       * debugging preload such as libmemusage.so wraps glibc's malloc
       * and lacks these; one with a heap of its own is bypassed). */
      hh__log(
          "malloc comes from %s, which has no %s of its own: heaphook serves the program from glibc's "
          "malloc instead, past that library",
          path, needed[i]);
      return NULL;
    }
  }
  next.malloc = (malloc_fn)m;
  next.free = (free_fn)fns[0];
  next.calloc = (calloc_fn)fns[1];
  next.realloc = (realloc_fn)fns[2];
  next.posix_memalign = (posix_memalign_fn)fns[3];
  next.usable_size = (usable_fn)fns[4];
  atomic_store(&found, true);
  return &next_allocator;
}

hh_next_fns hh__next_allocator_fns(void) {
  return (hh_next_fns){next.malloc, next.free, next.calloc, next.realloc};
}

void hh__below_free(void *ptr) {
  if (atomic_load_explicit(&found, memory_order_acquire))
    next.free(ptr);
  else
    __libc_free(ptr);
}

void *hh__below_realloc(void *ptr, size_t size) {
  return atomic_load_explicit(&found, memory_order_acquire) ? next.realloc(ptr, size)
                                                            : __libc_realloc(ptr, size);
}

size_t hh__below_usable_size(void *ptr) {
  return atomic_load_explicit(&found, memory_order_acquire) ? next.usable_size(ptr)
                                                            : hh__glibc_usable_size(ptr);
}
