/* A library linked without glibc's crt files (no _fini): a dlopen with
 * RTLD_DEEPBIND from it cannot be given its return address, and heaphook
 * calls glibc's itself (src/hook/dl.c); the library it opens by its path
 * is bound to heaphook's all the same. */
#define _GNU_SOURCE
#include <dlfcn.h>

/* (not a tail call: this library is the caller) */
void *nocrt_open(const char *path) {
  void *h = dlopen(path, RTLD_LAZY | RTLD_DEEPBIND);
  __asm__ volatile("" ::: "memory");
  return h;
}
