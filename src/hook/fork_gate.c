/* The gate between forks and the stop at exit (fork_gate.h). */
#include "fork_gate.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "base/backoff.h"
#include "base/handlers.h"

#define IE __attribute__((tls_model("initial-exec")))

static atomic_int passed; /* forks between the gate and their parent or child handler */
static atomic_bool closed;
static __thread bool t_closer IE;     /* this thread closed the gate */
static __thread unsigned t_passed IE; /* this thread's forks counted in passed (a signal
                                       * handler's fork inside its own: 2) */

/* Both sides store, then look at the other's (sequentially consistent):
 * a fork and a stop that come at once cannot both miss each other. */
static void at_prepare(void) {
  if (t_closer) return;
  for (unsigned turns = 0;;) {
    atomic_fetch_add(&passed, 1);
    if (!atomic_load(&closed)) {
      t_passed++;
      return;
    }
    atomic_fetch_sub(&passed, 1);
    while (atomic_load(&closed)) hh__backoff(&turns);
  }
}

static void at_parent(void) {
  if (t_passed == 0) return;
  t_passed--;
  atomic_fetch_sub(&passed, 1);
}

/* The child's only thread is this one: no fork is under way, and the
 * thread that closed the gate (if it did meanwhile) is not here. */
static void at_child(void) {
  t_passed = 0;
  t_closer = false;
  atomic_store(&passed, 0);
  atomic_store(&closed, false);
}

void hh__fork_gate_register(void) {
  static bool once;
  if (once) return;
  once = true;
  hh__atfork(at_prepare, at_parent, at_child);
}

static uint64_t now_ms(void) {
  struct timespec t = {0, 0};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000u + (uint64_t)t.tv_nsec / 1000000u;
}

/* A signal handler that interrupted this thread's own fork past the gate
 * (and calls exit) does not wait for that fork: the tracer then leaves
 * its locks alone, as before the gate (trace.signal_exit). Nor does it
 * wait for good: a signal handler that calls exit where it interrupted the
 * hook holding a lock (the TLSF allocator's) waits for a fork that waits
 * for that lock (4 of 20 runs of a program that forks in a loop while a
 * SIGALRM handler calls exit; no test here, the hang is by chance). After
 * HH_FORK_GATE_WAIT_MS the stop goes on as it did before the gate. */
void hh__fork_gate_close(void) {
  t_closer = true;
  atomic_store(&closed, true);
  int own = (int)t_passed;
  uint64_t until = 0;
  for (unsigned turns = 0; atomic_load(&passed) > own;) {
    hh__backoff(&turns);
    if (turns < HH_BACKOFF_YIELDS) continue;
    uint64_t now = now_ms();
    if (until == 0) until = now + HH_FORK_GATE_WAIT_MS;
    if (now >= until) break;
  }
}

void hh__fork_gate_open(void) {
  atomic_store(&closed, false);
  t_closer = false;
}
