/* Alignment: 16 bytes for every block whatever its size (what glibc gives on
 * x86-64 and what C and C++ code assumes), the requested alignment from the
 * aligned entry points, and page alignment from valloc/pvalloc; each block
 * also has usable size >= the request and is writable across all of it. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "conformance.h"

/* Fills the whole usable size of p and reads it back; 0 on failure. */
static int writable(struct hh_ctx *c, void *p, size_t size, uint64_t tag, const char *call, size_t arg1,
                    size_t arg2) {
  size_t u = c->api->malloc_usable_size(p);
  if (!HH_EXPECT(c, u >= size, "%s(%zu, %zu) = %p: usable %zu < %zu", call, arg1, arg2, p, u, size)) return 0;
  hh_fill(p, u, tag);
  size_t bad = hh_verify(p, u, tag);
  return HH_EXPECT(c, bad == SIZE_MAX,
                   "%s(%zu, %zu) = %p: byte %zu of %zu "
                   "not kept",
                   call, arg1, arg2, p, bad, u);
}

static const size_t large_sizes[] = {4097,       8191,    8193,          65535,   65536,
                                     65537,      131071,  131072,        131073,  135168,
                                     262144 + 3, 1 << 20, (1 << 20) + 1, 4 << 20, (32 << 20) + 3};

/* Every way to get a block with no alignment request, or a request at or
 * below 16 (memalign/aligned_alloc 0, 1, 2, 4, 8; posix_memalign 8). */
enum {
  K_CALLOC_1N,
  K_CALLOC_N1,
  K_REALLOC_NULL,
  K_REALLOCARRAY_NULL,
  K_MEMALIGN,
  K_ALIGNED_ALLOC,
  K_POSIX_MEMALIGN,
  K_KINDS
};

static void *small_align_call(const struct hh_api *a, int kind, size_t n, char *what, size_t cap) {
  static const size_t low[] = {0, 1, 2, 4, 8};
  size_t al = low[n % 5];
  void *p = NULL;
  switch (kind) {
    case K_CALLOC_1N:
      snprintf(what, cap, "calloc(1, %zu)", n);
      return a->calloc(1, n);
    case K_CALLOC_N1:
      snprintf(what, cap, "calloc(%zu, 1)", n);
      return a->calloc(n, 1);
    case K_REALLOC_NULL:
      snprintf(what, cap, "realloc(NULL, %zu)", n);
      return a->realloc(NULL, n);
    case K_REALLOCARRAY_NULL:
      snprintf(what, cap, "reallocarray(NULL, %zu, 1)", n);
      return a->reallocarray(NULL, n, 1);
    case K_MEMALIGN:
      snprintf(what, cap, "memalign(%zu, %zu)", al, n);
      return a->memalign(al, n);
    case K_ALIGNED_ALLOC:
      snprintf(what, cap, "aligned_alloc(%zu, %zu)", al, n);
      return a->aligned_alloc(al, n);
    default:
      snprintf(what, cap, "posix_memalign(&p, 8, %zu)", n);
      return a->posix_memalign(&p, 8, n) == 0 ? p : NULL;
  }
}

/* Every block is 16-aligned whatever its size: for each size 0..4096 a malloc
 * block and one from another entry point (all kept live, so blocks of
 * neighbouring size classes sit side by side), one block realloc'ed through
 * every size, and a set of large sizes around common size-class and mmap
 * thresholds. */
static void check_min16(struct hh_ctx *c) {
  const struct hh_api *a = c->api;
  enum { N = 4097 };
  static void *live[2 * N];
  static size_t live_size[2 * N];
  char what[64];
  int nl = 0;
  void *rv = NULL;
  for (size_t n = 0; n < N && hh_failed(c) < 20; n++) {
    void *p = a->malloc(n);
    if (!HH_EXPECT(c, p != NULL, "malloc(%zu) gave NULL", n)) break;
    HH_EXPECT(c, hh_aligned(p, 16), "malloc(%zu) = %p, aligned only to %zu", n, p, hh_alignment_of(p));
    live_size[nl] = n;
    live[nl++] = p;
    hh_fill(p, n, n);
    int kind = (int)(n % K_KINDS);
    void *q = small_align_call(a, kind, n, what, sizeof what);
    if (!HH_EXPECT(c, q != NULL, "%s gave NULL", what)) break;
    HH_EXPECT(c, hh_aligned(q, 16), "%s = %p, aligned only to %zu", what, q, hh_alignment_of(q));
    live_size[nl] = n;
    live[nl++] = q;
    hh_fill(q, n, n + N);
    /* realloc's results, growing one block through every size. */
    void *r = a->realloc(rv, n + 1);
    if (!HH_EXPECT(c, r != NULL, "realloc(%p, %zu) gave NULL", rv, n + 1)) break;
    rv = r;
    HH_EXPECT(c, hh_aligned(rv, 16), "realloc(.., %zu) = %p, aligned only to %zu", n + 1, rv,
              hh_alignment_of(rv));
  }
  for (int i = 0; i < nl; i++) {
    size_t n = live_size[i];
    size_t bad = hh_verify(live[i], n, (i % 2) ? n + N : n);
    HH_EXPECT(c, bad == SIZE_MAX,
              "block %p of size %zu changed at %zu while "
              "all were live (overlap?)",
              live[i], n, bad);
    a->free(live[i]);
  }
  a->free(rv);

  for (size_t i = 0; i < sizeof large_sizes / sizeof *large_sizes; i++) {
    size_t n = large_sizes[i];
    void *p = a->malloc(n);
    HH_EXPECT(c, p && hh_aligned(p, 16), "malloc(%zu) = %p, not 16-aligned", n, p);
    void *r = p ? a->realloc(p, n * 2 + 1) : NULL;
    HH_EXPECT(c, r && hh_aligned(r, 16), "realloc(.., %zu) = %p, not 16-aligned", n * 2 + 1, r);
    a->free(r ? r : p);
    for (int kind = 0; kind < K_KINDS; kind++) {
      void *q = small_align_call(a, kind, n, what, sizeof what);
      HH_EXPECT(c, q && hh_aligned(q, 16), "%s = %p, not 16-aligned", what, q);
      a->free(q);
    }
  }
}

