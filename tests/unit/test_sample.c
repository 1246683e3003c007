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

int main(void) {
  hh__sampler_start(65536);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(countdown_samples_bytes),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
