/* The TLSF allocator as a heaphook plug-in: pools from mmap, growth by the
 * heaphook rule, a priority-inheritance mutex around the OS-free core
 * (tlsf.c), ownership checks and the HEAPHOOK_STATS report.
 *
 * Configuration (read once, in init, by scanning environ):
 *   INITIAL_MEMPOOL_SIZE     first pool (bytes, or K/M/G/T suffix); default
 *                            64M; 0 = no pool until the first allocation.
 *   ADDITIONAL_MEMPOOL_SIZE  first addition when the pools are exhausted;
 *                            default = INITIAL_MEMPOOL_SIZE (64M when that
 *                            is 0); 0 = never grow (a fixed pool).
 *   HEAPHOOK_TLSF_MLOCK      1/true/yes/on: mlock every pool.
 *   HEAPHOOK_TLSF_CACHE      0: no per-thread cache of freed blocks.
 *   HEAPHOOK_TLSF_HUGEPAGES  0: pools on ordinary pages only (default: pools
 *                            of 2 MiB or more are advised MADV_HUGEPAGE).
 * Both sizes are kept to the byte: a pool of n bytes is mapped on whole
 * pages (the tail of the last page unused) and handed to the core rounded
 * down to 16, so that the growth rule adds exactly what it says.
 *
 * Growth (only when an allocation finds no block, even after the calling
 * thread's cache has gone back to the pools): map an addition of
 * ADDITIONAL bytes; if the request still does not fit, map twice the
 * previous addition, and so on until it fits (or mmap fails: NULL). Each
 * addition is a separate pool; pools are never returned to the system.
 * The first request that fails (no growth, or a failed one) is said in one
 * line (say_exhausted); growth itself is not said (HEAPHOOK_STATS counts it).
 *
 * Locking and worst case: one mutex, priority inheritance when the system
 * supports it (a plain mutex otherwise). Inside it, every operation is a
 * bounded number of TLSF steps: no system call, no page fault (pools are
 * pre-faulted), no loop over blocks, no copy (realloc copies outside the
 * lock). The exception is growth, which holds the lock across mmap and page
 * population (time proportional to the addition): size INITIAL_MEMPOOL_SIZE
 * so that it never happens. A thread first tries the lock up to SPIN_TRIES
 * times (bounded: tens of microseconds at most; not when the process may
 * run on one CPU only), then sleeps in the kernel, whose PI queue is
 * ordered by priority and hands the lock straight
 * to its head while boosting the holder. So the highest-priority thread
 * waits at most: the spin + one critical section (one TLSF operation). */
#define _GNU_SOURCE /* strerrordesc_np: a reason without allocating; sched_getaffinity */
#include "alloc/tlsf/tlsf_allocator.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "alloc/tlsf/tlsf.h"
#include "base/cancel.h"
#include "base/env.h"
#include "base/handlers.h"
#include "base/log.h"
#include "base/memory_limit.h"
#include "base/size.h"

#define DEFAULT_POOL_SIZE ((size_t)64 << 20)
#define DEFAULT_POOL_TEXT "64M" /* (as the user would write it, for messages) */

/* Most pools the allocator will ever add; further growth fails (NULL). */
#define MAX_POOLS 4096

/* Pool address ranges, for owns(), readable without the lock.
 *
 * g_ranges is append-only, in the order pools were added: entries
 * [0, g_range_count) are complete (an entry is written before the count is
 * raised with a release store) and never change (until a test reset).
 *
 * g_index[2] are two copies of the same ranges sorted by address, for a
 * binary search; g_index_gen says which one is current (gen & 1). A growth
 * (under the lock) writes the other copy and then publishes gen + 1. A
 * reader searches the copy of the generation it loaded and checks afterwards
 * that the generation has not moved; if it has (a growth ran meanwhile, and
 * the copy may be the one being rewritten), it answers from g_ranges with a
 * linear scan instead. Readers never wait, so a high-priority thread cannot
 * spin behind a preempted writer. All fields of g_index are accessed with
 * atomic loads and stores. */
typedef struct pool_range {
  uintptr_t lo, hi;
} pool_range;

typedef struct range_index {
  size_t count;
  pool_range r[MAX_POOLS];
} range_index;

static pool_range g_ranges[MAX_POOLS];
/* The first pool's range, set once when it is published (0 bytes before). */
static uintptr_t g_first_lo, g_first_bytes;
/* Each pool's size as configured (its mapping is rounded up to pages). */
static size_t g_pool_bytes[MAX_POOLS];
static size_t g_range_count;
static range_index g_index[2];
static unsigned g_index_gen;

/* Everything else; lock protects all fields below it. config and the flags
 * above lock are written only in init/reset. */
static struct {
  bool inited, atfork_registered, pi_lock, locked_for_fork, mlock_warned;
  bool exhaustion_said; /* the line of the first request the pools could not serve */
  bool overridden;      /* configure() sizes replace the environment */
  size_t cfg_initial, cfg_additional;
  size_t page, initial, additional;
  unsigned spin_tries;
  bool mlock;
  bool huge;  /* pools on transparent huge pages (HEAPHOOK_TLSF_HUGEPAGES) */
  bool cache; /* per-thread cache of freed blocks (HEAPHOOK_TLSF_CACHE) */
  bool cache_key_made;
  pthread_key_t cache_key;
  pthread_mutex_t lock;
  tlsf_t *tlsf;
  size_t growths, peak_used, largest_request, mlock_failures, map_failures;
  /* The most pool bytes not free after any allocation: used blocks with
   * their headers, the pools' own overhead and free blocks' headers. */
  size_t peak_held;
  int mlock_errno; /* the last failed mlock's */
} g;

/* The largest request a thread's cache served, without the lock (the
 * report's largest request is the larger of this and g's). A line of its
 * own: g's is written by every allocation under the lock. */
static _Alignas(64) _Atomic size_t g_largest_cached;

/* The core's control structure lives here, not in a pool, so that the pools
 * are interchangeable and INITIAL_MEMPOOL_SIZE=0 works. */
static _Alignas(16) unsigned char g_control[TLSF_CONTROL_SIZE];

/* ---- Locking ------------------------------------------------------------ */

/* A priority-inheritance mutex, or a plain one where PI is not supported. */
static void lock_init(void) {
  pthread_mutexattr_t attr;
  g.pi_lock = false;
  if (pthread_mutexattr_init(&attr) == 0) {
    if (pthread_mutexattr_setprotocol(&attr, PTHREAD_PRIO_INHERIT) == 0 &&
        pthread_mutex_init(&g.lock, &attr) == 0) {
      g.pi_lock = true;
    }
    pthread_mutexattr_destroy(&attr);
  }
  if (!g.pi_lock) pthread_mutex_init(&g.lock, NULL);
}

/* Tries the lock a bounded number of times (user space only) before
 * blocking in the kernel. A PI mutex hands a contended lock directly to the
 * sleeping waiter, so without this a brief collision turns into a convoy of
 * futex calls and context switches (measured on 2 cores, 4 threads, 10M
 * operations: 20-33 s without the spin, 2-5 s with it; 2 threads of the
 * latency benchmark: p99.99 of 40-60 us with 100 tries, 2.5-5.5 us with 500,
 * no better with 1000 or 2000). The spin adds at most SPIN_TRIES attempts,
 * each a trylock and a pause (tens of microseconds in all), to the wait
 * bound; it is skipped when the process may run on one CPU only
 * (cpus_to_run_on), where the holder cannot run while we spin. */
#define SPIN_TRIES 500

/* This thread holds the lock, or is about to take it: set before the
 * attempt, so that a signal handler interrupting it anywhere from there to
 * the unlock sees it (atfork_prepare). */
