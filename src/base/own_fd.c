/* heaphook's own file descriptors (see own_fd.h). */
#define _GNU_SOURCE
#include "own_fd.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#define SLOTS HH_OWN_FD_MAX /* heaphook uses 6 at most */

__thread bool hh__own_fd_claim __attribute__((tls_model("initial-exec")));

/* A slot's fd is -1 when free, claimed with a compare-and-swap; its
 * identity is written before the fd is published. */
static struct {
  _Atomic int fd;
  bool claimed;
  int base;
  _Atomic int *owner;
  dev_t dev;
  ino_t ino;
} slot[SLOTS] = {[0 ... SLOTS - 1] = {.fd = -1}};

/* glibc's close under its other exported name: ours (src/hook/fds.c) keeps
 * registered descriptors open. */
extern int __close(int fd);

int hh__own_fd_raise(int fd, int base, bool cloexec) {
  if (fd < 0 || fd >= base) return fd;
  int saved = errno;
  int high = fcntl(fd, cloexec ? F_DUPFD_CLOEXEC : F_DUPFD, base);
  if (high >= 0) {
    __close(fd);
    fd = high;
  }
  errno = saved;
  return fd;
}

bool hh__own_fd_add(int fd, int base, _Atomic int *owner) {
  int saved = errno;
  struct stat st;
  bool ok = fd >= 0 && fstat(fd, &st) == 0;
  errno = saved;
  if (!ok) return false;
  for (int i = 0; i < SLOTS; i++) {
    int expect = -1;
    /* -2 while the identity is written: no reader takes it for fd yet. */
    if (atomic_compare_exchange_strong(&slot[i].fd, &expect, -2)) {
      slot[i].claimed = owner == NULL;
      slot[i].base = base;
      slot[i].owner = owner;
      slot[i].dev = st.st_dev;
      slot[i].ino = st.st_ino;
      atomic_store_explicit(&slot[i].fd, fd, memory_order_release);
      return true;
    }
  }
  return false;
}

void hh__own_fd_remove(int fd) {
  if (fd < 0) return;
  for (int i = 0; i < SLOTS; i++) {
    int expect = fd;
    atomic_compare_exchange_strong(&slot[i].fd, &expect, -1);
  }
}

void hh__own_fd_close(int fd) {
  if (fd < 0) return;
  hh__own_fd_remove(fd);
  int saved = errno;
  __close(fd);
  errno = saved;
}

/* Slot i holds fd: does fd still refer to the registered file? */
static bool same_file(int i, int fd) {
  int saved = errno;
  struct stat st;
  bool same = fstat(fd, &st) == 0 && st.st_dev == slot[i].dev && st.st_ino == slot[i].ino;
  errno = saved;
  if (!same) {
    int expect = fd;
    atomic_compare_exchange_strong(&slot[i].fd, &expect, -1);
  }
  return same;
}

static bool holds(int fd, bool claimed_only) {
  if (fd < 0) return false;
  for (int i = 0; i < SLOTS; i++) {
    if (atomic_load_explicit(&slot[i].fd, memory_order_acquire) == fd)
      return (!claimed_only || slot[i].claimed) && same_file(i, fd);
  }
  return false;
}

bool hh__own_fd_holds(int fd) { return holds(fd, false); }
bool hh__own_fd_holds_claimed(int fd) { return holds(fd, true); }

int hh__own_fd_in_range(unsigned lo, unsigned hi, int out[SLOTS]) {
  int n = 0;
  for (int i = 0; i < SLOTS; i++) {
    int fd = atomic_load_explicit(&slot[i].fd, memory_order_acquire);
    if (fd < 0 || (unsigned)fd < lo || (unsigned)fd > hi || !same_file(i, fd)) continue;
    int j = n++;
    for (; j > 0 && out[j - 1] > fd; j--) out[j] = out[j - 1];
    out[j] = fd;
  }
  return n;
}

bool hh__own_fd_make_room(int fd) {
  if (fd < 0) return false;
  for (int i = 0; i < SLOTS; i++) {
    if (atomic_load_explicit(&slot[i].fd, memory_order_acquire) != fd) continue;
    if (slot[i].owner == NULL || !same_file(i, fd)) return false;
    int saved = errno;
    int moved = fcntl(fd, F_DUPFD_CLOEXEC, slot[i].base);
    errno = saved;
    if (moved < 0) return false;
    /* The owner first: a writer that still loads the old number checks it
     * (hh__own_fd_holds) and finds it no longer registered. */
    atomic_store(slot[i].owner, moved);
    atomic_store_explicit(&slot[i].fd, moved, memory_order_release);
    return true;
  }
  return false;
}
