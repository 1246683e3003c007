/* Random workloads: many live blocks never overlap, and a long random mix of
 * every entry point keeps every block's content. The slot operation defined
 * here is also the body of the multi-threaded stress (checks_threads.c). */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conformance.h"

/* Sizes of the random workloads: mostly small, some medium, a few large. */
static size_t random_size(struct hh_rng *r) {
  unsigned k = (unsigned)hh_rng_below(r, 1000);
  if (k < 890) return hh_rng_size(r, 512);
  if (k < 990) return hh_rng_size(r, 32 << 10);
  return hh_rng_size(r, 1 << 20);
}

static size_t random_align(struct hh_rng *r) {
  if (hh_rng_below(r, 50) == 0) return 65536;
  return (size_t)16 << hh_rng_below(r, 9); /* 16 .. 4096 */
}

static int slot_verify(struct hh_ctx *c, struct hh_slot *s, const char *when) {
  size_t bad = hh_verify(s->p, s->size, s->tag);
  return HH_EXPECT(c, bad == SIZE_MAX,
                   "block %p (size %zu, align %zu, tag %llu) "
                   "changed at %zu before %s: 0x%02x, want 0x%02x",
                   s->p, s->size, s->align, (unsigned long long)s->tag, bad, when,
                   bad == SIZE_MAX ? 0u : ((unsigned char *)s->p)[bad],
                   bad == SIZE_MAX ? 0u : hh_pattern_byte(s->tag, bad));
}

void hh_slot_clear(struct hh_ctx *c, struct hh_slot *s) {
  if (s->p == NULL) return;
  slot_verify(c, s, "free");
  c->api->free(s->p);
  s->p = NULL;
}

static void slot_new(struct hh_ctx *c, struct hh_rng *r, struct hh_slot *s, uint64_t tag) {
  const struct hh_api *a = c->api;
  size_t n = random_size(r), al = 0, want_size = n; /* al 0: none asked */
  unsigned k = (unsigned)hh_rng_below(r, 100);
  const char *fn;
  void *p = NULL;
  int zeroed = 0;
  if (k < 40) {
    fn = "malloc";
    p = a->malloc(n);
  } else if (k < 55) {
    fn = "calloc";
    size_t m = 1 + hh_rng_below(r, 4);
    n = (n + m - 1) / m * m;
    want_size = n;
    p = a->calloc(m, n / m);
    zeroed = 1;
  } else if (k < 60) {
    fn = "realloc(NULL)";
    p = a->realloc(NULL, n);
  } else if (k < 63) {
    fn = "reallocarray(NULL)";
    p = a->reallocarray(NULL, n, 1);
  } else if (k < 73) {
    fn = "aligned_alloc";
    al = random_align(r);
    p = a->aligned_alloc(al, n);
  } else if (k < 83) {
    fn = "memalign";
    al = random_align(r);
    p = a->memalign(al, n);
  } else if (k < 95) {
    fn = "posix_memalign";
    al = random_align(r);
    int rc = a->posix_memalign(&p, al, n);
    if (rc != 0) {
      hh_fail(c, "posix_memalign(&p, %zu, %zu) returned %d", al, n, rc);
      return;
    }
  } else if (k < 98) {
    fn = "valloc";
    al = c->page;
    p = a->valloc(n);
  } else {
    fn = "pvalloc";
    al = c->page;
    want_size = (n + c->page - 1) / c->page * c->page;
    p = a->pvalloc(n);
  }
  if (!HH_EXPECT(c, p != NULL, "%s(%zu) (align %zu) gave NULL", fn, n, al)) return;
  /* Only requested alignments here: the 16-byte minimum is
   * align.min16_all_sizes' business, so that one defect fails one check. */
  HH_EXPECT(c, al == 0 || hh_aligned(p, al),
            "%s(align %zu, size %zu) = %p, "
            "aligned only to %zu",
            fn, al, n, p, hh_alignment_of(p));
  size_t u = a->malloc_usable_size(p);
  HH_EXPECT(c, u >= want_size, "%s(%zu): usable %zu < %zu", fn, n, u, want_size);
  if (zeroed) {
    size_t bad = hh_first_nonzero(p, n);
    HH_EXPECT(c, bad == SIZE_MAX, "calloc(.., total %zu) = %p: byte %zu not zero", n, p, bad);
  }
  s->p = p;
  s->size = n;
  s->align = al;
  s->tag = tag;
  hh_fill(p, n, tag);
}

