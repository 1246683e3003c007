/* Blocks glibc makes itself and hands to the program, which frees or
 * resizes them through the malloc family (strdup, asprintf, getline,
 * open_memstream, realpath, getcwd), and glibc's malloc extras that no
 * preload library takes over (malloc_trim, mallinfo2, mallopt,
 * malloc_info): under a preload, glibc's own calls reach the interposed
 * malloc, so these blocks are the preloaded allocator's, and the extras
 * must still answer as on plain glibc.
 *
 * Only where the entry points are the libc names (hh_conformance): the
 * hook layer called directly (conformance_direct_*) does not see glibc's
 * own allocations, so there the checks pass without looking. */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conformance.h"

/* A block glibc made holding the NUL-terminated text want: usable size
 * at least its length + 1, the text intact; then grown and shrunk through
 * the api's realloc (the text kept) and freed through its free, errno
 * untouched by both. */
static void check_block(struct hh_ctx *c, const char *call, char *s, const char *want) {
  const struct hh_api *a = c->api;
  if (!HH_EXPECT(c, s != NULL, "%s gave NULL (errno %d)", call, errno)) return;
  size_t n = strlen(want);
  HH_EXPECT(c, strcmp(s, want) == 0, "%s gave \"%.40s\", want \"%.40s\"", call, s, want);
  size_t u = a->malloc_usable_size(s);
  HH_EXPECT(c, u >= n + 1, "%s: usable size %zu of a %zu-byte string", call, u, n + 1);
  errno = HH_ERRNO_SENTINEL;
  char *r = a->realloc(s, n + 100000);
  int e = errno;
  if (!HH_EXPECT(c, r != NULL, "realloc(<%s>, %zu) gave NULL", call, n + 100000)) {
    a->free(s);
    return;
  }
  HH_EXPECT(c, e == HH_ERRNO_SENTINEL, "realloc(<%s>) changed errno to %d", call, e);
  HH_EXPECT(c, memcmp(r, want, n + 1) == 0, "realloc(<%s>) did not keep the text", call);
  memset(r + n + 1, 0x5a, 99999);
  s = r;
  r = a->realloc(s, n + 1);
  if (!HH_EXPECT(c, r != NULL, "realloc(<%s>, %zu) gave NULL", call, n + 1)) {
    a->free(s);
    return;
  }
  HH_EXPECT(c, memcmp(r, want, n + 1) == 0, "realloc(<%s>) back to %zu did not keep the text", call, n + 1);
  errno = HH_ERRNO_SENTINEL;
  a->free(r);
  e = errno;
  HH_EXPECT(c, e == HH_ERRNO_SENTINEL, "free(<%s>) changed errno to %d", call, e);
}

/* Each function that returns a block of glibc's making; errno untouched
 * by the ones that leave it so on glibc 2.36. */
