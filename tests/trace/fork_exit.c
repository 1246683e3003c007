/* A thread forks while main exits (trace.fork_exit): main allocates, starts
 * a thread that forks (its child ends at once), waits until that fork is in
 * fork_exit_lib.c's slow handler, with the hook's fork locks held, and
 * returns. The stop at exit took stdio's list lock and then the hook's
 * locks; the fork, holding those, waited for the list lock: the process
 * hung for good. With the argument "signal", main instead sends the forking
 * thread a signal whose handler calls exit(7) while that thread is in the
 * slow handler, past the hook's own: that exit must not wait for the fork
 * it interrupted. */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern atomic_int fork_exit_in_prepare;
static void *volatile sink;

static void *forker(void *arg) {
  (void)arg;
  pid_t pid = fork();
  if (pid == 0) _exit(0);
  if (pid > 0) waitpid(pid, NULL, 0);
  return NULL;
}

static void exit_now(int sig) {
  (void)sig;
  exit(7);
}

int main(int argc, char **argv) {
  for (int i = 0; i < 100; i++) {
    sink = malloc(40);
    free(sink);
  }
  pthread_t t;
  if (pthread_create(&t, NULL, forker, NULL) != 0) return 1;
  while (!atomic_load(&fork_exit_in_prepare)) usleep(1000);
  if (argc > 1 && strcmp(argv[1], "signal") == 0) {
    signal(SIGUSR1, exit_now);
    pthread_kill(t, SIGUSR1);
    for (;;) pause();
  }
  return 0;
}
