/* preload.foreign_blocks_*: blocks that glibc made itself (through its
 * __libc_* entry points, as a library that bypasses the hook or code that ran
 * before heaphook took over would) must work through the hooked names:
 * malloc_usable_size, realloc (content kept, grow and shrink), reallocarray,
 * free, free_sized, free_aligned_sized; hh_allocator_of says "foreign".
 *
 * Blocks are made in .preinit_array (before any library constructor, so
 * before heaphook's), in a constructor, in main before its first hooked
 * allocation and after it.
 *
 * Also the hooked blocks made in .preinit_array, when heaphook cannot serve
 * them from its allocator yet (bootstrap blocks): realloc moves them, free
 * keeps them from glibc (which would abort on them).
 *
 * usage: hh_preload_foreign OWNER [FOREIGN]
 *   OWNER    hh_allocator_of of ordinary blocks
 *   FOREIGN  hh_allocator_of of glibc's blocks (default "foreign"; "libc"
 *            when glibc is the allocator and nothing marks our blocks) */
#include <dlfcn.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heaphook/heaphook.h"

/* glibc's own allocator, exported under these names. */
extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_valloc(size_t);
extern void *__libc_pvalloc(size_t);
/* C23, not declared by glibc 2.36: heaphook exports them. */
extern void free_sized(void *, size_t) __attribute__((weak));
extern void free_aligned_sized(void *, size_t, size_t) __attribute__((weak));

static int passed, failed;
/* Through volatile, so that gcc does not reason about the overflow. */
static void *(*volatile reallocarray_fn)(void *, size_t, size_t) = reallocarray;
static volatile size_t half_of_everything = SIZE_MAX / 2;
static const char *owner, *foreign = "foreign";
static size_t (*glibc_usable_size)(void *);

static void check(int ok, const char *what, const char *detail) {
  if (ok) {
    passed++;
  } else {
    failed++;
    printf("FAIL %s: %s\n", what, detail);
  }
}

typedef struct block {
  const char *origin;
  unsigned char *p;
  size_t size, align;
  unsigned char tag;
} block;

#define MAX_BLOCKS 64
static block blocks[MAX_BLOCKS];
static int n_blocks;

static void fill(unsigned char *p, size_t n, unsigned char tag) {
  for (size_t i = 0; i < n; i++) p[i] = (unsigned char)(tag + i * 7);
}
static size_t first_diff(const unsigned char *p, size_t n, unsigned char tag) {
  for (size_t i = 0; i < n; i++) {
    if (p[i] != (unsigned char)(tag + i * 7)) return i;
  }
  return n;
}

/* Makes one glibc block and fills it. Also runs before main: no stdio. */
static void make(const char *origin, int kind, size_t size) {
  if (n_blocks == MAX_BLOCKS) abort();
  block *b = &blocks[n_blocks];
  b->origin = origin;
  b->size = size;
  b->align = 16;
  switch (kind) {
    case 0:
      b->p = __libc_malloc(size);
      break;
    case 1:
      b->p = __libc_calloc(1, size);
      break;
    case 2:
      b->p = __libc_memalign(64, size);
      b->align = 64;
      break;
    case 3:
      b->p = __libc_memalign(4096, size);
      b->align = 4096;
      break;
    case 4:
      b->p = __libc_valloc(size);
      b->align = 4096;
      break;
    case 5:
      b->p = __libc_pvalloc(size);
      b->align = 4096;
      break;
    default:
      b->p = __libc_realloc(__libc_malloc(8), size);
      break;
  }
  if (b->p == NULL) abort();
  b->tag = (unsigned char)(n_blocks * 31 + 5);
  fill(b->p, size, b->tag);
  n_blocks++;
}

static const size_t sizes[] = {1, 24, 1000, 70000, 300000}; /* 300000: an mmapped chunk in glibc */

static void make_all(const char *origin) {
  for (int kind = 0; kind < 7; kind++) {
    make(origin, kind, sizes[kind % 5]);
  }
  make(origin, 0, 300000);
  make(origin, 2, 200000);
}

/* Blocks from the hooked malloc before heaphook's constructor has run (in
 * .preinit_array heaphook cannot read its configuration yet): bootstrap
 * blocks, or the allocator's. */
