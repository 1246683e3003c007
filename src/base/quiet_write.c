/* Writes that a file-size limit does not turn into a SIGXFSZ (see
 * quiet_write.h). */
#define _GNU_SOURCE
#include "quiet_write.h"

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <time.h>
#include <unistd.h>

/* at < 0: write(2) at the file's offset. */
static ssize_t quiet(int fd, const void *buf, size_t n, off_t at) {
  sigset_t xfsz, old, pending;
  sigemptyset(&xfsz);
  sigaddset(&xfsz, SIGXFSZ);
  /* (sigprocmask: the calling thread's mask, in a program with threads too) */
  bool held = sigprocmask(SIG_BLOCK, &xfsz, &old) == 0;
  bool had = held && sigpending(&pending) == 0 && sigismember(&pending, SIGXFSZ) == 1;
  ssize_t w = at < 0 ? write(fd, buf, n) : pwrite(fd, buf, n, at);
  int err = errno;
  if (held) {
    if (w < 0 && err == EFBIG && !had) {
      struct timespec now = {0, 0};
      while (sigtimedwait(&xfsz, NULL, &now) < 0 && errno == EINTR) {
      }
    }
    sigprocmask(SIG_SETMASK, &old, NULL);
  }
  errno = err;
  return w;
}

ssize_t hh__write_quiet(int fd, const void *buf, size_t n) { return quiet(fd, buf, n, -1); }
ssize_t hh__pwrite_quiet(int fd, const void *buf, size_t n, off_t at) { return quiet(fd, buf, n, at); }