static __thread bool t_holds __attribute__((tls_model("initial-exec")));

static void lock(void) {
  t_holds = true;
  for (unsigned i = 0; i < g.spin_tries; i++) {
    if (pthread_mutex_trylock(&g.lock) == 0) return;
    __asm__ __volatile__("" ::: "memory");
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
  }
  pthread_mutex_lock(&g.lock);
}
static void unlock(void) {
  pthread_mutex_unlock(&g.lock);
  t_holds = false;
}

/* fork: hold the lock across it so the child never sees a half-done
 * operation. The child re-creates the mutex instead of unlocking it: a PI
 * mutex records the owner's thread id, which is different in the child, so
 * an unlock there would fail with EPERM and leave it locked. */
/* A fork from a signal handler that interrupted this thread in the
 * allocator (it holds the lock, or waits for it) would wait for itself:
 * the fork goes on without the lock, and the child gets a new one over a
 * heap that may be half-way through an operation, which is what POSIX
 * allows a child forked so to use anyway (async-signal-safe calls: exec,
 * _exit). Before, such a fork hung every run (trace.tlsf_signal_fork). */
static bool fork_without_lock;

static void atfork_prepare(void) {
  if (!g.inited) return;
  if (t_holds) {
    fork_without_lock = true;
    return;
  }
  lock();
  g.locked_for_fork = true;
}

static void atfork_parent(void) {
  fork_without_lock = false;
  if (!g.locked_for_fork) return;
  g.locked_for_fork = false;
  unlock();
}

static void atfork_child(void) {
  if (!g.locked_for_fork && !fork_without_lock) return;
  g.locked_for_fork = false;
  fork_without_lock = false;
  t_holds = false;
  lock_init();
}

/* ---- Pools -------------------------------------------------------------- */

/* n rounded up to whole pages into *out; -1 on overflow or past the core's
 * pool limit. */
static int round_to_pages(size_t n, size_t *out) {
  if (n > TLSF_MAX_POOL) return -1;
  *out = (n + g.page - 1) & ~(g.page - 1);
  return 0;
}

#define LOAD(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)
#define STORE(x, v) __atomic_store_n(&(x), (v), __ATOMIC_RELAXED)

/* Writes the sorted copy that is not current: the current one plus [lo, hi).
 * The release fence orders the previous publication before these writes (so
 * a reader that sees any of them also sees that the generation moved). */
static void index_insert(unsigned gen, uintptr_t lo, uintptr_t hi) {
  const range_index *cur = &g_index[gen & 1];
  range_index *next = &g_index[(gen + 1) & 1];
  __atomic_thread_fence(__ATOMIC_RELEASE);
  size_t n = LOAD(cur->count), j = 0;
  for (size_t i = 0; i < n; i++) {
    pool_range e = {LOAD(cur->r[i].lo), LOAD(cur->r[i].hi)};
    if (j == i && lo < e.lo) {
      STORE(next->r[j].lo, lo);
      STORE(next->r[j].hi, hi);
      j++;
    }
    STORE(next->r[j].lo, e.lo);
    STORE(next->r[j].hi, e.hi);
    j++;
  }
  if (j == n) {
    STORE(next->r[j].lo, lo);
    STORE(next->r[j].hi, hi);
  }
  STORE(next->count, n + 1);
}

/* Makes a new range visible to owns(). Called with the lock held. */
static void publish_range(uintptr_t lo, uintptr_t hi) {
  size_t n = g_range_count;
  g_ranges[n].lo = lo;
  g_ranges[n].hi = hi;
  if (n == 0) {
    STORE(g_first_lo, lo);
    __atomic_store_n(&g_first_bytes, hi - lo, __ATOMIC_RELEASE);
  }
  __atomic_store_n(&g_range_count, n + 1, __ATOMIC_RELEASE);
  unsigned gen = LOAD(g_index_gen);
  index_insert(gen, lo, hi);
  __atomic_store_n(&g_index_gen, gen + 1, __ATOMIC_RELEASE);
}

/* Size of a transparent huge page (x86-64, arm64 with 4 KiB pages). */
#define HUGE_PAGE ((size_t)2 << 20)

/* Maps mapped bytes (whole pages), read-write and pre-faulted, or returns
 * MAP_FAILED. With huge pages on and mapped >= HUGE_PAGE, the area is
 * aligned to HUGE_PAGE and advised MADV_HUGEPAGE before it is populated
 * (MADV_POPULATE_WRITE), so that the kernel backs it with 2 MiB pages where
 * it can: a block header read then rarely misses the TLB (a miss costs a
 * nested page walk in a VM). A kernel without MADV_POPULATE_WRITE (before
 * 5.14) gets the plain MAP_POPULATE mapping. */
static void *map_pool(size_t mapped) {
  const int prot = PROT_READ | PROT_WRITE, flags = MAP_PRIVATE | MAP_ANONYMOUS;
  int saved = errno; /* a refused hint must not show in errno */
  if (g.huge && mapped >= HUGE_PAGE && mapped <= TLSF_MAX_POOL) {
    size_t span = mapped + HUGE_PAGE;
    /* Inaccessible until advised: a process that called
     * mlockall(MCL_FUTURE), as real-time programs do, has every accessible
     * new mapping populated at once, which was on 4 KiB pages before the
     * advice (until 2026-11-28 every pool of such a process was); made
     * writable after it, the pool is populated on huge pages, there by
     * mprotect, else by MADV_POPULATE_WRITE. */
    char *raw = mmap(NULL, span, PROT_NONE, flags, -1, 0);
    /* (no room for the alignment's 2 MiB more, under ulimit -v: the plain
     * mapping below, where growth failed; found by a helper) */
    if (raw == MAP_FAILED) goto plain;
    char *mem = (char *)(((uintptr_t)raw + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1));
    if (mem != raw) munmap(raw, (size_t)(mem - raw));
    size_t tail = span - (size_t)(mem - raw) - mapped;
    if (tail != 0) munmap(mem + mapped, tail);
    madvise(mem, mapped, MADV_HUGEPAGE); /* a hint: fine if refused */
    if (mprotect(mem, mapped, prot) != 0) {
      munmap(mem, mapped);
      return MAP_FAILED;
    }
    if (madvise(mem, mapped, MADV_POPULATE_WRITE) == 0) {
      errno = saved;
      return mem;
    }
    int err = errno;
    munmap(mem, mapped);
    if (err != EINVAL) return MAP_FAILED; /* out of memory */
  }
plain:
  errno = saved;
  return mmap(NULL, mapped, prot, flags | MAP_POPULATE, -1, 0);
}

/* Maps a pool of bytes pre-faulted (the mapping is rounded up to whole
 * pages; the pool itself is bytes, rounded down to 16, so that pool sizes
 * follow INITIAL/ADDITIONAL_MEMPOOL_SIZE to the byte), optionally locks it,
 * and adds it. Returns false when the pool table is full, the pool is too
 * small to hold a block, or mmap fails. No memset (fresh anonymous pages are
 * zero), no stdio. Called with the lock held, or from init. */
