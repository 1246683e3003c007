/* Semantics of the edge cases: zero sizes, NULL, overflow, impossible sizes,
 * invalid alignments, and errno.
 *
 * The reference is glibc 2.36 as measured on Debian 12 (plain run of
 * hh_conformance, no preload). Where glibc's behaviour is not the obvious
 * one, the comment above the check says what glibc does; the check asserts
 * exactly that. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "conformance.h"

#define SENTINEL_PTR ((void *)(uintptr_t)0x5e5e5e50)

/* A request nothing can satisfy must give NULL with errno ENOMEM; a non-NULL
 * result is reported with its usable size (the TLSF seed returned a small
 * block for huge sizes) and freed. */
static void expect_enomem(struct hh_ctx *c, void *r, int err, const char *call) {
  const struct hh_api *a = c->api;
  if (r != NULL) {
    hh_fail(c, "%s returned %p (usable %zu), want NULL", call, r, a->malloc_usable_size(r));
    a->free(r);
    return;
  }
  HH_EXPECT(c, err == ENOMEM, "%s: NULL with errno %d, want ENOMEM (%d)", call, err, ENOMEM);
}

/* malloc(0) gives a unique, non-NULL, freeable pointer (glibc: a minimum
 * chunk, usable size 24); so do realloc(NULL, 0) and reallocarray(NULL, 0, 0),
 * which are malloc(0). */
static void check_malloc0(struct hh_ctx *c) {
  const struct hh_api *a = c->api;
  void *p = a->malloc(0), *q = a->malloc(0);
  HH_EXPECT(c, p != NULL && q != NULL, "malloc(0) gave %p and %p, want non-NULL", p, q);
  HH_EXPECT(c, p == NULL || p != q, "two malloc(0) calls both gave %p", p);
  void *r = a->realloc(NULL, 0);
  HH_EXPECT(c, r != NULL, "realloc(NULL, 0) gave NULL, want a malloc(0) block");
  HH_EXPECT(c, r == NULL || (r != p && r != q), "realloc(NULL, 0) gave %p, already live", r);
  void *s = a->reallocarray(NULL, 0, 0);
  HH_EXPECT(c, s != NULL, "reallocarray(NULL, 0, 0) gave NULL");
  void *blocks[] = {p, q, r, s};
  for (int i = 0; i < 4; i++) {
    if (blocks[i] == NULL) continue;
    size_t u = a->malloc_usable_size(blocks[i]);
    hh_fill(blocks[i], u, (uint64_t)i);
  }
  for (int i = 0; i < 4; i++) {
    if (blocks[i] == NULL) continue;
    size_t u = a->malloc_usable_size(blocks[i]);
    size_t bad = hh_verify(blocks[i], u, (uint64_t)i);
    HH_EXPECT(c, bad == SIZE_MAX, "zero-size block %d (%p, usable %zu) overwritten at %zu", i, blocks[i], u,
              bad);
  }
  for (int i = 0; i < 4; i++) a->free(blocks[i]);
}

/* free(NULL) does nothing and leaves errno alone. */
static void check_free_null(struct hh_ctx *c) {
  errno = HH_ERRNO_SENTINEL;
  c->api->free(NULL);
  int e = errno;
  HH_EXPECT(c, e == HH_ERRNO_SENTINEL, "free(NULL) changed errno to %d", e);
}

static void check_usable_null(struct hh_ctx *c) {
  size_t u = c->api->malloc_usable_size(NULL);
  HH_EXPECT(c, u == 0, "malloc_usable_size(NULL) = %zu, want 0", u);
}

/* realloc(NULL, n) is malloc(n). */
static void check_realloc_null(struct hh_ctx *c) {
  const struct hh_api *a = c->api;
  static const size_t sizes[] = {1, 24, 100, 4096, 65536, 1 << 20, 3 << 20};
  for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
    size_t n = sizes[i];
    void *p = a->realloc(NULL, n);
    if (!HH_EXPECT(c, p != NULL, "realloc(NULL, %zu) gave NULL", n)) continue;
    size_t u = a->malloc_usable_size(p);
    HH_EXPECT(c, u >= n, "realloc(NULL, %zu): usable %zu", n, u);
    hh_fill(p, u, n);
    size_t bad = hh_verify(p, u, n);
    HH_EXPECT(c, bad == SIZE_MAX, "realloc(NULL, %zu): byte %zu not kept", n, bad);
    a->free(p);
  }
}

