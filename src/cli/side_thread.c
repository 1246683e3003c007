/* A thread beside the caller's (side_thread.h). */
#define _GNU_SOURCE /* gettid, pthread_timedjoin_np, pthread_setname_np */
#include "side_thread.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

/* Who holds s: both while the thread runs, then the one that did not
 * leave it (the thread's last touch of s is its exchange of state). */
enum { RUNNING, DONE, LEFT };

struct hh_side {
  pthread_t thread;
  hh_side_run_fn run;
  hh_side_free_fn free_arg;
  void *arg;
  char name[16];
  atomic_bool stop;
  atomic_int state;
};

/* Threads left to end alone that have not ended. */
static atomic_int left_running;

int hh_side_left_running(void) { return atomic_load(&left_running); }

static void *side_main(void *p) {
  hh_side *s = p;
  pthread_setname_np(pthread_self(), s->name);
  /* Nice 10, not SCHED_IDLE: a thread at SCHED_IDLE on a busy machine
   * took seconds even to die at the program's exit, holding up its exit
   * status; an unprivileged thread cannot leave SCHED_IDLE again. */
  setpriority(PRIO_PROCESS, (id_t)gettid(), 10);
  s->run(s->arg, &s->stop);
  if (atomic_exchange(&s->state, DONE) == LEFT) {
    s->free_arg(s->arg);
    free(s);
    atomic_fetch_sub(&left_running, 1);
  }
  return NULL;
}

hh_side *hh_side_start(const char *name, hh_side_run_fn run, hh_side_free_fn free_arg, void *arg) {
  hh_side *s = calloc(1, sizeof *s);
  if (!s) return NULL;
  *s = (hh_side){.run = run, .free_arg = free_arg, .arg = arg};
  snprintf(s->name, sizeof s->name, "%s", name);
  if (pthread_create(&s->thread, NULL, side_main, s) != 0) {
    free(s);
    return NULL;
  }
  return s;
}

static uint64_t cpu_ns(clockid_t clock) {
  struct timespec t;
  if (clock_gettime(clock, &t) != 0) return UINT64_MAX;
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

bool hh_side_end(hh_side *s, unsigned step_ms) {
  atomic_store(&s->stop, true);
  const uint64_t step = (uint64_t)step_ms * 1000000u;
  clockid_t clock;
  uint64_t used = pthread_getcpuclockid(s->thread, &clock) == 0 ? cpu_ns(clock) : UINT64_MAX;
  for (;;) {
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += (time_t)(step / 1000000000u);
    until.tv_nsec += (long)(step % 1000000000u);
    if (until.tv_nsec >= 1000000000) {
      until.tv_sec++;
      until.tv_nsec -= 1000000000;
    }
    if (pthread_timedjoin_np(s->thread, NULL, &until) == 0) {
      free(s);
      return true;
    }
    uint64_t now = used == UINT64_MAX ? UINT64_MAX : cpu_ns(clock);
    if (now == UINT64_MAX || now - used < step / 4) break;
    used = now;
  }
  pthread_detach(s->thread);
  atomic_fetch_add(&left_running, 1); /* (before the thread can see LEFT) */
  if (atomic_exchange(&s->state, LEFT) == RUNNING) return false;
  atomic_fetch_sub(&left_running, 1);
  free(s); /* it ended just now, and touches s no more */
  return true;
}
