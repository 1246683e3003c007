/* Content: blocks are writable over their whole usable size, calloc gives
 * zeros (also in reused, dirtied memory), and realloc keeps the content
 * through growth and shrinkage, in place or moved, for plain and over-aligned
 * blocks. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conformance.h"

/* Allocates n bytes with malloc, checks usable >= n, fills the whole usable size and reads it back. Returns
 * the block (kept filled with tag) or NULL after a failure. */
static void *alloc_checked(struct hh_ctx *c, size_t n, uint64_t tag) {
  const struct hh_api *a = c->api;
  void *p = a->malloc(n);
  if (!HH_EXPECT(c, p != NULL, "malloc(%zu) gave NULL", n)) return NULL;
  size_t u = a->malloc_usable_size(p);
  HH_EXPECT(c, u >= n, "malloc(%zu) = %p: usable %zu < size", n, p, u);
  hh_fill(p, u, tag);
  size_t bad = hh_verify(p, u, tag);
  HH_EXPECT(c, bad == SIZE_MAX,
            "malloc(%zu) = %p: byte %zu of usable %zu "
            "read back 0x%02x, wrote 0x%02x",
            n, p, bad, u, bad == SIZE_MAX ? 0u : ((unsigned char *)p)[bad],
            bad == SIZE_MAX ? 0u : hh_pattern_byte(tag, bad));
  return p;
}

/* The sizes of the original heaphook test: 1, 15, 123, a page, 0x12345; plus
 * their neighbours. */
static void check_sizes_fixed(struct hh_ctx *c) {
  size_t pg = c->page;
  size_t sizes[] = {1, 15, 123, pg, 0x12345, 0, 16, 17, pg - 1, pg + 1, 0x12344, 0x12346};
  void *p[sizeof sizes / sizeof *sizes];
  for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) p[i] = alloc_checked(c, sizes[i], i);
  for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
    if (!p[i]) continue;
    size_t u = c->api->malloc_usable_size(p[i]);
    size_t bad = hh_verify(p[i], u, i);
    HH_EXPECT(c, bad == SIZE_MAX,
              "malloc(%zu) block changed at %zu after the "
              "others were written",
              sizes[i], bad);
    c->api->free(p[i]);
  }
}

/* 1000 random sizes up to 1 MiB (spread over orders of magnitude), each
 * checked over its whole usable size; the last 8 stay live so neighbours'
 * writes would show. */
static void check_sizes_random(struct hh_ctx *c) {
  struct hh_rng r;
  hh_rng_init(&r, c->seed, 1);
  enum { KEEP = 8 };
  void *ring[KEEP] = {0};
  uint64_t tags[KEEP] = {0};
  size_t n_iter = hh_iterations(c, 1000, 250);
  for (size_t i = 0; i < n_iter && hh_failed(c) < 10; i++) {
    size_t n = hh_rng_size(&r, 1 << 20);
    size_t k = i % KEEP;
    if (ring[k]) {
      size_t u = c->api->malloc_usable_size(ring[k]);
      size_t bad = hh_verify(ring[k], u, tags[k]);
      HH_EXPECT(c, bad == SIZE_MAX, "block %p (usable %zu) changed at %zu", ring[k], u, bad);
      c->api->free(ring[k]);
    }
    tags[k] = 1000 + i;
    ring[k] = alloc_checked(c, n, tags[k]);
  }
  for (int k = 0; k < KEEP; k++) c->api->free(ring[k]);
}

static const size_t calloc_sizes[] = {
    1,     2,      15,         16,     17,      100,           1000,    4095,          4096,   4097,
    65536, 131071, 131072 + 5, 262144, 1 << 20, (1 << 20) + 3, 3 << 20, (5 << 20) + 7, 8 << 20};

/* calloc's requested bytes are zero, for fresh memory of every size up to
 * 8 MiB and for element counts times sizes. */