/* The three aligned entry points at every power of two 8..65536 (posix_memalign
 * from sizeof(void *)): aligned to max(align, 16), usable >= size, writable.
 * A batch of blocks per alignment is kept live together, then freed in an
 * interleaved order. */
enum { AL_POSIX, AL_ALIGNED_ALLOC, AL_MEMALIGN };
static const char *const al_names[] = {"posix_memalign", "aligned_alloc", "memalign"};

static void *aligned_call(const struct hh_api *a, int which, size_t al, size_t n) {
  void *p = NULL;
  switch (which) {
    case AL_POSIX:
      if (a->posix_memalign(&p, al, n) != 0) p = NULL;
      return p;
    case AL_ALIGNED_ALLOC:
      return a->aligned_alloc(al, n);
    default:
      return a->memalign(al, n);
  }
}

static void check_aligned_entry(struct hh_ctx *c, int which) {
  const struct hh_api *a = c->api;
  enum { PER_ALIGN = 12 };
  for (size_t al = 8; al <= 65536; al *= 2) {
    size_t sizes[PER_ALIGN] = {0, 1, 15, 16, al - 1, al, al + 1, 3 * al + 5, 100, 4096, 100000, 1 << 20};
    void *p[PER_ALIGN];
    size_t want = al < 16 ? 16 : al;
    for (int i = 0; i < PER_ALIGN; i++) {
      p[i] = aligned_call(a, which, al, sizes[i]);
      if (!HH_EXPECT(c, p[i] != NULL, "%s(%zu, %zu) failed", al_names[which], al, sizes[i])) continue;
      HH_EXPECT(c, hh_aligned(p[i], want),
                "%s(%zu, %zu) = %p, aligned only "
                "to %zu",
                al_names[which], al, sizes[i], p[i], hh_alignment_of(p[i]));
      writable(c, p[i], sizes[i], al * 64 + (size_t)i, al_names[which], al, sizes[i]);
    }
    /* All still intact while live together. */
    for (int i = 0; i < PER_ALIGN; i++) {
      if (!p[i]) continue;
      size_t u = a->malloc_usable_size(p[i]);
      size_t bad = hh_verify(p[i], u, al * 64 + (size_t)i);
      HH_EXPECT(c, bad == SIZE_MAX,
                "%s(%zu, %zu) block changed at %zu while "
                "others were live",
                al_names[which], al, sizes[i], bad);
    }
    for (int i = 0; i < PER_ALIGN; i += 2) a->free(p[i]);
    for (int i = PER_ALIGN - 1; i > 0; i -= 2) a->free(p[i]);
    if (hh_failed(c) > 20) return;
  }
}

static void check_posix_memalign(struct hh_ctx *c) { check_aligned_entry(c, AL_POSIX); }
static void check_aligned_alloc(struct hh_ctx *c) { check_aligned_entry(c, AL_ALIGNED_ALLOC); }
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
    HH_EXPECT(c, hh_aligned(p[i], pg), "valloc(%zu) = %p, not page aligned", sizes[i], p[i]);
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
    HH_EXPECT(c, hh_aligned(p[i], pg), "pvalloc(%zu) = %p, not page aligned", n, p[i]);
    size_t u = a->malloc_usable_size(p[i]);
    HH_EXPECT(c, u >= rounded,
              "pvalloc(%zu): usable %zu < %zu (size rounded "
              "up to a page)",
              n, u, rounded);
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
