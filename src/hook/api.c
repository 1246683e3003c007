/* glibc's malloc-family semantics on top of an hh_allocator.
 *
 * Every public function checks its arguments exactly as glibc 2.36 does,
 * turns the call into the allocator's narrow contract (allocator.h), adds
 * the block prefix when recorders want per-block bytes (block.h), and tells
 * the recorders. Blocks that are not the allocator's (bootstrap blocks,
 * glibc blocks from before heaphook took over) are recognised on the way
 * in and sent where they belong. */
#define _GNU_SOURCE /* process_vm_readv */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include "alloc/next/next_allocator.h"
#include "base/glibc.h"
#include "base/log.h"
#include "block.h"
#include "bootstrap.h"
#include "guard.h"
#include "hook.h"
#include "runtime.h"
#include "sample.h"

#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

/* Requests above this fail with ENOMEM before any allocator sees them: no
 * machine can serve them, and it leaves room for the prefix and alignment
 * without overflow checks further down. */
#define MAX_REQUEST ((size_t)PTRDIFF_MAX - ((size_t)1 << 32))

enum owner { OWN, BOOTSTRAP, FOREIGN };

/* A block of the program's own allocator's own API (jemalloc's mallocx)
 * may start a mapping: its header word is then read only when the page in
 * front is mapped (until 2026-11-28 a large mallocx block passed to free,
 * sampled or with a recorder's bytes, killed the program with SIGSEGV:
 * preload.bare_allocator_*). heaphook's own page-aligned blocks (valloc,
 * over-aligned ones) have their lead in the same mapping. */
bool hh__block_front_mapped(const void *user) {
  int saved = errno;
  char word[HH_BLOCK_HEADER];
  struct iovec here = {word, sizeof word};
  struct iovec there = {(char *)user - HH_BLOCK_HEADER, sizeof word};
  ssize_t n = process_vm_readv(getpid(), &here, 1, &there, 1, 0);
  bool mapped;
  if (n == (ssize_t)sizeof word) {
    mapped = true;
  } else if (n < 0 && errno == EFAULT) {
    mapped = false;
  } else {
    /* (a sandbox that refuses the call: whether a mapping is there) */
    unsigned char in_core;
    mapped = mincore((char *)user - hh__rt.page, hh__rt.page, &in_core) == 0;
  }
  errno = saved;
  return mapped;
}

static enum owner owner_of(void *ptr) {
  if (unlikely(hh__bootstrap_owns(ptr))) return BOOTSTRAP;
  if (hh__rt.prefix != 0) {
    if (unlikely(hh__rt.foreign_bare) && unlikely(!hh__block_front_on_page(ptr)) &&
        !hh__block_front_mapped(ptr))
      return FOREIGN;
    return hh__block_is_ours(ptr) ? OWN : FOREIGN;
  }
  if (hh__rt.alloc->owns != NULL && !hh__rt.alloc->owns(ptr)) return FOREIGN;
  return OWN;
}

/* ---- recorders ---------------------------------------------------------- */

/* (inlined: the guard is looked at against the frame of the hook's
 * function that asks, guard.h) */
static inline __attribute__((always_inline)) bool recording(void) {
  return unlikely(atomic_load_explicit(&hh__recording, memory_order_relaxed)) &&
         !hh__guard_held((uintptr_t)__builtin_dwarf_cfa());
}

/* Calls one kind of callback of every recorder that has it. block is the
 * block whose slots the recorders get. */
static void tell(const struct hh_callbacks *list, const hh_event *ev, void *block) {
  if (list->n == 0) return;
  int saved = errno;
  hh_guard guard = hh__guard_enter();
  char *slots = hh__rt.prefix != 0 ? (char *)block - hh__rt.prefix : NULL;
  for (int i = 0; i < list->n; i++) list->cb[i](ev, slots != NULL ? slots + list->slot_offset[i] : NULL);
  hh__guard_leave(guard);
  errno = saved;
}

static void tell_call(hh_fn fn) {
  int saved = errno;
  for (int i = 0; i < hh__rt.n_on_call; i++) hh__rt.on_call[i](fn);
  errno = saved;
}

void hh__unrecorded(void (*fn)(void *), void *arg) {
  hh_guard guard = hh__guard_enter();
  fn(arg);
  hh__guard_leave(guard);
}

#define NOTE_CALL(fn)                                        \
  do {                                                       \
    if (hh__rt.n_on_call != 0 && recording()) tell_call(fn); \
  } while (0)

