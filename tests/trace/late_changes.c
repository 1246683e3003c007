/* A program that, after it starts, changes what it could create a file
 * with (argv[1]), then allocates 1,000 times (afterwards()):
 *
 *   DIR      chdir(DIR): a relative trace path still names a file in the
 *            directory the program started in (it followed the chdir, or
 *            was lost when the new directory was not writable)
 *   fds      opens /dev/null until no descriptor is left (EMFILE)
 *   setuid   (as root) becomes nobody (65534), as daemons drop privileges
 *
 * The trace file was made at the first chunk, after these: lost but for
 * chdir to a writable directory. It is made at the start now. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

__attribute__((noinline)) static void afterwards(void) {
  for (int i = 0; i < 1000; i++) free(malloc(50 + i % 10));
}

int main(int argc, char **argv) {
  free(malloc(100));
  if (argc != 2) return 2;
  if (strcmp(argv[1], "fds") == 0) {
    int n = 0;
    while (open("/dev/null", O_RDONLY) >= 0) n++;
    if (errno != EMFILE) perror("open");
    printf("descriptors used up\n");
  } else if (strcmp(argv[1], "setuid") == 0) {
    if (setgid(65534) != 0 || setuid(65534) != 0) {
      perror("setuid");
      return 1;
    }
    printf("now nobody\n");
  } else if (chdir(argv[1]) != 0) {
    perror("chdir");
    return 1;
  } else {
    printf("in %s\n", argv[1]);
  }
  afterwards();
  return 0;
}
