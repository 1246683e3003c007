/* heaphook allocator plug-in API.
 *
 * An allocator is a table of operations that the heaphook hook layer calls in
 * place of glibc's malloc family.  The hook layer does all argument checking
 * (malloc(0), overflow, bad alignments, NULL, errno), so an allocator only
 * implements the core contract stated above each member.
 *
 * A plug-in is one C file that fills an hh_allocator and exports it with
 * HH_EXPORT_ALLOCATOR(table).  Built with the CMake function
 * heaphook_add_allocator() it becomes a preloadable lib<name>.so; the same
 * file can also be loaded into libheaphook.so at run time with
 * HEAPHOOK_ALLOCATOR=/path/to/lib<name>.so.
 *
 * The hook may ask for more than the program did: recorders that keep bytes
 * per block (HEAPHOOK_RECORD=usage) and, for a plug-in, sampled tracing
 * (HEAPHOOK_TRACE_SAMPLE: 16 bytes on every block, in which the hook marks
 * the sampled ones) put a prefix in front of each block.
 *
 * Rules for code behind these operations (it runs inside malloc):
 *   - never call malloc & co., stdio, or getenv (use mmap, write(2));
 *   - be thread-safe: every operation may be called from any thread;
 *   - never touch errno on success; on failure return NULL (the hook sets
 *     ENOMEM).
 */
#ifndef HEAPHOOK_ALLOCATOR_H
#define HEAPHOOK_ALLOCATOR_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped when the layout of hh_allocator changes incompatibly. */
#define HH_ALLOCATOR_ABI 1

/* Every block must be aligned to at least this many bytes, whatever align
 * says: it is what glibc guarantees and what C and C++ code assumes. */
#define HH_MIN_ALIGN 16

typedef struct hh_allocator {
  /* Must be HH_ALLOCATOR_ABI. */
  unsigned abi;
  /* Short name, shown in reports (e.g. "tlsf"). */
  const char *name;

  /* Optional.  Called once, before any other operation, from inside the
   * first allocation of the process.  environ may be read (not getenv).
   * Return 0 on success; otherwise the process is stopped with the message
   * the allocator wrote to fd 2. */
  int (*init)(void);

  /* Required.  Return a block of at least size bytes aligned to
   * max(align, HH_MIN_ALIGN), or NULL.
   * Guaranteed: size > 0; align == 1 (no constraint beyond HH_MIN_ALIGN) or
   * a power of two >= sizeof(void *). */
  void *(*alloc)(size_t size, size_t align);

  /* Required.  Release a block.
   * Guaranteed: ptr != NULL and ptr was returned by this allocator and not
   * yet released. */
  void (*dealloc)(void *ptr);

  /* Optional (default: alloc(size, 1) + memset).  A zero-filled block of at
   * least size bytes.  Guaranteed: size > 0. */
  void *(*alloc_zeroed)(size_t size);

  /* Optional (default: alloc + copy + dealloc).  Resize a block, keeping
   * min(old, new_size) bytes of content; return NULL and leave ptr intact on
   * failure.  The result needs only HH_MIN_ALIGN alignment, even if ptr was
   * allocated with a larger one.
   * Guaranteed: ptr as for dealloc, new_size > 0. */
  void *(*realloc)(void *ptr, size_t new_size);

  /* Required.  Usable size of the block: every byte up to it may be written.
   * Guaranteed: ptr as for dealloc. */
  size_t (*block_size)(void *ptr);

  /* Optional.  Non-zero when ptr is a block of this allocator.  Provide it
   * when blocks made by someone else (glibc, before the allocator took over)
   * can reach dealloc: the hook then sends those back to glibc. Without it,
   * every pointer is taken to be this allocator's own. Must be cheap. */
  int (*owns)(const void *ptr);

  /* Optional.  Write statistics to fd (called at exit when HEAPHOOK_STATS=1).
   * May use snprintf into a stack buffer; must not allocate. */
  void (*report)(int fd);
} hh_allocator;

/* Exports the table from a plug-in: defines hh_allocator_get(), which
 * libheaphook.so looks up with dlsym when HEAPHOOK_ALLOCATOR names a file. */
#define HH_EXPORT_ALLOCATOR(table) \
  __attribute__((visibility("default"))) const hh_allocator *hh_allocator_get(void) { return &(table); }

/* The symbol a plug-in exports. */
const hh_allocator *hh_allocator_get(void);

#ifdef __cplusplus
}
#endif

#endif /* HEAPHOOK_ALLOCATOR_H */
