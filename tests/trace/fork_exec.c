/* fork and exec under the tracer.
 *   parent: 50 x malloc(111) in parent_alloc, then fork; the child makes
 *   30 x malloc(222) in child_alloc and exits; the parent waits, then execs
 *   itself with "exec", which makes 40 x malloc(333) in exec_alloc. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void *volatile sink;

__attribute__((noinline)) static void many(size_t n, int count) {
  for (int i = 0; i < count; i++) {
    sink = malloc(n);
    free(sink);
  }
}
__attribute__((noinline)) void parent_alloc(void) { many(111, 50); }
__attribute__((noinline)) void child_alloc(void) { many(222, 30); }
__attribute__((noinline)) void exec_alloc(void) { many(333, 40); }

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "exec") == 0) {
    exec_alloc();
    printf("exec'd %d\n", (int)getpid());
    return 0;
  }
  parent_alloc();
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    child_alloc();
    exit(0);
  }
  int st;
  waitpid(pid, &st, 0);
  printf("child %d parent %d\n", (int)pid, (int)getpid());
  fflush(stdout);
  execl("/proc/self/exe", argv[0], "exec", (char *)NULL);
  perror("execl");
  return 1;
}
