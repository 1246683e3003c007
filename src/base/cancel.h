/* heaphook's code never acts on a pthread_cancel of the program's.
 *
 * A thread the program cancels (deferred, the default) ends at its next
 * cancellation point: write, open, read, pread, close... heaphook calls
 * those inside malloc (a chunk written, /proc/self/statm read, libunwind's
 * memory check) while it holds its locks or state; a thread cancelled there
 * unwound with them held, and its exit handler, or every other thread,
 * then waited on them forever. So each such stretch runs with cancellation
 * disabled; a cancel that arrives meanwhile is acted on at the program's
 * next cancellation point, as if it had arrived a moment later. */
#ifndef HH_BASE_CANCEL_H
#define HH_BASE_CANCEL_H

#include <pthread.h>

static inline int hh__cancel_off(void) {
  int old = PTHREAD_CANCEL_ENABLE;
  pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old);
  return old;
}

static inline void hh__cancel_restore(int old) {
  int ignored;
  pthread_setcancelstate(old, &ignored);
}

#endif
