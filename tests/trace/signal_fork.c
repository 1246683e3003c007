/* signal_fork N: a single-threaded program whose SIGALRM handler (1 ms
 * after the last one returned) forks a child that ends by _exit at once,
 * while main mallocs and frees N times. Prints "done".
 * The timer is armed again as the handler returns. It fired every 2 ms of
 * wall time before: on a loaded machine a handler that took longer (its
 * child waited for a processor) found the next signal pending as it
 * returned, and main never ran again (the test's 60 s, without heaphook
 * too). Main now runs 1 ms between two handlers, wherever the signal
 * lands in its allocations. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

static const struct itimerval in_1ms = {{0, 0}, {0, 1000}};
static volatile sig_atomic_t stopping;

static void on_alarm(int sig) {
  (void)sig;
  pid_t p = fork();
  if (p == 0) _exit(0);
  if (p > 0) waitpid(p, NULL, 0);
  if (!stopping) setitimer(ITIMER_REAL, &in_1ms, NULL);
}

int main(int argc, char **argv) {
  if (argc != 2) return 2;
  long n = atol(argv[1]);
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_alarm;
  sa.sa_flags = SA_RESTART;
  sigaction(SIGALRM, &sa, NULL);
  setitimer(ITIMER_REAL, &in_1ms, NULL);
  void *k[64] = {0};
  for (long i = 0; i < n; i++) {
    int j = (int)(i & 63);
    free(k[j]);
    k[j] = malloc(16 + (size_t)(i % 700));
  }
  stopping = 1;
  struct itimerval off = {{0, 0}, {0, 0}};
  setitimer(ITIMER_REAL, &off, NULL);
  printf("done\n");
  return 0;
}
