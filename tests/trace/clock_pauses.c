/* The tracer's event clock (src/record/trace/event_clock.h) around a
 * thread's pauses. A thread whose events come close together reads the
 * clock once per 16 events; after a pause, up to 15 of its events may
 * carry the time from before it, except when the pause switched it out
 * (a sleep), when a signal came, or when the event allocates 64 KiB or
 * more.
 *
 * First a warm-up (the tracer's writer thread starts and, at its first
 * sleep, sees the kernel clear its rseq word), then four kinds of trials,
 * 16 of each (k = 0..15: bursts of different lengths, so that the pause
 * falls at every point of the 16-event cycle):
 *   burst: 40 + k malloc(24)/free pairs;
 *   mark:  malloc(MODE + k), freed, with MODE 1000 spin, 2000 sleep,
 *          3000 signal, 4000 big;
 *   pause: spin 0.5 ms without a system call (spin, big), nanosleep 1 ms
 *          (sleep), or raise(SIGUSR1), whose handler returns, then spin
 *          0.5 ms (signal);
 *   after: big only: malloc(1 MiB + k); then 20 blocks of MODE + 500 + k
 *          bytes, all allocated, then all freed.
 * Then a marker: 60 pairs of malloc(24)/free, a spin of 0.5 ms, the marker
 * "after-spin" (heaphook/heaphook.h), 20 blocks of 5500 bytes allocated and freed:
 * they come after the marker in time.
 * Last, a forked child makes 100 pairs of malloc(77)/free at once and
 * exits: its trace's times count from its own start.
 * Prints "rseq usable" when glibc registered an rseq area for the thread
 * and the kernel cleared its rseq_cs word at each of 5 sleeps that woke on
 * the processor they slept on (as the tracer's own check wants), else
 * "rseq unusable". tests/trace/check.sh clock_pauses reads the times. */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/rseq.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "heaphook/heaphook.h"

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t); /* the vDSO: no system call */
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static void spin_ms(double ms) {
  double t0 = now_ms();
  while (now_ms() - t0 < ms) {
  }
}

static void sleep_ms(long ms) {
  struct timespec t = {0, ms * 1000000L};
  nanosleep(&t, NULL);
}

static void burst(size_t size, int pairs) {
  for (int i = 0; i < pairs; i++) {
    volatile char *p = malloc(size);
    if (p == NULL) exit(1);
    p[0] = 1;
    free((void *)p);
  }
}

static void on_usr1(int sig) { (void)sig; }

/* The same check as the tracer's, with a descriptor of our own. */
static const uint32_t signed_abort[2] __attribute__((aligned(8))) = {RSEQ_SIG, 0};
static const struct rseq_cs mine = {.version = 0,
                                    .flags = 0,
                                    .start_ip = (uint64_t)(uintptr_t)&signed_abort[1],
                                    .post_commit_offset = 0,
                                    .abort_ip = (uint64_t)(uintptr_t)&signed_abort[1]};

static int rseq_usable(void) {
  if (__rseq_size == 0) return 0;
  volatile struct rseq *area = (struct rseq *)((char *)__builtin_thread_pointer() + __rseq_offset);
  if ((int32_t)area->cpu_id < 0) return 0;
  for (int same = 0, tries = 0; same < 5; tries++) {
    if (tries == 50) return 0;
    uint32_t cpu = area->cpu_id;
    area->rseq_cs = (uintptr_t)&mine;
    sleep_ms(1);
    int cleared = area->rseq_cs == 0;
    area->rseq_cs = 0;
    if (area->cpu_id != cpu) continue;
    if (!cleared) return 0;
    same++;
  }
  return 1;
}

int main(void) {
  printf("rseq %s\n", rseq_usable() ? "usable" : "unusable");
  fflush(stdout);
  signal(SIGUSR1, on_usr1);
  burst(16, 60000); /* more than a buffer: the writer thread starts */
  sleep_ms(250);    /* ... and sleeps: ~12 times, the tracer wants 3 */
  for (int mode = 1; mode <= 4; mode++) {
    for (int k = 0; k < 16; k++) {
      size_t base = (size_t)mode * 1000;
      burst(24, 40 + k);
      free(malloc(base + (size_t)k));
      if (mode == 2) {
        sleep_ms(1);
      } else {
        if (mode == 3) raise(SIGUSR1);
        spin_ms(0.5);
      }
      if (mode == 4) free(malloc((1u << 20) + (size_t)k));
      void *kept[20];
      for (int i = 0; i < 20; i++)
        if ((kept[i] = malloc(base + 500 + (size_t)k)) == NULL) return 1;
      for (int i = 0; i < 20; i++) free(kept[i]);
    }
  }
  burst(24, 60);
  spin_ms(0.5);
  hh_marker("after-spin");
  void *kept[20];
  for (int i = 0; i < 20; i++)
    if ((kept[i] = malloc(5500)) == NULL) return 1;
  for (int i = 0; i < 20; i++) free(kept[i]);
  pid_t child = fork();
  if (child == 0) {
    burst(77, 100);
    _exit(0);
  }
  int status;
  return child > 0 && waitpid(child, &status, 0) == child && status == 0 ? 0 : 1;
}