static bool add_pool(size_t bytes) {
  size_t mapped;
  if (g_range_count == MAX_POOLS || round_to_pages(bytes, &mapped) != 0) return false;
  if ((bytes & ~(size_t)15) < TLSF_POOL_OVERHEAD + 32) return false;
  void *mem = map_pool(mapped);
  if (mem == MAP_FAILED) {
    g.map_failures++;
    return false;
  }
  if (g.mlock && mlock(mem, mapped) != 0) {
    g.mlock_failures++;
    g.mlock_errno = errno;
    /* (the initial pool's failure is told by init; an added pool's was only
     * counted, in HEAPHOOK_STATS's report: a real-time program learnt at
     * exit that its pages could fault) */
    if (g.inited && !g.mlock_warned) {
      g.mlock_warned = true;
      /* (under the lock, and write is a cancellation point: a thread with
       * a cancel pending was unwound here with the lock held, and every
       * later allocation of the process waited for it forever;
       * base/cancel.h) */
      int cancel = hh__cancel_off();
      hh__log(
          "tlsf: HEAPHOOK_TLSF_MLOCK: mlock of an added pool of %zu bytes failed (%s; see ulimit -l); its "
          "pages are not locked, going on",
          mapped, strerrordesc_np(g.mlock_errno));
      hh__cancel_restore(cancel);
    }
  }
  if (tlsf_add_pool(g.tlsf, mem, bytes & ~(size_t)15) == NULL) {
    munmap(mem, mapped);
    return false;
  }
  g_pool_bytes[g_range_count] = bytes;
  publish_range((uintptr_t)mem, (uintptr_t)mem + mapped);
  return true;
}

/* ---- Allocation under the lock ------------------------------------------ */

static void *alloc_locked(size_t size, size_t align) {
  return align <= HH_MIN_ALIGN ? tlsf_malloc(g.tlsf, size) : tlsf_memalign(g.tlsf, align, size);
}

/* The memory this process may use in bytes: the machine's physical memory,
 * or its cgroup's limit where lower (a container's: a request past it,
 * pre-faulted, met the OOM killer where it should fail with ENOMEM; found
 * by a helper). SIZE_MAX when unknown. Read once, at start-up (read_config),
 * where calls are serialized. */
static size_t usable_memory(void) {
  static size_t usable;
  if (usable == 0) usable = hh__memory_limit();
  return usable;
}

/* The pool table's last slots: a growth that finds fewer free than this
 * starts from a sixteenth of the pool bytes so far, when that is more than
 * ADDITIONAL, so that the heap grows by at least 1/16 each time and the table
 * never fills while memory remains (256 such growths multiply it by 5
 * million). Before, growth stopped at the 4096th pool: with tier4 heaphook's
 * README sizes (1000000-byte additions) a program failed past 4 GB
 * (tlsf_allocator, test_growth_goes_on_past_the_pool_table). */
#define POOL_RESERVE 256

/* The first addition of a growth: ADDITIONAL, or the above. Under the lock. */
static size_t first_addition(void) {
  size_t addition = g.additional;
  if (g_range_count >= MAX_POOLS - POOL_RESERVE) {
    size_t sixteenth = tlsf_pool_bytes(g.tlsf) / 16;
    if (addition < sixteenth) addition = sixteenth;
  }
  return addition;
}

/* True when the additions the growth rule would make for this request add
 * up to no more than the memory the process may use. Pools are pre-faulted,
 * so a request no machine can hold (malloc(1 << 56)) must fail at once with
 * ENOMEM rather than fault in every doubling until the OOM killer comes. */
static bool growth_fits_memory(size_t size, size_t align) {
  size_t usable = usable_memory();
  size_t need = size + align + TLSF_POOL_OVERHEAD + 64; /* enough to hold the block */
  size_t addition = first_addition(), total = 0;
  for (;;) {
    if (__builtin_add_overflow(total, addition, &total) || total > usable) return false;
    if (addition >= need) return true;
    if (addition > SIZE_MAX / 2) return false;
    addition *= 2;
  }
}

/* Why the pools could not serve a request: for the one line said at the
 * first such request (say_exhausted). */
enum exhaustion_reason {
  EXHAUSTED_NOT = 0,
  EXHAUSTED_FIXED,       /* ADDITIONAL_MEMPOOL_SIZE=0 */
  EXHAUSTED_OVER_MEMORY, /* the additions for it are more than the memory */
  EXHAUSTED_MAP_FAILED,  /* mapping the addition failed (errno in err) */
  EXHAUSTED_NO_POOL,     /* the table of pools is full */
};

typedef struct exhaustion {
  int reason; /* enum exhaustion_reason */
  int err;
  size_t request, addition, pools, pool_bytes, used, peak_held;
} exhaustion;

/* The heaphook growth rule: additions of ADDITIONAL, 2*ADDITIONAL, 4*...,
 * each a new pool, until the request fits (near the end of the pool
 * table, from first_addition). Returns the block or NULL (growth
 * disabled, request beyond any pool, mmap failed, pool table full), and
 * then why in x->reason (left as it is for a request beyond any pool). */
static void *grow_and_alloc(size_t size, size_t align, exhaustion *x) {
  if (size > TLSF_MAX_REQUEST || align > TLSF_MAX_REQUEST) return NULL;
  if (g.additional == 0) {
    x->reason = EXHAUSTED_FIXED;
    return NULL;
  }
  if (!growth_fits_memory(size, align)) {
    x->reason = EXHAUSTED_OVER_MEMORY;
    return NULL;
  }
  size_t addition = first_addition();
  for (;;) {
    /* An addition too small to hold any block cannot satisfy the request:
     * go on doubling, as the rule does with one that is merely too small. */
    bool too_small = (addition & ~(size_t)15) < TLSF_POOL_OVERHEAD + 32;
    if (too_small && addition <= TLSF_MAX_POOL / 2) {
      addition *= 2;
      continue;
    }
    size_t map_failures = g.map_failures;
    if (!add_pool(addition)) {
      x->err = errno;
      x->reason = g.map_failures != map_failures ? EXHAUSTED_MAP_FAILED : EXHAUSTED_NO_POOL;
      x->addition = addition;
      return NULL;
    }
    g.growths++;
    void *p = alloc_locked(size, align);
    if (p != NULL) return p;
    if (addition > TLSF_MAX_POOL / 2) return NULL;
    addition *= 2;
  }
}

/* Statistics after a successful allocation of a request of size bytes. */
static void note_alloc(size_t size) {
  size_t used = tlsf_bytes_used(g.tlsf);
  if (used > g.peak_used) g.peak_used = used;
  size_t held = tlsf_pool_bytes(g.tlsf) - tlsf_bytes_free(g.tlsf);
  if (held > g.peak_held) g.peak_held = held;
  if (size > g.largest_request) g.largest_request = size;
}

/* The core's block for a request of size bytes: of core_size >= size bytes
 * first (the per-thread cache's rounding), else of size itself. */
static void *alloc_fitting(size_t size, size_t align, size_t core_size) {
  void *p = alloc_locked(core_size, align);
  if (p == NULL && core_size != size) p = alloc_locked(size, align);
  return p;
}

static bool cache_flush_own(void);

/* Allocation of a request of size bytes with growth; errno is kept on
 * success (mmap or mlock may have set it during a growth). When the pools
 * have no block, the calling thread's cache goes back to them and the
 * search is repeated before the pools grow or the request fails: the
 * cached blocks, merged with their free neighbours, may hold it. Before, a
 * program that had freed everything got ENOMEM from a fixed pool, or a
 * growth it did not need (a pool mapped and pre-faulted). Other threads'
 * caches are left alone (docs/tlsf.md). Called with the lock held, which
 * is released and taken again around that flush.
 * resize: for a realloc whose block could not grow in place, that block
 * (else NULL): after the flush it is tried in place again first, as its
 * successor may have been in the cache, and is then returned itself.
 * Before, the realloc failed with ENOMEM from a fixed pool (or grew the
 * pools) while the block, its cached successor and the free space after
 * them held the new size.
 * x: set when the request fails and is the first the pools could not
 * serve (x->reason not EXHAUSTED_NOT), for the caller to say once it has
 * released the lock (say_exhausted). A request larger than the memory the
 * process may use is not one: it fails under any allocator (the
 * conformance suite's huge.malloc asks for 2^56 bytes). */
