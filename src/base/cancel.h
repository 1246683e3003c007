/* heaphook's code never acts on a pthread_cancel of the program's.
 *
 * A thread the program cancels (deferred, the default) ends at its next
 * cancellation point: write, open, read, pread, close... heaphook calls
 * those inside malloc (a chunk written, /proc/self/statm read, libunwind's
 * memory check) while it holds its locks or state; a thread cancelled there
 * unwound with them held, and its exit handler, or every other thread,
 * then waited on them forever. So each such stretch runs with cancellation
 * disabled; a cancel that arrives meanwhile is acted on at the program's
 * next cancellation point, as if it had arrived a moment later. */
#ifndef HH_BASE_CANCEL_H
#define HH_BASE_CANCEL_H

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

static inline int hh__cancel_off(void) {
  int old = PTHREAD_CANCEL_ENABLE;
  pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old);
  return old;
}

static inline void hh__cancel_restore(int old) {
  int ignored;
  pthread_setcancelstate(old, &ignored);
}

/* Nor does a thread that the program ends where heaphook holds a lock.
 * A thread cancelled asynchronously (PTHREAD_CANCEL_ASYNCHRONOUS), or one
 * whose signal handler calls pthread_exit or longjmps out, is unwound
 * wherever the signal finds it; inside a stretch that holds a lock of
 * heaphook's (a buffer handed over, a reused thread state taken), the
 * lock stayed taken: the thread's own exit handler, then every thread,
 * waited for it forever (trace.unwound_threads). So those stretches run
 * with cancellation disabled and with the signals blocked, glibc's cancel
 * signal included (delivered there, it unwound an asynchronously
 * cancelable thread all the same, on glibc 2.36); inside such a stretch a
 * mask is only ever set through the system call, as glibc's sigprocmask
 * and pthread_sigmask unblock that signal (quiet_write.c, the writer
 * thread's start: a thread was unwound in a trace's write, 1 run of
 * trace.unwound_threads in ~10). The other signals are
 * handled as the stretch ends, as if they had come a moment later. Left
 * deliverable: the signals a fault raises (blocked, a fault would kill
 * the process at once) and glibc's signal 33, which setuid and its kin
 * wait for in every thread while they hold the lock that pthread_create
 * needs (which the stretch may call). */
typedef struct hh_unwind_off {
  uint64_t mask;
  int cancel;
} hh_unwind_off;

static inline hh_unwind_off hh__unwind_off(void) {
  hh_unwind_off old = {0, hh__cancel_off()};
  uint64_t block = ~(uint64_t)0;
  static const int keep[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP, SIGSYS, 33};
  for (unsigned i = 0; i < sizeof keep / sizeof keep[0]; i++) block &= ~((uint64_t)1 << (keep[i] - 1));
  int saved = errno;
  if (syscall(SYS_rt_sigprocmask, SIG_BLOCK, &block, &old.mask, sizeof block) != 0) old.mask = 0;
  errno = saved;
  return old;
}

/* The signal mask first: a cancel acted on at once by the second (the
 * thread ends there) leaves no signal blocked. */
static inline void hh__unwind_restore(hh_unwind_off old) {
  int saved = errno;
  syscall(SYS_rt_sigprocmask, SIG_SETMASK, &old.mask, NULL, sizeof old.mask);
  errno = saved;
  hh__cancel_restore(old.cancel);
}

#endif
