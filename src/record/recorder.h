/* Recorders: observers of the calls that pass through the hook layer.
 *
 * Several recorders may be enabled at once (HEAPHOOK_RECORD=a,b). Each may ask
 * for block_bytes of its own per block: the hook layer reserves them in a
 * prefix in front of every block (see hook/block.h), hands the recorder a
 * pointer to them ("slot") on every event, and keeps them until the free,
 * whatever allocator sits underneath. Recorders never see allocator details.
 *
 * Callbacks run inside malloc: no stdio, no getenv; an allocation made inside
 * a callback is served but not recorded (the hook's recursion guard is set);
 * errno is saved and restored around them by the hook.
 *
 * Sampled recorders: a recorder whose sample_period says so hears of a
 * sample of the allocations only, drawn by the hook's sampler
 * (hook/sample.h: Poisson sampling of bytes, one sample per period bytes on
 * average, per thread), and of the frees and reallocs of the blocks sampled.
 * The hook runs the sampler before any recorder is called, inline in the
 * exported functions when nothing else needs every call, so that the calls
 * not sampled cost a countdown (allocations) or a look at the word in
 * front of the block, where the hook marks sampled ones (frees; block.h). */
#ifndef HH_RECORD_RECORDER_H
#define HH_RECORD_RECORDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The hooked functions, as recorders see them. */
typedef enum hh_fn {
  HH_FN_MALLOC,
  HH_FN_CALLOC,
  HH_FN_REALLOC,
  HH_FN_REALLOCARRAY,
  HH_FN_POSIX_MEMALIGN,
  HH_FN_ALIGNED_ALLOC,
  HH_FN_MEMALIGN,
  HH_FN_VALLOC,
  HH_FN_PVALLOC,
  HH_FN_FREE,
  HH_FN_FREE_SIZED,
  HH_FN_FREE_ALIGNED_SIZED,
  HH_FN_MALLOC_USABLE_SIZE,
  HH_FN_COUNT
} hh_fn;

/* Name of a hooked function ("malloc", "posix_memalign", ...). */
const char *hh__fn_name(hh_fn fn);

typedef struct hh_event {
  hh_fn fn;      /* the function the program called */
  void *ptr;     /* alloc/realloc: the block returned; free: the block freed */
  size_t size;   /* alloc/realloc: bytes requested; free: 0 */
  size_t align;  /* alignment requested, 0 when the call asks none */
  void *old_ptr; /* realloc: the block before (may equal ptr) */
  /* For the sampled recorders (the others may ignore them). */
  uint64_t weight;  /* alloc, or realloc with new_sampled: the bytes this
                       sample stands for (size / P(sampled)) */
  bool old_sampled; /* realloc: old_ptr was a sampled block */
  bool new_sampled; /* realloc: the new block is sampled (weight > 0) */
} hh_event;

typedef struct hh_recorder {
  const char *name;    /* as written in HEAPHOOK_RECORD */
  const char *summary; /* one line for --help and the README */
  size_t block_bytes;  /* per-block bytes wanted (0: none) */

  /* At start-up, before the first recorded call. Read options with
   * hh__env_get. Return 0, or -1 after writing a one-line error. */
  int (*start)(void);
  /* Called after start (may be NULL): 0 to hear of every event, or a
   * sample period in bytes: the recorder is then told of the sampled
   * allocations only (ev->weight > 0), of the frees of those blocks only,
   * and of a realloc only when its old block was sampled or its new one is
   * (ev->old_sampled, ev->new_sampled; on_realloc_begin and on_realloc both
   * carry them). Sampled recorders share one sampler: their periods must
   * agree. */
  size_t (*sample_period)(void);
  /* Every call of a hooked function, also failing ones and free(NULL). */
  void (*on_call)(hh_fn fn);
  /* After a block was allocated; slot is uninitialised. */
  void (*on_alloc)(const hh_event *ev, void *slot);
  /* Before a block is released, so its address cannot be reused first. */
  void (*on_free)(const hh_event *ev, void *slot);
  /* Before a realloc of a live block (ev->old_ptr, ev->size; ev->ptr is
   * NULL): lets a recorder note the time the call began. Not followed by
   * on_realloc when the realloc fails. */
  void (*on_realloc_begin)(const hh_event *ev, void *slot);
  /* After a successful realloc; slot holds what the old block's slot held. */
  void (*on_realloc)(const hh_event *ev, void *slot);
  /* At exit, once every library's destructor has run (src/hook/entry.c):
   * write the report, if any, to fd (stderr, or the file HEAPHOOK_LOG
   * names). Later calls are not recorded. */
  void (*stop)(int fd);
  /* stop writes a report: the hook then keeps a copy of stderr from the
   * start for it (when HEAPHOOK_LOG does not name a file), which the
   * program's forked children hold too. */
  bool reports;
} hh_recorder;

/* Largest number of recorders enabled together. */
#define HH_MAX_RECORDERS 8

/* Parses a HEAPHOOK_RECORD list ("counts", "trace,latency"): fills out[]
 * and returns how many, or -1 after writing a one-line error naming the
 * unknown recorder. An empty or NULL spec gives 0. */
int hh__recorders_parse(const char *spec, const hh_recorder **out, int max);

/* The built-in recorders (registry.c). */
extern const hh_recorder hh__counts_recorder;
extern const hh_recorder hh__usage_recorder;
extern const hh_recorder hh__trace_recorder;

/* The program's stack pointer at its call of the malloc-family function
 * being served (the exported function's CFA: the return address is just
 * below it), noted by the hook's entry points for the allocating functions.
 * Lets a recorder find the program's frames without unwinding the hook's;
 * stale when a call did not come through an entry point (tests). */
extern __thread void *hh__call_cfa __attribute__((tls_model("initial-exec")));

/* Runs fn(arg) under the hook's recursion guard: what it allocates is
 * served and told to no recorder, as a callback's allocations are. For a
 * recorder's own code that may allocate outside its callbacks: the tracer
 * making its threads (pthread_create callocs the new thread's DTV) at a
 * thread's exit, or in its writer thread. Defined by the hook layer. */
void hh__unrecorded(void (*fn)(void *), void *arg);

#endif
