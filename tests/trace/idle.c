/* Allocates enough for the tracer to start its writer thread (a few
 * hundred thousand events), then sits 300 ms without allocating between two
 * markers, then exits: RSS must still be sampled during the quiet part. */
#include <stdlib.h>
#include <time.h>

#include "heaphook/heaphook.h"

static void *volatile sink;

int main(void) {
  for (int i = 0; i < 200000; i++) {
    sink = malloc(64 + (size_t)(i % 512));
    free(sink);
  }
  hh_marker("idle-start");
  struct timespec t = {0, 300 * 1000 * 1000};
  while (nanosleep(&t, &t) != 0) {
  }
  hh_marker("idle-end");
  return 0;
}
