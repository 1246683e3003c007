/* heaphook's own lookups in the loader, leaving no error behind.
 *
 * A dlsym or dlopen that fails leaves glibc's dlerror state set: the
 * message and the thread's holder for it, malloc'd there. When the lookup
 * is heaphook's, under the recursion guard, neither block is the
 * program's, yet the program's next dlopen, dlsym or dlerror frees them:
 * the tracer counted unknown frees, the usage recorder subtracted what a
 * block it never saw held in front of it (18446741812912392928 bytes at
 * peak: a C++ program with mimalloc, which its link left without
 * libstdc++, so that std::get_new_handler was not found), and the
 * program's dlerror() said heaphook's "undefined symbol:
 * _ZSt15get_new_handlerv". hh__dl_quiet hands the failure's state back
 * at once: dlerror() twice, the first marking the message as said, the
 * second freeing it and its holder (glibc 2.36, dlfcn/dlerror.c). A
 * message the program had not read yet is lost, as any lookup of
 * heaphook's meanwhile lost it already.
 *
 * A macro for dlsym: RTLD_NEXT looks after the object of the call. */
#ifndef HH_BASE_DL_QUIET_H
#define HH_BASE_DL_QUIET_H

#include <dlfcn.h>
#include <stddef.h>

static inline void *hh__dl_quiet(void *result) {
  if (result == NULL) {
    (void)dlerror();
    (void)dlerror();
  }
  return result;
}

#define hh__dlsym_quiet(handle, name) hh__dl_quiet(dlsym((handle), (name)))
#define hh__dlopen_quiet(path, mode) hh__dl_quiet(dlopen((path), (mode)))

#endif