static void check_libc_blocks(struct hh_ctx *c) {
  if (!c->api->libc_names) return;
  char long_text[3000];
  memset(long_text, 'q', sizeof long_text - 1);
  long_text[sizeof long_text - 1] = '\0';
  int e;

  errno = HH_ERRNO_SENTINEL;
  char *s = strdup("heaphook");
  e = errno;
  HH_EXPECT(c, e == HH_ERRNO_SENTINEL, "strdup changed errno to %d", e);
  check_block(c, "strdup", s, "heaphook");
  check_block(c, "strdup(3000 bytes)", strdup(long_text), long_text);
  errno = HH_ERRNO_SENTINEL;
  s = strndup("heaphook family", 8);
  e = errno;
  HH_EXPECT(c, e == HH_ERRNO_SENTINEL, "strndup changed errno to %d", e);
  check_block(c, "strndup", s, "heaphook");

  s = NULL;
  int n = asprintf(&s, "%s-%d-%s", "a", 42, long_text);
  HH_EXPECT(c, n == (int)strlen(long_text) + 5, "asprintf returned %d", n);
  char want[sizeof long_text + 16];
  snprintf(want, sizeof want, "a-42-%s", long_text);
  check_block(c, "asprintf", n >= 0 ? s : NULL, want);

  /* getline grows its buffer with realloc as lines get longer. */
  char text[] = "one\nsecond line\nthe third and longest line of the three\n";
  FILE *f = fmemopen(text, strlen(text), "r");
  if (!HH_EXPECT(c, f != NULL, "fmemopen failed (errno %d)", errno)) return;
  char *line = NULL;
  size_t cap = 0;
  int lines = 0;
  ssize_t len;
  while ((len = getline(&line, &cap, f)) > 0) {
    lines++;
    HH_EXPECT(c, cap >= (size_t)len + 1 && c->api->malloc_usable_size(line) >= (size_t)len + 1,
              "getline: line of %zd bytes in a buffer of %zu (usable %zu)", len, cap,
              c->api->malloc_usable_size(line));
  }
  fclose(f);
  HH_EXPECT(c, lines == 3, "getline read %d lines, want 3", lines);
  check_block(c, "getline", line, "the third and longest line of the three\n");

  /* open_memstream: glibc's buffer, grown as the stream is written. */
  char *buf = NULL;
  size_t size = 0;
  FILE *m = open_memstream(&buf, &size);
  if (!HH_EXPECT(c, m != NULL, "open_memstream failed (errno %d)", errno)) return;
  for (int i = 0; i < 2000; i++) fprintf(m, "%04d,", i);
  fclose(m);
  HH_EXPECT(c, size == 10000, "open_memstream: %zu bytes written, want 10000", size);
  HH_EXPECT(c, buf != NULL && memcmp(buf + 9995, "1999,", 5) == 0, "open_memstream: the text's end is wrong");
  static char copy[10001];
  snprintf(copy, sizeof copy, "%s", buf != NULL ? buf : "");
  check_block(c, "open_memstream", buf, copy);

  /* (glibc's realpath leaves readlink's EINVAL in errno when it succeeds) */
  s = realpath("/usr/../usr/./bin", NULL);
  check_block(c, "realpath(..., NULL)", s, "/usr/bin");

  char here[PATH_MAX];
  if (!HH_EXPECT(c, getcwd(here, sizeof here) != NULL, "getcwd failed (errno %d)", errno)) return;
  errno = HH_ERRNO_SENTINEL;
  s = getcwd(NULL, 0);
  e = errno;
  HH_EXPECT(c, e == HH_ERRNO_SENTINEL, "getcwd(NULL, 0) changed errno to %d", e);
  check_block(c, "getcwd(NULL, 0)", s, here);
}

/* glibc's extras, which no preload library defines: they look at glibc's
 * own heap (the program's blocks may be elsewhere) and must answer as on
 * plain glibc, errno untouched. */
static void check_malloc_extras(struct hh_ctx *c) {
  if (!c->api->libc_names) return;
  const struct hh_api *a = c->api;
  void *blocks[64];
  for (int i = 0; i < 64; i++) blocks[i] = a->malloc((size_t)(i + 1) * 4000);
  for (int i = 0; i < 64; i++) a->free(blocks[i]);
  errno = HH_ERRNO_SENTINEL;
  int t = malloc_trim(0);
  int e = errno;
  HH_EXPECT(c, t == 0 || t == 1, "malloc_trim(0) returned %d", t);
  HH_EXPECT(c, e == HH_ERRNO_SENTINEL, "malloc_trim changed errno to %d", e);
  errno = HH_ERRNO_SENTINEL;
  struct mallinfo2 mi = mallinfo2();
  e = errno;
  HH_EXPECT(c, e == HH_ERRNO_SENTINEL, "mallinfo2 changed errno to %d", e);
  HH_EXPECT(c, mi.uordblks <= mi.arena, "mallinfo2: %zu bytes in use of an arena of %zu", mi.uordblks,
            mi.arena);
  /* M_PERTURB 0 is glibc's default: accepted (1) and changes nothing. */
  errno = HH_ERRNO_SENTINEL;
  int o = mallopt(M_PERTURB, 0);
  e = errno;
  HH_EXPECT(c, o == 1, "mallopt(M_PERTURB, 0) returned %d, want 1", o);
  HH_EXPECT(c, e == HH_ERRNO_SENTINEL, "mallopt changed errno to %d", e);
  char *xml = NULL;
  size_t len = 0;
  FILE *m = open_memstream(&xml, &len);
  if (!HH_EXPECT(c, m != NULL, "open_memstream failed (errno %d)", errno)) return;
  int r = malloc_info(0, m);
  fclose(m);
  HH_EXPECT(c, r == 0, "malloc_info returned %d", r);
  HH_EXPECT(c, xml != NULL && strncmp(xml, "<malloc version=", 16) == 0 && strstr(xml, "</malloc>") != NULL,
            "malloc_info wrote \"%.40s\"", xml != NULL ? xml : "(null)");
  a->free(xml);
}

const struct hh_check hh_checks_libc[] = {
    {"libc.blocks_glibc_makes", check_libc_blocks},
    {"libc.malloc_extras", check_malloc_extras},
    {NULL, NULL},
};
