/* Waiting for another thread in code reachable from malloc (futex and
 * sched_yield only): the first turns yield, the later ones sleep 50 us.
 *
 * Yielding alone never lets a thread of the normal policy run on the core
 * of a thread of a real-time policy (SCHED_FIFO, SCHED_RR): the yield only
 * gives way to real-time threads of the same priority. A program's
 * real-time thread spun for good on the sampler's lock, held by a normal
 * thread it had preempted on its core, and on a full buffer that the
 * writer thread, on the same core, never got to take. A futex wait that
 * nothing wakes is a sleep that is not a cancellation point. */
#ifndef HH_BASE_BACKOFF_H
#define HH_BASE_BACKOFF_H

#include <errno.h>
#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define HH_BACKOFF_YIELDS 64u

/* One turn of a wait; *turns starts at 0 and counts the turns. */
static inline void hh__backoff(unsigned *turns) {
  if ((*turns)++ < HH_BACKOFF_YIELDS) {
    sched_yield();
    return;
  }
  int saved = errno, word = 0;
  struct timespec t = {0, 50 * 1000};
  syscall(SYS_futex, &word, FUTEX_WAIT_PRIVATE, 0, &t, NULL, 0);
  errno = saved;
}

#endif