/* An allocation's call, which may be the one that starts the hook: the
 * process's first, often from a library's constructor that runs before
 * heaphook's (libstdc++'s emergency pool in every C++ program). It was
 * left out of HEAPHOOK_RECORD=counts, which starts with the hook, while
 * the tracer, told after the start, had it: malloc one short of the
 * trace's until 2026-11-28 (preload.counts_match_trace). */
#define NOTE_ALLOC_CALL(fn) \
  do {                      \
    (void)hh__start();      \
    NOTE_CALL(fn);          \
  } while (0)

/* After an allocation (recording): the recorders of every event, then,
 * when the sampler picked the block (weight != 0), the sampled recorders. */
static void note_alloc(hh_fn fn, void *user, size_t size, size_t align, uint64_t weight) {
  hh_event ev = {.fn = fn, .ptr = user, .size = size, .align = align > HH_MIN_ALIGN ? align : 0};
  tell(&hh__rt.on_alloc, &ev, user);
  if (likely(weight == 0)) return;
  ev.weight = weight;
  tell(&hh__rt.sampled_alloc, &ev, user);
}

/* Before a free of one of our blocks (recording). */
static void note_free(hh_fn fn, void *ptr) {
  hh_event ev = {.fn = fn, .ptr = ptr};
  tell(&hh__rt.on_free, &ev, ptr);
  if (hh__rt.sample_period != 0 && hh__block_is_sampled(ptr)) tell(&hh__rt.sampled_free, &ev, ptr);
}

/* ---- allocator operations with their defaults ---------------------------- */

static void *a_alloc_zeroed(size_t size) {
  const hh_allocator *a = hh__rt.alloc;
  if (a->alloc_zeroed != NULL) return a->alloc_zeroed(size);
  void *p = a->alloc(size, 1);
  if (p != NULL) memset(p, 0, size);
  return p;
}

static void *a_realloc(void *base, size_t size) {
  const hh_allocator *a = hh__rt.alloc;
  if (a->realloc != NULL) return a->realloc(base, size);
  void *p = a->alloc(size, 1);
  if (p == NULL) return NULL;
  size_t old = a->block_size(base);
  memcpy(p, base, old < size ? old : size);
  a->dealloc(base);
  return p;
}

/* ---- allocation ----------------------------------------------------------- */

size_t hh__block_off_page(char *base, size_t n, size_t lead, bool zero) {
  const hh_allocator *a = hh__rt.alloc;
  if (!hh__rt.foreign_bare || a->block_size == NULL) return lead;
  int saved = errno;
  size_t usable = a->block_size(base);
  errno = saved;
  if (usable < n + 16) return lead;
  if (zero) memset(base + n, 0, 16); /* (the user bytes end 16 bytes further) */
  return lead + 16;
}

static void *fail(int err) {
  errno = err;
  return NULL;
}

/* The bytes in front of a block's user bytes, before any alignment: the
 * prefix, or without one HH_SAMPLED_LEAD for a sampled block (block.h). */
static inline size_t front_of(bool sampled) {
  size_t prefix = hh__rt.prefix;
  return prefix != 0 || !sampled ? prefix : HH_SAMPLED_LEAD;
}

/* A block of size bytes (> 0) from the allocator with front bytes in front
 * of it (front_of) and its header written; NULL on failure. align is 1 or a
 * power of two > 16. */
static void *place_block(size_t size, size_t align, bool zero, size_t front, bool sampled) {
  const hh_allocator *a = hh__rt.alloc;
  if (likely(front == 0)) return zero ? a_alloc_zeroed(size) : a->alloc(size, align);
  size_t lead = align > HH_MIN_ALIGN ? (front + align - 1) & ~(align - 1) : front;
  if (lead / 16 > UINT32_MAX) return NULL;
  char *base;
  if (align <= HH_MIN_ALIGN) {
    base = zero ? a_alloc_zeroed(size + lead) : a->alloc(size + lead, align);
    if (unlikely(base != NULL) && unlikely(!hh__block_front_on_page(base + lead)))
      lead = hh__block_off_page(base, size + lead, lead, zero);
  } else {
    base = a->alloc(size + lead, align);
    if (zero && base != NULL) memset(base + lead, 0, size);
  }
  if (unlikely(base == NULL)) return NULL;
  void *user = base + lead;
  hh_block_header *h = hh__block_header(user);
  h->lead16 = (uint32_t)(lead / 16);
  h->magic = sampled ? HH_BLOCK_MAGIC_SAMPLED : HH_BLOCK_MAGIC;
  return user;
}