static void *alloc_or_grow(size_t size, size_t align, size_t core_size, void *resize, exhaustion *x) {
  void *p = alloc_fitting(size, align, core_size);
  if (p == NULL && cache_flush_own()) {
    if (resize != NULL && tlsf_resize_in_place(g.tlsf, resize, size))
      p = resize;
    else
      p = alloc_fitting(size, align, core_size);
  }
  if (p == NULL) {
    int saved = errno;
    exhaustion why = {.reason = EXHAUSTED_NOT};
    p = grow_and_alloc(size, align, &why);
    if (p != NULL) {
      errno = saved;
    } else if (why.reason != EXHAUSTED_NOT && !g.exhaustion_said && size <= usable_memory() &&
               align <= usable_memory() - size) {
      g.exhaustion_said = true;
      why.request = size;
      why.pools = tlsf_pool_count(g.tlsf);
      why.pool_bytes = tlsf_pool_bytes(g.tlsf);
      why.used = tlsf_bytes_used(g.tlsf);
      why.peak_held = g.peak_held;
      *x = why;
    }
  }
  if (p != NULL) note_alloc(size);
  return p;
}

/* The one line said at the first request the pools could not serve, after
 * the lock is released (stderr may be a pipe nobody reads: no other thread
 * waits for that write). Before, a program on a fixed pool got NULL, or
 * died of std::bad_alloc, without a word about the pool (found by a
 * tester). Growth itself says nothing: a real-time program must not write
 * at run time, and HEAPHOOK_STATS counts the growths. */
static void say_exhausted(const exhaustion *x) {
  int cancel = hh__cancel_off(); /* (a cancel pending is not acted on inside malloc) */
#define EXHAUSTED_HEAD                                                                                      \
  "tlsf: pool exhausted: a request of %zu bytes failed (ENOMEM) with %zu pool bytes in %zu pool%s, %zu in " \
  "use, peak in pools %zu; "
#define EXHAUSTED_HEAD_ARGS \
  x->request, x->pool_bytes, x->pools, x->pools == 1 ? "" : "s", x->used, x->peak_held
#define EXHAUSTED_ADVICE                                                                                   \
  "set INITIAL_MEMPOOL_SIZE above the `peak in pools` that HEAPHOOK_STATS=1 reports on a run with a pool " \
  "large enough"
  if (x->reason == EXHAUSTED_FIXED) {
    hh__log(EXHAUSTED_HEAD "ADDITIONAL_MEMPOOL_SIZE=0 never grows it: " EXHAUSTED_ADVICE " (said once)",
            EXHAUSTED_HEAD_ARGS);
  } else if (x->reason == EXHAUSTED_OVER_MEMORY) {
    hh__log(
        EXHAUSTED_HEAD
        "the pools growth would add for it (ADDITIONAL_MEMPOOL_SIZE, doubled until it fits) are more than "
        "this machine's memory (or its cgroup's limit): " EXHAUSTED_ADVICE
        ", or a smaller ADDITIONAL_MEMPOOL_SIZE (said once)",
        EXHAUSTED_HEAD_ARGS);
  } else {
    hh__log(EXHAUSTED_HEAD "adding a pool of %zu bytes failed (%s): " EXHAUSTED_ADVICE
                           ", or a smaller ADDITIONAL_MEMPOOL_SIZE (said once)",
            EXHAUSTED_HEAD_ARGS, x->addition,
            x->reason == EXHAUSTED_NO_POOL || x->err == 0 ? "too many pools" : strerrordesc_np(x->err));
  }
#undef EXHAUSTED_HEAD
#undef EXHAUSTED_HEAD_ARGS
#undef EXHAUSTED_ADVICE
  hh__cancel_restore(cancel);
}

/* ---- Per-thread cache ------------------------------------------------------
 *
 * The global lock costs more than TLSF's own work (measured: 44 ns per small
 * malloc+free with it, 34 without), a free that reaches the core merges
 * with its neighbours (cache misses on their headers and list links, under
 * the lock), and two threads on one lock convoy. So each thread keeps freed
 * blocks and reuses them without the lock:
 *
 *   small   payload 16..512 bytes, one bin per 16-byte class (requests up to
 *           520 bytes), up to SMALL_DEPTH blocks each;
 *   medium  payload 640..40944 bytes, 4 bins per power of two with lower
 *           bounds 640, 768, 896, 1024, 1280, ... 32768 (requests 521 to
 *           32776 bytes), up to MEDIUM_DEPTH blocks each.
 *
 * A freed block goes into the bin of the largest lower bound at or below its
 * payload (floor); a request takes from the bin of the smallest lower bound
 * at or above its payload (ceiling), so every block of that bin holds it.
 * With the cache on, a medium request that misses asks the core for its
 * class's lower bound, not for the exact size, so that the block fits its
 * bin exactly when it comes back (at most 25% more than asked for; the exact
 * size is tried before the pools grow). Blocks that are not exactly a bound
 * (from memalign, realloc or an unsplit tail) are binned by floor as well.
 *
 * Bounds: at most SMALL_DEPTH or MEDIUM_DEPTH blocks per bin and at most
 * HH_TLSF_CACHE_MAX_BYTES of payload in one thread's cache (a medium block
 * is charged its bin's largest payload). A hit or push is a few
 * instructions; a miss or an overflow is one ordinary TLSF call under the
 * lock, so the bound per call is unchanged. Cached blocks stay "used" to the
 * core (owns, block_size and the invariant walker are unchanged) and count
 * as in use in the statistics. A thread's cache goes back to the pools when
 * the thread exits (a pthread key destructor; one lock per block), and is
 * closed then: the blocks the thread frees afterwards (the program's key
 * destructors, libc's own thread buffers) go straight to the pools. It also
 * goes back when an allocation finds no block in the pools, before they grow
 * (alloc_or_grow); other threads' caches cannot be reached. A second
 * free of a block still in a cache, this thread's or another's, is caught:
 * only a cached block holds the key in its second word (g_cache_key_word).
 * HEAPHOOK_TLSF_CACHE=0 turns it off. */
#define SMALL_BINS 32
#define SMALL_DEPTH 16
#define SMALL_GRANULE 16
#define SMALL_MAX_PAYLOAD ((size_t)SMALL_BINS * SMALL_GRANULE)
#define MEDIUM_SL_LOG2 2 /* 4 classes per power of two */
#define MEDIUM_BINS 24
#define MEDIUM_DEPTH 8
#define MEDIUM_MIN_PAYLOAD ((size_t)640)   /* lower bound of the first bin */
#define MEDIUM_MAX_PAYLOAD ((size_t)32768) /* lower bound of the last bin */
#define MEDIUM_END_PAYLOAD ((size_t)40960) /* first payload past the last bin */
#define CACHE_BINS (SMALL_BINS + MEDIUM_BINS)

/* Where a thread's cache stands with respect to the thread's exit. glibc
 * zeroes static TLS for every new thread, so a thread starts UNARMED. */
enum cache_state {
  CACHE_UNARMED, /* the key has no value: nothing would flush the cache */
  CACHE_ARMED,   /* the key holds the cache: its destructor will flush it */
  CACHE_CLOSED,  /* flushed by that destructor: the thread is exiting, and
                  * what it frees from now on goes straight to the pools */
};

/* A thread's bins: 5.6 KiB, outside its thread-local storage (below). */
typedef struct cache_slots {
  void *small[SMALL_BINS][SMALL_DEPTH];
  void *medium[MEDIUM_BINS][MEDIUM_DEPTH];
  struct cache_slots *next; /* in the free list (cache_slots_free) */
} cache_slots;

