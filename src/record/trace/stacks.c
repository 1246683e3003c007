/* Call stacks: a per-thread cache in front of a DWARF unwind, and the
 * process-wide trie that turns stacks into ids.
 *
 * The cache. On x86-64 the return address of frame i sits at CFA_i - 8, in
 * a stack slot that stays put while the frame lives. An entry remembers, for
 * one call site (the program's return address and stack pointer at the call
 * of malloc, which the hook's entry points note in hh__call_cfa), every
 * frame's return address and the slot it was found in, and the stack's id.
 * A hit re-reads those slots: if each still holds its return address, the
 * frames are the same ones (a frame's CFA follows from its caller's CFA and
 * return address), and the id is returned without unwinding or looking up
 * the trie. A program looping over malloc costs a few loads per call.
 *
 * A miss unwinds with libunwind's DWARF unwinder, so frames without frame
 * pointers (libstdc++'s operator new, most distribution libraries) are
 * right, in one of two ways. unw_backtrace gives the return addresses only,
 * from libunwind's per-thread cache of each address's frame layout: ~0.4 us
 * for 33 frames. A step-by-step unwind (unw_step) also gives each frame's
 * stack pointer, which filling a cache entry needs, but takes ~16 us for
 * the same frames (libunwind blocks and unblocks signals around its
 * register-state cache at every step: two system calls a frame). So an
 * entry is filled by the step-by-step unwind when it is empty, and after
 * that at every FILL_EVERY-th miss that lands on it (so that a new hot call
 * site takes the entry of one gone cold); the other misses take
 * unw_backtrace. (cc1 -O2 on a 1 MB C file, 0.22 s untraced: traced 0.56 s
 * filling at every 16th miss, 0.35 s at every 64th, 0.34 s at every 256th;
 * bench/sites_bench.sh measures it against heaptrack.) Before, every miss
 * stepped: a program with more call sites than the cache holds (cc1: 2.2 s
 * of CPU traced against heaptrack's 0.9; 448 sites in a loop: 3.5 s against
 * 0.3) spent its time in sigprocmask. Our own frames are skipped up to the
 * one whose stack pointer is the call site's (unw_step), or by address
 * (unw_backtrace).
 *
 * The trie: nodes (parent id, ip) in an array, a node's id its index, and
 * a hash table of ids by (parent id, ip), under the meta lock, which also
 * writes the STACK record of each new node into the process buffer, so the
 * record is flushed before any event naming the id. */
#define _GNU_SOURCE /* mremap */
#define UNW_LOCAL_ONLY
#include <libunwind.h>
#include <sys/mman.h>

#include "base/cancel.h"
#include "base/log.h"
#include "base/own_fd.h"
#include "internal.h"

#define CACHE_BITS 8
#define CACHE_N (1u << CACHE_BITS)
#define FILL_EVERY 64

typedef struct entry {
  uintptr_t cfa; /* key, with ip[0] */
  uint64_t id;
  uint32_t depth;
  uint32_t gen;
  uint32_t misses; /* since the entry was last filled */
  uintptr_t ip[HH_TR_MAX_FRAMES];
  uint32_t off[HH_TR_MAX_FRAMES]; /* slot of ip[i] = cfa + off[i] */
} entry;

/* Our own frames that unw_backtrace may give before the program's. */
#define OURS 32

/* What a miss works in: libunwind's context and cursor (~1.9 KiB) and the
 * frames found (~1.8 KiB). Kept with the thread's cache, off the program's
 * stack: on a thread of 16 KiB (PTHREAD_STACK_MIN, a small-stack worker, a
 * coroutine) they took 3.5 KiB of it at each miss, and the tracer's calls
 * overflowed where libheaphook.so's did not (preload.small_stack). One miss
 * at a time on a thread: it runs under the recursion guard, so a signal
 * handler's allocation in it is not recorded, and under hh__tr_busy. */
typedef struct miss_work {
  unw_context_t uc;
  unw_cursor_t cur;
  uintptr_t ips[HH_TR_MAX_FRAMES], sps[HH_TR_MAX_FRAMES];
  void *all[HH_TR_MAX_FRAMES + OURS];
} miss_work;

struct hh_tr_stack_cache {
  entry e[CACHE_N];
  miss_work w;
};

size_t hh__tr_stack_cache_bytes(void) { return sizeof(hh_tr_stack_cache); }

