/* sigaction and its kin, and pthread_setcanceltype, exported by the
 * preload libraries: they tell the tracer that the program can unwind a
 * thread wherever a signal finds it (base/cancel.h, hh__unwind_seen).
 *
 * A program that installs a handler (a function) for a signal the
 * tracer's stretches could hold back, or makes a thread asynchronously
 * cancelable, may end a thread by pthread_exit, or leave a handler by
 * siglongjmp, inside the tracer's capture of a new call stack, which then
 * left the meta lock taken: the thread's own exit handler, then every
 * thread, waited for it for good, or a jump out of it could not give the
 * recursion guard back (trace.unwound_threads, trace.signal_longjmp).
 * From then on the capture runs with those signals held back; a program
 * that does neither pays nothing for it (trace.signal_gate).
 *
 * Each wrapper sets the flag before it calls glibc's function (never
 * cleared: a handler put back to SIG_DFL may still be running), so a
 * signal that the handler can receive finds it set. glibc's signal,
 * bsd_signal, ssignal, sysv_signal and sigset call its internal
 * sigaction, not the exported one, so each is wrapped by itself. These
 * may run in a signal handler (sigaction is async-signal-safe, and old
 * programs call signal() again in their handlers): glibc's functions are
 * looked up in a constructor, as in jump.c; one called before it ran (a
 * constructor of a library the program links) looks its own up then. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>

#include "base/cancel.h"

#define EXPORT __attribute__((visibility("default")))

typedef int (*sigaction_fn)(int, const struct sigaction *, struct sigaction *);
typedef __sighandler_t (*signal_fn)(int, __sighandler_t);
typedef int (*canceltype_fn)(int, int *);

/* (glibc declares some of these only in some modes, or deprecated) */
int __sigaction(int sig, const struct sigaction *act, struct sigaction *old);
__sighandler_t bsd_signal(int sig, __sighandler_t handler);
__sighandler_t ssignal(int sig, __sighandler_t handler);
__sighandler_t sysv_signal(int sig, __sighandler_t handler);
__sighandler_t __sysv_signal(int sig, __sighandler_t handler);
__sighandler_t sigset(int sig, __sighandler_t handler);

static sigaction_fn next_sigaction, next__sigaction;
static signal_fn next_signal, next_bsd_signal, next_ssignal, next_sysv_signal, next__sysv_signal, next_sigset;
static canceltype_fn next_canceltype;

__attribute__((constructor)) static void signals_resolve(void) {
  next_sigaction = (sigaction_fn)dlsym(RTLD_NEXT, "sigaction");
  next__sigaction = (sigaction_fn)dlsym(RTLD_NEXT, "__sigaction");
  next_signal = (signal_fn)dlsym(RTLD_NEXT, "signal");
  next_bsd_signal = (signal_fn)dlsym(RTLD_NEXT, "bsd_signal");
  next_ssignal = (signal_fn)dlsym(RTLD_NEXT, "ssignal");
  next_sysv_signal = (signal_fn)dlsym(RTLD_NEXT, "sysv_signal");
  next__sysv_signal = (signal_fn)dlsym(RTLD_NEXT, "__sysv_signal");
  next_sigset = (signal_fn)dlsym(RTLD_NEXT, "sigset");
  next_canceltype = (canceltype_fn)dlsym(RTLD_NEXT, "pthread_setcanceltype");
}

/* glibc's function, looked up now if the constructor has not run yet. */
#define NEXT(var, name) ((var) != NULL ? (var) : (__typeof__(var))dlsym(RTLD_NEXT, name))

/* SIG_DFL, SIG_IGN, SIG_HOLD (sigset) and SIG_ERR are not handlers. */
static void note_handler(int sig, __sighandler_t handler) {
  if (handler != SIG_DFL && handler != SIG_IGN && handler != SIG_HOLD && handler != SIG_ERR &&
      hh__unwind_reaches(sig))
    hh__unwind_note();
}

/* (sa_handler and sa_sigaction share their place) */
static int call_sigaction(sigaction_fn fn, int sig, const struct sigaction *act, struct sigaction *old) {
  if (act != NULL) note_handler(sig, act->sa_handler);
  if (fn == NULL) {
    errno = ENOSYS;
    return -1;
  }
  return fn(sig, act, old);
}

static __sighandler_t call_signal(signal_fn fn, int sig, __sighandler_t handler) {
  note_handler(sig, handler);
  if (fn == NULL) {
    errno = ENOSYS;
    return SIG_ERR;
  }
  return fn(sig, handler);
}

EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *old) {
  return call_sigaction(NEXT(next_sigaction, "sigaction"), sig, act, old);
}
EXPORT int __sigaction(int sig, const struct sigaction *act, struct sigaction *old) {
  return call_sigaction(NEXT(next__sigaction, "__sigaction"), sig, act, old);
}
EXPORT __sighandler_t signal(int sig, __sighandler_t handler) {
  return call_signal(NEXT(next_signal, "signal"), sig, handler);
}
EXPORT __sighandler_t bsd_signal(int sig, __sighandler_t handler) {
  return call_signal(NEXT(next_bsd_signal, "bsd_signal"), sig, handler);
}
EXPORT __sighandler_t ssignal(int sig, __sighandler_t handler) {
  return call_signal(NEXT(next_ssignal, "ssignal"), sig, handler);
}
EXPORT __sighandler_t sysv_signal(int sig, __sighandler_t handler) {
  return call_signal(NEXT(next_sysv_signal, "sysv_signal"), sig, handler);
}
EXPORT __sighandler_t __sysv_signal(int sig, __sighandler_t handler) {
  return call_signal(NEXT(next__sysv_signal, "__sysv_signal"), sig, handler);
}
EXPORT __sighandler_t sigset(int sig, __sighandler_t handler) {
  return call_signal(NEXT(next_sigset, "sigset"), sig, handler);
}

EXPORT int pthread_setcanceltype(int type, int *old) {
  if (type == PTHREAD_CANCEL_ASYNCHRONOUS) hh__unwind_note();
  canceltype_fn fn = NEXT(next_canceltype, "pthread_setcanceltype");
  if (fn == NULL) return ENOSYS;
  return fn(type, old);
}
