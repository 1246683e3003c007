/* Unit tests of the hook layer, linked directly (hh__* names) under ASan and
 * UBSan. Built once per configuration: HH_TEST_RECORD names the recorders
 * (NULL: none, so no block prefix; "usage,counts": a prefix in front of
 * every block), HH_TEST_ALLOCATOR the allocator getter. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/glibc.h"
#include "hook/block.h"
#include "hook/bootstrap.h"
#include "hook/guard.h"
#include "hook/hook.h"
#include "record/usage.h"

const hh_allocator *HH_TEST_ALLOCATOR(void);

static void fill(void *p, size_t n, unsigned char seed) {
  for (size_t i = 0; i < n; i++) ((unsigned char *)p)[i] = (unsigned char)(seed + i * 7);
}

static int same(const void *p, size_t n, unsigned char seed) {
  for (size_t i = 0; i < n; i++) {
    if (((const unsigned char *)p)[i] != (unsigned char)(seed + i * 7)) return 0;
  }
  return 1;
}

/* A glibc block made before heaphook took over: freed, resized and sized by
 * glibc, never handed to the allocator. */
static void foreign_blocks_go_back_to_glibc(void **state) {
  (void)state;
  char *p = __libc_malloc(100);
  fill(p, 100, 3);
  assert_true(hh__malloc_usable_size(p) >= 100);
  char *q = hh__realloc(p, 5000);
  assert_non_null(q);
  assert_true(same(q, 100, 3));
  if (HH_TEST_RECORD != NULL) assert_string_equal(hh__owner_name(q), "foreign");
  hh__free(q);
  hh__free(__libc_malloc(1));
}

/* Blocks from the start-up arena: sized exactly, moved out on realloc, and
 * free does nothing (the arena is never reused). */
static void bootstrap_blocks_are_recognised(void **state) {
  (void)state;
  char *b = hh__bootstrap_alloc(40, 16);
  assert_non_null(b);
  assert_int_equal((uintptr_t)b % 16, 0);
  fill(b, 40, 9);
  assert_int_equal(hh__malloc_usable_size(b), 40);
  assert_string_equal(hh__owner_name(b), "bootstrap");
  char *r = hh__realloc(b, 1000);
  assert_non_null(r);
  assert_true(same(r, 40, 9));
  assert_false(hh__bootstrap_owns(r));
  hh__free(b);
  hh__free(r);
  /* Alignments beyond the arena's own (it is page-aligned). */
  for (size_t align = 16; align <= 65536; align *= 4) {
    char *a = hh__bootstrap_alloc(10, align);
    assert_int_equal((uintptr_t)a % align, 0);
    assert_int_equal(hh__bootstrap_size(a), 10);
  }
}

/* A bootstrap block carries a header word of the hook's (not sampled, no
 * lead), so the sampled path's free, which tests only that word, sends it
 * into the hook (entry.c); a calloc'd one is still all zeros. */
static void bootstrap_blocks_have_a_header_word(void **state) {
  (void)state;
  for (size_t align = 16; align <= 4096; align *= 16) {
    unsigned char *b = hh__bootstrap_alloc(24, align);
    assert_non_null(b);
    assert_true(hh__block_is_ours(b));
    assert_false(hh__block_is_sampled(b));
    assert_int_equal(hh__block_header(b)->lead16, 0);
    assert_int_equal(hh__bootstrap_size(b), 24);
    for (int i = 0; i < 24; i++) assert_int_equal(b[i], 0);
    assert_string_equal(hh__owner_name(b), "bootstrap");
    hh__free(b); /* (does nothing: the arena is never reused) */
  }
}

/* The recursion guard parks the sampler's countdown at 0 while it is set
 * (so the exported malloc's one test sends the guard's allocations into
 * the hook) and gives it back when the outermost holder leaves; a nested
 * enter and leave change nothing; with no countdown (0) it sets and clears
 * the guard alone. */
