/* Threads that go idle with events in their buffers.
 *   idle_kill [resume|small]
 * The main thread makes 200,000 events ("small": 2,000, too few to fill a
 * buffer, then 200 ms later 10 more: the tracer's writer thread then starts
 * by the clock, ~0.1 s into the run), then a worker makes 300 x
 * malloc(777) in worker_alloc and goes
 * idle, and so does the main thread after printing "idle". Without
 * "resume" both stay idle until killed (the test kills the process once
 * the worker's events are in the file: written by the tracer's writer as
 * provisional chunks). With "resume", after 2.5 s the worker makes 5 x
 * malloc(778) in worker_more and the program exits normally: every event
 * once in the trace, the provisional copies dropped. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void *volatile sink;
static int resume, small;

static void pause_ms(long ms) {
  struct timespec t = {ms / 1000, (ms % 1000) * 1000000};
  while (nanosleep(&t, &t) != 0) {
  }
}

__attribute__((noinline)) void worker_alloc(void) {
  for (int i = 0; i < 300; i++) sink = malloc(777);
}
__attribute__((noinline)) void worker_more(void) {
  for (int i = 0; i < 5; i++) sink = malloc(778);
}

static void *worker(void *arg) {
  (void)arg;
  worker_alloc();
  pause_ms(2500);
  if (resume) worker_more();
  return NULL;
}

int main(int argc, char **argv) {
  resume = argc > 1 && strcmp(argv[1], "resume") == 0;
  small = argc > 1 && strcmp(argv[1], "small") == 0;
  for (int i = 0; i < (small ? 2000 : 200000); i++) {
    sink = malloc(64 + (size_t)(i % 512));
    free(sink);
  }
  if (small) {
    pause_ms(200);
    for (int i = 0; i < 10; i++) {
      sink = malloc(64);
      free(sink);
    }
  }
  pthread_t t;
  if (pthread_create(&t, NULL, worker, NULL) != 0) return 1;
  printf("idle\n");
  fflush(stdout);
  if (!resume) pause_ms(60000);
  pthread_join(t, NULL);
  return 0;
}
