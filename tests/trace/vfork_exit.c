/* A vfork child whose exec fails ends by exit(127), not _exit, so that the
 * exit handlers run in the memory it shares with its parent (a common slip
 * in programs). Then the parent allocates: 300,000 times from after(). The
 * child's exit must not end the parent's recording; the parent ends by
 * _exit, whose hook finishes the trace (its exit handlers, glibc's and
 * heaphook's, ran in the child and will not run again). */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

__attribute__((noinline)) static void after(void) {
  for (long i = 0; i < 300000; i++) free(malloc(16 + (size_t)(i % 64)));
}

int main(void) {
  pid_t p = vfork();
  if (p == 0) {
    execl("/nonexistent/program", "program", (char *)NULL);
    exit(127);
  }
  int status = 0;
  waitpid(p, &status, 0);
  after();
  printf("child status %d; vfork exit done\n", WEXITSTATUS(status));
  fflush(stdout);
  /* exit() would run no handler: the child's exit ran them. */
  _exit(0);
}
