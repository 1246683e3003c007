/* The tracer's clock: rdtsc where the TSC is invariant (cpuid
 * 0x80000007 EDX bit 8: constant rate, ticking in every C-state), else
 * CLOCK_MONOTONIC in nanoseconds. The TSC rate is calibrated against
 * CLOCK_MONOTONIC between the start and the first chunk, at least 2 ms
 * apart; the header, written at the start, holds an estimate until then. */
#include <sched.h>
#include <time.h>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include "internal.h"

bool hh__tr_use_tsc;
uint64_t hh__tr_start_ticks;
uint64_t hh__tr_start_wall_ns;
unsigned hh__tr_tick_shift;

/* The first start: the calibration's reference pair (kept across fork). */
static uint64_t cal_ticks, cal_mono_ns;
static uint64_t tps; /* once calibrated */

static uint64_t ns_of(clockid_t id) {
  struct timespec ts;
  clock_gettime(id, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t hh__tr_ticks_slow(void) { return ns_of(CLOCK_MONOTONIC); }

static bool tsc_invariant(void) {
#if defined(__x86_64__)
  unsigned a, b, c, d;
  if (!__get_cpuid(0x80000000u, &a, &b, &c, &d) || a < 0x80000007u) return false;
  __get_cpuid(0x80000007u, &a, &b, &c, &d);
  return (d >> 8) & 1;
#else
  return false;
#endif
}

void hh__tr_clock_start(void) {
  if (cal_mono_ns == 0) {
    hh__tr_use_tsc = tsc_invariant();
    /* 4096 TSC ticks per trace tick (1-2 us on TSCs of 2-4 GHz; 1.6 us at
     * 2.6 GHz), 512 ns with the fallback clock: fine enough for a timeline
     * (heaptrack stamps its events every 10 ms), coarse enough that most
     * time deltas between a thread's events are 0 and cost next to nothing
     * once compressed. 256 TSC ticks (~100 ns) until 2026-11-24 cost the
     * churn benchmark 0.14 byte per event more, real programs' traces
     * 13-17% more. Cross-thread order within a tick: the merge puts frees
     * first, and the analyses repair the hand-offs the other way round
     * (src/trace/handoff.h; docs/trace-format.md, "Clock"). */
    hh__tr_tick_shift = hh__tr_use_tsc ? 12 : 9;
    cal_mono_ns = ns_of(CLOCK_MONOTONIC);
    cal_ticks = hh__tr_ticks();
  }
  hh__tr_start_wall_ns = ns_of(CLOCK_REALTIME);
  hh__tr_start_ticks = hh__tr_ticks() >> hh__tr_tick_shift;
}

uint64_t hh__tr_ticks_per_second_now(bool *exact) {
  *exact = !hh__tr_use_tsc || tps != 0;
  if (*exact) return hh__tr_ticks_per_second();
  uint64_t mono = ns_of(CLOCK_MONOTONIC), ticks = hh__tr_ticks();
  if (mono <= cal_mono_ns || ticks <= cal_ticks) return 1;
  return (uint64_t)((unsigned __int128)(ticks - cal_ticks) * 1000000000u / (mono - cal_mono_ns)) >>
         hh__tr_tick_shift;
}

uint64_t hh__tr_ticks_per_second(void) {
  if (!hh__tr_use_tsc) return 1000000000u >> hh__tr_tick_shift; /* exact: 10^9 = 2^9 * 1953125 */
  if (tps != 0) return tps >> hh__tr_tick_shift;
  uint64_t mono, ticks;
  for (;;) {
    mono = ns_of(CLOCK_MONOTONIC);
    ticks = hh__tr_ticks();
    if (mono - cal_mono_ns >= 2000000u) break;
    sched_yield();
  }
  tps = (uint64_t)((unsigned __int128)(ticks - cal_ticks) * 1000000000u / (mono - cal_mono_ns));
  return tps >> hh__tr_tick_shift;
}
