/* exec while other threads allocate as fast as they can:
 *   hh_trace_exec_threads THREADS DELAY_MS
 * starts THREADS threads that churn malloc/free, waits DELAY_MS, tries two
 * programs that do not exist (the execs fail, the threads go on), waits
 * again, then execs /bin/true. The trace must end whole at the last EXEC:
 * the other threads' buffered events written then, and nothing written
 * after it (a thread ended by the exec in the middle of a write would
 * leave a torn chunk). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

__attribute__((noinline)) static void churn_step(void **slot, unsigned x) {
  unsigned k = (x >> 8) & 255;
  free(slot[k]);
  slot[k] = malloc(16 + (x >> 20) % 2000);
}

/* ~2,000 events per 0.2 ms: a chunk handed over every ~3 ms per thread, so
 * that chunks are being written when the exec comes, and traces small
 * enough to read back quickly. */
static void *churn(void *arg) {
  (void)arg;
  void *slot[256] = {0};
  unsigned x = (unsigned)(size_t)&slot;
  for (;;) {
    for (int i = 0; i < 1000; i++) {
      x = x * 1103515245u + 12345u;
      churn_step(slot, x);
    }
    usleep(200);
  }
  return NULL;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s THREADS DELAY_MS\n", argv[0]);
    return 2;
  }
  int n = atoi(argv[1]), ms = atoi(argv[2]);
  for (int i = 0; i < n; i++) {
    pthread_t t;
    if (pthread_create(&t, NULL, churn, NULL) != 0) return 1;
  }
  usleep((unsigned)ms * 1000);
  execl("/does-not-exist/1", "x", (char *)NULL);
  usleep(20 * 1000);
  execl("/does-not-exist/2", "x", (char *)NULL);
  usleep((unsigned)ms * 1000);
  execl("/bin/true", "true", (char *)NULL);
  perror("execl /bin/true");
  return 1;
}
