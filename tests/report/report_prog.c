/* A program whose heap use is known exactly, for `heaphook report` and
 * `heaphook diff`. No stdio (its buffers would be allocations too).
 *   report_prog [LEAKS [threads | grow N | pairs]]
 * in this order:
 *   leaky(LEAKS):  LEAKS (default 3) blocks of 1000 bytes, never freed
 *   temp():        100 x malloc(64) + free at once: 100 temporary allocations;
 *                  with "pairs" the same 100 blocks two at a time (malloc a,
 *                  malloc b, free a, free b): no temporary allocation, all
 *                  else the same
 *   with "threads": two threads named "worker-a" and "worker-b", each
 *                  worker() allocates 10 x 500 bytes, then frees them
 *                  (joined before what follows)
 *   with "grow N": grower(N) mallocs 16 bytes, grows the block N times by
 *                  realloc (16 bytes more each time), then frees it
 *   marker "peak phase" (hh_marker)
 *   peaky():       5 x 10000 bytes held at once, then freed: the peak is
 *                  LEAKS * 1000 + 50000 bytes, of which peaky's 50000
 *   marker "done" */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "heaphook/heaphook.h"

void *volatile sink[16];

__attribute__((noinline)) void leaky(int n) {
  for (int i = 0; i < n; i++) sink[i % 16] = malloc(1000);
}

__attribute__((noinline)) void temp(int pairs) {
  for (int i = 0; i < 100; i += 1 + pairs) {
    void *p = malloc(64), *q = pairs ? malloc(64) : NULL;
    sink[15] = p;
    sink[14] = q;
    free(p);
    if (q) free(q);
  }
}

__attribute__((noinline)) void peaky(void) {
  void *p[5];
  for (int i = 0; i < 5; i++) p[i] = malloc(10000);
  for (int i = 0; i < 5; i++) free(p[i]);
}

__attribute__((noinline)) void grower(int n) {
  char *p = malloc(16);
  for (int i = 0; i < n && p; i++) p = realloc(p, 16 * (size_t)(i + 2));
  free(p);
}

__attribute__((noinline)) void *worker(void *name) {
  pthread_setname_np(pthread_self(), (const char *)name);
  void *p[10];
  for (int i = 0; i < 10; i++) p[i] = malloc(500);
  for (int i = 0; i < 10; i++) free(p[i]);
  return NULL;
}

int main(int argc, char **argv) {
  int leaks = argc > 1 ? atoi(argv[1]) : 3;
  leaky(leaks);
  temp(argc > 2 && strcmp(argv[2], "pairs") == 0);
  if (argc > 2 && strcmp(argv[2], "threads") == 0) {
    pthread_t a, b;
    pthread_create(&a, NULL, worker, "worker-a");
    pthread_join(a, NULL);
    pthread_create(&b, NULL, worker, "worker-b");
    pthread_join(b, NULL);
  }
  if (argc > 3 && strcmp(argv[2], "grow") == 0) grower(atoi(argv[3]));
  HH_MARKER("peak phase");
  peaky();
  HH_MARKER("done");
  return 0;
}
