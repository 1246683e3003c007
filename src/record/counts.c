/* The counts recorder: how many times each hooked function was called.
 *
 * Totals are process-wide relaxed atomics, printed to stderr at exit; each
 * thread also keeps its own counts (initial-exec TLS, no atomics) so that a
 * program can read exactly what its own calls did (hh_thread_counts). */
#include <stdatomic.h>
#include <stdbool.h>
#include <unistd.h>

#include "base/log.h"
#include "counts.h"
#include "recorder.h"

static _Atomic unsigned long long totals[HH_FN_COUNT];
static __thread unsigned long long mine[HH_FN_COUNT] __attribute__((tls_model("initial-exec")));
static atomic_bool active;

static int counts_start(void) {
  atomic_store(&active, true);
  return 0;
}

static void counts_on_call(hh_fn fn) {
  atomic_fetch_add_explicit(&totals[fn], 1, memory_order_relaxed);
  mine[fn]++;
}

static void counts_stop(int fd) {
  atomic_store(&active, false);
  hh__dprint(fd, "heaphook: calls by function (pid %d)\n", (int)getpid());
  for (int fn = 0; fn < HH_FN_COUNT; fn++) {
    hh__dprint(fd, "  %-20s %12llu\n", hh__fn_name((hh_fn)fn),
               atomic_load_explicit(&totals[fn], memory_order_relaxed));
  }
}

int hh__counts_thread(unsigned long long *out, int n) {
  if (!atomic_load(&active)) return -1;
  int count = n < HH_FN_COUNT ? n : HH_FN_COUNT;
  for (int i = 0; i < count; i++) out[i] = mine[i];
  return count;
}

const hh_recorder hh__counts_recorder = {
    .name = "counts",
    .summary = "count the calls of each malloc-family function; print the counts at exit",
    .start = counts_start,
    .on_call = counts_on_call,
    .stop = counts_stop,
    .reports = true,
};
