/* glibc's own allocator, reached without going through our exported names.
 *
 * glibc exports __libc_malloc & co. under stable versions, so calling them
 * needs no dlsym at start-up. malloc_usable_size has no such alias; it is
 * looked up once in libc.so.6 itself (not with RTLD_NEXT, which would find a
 * sanitizer's interceptor in test binaries). memalign is looked up the same
 * way. */
#ifndef HH_BASE_GLIBC_H
#define HH_BASE_GLIBC_H

#include <stddef.h>

void *__libc_malloc(size_t size);
void *__libc_calloc(size_t nmemb, size_t size);
void *__libc_realloc(void *ptr, size_t size);
void __libc_free(void *ptr);

/* glibc's memalign. Resolved in libc.so.6 like malloc_usable_size: the
 * sanitizers intercept the __libc_memalign name. */
void *hh__glibc_memalign(size_t align, size_t size);

/* glibc's malloc_usable_size for a block glibc made. */
size_t hh__glibc_usable_size(void *ptr);

/* Looks up what hh__glibc_usable_size needs; called at start-up so that the
 * lookup (which allocates) happens while the hook is still initialising. */
void hh__glibc_resolve(void);

#endif
