/* dlclose, exported by the preload libraries so that the recorders hear at
 * once of a library going away. The tracer names stacks by their return
 * addresses: a library the loader then maps where the closed one was would
 * have its calls taken for the old one's until the tracer's next look at
 * the modules, which a program that allocates through cached call sites may
 * never take (trace.dl_reuse). The wrapper calls glibc's dlclose, then
 * tells the recorders; what dlclose returns and leaves in errno and
 * dlerror() is the program's. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>

#include "guard.h"
#include "record/trace/trace.h"

#define EXPORT __attribute__((visibility("default")))

typedef int (*dlclose_fn)(void *);

EXPORT int dlclose(void *handle) {
  static dlclose_fn next;
  if (next == NULL) {
    next = (dlclose_fn)dlsym(RTLD_NEXT, "dlclose");
    if (next == NULL) return -1;
  }
  int r = next(handle);
  /* Not from a signal handler that interrupted the hook on this thread:
   * the tracer's locks may be held there. */
  if (!hh__in_hook) {
    int saved = errno;
    hh__in_hook = true;
    hh__trace_after_dlclose();
    hh__in_hook = false;
    errno = saved;
  }
  return r;
}
