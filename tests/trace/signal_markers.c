/* A timer signal every 50 us whose handler marks "tick" (hh_marker) while
 * the program allocates under argv[1] x 2 call stacks of varying depth,
 * most of them new: the signal often lands where the tracer holds the lock
 * of its process buffer (a new stack's records). Prints "signal markers
 * done N", N the markers asked for.
 *
 * The marker waited there for the lock its own thread held: the program
 * hung, every run. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/time.h>

#include "heaphook/heaphook.h"

static volatile sig_atomic_t marks;
static void *volatile sink;

static void on_alarm(int sig) {
  (void)sig;
  hh_marker("tick");
  marks++;
}

__attribute__((noinline)) static void nest(int depth, int i) {
  if (depth == 0) {
    sink = malloc(16 + (size_t)(i % 100));
    free(sink);
    return;
  }
  nest(depth - 1, i);
  __asm__ volatile("" ::: "memory"); /* not a tail call */
}

__attribute__((noinline)) static void inner(int i) { nest(i % 50, i); }
__attribute__((noinline)) static void outer(int i) {
  nest(i % 37, i);
  inner(i);
}

int main(int argc, char **argv) {
  if (argc != 2) return 2;
  int n = atoi(argv[1]);
  struct sigaction sa = {0};
  sa.sa_handler = on_alarm;
  sa.sa_flags = SA_RESTART;
  sigaction(SIGALRM, &sa, NULL);
  struct itimerval every = {{0, 50}, {0, 50}}, off = {{0, 0}, {0, 0}};
  setitimer(ITIMER_REAL, &every, NULL);
  for (int i = 0; i < n; i++) outer(i);
  setitimer(ITIMER_REAL, &off, NULL);
  printf("signal markers done %d\n", (int)marks);
  return 0;
}