/* realloc(p, 0) with p != NULL frees p and returns NULL, errno untouched
 * (glibc 2.36 REALLOC_ZERO_BYTES_FREES); reallocarray(p, 0, n) is the same
 * call. Checked on small, mmapped and over-aligned blocks. */
static void check_realloc_zero(struct hh_ctx *c) {
  const struct hh_api *a = c->api;
  static const size_t sizes[] = {1, 100, 4096, 1 << 20};
  for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
    size_t n = sizes[i];
    void *p = a->malloc(n);
    if (!HH_EXPECT(c, p != NULL, "malloc(%zu) gave NULL", n)) continue;
    errno = HH_ERRNO_SENTINEL;
    void *r = a->realloc(p, 0);
    int e = errno;
    HH_EXPECT(c, r == NULL, "realloc(malloc(%zu), 0) = %p, want NULL (freed)", n, r);
    HH_EXPECT(c, e == HH_ERRNO_SENTINEL, "realloc(p, 0) changed errno to %d", e);
    if (r != NULL) a->free(r);

    p = a->aligned_alloc(4096, n);
    if (!HH_EXPECT(c, p != NULL, "aligned_alloc(4096, %zu) gave NULL", n)) continue;
    r = a->realloc(p, 0);
    HH_EXPECT(c, r == NULL, "realloc(aligned_alloc(4096, %zu), 0) = %p, want NULL", n, r);
    if (r != NULL) a->free(r);

    p = a->malloc(n);
    if (!HH_EXPECT(c, p != NULL, "malloc(%zu) gave NULL", n)) continue;
    errno = HH_ERRNO_SENTINEL;
    r = a->reallocarray(p, 0, 16);
    e = errno;
    HH_EXPECT(c, r == NULL, "reallocarray(p, 0, 16) = %p, want NULL (freed)", r);
    HH_EXPECT(c, e == HH_ERRNO_SENTINEL, "reallocarray(p, 0, 16) changed errno to %d", e);
    if (r != NULL) a->free(r);
  }
}

/* calloc with a zero count or size gives a freeable non-NULL block, even when
 * the other factor is SIZE_MAX (the product is 0, no overflow). */
static void check_calloc_zero(struct hh_ctx *c) {
  const struct hh_api *a = c->api;
  static const size_t args[][2] = {{0, 0},  {0, 1},        {1, 0},        {0, 64},
                                   {64, 0}, {0, SIZE_MAX}, {SIZE_MAX, 0}, {0, 1 << 20}};
  for (size_t i = 0; i < sizeof args / sizeof *args; i++) {
    errno = HH_ERRNO_SENTINEL;
    void *p = a->calloc(args[i][0], args[i][1]);
    int e = errno;
    if (!HH_EXPECT(c, p != NULL, "calloc(%zu, %zu) gave NULL (errno %d)", args[i][0], args[i][1], e))
      continue;
    HH_EXPECT(c, e == HH_ERRNO_SENTINEL, "calloc(%zu, %zu) changed errno to %d", args[i][0], args[i][1], e);
    a->free(p);
  }
}

/* calloc whose product overflows: NULL and ENOMEM (glibc), never a block. */
static void check_overflow_calloc(struct hh_ctx *c) {
  const struct hh_api *a = c->api;
  static const size_t args[][2] = {
      {SIZE_MAX / 2 + 1, 2},
      {2, SIZE_MAX / 2 + 1},
      {(size_t)1 << 33, (size_t)1 << 33},
      {SIZE_MAX, SIZE_MAX},
      {((size_t)1 << 32) + 1, (size_t)1 << 32},
      {SIZE_MAX / 3 + 1, 3},
      {SIZE_MAX, 2},
  };
  char call[96];
  for (size_t i = 0; i < sizeof args / sizeof *args; i++) {
    errno = 0;
    void *r = a->calloc(args[i][0], args[i][1]);
    int e = errno;
    snprintf(call, sizeof call, "calloc(%zu, %zu)", args[i][0], args[i][1]);
    expect_enomem(c, r, e, call);
  }
}