/* In static TLS, which glibc carves out of every thread's stack, whatever
 * allocator the process runs on: only the counts and a pointer to the bins,
 * set when the cache is armed (slots_get). With the bins here, a thread
 * with a 16 KiB stack (PTHREAD_STACK_MIN) lost 5.6 KiB of it to heaphook
 * and overflowed at half the recursion depth it reached alone (found by a
 * helper). A cache with counts of 0 never reads its slots. */
typedef struct thread_cache {
  size_t bytes; /* payload charged for the cached blocks (see cache_put) */
  unsigned char count[CACHE_BINS];
  unsigned char state; /* enum cache_state */
  cache_slots *slots;  /* non-NULL from the first arming on */
} thread_cache;

static __thread thread_cache t_cache __attribute__((tls_model("initial-exec")));

/* Bins of exited threads, for the next threads to arm (under the lock);
 * never unmapped. A thread takes a set when it arms its cache, and gives it
 * back when its cache closes; new sets come SLOTS_PER_MAP at a time from
 * one mapping, made outside the lock. */
#define SLOTS_PER_MAP 16
static cache_slots *cache_slots_free;

static cache_slots *slots_get(void) {
  lock();
  cache_slots *s = cache_slots_free;
  if (s) cache_slots_free = s->next;
  unlock();
  if (s) return s;
  int saved = errno;
  int flags = MAP_PRIVATE | MAP_ANONYMOUS | (g.mlock ? MAP_POPULATE : 0);
  cache_slots *map = mmap(NULL, SLOTS_PER_MAP * sizeof *map, PROT_READ | PROT_WRITE, flags, -1, 0);
  if (map == MAP_FAILED) {
    errno = saved;
    return NULL;
  }
  if (g.mlock) (void)mlock(map, SLOTS_PER_MAP * sizeof *map); /* as the pools; best effort */
  errno = saved;
  lock();
  for (unsigned i = 1; i < SLOTS_PER_MAP; i++) {
    map[i].next = cache_slots_free;
    cache_slots_free = &map[i];
  }
  unlock();
  return &map[0];
}

static void slots_put(cache_slots *s) {
  lock();
  s->next = cache_slots_free;
  cache_slots_free = s;
  unlock();
}

/* Largest request the cache serves: the last medium bin's. */
#define CACHE_MAX_REQUEST (MEDIUM_MAX_PAYLOAD + TLSF_BLOCK_TAIL)
#define SMALL_MAX_REQUEST (SMALL_MAX_PAYLOAD + TLSF_BLOCK_TAIL)

_Static_assert(SMALL_DEPTH <= 255 && MEDIUM_DEPTH <= 255, "counts are bytes");

static inline unsigned msb(size_t x) { return 63u - (unsigned)__builtin_clzll(x); }

/* Medium bin k covers payloads [medium_bound(k), medium_bound(k + 1)): class
 * k + 1 of the series 512, 640, 768, 896, 1024, 1280, ... (512 itself is the
 * last small class). */
static inline size_t medium_bound(unsigned k) {
  unsigned c = k + 1, m = c / 4 + 9;
  return (size_t)(4 + c % 4) << (m - MEDIUM_SL_LOG2);
}

/* Bin of a free block of payload s, MEDIUM_MIN_PAYLOAD <= s <
 * MEDIUM_END_PAYLOAD: the largest bound <= s. */
static inline unsigned medium_floor(size_t s) {
  unsigned m = msb(s);
  return (m - 9) * 4 + (unsigned)((s >> (m - MEDIUM_SL_LOG2)) & 3) - 1;
}

/* Bin of a request for payload p, SMALL_MAX_PAYLOAD < p <=
 * MEDIUM_MAX_PAYLOAD: the smallest bound >= p. */
static inline unsigned medium_ceil(size_t p) {
  return medium_floor(p + ((size_t)1 << (msb(p) - MEDIUM_SL_LOG2)) - 1);
}

/* Bin of a small request (1..SMALL_MAX_REQUEST): the class TLSF gives it,
 * the request less the usable tail rounded up to 16 (at least 16), so that
 * every block in the bin (class + tail usable bytes) holds the request. */
static inline unsigned small_bin(size_t size) {
  size_t payload = size > TLSF_BLOCK_TAIL + SMALL_GRANULE ? size - TLSF_BLOCK_TAIL : SMALL_GRANULE;
  return (unsigned)((payload + SMALL_GRANULE - 1) / SMALL_GRANULE) - 1;
}

/* Bytes charged for a block in bin b: the largest payload the bin holds. */
static inline size_t bin_charge(unsigned b) {
  return b < SMALL_BINS ? (size_t)(b + 1) * SMALL_GRANULE : medium_bound(b - SMALL_BINS + 1) - 16;
}

static inline void **bin_slots(thread_cache *c, unsigned b) {
  return b < SMALL_BINS ? c->slots->small[b] : c->slots->medium[b - SMALL_BINS];
}

/* A cached block carries this process-wide key in its second word, and only
 * a cached block does: cache_take clears the word when it hands the block
 * out, cache_flush before it gives the block back to the core. So a free
 * that finds the key has a block that is in a cache, its own thread's or
 * another's: a double free. (Until 2026-11-24 only the freeing thread's bin
 * was searched, as glibc's tcache does; a block in another thread's cache
 * freed again went into a second cache or back to the core, and two
 * callers were later handed the same block. Program data equal to the key,
 * 64 random bits, would be taken for a double free.) */
static uintptr_t g_cache_key_word;

/* Gives every cached block back, one lock per block so that no other
 * thread waits longer than one TLSF operation. */
static void cache_flush(thread_cache *c) {
  for (unsigned b = 0; b < CACHE_BINS; b++) {
    void **slots = bin_slots(c, b);
    while (c->count[b] > 0) {
      void *p = slots[--c->count[b]];
      ((uintptr_t *)p)[1] = 0; /* (the key: the core may leave the word as it is) */
      lock();
      tlsf_free(g.tlsf, p);
      unlock();
    }
  }
  c->bytes = 0;
}

/* Gives the calling thread's cached blocks back to the pools, when it has
 * any; for an allocation that found no block (alloc_or_grow), which holds
 * the lock: released for the flush, so that, as at a thread's exit, nobody
 * waits longer than one TLSF operation; taken again before returning.
 * Returns whether anything went back. */
static bool cache_flush_own(void) {
  thread_cache *c = &t_cache;
  if (c->bytes == 0) return false; /* (every cached block is charged) */
  unlock();
  cache_flush(c);
  lock();
  return true;
}

/* The key's destructor, run when the thread exits: flushes the cache and
 * closes it for good. glibc runs heaphook's destructor before the program's
 * (heaphook's key is older), and after all of them __libc_thread_freeres
 * frees libc's per-thread buffers; glibc then re-initialises this TLS for
 * the next thread, so a block cached from here on would be lost. Before,
 * the cache stayed open and every block a program's key destructor freed
 * leaked (about 2 KB per thread in the tester's program). Re-arming the key
 * instead would not do: glibc runs at most PTHREAD_DESTRUCTOR_ITERATIONS
 * rounds, and none after __libc_thread_freeres. */
static void cache_close(void *arg) {
  thread_cache *c = arg;
  cache_flush(c);
  c->state = CACHE_CLOSED;
  if (c->slots) slots_put(c->slots);
  c->slots = NULL;
}

/* Makes sure the key's destructor will close this thread's cache; false
 * when it is closed already (the thread is exiting: do not cache). Called
 * at the thread's first cached free and at its first allocation that
 * misses the cache (every thread's first allocation does), so that a thread
 * whose first free comes after the key destructors (libc's buffers, freed
 * by __libc_thread_freeres) has a closed cache by then. Outside the lock:
 * pthread_setspecific may allocate (keys past the first 32). */