/* Allocates a block for the program: size > 0 and <= MAX_REQUEST, align 1
 * or a power of two > 16; the recorders hear of asked, the size the
 * program asked for (0 for malloc(0), pvalloc's before rounding). The
 * sampler decides before the allocation, which a sampled block's lead
 * needs. Returns NULL with errno ENOMEM on failure. */
static void *alloc_block(hh_fn fn, size_t size, size_t asked, size_t align, bool zero) {
  if (unlikely(!hh__start())) return hh__bootstrap_alloc(size, align);
  bool rec = recording();
  uint64_t weight = rec && hh__rt.sample_period != 0 ? hh__sample_take(asked) : 0;
  void *user = place_block(size, align, zero, front_of(weight != 0), weight != 0);
  if (unlikely(user == NULL)) return fail(ENOMEM);
  if (rec) note_alloc(fn, user, asked, align, weight);
  return user;
}

/* The bytes in front of one of our blocks: its lead, or 0. Without a
 * prefix only sampling gives blocks a lead (runtime.c, block.h). */
static inline size_t lead_of(void *user) {
  if (hh__rt.prefix == 0 && (hh__rt.sample_period == 0 || !hh__block_is_ours(user))) return 0;
  return (size_t)hh__block_header(user)->lead16 * 16;
}

static inline void *base_of(void *user) { return (char *)user - lead_of(user); }

/* Usable bytes of one of our blocks, as the program sees them. */
static size_t own_usable(void *user) {
  void *base = base_of(user);
  return hh__rt.alloc->block_size(base) - (size_t)((char *)user - (char *)base);
}

static void *malloc_as(hh_fn fn, size_t size) {
  if (unlikely(size > MAX_REQUEST)) return fail(ENOMEM);
  return alloc_block(fn, size == 0 ? 1 : size, size, 1, false);
}

void *hh__malloc(size_t size) {
  NOTE_ALLOC_CALL(HH_FN_MALLOC);
  return malloc_as(HH_FN_MALLOC, size);
}

void *hh__calloc(size_t nmemb, size_t size) {
  NOTE_ALLOC_CALL(HH_FN_CALLOC);
  size_t total;
  if (unlikely(__builtin_mul_overflow(nmemb, size, &total) || total > MAX_REQUEST)) return fail(ENOMEM);
  return alloc_block(HH_FN_CALLOC, total == 0 ? 1 : total, total, 1, true);
}

/* memalign's rules in glibc 2.36: alignments up to 16 are malloc; larger ones
 * that are not a power of two are rounded up to one; beyond SIZE_MAX/2+1 is
 * EINVAL. */
static void *memalign_as(hh_fn fn, size_t align, size_t size, size_t asked) {
  if (align <= HH_MIN_ALIGN) return malloc_as(fn, size);
  if (unlikely(align > SIZE_MAX / 2 + 1)) return fail(EINVAL);
  if (align & (align - 1)) align = (size_t)1 << (64 - __builtin_clzl(align));
  if (unlikely(size > MAX_REQUEST || align > MAX_REQUEST)) return fail(ENOMEM);
  return alloc_block(fn, size == 0 ? 1 : size, asked, align, false);
}

void *hh__memalign(size_t align, size_t size) {
  NOTE_ALLOC_CALL(HH_FN_MEMALIGN);
  return memalign_as(HH_FN_MEMALIGN, align, size, size);
}

void *hh__aligned_alloc(size_t align, size_t size) {
  NOTE_ALLOC_CALL(HH_FN_ALIGNED_ALLOC);
  return memalign_as(HH_FN_ALIGNED_ALLOC, align, size, size);
}

int hh__posix_memalign(void **out, size_t align, size_t size) {
  NOTE_ALLOC_CALL(HH_FN_POSIX_MEMALIGN);
  if (align == 0 || align % sizeof(void *) != 0 || (align & (align - 1)) != 0) return EINVAL;
  int saved = errno;
  void *p = memalign_as(HH_FN_POSIX_MEMALIGN, align, size, size);
  errno = saved;
  if (p == NULL) return ENOMEM;
  *out = p;
  return 0;
}

static size_t page_size(void) { return hh__rt.page != 0 ? hh__rt.page : 4096; }

