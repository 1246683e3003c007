/* Built with split DWARF (-gsplit-dwarf: functions, inlined calls and
 * their lines in a .dwo file beside the object, a skeleton unit in the
 * program): 10 allocations of 30 to 39 bytes, each in make(), inlined
 * into build(). The symbolizer read the skeleton only: the frames came
 * out as build alone, with make's file and line. Prints "split dwarf
 * done". */
#include <stdio.h>
#include <stdlib.h>

static inline __attribute__((always_inline)) void *make(size_t n) { return malloc(n); }

__attribute__((noinline)) static void *build(int i) { return make(30 + (size_t)i); }

int main(void) {
  for (int i = 0; i < 10; i++) free(build(i));
  printf("split dwarf done\n");
  return 0;
}
