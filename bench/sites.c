/* Many call sites: the tracer's stack capture when a program has more call
 * stacks than its per-thread cache holds (256 entries), as real programs
 * do (a compiler's recursive descent, a parser, an interpreter). 40 entry
 * functions each reach malloc through a recursion of depth 1 to 30: 1200
 * distinct stacks, visited in turn, every block freed at once.
 *   hh_bench_sites [--rounds N]   (default 200: 240,000 allocations) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

volatile long sink;

__attribute__((noinline)) static void walk(int depth, int k) {
  if (depth == 0) {
    char *p = malloc(24 + (size_t)k * 8);
    p[0] = 1;
    sink += p[0];
    free(p);
    return;
  }
  walk(depth - 1, k);
  sink += depth;
}

#define E(k)                                                  \
  __attribute__((noinline)) static void entry##k(int depth) { \
    walk(depth, k);                                           \
    sink += k;                                                \
  }
#define E10(d) E(d##0) E(d##1) E(d##2) E(d##3) E(d##4) E(d##5) E(d##6) E(d##7) E(d##8) E(d##9)
// clang-format off
E10(1) E10(2) E10(3) E10(4)
// clang-format on
#define P10(d)                                                                                            \
  entry##d##0, entry##d##1, entry##d##2, entry##d##3, entry##d##4, entry##d##5, entry##d##6, entry##d##7, \
      entry##d##8, entry##d##9,
    static void (*const entries[])(int) = {P10(1) P10(2) P10(3) P10(4)};

int main(int argc, char **argv) {
  long rounds = 200;
  if (argc == 3 && strcmp(argv[1], "--rounds") == 0) rounds = atol(argv[2]);
  for (long r = 0; r < rounds; r++)
    for (int k = 0; k < 40; k++)
      for (int depth = 1; depth <= 30; depth++) entries[k](depth);
  printf("%ld\n", sink > 0 ? 1L : 0L);
  return 0;
}
