/* A program whose heap use is known exactly, for the HTML report's browser
 * test. No stdio (its buffers would be allocations too).
 *   build_peak -> hold_peak_block (x2): malloc(100000), malloc(50000)
 *   leak_buffer (x3):       malloc(777)                   leaked: 2331 bytes in 3 blocks
 *   release_peak:           frees the two blocks of build_peak
 *   temp_churn:             10 x malloc(64), each freed at once (10 temporary:
 *                           freed before any other allocation)
 * 15 allocations, 12 frees. Peak in use: 100000 + 50000 + 2331 = 152331
 * bytes, after the third leak_buffer.
 * With an argument ("grow"), then:
 *   grow_block:             malloc(16), grown 5 times by realloc (32 ... 96
 *                           bytes), then freed: 1 allocation more, 5 reallocs,
 *                           6 allocation calls (16 ALLOC records, 21 calls in all) */
#define _GNU_SOURCE
#include <stdlib.h>

void *volatile keep[8];

__attribute__((noinline)) void *leak_buffer(void) { return malloc(777); }

__attribute__((noinline)) void temp_churn(void) {
  for (int i = 0; i < 10; i++) {
    void *volatile p = malloc(64);
    free(p);
  }
}

__attribute__((noinline)) void *hold_peak_block(size_t n) { return malloc(n); }

__attribute__((noinline)) void build_peak(void) {
  keep[3] = hold_peak_block(100000);
  keep[4] = hold_peak_block(50000);
}

__attribute__((noinline)) void release_peak(void) {
  free(keep[3]);
  free(keep[4]);
}

__attribute__((noinline)) void grow_block(void) {
  void *volatile p = malloc(16);
  for (size_t n = 32; n <= 96; n += 16) p = realloc(p, n);
  free(p);
}

int main(int argc, char **argv) {
  (void)argv;
  build_peak();
  for (int i = 0; i < 3; i++) keep[i] = leak_buffer();
  release_peak();
  temp_churn();
  if (argc > 1) grow_block();
  return 0;
}
