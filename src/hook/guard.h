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
 * "Sampled mode's per-call tests"). */
#ifndef HH_HOOK_GUARD_H
#define HH_HOOK_GUARD_H

#include <stdatomic.h>
#include <stdbool.h>

#include "sample.h"

extern __thread bool hh__in_hook __attribute__((tls_model("initial-exec")));

/* Sets the guard; returns whether it was set already (pass it to
 * hh__guard_leave). The guard is set before the countdown reads 0 and
 * cleared after it is given back (the fences keep the compiler to that
 * order), so a signal handler on this thread that allocates in between
 * finds the guard set, or a countdown that it may use. */
static inline bool hh__guard_enter(void) {
  bool was = hh__in_hook;
  if (!was) {
    hh__in_hook = true;
    atomic_signal_fence(memory_order_seq_cst);
    hh__sample_held = hh__sample_left;
    hh__sample_left = 0;
  }
  return was;
}

/* Clears the guard unless it was set before the matching hh__guard_enter. */
static inline void hh__guard_leave(bool was) {
  if (!was) {
    hh__sample_left = hh__sample_held;
    atomic_signal_fence(memory_order_seq_cst);
    hh__in_hook = false;
  }
}

#endif
