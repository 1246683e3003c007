/* A program that leaves a daemon behind: it allocates, forks, and exits;
 * the child starts a session, closes 0, 1 and 2, writes its pid to the
 * file named by argv[1] and lives until the file argv[2] appears (at most
 * 30 s). Whoever reads the program's stderr must see its end when the
 * program ends, not when the daemon does. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv) {
  if (argc != 3) return 2;
  void *volatile p = malloc(100);
  free(p);
  if (fork() != 0) return 0;
  setsid();
  close(0);
  close(1);
  close(2);
  FILE *f = fopen(argv[1], "w");
  if (f == NULL) return 1;
  fprintf(f, "%d\n", (int)getpid());
  fclose(f);
  for (int i = 0; i < 300 && access(argv[2], F_OK) != 0; i++) usleep(100000);
  return 0;
}
