/* The per-thread recursion guard.
 *
 * Set while the hook runs its own code that may allocate (start-up, recorder
 * callbacks). An allocation made while it is set is served without being
 * recorded (or from the bootstrap arena during start-up), so nothing recurses.
 * initial-exec TLS: a dynamic-TLS access would itself call into malloc
 * through __tls_get_addr the first time a thread touches it.
 *
 * Set and cleared with hh__guard_enter and hh__guard_leave, which also park
 * the sampler's countdown (sample.h) while the guard is set: it then reads
 * 0, so the exported malloc's one test on the sampled path (size below the
 * countdown, entry.c) sends the guard's allocations into the hook, which
 * serves them uncounted, and the program's count goes on where it was.
 * Until late on 2026-11-24 that path tested the guard as well: one more
 * thread-local load and branch on every malloc (docs/benchmarks.md,
 * "Sampled mode's per-call tests").
 *
 * The parked countdown travels in the value hh__guard_enter returns, and
 * a countdown of 0 (no sampler, or none drawn yet) is left alone: a program
 * traced in full enters the guard once per allocation and once per free, and paid
 * ~2% of the churn's time for a thread-local copy made and given back each
 * time (bench/trace_ab.sh). A fork under the guard (none is known) leaves
 * the child the parent's countdown, drawn afresh from a fresh seed at its
 * next sample. */
#ifndef HH_HOOK_GUARD_H
#define HH_HOOK_GUARD_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "sample.h"

extern __thread bool hh__in_hook __attribute__((tls_model("initial-exec")));

/* What hh__guard_leave needs: whether the guard was set already, and the
 * countdown parked meanwhile. */
typedef struct hh_guard {
  bool was;
  uint64_t parked;
} hh_guard;

/* Sets the guard. It is set before the countdown reads 0 and cleared after
 * the countdown is given back (the fences keep the compiler to that
 * order), so a signal handler on this thread that allocates in between
 * finds the guard set, or a countdown that it may use. */
static inline hh_guard hh__guard_enter(void) {
  hh_guard g = {.was = hh__in_hook, .parked = 0};
  if (!g.was) {
    hh__in_hook = true;
    atomic_signal_fence(memory_order_seq_cst);
    g.parked = hh__sample_left;
    if (g.parked != 0) hh__sample_left = 0;
  }
  return g;
}

/* Clears the guard unless it was set before the matching hh__guard_enter. */
static inline void hh__guard_leave(hh_guard g) {
  if (!g.was) {
    if (g.parked != 0) hh__sample_left = g.parked;
    atomic_signal_fence(memory_order_seq_cst);
    hh__in_hook = false;
  }
}

#endif