static void guard_parks_the_countdown(void **state) {
  (void)state;
  assert_false(hh__in_hook);
  hh__sample_left = 12345;
  hh_guard outer = hh__guard_enter();
  assert_false(outer.was);
  assert_true(hh__in_hook);
  assert_int_equal(hh__sample_left, 0);
  hh_guard inner = hh__guard_enter();
  assert_true(inner.was);
  assert_int_equal(hh__sample_left, 0);
  hh__guard_leave(inner);
  assert_true(hh__in_hook);
  assert_int_equal(hh__sample_left, 0);
  hh__guard_leave(outer);
  assert_false(hh__in_hook);
  assert_int_equal(hh__sample_left, 12345);

  hh__sample_left = 0;
  hh_guard none = hh__guard_enter();
  assert_true(hh__in_hook);
  assert_int_equal(hh__sample_left, 0);
  hh__guard_leave(none);
  assert_false(hh__in_hook);
  assert_int_equal(hh__sample_left, 0);
}

/* Over-aligned blocks keep their alignment with a prefix in front, and
 * realloc keeps their content. */
static void aligned_blocks_with_prefix(void **state) {
  (void)state;
  for (size_t align = 32; align <= 65536; align *= 2) {
    char *p = hh__aligned_alloc(align, 24);
    assert_non_null(p);
    assert_int_equal((uintptr_t)p % align, 0);
    assert_true(hh__malloc_usable_size(p) >= 24);
    fill(p, 24, (unsigned char)align);
    p = hh__realloc(p, 100000);
    assert_non_null(p);
    assert_true(same(p, 24, (unsigned char)align));
    hh__free(p);
  }
}

/* The usage recorder's numbers for a known sequence of calls. */
static void usage_counts_requested_bytes(void **state) {
  (void)state;
  hh_usage before, mid, after;
  hh__usage_get(&before);
  void *a = hh__malloc(100);
  void *b = hh__calloc(10, 10);
  void *c = hh__aligned_alloc(64, 64);
  a = hh__realloc(a, 300);
  hh__usage_get(&mid);
  assert_int_equal(mid.live_bytes - before.live_bytes, 300 + 100 + 64);
  assert_int_equal(mid.live_blocks - before.live_blocks, 3);
  assert_int_equal(mid.total_blocks - before.total_blocks, 4);
  assert_int_equal(mid.total_bytes - before.total_bytes, 100 + 100 + 64 + 300);
  assert_true(mid.peak_bytes >= before.live_bytes + 464);
  hh__free(a);
  hh__free(b);
  hh__free(c);
  hh__usage_get(&after);
  assert_int_equal(after.live_bytes, before.live_bytes);
  assert_int_equal(after.live_blocks, before.live_blocks);
}

static void errno_kept_on_success_set_on_failure(void **state) {
  (void)state;
  errno = 4242;
  void *p = hh__malloc(10);
  p = hh__realloc(p, 20000);
  hh__free(p);
  assert_int_equal(errno, 4242);
  volatile size_t huge = SIZE_MAX;
  assert_null(hh__malloc(huge));
  assert_int_equal(errno, ENOMEM);
}

int main(void) {
  hh__hook_setup_for_test(HH_TEST_ALLOCATOR(), HH_TEST_RECORD);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(foreign_blocks_go_back_to_glibc),
      cmocka_unit_test(bootstrap_blocks_are_recognised),
      cmocka_unit_test(bootstrap_blocks_have_a_header_word),
      cmocka_unit_test(guard_parks_the_countdown),
      cmocka_unit_test(aligned_blocks_with_prefix),
      cmocka_unit_test(errno_kept_on_success_set_on_failure),
      /* Needs the usage recorder: only in the configurations that enable it. */
      cmocka_unit_test(usage_counts_requested_bytes),
  };
  size_t n = sizeof tests / sizeof tests[0];
  if (HH_TEST_RECORD == NULL) n--;
  return _cmocka_run_group_tests("hook", tests, n, NULL, NULL);
}
