/* threads T N: T threads (64 KiB stacks) each malloc and free N blocks of
 * 16-115 bytes, all at once; the traced run's time shows how the program's
 * threads and the tracer's one writer share the processors when there are
 * many more threads than processors. Prints the wall time in seconds. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static pthread_barrier_t start;

static void *work(void *arg) {
  long n = (long)arg;
  pthread_barrier_wait(&start);
  for (long i = 0; i < n; i++) free(malloc(16 + (size_t)(i % 100)));
  return NULL;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s THREADS ALLOCATIONS_EACH\n", argv[0]);
    return 2;
  }
  int nt = atoi(argv[1]);
  long n = atol(argv[2]);
  if (nt < 1 || n < 0) return 2;
  pthread_t *t = calloc((size_t)nt, sizeof *t);
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 64 * 1024);
  pthread_barrier_init(&start, NULL, (unsigned)nt + 1);
  for (int i = 0; i < nt; i++)
    if (pthread_create(&t[i], &attr, work, (void *)n) != 0) return 1;
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  pthread_barrier_wait(&start);
  for (int i = 0; i < nt; i++) pthread_join(t[i], NULL);
  clock_gettime(CLOCK_MONOTONIC, &b);
  printf("%.6f\n", (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9);
  free(t);
  return 0;
}