/* reallocarray whose product overflows: NULL, ENOMEM, and the old block is
 * still live with its content (glibc checks the product before touching the
 * block). */
static void check_overflow_reallocarray(struct hh_ctx *c) {
  const struct hh_api *a = c->api;
  static const size_t args[][2] = {
      {SIZE_MAX / 2 + 1, 2}, {(size_t)1 << 33, (size_t)1 << 33}, {SIZE_MAX, SIZE_MAX}, {2, SIZE_MAX / 2 + 1}};
  char call[96];
  for (size_t i = 0; i < sizeof args / sizeof *args; i++) {
    errno = 0;
    void *r = a->reallocarray(NULL, args[i][0], args[i][1]);
    int e = errno;
    snprintf(call, sizeof call, "reallocarray(NULL, %zu, %zu)", args[i][0], args[i][1]);
    expect_enomem(c, r, e, call);

    void *p = a->malloc(200);
    if (!HH_EXPECT(c, p != NULL, "malloc(200) gave NULL")) return;
    hh_fill(p, 200, 77 + i);
    errno = 0;
    r = a->reallocarray(p, args[i][0], args[i][1]);
    e = errno;
    snprintf(call, sizeof call, "reallocarray(p, %zu, %zu)", args[i][0], args[i][1]);
    if (r != NULL) {
      hh_fail(c, "%s returned %p (usable %zu), want NULL", call, r, a->malloc_usable_size(r));
      a->free(r);
      continue; /* p may be gone */
    }
    HH_EXPECT(c, e == ENOMEM, "%s: NULL with errno %d, want ENOMEM", call, e);
    size_t bad = hh_verify(p, 200, 77 + i);
    HH_EXPECT(c, bad == SIZE_MAX, "%s failed but changed the old block at %zu", call, bad);
    /* The old block must still be a live block of at least its size. */
    HH_EXPECT(c, a->malloc_usable_size(p) >= 200, "%s failed; old block usable size now %zu", call,
              a->malloc_usable_size(p));
    a->free(p);
  }
}

/* Sizes no allocator can provide. glibc: NULL + ENOMEM for each. */
static void check_huge_malloc(struct hh_ctx *c) {
  const struct hh_api *a = c->api;
  static const size_t sizes[] = {SIZE_MAX,        SIZE_MAX - 1,     SIZE_MAX - 15, SIZE_MAX - 4095,
                                 SIZE_MAX / 2,    SIZE_MAX / 2 + 1, PTRDIFF_MAX,   (size_t)PTRDIFF_MAX - 4095,
                                 (size_t)1 << 62, (size_t)1 << 56};
  char call[64];
  for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
    errno = 0;
    void *r = a->malloc(sizes[i]);
    int e = errno;
    snprintf(call, sizeof call, "malloc(%zu)", sizes[i]);
    expect_enomem(c, r, e, call);
  }
}

/* A failed realloc returns NULL with ENOMEM and leaves the old block live and
 * intact; checked for small, mmapped, and over-aligned old blocks. */
static void check_huge_realloc(struct hh_ctx *c) {
  const struct hh_api *a = c->api;
  static const size_t sizes[] = {SIZE_MAX, SIZE_MAX - 4095, SIZE_MAX / 2, PTRDIFF_MAX, (size_t)1 << 62};
  static const size_t old_sizes[] = {100, 5000, 1 << 20};
  char call[96];
  for (size_t k = 0; k < 3 * (sizeof old_sizes / sizeof *old_sizes); k++) {
    size_t n = old_sizes[k / 3];
    void *p = k % 3 == 0 ? a->malloc(n) : k % 3 == 1 ? a->aligned_alloc(256, n) : a->calloc(1, n);
    if (!HH_EXPECT(c, p != NULL, "allocation of %zu gave NULL", n)) return;
    hh_fill(p, n, k);
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
      errno = 0;
      void *r = a->realloc(p, sizes[i]);
      int e = errno;
      snprintf(call, sizeof call, "realloc(<%zu-byte block>, %zu)", n, sizes[i]);
      if (r != NULL) {
        hh_fail(c, "%s returned %p (usable %zu), want NULL", call, r, a->malloc_usable_size(r));
        p = r; /* p was consumed */
        break;
      }
      HH_EXPECT(c, e == ENOMEM, "%s: NULL with errno %d, want ENOMEM", call, e);
      size_t bad = hh_verify(p, n, k);
      HH_EXPECT(c, bad == SIZE_MAX, "%s failed but the old block changed at offset %zu", call, bad);
    }
    HH_EXPECT(c, a->malloc_usable_size(p) >= n, "after failed reallocs the old %zu-byte block has usable %zu",
              n, a->malloc_usable_size(p));
    a->free(p);
  }
}

