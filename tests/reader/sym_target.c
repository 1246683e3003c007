/* Functions at known lines for the symbolizer tests: built with -g -O1, so
 * that an always_inline function really is inlined and described in DWARF.
 * Each records the line of its call to hh_test_capture, which returns its
 * return address (an address inside the caller, as the tracer records). */
#include "sym_target.h"

int sym_plain_line, sym_inline_line, sym_outer_line, sym_alloc_line;

__attribute__((noinline)) void *hh_test_capture(void) {
  void *ra = __builtin_return_address(0);
  __asm__ volatile("" ::: "memory");
  return ra;
}

__attribute__((noinline)) void *sym_plain_caller(void) {
  void *volatile p = hh_test_capture();
  sym_plain_line = __LINE__ - 1; /* the line of the call above */
  return p;
}

static inline __attribute__((always_inline)) void *sym_inlined_helper(void) {
  void *volatile p = hh_test_capture();
  sym_inline_line = __LINE__ - 1; /* the line of the call above */
  return p;
}

__attribute__((noinline)) void *sym_outer_with_inline(void) {
  void *volatile p = sym_inlined_helper();
  sym_outer_line = __LINE__ - 1; /* the line of the call above */
  return p;
}

/* Named like heaphook's internal functions: folded out of stacks. */
__attribute__((noinline)) void *hh__test_fake_alloc(void) {
  void *volatile p = hh_test_capture();
  sym_alloc_line = __LINE__ - 1; /* the line of the call above */
  return p;
}