/* Bumped when every id is forgotten (fork): older cache entries miss. */
static _Atomic uint32_t gen = 1;
/* libunwind's unw_backtrace keeps each thread's frame layouts by address
 * and cannot be told to forget them (its unw_step cache can:
 * unw_flush_cache): a library loaded where an unloaded one was would be
 * unwound with the old one's layouts (wrong stacks, and crashes: a
 * helper's dlclose + dlopen program died in 7 runs of 100). So the ranges
 * of unloaded modules are kept, and once a module is loaded over one,
 * every miss steps (no_fast). A program that unloads modules and loads
 * none where they were keeps the fast unwind. */
#define GONE_MAX 64
static struct { uintptr_t lo, hi; } gone[GONE_MAX];
static unsigned ngone; /* under the meta lock */
static _Atomic bool no_fast;

/* ---- the trie ---------------------------------------------------------------- */

/* A node is a stack: its parent's id (0 for the outermost frame) and its
 * innermost frame's return address. Its id is its index in nodes, which
 * only grows (nodes[0] is not used); ip 0 marks a node dropped by
 * hh__tr_stacks_forget (no frame has that address), which stays (its id is
 * not given again) but leaves the index. The index is a hash table of ids
 * (0: empty slot) by (parent, ip), with linear probing, at most 3/4 full.
 *
 * 12 bytes a node and 5 to 11 of index, and nothing else (a new node's
 * STACK record waits in the 1 MB process buffer; the per-thread cache is
 * ~200 KB, whatever the stacks). 800,000 distinct stacks 60 frames deep
 * (hh_trace_deep_stacks: 33.2 million nodes, each stack's last ~42 frames
 * its own) peak at 0.64 GB and take 6.9 s (bench/deep_stacks_bench.sh).
 * Before, a table of (parent, ip, id) nodes at most half full, whose growth
 * held the old table and the new one at once: 48 to 96 bytes a node, 144
 * while growing; 2.3 GB and 11.6 s, and 1,000,000 stacks (past a doubling)
 * 4.6 GB and 20.4 s, now 0.73 GB and 8.8 s. The index is rebuilt from
 * nodes when it grows, after the old one is unmapped, so it is never held
 * twice; nodes grows by mremap (pages moved, not copied; the ones not yet
 * written take no memory). A forked child unmaps both (clearing them would
 * copy the parent's pages). */
typedef struct __attribute__((packed, aligned(4))) node {
  uint64_t ip;
  uint32_t parent;
} node;

#define INDEX_MIN (1u << 16)
#define NODES_MIN (1u << 16)

static node *nodes;
static size_t nodes_cap; /* in nodes, mapped */
static uint32_t next_id = 1;
static uint32_t live; /* nodes not dropped */
static uint32_t *index_;
static size_t index_cap; /* in slots: a power of two (0: no index) */

static size_t node_hash(uint64_t parent, uint64_t ip) {
  return (size_t)(((ip * 0x9E3779B97F4A7C15ull) ^ (parent * 0xC2B2AE3D27D4EB4Full)) >> 20);
}

/* The index's slots are reached at random, each a miss in the CPU's caches
 * once it is large: where the next keys are known (a rebuild, and the new
 * nodes of a stack, whose ids follow one another), their slots are fetched
 * AHEAD keys before (200,000 deep stacks: ~1.7 s without, ~1.4 s with). */
#define AHEAD 8

/* (always_inline: gcc 12 takes a function that only prefetches for a pure
 * one, and drops its calls) */
static inline __attribute__((always_inline)) void prefetch_slot(uint64_t parent, uint64_t ip) {
  __builtin_prefetch(&index_[node_hash(parent, ip) & (index_cap - 1)]);
}

static void index_put(uint32_t id) {
  size_t mask = index_cap - 1, h = node_hash(nodes[id].parent, nodes[id].ip) & mask;
  while (index_[h] != 0) h = (h + 1) & mask;
  index_[h] = id;
}

/* The index rebuilt at cap slots from the live nodes; false (and no index,
 * built again at the next intern) when out of memory. The old one is
 * unmapped first. The new one is populated at once: the rebuild writes to
 * its every page. (Huge pages for it, 400,000 deep stacks: less user time,
 * as much more system time.) */