static void check_calloc_zeroed(struct hh_ctx *c) {
  const struct hh_api *a = c->api;
  for (size_t i = 0; i < sizeof calloc_sizes / sizeof *calloc_sizes; i++) {
    size_t n = calloc_sizes[i];
    void *p = a->calloc(1, n);
    if (!HH_EXPECT(c, p != NULL, "calloc(1, %zu) gave NULL", n)) continue;
    size_t bad = hh_first_nonzero(p, n);
    HH_EXPECT(c, bad == SIZE_MAX, "calloc(1, %zu): byte %zu is 0x%02x", n, bad,
              bad == SIZE_MAX ? 0u : ((unsigned char *)p)[bad]);
    a->free(p);
  }
  static const size_t nm[][2] = {{1000, 24}, {3, 1 << 20}, {7, 13}, {4096, 1024}, {65536, 1}};
  for (size_t i = 0; i < sizeof nm / sizeof *nm; i++) {
    size_t n = nm[i][0] * nm[i][1];
    void *p = a->calloc(nm[i][0], nm[i][1]);
    if (!HH_EXPECT(c, p != NULL, "calloc(%zu, %zu) gave NULL", nm[i][0], nm[i][1])) continue;
    HH_EXPECT(c, a->malloc_usable_size(p) >= n, "calloc(%zu, %zu): usable %zu", nm[i][0], nm[i][1],
              a->malloc_usable_size(p));
    size_t bad = hh_first_nonzero(p, n);
    HH_EXPECT(c, bad == SIZE_MAX, "calloc(%zu, %zu): byte %zu not zero", nm[i][0], nm[i][1], bad);
    a->free(p);
  }
}

/* calloc after dirty reuse: blocks are malloc'ed, filled with 0xAA over their
 * usable size and freed, then calloc of the same size (the allocator's most
 * likely reuse) must be all zero. Done one block at a time and in batches of
 * 32, and for memory freed by realloc moves. */
static void check_calloc_dirty_reuse(struct hh_ctx *c) {
  const struct hh_api *a = c->api;
  enum { BATCH = 32 };
  for (size_t i = 0; i < sizeof calloc_sizes / sizeof *calloc_sizes; i++) {
    size_t n = calloc_sizes[i];
    int batch = n <= 65536 ? BATCH : 2;
    for (int round = 0; round < 3; round++) {
      void *p[BATCH];
      int k = round == 0 ? 1 : batch;
      for (int j = 0; j < k; j++) {
        p[j] = a->malloc(n);
        if (p[j]) memset(p[j], 0xAA, a->malloc_usable_size(p[j]));
      }
      for (int j = 0; j < k; j++) a->free(p[j]);
      for (int j = 0; j < k; j++) {
        p[j] = a->calloc(1, n);
        if (!HH_EXPECT(c, p[j] != NULL, "calloc(1, %zu) gave NULL", n)) continue;
        size_t bad = hh_first_nonzero(p[j], n);
        HH_EXPECT(c, bad == SIZE_MAX,
                  "calloc(1, %zu) after a dirty free: "
                  "byte %zu is 0x%02x (round %d, block %d)",
                  n, bad, bad == SIZE_MAX ? 0u : ((unsigned char *)p[j])[bad], round, j);
      }
      for (int j = 0; j < k; j++) a->free(p[j]);
    }
    /* Memory left behind by a realloc that moved the block. */
    void *p = a->malloc(n);
    if (!p) continue;
    memset(p, 0xAA, a->malloc_usable_size(p));
    void *fence = a->malloc(16); /* discourages in-place growth */
    void *q = a->realloc(p, 2 * n + 64);
    if (!HH_EXPECT(c, q != NULL, "realloc to %zu gave NULL", 2 * n + 64)) {
      a->free(p);
      a->free(fence);
      continue;
    }
    void *z = a->calloc(n, 1);
    if (HH_EXPECT(c, z != NULL, "calloc(%zu, 1) gave NULL", n)) {
      size_t bad = hh_first_nonzero(z, n);
      HH_EXPECT(c, bad == SIZE_MAX,
                "calloc(%zu, 1) after a realloc move: byte "
                "%zu not zero",
                n, bad);
    }
    a->free(z);
    a->free(q);
    a->free(fence);
  }
}

