/* A plugin of dl_reuse.c (the dl_deep case): work() allocates under a
 * recursion 3 deep; dl_deep_a.c and dl_deep_b.c are the same code under
 * other names, built with different frame layouts (CMakeLists.txt); work()
 * is a tail call at -O2, not a frame. */
#include <stdlib.h>

static volatile int sink;
__attribute__((noinline)) void *b_leaf(size_t n) {
  void *p = malloc(n);
  sink++;
  return p;
}
__attribute__((noinline)) void *b_rec(int d, size_t n) {
  void *p = d == 0 ? b_leaf(n) : b_rec(d - 1, n);
  sink++;
  return p;
}
__attribute__((visibility("default"))) void *work(size_t n) { return b_rec(3, n); }
