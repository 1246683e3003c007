/* The hook's sampler (see sample.h). */
#include "sample.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>
#include <unistd.h>

#include "base/handlers.h"

#define IE __attribute__((tls_model("initial-exec")))

__thread uint64_t hh__sample_left IE;

static uint64_t period;
static __thread uint64_t rng IE; /* xorshift state; 0: not seeded */
static uint64_t seed_base;
static _Atomic uint64_t seed_next;

/* ---- the countdown ---------------------------------------------------------- */

static uint64_t splitmix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

static uint64_t rng_next(void) {
  uint64_t x = rng;
  if (x == 0) x = splitmix(seed_base + atomic_fetch_add(&seed_next, 1) + (uintptr_t)&rng) | 1;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  rng = x;
  return x * 0x2545F4914F6CDD1Dull;
}

/* Bytes until the next sample: exponential with mean period. */
static uint64_t draw(void) {
  double u = ((double)(rng_next() >> 11) + 1.0) * (1.0 / 9007199254740992.0); /* (0, 1] */
  double v = -log(u) * (double)period;
  return v >= 9e18 ? (uint64_t)9e18 : (uint64_t)v + 1;
}

static void reseed(void) {
  struct timespec t = {0, 0};
  clock_gettime(CLOCK_MONOTONIC, &t);
  seed_base = splitmix((uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec) ^ ((uint64_t)getpid() << 32);
}

void hh__sampler_start(uint64_t bytes) {
  period = bytes;
  reseed();
}

uint64_t hh__sample_take(size_t size) {
  int saved = errno;
  if (hh__sample_left == 0) hh__sample_left = draw(); /* this thread's first */
  uint64_t weight = 0;
  if (size < hh__sample_left) {
    hh__sample_left -= size;
  } else {
    hh__sample_left = draw();
    /* P(sampled) = 1 - exp(-size / period); the sample stands for size / P. */
    double p = -expm1(-(double)size / (double)period);
    double w = p > 0 ? (double)size / p : (double)period;
    weight = w >= 1.8e19 ? UINT64_MAX : (uint64_t)(w + 0.5);
    if (weight == 0) weight = 1;
  }
  errno = saved;
  return weight;
}

/* ---- fork ----------------------------------------------------------------------
 * In the child, the thread that forked draws a fresh countdown from a fresh
 * seed, so that parent and child do not sample the same allocations (the
 * child's other threads are gone). */
static void at_child(void) {
  if (period == 0) return;
  reseed();
  rng = 0;
  hh__sample_left = 0;
}

void hh__sampler_atfork(void) {
  static bool once;
  if (once) return;
  once = true;
  hh__atfork(NULL, NULL, at_child);
}
