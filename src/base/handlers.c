/* Handlers that outlive the library's destructor (handlers.h). */
#include "handlers.h"

#include <stddef.h>

/* glibc's own entry points under pthread_atfork and at_quick_exit
 * (exported, GLIBC_2.3.2 and GLIBC_2.10), with the library handle that
 * __cxa_finalize matches: NULL matches none. */
extern int __register_atfork(void (*prepare)(void), void (*parent)(void), void (*child)(void), void *dso);
extern int __cxa_at_quick_exit(void (*fn)(void *), void *dso);

int hh__atfork(void (*prepare)(void), void (*parent)(void), void (*child)(void)) {
  return __register_atfork(prepare, parent, child, NULL);
}

/* (glibc's at_quick_exit makes the same cast: the handler is called with
 * an argument it does not take, as C's atexit handlers are) */
int hh__at_quick_exit(void (*fn)(void)) { return __cxa_at_quick_exit((void (*)(void *))fn, NULL); }
