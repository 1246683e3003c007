/* Access to glibc's allocator (see glibc.h). */
#include "glibc.h"

#include <dlfcn.h>
#include <stdatomic.h>

typedef size_t (*usable_size_fn)(void *);
static _Atomic(usable_size_fn) glibc_usable_size;

void hh__glibc_resolve(void) {
  if (atomic_load_explicit(&glibc_usable_size, memory_order_acquire) != NULL) return;
  void *libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
  if (libc == NULL) return;
  usable_size_fn fn = (usable_size_fn)dlsym(libc, "malloc_usable_size");
  dlclose(libc);
  atomic_store_explicit(&glibc_usable_size, fn, memory_order_release);
}

size_t hh__glibc_usable_size(void *ptr) {
  usable_size_fn fn = atomic_load_explicit(&glibc_usable_size, memory_order_acquire);
  if (fn == NULL) {
    hh__glibc_resolve();
    fn = atomic_load_explicit(&glibc_usable_size, memory_order_acquire);
  }
  if (fn != NULL) return fn(ptr);
  /* Not reachable with a dynamically linked glibc; glibc's chunk layout is
   * the last resort: the size word before the block, less its header. */
  size_t word = ((size_t *)ptr)[-1];
  size_t chunk = word & ~(size_t)7;
  return (word & 2) ? chunk - 2 * sizeof(size_t) : chunk - sizeof(size_t);
}