void *hh__valloc(size_t size) {
  NOTE_ALLOC_CALL(HH_FN_VALLOC);
  return memalign_as(HH_FN_VALLOC, page_size(), size, size);
}

void *hh__pvalloc(size_t size) {
  NOTE_ALLOC_CALL(HH_FN_PVALLOC);
  size_t page = page_size();
  if (unlikely(size > MAX_REQUEST)) return fail(ENOMEM);
  size_t rounded = size == 0 ? page : (size + page - 1) & ~(page - 1);
  return memalign_as(HH_FN_PVALLOC, page, rounded, size);
}

/* ---- release ------------------------------------------------------------ */

/* A pointer without the header the recorders' bytes put in front of every
 * block (hh__rt.prefix) that lies in the allocator's own memory is not
 * glibc's: it is a block of ours freed already, or a pointer into one.
 * Heap corruption: said, and the process aborts. glibc's free took it for
 * its own and aborted with "munmap_chunk(): invalid pointer" (a double free
 * on TLSF under the usage recorder; found by a helper). */
static void check_not_ours_freed(const char *what, void *ptr) {
  if (hh__rt.prefix == 0 || hh__rt.alloc->owns == NULL || !hh__rt.alloc->owns(ptr)) return;
  hh__log(
      "%s of %p: a block of the %s allocator that is not in use (a double free, or a pointer into a block)",
      what, ptr, hh__rt.alloc->name);
  abort();
}

static void free_as(hh_fn fn, void *ptr) {
  if (ptr == NULL) return;
  if (unlikely(atomic_load_explicit(&hh__state, memory_order_acquire) != HH_READY)) {
    /* Nothing has come from an allocator yet: the block is a bootstrap
     * block or glibc's. */
    if (!hh__bootstrap_owns(ptr)) hh__below_free(ptr);
    return;
  }
  switch (owner_of(ptr)) {
    case BOOTSTRAP:
      return;
    case FOREIGN:
      check_not_ours_freed("free", ptr);
      hh__below_free(ptr);
      return;
    case OWN:
      break;
  }
  if (recording()) note_free(fn, ptr);
  void *base = base_of(ptr);
  if (base != ptr) hh__block_forget(ptr);
  hh__rt.alloc->dealloc(base);
}

void hh__free(void *ptr) {
  NOTE_CALL(HH_FN_FREE);
  free_as(HH_FN_FREE, ptr);
}

void hh__free_sized(void *ptr, size_t size) {
  (void)size;
  NOTE_CALL(HH_FN_FREE_SIZED);
  free_as(HH_FN_FREE_SIZED, ptr);
}

void hh__free_aligned_sized(void *ptr, size_t align, size_t size) {
  (void)align;
  (void)size;
  NOTE_CALL(HH_FN_FREE_ALIGNED_SIZED);
  free_as(HH_FN_FREE_ALIGNED_SIZED, ptr);
}

/* ---- resize ---------------------------------------------------------------- */

/* Moves a bootstrap block into a fresh one. */
static void *move_block(hh_fn fn, void *ptr, size_t old_usable, size_t size) {
  void *p = alloc_block(fn, size, size, 1, false);
  if (p == NULL) return NULL;
  memcpy(p, ptr, old_usable < size ? old_usable : size);
  return p;
}

