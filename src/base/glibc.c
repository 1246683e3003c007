/* Access to glibc's allocator (see glibc.h). */
#include "glibc.h"

#include <dlfcn.h>
#include <stdatomic.h>

typedef size_t (*usable_size_fn)(void *);
typedef void *(*memalign_fn)(size_t, size_t);
static _Atomic(usable_size_fn) glibc_usable_size;
static _Atomic(memalign_fn) glibc_memalign;

/* Exported by glibc under this name too; the fallback when the lookup fails. */
void *__libc_memalign(size_t align, size_t size);

void hh__glibc_resolve(void) {
  if (atomic_load_explicit(&glibc_usable_size, memory_order_acquire) != NULL) return;
  void *libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
  if (libc == NULL) return;
  memalign_fn ma = (memalign_fn)dlsym(libc, "__libc_memalign");
  usable_size_fn fn = (usable_size_fn)dlsym(libc, "malloc_usable_size");
  dlclose(libc);
  atomic_store_explicit(&glibc_memalign, ma, memory_order_release);
  atomic_store_explicit(&glibc_usable_size, fn, memory_order_release);
}

void *hh__glibc_memalign(size_t align, size_t size) {
  memalign_fn fn = atomic_load_explicit(&glibc_memalign, memory_order_acquire);
  return fn != NULL ? fn(align, size) : __libc_memalign(align, size);
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
