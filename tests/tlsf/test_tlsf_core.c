/* Unit tests of the OS-free TLSF core (src/alloc/tlsf/tlsf.c) on memory the
 * test maps itself: sizes, alignment, realloc, invariants under random
 * operations, pools and blocks over 4 GiB, overflow, exhaustion and
 * coalescing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
// cmocka needs the headers above first
#include <cmocka.h>
#include <string.h>
#include <sys/mman.h>

#include "alloc/tlsf/tlsf.h"

#define ARENA_BYTES ((size_t)64 << 20)

/* A control structure plus one pool in a fresh mapping per test. */
typedef struct arena {
  void *mem;
  size_t bytes;
  tlsf_t *t;
} arena;

static int arena_setup(void **state) {
  static arena a;
  a.bytes = ARENA_BYTES;
  a.mem = mmap(NULL, a.bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (a.mem == MAP_FAILED) return -1;
  a.t = tlsf_create(a.mem, a.bytes);
  *state = &a;
  return a.t == NULL ? -1 : 0;
}

static int arena_teardown(void **state) {
  arena *a = *state;
  munmap(a->mem, a->bytes);
  return 0;
}

static tlsf_t *T(void **state) { return ((arena *)*state)->t; }

static void assert_valid(tlsf_t *t) {
  const char *err = tlsf_check(t);
  if (err != NULL) fail_msg("tlsf_check: %s", err);
}

/* The largest free block of an undamaged heap. */
static size_t largest_free(const tlsf_t *t) {
  bool damaged = true;
  size_t n = tlsf_largest_free(t, &damaged);
  assert_false(damaged);
  return n;
}

/* Fills n bytes with a pattern derived from seed; pattern_ok checks it. */
static void pattern_fill(void *p, size_t n, unsigned seed) {
  unsigned char *c = p;
  for (size_t i = 0; i < n; i++) c[i] = (unsigned char)(seed + i * 31u);
}

static int pattern_ok(const void *p, size_t n, unsigned seed) {
  const unsigned char *c = p;
  for (size_t i = 0; i < n; i++) {
    if (c[i] != (unsigned char)(seed + i * 31u)) return 0;
  }
  return 1;
}

static uint64_t rng_next(uint64_t *s) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}

static void test_create_adds_rest_as_pool(void **state) {
  tlsf_t *t = T(state);
  assert_int_equal(tlsf_pool_count(t), 1);
  assert_int_equal(tlsf_pool_bytes(t), ARENA_BYTES - TLSF_CONTROL_SIZE);
  assert_int_equal(tlsf_bytes_used(t), 0);
  assert_int_equal(tlsf_bytes_free(t), ARENA_BYTES - TLSF_CONTROL_SIZE - TLSF_POOL_OVERHEAD);
  assert_valid(t);
}

static void test_sizes_1_15_123_4096_0x12345(void **state) {
  static const size_t sizes[] = {1, 15, 123, 4096, 0x12345};
  tlsf_t *t = T(state);
  void *p[5];
  for (unsigned i = 0; i < 5; i++) {
    p[i] = tlsf_malloc(t, sizes[i]);
    assert_non_null(p[i]);
    assert_int_equal((uintptr_t)p[i] % 16, 0);
    assert_true(tlsf_block_size(p[i]) >= sizes[i]);
    pattern_fill(p[i], tlsf_block_size(p[i]), i);
  }
  assert_valid(t);
  for (unsigned i = 0; i < 5; i++) {
    assert_true(pattern_ok(p[i], tlsf_block_size(p[i]), i));
    tlsf_free(t, p[i]);
  }
  assert_int_equal(tlsf_bytes_used(t), 0);
  assert_valid(t);
}

/* block_size is exact: the smallest 16-granular size + 8 that holds the
 * request, and all of it is writable without breaking the heap. */
static void test_block_size_is_exact_usable_size(void **state) {
  tlsf_t *t = T(state);
  for (size_t n = 0; n < 2000; n++) {
    void *p = tlsf_malloc(t, n);
    assert_non_null(p);
    size_t bs = tlsf_block_size(p);
    assert_true(bs >= n);
    assert_true(bs == 24 || bs - 16 < n); /* no more than one granule extra */
    assert_int_equal((bs - 8) % 16, 0);
    memset(p, 0xA5, bs);
    void *q = tlsf_malloc(t, 16); /* neighbour must be intact */
    assert_valid(t);
    tlsf_free(t, p);
    tlsf_free(t, q);
  }
  assert_valid(t);
}

