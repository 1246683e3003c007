/* libheaphook.so: the allocator named by HEAPHOOK_ALLOCATOR.
 *   unset or "libc"  glibc's malloc (pure passthrough)
 *   "tlsf"           heaphook's real-time TLSF allocator
 *   a path           a plug-in built with heaphook_add_allocator() */
#include <dlfcn.h>
#include <string.h>

#include "alloc/libc/libc_allocator.h"
#include "alloc/tlsf/tlsf_allocator.h"
#include "base/env.h"
#include "base/log.h"
#include "hook/runtime.h"

static const hh_allocator *load_plugin(const char *path) {
  void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (lib == NULL) {
    const char *why = dlerror();
    /* initial-exec TLS (what code under malloc must use) in a library
     * loaded at run time comes out of glibc's small static TLS reserve */
    if (why != NULL && strstr(why, "static TLS") != NULL)
      hh__die(
          "HEAPHOOK_ALLOCATOR=%s: cannot load the plug-in: %s (its initial-exec thread-local data does not "
          "fit in the 512 bytes glibc keeps for libraries loaded at run time: preload the plug-in itself, "
          "or give it room: GLIBC_TUNABLES=glibc.rtld.optional_static_tls=BYTES, more than its "
          "thread-local data)",
          path, why);
    hh__die("HEAPHOOK_ALLOCATOR=%s: cannot load the plug-in: %s", path, why ? why : "?");
  }
  const hh_allocator *(*get)(void) = (const hh_allocator *(*)(void))dlsym(lib, "hh_allocator_get");
  if (get == NULL)
    hh__die("HEAPHOOK_ALLOCATOR=%s: not a heaphook allocator (no hh_allocator_get; see HH_EXPORT_ALLOCATOR)",
            path);
  return get();
}

const hh_allocator *hh__select_allocator(void) {
  const char *name = hh__env_get("HEAPHOOK_ALLOCATOR");
  if (name == NULL || *name == '\0' || strcmp(name, "libc") == 0) return hh__libc_allocator_get();
  if (strcmp(name, "tlsf") == 0) return hh__tlsf_allocator_get();
  if (strchr(name, '/') != NULL) return load_plugin(name);
  hh__die("HEAPHOOK_ALLOCATOR=%s: expected libc, tlsf or the path of a plug-in library (with a '/')", name);
}
