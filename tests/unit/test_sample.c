/* Unit tests of the hook's sampler (src/hook/sample.c), linked directly
 * under ASan and UBSan: the filter never misses a live sampled block (also
 * while it grows), forget is exact, and the countdown samples bytes as
 * docs/trace-format.md says (one sample per period bytes on average, the
 * weights an unbiased estimate of the bytes allocated). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "hook/sample.h"

#define N 20000 /* live samples: the filter grows from 4096 bits to 2^20 */

static void *addr(size_t i) { return (void *)(uintptr_t)(0x7f0000000000ull + i * 48); }

static void set_is_exact_while_filter_grows(void **state) {
  (void)state;
  for (size_t i = 0; i < N; i++) {
    hh__sample_note(addr(2 * i));
    /* Every live one still passes the filter (spot checks while it grows). */
    if (i % 997 == 0) {
      for (size_t k = 0; k <= i; k++) assert_true(hh__sample_maybe(addr(2 * k)));
    }
  }
  size_t passed = 0;
  for (size_t i = 0; i < N; i++) {
    assert_true(hh__sample_maybe(addr(2 * i)));
    passed += hh__sample_maybe(addr(2 * i + 1));
    assert_false(hh__sample_forget(addr(2 * i + 1))); /* never noted */
  }
  /* Grown to 2^20 bits: about 2% of the others pass. */
  assert_true(passed < N / 10);
  for (size_t i = 0; i < N; i += 2) assert_true(hh__sample_forget(addr(2 * i)));
  for (size_t i = 0; i < N; i++) {
    assert_int_equal(hh__sample_forget(addr(2 * i)), i % 2 == 1);
    assert_false(hh__sample_forget(addr(2 * i)));
  }
  /* All forgotten: the filter is empty again. */
  for (size_t i = 0; i < 2 * N; i++) assert_false(hh__sample_maybe(addr(i)));
  /* The same address twice (freed unrecorded, sampled again): two forgets. */
  hh__sample_note(addr(7));
  hh__sample_note(addr(7));
  assert_true(hh__sample_forget(addr(7)));
  assert_true(hh__sample_maybe(addr(7)));
  assert_true(hh__sample_forget(addr(7)));
  assert_false(hh__sample_forget(addr(7)));
}

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
      cmocka_unit_test(set_is_exact_while_filter_grows),
      cmocka_unit_test(countdown_samples_bytes),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
