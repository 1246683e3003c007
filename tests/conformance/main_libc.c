/* hh_conformance: the suite against the real libc names. Run without preload
 * it checks glibc itself (the reference); with LD_PRELOAD it checks whatever
 * library interposes malloc & co.
 *
 * The addresses are read through volatile function pointers so the compiler
 * can neither warn about the impossible sizes the checks pass (-Werror) nor
 * reason about malloc's properties (drop malloc/free pairs, assume
 * malloc(0) != NULL, fold calloc into memset); the target is also built with
 * -fno-builtin. */
#define _GNU_SOURCE
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>

#include "conformance.h"

static void *(*volatile v_malloc)(size_t) = malloc;
static void (*volatile v_free)(void *) = free;
static void *(*volatile v_calloc)(size_t, size_t) = calloc;
static void *(*volatile v_realloc)(void *, size_t) = realloc;
static void *(*volatile v_reallocarray)(void *, size_t, size_t) = reallocarray;
static int (*volatile v_posix_memalign)(void **, size_t, size_t) = posix_memalign;
static void *(*volatile v_aligned_alloc)(size_t, size_t) = aligned_alloc;
static void *(*volatile v_memalign)(size_t, size_t) = memalign;
static void *(*volatile v_valloc)(size_t) = valloc;
static void *(*volatile v_pvalloc)(size_t) = pvalloc;
static size_t (*volatile v_malloc_usable_size)(void *) = malloc_usable_size;

int main(int argc, char **argv) {
  struct hh_api api = {
      .malloc = v_malloc,
      .free = v_free,
      .calloc = v_calloc,
      .realloc = v_realloc,
      .reallocarray = v_reallocarray,
      .posix_memalign = v_posix_memalign,
      .aligned_alloc = v_aligned_alloc,
      .memalign = v_memalign,
      .valloc = v_valloc,
      .pvalloc = v_pvalloc,
      .malloc_usable_size = v_malloc_usable_size,
      .libc_names = 1,
  };
  const char *preload = getenv("LD_PRELOAD");
  char label[512];
  snprintf(label, sizeof label, "libc names, LD_PRELOAD=%s", preload && *preload ? preload : "(none)");
  return hh_conformance_run(&api, label, argc, argv);
}
