/* close, close_range, closefrom, dup2, dup3 and pipe2, exported by the preload
 * libraries so that the program cannot close heaphook's own descriptors
 * (src/base/own_fd.h): a daemon that closes every descriptor when it
 * detaches lost the rest of its trace, and the number of the trace file, or
 * of libunwind's pipe (3 and 4 in most programs), went to the program's
 * next file, into which heaphook then wrote.
 *
 * close of one of heaphook's descriptors returns 0 and leaves it open: the
 * program never opened it, and is done with whatever it thinks it closed.
 * close_range and closefrom close everything else in their range. dup2
 * and dup3 onto one of heaphook's numbers move heaphook's first. pipe2
 * moves the pipe libunwind makes to test memory (in the tracer's unwinds,
 * hh__own_fd_claim) out of the program's numbers. Everything else is
 * glibc's: close under its exported alias __close (a cancellation point, as
 * the program expects), the others as the system calls that glibc's
 * wrappers are. No lookup, no lock, no allocation: these run in vfork
 * children and inside libunwind. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/own_fd.h"

#define EXPORT __attribute__((visibility("default")))

extern int __close(int fd);

/* A call from libunwind while the tracer unwinds (own_fd.h). */
#define FROM_LIBUNWIND() \
  (hh__own_fd_claim && hh__own_fd_from_claimant((uintptr_t)__builtin_return_address(0)))

EXPORT int close(int fd) {
  if (hh__own_fd_holds(fd)) {
    /* libunwind closing its pipe, to make a new one (it reads the number
     * it knows, which may be a descriptor of ours since: kept). */
    if (!FROM_LIBUNWIND() || !hh__own_fd_holds_claimed(fd)) return 0;
    hh__own_fd_remove(fd);
  }
  return __close(fd);
}

static int sys_close_range(unsigned lo, unsigned hi, int flags) {
  return (int)syscall(SYS_close_range, lo, hi, flags);
}

/* close_range over [lo, hi] but heaphook's descriptors: the pieces between
 * them. Setting close-on-exec (CLOSE_RANGE_CLOEXEC) touches nothing of
 * ours that exec would keep, so that is one call. */
static int close_range_but_own(unsigned lo, unsigned hi, int flags) {
  int own[HH_OWN_FD_MAX];
  /* Flags this code does not know go to the kernel as they are (to be
   * refused, or to do what a newer kernel does with them). */
  int n = (flags & ~CLOSE_RANGE_UNSHARE) != 0 || lo > hi ? 0 : hh__own_fd_in_range(lo, hi, own);
  if (n == 0) return sys_close_range(lo, hi, flags);
  /* With CLOSE_RANGE_UNSHARE, the first call gives this thread a table of
   * its own and the others work on it. */
  unsigned from = lo;
  bool called = false;
  for (int i = 0; i < n; i++) {
    unsigned o = (unsigned)own[i]; /* <= INT_MAX */
    if (o > from) {
      if (sys_close_range(from, o - 1, flags) != 0) return -1;
      called = true;
    }
    from = o + 1;
  }
  if (from <= hi) return sys_close_range(from, hi, flags);
  return !called && (flags & CLOSE_RANGE_UNSHARE) ? unshare(CLONE_FILES) : 0;
}

EXPORT int close_range(unsigned lo, unsigned hi, int flags) { return close_range_but_own(lo, hi, flags); }

/* Where close_range fails (Linux before 5.9, a seccomp filter), glibc's
 * closefrom closes what /proc/self/fd lists, and so does this, but ours;
 * like glibc's it is not a cancellation point. */
static void close_listed(int lo) {
  int dir = (int)syscall(SYS_openat, AT_FDCWD, "/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) return;
  char buf[4096] __attribute__((aligned(8)));
  bool closed;
  do { /* again from the start: closing while reading may skip entries */
    closed = false;
    syscall(SYS_lseek, dir, 0, SEEK_SET);
    long n;
    while ((n = syscall(SYS_getdents64, dir, buf, sizeof buf)) > 0) {
      for (long off = 0; off < n;) {
        const char *name = buf + off + 19; /* struct linux_dirent64: ino 8, off 8, reclen 2, type 1 */
        unsigned short reclen;
        memcpy(&reclen, buf + off + 16, sizeof reclen);
        off += reclen;
        if (name[0] < '0' || name[0] > '9') continue;
        long fd = strtol(name, NULL, 10);
        if (fd < lo || fd == dir || fd > INT_MAX || hh__own_fd_holds((int)fd)) continue;
        syscall(SYS_close, fd);
        closed = true;
      }
    }
  } while (closed);
  syscall(SYS_close, dir);
}

EXPORT void closefrom(int lo) {
  if (lo < 0) lo = 0;
  int saved = errno;
  if (close_range_but_own((unsigned)lo, UINT_MAX, 0) != 0) close_listed(lo);
  errno = saved;
}

/* dup2 and dup3 onto one of heaphook's numbers: ours moves first, so that
 * the program gets the number and heaphook keeps its file (libunwind's
 * pipe cannot move: libunwind holds its numbers). If the call then fails,
 * the old number, still ours, is closed. */
extern int __dup2(int oldfd, int newfd);

static int after_dup(int r, bool moved, int newfd) {
  if (r < 0 && moved) {
    int saved = errno;
    __close(newfd);
    errno = saved;
  }
  return r;
}

EXPORT int dup2(int oldfd, int newfd) {
  bool moved = oldfd != newfd && hh__own_fd_make_room(newfd);
  return after_dup(__dup2(oldfd, newfd), moved, newfd);
}

EXPORT int dup3(int oldfd, int newfd, int flags) {
  bool moved = oldfd != newfd && hh__own_fd_make_room(newfd);
  return after_dup((int)syscall(SYS_dup3, oldfd, newfd, flags), moved, newfd);
}

EXPORT int pipe2(int fds[2], int flags) {
  int r = (int)syscall(SYS_pipe2, fds, flags);
  if (r == 0 && FROM_LIBUNWIND()) {
    for (int i = 0; i < 2; i++) {
      fds[i] = hh__own_fd_raise(fds[i], HH_OWN_FD_PIPE, (flags & O_CLOEXEC) != 0);
      hh__own_fd_add(fds[i], NULL);
    }
  }
  return r;
}
