/* _exit, _Exit, daemon, kill and raise, exported by the preload libraries
 * so that a process that ends without exit() still finishes its trace: exit() runs the
 * library's destructor, which writes every thread's buffered events and
 * END; _exit runs nothing. Forked children end that way (Python's
 * os._exit in multiprocessing workers, servers' workers), and so do
 * shells. Without this their traces lost the last buffered events and
 * read as "killed". _exit, _Exit, quick_exit and daemon's parent also
 * print the reports exit() prints (usage, counts, HEAPHOOK_STATS); abort
 * and a signal that ends the process finish the trace only: the program
 * is failing there, and a report's walk of a damaged heap (the TLSF
 * pools') could turn its SIGABRT into a SIGSEGV.
 *
 * glibc's exit() calls its internal _exit, not this one, after the
 * destructors. The process then ends as glibc's _exit ends it (exit_group,
 * then exit), with no lookup of the next definition: a vfork child calls
 * _exit too, and must not take the loader's locks. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "base/handlers.h"
#include "guard.h"
#include "own.h"
#include "record/trace/trace.h"

#define EXPORT __attribute__((visibility("default")))

/* Skipped in a signal handler that interrupted the hook on this thread
 * (the recorders may hold their locks there): its buffered events and the
 * reports are then lost, as before. */
__attribute__((noreturn)) static void end_process(int status) {
  if (!hh__guard_held((uintptr_t)__builtin_dwarf_cfa())) hh__stop_before_end();
  for (;;) {
    syscall(SYS_exit_group, status);
    syscall(SYS_exit, status);
  }
}

EXPORT void _exit(int status) { end_process(status); }
EXPORT void _Exit(int status) { end_process(status); }

/* The first process of a PID namespace (a container's program run as its
 * init) is not ended by a signal it sends itself, SIGKILL included: the
 * kernel drops it, and the program goes on (trace.self_kill, init). */
static bool is_namespace_init(void) { return getpid() == 1; }

/* Whether SIG, sent to the calling thread or its process, ends the process
 * as it arrives: its action is the default one, that default ends a
 * process, and the calling thread does not block it (blocked, it pends,
 * and the program may still take it with sigwait or handle it later). */
static bool signal_ends_process(int sig) {
  switch (sig) {
    case SIGKILL:
      return !is_namespace_init();
    case SIGCHLD:
    case SIGCONT:
    case SIGURG:
    case SIGWINCH:
    case SIGSTOP:
    case SIGTSTP:
    case SIGTTIN:
    case SIGTTOU:
      return false;
    default:
      break;
  }
  if (sig <= 0 || sig >= NSIG) return false;
  int saved = errno;
  struct sigaction sa;
  sigset_t blocked;
  bool ends = sigaction(sig, NULL, &sa) == 0 && sa.sa_handler == SIG_DFL &&
              pthread_sigmask(SIG_BLOCK, NULL, &blocked) == 0 && sigismember(&blocked, sig) == 0;
  errno = saved;
  return ends && !is_namespace_init();
}

/* A program that ends itself by a signal with its default action: Python
 * after an uncaught KeyboardInterrupt (it sets SIGINT's action back to the
 * default, then kill(getpid(), SIGINT)), shells, programs that clean up
 * on a signal and raise it again. Such an end runs no destructors, as
 * _exit: the trace is finished first, as there (trace.self_kill); before,
 * it read as a killed program's, without END and the events its threads
 * still held. A signal that will not end the process (handled, ignored,
 * blocked, one whose default is not to end) changes nothing. The signal
 * is then sent as glibc sends it. Without a trace being recorded (no
 * tracer: libpreloaded_tlsf.so, counts) nothing is looked at: a program
 * that raises a handled signal in a loop paid a getpid and a sigaction
 * of the wrapper's per call, two getpids and a sigaction per kill
 * (trace.self_kill_cost). */
static void before_signal(int sig) {
  if (!hh__trace_recording() || !signal_ends_process(sig) || hh__guard_held((uintptr_t)__builtin_dwarf_cfa()))
    return;
  hh_guard guard = hh__guard_enter();
  hh__trace_before_exit();
  hh__guard_leave(guard);
}

/* kill aimed at the process itself: its pid, 0 (its process group) or its
 * process group. */
EXPORT int kill(pid_t pid, int sig) {
  if (sig != 0 && hh__trace_recording() && (pid == 0 || pid == getpid() || (pid < -1 && -pid == getpgrp())))
    before_signal(sig);
  return (int)syscall(SYS_kill, pid, sig);
}

