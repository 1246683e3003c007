/* A real-time thread (SCHED_FIFO) and normal ones on one core, all
 * allocating, as in a ROS 2 program pinned to a core:
 *   hh_trace_realtime shared|burst
 *   shared  the real-time thread: 2,000 rounds of 1,000 malloc/free in
 *           rt_shared(), 200 us of sleep between them (a control loop),
 *           while a normal thread allocates without pause in normal_loop():
 *           the real-time thread wakes up while the normal one holds what
 *           they share (with a small period: the trace file, which each
 *           thread writes itself in sampled mode; the sampler's lock until
 *           2026-11-24)
 *   burst   the real-time thread: 3 rounds of 1,000,000 malloc/free in
 *           rt_burst(): its buffers fill faster than the writer thread,
 *           on the same core, can take them
 * The real-time thread starts once the normal one has allocated. heaphook
 * used to wait for the other thread by yielding only, which never
 * lets a normal thread run on a real-time thread's core: the program hung
 * (both ways). Prints what each thread allocated; exit status 77 when this
 * process may not use SCHED_FIFO (no CAP_SYS_NICE nor RLIMIT_RTPRIO). */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static atomic_bool stop;
static atomic_long normal_allocs;

__attribute__((noinline)) static void rt_shared(void) {
  for (int i = 0; i < 1000; i++) free(malloc(16 + i % 300));
}
__attribute__((noinline)) static void rt_burst(void) {
  for (int i = 0; i < 1000000; i++) free(malloc(16 + i % 300));
}
__attribute__((noinline)) static void normal_loop(void) {
  while (!atomic_load(&stop)) {
    for (int i = 0; i < 100; i++) free(malloc(24 + i % 200));
    normal_allocs += 100;
  }
}

static void *normal_main(void *arg) {
  (void)arg;
  normal_loop();
  return NULL;
}

static void *rt_main(void *arg) {
  /* (sleeping: the normal thread gets the core) */
  while (atomic_load(&normal_allocs) == 0) {
    struct timespec t = {0, 1000 * 1000};
    nanosleep(&t, NULL);
  }
  if (strcmp(arg, "shared") == 0) {
    for (int round = 0; round < 2000; round++) {
      rt_shared();
      struct timespec t = {0, 200 * 1000};
      nanosleep(&t, NULL);
    }
  } else {
    for (int round = 0; round < 3; round++) rt_burst();
  }
  return NULL;
}

int main(int argc, char **argv) {
  if (argc != 2 || (strcmp(argv[1], "shared") != 0 && strcmp(argv[1], "burst") != 0)) {
    fprintf(stderr, "usage: hh_trace_realtime shared|burst\n");
    return 2;
  }
  /* One core for every thread, heaphook's writer thread included (threads
   * inherit it). */
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(sched_getcpu() < 0 ? 0 : sched_getcpu(), &one);
  if (sched_setaffinity(0, sizeof one, &one) != 0) {
    perror("sched_setaffinity");
    return 1;
  }
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setinheritsched(&attr, PTHREAD_EXPLICIT_SCHED);
  pthread_attr_setschedpolicy(&attr, SCHED_FIFO);
  struct sched_param prio = {.sched_priority = 10};
  pthread_attr_setschedparam(&attr, &prio);
  pthread_t normal, rt;
  if (pthread_create(&normal, NULL, normal_main, NULL) != 0) return 1;
  int rc = pthread_create(&rt, &attr, rt_main, argv[1]);
  if (rc == EPERM) {
    printf("SCHED_FIFO not permitted\n");
    atomic_store(&stop, true);
    pthread_join(normal, NULL);
    return 77;
  }
  if (rc != 0) {
    fprintf(stderr, "pthread_create (SCHED_FIFO): %s\n", strerror(rc));
    return 1;
  }
  pthread_join(rt, NULL);
  atomic_store(&stop, true);
  pthread_join(normal, NULL);
  printf("real-time thread done; normal thread %s\n", normal_allocs > 0 ? "allocated" : "did not allocate");
  return 0;
}
