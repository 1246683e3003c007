/* A library with a fork handler that takes its time at the first fork
 * (fork_exit.c): its constructor runs before the preloaded heaphook's, so
 * its handler runs after heaphook's, while glibc's fork holds the hook's
 * locks (prepare handlers run last registered first). For the mode
 * "child" (fork_exit_child set), the handler holds the fork until main,
 * returned, waits in heaphook's stop at exit for that fork to finish, and
 * the exit handler registered here, which runs after heaphook's stop,
 * holds the process until the forking thread has waited for its child. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

extern int __cxa_atexit(void (*fn)(void *), void *arg, void *dso);

__attribute__((visibility("default"))) atomic_int fork_exit_in_prepare;
/* Set by fork_exit.c's mode "child": main's thread id, once main returns;
 * and whether the forking thread has waited for its child. */
__attribute__((visibility("default"))) atomic_int fork_exit_child, fork_exit_main_ended, fork_exit_reaped;
static atomic_int after_stop_reached; /* (without heaphook: no stop to wait in) */

/* Whether thread tid waits in sched_yield or futex, as a thread waiting in
 * heaphook's stop for a fork does (base/backoff.h). */
static int waits(int tid) {
  char path[64], line[32];
  snprintf(path, sizeof path, "/proc/self/task/%d/syscall", tid);
  int fd = open(path, O_RDONLY);
  if (fd < 0) return 0;
  ssize_t n = read(fd, line, sizeof line - 1);
  close(fd);
  if (n <= 0) return 0;
  line[n] = '\0';
  long nr = strtol(line, NULL, 10);
  return nr == SYS_sched_yield || nr == SYS_futex;
}

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void slow_prepare(void) {
  if (atomic_exchange(&fork_exit_in_prepare, 1) != 0) return;
  if (!atomic_load(&fork_exit_child)) {
    usleep(300 * 1000);
    return;
  }
  /* (bounded, so that a stop that never waits for the fork cannot hang
   * the test: it then tests nothing) */
  for (double until = now_s() + 20; now_s() < until; sched_yield()) {
    int tid = atomic_load(&fork_exit_main_ended);
    if (tid != 0 && (waits(tid) || atomic_load(&after_stop_reached))) return;
  }
}

static void after_stop(void *arg) {
  (void)arg;
  /* (main's thread id is the parent's pid: not in the child's exit) */
  if (!atomic_load(&fork_exit_child) || atomic_load(&fork_exit_main_ended) != (int)syscall(SYS_getpid))
    return;
  atomic_store(&after_stop_reached, 1);
  while (!atomic_load(&fork_exit_reaped)) sched_yield();
}

__attribute__((constructor)) static void fork_exit_lib_init(void) {
  pthread_atfork(slow_prepare, NULL, NULL);
  /* (no library handle: atexit's would run it with this library's
   * destructors, before heaphook's stop) */
  __cxa_atexit(after_stop, NULL, NULL);
}
