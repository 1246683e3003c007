/* A library the dlopen test loads: its allocations' stacks must be inside it. */
#include <stdlib.h>

static void *volatile sink;

__attribute__((noinline, visibility("default"))) void *dl_make(size_t n) {
  void *p = malloc(n);
  sink = p;
  return p;
}
