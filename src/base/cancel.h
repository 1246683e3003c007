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
#include <stdatomic.h>
#include <stdbool.h>
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

static inline uint64_t hh__unwind_signals(void) {
  uint64_t block = ~(uint64_t)0;
  static const int keep[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP, SIGSYS, 33};
  for (unsigned i = 0; i < sizeof keep / sizeof keep[0]; i++) block &= ~((uint64_t)1 << (keep[i] - 1));
  return block;
}

static inline hh_unwind_off hh__unwind_off(void) {
  hh_unwind_off old = {0, hh__cancel_off()};
  uint64_t block = hh__unwind_signals();
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

/* ---- the same, only where the program can unwind a thread ----------------
 *
 * A new call stack's capture (record/trace/stacks.c) takes the loader's
 * lock, the module lock and the meta lock, and a program may take
 * thousands of new stacks: the three system calls of hh__unwind_off,
 * hh__unwind_block_again and hh__unwind_restore there made gcc's cc1
 * traced ~1.2x slower (6f41a26, reverted). Only a program that can unwind
 * a thread wherever a signal finds it needs them: one that has installed
 * a handler (a function) for a signal that hh__unwind_off holds back (the
 * handler may call pthread_exit or siglongjmp), or made a thread
 * asynchronously cancelable. The preload libraries' sigaction, signal,
 * bsd_signal, ssignal, sysv_signal, sigset and pthread_setcanceltype set
 * hh__unwind_seen first, then call glibc's (src/hook/signals.c); it is
 * never cleared. Not seen: a handler installed by the rt_sigaction system
 * call itself, or through glibc's obsolete sigvec (old binaries only);
 * and a thread already inside a gated stretch when another thread
 * installs the handler is held back from its next stretch on. A
 * handler of SIGABRT does not count: crash reporters install one (gcc's
 * cc1, breakpad) with those of the faults, and SIGABRT comes from the
 * thread's own abort(), which heaphook's stretches do not call; only one
 * sent from elsewhere (kill -ABRT) to a thread in the stretch, to a
 * handler that unwinds the thread, is not held back there. */
extern _Atomic(bool) hh__unwind_seen;

/* Whether a handler of sig makes hh__unwind_seen: a signal that
 * hh__unwind_off holds back, but SIGABRT (above), and none whose handler
 * glibc refuses (SIGKILL, SIGSTOP, its cancel signal 32). */
static inline bool hh__unwind_reaches(int sig) {
  return sig >= 1 && sig <= 64 && sig != SIGABRT && sig != SIGKILL && sig != SIGSTOP && sig != 32 &&
         ((hh__unwind_signals() >> (sig - 1)) & 1) != 0;
}

static inline void hh__unwind_note(void) { atomic_store(&hh__unwind_seen, true); }

/* Inside a stretch, after code that set the mask through glibc (which
 * unblocked glibc's cancel signal): the signals blocked again. */
static inline void hh__unwind_block_again(void) {
  uint64_t block = hh__unwind_signals();
  int saved = errno;
  syscall(SYS_rt_sigprocmask, SIG_BLOCK, &block, NULL, sizeof block);
  errno = saved;
}

/* hh__unwind_off where hh__unwind_seen, else cancellation off only: one
 * relaxed load more than hh__cancel_off. held says which, for the two
 * below (the flag may be set meanwhile by another thread). */
typedef struct hh_unwind_gate {
  hh_unwind_off off;
  bool held;
} hh_unwind_gate;

static inline hh_unwind_gate hh__unwind_off_if_seen(void) {
  hh_unwind_gate g = {{0, 0}, atomic_load_explicit(&hh__unwind_seen, memory_order_relaxed)};
  if (g.held)
    g.off = hh__unwind_off();
  else
    g.off.cancel = hh__cancel_off();
  return g;
}

static inline void hh__unwind_block_again_if(hh_unwind_gate g) {
  if (g.held) hh__unwind_block_again();
}

static inline void hh__unwind_restore_if(hh_unwind_gate g) {
  if (g.held)
    hh__unwind_restore(g.off);
  else
    hh__cancel_restore(g.off.cancel);
}

#endif
