/* fork_chdir DIR: allocates, changes directory to DIR, then forks a child
 * that allocates 5 x 123 bytes and ends by _exit. Prints "child PID". */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv) {
  if (argc != 2) return 2;
  free(malloc(10));
  if (chdir(argv[1]) != 0) return 1;
  pid_t pid = fork();
  if (pid == 0) {
    for (int i = 0; i < 5; i++) free(malloc(123));
    _exit(0);
  }
  printf("child %d\n", (int)pid);
  int st;
  return waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 1;
}
