/* hh_bench_overhead: throughput of the churn workload, no per-call timers.
 *
 *   hh_bench_overhead [--iters N] [--warmup N] [--slots N] [--seed S]
 *
 * Fills the working set, runs --warmup untimed replace steps, then times
 * --iters replace steps (one free + one malloc each) with CLOCK_MONOTONIC
 * around the whole loop. Prints one line of key=value pairs; ns_per_op is per
 * call (a malloc or a free), the random numbers and the two writes into each
 * block included.
 */
#include "workload.h"

#include <sys/resource.h>

int main(int argc, char **argv) {
  hhb_churn_opts o = {
      .iters = 4000000, .warmup = 200000, .slots = HHB_SLOTS_DEFAULT, .seed = HHB_SEED_DEFAULT};
  for (int i = 1; i < argc; i++) {
    if (!hhb_churn_arg(argc, argv, &i, &o)) {
      fprintf(stderr, "usage: %s [--iters N] [--warmup N] [--slots N] [--seed S]\n", argv[0]);
      return 2;
    }
  }
  unsigned long long iters = o.iters, warmup = o.warmup, slots = o.slots, seed = o.seed;
  if (slots == 0) slots = 1;
  void **slot = hhb_map(slots * sizeof *slot);
  uint64_t rng = hhb_seed(seed, 0);
  unsigned cls;
  for (size_t i = 0; i < slots; i++) {
    size_t n = hhb_draw_size(&rng, &cls);
    slot[i] = malloc(n);
    if (!slot[i]) return 3;
    hhb_touch(slot[i], n);
  }
  for (unsigned long long i = 0; i < warmup; i++) {
    size_t k = hhb_next(&rng) % slots;
    free(slot[k]);
    size_t n = hhb_draw_size(&rng, &cls);
    slot[k] = malloc(n);
    if (!slot[k]) return 3;
    hhb_touch(slot[k], n);
  }

  struct rusage r0, r1;
  getrusage(RUSAGE_SELF, &r0);
  double t0 = hhb_now();
  for (unsigned long long i = 0; i < iters; i++) {
    size_t k = hhb_next(&rng) % slots;
    free(slot[k]);
    size_t n = hhb_draw_size(&rng, &cls);
    void *p = malloc(n);
    if (!p) return 3;
    hhb_touch(p, n);
    slot[k] = p;
  }
  double t1 = hhb_now();
  getrusage(RUSAGE_SELF, &r1);

  for (size_t i = 0; i < slots; i++) free(slot[i]);
  double calls = 2.0 * (double)iters;
  /* The loop's processor time too: on a machine shared with other work,
   * the wall time counts the waits for a processor (bench/sample_ab.sh,
   * METRIC=cpu_s). */
  double cpu =
      (double)(r1.ru_utime.tv_sec - r0.ru_utime.tv_sec) + (double)(r1.ru_stime.tv_sec - r0.ru_stime.tv_sec) +
      1e-6 * (double)(r1.ru_utime.tv_usec - r0.ru_utime.tv_usec + r1.ru_stime.tv_usec - r0.ru_stime.tv_usec);
  printf(
      "iters=%llu calls=%.0f wall_s=%.6f ns_per_op=%.3f ops_per_s=%.0f minflt=%ld malloc_from=%s "
      "cpu_s=%.6f\n",
      iters, calls, t1 - t0, (t1 - t0) * 1e9 / calls, calls / (t1 - t0), r1.ru_minflt - r0.ru_minflt,
      hhb_malloc_origin(), cpu);
  return 0;
}
