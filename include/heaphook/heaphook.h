/* heaphook's public API for programs.
 *
 * Every function here is declared weak: a program that uses them builds and
 * runs without heaphook, and sees NULL function addresses then. Each is
 * also a macro of the same name that calls the function only when heaphook
 * is loaded, so a plain call is safe either way: without heaphook,
 * hh_allocator_of(p) gives NULL, hh_thread_counts(c, n) -1, and
 * hh_marker(name) does nothing (the arguments are evaluated once in both
 * cases). Whether heaphook is there: test the address, as in
 *
 *   if (hh_allocator_of) printf("%s\n", hh_allocator_of(p));
 *
 * (The name in parentheses, (hh_marker)(name), is the weak function itself,
 * without the test.)
 */
#ifndef HEAPHOOK_HEAPHOOK_H
#define HEAPHOOK_HEAPHOOK_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The malloc-family functions, in the order hh_thread_counts reports them. */
enum hh_call {
  HH_CALL_MALLOC,
  HH_CALL_CALLOC,
  HH_CALL_REALLOC,
  HH_CALL_REALLOCARRAY,
  HH_CALL_POSIX_MEMALIGN,
  HH_CALL_ALIGNED_ALLOC,
  HH_CALL_MEMALIGN,
  HH_CALL_VALLOC,
  HH_CALL_PVALLOC,
  HH_CALL_FREE,
  HH_CALL_FREE_SIZED,
  HH_CALL_FREE_ALIGNED_SIZED,
  HH_CALL_MALLOC_USABLE_SIZE,
  HH_CALL_COUNT
};

/* Who owns the block at ptr: the name of heaphook's allocator ("libc",
 * "tlsf", a plug-in's name), "bootstrap" for blocks made while heaphook was
 * starting, "foreign" for glibc blocks made before heaphook took over, or
 * NULL for NULL. ptr must be a live block. */
const char *hh_allocator_of(const void *ptr) __attribute__((weak));

/* With HEAPHOOK_RECORD=counts: copies the calling thread's call counts per
 * function (enum hh_call order) into counts[0..n) and returns how many were
 * written; -1 when the counts recorder is not enabled. */
int hh_thread_counts(unsigned long long *counts, int n) __attribute__((weak));

/* With the tracer (HEAPHOOK_RECORD=trace, libpreloaded_heaptrack.so): writes
 * a MARKER record with this name (its first 4096 bytes) and the current time
 * into the trace, to find a phase of the program in it. Does nothing
 * otherwise. It never waits for the tracer's locks where its own thread
 * may hold them: a signal handler that interrupted the tracer there, or a
 * fork handler registered before heaphook's (which runs while the tracer
 * holds its locks for the fork), leaves the marker out. */
void hh_marker(const char *name) __attribute__((weak));

/* The calls above, safe without heaphook (see the top of this file). */
#define hh_allocator_of(ptr) ((hh_allocator_of) ? (hh_allocator_of)(ptr) : ((void)(ptr), (const char *)0))
#define hh_thread_counts(counts, n) \
  ((hh_thread_counts) ? (hh_thread_counts)(counts, n) : ((void)(counts), (void)(n), -1))
#define hh_marker(name) ((hh_marker) ? (hh_marker)(name) : (void)(name))

/* The same as hh_marker(name), kept for programs written against the header
 * before hh_marker was safe to call without heaphook. */
#define HH_MARKER(name) hh_marker(name)

#ifdef __cplusplus
}
#endif

#endif
