/* heaphook's own file descriptors (see own_fd.h). */
#define _GNU_SOURCE
#include "own_fd.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "backoff.h"
#include "handlers.h"

#define SLOTS HH_OWN_FD_MAX
#define FREE (-1)
#define BEING_WRITTEN (-2)

__thread bool hh__own_fd_claim __attribute__((tls_model("initial-exec")));

/* A slot's fd is FREE or BEING_WRITTEN while it holds nothing, taken with
 * a compare-and-swap; the rest is written before the fd is published. */
static struct {
  _Atomic int fd;
  hh_own_fd *owner; /* NULL: libunwind's */
  int fd_flags;     /* F_GETFD at registration */
  dev_t dev;
  ino_t ino;
} slot[SLOTS] = {[0 ... SLOTS - 1] = {.fd = FREE}};

/* Moves under way (hh__own_fd_make_room): a use that finds its owner's
 * number unregistered waits for them before it concludes the file is
 * gone. */
static _Atomic int moving;
/* The process that may move descriptors: set at the first registration
 * and in a forked child; a vfork child, which shares this memory, is
 * another process and does not move them. */
static _Atomic pid_t mover;
static _Atomic uintptr_t claim_lo, claim_hi;

/* glibc's close under its other exported name: ours (src/hook/fds.c) keeps
 * registered descriptors open. */
extern int __close(int fd);

static pid_t this_pid(void) { return (pid_t)syscall(SYS_getpid); }

void hh__own_fd_set_claimant(uintptr_t lo, uintptr_t hi) {
  atomic_store(&claim_lo, lo);
  atomic_store(&claim_hi, hi);
}

bool hh__own_fd_from_claimant(uintptr_t ip) {
  return ip >= atomic_load(&claim_lo) && ip < atomic_load(&claim_hi);
}

/* In a forked child: this process moves its own descriptors now; the uses
 * and registrations of the parent's other threads did not come along. */
static void at_fork_child(void) {
  atomic_store(&mover, this_pid());
  atomic_store(&moving, 0);
  for (int i = 0; i < SLOTS; i++) {
    int expect = BEING_WRITTEN;
    atomic_compare_exchange_strong(&slot[i].fd, &expect, FREE);
    if (slot[i].owner != NULL) atomic_store(&slot[i].owner->users, 0);
  }
}

static void first_registration(void) {
  static atomic_flag done = ATOMIC_FLAG_INIT;
  if (atomic_flag_test_and_set(&done)) return;
  atomic_store(&mover, this_pid());
  hh__atfork(NULL, NULL, at_fork_child);
}

int hh__own_fd_base(int base) {
  enum { TOP = 1024 };
  struct rlimit rl;
  int saved = errno;
  bool got = getrlimit(RLIMIT_NOFILE, &rl) == 0;
  errno = saved;
  if (!got || rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur >= TOP) return base;
  long lim = (long)rl.rlim_cur;
  long b = lim - (long)(TOP - base) * lim / TOP;
  return b < 3 ? 3 : (int)b;
}

/* A copy of fd at the lowest free number from base up; where every number
 * from base to the soft limit is taken, at the highest free one below base
 * and above floor, looked for down to PROBES numbers below base. A program
 * that dup2s onto every open descriptor in ascending order drove ours up
 * ahead of it (each move took the next free number, which it reached
 * next) to the limit, where the move failed: its dup2 then took our
 * files, which heaphook opened again at the program's lowest numbers (5,
 * 6 and 7 for good, where it opened its next file; trace.close_fds, dup2).
 * -1 (errno set) when there is no such number. */
#define PROBES 1024
static int dup_from(int fd, int base, int floor, bool cloexec) {
  int cmd = cloexec ? F_DUPFD_CLOEXEC : F_DUPFD;
  int r = fcntl(fd, cmd, base);
  for (int k = base - 1; r < 0 && errno == EMFILE && k > floor && k >= base - PROBES; k--)
    r = fcntl(fd, cmd, k);
  return r;
}

int hh__own_fd_raise(int fd, int base, bool cloexec) {
  base = hh__own_fd_base(base);
  if (fd < 0 || fd >= base) return fd;
  int saved = errno;
  int high = dup_from(fd, base, fd, cloexec);
  if (high >= 0) {
    __close(fd);
    fd = high;
  }
  errno = saved;
  return fd;
}

bool hh__own_fd_add(int fd, hh_own_fd *owner) {
  if (fd < 0) return false;
  first_registration();
  int saved = errno;
  struct stat st;
  int flags = fcntl(fd, F_GETFD);
  bool ok = flags >= 0 && fstat(fd, &st) == 0;
  errno = saved;
  if (!ok) return false;
  for (int i = 0; i < SLOTS; i++) {
    int expect = FREE;
    if (atomic_compare_exchange_strong(&slot[i].fd, &expect, BEING_WRITTEN)) {
      slot[i].owner = owner;
      slot[i].fd_flags = flags;
      slot[i].dev = st.st_dev;
      slot[i].ino = st.st_ino;
      atomic_store(&slot[i].fd, fd);
      if (owner != NULL) atomic_store(&owner->fd, fd);
      return true;
    }
  }
  return false;
}

