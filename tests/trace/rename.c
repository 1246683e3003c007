/* A thread names itself "first", allocates 10 x 31 bytes, renames itself
 * "second", allocates 10 x 32 bytes and ends; then main renames itself
 * "main-renamed", allocates 10 x 33 bytes and returns. All within a
 * millisecond: each thread's renaming falls in its last chunk. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>

static void allocate(size_t size) {
  for (int i = 0; i < 10; i++) free(malloc(size));
}

static void *worker(void *arg) {
  (void)arg;
  pthread_setname_np(pthread_self(), "first");
  allocate(31);
  pthread_setname_np(pthread_self(), "second");
  allocate(32);
  return NULL;
}

int main(void) {
  pthread_t t;
  if (pthread_create(&t, NULL, worker, NULL) != 0 || pthread_join(t, NULL) != 0) return 1;
  pthread_setname_np(pthread_self(), "main-renamed");
  allocate(33);
  return 0;
}
