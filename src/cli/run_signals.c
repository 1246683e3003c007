/* Passing signals on to the program of `heaphook run` (run_signals.h). */
#define _GNU_SOURCE
#include "run_signals.h"

#include <errno.h>
#include <signal.h>
#include <stddef.h>

static const int passed[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};
#define N (sizeof passed / sizeof passed[0])

static struct sigaction old[N];
static sigset_t old_mask;
static volatile sig_atomic_t child;

static void pass_on(int sig, siginfo_t *info, void *context) {
  (void)context;
  int saved = errno;
  /* SI_KERNEL: the terminal's, which the program got too. One a process
   * sent to the whole group (timeout's kill(0, sig), kill -- -PGID) reached
   * the program as well, and reaches it twice: it cannot be told from one
   * sent to heaphook alone (a shell's kill $!, from the same group), which
   * must be passed on. */
  if (info->si_code != SI_KERNEL && child > 0) kill((pid_t)child, sig);
  errno = saved;
}

void hh_run_signals_hold(void) {
  sigset_t set;
  sigemptyset(&set);
  for (size_t i = 0; i < N; i++) sigaddset(&set, passed[i]);
  sigprocmask(SIG_BLOCK, &set, &old_mask);
  for (size_t i = 0; i < N; i++) sigaction(passed[i], NULL, &old[i]);
}

void hh_run_signals_child(void) { sigprocmask(SIG_SETMASK, &old_mask, NULL); }

void hh_run_signals_forward(pid_t pid) {
  child = pid;
  struct sigaction sa = {.sa_sigaction = pass_on, .sa_flags = SA_SIGINFO | SA_RESTART};
  sigemptyset(&sa.sa_mask);
  /* one ignored when heaphook started (nohup, a background job's SIGINT)
   * stays so: the program inherits that too */
  for (size_t i = 0; i < N; i++)
    if (old[i].sa_handler != SIG_IGN) sigaction(passed[i], &sa, NULL);
  sigprocmask(SIG_SETMASK, &old_mask, NULL);
}

void hh_run_signals_restore(void) {
  for (size_t i = 0; i < N; i++) sigaction(passed[i], &old[i], NULL);
  child = 0;
}