void hh__own_fd_remove(int fd) {
  if (fd < 0) return;
  for (int i = 0; i < SLOTS; i++) {
    int expect = fd;
    atomic_compare_exchange_strong(&slot[i].fd, &expect, FREE);
  }
}

void hh__own_fd_close(hh_own_fd *owner) {
  int fd = atomic_exchange(&owner->fd, -1);
  if (fd < 0) return;
  for (int i = 0; i < SLOTS; i++) {
    int expect = fd;
    if (slot[i].owner == owner) atomic_compare_exchange_strong(&slot[i].fd, &expect, FREE);
  }
  int saved = errno;
  __close(fd);
  errno = saved;
}

/* Slot i holds fd: does fd still refer to the registered file? If not, the
 * registration is forgotten. */
static bool same_file(int i, int fd) {
  int saved = errno;
  struct stat st;
  int flags = fcntl(fd, F_GETFD);
  bool same = flags == slot[i].fd_flags && fstat(fd, &st) == 0 && st.st_dev == slot[i].dev &&
              st.st_ino == slot[i].ino;
  errno = saved;
  if (same && st.st_nlink == 0 && slot[i].owner != NULL) atomic_store(&slot[i].owner->unlinked, true);
  if (!same) {
    int expect = fd;
    atomic_compare_exchange_strong(&slot[i].fd, &expect, FREE);
  }
  return same;
}

/* Is fd registered (for owner, or for anyone when any) and still its file? */
static bool registered(int fd, hh_own_fd *owner, bool any, bool claimed_only) {
  if (fd < 0) return false;
  bool found = false;
  for (int i = 0; i < SLOTS && !found; i++) {
    if (atomic_load(&slot[i].fd) != fd) continue;
    if (!any && slot[i].owner != owner) continue;
    if (claimed_only && slot[i].owner != NULL) continue;
    found = same_file(i, fd);
  }
  return found;
}

bool hh__own_fd_holds(int fd) { return registered(fd, NULL, true, false); }
bool hh__own_fd_holds_claimed(int fd) { return registered(fd, NULL, true, true); }

int hh__own_fd_use(hh_own_fd *owner) {
  atomic_fetch_add(&owner->users, 1);
  for (unsigned turns = 0;;) {
    int fd = atomic_load(&owner->fd);
    if (registered(fd, owner, false, false)) return fd;
    if (atomic_load(&moving) == 0) return -1;
    hh__backoff(&turns);
  }
}

void hh__own_fd_done(hh_own_fd *owner) { atomic_fetch_sub(&owner->users, 1); }

bool hh__own_fd_make_room(int fd) {
  if (fd < 0 || atomic_load(&mover) != this_pid()) return false;
  for (int i = 0; i < SLOTS; i++) {
    hh_own_fd *o = slot[i].owner;
    if (atomic_load(&slot[i].fd) != fd || o == NULL || !same_file(i, fd)) continue;
    int saved = errno;
    atomic_fetch_add(&moving, 1);
    int moved = dup_from(fd, hh__own_fd_base(o->base), 2, true);
    int expect = fd;
    bool won = moved >= 0 && atomic_compare_exchange_strong(&slot[i].fd, &expect, moved);
    if (won) atomic_store(&o->fd, moved);
    atomic_fetch_sub(&moving, 1);
    if (moved >= 0 && !won) __close(moved); /* another thread moved it */
    errno = saved;
    if (!won) return false;
    /* Uses that took the old number finish before the program's call
     * puts its file there (bounded: a use interrupted by a signal handler
     * on this very thread would never finish). */
    for (unsigned turns = 0; turns < HH_BACKOFF_YIELDS + 1000 && atomic_load(&o->users) != 0;)
      hh__backoff(&turns);
    return true;
  }
  return false;
}

int hh__own_fd_in_range(unsigned lo, unsigned hi, int out[SLOTS]) {
  int n = 0;
  for (int i = 0; i < SLOTS; i++) {
    int fd = atomic_load(&slot[i].fd);
    if (fd < 0 || (unsigned)fd < lo || (unsigned)fd > hi || !same_file(i, fd)) continue;
    bool dup = false;
    for (int j = 0; j < n; j++) dup |= out[j] == fd;
    if (dup) continue;
    int j = n++;
    for (; j > 0 && out[j - 1] > fd; j--) out[j] = out[j - 1];
    out[j] = fd;
  }
  return n;
}
