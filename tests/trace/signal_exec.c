/* Exec from a signal handler that may interrupt the tracer: the main thread
 * allocates with deep stacks and writes markers in a loop while a second
 * thread sends it SIGUSR1 every 200 us from the start, so that signals land
 * in the tracer's start-up, in markers, in stack interning and in flushes;
 * the handler execs argv[1] (with argv[2...]). Before the fix the exec
 * wrapper waited for the tracer's locks, held by the interrupted code on the
 * same thread, and the program hung (7 runs in 12).
 *
 * `signal_exec fork PROGRAM...`: the main thread forks in a loop instead
 * (the child exits at once), so that signals land between the tracer's fork
 * handlers, which hold its locks across fork(); the first fix hung there
 * every time.
 *
 * Prints nothing: the exec'd program's output tells that the run went
 * through. */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "heaphook/heaphook.h"

static char **target;
static pthread_t main_thread;

static void on_signal(int sig) {
  (void)sig;
  execv(target[0], target);
  _exit(3);
}

static void *signaller(void *arg) {
  (void)arg;
  for (;;) {
    struct timespec t = {0, 200 * 1000};
    nanosleep(&t, NULL);
    pthread_kill(main_thread, SIGUSR1);
  }
  return NULL;
}

__attribute__((noinline)) static void *deep(int depth, size_t size) {
  if (depth == 0) return malloc(size);
  void *p = deep(depth - 1, size);
  __asm__ volatile("" ::: "memory");
  return p;
}

int main(int argc, char **argv) {
  bool forking = argc > 1 && strcmp(argv[1], "fork") == 0;
  if (argc < 2 + forking) return 2;
  target = argv + 1 + forking;
  main_thread = pthread_self();
  signal(SIGUSR1, on_signal);
  pthread_t t;
  pthread_create(&t, NULL, signaller, NULL);
  for (unsigned long i = 0;; i++) {
    free(deep((int)(i % 200), i % 1000));
    if (i % 16 == 0) hh_marker("loop");
    if (forking) {
      pid_t pid = fork();
      if (pid == 0) _exit(0);
      if (pid > 0) waitpid(pid, NULL, 0);
    }
  }
}