static bool cache_arm(thread_cache *c) {
  if (c->state == CACHE_CLOSED) return false;
  if (c->state == CACHE_UNARMED) {
    if (!c->slots && !(c->slots = slots_get())) {
      c->state = CACHE_CLOSED; /* no memory for the bins: this thread does without */
      return false;
    }
    c->state = CACHE_ARMED;
    pthread_setspecific(g.cache_key, c);
  }
  return true;
}

static void cache_init(void) {
  if (g_cache_key_word == 0) {
    /* Not secret, only unlikely to be program data: random bits (or, where
     * getrandom fails, a mix of the clock and an address). Odd, so never a
     * pointer to a block nor 0 (what cache_take leaves). */
    uintptr_t key = 0;
    if (getrandom(&key, sizeof key, GRND_NONBLOCK) != (ssize_t)sizeof key) {
      struct timespec ts;
      clock_gettime(CLOCK_MONOTONIC, &ts);
      key = ((uintptr_t)ts.tv_nsec << 32) ^ (uintptr_t)ts.tv_sec ^ (uintptr_t)&g_cache_key_word ^
            0x9e3779b97f4a7c15u;
    }
    g_cache_key_word = key | 1;
  }
  if (g.cache && !g.cache_key_made) {
    g.cache_key_made = pthread_key_create(&g.cache_key, cache_close) == 0;
  }
  if (!g.cache_key_made) g.cache = false;
}

/* A cached block for a request of size bytes (1..CACHE_MAX_REQUEST), or
 * NULL; then *core_size is what to ask the core for: size itself, or for a
 * medium request its bin's lower bound (plus the tail), so that the block
 * goes back into that bin when it is freed. */
static inline void *cache_take(size_t size, size_t *core_size) {
  unsigned b;
  if (size <= SMALL_MAX_REQUEST) {
    b = small_bin(size);
    *core_size = size;
  } else {
    unsigned k = medium_ceil((size - TLSF_BLOCK_TAIL + 15) & ~(size_t)15);
    b = SMALL_BINS + k;
    *core_size = medium_bound(k) + TLSF_BLOCK_TAIL;
  }
  thread_cache *c = &t_cache;
  unsigned n = c->count[b];
  if (n == 0) return NULL;
  c->count[b] = (unsigned char)--n;
  c->bytes -= bin_charge(b);
  void *p = bin_slots(c, b)[n];
  ((uintptr_t *)p)[1] = 0;
  return p;
}

static void die_double_free(const void *ptr);

/* True when ptr went into this thread's cache. Aborts on a double free. */
static inline bool cache_put(void *ptr) {
  size_t usable = tlsf_used_block_size(ptr);
  if (usable == 0) {
    lock();
    die_double_free(ptr);
  }
  size_t payload = usable - TLSF_BLOCK_TAIL;
  unsigned b, depth;
  if (payload <= SMALL_MAX_PAYLOAD) {
    b = (unsigned)(payload / SMALL_GRANULE) - 1;
    depth = SMALL_DEPTH;
  } else if (payload - MEDIUM_MIN_PAYLOAD < MEDIUM_END_PAYLOAD - MEDIUM_MIN_PAYLOAD) {
    b = SMALL_BINS + medium_floor(payload);
    depth = MEDIUM_DEPTH;
  } else {
    return false;
  }
  uintptr_t *word = (uintptr_t *)ptr + 1;
  if (__builtin_expect(*word == g_cache_key_word, 0)) { /* in a cache (see g_cache_key_word) */
    lock();
    die_double_free(ptr);
  }
  thread_cache *c = &t_cache;
  unsigned n = c->count[b];
  size_t charge = bin_charge(b);
  if (n == depth || c->bytes + charge > HH_TLSF_CACHE_MAX_BYTES) return false;
  if (__builtin_expect(c->state != CACHE_ARMED, 0) && !cache_arm(c)) return false;
  void **slots = bin_slots(c, b);
  *word = g_cache_key_word;
  slots[n] = ptr;
  c->count[b] = (unsigned char)(n + 1);
  c->bytes += charge;
  return true;
}

/* An allocation that goes to the core: arms the cache if this is the
 * thread's first (see cache_arm). One load of a thread-local byte. */
static inline void cache_arm_at_first_miss(void) {
  if (g.cache && t_cache.state == CACHE_UNARMED) cache_arm(&t_cache);
}

/* ---- hh_allocator operations -------------------------------------------- */

/* Value of a size variable, or def when unset; a bad value stops the
 * process with one line naming the variable. */
static size_t env_size(const char *name, size_t def) {
  const char *v = hh__env_get(name);
  if (v == NULL) return def;
  size_t out;
  if (hh__parse_size(v, &out) != 0) {
    hh__die("%s=%s is not a size (use bytes or a K/M/G/T suffix, e.g. 64M)", name, v);
  }
  if (out > TLSF_MAX_POOL) hh__die("%s=%s is too large (at most 2^61 bytes)", name, v);
  return out;
}

static bool env_bool(const char *name) {
  const char *v = hh__env_get(name);
  bool out = false;
  if (v != NULL && hh__parse_bool(v, &out) != 0) {
    hh__die("%s=%s is not a boolean (use 1/0, true/false, yes/no or on/off)", name, v);
  }
  return out;
}

static bool env_bool_default(const char *name, bool def) {
  return hh__env_get(name) == NULL ? def : env_bool(name);
}

/* Stops the process when INITIAL_MEMPOOL_SIZE (nonzero) cannot hold even
 * one block, with the value as the user wrote it: before, the line gave the
 * parsed bytes ("=64" for "64b"), unlike every other configuration error. */
static void check_initial_holds_a_block(size_t initial) {
  if (initial == 0 || (initial & ~(size_t)15) >= TLSF_POOL_OVERHEAD + 32) return;
  hh__die("INITIAL_MEMPOOL_SIZE=%s is too small for a pool: at least %zu bytes",
          hh__env_get("INITIAL_MEMPOOL_SIZE"), (size_t)TLSF_POOL_OVERHEAD + 32);
}

/* Reads the configuration (or the test override) into g. */
static void read_config(void) {
  size_t initial, additional;
  (void)usable_memory(); /* (read here, once: growth asks under the lock, from any thread) */
  if (g.overridden) {
    initial = g.cfg_initial;
    additional = g.cfg_additional;
    g.mlock = false;
  } else {
    initial = env_size("INITIAL_MEMPOOL_SIZE", DEFAULT_POOL_SIZE);
    check_initial_holds_a_block(initial); /* (the default does) */
    additional = env_size("ADDITIONAL_MEMPOOL_SIZE", initial != 0 ? initial : DEFAULT_POOL_SIZE);
    /* (pools are pre-faulted: such an addition is never made, and every
     * growth failed with ENOMEM, unsaid, however much memory was free) */
    if (hh__env_get("ADDITIONAL_MEMPOOL_SIZE") != NULL && additional > usable_memory())
      hh__die(
          "ADDITIONAL_MEMPOOL_SIZE=%s is more than this machine's memory (or its cgroup's limit): no pool "
          "that large can be added (0 never grows)",
          hh__env_get("ADDITIONAL_MEMPOOL_SIZE"));
    /* (the first pool is pre-faulted at start-up: one past the memory
     * limit of a container got the process killed by the OOM killer
     * before main, status 137 and not a word, where such an addition is
     * refused above; the default 64M in a smaller container too) */
    if (initial > usable_memory()) {
      const char *v = hh__env_get("INITIAL_MEMPOOL_SIZE");
      hh__die(
          "INITIAL_MEMPOOL_SIZE=%s%s is more than this machine's memory (or its cgroup's limit): the "
          "first pool is pre-faulted at start-up; set a smaller one",
          v != NULL ? v : DEFAULT_POOL_TEXT, v != NULL ? "" : " (the default)");
    }
    /* (no pool at first and none added: every allocation would fail) */
    if (initial == 0 && additional == 0)
      hh__die("INITIAL_MEMPOOL_SIZE=%s with ADDITIONAL_MEMPOOL_SIZE=%s: the pool is empty and never grows",
              hh__env_get("INITIAL_MEMPOOL_SIZE"), hh__env_get("ADDITIONAL_MEMPOOL_SIZE"));
    g.mlock = env_bool("HEAPHOOK_TLSF_MLOCK");
    g.cache = env_bool_default("HEAPHOOK_TLSF_CACHE", true);
    g.huge = env_bool_default("HEAPHOOK_TLSF_HUGEPAGES", true);
  }
  /* Kept to the byte: heaphook's growth rule works on these exact sizes. */
  g.initial = initial;
  g.additional = additional;
}

