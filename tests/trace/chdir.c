/* Allocates, changes directory to argv[1], allocates 1,000 times more
 * (after_chdir()). A relative trace path names a file in the directory the
 * program started in, although the file is created later: the trace went
 * into the new directory, or was lost when that one was not writable. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

__attribute__((noinline)) static void after_chdir(void) {
  for (int i = 0; i < 1000; i++) free(malloc(50 + i % 10));
}

int main(int argc, char **argv) {
  free(malloc(100));
  if (argc != 2 || chdir(argv[1]) != 0) {
    perror("chdir");
    return 1;
  }
  after_chdir();
  printf("in %s\n", argv[1]);
  return 0;
}
