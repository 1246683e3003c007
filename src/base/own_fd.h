/* heaphook's own file descriptors in the traced process: the trace file,
 * /proc/self/statm (the RSS samples), the copy of stderr kept for the
 * reports at exit, libunwind's memory-check pipe.
 *
 * Programs close descriptors they never opened: a daemon closes every one
 * when it detaches, a child closes all but three before exec, a server may
 * then open a thousand sockets. Each of ours would then be lost (the trace
 * ends there) or, worse, its number handed to the program's next file and
 * our bytes written into it. So the preload libraries export close,
 * close_range and closefrom (src/hook/fds.c), which leave the descriptors
 * registered here open, and dup2 and dup3, which first move one of ours
 * that the program names as the target to another number.
 *
 * A registered descriptor is remembered with the identity of its open file
 * (device and inode; and ours are all close-on-exec): a number the program
 * reused through a path we do not see (a raw close system call) no longer
 * counts as ours, so the program's own descriptor is never kept from it,
 * and heaphook opens its file again rather than use the program's.
 *
 * Nothing here allocates: the wrappers run in vfork children and in the
 * middle of libunwind. */
#ifndef HH_BASE_OWN_FD_H
#define HH_BASE_OWN_FD_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

/* heaphook moves its descriptors to these numbers or above, out of the way
 * of the program's (open(2) hands out the lowest free number): each kind
 * from a base of its own, so that after the program closed everything with
 * a raw system call, a file heaphook opens again does not take the number
 * libunwind still reads its old pipe at (libunwind would read it, fail,
 * and close it). */
#define HH_OWN_FD_TRACE 900   /* the trace file */
#define HH_OWN_FD_STATM 930   /* /proc/self/statm */
#define HH_OWN_FD_PIPE 960    /* libunwind's pipe */
#define HH_OWN_FD_STDERR 1000 /* the copy of stderr */

#define HH_OWN_FD_MAX 16 /* registered at once; heaphook uses 6 */

/* The number to move a descriptor of the kind base (HH_OWN_FD_*) to or
 * above: base itself, or, where the soft RLIMIT_NOFILE leaves no room up
 * there (ulimit -n 256: F_DUPFD to 900 fails with EINVAL and ours would
 * stay at the low numbers the program's next files expect), a number as
 * far below the limit as base is below 1024, in the same order. */
int hh__own_fd_base(int base);

/* A descriptor of heaphook's that its code uses: its number (-1: none),
 * which a move (hh__own_fd_make_room) changes, and the uses under way,
 * which a move waits for. */
typedef struct hh_own_fd {
  _Atomic int fd;
  _Atomic int users;
  int base;             /* where it moves to */
  atomic_bool unlinked; /* its file was found deleted (no name left) */
} hh_own_fd;
#define HH_OWN_FD_INIT(b) \
  { .fd = -1, .users = 0, .base = (b) }

/* Set while heaphook runs libunwind, which opens a pipe to test whether
 * memory is readable and closes and reopens it when the read end fails: a
 * pipe libunwind makes then is moved high and registered as claimed, and a
 * claimed descriptor libunwind closes then is really closed. Only calls
 * made from libunwind's own code count (hh__own_fd_from_claimant): a signal
 * handler of the program's that runs meanwhile is the program's. */
extern __thread bool hh__own_fd_claim __attribute__((tls_model("initial-exec")));

/* The text of the code whose calls hh__own_fd_claim covers (libunwind's),
 * set once at start-up; and whether ip (a return address) is in it. */
void hh__own_fd_set_claimant(uintptr_t lo, uintptr_t hi);
bool hh__own_fd_from_claimant(uintptr_t ip);

/* fd moved to base or above (close-on-exec when cloexec), the old number
 * closed; fd itself when there is no such number free. */
int hh__own_fd_raise(int fd, int base, bool cloexec);

/* Registers fd with the identity of the file it refers to now, as owner's
 * descriptor (owner->fd set to it), or as one of libunwind's (owner NULL:
 * libunwind keeps it in variables of its own, so it cannot move, and may
 * close it itself). False when the table is full or fstat fails: fd is then
 * not protected. */
bool hh__own_fd_add(int fd, hh_own_fd *owner);

/* Forgets owner's descriptor and closes it (owner->fd becomes -1). */
void hh__own_fd_close(hh_own_fd *owner);

/* Forgets fd (libunwind closing its pipe). */
void hh__own_fd_remove(int fd);

/* owner's descriptor when it is registered and still refers to its file,
 * else -1. Between hh__own_fd_use and hh__own_fd_done, a dup2 of the
 * program's onto the number waits (the use may write to it). */
int hh__own_fd_use(hh_own_fd *owner);
void hh__own_fd_done(hh_own_fd *owner);

/* True when fd is a registered descriptor that still refers to its file;
 * registrations whose number now refers to another file (or to none) are
 * forgotten. With _claimed, only libunwind's. */
bool hh__own_fd_holds(int fd);
bool hh__own_fd_holds_claimed(int fd);

/* Before the program puts a file of its own under the number fd (dup2):
 * when fd is one of ours with an owner, it moves to another number (the
 * owner and the register updated, close-on-exec), the owner's uses under
 * way finish, and the old number stays open until the program's call
 * replaces it. False when fd is not such a descriptor, could not move, or
 * the caller is a vfork child (whose moves would change its parent's
 * state; the numbers are its own copies). */
bool hh__own_fd_make_room(int fd);

/* The registered descriptors in [lo, hi] that hold (hh__own_fd_holds),
 * ascending, into out; how many. */
int hh__own_fd_in_range(unsigned lo, unsigned hi, int out[HH_OWN_FD_MAX]);

#endif
