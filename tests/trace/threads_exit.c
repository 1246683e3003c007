/* argv[1] threads alive at once (64 KiB stacks), each allocating one block
 * of 100 bytes and, once all have started, 100 blocks of 50 from
 * exit_churn(); then all end together, each with a chunk to queue for the
 * writer thread, more than its queue holds. Prints "threads exit done".
 *
 * The threads that found the queue full yielded, then woke every 1 ms to
 * try again, from a count of the writer's pops read before their try,
 * which the next pop made stale: 2,000 threads kept the processors from
 * the writer, and took 24-60 s to end (0.1 s untraced). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static pthread_barrier_t all_started;

__attribute__((noinline)) static void exit_churn(void) {
  for (int i = 0; i < 100; i++) free(malloc(50));
}

static void *worker(void *arg) {
  void *p = malloc(100);
  pthread_barrier_wait(&all_started);
  exit_churn();
  free(p);
  return arg;
}

int main(int argc, char **argv) {
  if (argc != 2) return 2;
  int n = atoi(argv[1]);
  pthread_t *t = malloc((size_t)n * sizeof *t);
  pthread_attr_t attr;
  if (t == NULL || pthread_barrier_init(&all_started, NULL, (unsigned)n + 1) != 0 ||
      pthread_attr_init(&attr) != 0 || pthread_attr_setstacksize(&attr, 65536) != 0)
    return 1;
  for (int i = 0; i < n; i++) {
    if (pthread_create(&t[i], &attr, worker, NULL) != 0) {
      printf("thread %d: cannot create\n", i);
      return 1;
    }
  }
  pthread_barrier_wait(&all_started);
  for (int i = 0; i < n; i++) pthread_join(t[i], NULL);
  free(t);
  printf("threads exit done\n");
  return 0;
}