/* Resizes p from old to n, checking that min(old, n) bytes of pattern tag
 * survive and that the result has usable >= n; refills the new
 * block's n bytes with tag + 1. Returns the new block, or NULL after a
 * failure (p then still belongs to the caller). */
static void *resize_checked(struct hh_ctx *c, void *p, size_t old, size_t n, uint64_t *tag,
                            const char *what) {
  const struct hh_api *a = c->api;
  void *q = a->realloc(p, n);
  if (!HH_EXPECT(c, q != NULL, "%s: realloc(%p, %zu) from %zu gave NULL", what, p, n, old)) return NULL;
  size_t keep = old < n ? old : n;
  size_t bad = hh_verify(q, keep, *tag);
  HH_EXPECT(c, bad == SIZE_MAX,
            "%s: realloc %zu -> %zu (%s) lost byte %zu: "
            "0x%02x, want 0x%02x",
            what, old, n, q == p ? "in place" : "moved", bad,
            bad == SIZE_MAX ? 0u : ((unsigned char *)q)[bad],
            bad == SIZE_MAX ? 0u : hh_pattern_byte(*tag, bad));
  size_t u = a->malloc_usable_size(q);
  HH_EXPECT(c, u >= n, "%s: realloc(.., %zu): usable %zu", what, n, u);
  *tag += 1;
  hh_fill(q, n, *tag);
  return q;
}

/* realloc grows and shrinks keep the content: a block walks up from 1 byte to
 * 8 MiB by factors of ~1.3 and back down, once alone (room to grow in place)
 * and once with a small fence allocated after every step (forcing moves);
 * then direct jumps small -> huge -> small; then same-size and by-one
 * changes. */
static void check_realloc_content(struct hh_ctx *c) {
  const struct hh_api *a = c->api;
  for (int fenced = 0; fenced < 2; fenced++) {
    const char *what = fenced ? "fenced walk" : "walk";
    enum { MAX_FENCES = 128 };
    void *fences[MAX_FENCES];
    int nf = 0;
    uint64_t tag = 500 + (uint64_t)fenced * 1000;
    size_t size = 1;
    void *p = a->malloc(size);
    if (!HH_EXPECT(c, p != NULL, "malloc(1) gave NULL")) return;
    hh_fill(p, size, tag);
    size_t steps[160];
    int ns = 0;
    for (size_t n = 1; n <= (8u << 20) && ns < 80; n = n + n / 3 + 7) steps[ns++] = n;
    for (int i = ns - 2; i >= 0; i--) steps[ns++] = steps[i];
    for (int i = 1; i < ns; i++) {
      void *q = resize_checked(c, p, size, steps[i], &tag, what);
      if (!q) break;
      p = q;
      size = steps[i];
      if (fenced && nf < MAX_FENCES) fences[nf++] = a->malloc(8 + (size_t)i);
      if (hh_failed(c) > 10) break;
    }
    a->free(p);
    for (int i = 0; i < nf; i++) a->free(fences[i]);
  }

  static const size_t jumps[][3] = {{10, 4 << 20, 10},
                                    {100, 1 << 20, 24},
                                    {4000, 200000, 4000},
                                    {1, 16 << 20, 1},
                                    {200000, 10, 300000},
                                    {65536, 65537, 65535},
                                    {1 << 20, (1 << 20) + 1, (1 << 20) - 1},
                                    {24, 24, 25},
                                    {32, 31, 33}};
  for (size_t i = 0; i < sizeof jumps / sizeof *jumps; i++) {
    uint64_t tag = 9000 + 10 * i;
    void *p = a->malloc(jumps[i][0]);
    if (!HH_EXPECT(c, p != NULL, "malloc(%zu) gave NULL", jumps[i][0])) continue;
    hh_fill(p, jumps[i][0], tag);
    void *q = resize_checked(c, p, jumps[i][0], jumps[i][1], &tag, "jump");
    if (!q) {
      a->free(p);
      continue;
    }
    void *r = resize_checked(c, q, jumps[i][1], jumps[i][2], &tag, "jump back");
    a->free(r ? r : q);
  }
}