/* CPUs the process may run on: those of its affinity mask (taskset, a
 * cpuset, docker --cpuset-cpus), else the online ones. Until 2026-11-28
 * the online CPUs were counted: a process confined to one CPU of several
 * spun on a lock whose holder could not run meanwhile (4 threads of
 * 500000 malloc+free of ~50 KB, taskset -c 0, 2-core VM: 3-21 s, 0.3-0.4 s
 * without the spin). */
static long cpus_to_run_on(void) {
  int saved = errno;
  cpu_set_t set;
  long n = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : sysconf(_SC_NPROCESSORS_ONLN);
  errno = saved;
  return n;
}

static int tlsf_init(void) {
  if (g.inited) return 0;
  long page = sysconf(_SC_PAGESIZE);
  g.page = page > 0 ? (size_t)page : 4096;
  g.spin_tries = cpus_to_run_on() > 1 ? SPIN_TRIES : 0;
  read_config();
  lock_init();
  cache_init();
  g.tlsf = tlsf_create(g_control, sizeof g_control);
  /* One line naming the variable and the reason, and the end (before: a
   * bare errno number, and "allocator 'tlsf' failed to start" after it; a
   * pool too small to hold a block is refused by read_config). */
  if (g.initial != 0 && !add_pool(g.initial)) {
    int err = errno;
    if (g.overridden) return -1; /* (a test's configuration) */
    hh__die("tlsf: cannot map the initial pool of %zu bytes (INITIAL_MEMPOOL_SIZE): %s", g.initial,
            err ? strerrordesc_np(err) : "too many pools");
  }
  if (g.mlock && g.mlock_failures != 0) {
    hh__log(
        "tlsf: HEAPHOOK_TLSF_MLOCK: mlock of the initial pool of %zu bytes failed (%s; see ulimit -l); its "
        "pages are not locked, going on",
        g.initial, strerrordesc_np(g.mlock_errno));
  }
  if (!g.atfork_registered) {
    hh__atfork(atfork_prepare, atfork_parent, atfork_child);
    g.atfork_registered = true;
  }
  g.inited = true;
  return 0;
}

/* A request the cache served: the largest request so far? One relaxed
 * load; the compare-and-swap only on a new largest. Before, a request of a
 * medium class that only a cached block of that class had served (a block
 * the core gave for a smaller request of it) was missing from the report. */
static inline void note_cached(size_t size) {
  size_t seen = atomic_load_explicit(&g_largest_cached, memory_order_relaxed);
  while (__builtin_expect(size > seen, 0) &&
         !atomic_compare_exchange_weak_explicit(&g_largest_cached, &seen, size, memory_order_relaxed,
                                                memory_order_relaxed)) {
  }
}

static void *tlsf_op_alloc(size_t size, size_t align) {
  size_t core_size = size;
  if (g.cache && align <= HH_MIN_ALIGN && size <= CACHE_MAX_REQUEST) {
    void *p = cache_take(size, &core_size);
    if (p != NULL) {
      note_cached(size);
      return p;
    }
  }
  cache_arm_at_first_miss();
  exhaustion x = {.reason = EXHAUSTED_NOT};
  lock();
  void *p = alloc_or_grow(size, align, core_size, NULL, &x);
  unlock();
  if (x.reason != EXHAUSTED_NOT) say_exhausted(&x);
  return p;
}

/* A detected double free is heap corruption: report and abort (after
 * releasing the lock, so that nothing else can deadlock on it). */
static void die_double_free(const void *ptr) {
  unlock();
  hh__cancel_off(); /* (a pending cancel acted on in the write ended the thread, not the process) */
  hh__log("tlsf: double free (or realloc of a freed block) of %p", ptr);
  abort();
}

static void tlsf_op_dealloc(void *ptr) {
  if (g.cache && cache_put(ptr)) return;
  tlsf_prefetch_free(ptr);
  lock();
  if (tlsf_free(g.tlsf, ptr) != 0) die_double_free(ptr);
  unlock();
}

static void *tlsf_op_alloc_zeroed(size_t size) {
  void *p = tlsf_op_alloc(size, 1);
  if (p != NULL) memset(p, 0, size);
  return p;
}

/* In place when possible; otherwise allocate, copy outside the lock, and
 * free the old block (the caller owns ptr, so nobody else touches it). */
static void *tlsf_op_realloc(void *ptr, size_t new_size) {
  cache_arm_at_first_miss();
  lock();
  /* freed: back in the pools, or in a thread's cache */
  if (!tlsf_block_in_use(ptr) || (g.cache && ((uintptr_t *)ptr)[1] == g_cache_key_word)) die_double_free(ptr);
  if (tlsf_resize_in_place(g.tlsf, ptr, new_size)) {
    note_alloc(new_size);
    unlock();
    return ptr;
  }
  size_t old = tlsf_block_size(ptr);
  exhaustion x = {.reason = EXHAUSTED_NOT};
  void *moved = alloc_or_grow(new_size, 1, new_size, ptr, &x);
  unlock();
  if (x.reason != EXHAUSTED_NOT) say_exhausted(&x);
  if (moved == NULL || moved == ptr) return moved; /* (ptr: grown in place after all) */
  memcpy(moved, ptr, old < new_size ? old : new_size);
  tlsf_op_dealloc(ptr);
  return moved;
}

/* Without the lock: see tlsf_block_size_unlocked. */
static size_t tlsf_op_block_size(void *ptr) { return tlsf_block_size_unlocked(ptr); }

/* Linear scan of the append-only ranges: always right, O(pools). */
static int owns_linear(uintptr_t a) {
  size_t n = __atomic_load_n(&g_range_count, __ATOMIC_ACQUIRE);
  for (size_t i = n; i-- > 0;) {
    if (a - g_ranges[i].lo < g_ranges[i].hi - g_ranges[i].lo) return 1;
  }
  return 0;
}

/* Binary search in the sorted copy of the current generation, O(log pools);
 * falls back to the linear scan if a growth published meanwhile. */
static int tlsf_op_owns(const void *ptr) {
  uintptr_t a = (uintptr_t)ptr;
  /* Most blocks live in the first pool: one compare, no search. */
  if (a - LOAD(g_first_lo) < LOAD(g_first_bytes)) return 1;
  unsigned gen = __atomic_load_n(&g_index_gen, __ATOMIC_ACQUIRE);
  const range_index *idx = &g_index[gen & 1];
  size_t lo = 0, hi = LOAD(idx->count);
  if (hi > MAX_POOLS) hi = MAX_POOLS; /* torn read: checked below */
  while (lo < hi) {                   /* first entry with r.lo > a */
    size_t mid = lo + (hi - lo) / 2;
    if (LOAD(idx->r[mid].lo) <= a)
      lo = mid + 1;
    else
      hi = mid;
  }
  int found = lo > 0 && a < LOAD(idx->r[lo - 1].hi);
  __atomic_thread_fence(__ATOMIC_ACQUIRE);
  if (LOAD(g_index_gen) != gen) return owns_linear(a);
  return found;
}

