/* N allocations, each under a call stack of its own: DEPTH frames of two
 * functions, chosen by the bits of a random number (xorshift).
 *   hh_trace_deep_stacks N DEPTH
 * 300,000 of them make the tracer's stack table grow past 2^19 entries,
 * which holds its lock for a while: trace.rss_order. */
#include <stdio.h>
#include <stdlib.h>

volatile int sink;

__attribute__((noinline)) void a(int depth, unsigned long long bits);
__attribute__((noinline)) void b(int depth, unsigned long long bits);

/* One frame of a or b (each its own, so that the bits choose the stack):
 * the next frame, or at the bottom an allocation of leaf bytes. */
static inline __attribute__((always_inline)) void step(int depth, unsigned long long bits, size_t leaf) {
  if (depth == 0) {
    void *volatile p = malloc(leaf);
    free(p);
    return;
  }
  (bits & 1 ? a : b)(depth - 1, bits >> 1);
  sink++;
}

void a(int depth, unsigned long long bits) { step(depth, bits, 32); }
void b(int depth, unsigned long long bits) { step(depth, bits, 48); }

int main(int argc, char **argv) {
  if (argc != 3) return 2;
  unsigned n = (unsigned)atoi(argv[1]);
  int depth = atoi(argv[2]);
  unsigned long long x = 88172645463325252ull;
  for (unsigned i = 0; i < n; i++) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    a(depth, x);
  }
  puts("done");
  return 0;
}
