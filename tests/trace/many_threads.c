/* Many threads that each churn one small block: argv[1] threads (8 at a
 * time), each doing argv[2] times free(malloc(16)) from churn(). Every
 * thread passes 32,768 allocations, where the reader's history of a thread
 * reaches its full size. A reader that budgeted its per-thread models
 * against the file's bytes took this well-compressed trace of a real
 * program for a hostile one (200 threads x 40,000). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static long per_thread;

__attribute__((noinline)) static void churn(void) {
  for (long i = 0; i < per_thread; i++) free(malloc(16));
}

static void *worker(void *arg) {
  (void)arg;
  churn();
  return NULL;
}

int main(int argc, char **argv) {
  if (argc != 3) return 2;
  int threads = atoi(argv[1]);
  per_thread = atol(argv[2]);
  for (int done = 0; done < threads; done += 8) {
    pthread_t t[8];
    int n = threads - done < 8 ? threads - done : 8;
    for (int i = 0; i < n; i++) pthread_create(&t[i], NULL, worker, NULL);
    for (int i = 0; i < n; i++) pthread_join(t[i], NULL);
  }
  printf("many threads done\n");
  return 0;
}
