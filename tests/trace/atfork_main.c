/* Linked with atfork_lib.c: forks 5 times (each child allocates and ends
 * by _exit), then prints "forked 5". */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

void atfork_lib_linked(void);

int main(void) {
  atfork_lib_linked();
  for (int i = 0; i < 5; i++) {
    pid_t p = fork();
    if (p == 0) {
      free(malloc(10));
      _exit(0);
    }
    if (p < 0 || waitpid(p, NULL, 0) != p) return 1;
  }
  printf("forked 5\n");
  return 0;
}
