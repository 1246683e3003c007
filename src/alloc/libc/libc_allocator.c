/* The libc passthrough allocator: every operation is glibc's own. */
#include "libc_allocator.h"

#include <malloc.h>

#include "base/glibc.h"
#include "base/log.h"

static int libc_init(void) {
  hh__glibc_resolve();
  return 0;
}

static void *libc_alloc(size_t size, size_t align) {
  return align <= HH_MIN_ALIGN ? __libc_malloc(size) : hh__glibc_memalign(align, size);
}

static void libc_dealloc(void *ptr) { __libc_free(ptr); }

static void *libc_alloc_zeroed(size_t size) { return __libc_calloc(1, size); }

static void *libc_realloc(void *ptr, size_t new_size) { return __libc_realloc(ptr, new_size); }

static size_t libc_block_size(void *ptr) { return hh__glibc_usable_size(ptr); }

/* HEAPHOOK_STATS: glibc's own view of its heap (mallinfo2 does not allocate). */
static void libc_report(int fd) {
  struct mallinfo2 mi = mallinfo2();
  hh__dprint(fd,
             "heaphook: libc allocator (glibc malloc)\n"
             "  heap (sbrk) bytes: %zu\n  mmapped bytes: %zu (%zu mappings)\n"
             "  in use bytes: %zu\n  free bytes kept: %zu\n  releasable at top: %zu\n",
             mi.arena, mi.hblkhd, mi.hblks, mi.uordblks, mi.fordblks, mi.keepcost);
}

static const hh_allocator libc_allocator = {
    .abi = HH_ALLOCATOR_ABI,
    .name = "libc",
    .init = libc_init,
    .alloc = libc_alloc,
    .dealloc = libc_dealloc,
    .alloc_zeroed = libc_alloc_zeroed,
    .realloc = libc_realloc,
    .block_size = libc_block_size,
    .report = libc_report,
};

const hh_allocator *hh__libc_allocator_get(void) { return &libc_allocator; }
