/* The time of a thread's events: the clock read once per
 * HH_TR_CLOCK_EVERY events while the thread's events come close together.
 *
 * An rdtsc in the event path was a quarter of full mode's time on an
 * Intel Xeon (docs/benchmarks.md, "Full mode on the Intel machine: the
 * clock"). A thread whose events come less than HH_TR_CLOCK_DENSE_SHIFT's
 * fraction of a trace tick apart on average (1/16: ~100 ns with the TSC,
 * 32 ns with the CLOCK_MONOTONIC fallback, which then hardly ever skips)
 * reads the clock at one event and gives the next HH_TR_CLOCK_EVERY - 1
 * that time (or a later one, below), unless
 *  - the thread was switched out, migrated or signalled since: the read
 *    (while the events come close together) arms the thread's rseq area
 *    with a descriptor of ours (its rseq_cs word), which the kernel clears
 *    at those moments (rseq(2); as 6.18 does: the check below), and a
 *    cleared word means "read";
 *  - the event allocates HH_TR_CLOCK_EXACT_SIZE bytes or more.
 * An event's time can then be early by at most the time its thread ran
 * without a switch since one of its 15 events before: a thread that
 * computes after a burst of allocations (or spends time in the kernel
 * without blocking: a large munmap, page faults) gives up to 15 events of
 * its next burst the burst's time before.
 *
 * Order across threads: each read's time is published in
 * hh__tr_clock_latest (a maximum: a compare-and-swap when it grows, at
 * most once per tick and thread), so the latest holds every time any
 * thread has given, and every event takes at least what it holds: an
 * event that comes after another thread's (it frees the block the other
 * allocated, or allocates the address it freed: the pointer went through
 * memory, so the load of hh__tr_clock_latest comes after) never gets an
 * earlier time. Ties stay ("Ties" in docs/trace-format.md).
 *
 * The skipping starts once the writer thread has seen the kernel clear
 * its own armed word across three of its sleeps that woke on the
 * processor they slept on (hh__tr_clock_check_*: full mode; sampled mode
 * has no writer and few events). Until then, after a sleep that left the
 * word armed, and in a thread glibc registered no rseq area for (glibc
 * before 2.35, glibc.pthread.rseq=0, a kernel without rseq), every event
 * reads the clock.
 *
 * Everything here runs inside malloc (record/recorder.h). */
#ifndef HH_RECORD_TRACE_EVENT_CLOCK_H
#define HH_RECORD_TRACE_EVENT_CLOCK_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/rseq.h>

#include "internal.h"

#define HH_TR_CLOCK_EVERY 16u
#define HH_TR_CLOCK_DENSE_SHIFT 4u
#define HH_TR_CLOCK_EXACT_SIZE (64u << 10)

typedef struct hh_tr_event_clock {
  volatile struct rseq *rseq; /* this thread's rseq area; NULL: none */
  uint64_t raw;               /* the last read, in clock units */
  uint64_t last;              /* the last time given, in trace ticks */
  unsigned left;              /* events that may still take `last` (0 when rseq is NULL) */
  unsigned granted;           /* `left` at the last read */
  bool was_close;             /* the last read found the events close together */
} hh_tr_event_clock;

/* The latest time given by any thread, on a cache line of its own (every
 * event loads it; it changes at most once per tick). */
typedef struct hh_tr_clock_latest {
  _Alignas(64) _Atomic uint64_t time;
  char rest_of_line[56];
} hh_tr_clock_latest;
extern hh_tr_clock_latest hh__tr_clock_latest;
/* True once the writer thread saw the kernel clear its armed rseq_cs word
 * three times, false again for good after a sleep that did not. */
extern atomic_bool hh__tr_clock_rseq_ok;
/* The descriptor the word holds while armed (never entered: its
 * critical section is empty). */
extern const struct rseq_cs hh__tr_clock_mark;

/* For the calling thread: its rseq area found, the rest emptied. Again in
 * a forked child (its times start again from 0). */
void hh__tr_event_clock_init(hh_tr_event_clock *c);
/* A read (the slow path of hh__tr_event_time). */
uint64_t hh__tr_event_clock_read(hh_tr_event_clock *c, uint64_t latest);
/* In a forked child: no time given yet. */
void hh__tr_event_clock_fork_child(void);

/* The clock read now, published as the latest time: for a record that
 * events of any thread coming after it must not precede (a marker). */
uint64_t hh__tr_clock_now_published(void);

/* The writer thread's check: arm its own word before it sleeps, look
 * after (slept: the wait timed out, so the writer was switched out). Three
 * clears on the processor it slept on set hh__tr_clock_rseq_ok; a sleep
 * without one clears it for good. */
void hh__tr_clock_check_arm(void);
void hh__tr_clock_check_look(bool slept);

/* The time of an event of this thread that allocates `size` bytes (0 for
 * a free). */
static inline uint64_t hh__tr_event_time(hh_tr_event_clock *c, uint64_t size) {
  /* After the program's loads (of the pointer it frees, say): x86 keeps
   * loads in order anyway, this keeps the compiler from moving it. */
  atomic_thread_fence(memory_order_acquire);
  uint64_t latest = atomic_load_explicit(&hh__tr_clock_latest.time, memory_order_relaxed);
  /* (left is 0 while c->rseq is NULL) */
  if (__builtin_expect(c->left != 0, 1) && size < HH_TR_CLOCK_EXACT_SIZE &&
      c->rseq->rseq_cs == (uintptr_t)&hh__tr_clock_mark) {
    c->left--;
    if (latest > c->last) c->last = latest;
    return c->last;
  }
  return hh__tr_event_clock_read(c, latest);
}

#endif
