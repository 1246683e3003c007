/* Allocation that cannot fail, for the tool side (the trace reader, the
 * symbolizer, the analysis, the heaphook command): out of memory, it calls
 * hh_tool_out_of_memory where the program defines it (the heaphook command:
 * one line naming the trace, exit status 1), else prints "heaphook: out of
 * memory (N bytes)" and aborts. Header-only so that the tests and the
 * fuzzer that compile reader.c or symbolize.c on their own need nothing
 * more. Never used by the hook layer. */
#ifndef HH_TRACE_XALLOC_H
#define HH_TRACE_XALLOC_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Does not return. (weak: NULL where the program has none) */
__attribute__((weak)) void hh_tool_out_of_memory(size_t bytes);

__attribute__((noreturn, cold, unused)) static void hh_out_of_memory(size_t bytes) {
  if (hh_tool_out_of_memory) hh_tool_out_of_memory(bytes);
  fprintf(stderr, "heaphook: out of memory (%zu bytes)\n", bytes);
  abort();
}

static inline void *xmalloc(size_t n) {
  void *p = malloc(n ? n : 1);
  if (!p) hh_out_of_memory(n);
  return p;
}

static inline void *xrealloc(void *p, size_t n) {
  void *q = realloc(p, n ? n : 1);
  if (!q) hh_out_of_memory(n);
  return q;
}

static inline void *xcalloc(size_t n, size_t size) {
  void *p = calloc(n ? n : 1, size ? size : 1);
  if (!p) {
    size_t bytes;
    hh_out_of_memory(__builtin_mul_overflow(n, size, &bytes) ? SIZE_MAX : bytes);
  }
  return p;
}

/* The n bytes at s with a NUL after them. */
static inline char *xstrndup(const char *s, size_t n) {
  char *p = xmalloc(n + 1);
  memcpy(p, s, n);
  p[n] = 0;
  return p;
}

static inline char *xstrdup(const char *s) { return xstrndup(s, strlen(s)); }

#endif