static bool reindex(size_t cap) {
  if (index_ != NULL) munmap(index_, index_cap * sizeof *index_);
  index_ = mmap(NULL, cap * sizeof *index_, PROT_READ | PROT_WRITE,
                MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
  if (index_ == MAP_FAILED) {
    index_ = NULL;
    index_cap = 0;
    return false;
  }
  index_cap = cap;
  for (uint32_t id = 1; id < next_id; id++) {
    if (id + AHEAD < next_id) prefetch_slot(nodes[id + AHEAD].parent, nodes[id + AHEAD].ip);
    if (nodes[id].ip != 0) index_put(id);
  }
  return true;
}

/* Room in the index for one more node: at most 3/4 full with it. */
static uint32_t grow_wait; /* failed inserts before the next try to grow */
static bool index_room(void) {
  size_t need = ((size_t)live + 1) * 4;
  if (need <= index_cap * 3) return true;
  if (grow_wait > 0 && index_ != NULL) {
    grow_wait--;
    return false;
  }
  size_t old = index_cap;
  size_t cap = index_cap != 0 ? index_cap * 2 : INDEX_MIN;
  while (need > cap * 3) cap *= 2;
  if (reindex(cap)) return true;
  /* (out of memory: the old size again, just freed, so that the stacks
   * already known keep their ids) */
  if (old != 0) reindex(old);
  grow_wait = 4096;
  return false;
}

/* Room in nodes for one more. It grows by moving its pages (no copy, and
 * no second copy held); the pages not yet written take no memory. */
static bool nodes_room(void) {
  if (next_id < nodes_cap) return true;
  if (next_id == UINT32_MAX) return false;
  size_t cap = nodes_cap != 0 ? nodes_cap * 2 : NODES_MIN;
  void *p;
  if (nodes == NULL) {
    p = hh__tr_map(cap * sizeof(node));
    if (p == NULL) return false;
  } else {
    p = mremap(nodes, nodes_cap * sizeof(node), cap * sizeof(node), MREMAP_MAYMOVE);
    if (p == MAP_FAILED) return false;
  }
  nodes = p;
  nodes_cap = cap;
  return true;
}

/* With the meta lock: the id of parent's stack plus ip, made if new; fresh:
 * parent was made by the call before (so this one is new too, and is not
 * looked up). 0 when out of memory. */
/* The table of stacks could not grow: said once (the program runs on, its
 * new stacks recorded as none until there is room). */
static atomic_bool no_room_said;
static void no_room(void) {
  if (!atomic_exchange(&no_room_said, true))
    hh__log(
        "trace: out of memory for the table of call stacks; allocations under stacks not met before are"
        " recorded without their stack while it lasts");
}

static uint64_t intern(uint64_t parent, uint64_t ip, bool fresh) {
  if (!fresh && index_ != NULL) {
    size_t mask = index_cap - 1;
    for (size_t h = node_hash(parent, ip) & mask; index_[h] != 0; h = (h + 1) & mask) {
      const node *n = &nodes[index_[h]];
      if (n->ip == ip && n->parent == parent) return index_[h];
    }
  }
  if (!index_room()) {
    no_room();
    return 0;
  }
  size_t mask = index_cap - 1, h = node_hash(parent, ip) & mask;
  while (index_[h] != 0) h = (h + 1) & mask;
  if (next_id == UINT32_MAX || !nodes_room()) {
    no_room();
    return 0;
  }
  uint8_t *p = hh__tr_proc_reserve(1 + 3 * HH_VARINT_MAX);
  if (p == NULL) return 0;
  uint32_t id = next_id++;
  nodes[id].ip = ip;
  nodes[id].parent = (uint32_t)parent;
  index_[h] = id;
  live++;
  *p++ = HH_REC_STACK;
  p = hh__tr_varint(p, id);
  p = hh__tr_varint(p, parent);
  p = hh__tr_varint(p, ip);
  hh__tr_proc_commit(p);
  return id;
}

/* libunwind opens a pipe at its first use (here), to check that memory is
 * readable by writing a byte of it there, and opens it again whenever the
 * read end fails: claimed (base/own_fd.h), so that it takes no number of
 * the program's and no close of the program's ends it. Only libunwind's
 * own calls are claimed: its text is found first. */
void hh__tr_stacks_init(void) {
  uintptr_t lo, hi;
  if (hh__tr_text_of((uintptr_t)unw_step, &lo, &hi)) hh__own_fd_set_claimant(lo, hi);
  hh__own_fd_claim = true;
  unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);
  hh__own_fd_claim = false;
}

/* With the meta lock. The nodes whose ip is in [lo, hi) are dropped (their
 * ids not given again; the index rebuilt without them, at its size), and
 * then every thread's cache misses from here on (a new generation). The
 * next stack through those addresses gets a new id, defined after the
 * module records of the time, and its descendants new ids too (they hang
 * from the new one). Before, a
 * library loaded where an unloaded one had been (dlclose, then dlopen:
 * the loader reuses the address) had its allocations named after the
 * first one's functions: same return addresses, same ids (trace.dl_reuse). */
