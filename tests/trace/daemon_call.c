/* A program that detaches with daemon(3): 500 allocations and frees of 100
 * bytes in before_daemon and one block of 999 bytes kept, then
 * daemon(NOCHDIR, NOCLOSE); the daemon makes 10 allocations and frees of
 * 100 bytes in in_daemon and writes what daemon(3) did to it to REPORT
 * (an absolute path; written to REPORT.tmp, then renamed): its pid,
 * whether it leads its own session, its working directory and what its
 * descriptors 0, 1 and 2 are.
 *   daemon_call REPORT NOCHDIR NOCLOSE */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void *volatile keep;

static void before_daemon(void) {
  for (int i = 0; i < 500; i++) {
    keep = malloc(100);
    free(keep);
  }
  keep = malloc(999);
}

static void in_daemon(void) {
  for (int i = 0; i < 10; i++) {
    void *volatile p = malloc(100);
    free(p);
  }
}

static void describe_fd(FILE *f, int fd) {
  char link[64], target[PATH_MAX];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  ssize_t n = readlink(link, target, sizeof target - 1);
  target[n < 0 ? 0 : n] = '\0';
  fprintf(f, "fd%d=%s\n", fd, n < 0 ? "closed" : target);
}

int main(int argc, char **argv) {
  if (argc != 4) return 2;
  before_daemon();
  if (daemon(atoi(argv[2]), atoi(argv[3])) != 0) {
    perror("daemon");
    return 1;
  }
  in_daemon();
  char tmp[PATH_MAX], cwd[PATH_MAX];
  snprintf(tmp, sizeof tmp, "%s.tmp", argv[1]);
  FILE *f = fopen(tmp, "w");
  if (f == NULL) return 1;
  fprintf(f, "pid=%d\nsession_leader=%d\ncwd=%s\n", (int)getpid(), getsid(0) == getpid(),
          getcwd(cwd, sizeof cwd) ? cwd : "?");
  for (int fd = 0; fd < 3; fd++) describe_fd(f, fd);
  fclose(f);
  return rename(tmp, argv[1]) == 0 ? 0 : 1;
}
