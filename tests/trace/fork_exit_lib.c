/* A library with a fork handler that takes its time at the first fork
 * (fork_exit.c): its constructor runs before the preloaded heaphook's, so
 * its handler runs after heaphook's, while glibc's fork holds the hook's
 * locks (prepare handlers run last registered first). */
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

__attribute__((visibility("default"))) atomic_int fork_exit_in_prepare;

static void slow_prepare(void) {
  if (atomic_exchange(&fork_exit_in_prepare, 1) == 0) usleep(300 * 1000);
}

__attribute__((constructor)) static void fork_exit_lib_init(void) {
  pthread_atfork(slow_prepare, NULL, NULL);
}