/* Impossible sizes through the aligned and page entry points.
 * glibc: NULL + ENOMEM; posix_memalign returns ENOMEM and leaves *out alone.
 * glibc 2.36 also sets errno to ENOMEM inside posix_memalign on this path
 * (its _int_memalign sets it; POSIX says posix_memalign reports only through
 * its return value), so errno is accepted either untouched or ENOMEM. */
static void check_huge_aligned(struct hh_ctx *c) {
  const struct hh_api *a = c->api;
  size_t pg = c->page;
  struct {
    const char *call;
    int which; /* 0 aligned_alloc, 1 memalign, 2 valloc, 3 pvalloc */
    size_t align, size;
  } cases[] = {
      {"aligned_alloc(64, SIZE_MAX)", 0, 64, SIZE_MAX},
      {"aligned_alloc(4096, SIZE_MAX - 4095)", 0, 4096, SIZE_MAX - 4095},
      {"aligned_alloc(16, SIZE_MAX / 2)", 0, 16, SIZE_MAX / 2},
      {"aligned_alloc(65536, PTRDIFF_MAX)", 0, 65536, PTRDIFF_MAX},
      /* A valid power of two that no address space can honour: ENOMEM. */
      {"aligned_alloc(SIZE_MAX / 2 + 1, 100)", 0, SIZE_MAX / 2 + 1, 100},
      {"memalign(64, SIZE_MAX)", 1, 64, SIZE_MAX},
      {"memalign(4096, SIZE_MAX - 4095)", 1, 4096, SIZE_MAX - 4095},
      {"memalign(SIZE_MAX / 2 + 1, 100)", 1, SIZE_MAX / 2 + 1, 100},
      {"valloc(SIZE_MAX)", 2, 0, SIZE_MAX},
      {"valloc(SIZE_MAX / 2)", 2, 0, SIZE_MAX / 2},
      {"valloc(SIZE_MAX - page + 1)", 2, 0, SIZE_MAX - pg + 1},
      {"pvalloc(SIZE_MAX)", 3, 0, SIZE_MAX},
      /* Rounding up to a page overflows: glibc checks it (ENOMEM). */
      {"pvalloc(SIZE_MAX - page + 2)", 3, 0, SIZE_MAX - pg + 2},
      {"pvalloc(SIZE_MAX - page + 1)", 3, 0, SIZE_MAX - pg + 1},
      {"pvalloc(SIZE_MAX / 2)", 3, 0, SIZE_MAX / 2},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    errno = 0;
    void *r;
    switch (cases[i].which) {
      case 0:
        r = a->aligned_alloc(cases[i].align, cases[i].size);
        break;
      case 1:
        r = a->memalign(cases[i].align, cases[i].size);
        break;
      case 2:
        r = a->valloc(cases[i].size);
        break;
      default:
        r = a->pvalloc(cases[i].size);
        break;
    }
    int e = errno;
    expect_enomem(c, r, e, cases[i].call);
  }

  static const size_t pm[][2] = {{4096, SIZE_MAX},
                                 {8, SIZE_MAX},
                                 {64, SIZE_MAX / 2},
                                 {65536, SIZE_MAX - 65535},
                                 {SIZE_MAX / 2 + 1, 100}};
  for (size_t i = 0; i < sizeof pm / sizeof *pm; i++) {
    void *out = SENTINEL_PTR;
    errno = HH_ERRNO_SENTINEL;
    int rc = a->posix_memalign(&out, pm[i][0], pm[i][1]);
    int e = errno;
    if (rc == 0) {
      hh_fail(c, "posix_memalign(&p, %zu, %zu) succeeded with %p (usable %zu)", pm[i][0], pm[i][1], out,
              out ? a->malloc_usable_size(out) : (size_t)0);
      if (out != SENTINEL_PTR) a->free(out);
      continue;
    }
    HH_EXPECT(c, rc == ENOMEM,
              "posix_memalign(&p, %zu, %zu) returned %d, "
              "want ENOMEM",
              pm[i][0], pm[i][1], rc);
    HH_EXPECT(c, out == SENTINEL_PTR, "posix_memalign(&p, %zu, %zu) failed but set *out to %p", pm[i][0],
              pm[i][1], out);
    HH_EXPECT(c, e == HH_ERRNO_SENTINEL || e == ENOMEM,
              "posix_memalign(&p, %zu, %zu) failed and set errno to %d "
              "(want untouched, or ENOMEM as glibc does)",
              pm[i][0], pm[i][1], e);
  }
}

