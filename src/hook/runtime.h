/* The hook layer's run-time state: which allocator, which recorders, the
 * block prefix, and the start-up state machine.
 *
 * Start-up happens inside the first allocation of the process (or in the
 * library constructor, whichever comes first): UNSTARTED -> STARTING ->
 * READY. While it is not READY, allocations come from the bootstrap arena;
 * the thread doing the start-up has hh__in_hook set so that what dlsym,
 * dlopen and the allocator's init allocate lands there too. */
#ifndef HH_HOOK_RUNTIME_H
#define HH_HOOK_RUNTIME_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "alloc/next/next_allocator.h"
#include "heaphook/allocator.h"
#include "record/recorder.h"

enum { HH_UNSTARTED, HH_STARTING, HH_READY };

typedef struct hh_runtime {
  const hh_allocator *alloc;
  size_t prefix; /* P of block.h: 0, or a multiple of 16 */
  size_t page;   /* page size */
  int n_recorders;
  const hh_recorder *recorders[HH_MAX_RECORDERS];
  size_t slot_offset[HH_MAX_RECORDERS]; /* slot = user - prefix + slot_offset */
  /* The callbacks the enabled recorders have, per event kind (hook/api.c
   * calls only these), with the slot offset of the recorder of each: those
   * of the recorders that hear of every event, then those of the sampled
   * recorders (recorder.h, sample_period). */
  struct hh_callbacks {
    int n;
    void (*cb[HH_MAX_RECORDERS])(const hh_event *ev, void *slot);
    size_t slot_offset[HH_MAX_RECORDERS];
  } on_alloc, on_free, on_realloc_begin, on_realloc;
  struct hh_callbacks sampled_alloc, sampled_free, sampled_realloc_begin, sampled_realloc;
  uint64_t sample_period; /* of the sampled recorders; 0: none */
  bool lead_only;         /* the prefix is sampling's lead alone (HH_PATH_LEAD) */
  /* The program has an allocator of its own (src/alloc/next): blocks of
   * its own API (jemalloc's mallocx) reach free, with nothing of the
   * allocator's in front of them, maybe not even a mapped page (block.h,
   * hh__block_front_mapped). */
  bool foreign_bare;
  bool own_serves; /* ... and it is the allocator (alloc is src/alloc/next's) */
  int n_on_call;
  void (*on_call[HH_MAX_RECORDERS])(hh_fn fn);
  bool stats; /* HEAPHOOK_STATS: allocator report at exit */
} hh_runtime;

extern hh_runtime hh__rt;

/* How the exported functions (entry.c) serve a call (hh__fast.path):
 *   HH_PATH_HOOK     through the hook layer (hh__malloc, ...): always before
 *                    start-up is done, and whenever the allocator is not
 *                    glibc, blocks have a prefix, or a recorder hears of
 *                    every call or every block;
 *   HH_PATH_LIBC     straight to glibc (__libc_malloc, ...): glibc's
 *                    allocator and no recorder to tell; only bootstrap
 *                    blocks are kept from glibc;
 *   HH_PATH_SAMPLED  as HH_PATH_LIBC, except the allocations the sampler's
 *                    countdown picks (sample.h) and the blocks with a
 *                    header of ours (block.h, sampled ones), which go
 *                    through the hook;
 *   HH_PATH_MARKED   as HH_PATH_SAMPLED with nothing sampled: from exit on,
 *                    when recording stops, for the marked blocks still live;
 *   HH_PATH_LEAD     sampling over an allocator with no size word in front
 *                    of its blocks (the program's own, a plug-in), whose
 *                    blocks then all carry a lead of HH_SAMPLED_LEAD bytes
 *                    and nothing else: malloc and calloc the sampler skips,
 *                    and free of a plain lead block, straight to the
 *                    allocator (hh_fast's alloc, alloc_zeroed, dealloc);
 *                    everything else through the hook;
 *   HH_PATH_NEXT     as HH_PATH_LIBC for a program with an allocator of
 *                    its own (src/alloc/next) and no recorder: malloc,
 *                    free, calloc and realloc straight to that allocator's
 *                    (hh_fast's next), which gives every answer itself;
 *                    C++ new and delete go on to its operators (cxx.c).
 * Set once the hook is READY. */
enum { HH_PATH_HOOK, HH_PATH_LIBC, HH_PATH_SAMPLED, HH_PATH_MARKED, HH_PATH_LEAD, HH_PATH_NEXT };

/* What the exported functions read on every call, in one cache line: a
 * program that streams through its heap evicts whatever else they read. */
typedef struct hh_fast {
  atomic_int path; /* HH_PATH_* */
  /* HH_PATH_LEAD's: the allocator's operations (alloc_zeroed NULL: calloc
   * through the hook) */
  void *(*alloc)(size_t size, size_t align);
  void *(*alloc_zeroed)(size_t size);
  void (*dealloc)(void *ptr);
  /* HH_PATH_NEXT's: the program's allocator's own functions */
  hh_next_fns next;
} hh_fast;
extern hh_fast hh__fast __attribute__((visibility("hidden")));
extern atomic_int hh__state;
/* True while recorders are to be called (cleared at exit). */
extern atomic_bool hh__recording;

/* True once the hook is READY when calls go straight on to the program's
 * own allocator (HH_PATH_NEXT): read from what start-up set before READY,
 * not from the path, which is set just after it (a thread that waited for
 * another's start-up can read the path before it is set; setting it
 * before READY instead let a thread free a block on the fast path that
 * the hook, not READY yet, took for a foreign one: found by review). */
bool hh__straight_to_own(void);

/* True in the heaphook command's own process, which exports
 * hh_untraced_process (src/cli/main.c): the hook serves it glibc's malloc,
 * records nothing and reports nothing, whatever the variables say, so that
 * `heaphook run` under a preloaded heaphook library leaves the library and
 * its variables to the program. */
bool hh__untraced_process(void);

/* Starts the hook if nobody has; true when it is READY. False when start-up
 * is under way (in this thread or another) or cannot happen yet (environ is
 * not set up): the caller then uses the bootstrap arena. */
bool hh__start_slow(void);

static inline bool hh__start(void) {
  if (__builtin_expect(atomic_load_explicit(&hh__state, memory_order_acquire) == HH_READY, 1)) return true;
  return hh__start_slow();
}

/* Stops the recorders and prints the allocator's report when asked
 * (HEAPHOOK_STATS). Called from the library destructor. */
void hh__shutdown(void);

/* False in a vfork child, which runs in its parent's memory (and before
 * the hook starts). */
bool hh__owner_process(void);

/* Chooses the allocator (preload/select_*.c, one per preload library).
 * Weak: test binaries have none and use hh__hook_setup_for_test. */
const hh_allocator *hh__select_allocator(void) __attribute__((weak));

#endif