static void test_memalign_16_to_1MiB(void **state) {
  tlsf_t *t = T(state);
  void *keep[21 * 3];
  unsigned k = 0;
  for (size_t align = 16; align <= ((size_t)1 << 20); align <<= 1) {
    static const size_t sizes[] = {1, 100, 5000};
    for (unsigned i = 0; i < 3; i++) {
      void *p = tlsf_memalign(t, align, sizes[i]);
      assert_non_null(p);
      assert_int_equal((uintptr_t)p % align, 0);
      assert_true(tlsf_block_size(p) >= sizes[i]);
      pattern_fill(p, tlsf_block_size(p), k);
      keep[k++] = p;
      tlsf_malloc(t, 40); /* perturb the layout; left allocated */
    }
    assert_valid(t);
  }
  for (unsigned i = 0; i < k; i++) {
    assert_true(pattern_ok(keep[i], tlsf_block_size(keep[i]), i));
    tlsf_free(t, keep[i]);
  }
  assert_valid(t);
}

/* The leading gap of an aligned block is a free block of its own, and
 * freeing the aligned block merges everything back. */
static void test_memalign_gap_is_free_block_and_merges_back(void **state) {
  tlsf_t *t = T(state);
  size_t free0 = tlsf_bytes_free(t);
  void *a = tlsf_malloc(t, 24); /* misaligns the rest of the pool */
  void *p = tlsf_memalign(t, 4096, 100);
  assert_non_null(p);
  assert_int_equal((uintptr_t)p % 4096, 0);
  assert_valid(t);
  tlsf_free(t, p);
  tlsf_free(t, a);
  assert_int_equal(tlsf_bytes_free(t), free0);
  assert_int_equal(largest_free(t), free0);
  assert_valid(t);
}

/* A block merged into the free block before it is free in its own header
 * too: a second free of it is refused (it was taken for a used block and
 * freed again, and a later malloc handed out a live block). */
static void test_double_free_after_backward_merge(void **state) {
  tlsf_t *t = T(state);
  void *a = tlsf_malloc(t, 100), *b = tlsf_malloc(t, 100), *g = tlsf_malloc(t, 100);
  assert_int_equal(tlsf_free(t, a), 0);
  assert_int_equal(tlsf_free(t, b), 0); /* merges into a's block */
  assert_int_equal(tlsf_block_in_use(b), 0);
  assert_int_equal(tlsf_free(t, b), -1);
  assert_valid(t);
  /* an aligned block always has a free gap before it */
  void *p = tlsf_memalign(t, 4096, 100);
  assert_int_equal(tlsf_free(t, p), 0);
  assert_int_equal(tlsf_free(t, p), -1);
  assert_valid(t);
  tlsf_free(t, g);
}

static void test_memalign_rejects_bad_alignment(void **state) {
  tlsf_t *t = T(state);
  assert_null(tlsf_memalign(t, 48, 10));
  assert_null(tlsf_memalign(t, (size_t)1 << 63, 10));
  void *p = tlsf_memalign(t, 8, 10); /* <= 16: plain malloc */
  assert_non_null(p);
  assert_int_equal((uintptr_t)p % 16, 0);
  tlsf_free(t, p);
  assert_valid(t);
}

static void test_realloc_keeps_content_grow_and_shrink(void **state) {
  tlsf_t *t = T(state);
  void *p = tlsf_malloc(t, 100);
  pattern_fill(p, 100, 7);
  /* The pool after p is free: growing stays in place. */
  void *q = tlsf_realloc(t, p, 10000);
  assert_ptr_equal(q, p);
  assert_true(tlsf_block_size(q) >= 10000);
  assert_true(pattern_ok(q, 100, 7));
  pattern_fill(q, 10000, 8);
  /* Shrink in place keeps the prefix and gives the tail back. */
  size_t free_before = tlsf_bytes_free(t);
  q = tlsf_realloc(t, q, 50);
  assert_ptr_equal(q, p);
  assert_true(pattern_ok(q, 50, 8));
  assert_true(tlsf_bytes_free(t) > free_before);
  assert_valid(t);
  /* Blocked by a used neighbour: it moves and keeps the content. */
  void *wall = tlsf_malloc(t, 16);
  void *r = tlsf_realloc(t, q, 20000);
  assert_non_null(r);
  assert_ptr_not_equal(r, q);
  assert_true(pattern_ok(r, 50, 8));
  tlsf_free(t, wall);
  tlsf_free(t, r);
  assert_int_equal(tlsf_bytes_used(t), 0);
  assert_valid(t);
}

