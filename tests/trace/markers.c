/* Markers from several threads at once: main marks "start", four threads
 * each mark "t<i>-<j>" for j = 0..1999 with an allocation between two
 * markers, then main marks "end". Prints "markers done".
 *
 * A marker was timed before the lock of the process buffer it is written
 * to, so two threads' markers went into the trace in the order they took
 * the lock, now and then a later time first: the reader said "events came
 * too late to be put in time order" (1-11 in every run of this program on
 * 2 cores), and the markers' times went backwards in the file. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "heaphook/heaphook.h"

#define THREADS 4
#define MARKS 2000

static void *marking(void *arg) {
  long id = (long)arg;
  char name[32];
  for (int j = 0; j < MARKS; j++) {
    snprintf(name, sizeof name, "t%ld-%d", id, j);
    HH_MARKER(name);
    free(malloc(16 + (size_t)id));
  }
  return NULL;
}

int main(void) {
  HH_MARKER("start");
  pthread_t t[THREADS];
  for (long i = 0; i < THREADS; i++)
    if (pthread_create(&t[i], NULL, marking, (void *)i) != 0) return 1;
  for (int i = 0; i < THREADS; i++) pthread_join(t[i], NULL);
  HH_MARKER("end");
  printf("markers done\n");
  return 0;
}
