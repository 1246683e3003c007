/* A program whose heap use is known exactly, for the HTML report's browser
 * test. No stdio (its buffers would be allocations too).
 *   build_peak -> hold_peak_block (x2): malloc(100000), malloc(50000)
 *   leak_buffer (x3):       malloc(777)                   leaked: 2331 bytes in 3 blocks
 *   release_peak:           frees the two blocks of build_peak
 *   temp_churn:             10 x malloc(64), each freed at once (10 temporary:
 *                           freed before any other allocation)
 * 15 allocations, 12 frees. Peak in use: 100000 + 50000 + 2331 = 152331
 * bytes, after the third leak_buffer. */
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

int main(void) {
  build_peak();
  for (int i = 0; i < 3; i++) keep[i] = leak_buffer();
  release_peak();
  temp_churn();
  return 0;
}
