/* The time of a thread's events (event_clock.h): the slow path, the rseq
 * descriptor, and the writer thread's check that the kernel clears it. */
#include "event_clock.h"

#include <stddef.h>
#include <string.h>

/* glibc 2.35's; weak, so that they add no need of 2.35 to the library's
 * (which needs 2.34 for pthread_create and dlopen): every event reads the
 * clock where they are missing. */
#pragma weak __rseq_offset
#pragma weak __rseq_size

hh_tr_clock_latest hh__tr_clock_latest;
atomic_bool hh__tr_clock_rseq_ok;

/* The kernel checks, at each context switch of a thread whose rseq_cs word
 * is set, that the four bytes before the descriptor's abort_ip are the
 * signature glibc registered (RSEQ_SIG), and kills the process otherwise;
 * the start of the (empty) critical section is the same address. A copy
 * of the tracer in a plug-in allocator (which carries the hook) stays
 * idle and never arms a word with its own descriptor, which a dlclose
 * would unmap. */
static const uint32_t signed_abort[2] __attribute__((aligned(8))) = {RSEQ_SIG, 0};
const struct rseq_cs hh__tr_clock_mark = {
    .version = 0,
    .flags = 0,
    .start_ip = (uint64_t)(uintptr_t)&signed_abort[1],
    .post_commit_offset = 0,
    .abort_ip = (uint64_t)(uintptr_t)&signed_abort[1],
};

/* The calling thread's rseq area, or NULL when glibc registered none for
 * it (cpu_id is then negative: RSEQ_CPU_ID_UNINITIALIZED or
 * RSEQ_CPU_ID_REGISTRATION_FAILED). */
static struct rseq *this_thread_area(void) {
  if (&__rseq_size == NULL || &__rseq_offset == NULL || __rseq_size == 0) return NULL;
  struct rseq *area = (struct rseq *)((char *)__builtin_thread_pointer() + __rseq_offset);
  return (int32_t)area->cpu_id < 0 ? NULL : area;
}

void hh__tr_event_clock_init(hh_tr_event_clock *c) {
  memset(c, 0, sizeof *c);
  c->rseq = this_thread_area();
}

void hh__tr_event_clock_fork_child(void) { atomic_store(&hh__tr_clock_latest.time, 0); }

/* t made the latest time unless a later one is there; returns the latest. */
static uint64_t publish(uint64_t t, uint64_t latest) {
  while (t > latest && !atomic_compare_exchange_weak_explicit(&hh__tr_clock_latest.time, &latest, t,
                                                              memory_order_relaxed, memory_order_relaxed)) {
  }
  return latest > t ? latest : t;
}

uint64_t hh__tr_event_clock_read(hh_tr_event_clock *c, uint64_t latest) {
  /* Armed before the read (a switch between the two clears the word), and
   * only while the thread's events come close together (the last read
   * said so): a thread whose word is armed costs the kernel a look at our
   * descriptor at each of its context switches. Not once the program
   * unregistered glibc's area (cpu_id is then negative, and the kernel no
   * longer clears the word). */
  bool armed = c->was_close && c->rseq != NULL &&
               atomic_load_explicit(&hh__tr_clock_rseq_ok, memory_order_relaxed) &&
               (int32_t)c->rseq->cpu_id >= 0;
  if (armed) c->rseq->rseq_cs = (uintptr_t)&hh__tr_clock_mark;
  uint64_t raw = hh__tr_ticks();
  uint64_t t = (raw >> hh__tr_tick_shift) - hh__tr_start_ticks;
  /* Since the last read, (granted - left) + 1 gaps between events: close
   * together when they average under 1/16 tick. */
  uint64_t gaps = (uint64_t)(c->granted - c->left) + 1;
  bool together = raw - c->raw <= gaps << (hh__tr_tick_shift - HH_TR_CLOCK_DENSE_SHIFT);
  c->granted = c->left = armed && together ? HH_TR_CLOCK_EVERY - 1 : 0;
  c->was_close = together;
  c->raw = raw;
  /* Never before the thread's last time, which was published (a TSC of
   * another core a little behind, after a migration, changes nothing). */
  c->last = publish(t, latest);
  return c->last;
}

uint64_t hh__tr_clock_now_published(void) {
  return publish(hh__tr_now(), atomic_load_explicit(&hh__tr_clock_latest.time, memory_order_relaxed));
}

/* The writer's check. Linux 6.19 changed when the kernel clears the word
 * (not after a sleep in a system call that wakes on the same processor, by
 * the reports), so a clear counts only when the writer woke on the
 * processor it slept on, and a sleep that certainly happened (the wait
 * timed out) without a clear turns the skipping off for good. */
#define CLEARS_NEEDED 3
static unsigned clears_seen;
static bool never;
static uint32_t armed_cpu;

void hh__tr_clock_check_arm(void) {
  volatile struct rseq *area = never ? NULL : this_thread_area();
  if (area == NULL) return;
  armed_cpu = area->cpu_id;
  area->rseq_cs = (uintptr_t)&hh__tr_clock_mark;
}

void hh__tr_clock_check_look(bool slept) {
  volatile struct rseq *area = never ? NULL : this_thread_area();
  if (area == NULL) return;
  bool same_cpu = area->cpu_id == armed_cpu;
  if (area->rseq_cs == 0) { /* nothing but the kernel writes 0 there */
    if (same_cpu && ++clears_seen == CLEARS_NEEDED) atomic_store(&hh__tr_clock_rseq_ok, true);
  } else if (slept && same_cpu) {
    never = true;
    atomic_store(&hh__tr_clock_rseq_ok, false);
  }
}