/* posix_memalign with an alignment that is not a power of two multiple of
 * sizeof(void *): EINVAL, *out untouched, errno untouched. glibc tests the
 * alignment before the size, so EINVAL wins over an impossible size. */
static void check_posix_memalign_einval(struct hh_ctx *c) {
  const struct hh_api *a = c->api;
  static const size_t aligns[] = {0,
                                  1,
                                  2,
                                  4,
                                  7,
                                  12,
                                  24,
                                  3 * sizeof(void *),
                                  sizeof(void *) + 1,
                                  48,
                                  100,
                                  4097,
                                  65535,
                                  SIZE_MAX / 2 + 2,
                                  SIZE_MAX};
  static const size_t sizes[] = {0, 1, 100, 4096, SIZE_MAX};
  for (size_t i = 0; i < sizeof aligns / sizeof *aligns; i++) {
    for (size_t j = 0; j < sizeof sizes / sizeof *sizes; j++) {
      void *out = SENTINEL_PTR;
      errno = HH_ERRNO_SENTINEL;
      int rc = a->posix_memalign(&out, aligns[i], sizes[j]);
      int e = errno;
      if (rc == 0 && out != SENTINEL_PTR) a->free(out);
      HH_EXPECT(c, rc == EINVAL, "posix_memalign(&p, %zu, %zu) returned %d, want EINVAL (%d)", aligns[i],
                sizes[j], rc, EINVAL);
      HH_EXPECT(c, out == SENTINEL_PTR, "posix_memalign(&p, %zu, %zu) set *out to %p on EINVAL", aligns[i],
                sizes[j], out);
      HH_EXPECT(c, e == HH_ERRNO_SENTINEL, "posix_memalign(&p, %zu, %zu) set errno to %d", aligns[i],
                sizes[j], e);
    }
  }
}

/* aligned_alloc and memalign with alignments that are not powers of two or
 * are below 16, as glibc 2.36 (measured on this machine) does them:
 *   - aligned_alloc is the same function as memalign in 2.36 (the EINVAL
 *     check for non-power-of-two alignments arrived in glibc 2.38);
 *   - alignment 0..16: a plain malloc block (16-aligned, which is asserted
 *     by align.min16_all_sizes, not here);
 *   - alignment not a power of two: rounded up to the next power of two
 *     (24 -> 32, 100 -> 128, 4097 -> 8192), success, errno untouched;
 *   - alignment > SIZE_MAX / 2 + 1: NULL with EINVAL;
 *   - alignment SIZE_MAX / 2 + 1 is a power of two: NULL with ENOMEM (in
 *     check_huge_aligned). */