#define EARLY 6
static unsigned char *early_hooked[EARLY];
static unsigned char *early_freed[EARLY];                         /* freed as they are */
static size_t early_size(int i) { return (size_t)40 << (2 * i); } /* 40 B .. 40 KiB */

static void preinit(int argc, char **argv, char **envp) {
  (void)argc, (void)argv, (void)envp;
  make_all("preinit_array");
  for (int i = 0; i < EARLY; i++) {
    early_hooked[i] = malloc(early_size(i));
    if (early_hooked[i] == NULL) abort();
    fill(early_hooked[i], early_size(i), (unsigned char)(i + 100));
    early_freed[i] = i % 2 ? calloc(1, early_size(i)) : malloc(early_size(i));
    if (early_freed[i] == NULL) abort();
  }
}
__attribute__((section(".preinit_array"), used)) static void (*preinit_entry)(int, char **,
                                                                              char **) = preinit;

__attribute__((constructor(101))) static void early(void) { make_all("constructor"); }

static void expect_owner(const char *what, const void *p, const char *want, const char *want2) {
  const char *o = hh_allocator_of(p);
  char detail[200];
  snprintf(detail, sizeof detail, "hh_allocator_of(%p) = %s, expected %s%s%s", p, o ? o : "(null)", want,
           want2 ? " or " : "", want2 ? want2 : "");
  check(o != NULL && (strcmp(o, want) == 0 || (want2 != NULL && strcmp(o, want2) == 0)), what, detail);
}

/* Uses one foreign block through every hooked function; i selects how it is
 * finally released. */
static void use(block *b, int i) {
  char what[160], detail[200];
  snprintf(what, sizeof what, "%s block %d (%zu bytes, align %zu)", b->origin, i, b->size, b->align);
  expect_owner(what, b->p, foreign, NULL);
  check((uintptr_t)b->p % b->align == 0, what, "misaligned");

  size_t usable = malloc_usable_size(b->p);
  size_t glibc = glibc_usable_size(b->p);
  snprintf(detail, sizeof detail, "malloc_usable_size = %zu, glibc says %zu, size %zu", usable, glibc,
           b->size);
  check(usable >= b->size && usable == glibc, what, detail);
  memset(b->p + b->size, 0xee, usable - b->size); /* every usable byte may be written */

  size_t d = first_diff(b->p, b->size, b->tag);
  snprintf(detail, sizeof detail, "content changed at byte %zu before any call", d);
  check(d == b->size, what, detail);

  /* Grow: content kept. */
  size_t grown = b->size * 3 + 100;
  unsigned char *g = realloc(b->p, grown);
  snprintf(detail, sizeof detail, "realloc to %zu returned NULL", grown);
  check(g != NULL, what, detail);
  if (g == NULL) return;
  d = first_diff(g, b->size, b->tag);
  snprintf(detail, sizeof detail, "realloc to %zu kept only %zu of %zu bytes", grown, d, b->size);
  check(d == b->size, what, detail);
  expect_owner(what, g, "foreign", owner);
  check(malloc_usable_size(g) >= grown, what, "usable size after growing is too small");
  fill(g, grown, b->tag);

  /* Shrink: the first bytes kept. */
  size_t shrunk = b->size / 2 + 1;
  unsigned char *s = realloc(g, shrunk);
  check(s != NULL, what, "realloc shrink returned NULL");
  if (s == NULL) return;
  d = first_diff(s, shrunk, b->tag);
  snprintf(detail, sizeof detail, "realloc shrink to %zu kept only %zu bytes", shrunk, d);
  check(d == shrunk, what, detail);
  check(malloc_usable_size(s) >= shrunk, what, "usable size after shrinking is too small");

  /* reallocarray: overflow leaves the block alone. */
  unsigned char *o = reallocarray_fn(s, half_of_everything, 4);
  check(o == NULL && first_diff(s, shrunk, b->tag) == shrunk, what,
        "reallocarray overflow touched the block");

  switch (i % 4) {
    case 0:
      free(s);
      break;
    case 1:
      if (free_sized != NULL)
        free_sized(s, shrunk);
      else
        check(0, what, "free_sized is not exported");
      break;
    case 2:
      check(realloc(s, 0) == NULL, what, "realloc(p, 0) did not return NULL");
      break;
    default:
      free(s);
      break;
  }
}

