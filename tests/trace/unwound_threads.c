/* Threads that the program ends wherever a signal finds them (argv[1]),
 * 40 rounds of a thread that allocates and frees without pause, ended
 * after ~1 ms and joined; then main allocates 1,000 blocks of 24 bytes
 * (in_main()) and frees them, and prints "unwound done":
 *
 *   async     the thread cancelled asynchronously (PTHREAD_CANCEL_ASYNCHRONOUS)
 *   handler   the thread's SIGUSR1 handler calls pthread_exit
 *
 * POSIX leaves both undefined inside malloc; glibc's own malloc lives
 * through them. A thread unwound inside the tracer where it held a lock
 * (its buffer handed over, a reused thread state taken) left the lock
 * taken, and its exit handler, then every thread, waited for it forever:
 * the process hung in a third of the runs with 5 rounds, in most with 40
 * (base/cancel.h). */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static atomic_int started;

/* glibc's own: its malloc sets up a thread's arena and cache at the
 * thread's first call, holding the arena's lock, and a thread unwound
 * there left it taken: the thread's end, which gives the cache back to the
 * arena, waited for it for good, with or without heaphook (once in a few
 * hundred runs under load; the plain program signalled by gdb in
 * tcache_init hangs so). Each thread makes that first call here, past
 * heaphook, before it can be signalled; its first call through heaphook,
 * where the tracer takes a state for it, stays within the signal's reach. */
extern void *__libc_malloc(size_t size);
extern void __libc_free(void *ptr);

static void glibc_ready(void) {
  void *volatile p = __libc_malloc(100);
  __libc_free(p);
}

static void *churn(void *arg) {
  glibc_ready();
  if (arg != NULL) pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, NULL);
  atomic_store(&started, 1);
  for (;;) {
    void *volatile p = malloc(100);
    free(p);
  }
  return NULL;
}

static void on_usr1(int sig) {
  (void)sig;
  pthread_exit(NULL);
}

__attribute__((noinline)) static void in_main(void) {
  void *blocks[1000];
  for (int i = 0; i < 1000; i++) blocks[i] = malloc(24);
  for (int i = 0; i < 1000; i++) free(blocks[i]);
}

int main(int argc, char **argv) {
  bool async = argc > 1 && strcmp(argv[1], "async") == 0;
  if (!async && (argc < 2 || strcmp(argv[1], "handler") != 0)) {
    fprintf(stderr, "usage: unwound_threads async|handler\n");
    return 2;
  }
  signal(SIGUSR1, on_usr1);
  for (int round = 0; round < 40; round++) {
    atomic_store(&started, 0);
    pthread_t t;
    if (pthread_create(&t, NULL, churn, async ? &started : NULL) != 0) return 1;
    while (!atomic_load(&started)) {
    }
    struct timespec ms = {0, 1000 * 1000};
    nanosleep(&ms, NULL);
    if (async)
      pthread_cancel(t);
    else
      pthread_kill(t, SIGUSR1);
    pthread_join(t, NULL);
  }
  in_main();
  puts("unwound done");
  return 0;
}
