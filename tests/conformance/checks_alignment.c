/* Alignment: 16 bytes for every block whatever its size (what glibc gives on
 * x86-64 and what C and C++ code assumes), the requested alignment from the
 * aligned entry points, and page alignment from valloc/pvalloc; each block
 * also has usable size >= the request and is writable across all of it. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdlib.h>

#include "conformance.h"

/* Fills the whole usable size of p and reads it back; 0 on failure. */
static int writable(struct hh_ctx *c, void *p, size_t size, uint64_t tag,
                    const char *call, size_t arg1, size_t arg2) {
  size_t u = c->api->malloc_usable_size(p);
  if (!HH_EXPECT(c, u >= size, "%s(%zu, %zu) = %p: usable %zu < %zu", call,
                 arg1, arg2, p, u, size))
    return 0;
  hh_fill(p, u, tag);
  size_t bad = hh_verify(p, u, tag);
  return HH_EXPECT(c, bad == SIZE_MAX, "%s(%zu, %zu) = %p: byte %zu of %zu "
                   "not kept", call, arg1, arg2, p, bad, u);
}

static const size_t large_sizes[] = {
    4097,          8191,          8193,        65535,       65536,
    65537,         131071,        131072,      131073,      135168,
    262144 + 3,    1 << 20,       (1 << 20) + 1, 4 << 20,   (32 << 20) + 3};

/* malloc, calloc and realloc give 16-aligned blocks for every size 0..4096
 * (all live at once, so blocks of neighbouring size classes sit side by side)
 * and for a set of large sizes around glibc's and common size-class and mmap
 * thresholds. */
static void check_min16(struct hh_ctx *c) {
  const struct hh_api *a = c->api;
  enum { N = 4097 };
  void **live = a->calloc(N, sizeof *live); /* the allocator under test */
  void *rv = NULL;
  if (!HH_EXPECT(c, live != NULL, "calloc(%d, %zu) gave NULL", N, sizeof *live))
    return;
  for (size_t n = 0; n < N; n++) {
    void *p = (n % 3 == 2) ? a->calloc(1, n) : a->malloc(n);
    if (!HH_EXPECT(c, p != NULL, "%s(%zu) gave NULL",
                   n % 3 == 2 ? "calloc" : "malloc", n))
      break;
    live[n] = p;
    HH_EXPECT(c, hh_aligned(p, 16), "%s(%zu) = %p, aligned only to %zu",
              n % 3 == 2 ? "calloc(1, n)" : "malloc", n, p, hh_alignment_of(p));
    size_t u = a->malloc_usable_size(p);
    HH_EXPECT(c, u >= n, "malloc(%zu): usable %zu", n, u);
    hh_fill(p, n, n);
    /* realloc's results, growing one block through every size. */
    void *q = a->realloc(rv, n + 1);
    if (!HH_EXPECT(c, q != NULL, "realloc(%p, %zu) gave NULL", rv, n + 1)) break;
    rv = q;
    HH_EXPECT(c, hh_aligned(rv, 16), "realloc(.., %zu) = %p, aligned only to %zu",
              n + 1, rv, hh_alignment_of(rv));
  }
  for (size_t n = 0; n < N && live[n]; n++) {
    size_t bad = hh_verify(live[n], n, n);
    HH_EXPECT(c, bad == SIZE_MAX, "malloc(%zu) block changed at %zu (overlap?)",
              n, bad);
    a->free(live[n]);
  }
  a->free(rv);
  a->free(live);

  for (size_t i = 0; i < sizeof large_sizes / sizeof *large_sizes; i++) {
    size_t n = large_sizes[i];
    void *p = a->malloc(n), *q = a->calloc(n, 1);
    HH_EXPECT(c, p && hh_aligned(p, 16), "malloc(%zu) = %p, not 16-aligned", n, p);
    HH_EXPECT(c, q && hh_aligned(q, 16), "calloc(%zu, 1) = %p, not 16-aligned", n,
              q);
    void *r = p ? a->realloc(p, n * 2 + 1) : NULL;
    HH_EXPECT(c, r && hh_aligned(r, 16), "realloc(.., %zu) = %p, not 16-aligned",
              n * 2 + 1, r);
    a->free(r ? r : p);
    a->free(q);
  }
}

/* The three aligned entry points at every power of two 8..65536 (posix_memalign
 * from sizeof(void *)): aligned to max(align, 16), usable >= size, writable.
 * A batch of blocks per alignment is kept live together, then freed in an
 * interleaved order. */
enum { AL_POSIX, AL_ALIGNED_ALLOC, AL_MEMALIGN };
static const char *const al_names[] = {"posix_memalign", "aligned_alloc",
                                       "memalign"};

static void *aligned_call(const struct hh_api *a, int which, size_t al,
                          size_t n) {
  void *p = NULL;
  switch (which) {
    case AL_POSIX:
      if (a->posix_memalign(&p, al, n) != 0) p = NULL;
      return p;
    case AL_ALIGNED_ALLOC: return a->aligned_alloc(al, n);
    default: return a->memalign(al, n);
  }
}