void hh__tr_stacks_forget(uintptr_t lo, uintptr_t hi) {
  bool any = false;
  for (uint32_t id = 1; id < next_id; id++) {
    if (nodes[id].ip != 0 && nodes[id].ip >= lo && nodes[id].ip < hi) {
      nodes[id].ip = 0;
      live--;
      any = true;
    }
  }
  unw_flush_cache(unw_local_addr_space, lo, hi);
  if (ngone < GONE_MAX) {
    gone[ngone].lo = lo;
    gone[ngone++].hi = hi;
  } else {
    atomic_store(&no_fast, true); /* too many to keep: no fast unwind from here on */
  }
  /* (a cached stack is interned: with no node in the range, no cache entry
   * holds it, and the caches stay; a program that loads and unloads
   * plugins would refill every hot entry by the slow unwind at each) */
  if (!any) return;
  atomic_fetch_add(&gen, 1);
  /* (out of memory: no index, and the next intern builds it) */
  if (index_ != NULL) reindex(index_cap);
}

void hh__tr_stacks_loaded(uintptr_t lo, uintptr_t hi) {
  for (unsigned i = 0; i < ngone; i++)
    if (lo < gone[i].hi && gone[i].lo < hi) atomic_store(&no_fast, true);
}

/* In a forked child: the parent's pages are dropped, not cleared (which
 * would copy them). */
void hh__tr_stacks_reset(void) {
  if (index_ != NULL) munmap(index_, index_cap * sizeof *index_);
  if (nodes != NULL) munmap(nodes, nodes_cap * sizeof(node));
  index_ = NULL;
  nodes = NULL;
  index_cap = nodes_cap = 0;
  next_id = 1;
  live = 0;
  atomic_fetch_add(&gen, 1);
}

/* ---- unwinding ------------------------------------------------------------------ */

/* Fills ips/sps (innermost first) with the program's frames; returns how
 * many. With cfa, frames are taken from the one whose stack pointer is cfa;
 * without, from the first outside heaphook. -1: cfa was not found. */
static int unwind(miss_work *w, uintptr_t cfa) {
  uintptr_t *ips = w->ips, *sps = w->sps;
  if (unw_getcontext(&w->uc) != 0 || unw_init_local(&w->cur, &w->uc) != 0) return 0;
  int n = 0, skipped = 0;
  bool found = false;
  while (unw_step(&w->cur) > 0) {
    unw_word_t ip, sp;
    if (unw_get_reg(&w->cur, UNW_REG_IP, &ip) != 0 || unw_get_reg(&w->cur, UNW_REG_SP, &sp) != 0) break;
    if (!found) {
      if (cfa != 0 ? sp == cfa : !hh__tr_in_self(ip)) {
        found = true;
      } else {
        if (++skipped > 32 || (cfa != 0 && sp > cfa)) return cfa != 0 ? -1 : 0;
        continue;
      }
    }
    if (ip == 0) break;
    ips[n] = ip;
    sps[n] = sp;
    if (++n == HH_TR_MAX_FRAMES) break;
  }
  return found ? n : (cfa != 0 ? -1 : 0);
}

/* The program's frames by unw_backtrace (innermost first): our own are
 * those in our text. Returns how many; with ra (the call site's return
 * address, 0 when unknown), 0 when the first of the program's is not it. */
static int backtrace_frames(miss_work *w, uintptr_t ra) {
  void **all = w->all;
  uintptr_t *ips = w->ips;
  int got = unw_backtrace(all, HH_TR_MAX_FRAMES + OURS);
  int first = 0;
  while (first < got && first < OURS && hh__tr_in_self((uintptr_t)all[first])) first++;
  if (first == got || first == OURS || (ra != 0 && (uintptr_t)all[first] != ra)) return 0;
  int n = 0;
  for (int i = first; i < got && n < HH_TR_MAX_FRAMES && all[i] != NULL; i++) ips[n++] = (uintptr_t)all[i];
  return n;
}

static inline entry *slot_for(hh_tr_stack_cache *c, uintptr_t ra, uintptr_t cfa) {
  uint64_t h = ((uint64_t)ra ^ ((uint64_t)cfa << 9)) * 0x9E3779B97F4A7C15ull;
  return &c->e[h >> (64 - CACHE_BITS)];
}

