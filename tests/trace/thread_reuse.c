/* A thread per request: argv[1] short threads, one after another. Each
 * allocates 24 and 40 bytes in request(), frees the 24 itself and the 40
 * in a destructor of its thread-specific data (end_request), which runs
 * after the tracer's own (its key was made first): a free the tracer
 * records after the thread's last flush, into a thread state it can only
 * hand to a new thread once the kernel has ended this one. The tracer kept
 * ~22 KB for every thread that had ever existed (20,000 threads: 432 MiB);
 * the test checks that every event is in the trace under its own thread,
 * and the process's peak RSS. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static pthread_key_t key;

__attribute__((noinline)) static void end_request(void *block) { free(block); }

__attribute__((noinline)) static void request(void) {
  char *a = malloc(24), *b = malloc(40);
  if (a == NULL || b == NULL) abort();
  a[0] = b[0] = 1;
  free(a);
  if (pthread_setspecific(key, b) != 0) abort();
}

static void *worker(void *arg) {
  (void)arg;
  request();
  return NULL;
}

int main(int argc, char **argv) {
  if (argc != 2) return 2;
  long n = atol(argv[1]);
  if (pthread_key_create(&key, end_request) != 0) return 1;
  for (long i = 0; i < n; i++) {
    pthread_t t;
    if (pthread_create(&t, NULL, worker, NULL) != 0 || pthread_join(t, NULL) != 0) return 1;
  }
  printf("requests done\n");
  return 0;
}