static void check_nonpow2(struct hh_ctx *c, int memalign_) {
  const struct hh_api *a = c->api;
  const char *fn = memalign_ ? "memalign" : "aligned_alloc";
  void *(*f)(size_t, size_t) = memalign_ ? a->memalign : a->aligned_alloc;
  static const size_t aligns[] = {0, 1, 2, 3, 4, 7, 8, 12, 24, 48, 96, 100, 1000, 4097, 40000, 65535};
  static const size_t sizes[] = {0, 1, 100, 5000};
  for (size_t i = 0; i < sizeof aligns / sizeof *aligns; i++) {
    /* The alignment glibc rounds up to; the 16-byte minimum is left to
     * align.min16_all_sizes so that one defect fails one check. */
    size_t want = hh_next_pow2(aligns[i]);
    for (size_t j = 0; j < sizeof sizes / sizeof *sizes; j++) {
      errno = HH_ERRNO_SENTINEL;
      void *p = f(aligns[i], sizes[j]);
      int e = errno;
      if (!HH_EXPECT(c, p != NULL,
                     "%s(%zu, %zu) gave NULL (errno %d); glibc 2.36 rounds the "
                     "alignment up to %zu",
                     fn, aligns[i], sizes[j], e, want < 16 ? 16 : want))
        continue;
      HH_EXPECT(c, e == HH_ERRNO_SENTINEL, "%s(%zu, %zu) changed errno to %d", fn, aligns[i], sizes[j], e);
      HH_EXPECT(c, hh_aligned(p, want), "%s(%zu, %zu) = %p aligned to %zu, want %zu", fn, aligns[i], sizes[j],
                p, hh_alignment_of(p), want);
      size_t u = a->malloc_usable_size(p);
      HH_EXPECT(c, u >= sizes[j], "%s(%zu, %zu): usable %zu", fn, aligns[i], sizes[j], u);
      hh_fill(p, u, i * 16 + j);
      size_t bad = hh_verify(p, u, i * 16 + j);
      HH_EXPECT(c, bad == SIZE_MAX, "%s(%zu, %zu): byte %zu not kept", fn, aligns[i], sizes[j], bad);
      a->free(p);
    }
  }
  static const size_t bad_aligns[] = {SIZE_MAX / 2 + 2, SIZE_MAX - 1, SIZE_MAX};
  for (size_t i = 0; i < sizeof bad_aligns / sizeof *bad_aligns; i++) {
    errno = 0;
    void *p = f(bad_aligns[i], 100);
    int e = errno;
    if (p != NULL) {
      hh_fail(c, "%s(%zu, 100) = %p, want NULL/EINVAL", fn, bad_aligns[i], p);
      a->free(p);
      continue;
    }
    HH_EXPECT(c, e == EINVAL, "%s(%zu, 100): NULL with errno %d, want EINVAL", fn, bad_aligns[i], e);
  }
}

static void check_aligned_alloc_nonpow2(struct hh_ctx *c) { check_nonpow2(c, 0); }
static void check_memalign_nonpow2(struct hh_ctx *c) { check_nonpow2(c, 1); }

/* Every entry point leaves errno alone when it succeeds: errno is set to a
 * sentinel before each call and compared after. Sizes cover small, large
 * (glibc mmaps from 128 KiB) and resizes that stay in place or move. */
