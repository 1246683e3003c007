/* A program with known allocations, for the tracer's tests: two named
 * threads make exactly the calls listed below from functions with known
 * names; markers bracket them.
 *   worker-alpha: 100 x malloc(1000+i) in alpha_malloc, 10 x calloc(3, 100)
 *                 in alpha_calloc, all freed (110 free)
 *   worker-beta:  beta_malloc(16) twice; 5 x realloc (32..512) in
 *                 beta_realloc; realloc(p, 0) (a free); 4 x aligned_alloc(64,
 *                 640) in beta_aligned; 3 x posix_memalign(128, 256) in
 *                 beta_posix; 8 free
 * With an argument "spin" it then allocates forever (the SIGKILL test). */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heaphook/heaphook.h"

#define NOINLINE __attribute__((noinline))

static void *volatile sink;

NOINLINE void *alpha_malloc(size_t n) {
  void *p = malloc(n);
  sink = p;
  return p;
}
NOINLINE void *alpha_calloc(size_t n, size_t m) {
  void *p = calloc(n, m);
  sink = p;
  return p;
}
NOINLINE void *beta_malloc(size_t n) {
  void *p = malloc(n);
  sink = p;
  return p;
}
NOINLINE void *beta_realloc(void *q, size_t n) {
  void *p = realloc(q, n);
  sink = p;
  return p;
}
NOINLINE void *beta_aligned(size_t a, size_t n) {
  void *p = aligned_alloc(a, n);
  sink = p;
  return p;
}
NOINLINE void *beta_posix(size_t a, size_t n) {
  void *p = NULL;
  if (posix_memalign(&p, a, n) != 0) abort();
  sink = p;
  return p;
}

NOINLINE static void *thread_alpha(void *arg) {
  (void)arg;
  pthread_setname_np(pthread_self(), "worker-alpha");
  void *p[110];
  for (int i = 0; i < 100; i++) p[i] = alpha_malloc(1000 + (size_t)i);
  for (int i = 0; i < 10; i++) p[100 + i] = alpha_calloc(3, 100);
  for (int i = 0; i < 110; i++) free(p[i]);
  return NULL;
}

NOINLINE static void *thread_beta(void *arg) {
  (void)arg;
  pthread_setname_np(pthread_self(), "worker-beta");
  void *p = beta_malloc(16);
  for (int k = 0; k < 5; k++) p = beta_realloc(p, (size_t)32 << k);
  void *r = beta_malloc(16);
  if (beta_realloc(r, 0) != NULL) abort();
  void *a[7];
  for (int i = 0; i < 4; i++) a[i] = beta_aligned(64, 640);
  for (int i = 0; i < 3; i++) a[4 + i] = beta_posix(128, 256);
  free(p);
  for (int i = 0; i < 7; i++) free(a[i]);
  return NULL;
}

int main(int argc, char **argv) {
  HH_MARKER("known-start");
  pthread_t a, b;
  /* One after the other: exact per-thread counts, no interleaving. */
  pthread_create(&a, NULL, thread_alpha, NULL);
  pthread_join(a, NULL);
  pthread_create(&b, NULL, thread_beta, NULL);
  pthread_join(b, NULL);
  HH_MARKER("known-end");
  if (argc > 1 && strcmp(argv[1], "spin") == 0) {
    puts("spinning");
    fflush(stdout);
    unsigned long long x = 1;
    for (;;) {
      x = x * 6364136223846793005ull + 1442695040888963407ull;
      free(alpha_malloc(16 + (x >> 33) % 4096));
    }
  }
  puts("known done");
  return 0;
}