static void *resize_own(hh_fn fn, void *ptr, size_t size) {
  size_t prefix = hh__rt.prefix;
  /* The sampled recorders hear of a realloc whose old block was sampled
   * (before the real realloc, like a free) or whose new one is. */
  bool rec = recording();
  hh_event ev = {.fn = fn, .size = size, .old_ptr = ptr};
  if (hh__rt.sample_period != 0 && rec) {
    ev.old_sampled = hh__block_is_sampled(ptr);
    ev.weight = hh__sample_take(size);
    ev.new_sampled = ev.weight != 0;
  }
  /* The new block's lead: the prefix; without one, HH_SAMPLED_LEAD when
   * it is sampled or the old block had that lead (block.h), else none. A
   * block whose lead changes (an over-aligned one, one sampled now) moves,
   * the recorders' slots with it: a realloc keeps neither the alignment
   * nor a lead rounded up to it. */
  size_t old_lead = lead_of(ptr);
  size_t lead = prefix != 0 || ev.new_sampled || old_lead == HH_SAMPLED_LEAD ? front_of(true) : 0;
  bool sampled = ev.old_sampled || ev.new_sampled;
  if (rec) {
    tell(&hh__rt.on_realloc_begin, &ev, ptr);
    if (sampled) tell(&hh__rt.sampled_realloc_begin, &ev, ptr);
  }
  char *user;
  if (old_lead == lead) {
    /* (the allocator may move the block and free the old one: no header
     * is left there) */
    uint32_t old_magic = lead != 0 ? hh__block_magic(ptr) : 0;
    if (lead != 0) hh__block_forget(ptr);
    user = a_realloc((char *)ptr - old_lead, size + lead);
    if (unlikely(user == NULL)) {
      if (lead != 0) hh__block_header(ptr)->magic = old_magic;
      return fail(ENOMEM);
    }
    user += lead;
    if (lead != 0) {
      hh__block_header(user)->lead16 = (uint32_t)(lead / 16);
      hh__block_header(user)->magic = ev.new_sampled ? HH_BLOCK_MAGIC_SAMPLED : HH_BLOCK_MAGIC;
    }
  } else {
    user = place_block(size, 1, false, lead, ev.new_sampled);
    if (unlikely(user == NULL)) return fail(ENOMEM);
    if (prefix != 0) memcpy(user - prefix, (char *)ptr - prefix, prefix - HH_BLOCK_HEADER);
    size_t old = own_usable(ptr);
    memcpy(user, ptr, old < size ? old : size);
    if (old_lead != 0) hh__block_forget(ptr);
    hh__rt.alloc->dealloc((char *)ptr - old_lead);
  }
  if (rec) {
    ev.ptr = user;
    tell(&hh__rt.on_realloc, &ev, user);
    if (sampled) tell(&hh__rt.sampled_realloc, &ev, user);
  }
  return user;
}

static void *realloc_as(hh_fn fn, void *ptr, size_t size) {
  if (ptr == NULL) return malloc_as(fn, size);
  if (size == 0) {
    free_as(fn, ptr);
    return NULL;
  }
  if (unlikely(size > MAX_REQUEST)) return fail(ENOMEM);
  if (unlikely(!hh__start())) {
    if (hh__bootstrap_owns(ptr)) return move_block(fn, ptr, hh__bootstrap_size(ptr), size);
    return hh__below_realloc(ptr, size);
  }
  switch (owner_of(ptr)) {
    case BOOTSTRAP:
      return move_block(fn, ptr, hh__bootstrap_size(ptr), size);
    case FOREIGN:
      check_not_ours_freed("realloc", ptr);
      return hh__below_realloc(ptr, size);
    case OWN:
      break;
  }
  return resize_own(fn, ptr, size);
}

void *hh__realloc(void *ptr, size_t size) {
  NOTE_ALLOC_CALL(HH_FN_REALLOC);
  return realloc_as(HH_FN_REALLOC, ptr, size);
}

void *hh__reallocarray(void *ptr, size_t nmemb, size_t size) {
  NOTE_ALLOC_CALL(HH_FN_REALLOCARRAY);
  size_t total;
  if (__builtin_mul_overflow(nmemb, size, &total)) return fail(ENOMEM);
  return realloc_as(HH_FN_REALLOCARRAY, ptr, total);
}

/* ---- queries ------------------------------------------------------------- */

size_t hh__malloc_usable_size(void *ptr) {
  NOTE_CALL(HH_FN_MALLOC_USABLE_SIZE);
  if (ptr == NULL) return 0;
  if (hh__bootstrap_owns(ptr)) return hh__bootstrap_size(ptr);
  if (atomic_load_explicit(&hh__state, memory_order_acquire) != HH_READY) return hh__below_usable_size(ptr);
  switch (owner_of(ptr)) {
    case BOOTSTRAP:
      return hh__bootstrap_size(ptr);
    case FOREIGN:
      return hh__below_usable_size(ptr);
    case OWN:
      break;
  }
  return own_usable(ptr);
}

const char *hh__owner_name(const void *ptr) {
  if (ptr == NULL) return NULL;
  void *p = (void *)ptr;
  if (hh__bootstrap_owns(p)) return "bootstrap";
  if (atomic_load_explicit(&hh__state, memory_order_acquire) != HH_READY) return "foreign";
  switch (owner_of(p)) {
    case BOOTSTRAP:
      return "bootstrap";
    case FOREIGN:
      return "foreign";
    case OWN:
      break;
  }
  return hh__rt.alloc->name;
}
