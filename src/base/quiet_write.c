/* Writes that a file-size limit does not turn into a SIGXFSZ (see
 * quiet_write.h). */
#define _GNU_SOURCE
#include "quiet_write.h"

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* The calling thread's signal mask, through the system call: glibc's
 * sigprocmask never blocks its cancel signal, and so, restoring the mask,
 * unblocked it where heaphook had (base/cancel.h): a thread the program
 * cancels asynchronously was unwound in the middle of a trace's write,
 * with the tracer's lock of its state held, and its exit waited on that
 * lock forever (trace.unwound_threads, 1 run in ~10 on glibc 2.36). */
static bool set_mask(int how, const uint64_t *set, uint64_t *old) {
  return syscall(SYS_rt_sigprocmask, how, set, old, sizeof *set) == 0;
}

/* at < 0: write(2) at the file's offset. */
static ssize_t quiet(int fd, const void *buf, size_t n, off_t at) {
  sigset_t xfsz, pending;
  sigemptyset(&xfsz);
  sigaddset(&xfsz, SIGXFSZ);
  uint64_t block = (uint64_t)1 << (SIGXFSZ - 1), old;
  bool held = set_mask(SIG_BLOCK, &block, &old);
  bool had = held && sigpending(&pending) == 0 && sigismember(&pending, SIGXFSZ) == 1;
  ssize_t w = at < 0 ? write(fd, buf, n) : pwrite(fd, buf, n, at);
  int err = errno;
  if (held) {
    if (w < 0 && err == EFBIG && !had) {
      struct timespec now = {0, 0};
      while (sigtimedwait(&xfsz, NULL, &now) < 0 && errno == EINTR) {
      }
    }
    set_mask(SIG_SETMASK, &old, NULL);
  }
  errno = err;
  return w;
}

ssize_t hh__write_quiet(int fd, const void *buf, size_t n) { return quiet(fd, buf, n, -1); }
ssize_t hh__pwrite_quiet(int fd, const void *buf, size_t n, off_t at) { return quiet(fd, buf, n, at); }
