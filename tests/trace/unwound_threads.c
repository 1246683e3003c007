/* Threads that the program ends wherever a signal finds them (argv[1]),
 * 40 rounds of a thread that allocates and frees without pause, ended
 * after ~1 ms and joined; then main allocates 1,000 blocks of 24 bytes
 * (in_main()) and frees them, and prints "unwound done":
 *
 *   async     the thread cancelled asynchronously (PTHREAD_CANCEL_ASYNCHRONOUS)
 *   handler   the thread's SIGUSR1 handler calls pthread_exit
 *   sites     as handler, the thread allocating from ever new call stacks
 *             (2 call sites a level, 5 to 44 levels deep): most of its
 *             allocations unwind and intern a new stack under the tracer's
 *             meta lock, where a thread unwound left it taken, and its own
 *             exit handler waited for it for good (every run hung, both
 *             libraries)
 *   async_sites  as sites, the thread cancelled asynchronously
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

static void sites_step(unsigned depth, unsigned path);

/* (the asm: no tail call, each call its own return address) */
__attribute__((noinline)) static void site_a(unsigned depth, unsigned path) {
  sites_step(depth, path);
  __asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void site_b(unsigned depth, unsigned path) {
  sites_step(depth, path);
  __asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void sites_step(unsigned depth, unsigned path) {
  if (depth == 0) {
    void *volatile p = malloc(100);
    free(p);
  } else if (path & 1) {
    site_a(depth - 1, path >> 1);
  } else {
    site_b(depth - 1, path >> 1);
  }
  __asm__ volatile("" ::: "memory");
}

static void *churn_sites(void *arg) {
  glibc_ready();
  if (arg != NULL) pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, NULL);
  atomic_store(&started, 1);
  for (unsigned i = 0;; i++) sites_step(5 + i % 40, i * 2654435761u);
  return NULL;
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
  const char *how = argc > 1 ? argv[1] : "";
  bool async = strcmp(how, "async") == 0 || strcmp(how, "async_sites") == 0;
  bool sites = strcmp(how, "sites") == 0 || strcmp(how, "async_sites") == 0;
  if (!async && !sites && strcmp(how, "handler") != 0) {
    fprintf(stderr, "usage: unwound_threads async|handler|sites|async_sites\n");
    return 2;
  }
  /* (the async runs install no handler: their threads' cancel type alone
   * has the tracer hold the signals back in its captures) */
  if (!async) signal(SIGUSR1, on_usr1);
  for (int round = 0; round < 40; round++) {
    atomic_store(&started, 0);
    pthread_t t;
    if (pthread_create(&t, NULL, sites ? churn_sites : churn, async ? &started : NULL) != 0) return 1;
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
