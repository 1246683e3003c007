/* Built twice. libhh_deep_outer.so (HH_DEEP_OUTER), opened with
 * RTLD_DEEPBIND by deepbind_prog.c, opens libhh_deep_user.so with the flag
 * too in its constructor, inside that dlopen. libhh_deep_user.so takes
 * malloc from a library it depends on (libhh_deep_bundled.so, an
 * allocator of its own) and is lazily bound: its malloc must stay the
 * bundled one after heaphook rebinds what the outer dlopen loaded. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>

#ifdef HH_DEEP_OUTER
static void *user;

__attribute__((constructor)) static void open_user(void) {
  user = dlopen("libhh_deep_user.so", RTLD_LAZY | RTLD_DEEPBIND);
}

void *nested_user(void) { return user; }
#else
void *user_alloc(size_t n) { return malloc(n); }
#endif
