/* signal_fork N: a single-threaded program whose SIGALRM handler (every
 * 2 ms) forks a child that ends by _exit at once, while main mallocs and
 * frees N times. Prints "done". */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

static void on_alarm(int sig) {
  (void)sig;
  pid_t p = fork();
  if (p == 0) _exit(0);
  if (p > 0) waitpid(p, NULL, 0);
}

int main(int argc, char **argv) {
  if (argc != 2) return 2;
  long n = atol(argv[1]);
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_alarm;
  sa.sa_flags = SA_RESTART;
  sigaction(SIGALRM, &sa, NULL);
  struct itimerval it = {{0, 2000}, {0, 2000}};
  setitimer(ITIMER_REAL, &it, NULL);
  void *k[64] = {0};
  for (long i = 0; i < n; i++) {
    int j = (int)(i & 63);
    free(k[j]);
    k[j] = malloc(16 + (size_t)(i % 700));
  }
  struct itimerval off = {{0, 0}, {0, 0}};
  setitimer(ITIMER_REAL, &off, NULL);
  printf("done\n");
  return 0;
}