/* (noinline: the hit's path pays no frame of the miss's) */
static __attribute__((noinline)) uint64_t capture_miss(miss_work *w, entry *e, uintptr_t cfa, uint32_t g) {
  const uintptr_t *ips = w->ips, *sps = w->sps;
  /* Our frames are in modules loaded before this call: a scan now writes
   * their MODULE_LOADs before the stack's records, and notes a module
   * loaded where one was unloaded before any unwind goes through it
   * (no_fast). */
  hh__tr_modules_scan(true);
  int cancel = hh__cancel_off(); /* libunwind reads and writes its pipe */
  hh__tr_loader_enter();         /* libunwind looks for unwind tables with dl_iterate_phdr */
  hh__own_fd_claim = true;       /* and may open its pipe again (hh__tr_stacks_init) */
  int n = -1;
  /* Filled when empty (or of an older generation), else now and then: the
   * count starts again at each try, so a call site that cannot be cached
   * (its return addresses not where calls put them) steps once in
   * FILL_EVERY misses, not at every one after the first FILL_EVERY. */
  if (e != NULL && e->cfa != 0 && e->gen == g) {
    if (++e->misses < FILL_EVERY && !atomic_load_explicit(&no_fast, memory_order_relaxed)) {
      n = backtrace_frames(w, ((const uintptr_t *)cfa)[-1]);
      if (n <= 0) n = -1; /* (not this call's cfa, or nothing: step) */
      e = NULL;
    } else {
      e->misses = 0;
    }
  }
  if (n < 0) n = unwind(w, cfa);
  if (n < 0) {
    /* hh__call_cfa was not this call's (a call that bypassed the entry
     * points): find our frames' end by address, and do not cache. */
    n = unwind(w, 0);
    e = NULL;
  }
  hh__own_fd_claim = false;
  hh__tr_loader_leave();
  if (n <= 0) {
    hh__cancel_restore(cancel);
    return 0;
  }
  /* (and with the meta lock: an asynchronous cancel there left it taken,
   * base/cancel.h) */
  uint64_t id = 0;
  hh__tr_meta_lock();
  uint32_t known = next_id; /* ids from here on are this stack's new nodes */
  int ahead = n - 1;        /* the frames below it are not prefetched */
  for (int i = n - 1; i >= 0; i--) {
    bool fresh = id >= known;
    if (fresh) {
      /* frame j's parent will be the node made for frame j + 1 */
      if (ahead >= i) ahead = i - 1;
      for (; ahead >= 0 && ahead >= i - AHEAD; ahead--) prefetch_slot(id + (uint64_t)(i - ahead), ips[ahead]);
    }
    id = intern(id, ips[i], fresh);
    if (id == 0) break;
  }
  hh__tr_meta_unlock();
  hh__cancel_restore(cancel);
  if (id == 0 || e == NULL) return id;
  /* Cache it when every return address is where a call put it. */
  for (int i = 0; i < n; i++) {
    if (sps[i] < cfa || sps[i] - cfa > UINT32_MAX || ((const uintptr_t *)sps[i])[-1] != ips[i]) return id;
  }
  e->cfa = 0; /* invalid while it is rewritten (a signal handler may malloc) */
  for (int i = 0; i < n; i++) {
    e->ip[i] = ips[i];
    e->off[i] = (uint32_t)(sps[i] - 8 - cfa);
  }
  e->depth = (uint32_t)n;
  e->id = id;
  e->gen = g;
  e->misses = 0;
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  e->cfa = cfa;
  return id;
}

uint64_t hh__tr_stack_capture(hh_tr_stack_cache *cache, void *cfa_p) {
  uintptr_t cfa = (uintptr_t)cfa_p;
  uint32_t g = atomic_load_explicit(&gen, memory_order_relaxed);
  entry *e = NULL;
  if (cfa != 0) {
    uintptr_t ra = ((const uintptr_t *)cfa)[-1];
    e = slot_for(cache, ra, cfa);
    if (e->cfa == cfa && e->ip[0] == ra && e->gen == g) {
      uint32_t i = 1;
      for (; i < e->depth; i++) {
        if (*(const uintptr_t *)(cfa + e->off[i]) != e->ip[i]) break;
      }
      if (i == e->depth) return e->id;
    }
  }
  /* a miss: the unwinder, the loader's lock, the meta lock (hh__tr_busy) */
  hh__tr_busy++;
  uint64_t id = capture_miss(&cache->w, e, cfa, g);
  hh__tr_busy--;
  return id;
}
