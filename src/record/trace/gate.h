/* A gate that one thread closes to the others around some work of theirs.
 *
 * Threads pass it around the work (enter ... leave). Closing it waits until
 * the work under way is done; from then on, until it opens again, others
 * wait at enter (or give up, with try_enter), while the thread that closed
 * it passes. The tracer has two: writing to the trace file while a thread
 * execs (writer.c) and calling into the dynamic linker and the unwinder
 * while a thread forks (stacks.c, procinfo.c).
 *
 * Two counters and sequentially consistent atomics: an entrant counts
 * itself inside before it looks at `closed`, the closer raises `closed`
 * before it waits for `inside` to drain, so one of the two always sees the
 * other. Inside malloc: futex and sched_yield only. */
#ifndef HH_RECORD_TRACE_GATE_H
#define HH_RECORD_TRACE_GATE_H

#include <linux/futex.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "base/backoff.h"

typedef struct hh_tr_gate {
  atomic_int closed; /* closers (normally 0 or 1) */
  atomic_int inside; /* threads past enter, not yet left */
} hh_tr_gate;

/* False (and not inside) when the gate is closed to this thread. */
static inline bool hh__tr_gate_try_enter(hh_tr_gate *g, bool closer) {
  atomic_fetch_add(&g->inside, 1);
  if (atomic_load(&g->closed) == 0 || closer) return true;
  atomic_fetch_sub(&g->inside, 1);
  return false;
}

/* closer: this thread is the one that closed it. */
static inline void hh__tr_gate_enter(hh_tr_gate *g, bool closer) {
  while (!hh__tr_gate_try_enter(g, closer)) {
    int c = atomic_load(&g->closed);
    struct timespec t = {0, 1000 * 1000};
    if (c != 0) syscall(SYS_futex, &g->closed, FUTEX_WAIT_PRIVATE, c, &t, NULL, 0);
  }
}

static inline void hh__tr_gate_leave(hh_tr_gate *g) { atomic_fetch_sub(&g->inside, 1); }

/* Returns once nobody but the caller (inside `self` times) is inside. */
static inline void hh__tr_gate_close(hh_tr_gate *g, int self) {
  atomic_fetch_add(&g->closed, 1);
  for (unsigned turns = 0; atomic_load(&g->inside) > self;) hh__backoff(&turns);
}

static inline void hh__tr_gate_open(hh_tr_gate *g) {
  atomic_fetch_sub(&g->closed, 1);
  syscall(SYS_futex, &g->closed, FUTEX_WAKE_PRIVATE, INT32_MAX, NULL, NULL, 0);
}

/* In a forked child: only the forking thread lives on, outside the gate. */
static inline void hh__tr_gate_reset(hh_tr_gate *g) {
  atomic_store(&g->closed, 0);
  atomic_store(&g->inside, 0);
}

#endif
