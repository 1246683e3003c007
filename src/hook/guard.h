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
/* The canonical frame address of the function that set the guard: the
 * guard belongs to a call that is still running only when the caller's
 * frame lies above it (hh__guard_abandoned). */
extern __thread uintptr_t hh__guard_cfa __attribute__((tls_model("initial-exec")));

/* A thread whose signal handler interrupted the hook where the guard was
 * set and left by siglongjmp (programs with a timeout do) kept the guard
 * set for good: nothing it allocated afterwards was recorded, and its
 * exec or _exit left its buffered events, and with _exit the trace's end,
 * out (trace.signal_longjmp). So a guard found set is looked at where the
 * hook is entered: when the entering function's frame (cfa, its canonical
 * frame address) is not below the one that set it, that call is gone, as
 * a recursion from the hook or a handler on this stack is always below
 * it, and the guard is cleared (returns true). Not on an alternate signal
 * stack, which may lie anywhere: there the guard is believed. */
bool hh__guard_abandoned(uintptr_t cfa);

/* The call that set the guard is gone (a jump out of a signal handler
 * that interrupted it, jump.c, or hh__guard_abandoned): the guard is
 * cleared, and the tracer drops the event it may have been writing. */
/* False, with the guard left set, where the tracer cannot let the call go
 * (hh__trace_abandoned). */
bool hh__guard_release(void);

/* Whether the guard is set by a call still running (see above). */
static inline bool hh__guard_held(uintptr_t cfa) {
  return __builtin_expect(hh__in_hook, 0) && !hh__guard_abandoned(cfa);
}

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
    hh__guard_cfa = (uintptr_t)__builtin_dwarf_cfa();
    hh__in_hook = true;
    atomic_signal_fence(memory_order_seq_cst);
    g.parked = hh__sample_left;
    if (g.parked != 0) hh__sample_left = 0;
  }
  return g;
}

/* Clears a guard whose call is gone (hh__guard_release). The countdown
 * parked with it went with that call's frame: 0 draws a new one
 * (sample.h). */
static inline void hh__guard_drop(void) {
  atomic_signal_fence(memory_order_seq_cst);
  hh__in_hook = false;
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