static void check_aligned_entry(struct hh_ctx *c, int which) {
  const struct hh_api *a = c->api;
  enum { PER_ALIGN = 12 };
  for (size_t al = 8; al <= 65536; al *= 2) {
    size_t sizes[PER_ALIGN] = {0, 1, 15, 16, al - 1, al, al + 1, 3 * al + 5,
                               100, 4096, 100000, 1 << 20};
    void *p[PER_ALIGN];
    size_t want = al < 16 ? 16 : al;
    for (int i = 0; i < PER_ALIGN; i++) {
      p[i] = aligned_call(a, which, al, sizes[i]);
      if (!HH_EXPECT(c, p[i] != NULL, "%s(%zu, %zu) failed", al_names[which],
                     al, sizes[i]))
        continue;
      HH_EXPECT(c, hh_aligned(p[i], want), "%s(%zu, %zu) = %p, aligned only "
                "to %zu", al_names[which], al, sizes[i], p[i],
                hh_alignment_of(p[i]));
      writable(c, p[i], sizes[i], al * 64 + (size_t)i, al_names[which], al,
               sizes[i]);
    }
    /* All still intact while live together. */
    for (int i = 0; i < PER_ALIGN; i++) {
      if (!p[i]) continue;
      size_t u = a->malloc_usable_size(p[i]);
      size_t bad = hh_verify(p[i], u, al * 64 + (size_t)i);
      HH_EXPECT(c, bad == SIZE_MAX, "%s(%zu, %zu) block changed at %zu while "
                "others were live", al_names[which], al, sizes[i], bad);
    }
    for (int i = 0; i < PER_ALIGN; i += 2) a->free(p[i]);
    for (int i = PER_ALIGN - 1; i > 0; i -= 2) a->free(p[i]);
    if (hh_failed(c) > 20) return;
  }
}

static void check_posix_memalign(struct hh_ctx *c) {
  check_aligned_entry(c, AL_POSIX);
}
static void check_aligned_alloc(struct hh_ctx *c) {
  check_aligned_entry(c, AL_ALIGNED_ALLOC);
}
static void check_memalign(struct hh_ctx *c) { check_aligned_entry(c, AL_MEMALIGN); }

/* valloc: page aligned, usable >= size. */
static void check_valloc(struct hh_ctx *c) {
  const struct hh_api *a = c->api;
  size_t pg = c->page;
  size_t sizes[] = {0, 1, 100, pg - 1, pg, pg + 1, 5 * pg + 3, 1 << 20};
  void *p[sizeof sizes / sizeof *sizes];
  for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
    p[i] = a->valloc(sizes[i]);
    if (!HH_EXPECT(c, p[i] != NULL, "valloc(%zu) gave NULL", sizes[i])) continue;
    HH_EXPECT(c, hh_aligned(p[i], pg), "valloc(%zu) = %p, not page aligned",
              sizes[i], p[i]);
    writable(c, p[i], sizes[i], i, "valloc", sizes[i], 0);
  }
  for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) a->free(p[i]);
}

/* pvalloc: page aligned, usable >= size rounded up to a whole page.
 * pvalloc(0): glibc 2.36 rounds 0 up to 0 pages and returns a page-aligned
 * minimum block (malloc_usable_size 24 here), not a whole page; so for 0 the
 * check asserts non-NULL and page aligned only. */
static void check_pvalloc(struct hh_ctx *c) {
  const struct hh_api *a = c->api;
  size_t pg = c->page;
  size_t sizes[] = {0, 1, 100, pg - 1, pg, pg + 1, 5 * pg + 3, (1 << 20) + 1};
  void *p[sizeof sizes / sizeof *sizes];
  for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
    size_t n = sizes[i];
    size_t rounded = (n + pg - 1) / pg * pg;
    p[i] = a->pvalloc(n);
    if (!HH_EXPECT(c, p[i] != NULL, "pvalloc(%zu) gave NULL", n)) continue;
    HH_EXPECT(c, hh_aligned(p[i], pg), "pvalloc(%zu) = %p, not page aligned", n,
              p[i]);
    size_t u = a->malloc_usable_size(p[i]);
    HH_EXPECT(c, u >= rounded, "pvalloc(%zu): usable %zu < %zu (size rounded "
              "up to a page)", n, u, rounded);
    writable(c, p[i], rounded, i, "pvalloc", n, 0);
  }
  for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) a->free(p[i]);
}

const struct hh_check hh_checks_alignment[] = {
    {"align.min16_all_sizes", check_min16},
    {"align.posix_memalign", check_posix_memalign},
    {"align.aligned_alloc", check_aligned_alloc},
    {"align.memalign", check_memalign},
    {"align.valloc", check_valloc},
    {"align.pvalloc", check_pvalloc},
    {NULL, NULL},
};
