/* The next definition of a symbol, past any other heaphook library
 * (dl_next.h). */
#define _GNU_SOURCE
#include "base/dl_next.h"

#include <dlfcn.h>
#include <link.h>
#include <stdatomic.h>
#include <stddef.h>

#include "base/dl_quiet.h"

/* The definition of name in the loaded object lm itself, not in one of
 * its dependencies (a handle's lookup goes on to those): NULL when it has
 * none. */
static void *defined_in(struct link_map *lm, const char *name) {
  if (lm->l_name == NULL || lm->l_name[0] == '\0') return NULL; /* (the program: ahead of any preload) */
  void *handle = hh__dlopen_quiet(lm->l_name, RTLD_LAZY | RTLD_NOLOAD);
  if (handle == NULL) return NULL;
  void *sym = hh__dlsym_quiet(handle, name);
  Dl_info info;
  struct link_map *at = NULL;
  if (sym != NULL && (dladdr1(sym, &info, (void **)&at, RTLD_DL_LINKMAP) == 0 || at != lm)) sym = NULL;
  dlclose(handle);
  return sym;
}

/* Whether a heaphook library comes after this one: -1 not looked yet.
 * Looked once (a failed lookup costs some microseconds, and a C++
 * program's first operator new makes 20 of these). */
static atomic_int others_after = -1;

void *hh__dlsym_next(const char *name) {
  int others = atomic_load_explicit(&others_after, memory_order_relaxed);
  if (others < 0) {
    others = hh__dlsym_quiet(RTLD_NEXT, "hh_allocator_of") != NULL;
    atomic_store_explicit(&others_after, others, memory_order_relaxed);
  }
  void *sym = hh__dlsym_quiet(RTLD_NEXT, name);
  if (!others) return sym;
  Dl_info info;
  struct link_map *lm = NULL;
  while (sym != NULL && dladdr1(sym, &info, (void **)&lm, RTLD_DL_LINKMAP) != 0 && lm != NULL &&
         defined_in(lm, "hh_allocator_of") != NULL) {
    sym = NULL;
    for (struct link_map *l = lm->l_next; l != NULL && sym == NULL; l = l->l_next) sym = defined_in(l, name);
  }
  return sym;
}
