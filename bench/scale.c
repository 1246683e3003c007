/* A program for large traces (bench/scale_bench.sh):
 *   hh_bench_scale N DIGITS THREADS LEAK_PER_MILLE WINDOW
 * THREADS threads make N allocations in all (16-527 bytes), each from one
 * of 10^DIGITS call stacks (DIGITS levels of recursion through a table of
 * ten functions, picked by the digits of a random number; with more than 9
 * levels the outer ones are all the first function, so 64 frames still
 * tell the stacks apart); LEAK_PER_MILLE of them are never freed, the rest
 * replace a random one of the thread's last WINDOW blocks (0: freed at
 * once). The main thread waits in pthread_join meanwhile. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long n_allocs, window;
static int digits, nthreads, leak;

typedef void *(*fn)(int level, unsigned id, size_t size);
static void *rec(int level, unsigned id, size_t size);

#define F(k)                                                                         \
  __attribute__((noinline)) static void *f##k(int level, unsigned id, size_t size) { \
    void *p = rec(level + 1, id, size);                                              \
    __asm__ volatile("" ::"r"(p) : "memory");                                        \
    return p;                                                                        \
  }
// clang-format off
F(0) F(1) F(2) F(3) F(4) F(5) F(6) F(7) F(8) F(9)
    // clang-format on
    static const fn table[10] = {f0, f1, f2, f3, f4, f5, f6, f7, f8, f9};

__attribute__((noinline)) static void *rec(int level, unsigned id, size_t size) {
  static const unsigned pow10[9] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000};
  if (level >= digits) {
    void *p = malloc(size);
    if (p) memset(p, 0, size < 64 ? size : 64);
    return p;
  }
  int e = digits - 1 - level; /* the innermost levels tell the stacks apart */
  void *p = table[e < 9 ? id / pow10[e] % 10 : 0](level, id, size);
  __asm__ volatile("" ::"r"(p) : "memory");
  return p;
}

static void *worker(void *arg) {
  unsigned long x = 88172645463325252ull ^ ((unsigned long)(size_t)arg * 7919);
  void **kept = calloc(window ? (size_t)window : 1, sizeof *kept);
  unsigned stacks = 1;
  for (int i = 0; i < digits && i < 9; i++) stacks *= 10;
  for (long i = 0; i < n_allocs / nthreads; i++) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    void *p = rec(0, (unsigned)(x % stacks), 16 + (x >> 32) % 512);
    if ((x >> 20) % 1000 < (unsigned)leak) continue;
    if (window) {
      long k = (long)((x >> 40) % (unsigned long)window);
      free(kept[k]);
      kept[k] = p;
    } else {
      free(p);
    }
  }
  return NULL;
}

int main(int argc, char **argv) {
  if (argc != 6) {
    fprintf(stderr, "usage: %s N DIGITS THREADS LEAK_PER_MILLE WINDOW\n", argv[0]);
    return 2;
  }
  n_allocs = atol(argv[1]);
  digits = atoi(argv[2]);
  nthreads = atoi(argv[3]);
  leak = atoi(argv[4]);
  window = atol(argv[5]);
  if (nthreads < 1 || nthreads > 1024 || digits < 0 || window < 0) return 2;
  pthread_t th[1024];
  for (int i = 0; i < nthreads; i++) pthread_create(&th[i], NULL, worker, (void *)(size_t)i);
  for (int i = 0; i < nthreads; i++) pthread_join(th[i], NULL);
  return 0;
}