static void check_errno_success(struct hh_ctx *c) {
  const struct hh_api *a = c->api;
  int e;
#define SUCCEEDS(expr, what)                                                 \
  do {                                                                       \
    errno = HH_ERRNO_SENTINEL;                                               \
    expr;                                                                    \
    e = errno;                                                               \
    HH_EXPECT(c, e == HH_ERRNO_SENTINEL, "%s changed errno to %d", what, e); \
  } while (0)
  static const size_t sizes[] = {0, 1, 100, 4096, 200000, 4 << 20};
  char what[96];
  for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
    size_t n = sizes[i];
    void *p, *q;
    int rc;
    snprintf(what, sizeof what, "malloc(%zu)", n);
    SUCCEEDS(p = a->malloc(n), what);
    if (!HH_EXPECT(c, p != NULL, "%s gave NULL", what)) return;
    snprintf(what, sizeof what, "malloc_usable_size(<%zu>)", n);
    SUCCEEDS((void)a->malloc_usable_size(p), what);
    snprintf(what, sizeof what, "realloc(<%zu>, %zu)", n, 2 * n + 1);
    SUCCEEDS(q = a->realloc(p, 2 * n + 1), what);
    if (!HH_EXPECT(c, q != NULL, "%s gave NULL", what)) return;
    p = q;
    snprintf(what, sizeof what, "realloc(<%zu>, %zu)", 2 * n + 1, n / 2 + 1);
    SUCCEEDS(q = a->realloc(p, n / 2 + 1), what);
    if (!HH_EXPECT(c, q != NULL, "%s gave NULL", what)) return;
    p = q;
    snprintf(what, sizeof what, "reallocarray(<%zu>, %zu, 3)", n / 2 + 1, n);
    SUCCEEDS(q = a->reallocarray(p, n + 1, 3), what);
    if (!HH_EXPECT(c, q != NULL, "%s gave NULL", what)) return;
    p = q;
    snprintf(what, sizeof what, "free(<%zu>)", n);
    SUCCEEDS(a->free(p), what);

    snprintf(what, sizeof what, "realloc(NULL, %zu)", n);
    SUCCEEDS(p = a->realloc(NULL, n), what);
    if (!HH_EXPECT(c, p != NULL, "%s gave NULL", what)) return;
    snprintf(what, sizeof what, "realloc(<%zu>, 0)", n);
    SUCCEEDS(q = a->realloc(p, 0), what);
    if (q != NULL) a->free(q);

    snprintf(what, sizeof what, "calloc(%zu, 3)", n);
    SUCCEEDS(p = a->calloc(n, 3), what);
    if (!HH_EXPECT(c, p != NULL, "%s gave NULL", what)) return;
    SUCCEEDS(a->free(p), "free(<calloc>)");

    static const size_t aligns[] = {8, 16, 64, 4096, 65536};
    for (size_t j = 0; j < sizeof aligns / sizeof *aligns; j++) {
      size_t al = aligns[j];
      snprintf(what, sizeof what, "posix_memalign(&p, %zu, %zu)", al, n);
      SUCCEEDS(rc = a->posix_memalign(&p, al, n), what);
      if (!HH_EXPECT(c, rc == 0, "%s returned %d", what, rc)) return;
      snprintf(what, sizeof what, "realloc(<posix_memalign %zu>, %zu)", al, n + 5000);
      SUCCEEDS(q = a->realloc(p, n + 5000), what);
      if (!HH_EXPECT(c, q != NULL, "%s gave NULL", what)) return;
      SUCCEEDS(a->free(q), "free(<realloc of aligned>)");
      snprintf(what, sizeof what, "aligned_alloc(%zu, %zu)", al, n);
      SUCCEEDS(p = a->aligned_alloc(al, n), what);
      if (!HH_EXPECT(c, p != NULL, "%s gave NULL", what)) return;
      SUCCEEDS(a->free(p), "free(<aligned_alloc>)");
      snprintf(what, sizeof what, "memalign(%zu, %zu)", al, n);
      SUCCEEDS(p = a->memalign(al, n), what);
      if (!HH_EXPECT(c, p != NULL, "%s gave NULL", what)) return;
      SUCCEEDS(a->free(p), "free(<memalign>)");
    }
    snprintf(what, sizeof what, "valloc(%zu)", n);
    SUCCEEDS(p = a->valloc(n), what);
    if (!HH_EXPECT(c, p != NULL, "%s gave NULL", what)) return;
    SUCCEEDS(a->free(p), "free(<valloc>)");
    snprintf(what, sizeof what, "pvalloc(%zu)", n);
    SUCCEEDS(p = a->pvalloc(n), what);
    if (!HH_EXPECT(c, p != NULL, "%s gave NULL", what)) return;
    SUCCEEDS(a->free(p), "free(<pvalloc>)");
  }
  SUCCEEDS(a->free(NULL), "free(NULL)");
  SUCCEEDS((void)a->malloc_usable_size(NULL), "malloc_usable_size(NULL)");
#undef SUCCEEDS
}

const struct hh_check hh_checks_semantics[] = {
    {"malloc0.unique", check_malloc0},
    {"free.null", check_free_null},
    {"usable.null", check_usable_null},
    {"realloc.null_is_malloc", check_realloc_null},
    {"realloc.zero_frees", check_realloc_zero},
    {"calloc.zero_count", check_calloc_zero},
    {"overflow.calloc", check_overflow_calloc},
    {"overflow.reallocarray", check_overflow_reallocarray},
    {"huge.malloc", check_huge_malloc},
    {"huge.realloc_keeps_block", check_huge_realloc},
    {"huge.aligned", check_huge_aligned},
    {"posix_memalign.einval", check_posix_memalign_einval},
    {"aligned_alloc.nonpow2", check_aligned_alloc_nonpow2},
    {"memalign.nonpow2", check_memalign_nonpow2},
    {"errno.kept_on_success", check_errno_success},
    {NULL, NULL},
};