static void test_realloc_of_memalign_block_keeps_content(void **state) {
  tlsf_t *t = T(state);
  for (size_t align = 32; align <= ((size_t)1 << 20); align <<= 3) {
    void *p = tlsf_memalign(t, align, 300);
    assert_int_equal((uintptr_t)p % align, 0);
    pattern_fill(p, 300, (unsigned)align);
    void *wall = tlsf_malloc(t, 16); /* force a move on the first grow */
    void *q = tlsf_realloc(t, p, 70000);
    assert_non_null(q);
    assert_true(pattern_ok(q, 300, (unsigned)align));
    q = tlsf_realloc(t, q, 200);
    assert_true(pattern_ok(q, 200, (unsigned)align));
    q = tlsf_realloc(t, q, 5000); /* in place: next is free after shrink */
    assert_true(pattern_ok(q, 200, (unsigned)align));
    tlsf_free(t, q);
    tlsf_free(t, wall);
    assert_valid(t);
  }
  assert_int_equal(tlsf_bytes_used(t), 0);
}

static void test_realloc_null_and_zero(void **state) {
  tlsf_t *t = T(state);
  void *p = tlsf_realloc(t, NULL, 64);
  assert_non_null(p);
  assert_null(tlsf_realloc(t, p, 0));
  assert_int_equal(tlsf_bytes_used(t), 0);
  assert_valid(t);
}

static void test_overflow_requests_return_null(void **state) {
  tlsf_t *t = T(state);
  assert_null(tlsf_malloc(t, SIZE_MAX));
  assert_null(tlsf_malloc(t, SIZE_MAX / 2));
  assert_null(tlsf_malloc(t, SIZE_MAX - 15));
  assert_null(tlsf_malloc(t, TLSF_MAX_REQUEST + 1));
  assert_null(tlsf_memalign(t, (size_t)1 << 20, SIZE_MAX - 100));
  assert_null(tlsf_memalign(t, 64, SIZE_MAX / 2));
  assert_null(tlsf_malloc(t, ARENA_BYTES)); /* larger than the pool */
  void *p = tlsf_malloc(t, 32);
  pattern_fill(p, 32, 3);
  assert_null(tlsf_realloc(t, p, SIZE_MAX));
  assert_null(tlsf_realloc(t, p, ARENA_BYTES));
  assert_true(pattern_ok(p, 32, 3)); /* left intact */
  tlsf_free(t, p);
  assert_valid(t);
}

static void test_random_operations_keep_invariants(void **state) {
  enum { SLOTS = 512, OPS = 200000 };
  tlsf_t *t = T(state);
  void *slot[SLOTS] = {0};
  size_t len[SLOTS] = {0};
  uint64_t rng = 0x9E3779B97F4A7C15ull;
  for (unsigned op = 0; op < OPS; op++) {
    unsigned i = (unsigned)(rng_next(&rng) % SLOTS);
    uint64_t r = rng_next(&rng);
    size_t size = (r & 7) == 0 ? (size_t)(r >> 8) % 70000 : (size_t)(r >> 8) % 600;
    if (slot[i] != NULL) {
      assert_true(pattern_ok(slot[i], len[i] < 16 ? len[i] : 16, i));
      if ((r & 0x30) == 0) { /* realloc */
        void *q = tlsf_realloc(t, slot[i], size + 1);
        if (q == NULL) continue;
        assert_true(pattern_ok(q, len[i] < 16 ? len[i] : 16, i));
        slot[i] = q;
        len[i] = size + 1;
        pattern_fill(q, len[i] < 16 ? len[i] : 16, i);
        continue;
      }
      tlsf_free(t, slot[i]);
      slot[i] = NULL;
      continue;
    }
    size_t align = (r & 0xC0) == 0 ? (size_t)16 << ((r >> 40) % 12) : 1;
    slot[i] = align > 1 ? tlsf_memalign(t, align, size) : tlsf_malloc(t, size);
    if (slot[i] == NULL) continue;
    if (align > 1) assert_int_equal((uintptr_t)slot[i] % align, 0);
    len[i] = size;
    pattern_fill(slot[i], len[i] < 16 ? len[i] : 16, i);
    if (op % 20000 == 0) assert_valid(t);
  }
  assert_valid(t);
  for (unsigned i = 0; i < SLOTS; i++) tlsf_free(t, slot[i]);
  assert_int_equal(tlsf_bytes_used(t), 0);
  assert_int_equal(largest_free(t), tlsf_bytes_free(t));
  assert_valid(t);
}

