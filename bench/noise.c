/* hh_bench_noise: how often the machine takes the CPU away from a thread.
 *
 *   hh_bench_noise [--seconds S]
 *
 * Spins reading the TSC (rdtscp+lfence) for S seconds (default 2) and counts
 * the gaps between consecutive reads longer than 1 us and 10 us: interrupts,
 * preemption, hypervisor exits. Every timed call in hh_bench_latency is hit
 * by such a gap with a probability proportional to its duration, so these
 * rates set the floor under the p99.99 figures. No allocation at all.
 */
#include "workload.h"

#include <x86intrin.h>

static inline uint64_t tsc(void) {
  unsigned aux;
  uint64_t t = __rdtscp(&aux);
  _mm_lfence();
  return t;
}

int main(int argc, char **argv) {
  double seconds = 2;
  if (argc == 3 && !strcmp(argv[1], "--seconds"))
    seconds = atof(argv[2]);
  else if (argc != 1) {
    fprintf(stderr, "usage: %s [--seconds S]\n", argv[0]);
    return 2;
  }
  double w0 = hhb_now();
  uint64_t c0 = tsc();
  while (hhb_now() - w0 < 0.05) {
  }
  double ns_per_cycle = (hhb_now() - w0) * 1e9 / (double)(tsc() - c0);

  uint64_t g1 = (uint64_t)(1e3 / ns_per_cycle), g10 = (uint64_t)(1e4 / ns_per_cycle);
  uint64_t start = tsc(), end = start + (uint64_t)(seconds * 1e9 / ns_per_cycle), prev = start;
  unsigned long over1 = 0, over10 = 0;
  uint64_t lost = 0, longest = 0;
  while (prev < end) {
    uint64_t t = tsc(), d = t - prev;
    if (d > g1) {
      over1++;
      lost += d;
      if (d > g10) over10++;
      if (d > longest) longest = d;
    }
    prev = t;
  }
  double el = (double)(prev - start) * ns_per_cycle * 1e-9;
  printf("seconds=%.3f gaps_over1us_per_s=%.0f gaps_over10us_per_s=%.0f lost_pct=%.3f longest_gap_us=%.1f\n",
         el, over1 / el, over10 / el, 100.0 * (double)lost * ns_per_cycle * 1e-9 / el,
         (double)longest * ns_per_cycle * 1e-3);
  return 0;
}
