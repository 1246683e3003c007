/* hh_trace_churn: the tracer's yardstick. Millions of malloc/free of random
 * sizes (a working set of 4096 blocks, 16-1040 bytes, replaced at random),
 * timed as a whole; prints ns per call (a malloc or a free), wall and the
 * calling thread's CPU time (the tracer's writer thread not included).
 *   hh_trace_churn [ITERATIONS]   (default 5000000 replace steps) */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define SLOTS 4096

static uint64_t next(uint64_t *s) {
  uint64_t x = *s;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  *s = x;
  return x * 0x2545F4914F6CDD1Dull;
}

static void *slot[SLOTS];

__attribute__((noinline)) static void *make(size_t n) {
  char *p = malloc(n);
  if (p != NULL) p[0] = 1;
  return p;
}

int main(int argc, char **argv) {
  long iters = argc > 1 ? atol(argv[1]) : 5000000;
  uint64_t rng = 0x1234567887654321ull;
  for (int i = 0; i < SLOTS; i++) slot[i] = make(16 + next(&rng) % 1025);
  struct timespec t0, t1, c0, c1;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (long i = 0; i < iters; i++) {
    size_t k = next(&rng) % SLOTS;
    free(slot[k]);
    slot[k] = make(16 + next(&rng) % 1025);
  }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
  for (int i = 0; i < SLOTS; i++) free(slot[i]);
  double ns = (double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec);
  double cpu = (double)(c1.tv_sec - c0.tv_sec) * 1e9 + (double)(c1.tv_nsec - c0.tv_nsec);
  printf("iterations=%ld calls=%ld ns_per_call=%.1f thread_cpu_ns_per_call=%.1f\n", iters, 2 * iters,
         ns / (2.0 * (double)iters), cpu / (2.0 * (double)iters));
  return 0;
}
