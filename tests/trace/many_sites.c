/* More call sites than the tracer's per-thread stack cache holds (256):
 * 30 entry functions, each reaching malloc through a recursion of depth 1
 * to 20, make 600 distinct call stacks, all of them 40 times over (each
 * block freed at once): 24000 allocations. Most of them miss the cache;
 * those misses are unwound by unw_backtrace, and now and then by unw_step
 * to fill an entry (stacks.c). Both must give the same frames: 600
 * distinct stacks, each 40 times, in the trace. No stdio: nothing else
 * allocates. */
#include <stdlib.h>

volatile long sink;

__attribute__((noinline)) static void walk(int depth, int k) {
  if (depth == 0) {
    char *p = malloc(24 + (size_t)k);
    p[0] = 1;
    sink += p[0];
    free(p);
    return;
  }
  walk(depth - 1, k);
  sink += depth;
}

#define ENTRY(k)                                              \
  __attribute__((noinline)) static void entry##k(int depth) { \
    walk(depth, k);                                           \
    sink += k;                                                \
  }
ENTRY(0)
ENTRY(1) ENTRY(2) ENTRY(3) ENTRY(4) ENTRY(5) ENTRY(6) ENTRY(7) ENTRY(8) ENTRY(9) ENTRY(10) ENTRY(11) ENTRY(12)
    ENTRY(13) ENTRY(14) ENTRY(15) ENTRY(16) ENTRY(17) ENTRY(18) ENTRY(19) ENTRY(20) ENTRY(21) ENTRY(22)
        ENTRY(23) ENTRY(24) ENTRY(25) ENTRY(26) ENTRY(27) ENTRY(28) ENTRY(29)

            static void (*const entries[30])(int) = {
                entry0,  entry1,  entry2,  entry3,  entry4,  entry5,  entry6,  entry7,  entry8,  entry9,
                entry10, entry11, entry12, entry13, entry14, entry15, entry16, entry17, entry18, entry19,
                entry20, entry21, entry22, entry23, entry24, entry25, entry26, entry27, entry28, entry29,
};

int main(void) {
  for (int round = 0; round < 40; round++)
    for (int k = 0; k < 30; k++)
      for (int depth = 1; depth <= 20; depth++) entries[k](depth);
  return 0;
}
