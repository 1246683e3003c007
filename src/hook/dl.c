/* dlclose and dl_iterate_phdr, exported by the preload libraries.
 *
 * dlclose: so that the recorders hear at once of a library going away.
 * The tracer names stacks by their return addresses: a library the loader
 * then maps where the closed one was would have its calls taken for the
 * old one's until the tracer's next look at the modules, which a program
 * that allocates through cached call sites may never take
 * (trace.dl_reuse). The wrapper calls glibc's dlclose, then tells the
 * recorders; what dlclose returns and leaves in errno and dlerror() is the
 * program's. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <link.h>

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
  if (!hh__guard_held((uintptr_t)__builtin_dwarf_cfa())) {
    int saved = errno;
    hh_guard guard = hh__guard_enter();
    hh__trace_after_dlclose();
    hh__guard_leave(guard);
    errno = saved;
  }
  return r;
}

/* dl_iterate_phdr: the program's callbacks run with glibc's loader lock
 * held, and one that allocates while another thread's stack is being
 * unwound deadlocked the two (libunwind holds its lock and waits for the
 * loader's; the callback's malloc held the loader's and waited for
 * libunwind's: trace.dl_callback). While a callback runs, the tracer takes
 * no stacks on its thread (hh__trace_in_dl_callback). The tracer's and
 * libunwind's own calls come through here too; their callbacks do not
 * allocate. */
typedef int (*phdr_cb)(struct dl_phdr_info *, size_t, void *);
typedef int (*iterate_fn)(phdr_cb, void *);

typedef struct wrapped {
  phdr_cb cb;
  void *data;
} wrapped;

static int call_wrapped(struct dl_phdr_info *info, size_t size, void *arg) {
  wrapped *w = arg;
  hh__trace_in_dl_callback++;
  int r = w->cb(info, size, w->data);
  hh__trace_in_dl_callback--;
  return r;
}

EXPORT int dl_iterate_phdr(phdr_cb cb, void *data) {
  static iterate_fn next;
  if (next == NULL) {
    next = (iterate_fn)dlsym(RTLD_NEXT, "dl_iterate_phdr");
    if (next == NULL) return 0;
  }
  wrapped w = {cb, data};
  return next(call_wrapped, &w);
}
