/* Whether the tracer holds the signals back at a new call stack
 * (base/cancel.h, hh__unwind_seen): argv[1] says what the program does
 * first, then between two getsid calls it allocates from 50 new call
 * stacks (leaf(), a frame of its own size each), and prints "gate done".
 * check.sh (signal_gate) counts under strace the system calls the tracer
 * makes to hold the signals back again after libunwind (SIG_BLOCK with no
 * old mask): one a new stack where they are held back, none elsewhere.
 *
 * Held back after any of these, each installing a handler for SIGUSR1 (or
 * for SIGINT) through one of heaphook's wrappers (src/hook/signals.c),
 * called by the name the program's own call binds to:
 *   sigaction __sigaction signal bsd_signal ssignal sysv_signal
 *   __sysv_signal sigset async (pthread_setcanceltype asynchronous)
 * Not after these (nothing a handler could unwind the thread from):
 *   none     nothing
 *   quiet    SIG_DFL, SIG_IGN and SIG_HOLD installed, sigaction queried,
 *            pthread_setcanceltype deferred
 *   faults   handlers of the signals a fault raises (never held back) and
 *            of SIGABRT (crash reporters': gcc's cc1) */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef int (*sigaction_fn)(int, const struct sigaction *, struct sigaction *);
typedef void (*handler_fn)(int);
typedef handler_fn (*signal_fn)(int, handler_fn);

static void on_signal(int sig) { (void)sig; }

/* The definition the program's call binds to: heaphook's when preloaded. */
static void *bound(const char *name) {
  void *fn = dlsym(RTLD_DEFAULT, name);
  if (fn == NULL) {
    fprintf(stderr, "signal_gate: no %s\n", name);
    exit(2);
  }
  return fn;
}

static void by_sigaction(const char *name, int sig, handler_fn h) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = h;
  if (((sigaction_fn)bound(name))(sig, &sa, NULL) != 0) exit(3);
}

static void by_signal(const char *name, int sig, handler_fn h) {
  if (((signal_fn)bound(name))(sig, h) == SIG_ERR) exit(3);
}

/* A block from a frame of k * 16 bytes more: a call stack of its own. */
__attribute__((noinline)) static void leaf(unsigned k) {
  volatile char pad[k * 16 + 1];
  pad[0] = 0;
  void *volatile p = malloc(100);
  free(p);
  (void)pad[0];
}

int main(int argc, char **argv) {
  const char *how = argc > 1 ? argv[1] : "";
  void *volatile warm = malloc(10); /* the thread's state, its first stacks */
  free(warm);
  if (strcmp(how, "sigaction") == 0 || strcmp(how, "__sigaction") == 0) {
    by_sigaction(how, SIGUSR1, on_signal);
  } else if (strcmp(how, "signal") == 0 || strcmp(how, "bsd_signal") == 0 || strcmp(how, "ssignal") == 0 ||
             strcmp(how, "sysv_signal") == 0 || strcmp(how, "__sysv_signal") == 0) {
    by_signal(how, SIGUSR1, on_signal);
  } else if (strcmp(how, "sigset") == 0) {
    by_signal(how, SIGINT, on_signal);
  } else if (strcmp(how, "async") == 0) {
    if (pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, NULL) != 0) return 3;
  } else if (strcmp(how, "quiet") == 0) {
    by_sigaction("sigaction", SIGUSR1, SIG_DFL);
    by_sigaction("sigaction", SIGUSR2, SIG_IGN);
    by_signal("signal", SIGINT, SIG_IGN);
    by_signal("sigset", SIGTERM, SIG_HOLD);
    struct sigaction old;
    if (sigaction(SIGUSR1, NULL, &old) != 0) return 3;
    if (pthread_setcanceltype(PTHREAD_CANCEL_DEFERRED, NULL) != 0) return 3;
  } else if (strcmp(how, "faults") == 0) {
    int faults[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP, SIGSYS};
    for (unsigned i = 0; i < sizeof faults / sizeof faults[0]; i++)
      by_sigaction("sigaction", faults[i], on_signal);
    by_signal("signal", SIGABRT, on_signal);
  } else if (strcmp(how, "none") != 0) {
    fprintf(
        stderr,
        "usage: signal_gate none|quiet|faults|sigaction|__sigaction|signal|bsd_signal|ssignal|sysv_signal|"
        "__sysv_signal|sigset|async\n");
    return 2;
  }
  getsid(0);
  for (unsigned k = 0; k < 50; k++) leaf(k);
  getsid(0);
  puts("gate done");
  return 0;
}