/* A foreign aligned block released with free_aligned_sized, untouched. */
static void aligned_release(block *b, int i) {
  char what[160];
  snprintf(what, sizeof what, "%s block %d (%zu bytes, align %zu) free_aligned_sized", b->origin, i, b->size,
           b->align);
  expect_owner(what, b->p, foreign, NULL);
  check(malloc_usable_size(b->p) >= b->size, what, "usable size too small");
  check(first_diff(b->p, b->size, b->tag) == b->size, what, "content changed");
  if (free_aligned_sized == NULL) {
    check(0, what, "free_aligned_sized is not exported");
    return;
  }
  free_aligned_sized(b->p, b->align, b->size);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s OWNER [FOREIGN]\n", argv[0]);
    return 2;
  }
  owner = argv[1];
  if (argc > 2) foreign = argv[2];
  if (hh_allocator_of == NULL) {
    puts("FAIL no heaphook library is preloaded\n0 passed, 1 failed");
    return 1;
  }
  /* glibc's malloc_usable_size (not the hooked one), to compare with. */
  void *libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
  glibc_usable_size = libc ? (size_t(*)(void *))dlsym(libc, "malloc_usable_size") : NULL;
  if (glibc_usable_size == NULL || glibc_usable_size == malloc_usable_size) {
    puts("FAIL cannot find glibc's own malloc_usable_size\n0 passed, 1 failed");
    return 1;
  }

  /* main, before its first hooked allocation (stdio has not run yet). */
  make_all("main before malloc");

  void *mine = malloc(100);
  expect_owner("main's first malloc", mine, owner, NULL);

  make_all("main after malloc");

  for (int i = 0; i < n_blocks; i++) {
    block *b = &blocks[i];
    if (b->align > 16 && i % 3 == 0) {
      aligned_release(b, i);
    } else {
      use(b, i);
    }
  }

  /* The hooked blocks of .preinit_array: usable, resizable, freeable. */
  for (int i = 0; i < EARLY; i++) {
    char what[96], detail[200];
    size_t size = early_size(i);
    snprintf(what, sizeof what, "hooked malloc(%zu) in .preinit_array", size);
    expect_owner(what, early_hooked[i], "bootstrap", owner);
    check(malloc_usable_size(early_hooked[i]) >= size, what, "usable size too small");
    unsigned char *p = realloc(early_hooked[i], size * 5);
    size_t d = p ? first_diff(p, size, (unsigned char)(i + 100)) : 0;
    snprintf(detail, sizeof detail, "realloc to %zu: %p, content kept for %zu of %zu bytes", size * 5,
             (void *)p, d, size);
    check(p != NULL && d == size, what, detail);
    if (p != NULL) expect_owner(what, p, owner, NULL);
    free(p);
  }

  /* ... and freed without realloc: glibc must not see them. */
  for (int i = 0; i < EARLY; i++) {
    char what[96];
    snprintf(what, sizeof what, "hooked %s(%zu) in .preinit_array, freed", i % 2 ? "calloc" : "malloc",
             early_size(i));
    expect_owner(what, early_freed[i], "bootstrap", owner);
    check(malloc_usable_size(early_freed[i]) >= early_size(i), what, "usable size too small");
    size_t nonzero = 0;
    for (size_t k = 0; i % 2 && k < early_size(i); k++) nonzero += early_freed[i][k] != 0;
    check(nonzero == 0, what, "calloc's block not zeroed");
    if (i % 3 == 0) {
      free(early_freed[i]);
    } else if (i % 3 == 1) {
      check(realloc(early_freed[i], 0) == NULL, what, "realloc(p, 0) did not return NULL");
    } else if (free_sized != NULL) {
      free_sized(early_freed[i], early_size(i));
    }
  }

  /* The hooked allocator still works afterwards. */
  void *again[16];
  for (int i = 0; i < 16; i++) {
    again[i] = malloc((size_t)(i + 1) * 100);
    expect_owner("malloc after the foreign blocks", again[i], owner, NULL);
  }
  for (int i = 0; i < 16; i++) free(again[i]);
  free(mine);
  printf("%d foreign blocks used\n", n_blocks);
  printf("%d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
