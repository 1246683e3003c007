/* Unit tests of the hook's sampler (src/hook/sample.c), linked directly
 * under ASan and UBSan: the countdown samples bytes as docs/trace-format.md
 * says (one sample per period bytes on average, the weights an unbiased
 * estimate of the bytes allocated). Which blocks are sampled is the hook's
 * (block.h), tested through the preload libraries. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "hook/sample.h"

/* period 64 KiB; allocations of 1..8191 bytes. The countdown is memoryless,
 * so each allocation is sampled independently, with probability
 * 1 - exp(-size / period). */
static void countdown_samples_bytes(void **state) {
  (void)state;
  double bytes = 0, weights = 0, expect = 0;
  size_t samples = 0, skipped = 0;
  uint64_t x = 88172645463325252ull;
  for (size_t i = 0; i < 4000000; i++) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    size_t size = 1 + x % 8191;
    bytes += (double)size;
    expect += -expm1(-(double)size / 65536); /* P(sampled): independent per allocation */
    /* The inline test first, as entry.c does; the sampler decides the rest. */
    if (hh__sample_skip(size)) {
      skipped++;
      continue;
    }
    uint64_t w = hh__sample_take(size);
    if (w == 0) continue;
    assert_true(w >= size);
    samples++;
    weights += (double)w;
  }
  assert_true(fabs((double)samples - expect) < 5 * sqrt(expect));
  assert_true(fabs(weights - bytes) < 0.05 * bytes);
  assert_true(skipped > 3000000); /* most allocations never leave the inline test */
}

/* A sampled allocation's weight is size / P, P = -expm1(-size / period),
 * rounded: the estimate docs/trace-format.md promises, which a cheaper way
 * of computing it (a series in size / period, tried on 2026-11-28:
 * docs/benchmarks.md, "Where a sample's time goes") must keep. A period of
 * 2^40 bytes makes the weights large enough (~1e12) that an error of 1e-12
 * of the weight shows: such a series with its x^6 term's coefficient
 * 1/30000 instead of 1/30240 is off by ~100, and this test failed. */
static void weights_are_size_over_probability(void **state) {
  (void)state;
  const double period = 1099511627776.0;
  hh__sampler_start((uint64_t)period);
  for (int step = 0; step < 4600; step++) {
    /* sizes from 1 byte to 2^44 (16 periods), 100 a doubling, then 200
     * around period / 8, where the series tried gave way to expm1 */
    size_t size = step < 4400
                      ? ((size_t)1 << (step / 100)) + (size_t)(step % 100) * ((size_t)1 << (step / 100)) / 100
                      : (size_t)(period / 8) - 100 + (size_t)(step - 4400);
    hh__sample_left = 1; /* the next allocation is sampled */
    uint64_t w = hh__sample_take(size);
    double expect = (double)size / -expm1(-(double)size / period);
    assert_true(fabs((double)w - expect) <= 0.5 + 1e-13 * expect);
  }
  hh__sampler_start(65536);
}

int main(void) {
  hh__sampler_start(65536);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(countdown_samples_bytes),
      cmocka_unit_test(weights_are_size_over_probability),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
