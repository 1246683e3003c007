/* The hook layer's internal entry points.
 *
 * entry.c exports malloc, free, ... as thin wrappers around these; tests link
 * the hook layer directly (under ASan, where the libc names belong to the
 * sanitizer) and call these instead. They implement glibc's semantics for
 * every argument (malloc(0), overflow, alignment checks, errno) and hand the
 * chosen allocator only what its contract allows (allocator.h). */
#ifndef HH_HOOK_H
#define HH_HOOK_H

#include <stddef.h>

#include "heaphook/allocator.h"

void *hh__malloc(size_t size);
void hh__free(void *ptr);
void *hh__calloc(size_t nmemb, size_t size);
void *hh__realloc(void *ptr, size_t size);
void *hh__reallocarray(void *ptr, size_t nmemb, size_t size);
int hh__posix_memalign(void **out, size_t align, size_t size);
void *hh__aligned_alloc(size_t align, size_t size);
void *hh__memalign(size_t align, size_t size);
void *hh__valloc(size_t size);
void *hh__pvalloc(size_t size);
size_t hh__malloc_usable_size(void *ptr);
void hh__free_sized(void *ptr, size_t size);
void hh__free_aligned_sized(void *ptr, size_t align, size_t size);

/* Who owns ptr (see hh_allocator_of in heaphook.h). */
const char *hh__owner_name(const void *ptr);

/* For tests that link the hook layer directly: use this allocator and these
 * recorders (a HEAPHOOK_RECORD-style list, may be NULL) instead of reading
 * the environment. Must be called before the first hh__ allocation. */
void hh__hook_setup_for_test(const hh_allocator *allocator, const char *record);

#endif