/* Blocks from posix_memalign, aligned_alloc and memalign at alignments
 * 16..65536 keep their content through realloc grow, shrink, huge and back.
 * (The TLSF seed lost the data of realloc'ed aligned blocks.) The resized
 * block need not keep the large alignment. */
static void check_realloc_aligned(struct hh_ctx *c) {
  const struct hh_api *a = c->api;
  static const char *const names[] = {"posix_memalign", "aligned_alloc", "memalign"};
  char what[64];
  for (int which = 0; which < 3; which++) {
    for (size_t al = 16; al <= 65536; al *= 2) {
      size_t sizes[] = {1, 100, al + 3, 3 * al};
      for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
        size_t n = sizes[s];
        void *p = NULL;
        if (which == 0) {
          if (a->posix_memalign(&p, al, n) != 0) p = NULL;
        } else if (which == 1) {
          p = a->aligned_alloc(al, n);
        } else {
          p = a->memalign(al, n);
        }
        snprintf(what, sizeof what, "%s(%zu, %zu)", names[which], al, n);
        if (!HH_EXPECT(c, p != NULL, "%s gave NULL", what)) continue;
        uint64_t tag = al * 131 + n * 7 + (uint64_t)which;
        hh_fill(p, n, tag);
        size_t chain[] = {3 * n + 1000, n / 2 + 1, 1 << 20, n + 1, n};
        size_t cur = n;
        for (size_t k = 0; k < sizeof chain / sizeof *chain; k++) {
          void *q = resize_checked(c, p, cur, chain[k], &tag, what);
          if (!q) break;
          p = q;
          cur = chain[k];
        }
        a->free(p);
        if (hh_failed(c) > 10) return;
      }
    }
  }
}

/* reallocarray resizes like realloc(p, nmemb * size) and keeps content. */
static void check_reallocarray_content(struct hh_ctx *c) {
  const struct hh_api *a = c->api;
  uint64_t tag = 4242;
  void *p = a->reallocarray(NULL, 10, 10);
  if (!HH_EXPECT(c, p != NULL, "reallocarray(NULL, 10, 10) gave NULL")) return;
  HH_EXPECT(c, a->malloc_usable_size(p) >= 100,
            "reallocarray(NULL, 10, 10): "
            "usable %zu",
            a->malloc_usable_size(p));
  hh_fill(p, 100, tag);
  static const size_t nm[][2] = {{100, 100}, {3, 1 << 20}, {7, 3}, {1, 1}};
  size_t cur = 100;
  for (size_t i = 0; i < sizeof nm / sizeof *nm; i++) {
    size_t n = nm[i][0] * nm[i][1];
    void *q = a->reallocarray(p, nm[i][0], nm[i][1]);
    if (!HH_EXPECT(c, q != NULL, "reallocarray(p, %zu, %zu) gave NULL", nm[i][0], nm[i][1])) break;
    p = q;
    size_t keep = cur < n ? cur : n;
    size_t bad = hh_verify(p, keep, tag);
    HH_EXPECT(c, bad == SIZE_MAX, "reallocarray(p, %zu, %zu) lost byte %zu", nm[i][0], nm[i][1], bad);
    HH_EXPECT(c, a->malloc_usable_size(p) >= n,
              "reallocarray(p, %zu, %zu): "
              "usable %zu",
              nm[i][0], nm[i][1], a->malloc_usable_size(p));
    tag++;
    hh_fill(p, n, tag);
    cur = n;
  }
  a->free(p);
}

const struct hh_check hh_checks_content[] = {
    {"sizes.fixed_writable", check_sizes_fixed},
    {"sizes.random_writable", check_sizes_random},
    {"calloc.zeroed", check_calloc_zeroed},
    {"calloc.zeroed_after_dirty_reuse", check_calloc_dirty_reuse},
    {"realloc.keeps_content", check_realloc_content},
    {"realloc.aligned_keeps_content", check_realloc_aligned},
    {"reallocarray.keeps_content", check_reallocarray_content},
    {NULL, NULL},
};
