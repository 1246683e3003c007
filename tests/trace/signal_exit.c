/* signal_exit MS: allocates and frees without pause; after MS ms a SIGALRM
 * handler calls exit(3), the usual clean shutdown on a signal. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

static void on_alarm(int sig) {
  (void)sig;
  exit(3);
}

int main(int argc, char **argv) {
  if (argc != 2) return 2;
  int ms = atoi(argv[1]);
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_alarm;
  sigaction(SIGALRM, &sa, NULL);
  struct itimerval it = {{0, 0}, {ms / 1000, (ms % 1000) * 1000}};
  setitimer(ITIMER_REAL, &it, NULL);
  void *k[64] = {0};
  for (long i = 0;; i++) {
    int j = (int)(i & 63);
    free(k[j]);
    k[j] = malloc(16 + (size_t)(i % 700));
  }
}