/* A write past a block's end over the free block after it (its size and
 * free-list links) leaves tlsf_largest_free a wild link: it stops at the
 * damaged block and follows nothing (a crash handler's _exit prints
 * HEAPHOOK_STATS's report, which calls it: preload.reports_at_end,
 * crash_handler). It followed the link, and faulted. */
static void test_largest_free_follows_no_damaged_link(void **state) {
  tlsf_t *t = T(state);
  unsigned char *a = tlsf_malloc(t, 100);
  assert_non_null(a);
  bool damaged = true;
  assert_true(tlsf_largest_free(t, &damaged) > 0);
  assert_false(damaged);
  memset(a + tlsf_block_size(a), 0x41, 64);
  assert_int_equal(tlsf_largest_free(t, &damaged), 0);
  assert_true(damaged);
}

/* Pools and blocks beyond 4 GiB (64-bit classes): a 6 GiB reserved mapping
 * of which only the touched pages (headers) get memory. */
static void test_pool_over_4GiB_gives_5GiB_block(void **state) {
  (void)state;
  const size_t pool_bytes = (size_t)6 << 30;
  const size_t want = (size_t)5 << 30;
  static _Alignas(16) unsigned char control[TLSF_CONTROL_SIZE];
  tlsf_t *t = tlsf_create(control, sizeof control);
  assert_non_null(t);
  assert_int_equal(tlsf_pool_count(t), 0);
  void *mem =
      mmap(NULL, pool_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  assert_true(mem != MAP_FAILED);
  assert_non_null(tlsf_add_pool(t, mem, pool_bytes));
  assert_int_equal(tlsf_pool_bytes(t), pool_bytes);
  assert_int_equal(largest_free(t), pool_bytes - TLSF_POOL_OVERHEAD);
  void *p = tlsf_malloc(t, want);
  assert_non_null(p);
  assert_true(tlsf_block_size(p) >= want);
  assert_true(tlsf_block_size(p) < want + 32);
  ((char *)p)[0] = 1;
  ((char *)p)[want - 1] = 2;
  void *q = tlsf_malloc(t, (size_t)1 << 30); /* the rest is about 1 GiB */
  assert_null(q);
  q = tlsf_malloc(t, (size_t)900 << 20);
  assert_non_null(q);
  assert_valid(t);
  void *big = tlsf_realloc(t, q, (size_t)1 << 33); /* 8 GiB: cannot */
  assert_null(big);
  tlsf_free(t, p);
  tlsf_free(t, q);
  assert_int_equal(largest_free(t), pool_bytes - TLSF_POOL_OVERHEAD);
  p = tlsf_memalign(t, (size_t)1 << 30, (size_t)4 << 30);
  assert_non_null(p);
  assert_int_equal((uintptr_t)p % ((size_t)1 << 30), 0);
  tlsf_free(t, p);
  assert_valid(t);
  munmap(mem, pool_bytes);
}

static void test_exhaustion_then_free_then_reuse(void **state) {
  enum { MAX = 70000 };
  tlsf_t *t = T(state);
  static void *blocks[MAX];
  unsigned n = 0;
  while (n < MAX && (blocks[n] = tlsf_malloc(t, 1000)) != NULL) n++;
  assert_true(n > 1000 && n < MAX);
  assert_null(tlsf_malloc(t, 1000));
  assert_valid(t);
  for (unsigned i = 0; i < n; i += 2) tlsf_free(t, blocks[i]);
  assert_valid(t);
  for (unsigned i = 0; i < n; i += 2) {
    blocks[i] = tlsf_malloc(t, 1000); /* the holes are reused exactly */
    assert_non_null(blocks[i]);
  }
  assert_null(tlsf_malloc(t, 1000));
  for (unsigned i = 0; i < n; i++) tlsf_free(t, blocks[i]);
  unsigned again = 0;
  while ((blocks[again] = tlsf_malloc(t, 1000)) != NULL) again++;
  assert_int_equal(again, n);
  for (unsigned i = 0; i < again; i++) tlsf_free(t, blocks[i]);
  assert_valid(t);
}

/* Per-pool walk statistics. */
typedef struct walk_count {
  size_t blocks, free_blocks, free_bytes, used_bytes;
} walk_count;

static void count_block(void *ptr, size_t size, int used, void *user) {
  walk_count *c = user;
  assert_int_equal((uintptr_t)ptr % 16, 0);
  c->blocks++;
  if (used) {
    c->used_bytes += size;
  } else {
    c->free_blocks++;
    c->free_bytes += size;
  }
}

static void test_free_all_coalesces_to_one_block(void **state) {
  enum { N = 3000 };
  tlsf_t *t = T(state);
  static void *p[N];
  uint64_t rng = 12345;
  for (unsigned i = 0; i < N; i++) {
    p[i] = tlsf_malloc(t, (size_t)(rng_next(&rng) % 5000));
    assert_non_null(p[i]);
  }
  walk_count c = {0, 0, 0, 0};
  tlsf_walk_pool(tlsf_pool_first(t), count_block, &c);
  assert_int_equal(c.used_bytes, tlsf_bytes_used(t));
  assert_int_equal(c.free_bytes, tlsf_bytes_free(t));
  for (unsigned i = 0; i < N; i++) { /* free in a scrambled order */
    unsigned j = (unsigned)(((uint64_t)i * 7919u) % N);
    tlsf_free(t, p[j]);
  }
  memset(&c, 0, sizeof c);
  tlsf_walk_pool(tlsf_pool_first(t), count_block, &c);
  size_t pool = tlsf_pool_size(tlsf_pool_first(t));
  assert_int_equal(c.blocks, 1);
  assert_int_equal(c.free_blocks, 1);
  assert_int_equal(c.free_bytes, pool - TLSF_POOL_OVERHEAD);
  assert_int_equal(largest_free(t), pool - TLSF_POOL_OVERHEAD);
  assert_null(tlsf_pool_next(tlsf_pool_first(t)));
  assert_valid(t);
}

static void test_several_pools_are_walked_and_used(void **state) {
  tlsf_t *t = T(state);
  static _Alignas(16) unsigned char extra1[4096], extra2[10000];
  assert_non_null(tlsf_add_pool(t, extra1 + 3, sizeof extra1 - 3)); /* unaligned start */
  assert_non_null(tlsf_add_pool(t, extra2, sizeof extra2));
  assert_null(tlsf_add_pool(t, extra1, 32)); /* too small for a block */
  assert_int_equal(tlsf_pool_count(t), 3);
  size_t pools = 0;
  for (const void *p = tlsf_pool_first(t); p != NULL; p = tlsf_pool_next(p)) pools++;
  assert_int_equal(pools, 3);
  assert_valid(t);
}

static void test_double_free_is_refused(void **state) {
  tlsf_t *t = T(state);
  void *a = tlsf_malloc(t, 100);
  void *b = tlsf_malloc(t, 100);
  assert_int_equal(tlsf_block_in_use(a), 1);
  assert_int_equal(tlsf_free(t, a), 0);
  assert_int_equal(tlsf_block_in_use(a), 0);
  assert_int_equal(tlsf_free(t, a), -1);
  assert_null(tlsf_realloc(t, a, 50));
  assert_valid(t);
  assert_int_equal(tlsf_free(t, b), 0);
  assert_int_equal(tlsf_free(t, NULL), 0);
  assert_valid(t);
}

static void test_check_reports_corruption(void **state) {
  tlsf_t *t = T(state);
  void *a = tlsf_malloc(t, 100);
  void *b = tlsf_malloc(t, 100);
  tlsf_free(t, a);
  assert_valid(t);
  size_t *size_word = (size_t *)((char *)b - 8);
  size_t saved = *size_word;
  *size_word &= ~(size_t)2; /* drop PREV_FREE although a is free */
  assert_non_null(tlsf_check(t));
  *size_word = saved;
  assert_valid(t);
  tlsf_free(t, b);
}

int main(void) {
  const struct CMUnitTest tests[] = {
#define T_(f) cmocka_unit_test_setup_teardown(f, arena_setup, arena_teardown)
      T_(test_create_adds_rest_as_pool),
      T_(test_sizes_1_15_123_4096_0x12345),
      T_(test_block_size_is_exact_usable_size),
      T_(test_memalign_16_to_1MiB),
      T_(test_memalign_gap_is_free_block_and_merges_back),
      T_(test_largest_free_follows_no_damaged_link),
      T_(test_double_free_after_backward_merge),
      T_(test_memalign_rejects_bad_alignment),
      T_(test_realloc_keeps_content_grow_and_shrink),
      T_(test_realloc_of_memalign_block_keeps_content),
      T_(test_realloc_null_and_zero),
      T_(test_overflow_requests_return_null),
      T_(test_random_operations_keep_invariants),
      T_(test_pool_over_4GiB_gives_5GiB_block),
      T_(test_exhaustion_then_free_then_reuse),
      T_(test_free_all_coalesces_to_one_block),
      T_(test_several_pools_are_walked_and_used),
      T_(test_double_free_is_refused),
      T_(test_check_reports_corruption),
#undef T_
  };
  return cmocka_run_group_tests_name("tlsf_core", tests, NULL, NULL);
}
