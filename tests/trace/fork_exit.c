/* A thread forks while main exits (trace.fork_exit): main allocates, starts
 * a thread that forks (its child ends at once), waits until that fork is in
 * fork_exit_lib.c's slow handler, with the hook's fork locks held, and
 * returns. The stop at exit took stdio's list lock and then the hook's
 * locks; the fork, holding those, waited for the list lock: the process
 * hung for good. With the argument "signal", main instead sends the forking
 * thread a signal whose handler calls exit(7) while that thread is in the
 * slow handler, past the hook's own: that exit must not wait for the fork
 * it interrupted. With "child", main returns once that fork is there, and
 * the fork goes on only when main's exit waits in heaphook's stop for it
 * (fork_exit_lib.c): the child is made while its parent's stop is under
 * way, and ends by _exit(0); with "child_exit", by exit(0). */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

extern atomic_int fork_exit_in_prepare, fork_exit_child, fork_exit_main_ended, fork_exit_reaped;
static void *volatile sink;
static bool child_exits;

static void *forker(void *arg) {
  (void)arg;
  pid_t pid = fork();
  if (pid == 0) {
    if (child_exits) exit(0);
    _exit(0);
  }
  if (pid > 0) waitpid(pid, NULL, 0);
  atomic_store(&fork_exit_reaped, 1);
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
  child_exits = argc > 1 && strcmp(argv[1], "child_exit") == 0;
  bool child = child_exits || (argc > 1 && strcmp(argv[1], "child") == 0);
  atomic_store(&fork_exit_child, child);
  pthread_t t;
  if (pthread_create(&t, NULL, forker, NULL) != 0) return 1;
  while (!atomic_load(&fork_exit_in_prepare)) usleep(1000);
  if (argc > 1 && strcmp(argv[1], "signal") == 0) {
    signal(SIGUSR1, exit_now);
    pthread_kill(t, SIGUSR1);
    for (;;) pause();
  }
  if (child) atomic_store(&fork_exit_main_ended, (int)syscall(SYS_gettid));
  return 0;
}