void hh_slot_op(struct hh_ctx *c, struct hh_rng *r, struct hh_slot *s, uint64_t new_tag) {
  const struct hh_api *a = c->api;
  if (s->p == NULL) {
    slot_new(c, r, s, new_tag);
    return;
  }
  unsigned k = (unsigned)hh_rng_below(r, 100);
  if (k < 55) {
    hh_slot_clear(c, s);
    return;
  }
  if (!slot_verify(c, s, "realloc")) {
    /* Do not resize a block whose content is already wrong; drop it. */
    a->free(s->p);
    s->p = NULL;
    return;
  }
  size_t n = k < 70 ? s->size / 2 + 1 : random_size(r);
  void *q = k < 95 ? a->realloc(s->p, n) : a->reallocarray(s->p, 1, n);
  if (!HH_EXPECT(c, q != NULL, "%s(%p, %zu) from %zu (align %zu) gave NULL",
                 k < 95 ? "realloc" : "reallocarray", s->p, n, s->size, s->align))
    return; /* the old block stays in the slot */
  size_t keep = s->size < n ? s->size : n;
  size_t bad = hh_verify(q, keep, s->tag);
  HH_EXPECT(c, bad == SIZE_MAX,
            "realloc %zu -> %zu (align %zu, %s) lost byte "
            "%zu",
            s->size, n, s->align, q == s->p ? "in place" : "moved", bad);
  size_t u = a->malloc_usable_size(q);
  HH_EXPECT(c, u >= n, "realloc(.., %zu) = %p: usable %zu", n, q, u);
  s->p = q;
  s->size = n;
  s->align = 0;
  s->tag = new_tag;
  hh_fill(q, n, new_tag);
}

/* ---- checks ------------------------------------------------------------ */

struct live {
  unsigned char *p;
  size_t usable;
  uint64_t tag;
};

static int by_address(const void *x, const void *y) {
  const struct live *a = x, *b = y;
  return a->p < b->p ? -1 : a->p > b->p;
}

/* 1000 live blocks of random sizes (up to 1 MiB) from all the entry points:
 * sorted by address, the ranges [p, p + usable) are disjoint; each is filled
 * over its usable size and all are verified once all exist. */
static void check_no_overlap(struct hh_ctx *c) {
  const struct hh_api *a = c->api;
  enum { N = 1000 };
  static struct live b[N];
  struct hh_rng r;
  hh_rng_init(&r, c->seed, 2);
  int n = 0;
  for (int i = 0; i < N; i++) {
    struct hh_slot s = {0};
    slot_new(c, &r, &s, 0);
    if (s.p == NULL) continue;
    b[n].p = s.p;
    b[n].usable = a->malloc_usable_size(s.p);
    b[n].tag = 70000 + (uint64_t)i;
    hh_fill(b[n].p, b[n].usable, b[n].tag);
    n++;
  }
  for (int i = 0; i < n; i++) {
    size_t bad = hh_verify(b[i].p, b[i].usable, b[i].tag);
    HH_EXPECT(c, bad == SIZE_MAX,
              "block %p (usable %zu) changed at %zu after "
              "all %d were filled",
              (void *)b[i].p, b[i].usable, bad, n);
  }
  qsort(b, (size_t)n, sizeof *b, by_address);
  for (int i = 0; i + 1 < n; i++) {
    HH_EXPECT(c, (uintptr_t)b[i].p + b[i].usable <= (uintptr_t)b[i + 1].p,
              "blocks overlap: [%p, +%zu) and [%p, +%zu)", (void *)b[i].p, b[i].usable, (void *)b[i + 1].p,
              b[i + 1].usable);
  }
  /* Free in an order unrelated to allocation or address order. */
  for (int i = 0; i < n; i++) {
    int j = i + (int)hh_rng_below(&r, (size_t)(n - i));
    struct live t = b[i];
    b[i] = b[j];
    b[j] = t;
    a->free(b[i].p);
  }
}

/* A long random sequence of every entry point over 512 slots, with content
 * checks on every verify, resize and free. */
static void check_churn(struct hh_ctx *c) {
  enum { SLOTS = 512 };
  static struct hh_slot s[SLOTS];
  memset(s, 0, sizeof s);
  struct hh_rng r;
  hh_rng_init(&r, c->seed, 3);
  size_t ops = hh_iterations(c, 200000, 40000);
  for (size_t i = 0; i < ops; i++) {
    hh_slot_op(c, &r, &s[hh_rng_below(&r, SLOTS)], 1000000 + i);
    if ((i & 1023) == 0 && hh_failed(c) > 10) break;
  }
  for (int i = 0; i < SLOTS; i++) hh_slot_clear(c, &s[i]);
}

const struct hh_check hh_checks_random[] = {
    {"random.no_overlap", check_no_overlap},
    {"random.churn", check_churn},
    {NULL, NULL},
};