/* Figures for the report, taken under the lock. */
typedef struct report_data {
  size_t pools, pool_bytes, growths, peak, peak_held, used, largest_request, free, largest_free;
  size_t mlock_failures, map_failures;
  bool damaged; /* the free list's walk met a damaged link (tlsf_largest_free) */
} report_data;

static void report_snapshot(report_data *r) {
  lock();
  r->pools = tlsf_pool_count(g.tlsf);
  r->pool_bytes = tlsf_pool_bytes(g.tlsf);
  r->growths = g.growths;
  r->peak = g.peak_used;
  r->peak_held = g.peak_held;
  r->used = tlsf_bytes_used(g.tlsf);
  size_t cached = atomic_load_explicit(&g_largest_cached, memory_order_relaxed);
  r->largest_request = cached > g.largest_request ? cached : g.largest_request;
  r->free = tlsf_bytes_free(g.tlsf);
  r->largest_free = tlsf_largest_free(g.tlsf, &r->damaged);
  r->mlock_failures = g.mlock_failures;
  r->map_failures = g.map_failures;
  unlock();
}

/* Fragmentation = 1 - largest_free / free (0 when nothing is free): the
 * share of free memory that the largest single request cannot use. Printed
 * in hundredths of a percent with integer arithmetic (no %f inside malloc). */
static void tlsf_report(int fd) {
  if (!g.inited) {
    hh__dprint(fd, "tlsf allocator: not initialised\n");
    return;
  }
  if (t_holds) { /* exit from a signal handler that interrupted the allocator: the lock is this thread's */
    hh__dprint(fd,
               "tlsf allocator: no report (the program ended in a signal handler that interrupted the "
               "allocator, which holds its lock)\n");
    return;
  }
  report_data r;
  report_snapshot(&r);
  unsigned frag = 0;
  if (r.free != 0 && !r.damaged) {
    frag = (unsigned)((unsigned __int128)(r.free - r.largest_free) * 10000u / r.free);
  }
  hh__dprint(fd, "tlsf allocator (%s mutex):\n", g.pi_lock ? "priority-inheritance" : "plain");
  hh__dprint(fd, "  pools: %zu\n  pool bytes: %zu\n  growths: %zu\n", r.pools, r.pool_bytes, r.growths);
  hh__dprint(fd, "  peak used: %zu\n", r.peak);
  /* (what a pool must hold at the peak: "peak used" leaves out 8 bytes of
   * header per block, and a block of 24 usable bytes takes 32: a pool
   * sized on it for a program of small blocks grew) */
  hh__dprint(fd, "  peak in pools: %zu (peak used with block headers: size INITIAL_MEMPOOL_SIZE from this)\n",
             r.peak_held);
  hh__dprint(fd, "  current used: %zu\n  largest request: %zu\n", r.used, r.largest_request);
  hh__dprint(fd, "  free bytes: %zu\n", r.free);
  if (r.damaged) {
    /* (a write past a block's end over the free block after it: a crash
     * handler's _exit, preload.reports_at_end) */
    hh__dprint(fd,
               "  largest free block: unknown (the heap is damaged: a free list's link leads outside the "
               "pools or round a cycle)\n");
    hh__dprint(fd, "  fragmentation: unknown (the heap is damaged)\n");
  } else {
    hh__dprint(fd, "  largest free block: %zu\n", r.largest_free);
    hh__dprint(fd, "  fragmentation: %u.%02u%% (1 - largest free block / free bytes)\n", frag / 100,
               frag % 100);
  }
  if (r.map_failures != 0) hh__dprint(fd, "  failed pool mmaps: %zu\n", r.map_failures);
  if (r.mlock_failures != 0) hh__dprint(fd, "  failed pool mlocks: %zu\n", r.mlock_failures);
}

static const hh_allocator g_table = {
    .abi = HH_ALLOCATOR_ABI,
    .name = "tlsf",
    .init = tlsf_init,
    .alloc = tlsf_op_alloc,
    .dealloc = tlsf_op_dealloc,
    .alloc_zeroed = tlsf_op_alloc_zeroed,
    .realloc = tlsf_op_realloc,
    .block_size = tlsf_op_block_size,
    .owns = tlsf_op_owns,
    .report = tlsf_report,
};

const hh_allocator *hh__tlsf_allocator_get(void) { return &g_table; }

/* ---- Test hooks --------------------------------------------------------- */

int hh__tlsf_allocator_check(void) {
  if (!g.inited) return 0;
  lock();
  const char *err = tlsf_check(g.tlsf);
  if (err == NULL && tlsf_pool_count(g.tlsf) != g_range_count) {
    err = "pool table disagrees with the core's pool count";
  }
  unlock();
  if (err == NULL) return 0;
  hh__log("tlsf: invariant broken: %s", err);
  return -1;
}

unsigned hh__tlsf_allocator_spin_tries(void) { return g.spin_tries; }

size_t hh__tlsf_allocator_growths(void) {
  if (!g.inited) return 0;
  lock();
  size_t n = g.growths;
  unlock();
  return n;
}

size_t hh__tlsf_allocator_pool_sizes(size_t *out, size_t max) {
  size_t n = __atomic_load_n(&g_range_count, __ATOMIC_ACQUIRE);
  for (size_t i = 0; i < n && i < max; i++) out[i] = g_pool_bytes[i];
  return n;
}

void hh__tlsf_allocator_reset(void) {
  if (g.inited) {
    for (size_t i = 0; i < g_range_count; i++) {
      munmap((void *)g_ranges[i].lo, g_ranges[i].hi - g_ranges[i].lo);
    }
    pthread_mutex_destroy(&g.lock);
  }
  __atomic_store_n(&g_range_count, 0, __ATOMIC_RELEASE);
  STORE(g_first_bytes, 0);
  STORE(g_first_lo, 0);
  cache_slots *slots = t_cache.slots;  /* (its bins, kept: the free list is not reset) */
  memset(&t_cache, 0, sizeof t_cache); /* the caller's cache points into the unmapped pools */
  t_cache.slots = slots;
  memset(g_index, 0, sizeof g_index);
  g_index_gen = 0;
  bool registered = g.atfork_registered, key_made = g.cache_key_made;
  pthread_key_t key = g.cache_key;
  memset(&g, 0, sizeof g);
  atomic_store(&g_largest_cached, 0);
  g.atfork_registered = registered;
  g.cache_key_made = key_made; /* keys are never deleted: a thread may still hold one */
  g.cache_key = key;
}

void hh__tlsf_allocator_configure(size_t initial, size_t additional) {
  hh__tlsf_allocator_reset();
  g.overridden = true;
  g.cfg_initial = initial > TLSF_MAX_POOL ? TLSF_MAX_POOL : initial;
  g.cfg_additional = additional > TLSF_MAX_POOL ? TLSF_MAX_POOL : additional;
}

void hh__tlsf_allocator_set_cache(bool on) { g.cache = on; }

void hh__tlsf_allocator_set_hugepages(bool on) { g.huge = on; }

size_t hh__tlsf_allocator_used_bytes(void) {
  if (!g.inited) return 0;
  lock();
  size_t n = tlsf_bytes_used(g.tlsf);
  unlock();
  return n;
}
