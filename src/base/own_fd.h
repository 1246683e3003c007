/* heaphook's own file descriptors in the traced process: the trace file, the
 * copy of stderr kept for the reports at exit, libunwind's memory-check pipe.
 *
 * Programs close descriptors they never opened: a daemon closes every one
 * when it detaches, a child closes all but three before exec, a server may
 * then open a thousand sockets. Each of ours would then be lost (the trace
 * ends there) or, worse, its number handed to the program's next file and
 * our bytes written into it. So the preload libraries export close,
 * close_range and closefrom (src/hook/fds.c), which leave the descriptors
 * registered here open, and dup2 and dup3, which first move one of ours
 * that the program names as the target to another number (the variable
 * that holds it, its owner, is updated).
 *
 * A registered descriptor is remembered with the identity of its open file
 * (device and inode): a number the program reused through a path we do not
 * see (a raw close system call, dup2 onto it) no longer counts as ours, so
 * the program's own descriptor is never kept from it, and the trace writer
 * reopens its file rather than write into the program's.
 *
 * Nothing here allocates or locks: the wrappers run in vfork children and
 * in the middle of libunwind. */
#ifndef HH_BASE_OWN_FD_H
#define HH_BASE_OWN_FD_H

#include <stdatomic.h>
#include <stdbool.h>

/* heaphook moves its descriptors to these numbers or above, out of the way
 * of the program's (open(2) hands out the lowest free number): each kind
 * from a base of its own, so that a trace file opened again after the
 * program closed everything with a raw system call does not take the number
 * libunwind still reads its old pipe at (libunwind would read it, fail,
 * and close it). */
#define HH_OWN_FD_TRACE 900   /* the trace file */
#define HH_OWN_FD_PIPE 960    /* libunwind's pipe */
#define HH_OWN_FD_STDERR 1000 /* the copy of stderr */

/* Set while heaphook runs code that opens descriptors for it (libunwind,
 * which opens a pipe to test whether memory is readable, and closes and
 * reopens it when the read end fails): a pipe made then is moved high and
 * registered as claimed, and a claimed descriptor closed then is really
 * closed. initial-exec TLS. */
extern __thread bool hh__own_fd_claim __attribute__((tls_model("initial-exec")));

/* fd moved to base or above (close-on-exec when cloexec), the old number
 * closed; fd itself when there is no such number free. */
int hh__own_fd_raise(int fd, int base, bool cloexec);

/* Registers fd with the identity of the file it refers to now; false when
 * the table is full (16) or fstat fails: fd is then not protected. owner:
 * the variable that holds fd, where a move (hh__own_fd_make_room) stores
 * the new number, with base the lowest number to move it to; NULL for a
 * descriptor libunwind made (hh__own_fd_claim), which libunwind keeps in
 * variables of its own (it cannot be moved) and itself may close. No code
 * but heaphook's own closes the others. */
bool hh__own_fd_add(int fd, int base, _Atomic int *owner);

/* Forgets fd (before heaphook closes it itself). */
void hh__own_fd_remove(int fd);

/* Forgets fd and closes it. */
void hh__own_fd_close(int fd);

/* True when fd is registered and still refers to the file it was
 * registered with; a registration whose number now refers to another file
 * (or to none) is forgotten. With claimed, true only for a descriptor
 * registered as claimed. */
bool hh__own_fd_holds(int fd);
bool hh__own_fd_holds_claimed(int fd);

/* Before the program puts a file of its own under the number fd (dup2):
 * when fd is one of ours with an owner, it moves to another number (the
 * owner and the register updated, close-on-exec) and stays open until the
 * program's call replaces it. False when fd is not ours or could not move. */
bool hh__own_fd_make_room(int fd);

/* The registered descriptors in [lo, hi] that hold (hh__own_fd_holds),
 * ascending, into out (room for HH_OWN_FD_MAX); how many. */
#define HH_OWN_FD_MAX 16
int hh__own_fd_in_range(unsigned lo, unsigned hi, int out[HH_OWN_FD_MAX]);

#endif