/* glibc's raise is pthread_kill of the calling thread. */
EXPORT int raise(int sig) {
  before_signal(sig);
  int err = pthread_kill(pthread_self(), sig);
  if (err != 0) {
    errno = err;
    return -1;
  }
  return 0;
}

/* abort as the program's, C++'s std::terminate (an uncaught exception)
 * and other libraries' call it: the process ends by SIGABRT unless a
 * handler of the program's leaves it (abort unblocks the signal, and
 * when a handler returns it sets the default action and raises it
 * again), so with no handler the trace is finished first, as before a
 * kill. glibc's own calls (assert, its heap checks) go to its internal
 * abort, as do heaphook's, which run with the guard held. */
static void (*next_abort)(void);

EXPORT __attribute__((noreturn)) void abort(void) {
  int saved = errno;
  struct sigaction sa;
  if (sigaction(SIGABRT, NULL, &sa) == 0 && (sa.sa_handler == SIG_DFL || sa.sa_handler == SIG_IGN) &&
      !hh__guard_held((uintptr_t)__builtin_dwarf_cfa())) {
    hh_guard guard = hh__guard_enter();
    hh__trace_before_exit();
    hh__guard_leave(guard);
  }
  errno = saved;
  if (next_abort != NULL) next_abort();
  /* No next abort yet: called by the constructor of a library the program
   * links, which runs before this library's (a C++ static initializer that
   * throws). As glibc's: SIGABRT unblocked and raised, the program's
   * handler run first (it may jump out); then the default action. Before,
   * the default was set first and a program's handler (a crash reporter's)
   * never ran (preload.abort_early). */
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGABRT);
  pthread_sigmask(SIG_UNBLOCK, &set, NULL);
  pthread_kill(pthread_self(), SIGABRT);
  struct sigaction dfl = {.sa_handler = SIG_DFL};
  sigfillset(&dfl.sa_mask);
  sigaction(SIGABRT, &dfl, NULL);
  for (;;) {
    pthread_kill(pthread_self(), SIGABRT);
    syscall(SYS_exit_group, 127);
  }
}

__attribute__((constructor)) static void hh_abort_find_next(void) {
  *(void **)&next_abort = dlsym(RTLD_NEXT, "abort");
}

/* daemon(3) as glibc's does it, but for the parent's end: glibc's calls its
 * internal _exit, not the one above, so a program that detached with it
 * left a parent's trace with no event and no end (trace.daemon_call). The
 * child starts a session, goes to / unless nochdir, and unless noclose
 * puts /dev/null on 0, 1 and 2, failing with ENODEV when /dev/null is not
 * the null device (1, 3). Its dup2 and close are the exported ones
 * (fds.c): heaphook's own descriptors stay open. */
EXPORT int daemon(int nochdir, int noclose) {
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid > 0) end_process(0);
  if (setsid() < 0) return -1;
  if (!nochdir) (void)chdir("/");
  if (noclose) return 0;
  int fd = open("/dev/null", O_RDWR);
  if (fd < 0) return -1;
  struct stat st;
  int err = fstat(fd, &st) != 0 ? errno : 0;
  if (err == 0 && (!S_ISCHR(st.st_mode) || st.st_rdev != makedev(1, 3))) err = ENODEV;
  if (err != 0) {
    close(fd);
    errno = err;
    return -1;
  }
  dup2(fd, STDIN_FILENO);
  dup2(fd, STDOUT_FILENO);
  dup2(fd, STDERR_FILENO);
  if (fd > STDERR_FILENO) close(fd);
  return 0;
}

/* quick_exit runs the at_quick_exit handlers, then glibc's internal _exit,
 * not the one above: the trace is finished by a handler registered before
 * the program's, which therefore runs after theirs. */
static void at_quick_exit_handler(void) {
  if (!hh__guard_held((uintptr_t)__builtin_dwarf_cfa())) hh__stop_before_end();
}

/* By the copy of the hook that is the process's malloc only, with no
 * library handle, so that it is still there once this library's destructor
 * has run (base/handlers.h). Not by a plug-in allocator's idle copy, which
 * could be unloaded. */
__attribute__((constructor)) static void hh_quick_exit_register(void) {
  if (dlsym(RTLD_DEFAULT, "malloc") == (void *)hh__own_malloc) hh__at_quick_exit(at_quick_exit_handler);
}
