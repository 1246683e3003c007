/* conformance_direct_<name>: the suite against the hook layer's hh__*
 * functions, linked directly (built under ASan+UBSan, where the libc names
 * belong to the sanitizer). HH_CONFORMANCE_TABLE names the getter of the
 * allocator to put behind the hook layer (a compile definition set by
 * heaphook_add_conformance); HH_CONFORMANCE_RECORD, when set, is the
 * HEAPHOOK_RECORD-style recorder list to enable. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>

#include "conformance.h"
#include "hook/hook.h"

#ifndef HH_CONFORMANCE_TABLE
#error "HH_CONFORMANCE_TABLE must name the allocator's getter function"
#endif

#define HH_STR2(x) #x
#define HH_STR(x) HH_STR2(x)

const hh_allocator *HH_CONFORMANCE_TABLE(void);

void *__libc_malloc(size_t size);
void __libc_free(void *ptr);

int main(int argc, char **argv) {
  /* Under the sanitizers the program's malloc is the sanitizer's, so
   * glibc's own allocator would first be set up by a worker thread of a
   * forked check; glibc 2.36 then miscounts the threads attached to its
   * main arena and aborts in __malloc_arena_thread_freeres. In a preloaded
   * process the main thread sets it up first; do the same here. */
  __libc_free(__libc_malloc(1));
  hh__hook_setup_for_test(HH_CONFORMANCE_TABLE(), getenv("HH_CONFORMANCE_RECORD"));
  struct hh_api api = {
      .malloc = hh__malloc,
      .free = hh__free,
      .calloc = hh__calloc,
      .realloc = hh__realloc,
      .reallocarray = hh__reallocarray,
      .posix_memalign = hh__posix_memalign,
      .aligned_alloc = hh__aligned_alloc,
      .memalign = hh__memalign,
      .valloc = hh__valloc,
      .pvalloc = hh__pvalloc,
      .malloc_usable_size = hh__malloc_usable_size,
  };
  const char *rec = getenv("HH_CONFORMANCE_RECORD");
  char label[256];
  snprintf(label, sizeof label, "hh__ direct, allocator %s (%s), record=%s",
           HH_CONFORMANCE_TABLE()->name ? HH_CONFORMANCE_TABLE()->name : "?", HH_STR(HH_CONFORMANCE_TABLE),
           rec && *rec ? rec : "(none)");
  return hh_conformance_run(&api, label, argc, argv);
}
