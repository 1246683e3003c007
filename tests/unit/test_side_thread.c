/* Unit tests of the heaphook command's side thread (src/cli/side_thread.h):
 * it is waited for while it runs, left to end alone while it gets no
 * processor time, and whatever it holds is freed once, by whoever is last. */
#define _GNU_SOURCE
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "side_thread.h"

typedef struct work {
  int release[2];     /* a pipe: blocked() waits for a byte */
  atomic_int started; /* the thread's name and nice were looked at */
  char name[16];
  int nice;
  pid_t tid;
  atomic_int ended;            /* past_the_stop() worked to its end */
  atomic_int *freed_elsewhere; /* free_work calls (by the thread or the test) */
} work;

static void look_at_self(work *w) {
  pthread_getname_np(pthread_self(), w->name, sizeof w->name);
  w->tid = gettid();
  w->nice = getpriority(PRIO_PROCESS, (id_t)w->tid);
  atomic_store(&w->started, 1);
}

static uint64_t thread_cpu_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* Works on for 30 ms of processor time after the stop request, as a
 * module's debug information being read does (it cannot be interrupted). */
static void past_the_stop(void *arg, const atomic_bool *stop) {
  work *w = arg;
  look_at_self(w);
  while (!atomic_load(stop)) {
  }
  uint64_t until = thread_cpu_ns() + 30 * 1000000u;
  while (thread_cpu_ns() < until) {
  }
  atomic_store(&w->ended, 1);
}

/* Waits for a byte on the pipe, stop or not: the thread uses no
 * processor time, as on a machine whose cores are all busy. */
static void blocked(void *arg, const atomic_bool *stop) {
  (void)stop;
  work *w = arg;
  look_at_self(w);
  char c;
  while (read(w->release[0], &c, 1) < 0) {
  }
}

static void free_work(void *arg) {
  work *w = arg;
  atomic_fetch_add(w->freed_elsewhere, 1);
  close(w->release[0]);
  close(w->release[1]);
  free(w);
}

static work *new_work(atomic_int *freed) {
  work *w = calloc(1, sizeof *w);
  assert_non_null(w);
  assert_int_equal(pipe(w->release), 0);
  w->freed_elsewhere = freed;
  return w;
}

/* Steps of one second: even on a busy machine the thread, at nice 10, gets
 * a quarter of the first (250 ms of processor time) or ends within it
 * (30 ms). */
static void waits_for_a_thread_that_runs(void **state) {
  (void)state;
  atomic_int freed = 0;
  work *w = new_work(&freed);
  hh_side *s = hh_side_start("hh-test-side", past_the_stop, free_work, w);
  assert_non_null(s);
  while (!atomic_load(&w->started)) usleep(1000);
  assert_string_equal(w->name, "hh-test-side");
  assert_int_equal(w->nice, 10);
  /* It ends after the stop request: waited for, and the caller has it
   * back, unfreed. */
  assert_true(hh_side_end(s, 1000));
  assert_int_equal(atomic_load(&w->ended), 1);
  assert_int_equal(atomic_load(&freed), 0);
  free_work(w);
  assert_int_equal(atomic_load(&freed), 1);
}

static void takes_back_what_a_thread_that_ended_held(void **state) {
  (void)state;
  atomic_int freed = 0;
  work *w = new_work(&freed);
  assert_int_equal(write(w->release[1], "x", 1), 1);
  hh_side *s = hh_side_start("hh-test-side", blocked, free_work, w);
  assert_non_null(s);
  while (!atomic_load(&w->started)) usleep(1000);
  /* Gone from the kernel's list of the process's threads: ended, though
   * not joined. It gets no processor time any more, and is not left. */
  char task[64];
  snprintf(task, sizeof task, "/proc/self/task/%d", (int)w->tid);
  while (access(task, F_OK) == 0) usleep(1000);
  assert_true(hh_side_end(s, 20));
  assert_int_equal(atomic_load(&freed), 0);
  free_work(w);
}

static void leaves_a_thread_that_gets_no_time(void **state) {
  (void)state;
  atomic_int freed = 0;
  work *w = new_work(&freed);
  int release = dup(w->release[1]);
  hh_side *s = hh_side_start("hh-test-side", blocked, free_work, w);
  assert_non_null(s);
  while (!atomic_load(&w->started)) usleep(1000);
  /* Blocked, it gets no processor time: left after one look (it used to be
   * waited for until it ended, here never). */
  assert_false(hh_side_end(s, 20));
  assert_int_equal(atomic_load(&freed), 0);
  /* counted while it runs, so that main ends without exit handlers */
  assert_int_equal(hh_side_left_running(), 1);
  /* Let go, it frees its work itself, once. */
  assert_int_equal(write(release, "x", 1), 1);
  for (int i = 0; i < 5000 && hh_side_left_running() != 0; i++) usleep(1000);
  assert_int_equal(atomic_load(&freed), 1);
  assert_int_equal(hh_side_left_running(), 0);
  close(release);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(waits_for_a_thread_that_runs),
      cmocka_unit_test(takes_back_what_a_thread_that_ended_held),
      cmocka_unit_test(leaves_a_thread_that_gets_no_time),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
