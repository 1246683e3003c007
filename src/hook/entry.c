/* The exported malloc family: with C++ operator new and delete (cxx.c),
 * the only symbols of a preload library besides the public API
 * (exports.map). Each one forwards to the hook layer. libstdc++'s operator
 * new and delete call these functions (malloc, aligned_alloc, free), so
 * every form of them arrives here with libstdc++'s own new_handler and
 * bad_alloc behaviour intact. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/cancel.h"
#include "base/dl_quiet.h"
#include "base/env.h"
#include "base/glibc.h"
#include "base/handlers.h"
#include "base/log.h"
#include "block.h"
#include "bootstrap.h"
#include "fork_gate.h"
#include "guard.h"
#include "heaphook/heaphook.h"
#include "hook.h"
#include "own.h"
#include "record/counts.h"
#include "record/trace/trace.h"
#include "runtime.h"
#include "sample.h"

#define EXPORT __attribute__((visibility("default")))
#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)
/* The program's stack pointer at the call, for recorders that take stacks
 * (recorder.h): one store, on the way into the hook layer. */
#define NOTE_CFA() (hh__call_cfa = __builtin_dwarf_cfa())

/* The fast paths (runtime.h, hh_fast): glibc's allocator and no recorder
 * to tell, or one only the sampler's picks are for. glibc then gives every
 * answer itself, errno included; the hook only keeps bootstrap blocks (made
 * during start-up) and the blocks with a header of ours (sampled ones,
 * block.h) from glibc. Everything else goes through the hook layer.
 *
 * malloc and free test for the sampled path first and reach glibc from it
 * with no taken branch before the jump to glibc: a sampled trace is the
 * mode meant to cost next to nothing. Laid out for the path with no
 * recorder, as until 2026-11-24, the sampled path's malloc took three taken
 * branches and free two; this layout made the churn ~1% faster in sampled
 * mode (clearly with nothing sampled, near the spread at 512 KiB) and
 * ~1% slower with no recorder, which records nothing (bench/pair_ab.sh;
 * docs/benchmarks.md, "Sampled mode side by side").
 *
 * On the sampled path each of the two makes one test besides the path's:
 * malloc the countdown (the recursion guard parks it at 0, guard.h), free
 * the header word (bootstrap blocks carry one too, bootstrap.c). Until
 * late on 2026-11-24 malloc also read the guard, and free compared the
 * address with the bootstrap arena's; without those the churn runs ~1%
 * faster in sampled mode (docs/benchmarks.md, "Sampled mode's per-call
 * tests"). */
static inline int path(void) { return atomic_load_explicit(&hh__fast.path, memory_order_relaxed); }

/* An allocation of size bytes that goes straight to glibc: on the sampled
 * path, one the sampler does not pick (the recursion guard's allocations
 * find the countdown at 0 and go through the hook, which does not count
 * them). */
static inline bool direct_alloc(int p, size_t size) {
  if (likely(p == HH_PATH_SAMPLED)) return hh__sample_skip(size);
  return p == HH_PATH_LIBC || p == HH_PATH_MARKED;
}

/* True when ptr is one of ours or a bootstrap block: the header word is the
 * one glibc's free reads next (its chunk's size). */
static inline bool marked(void *ptr) { return likely(ptr != NULL) && unlikely(hh__block_is_ours(ptr)); }

/* A block that goes straight back to glibc, or to the bootstrap arena if
 * it is one of its blocks: on the sampled path, one without a header word
 * of ours, which a bootstrap block has (then the hook sees to it). */
static inline bool direct_free(int p, void *ptr) {
  if (likely(p == HH_PATH_SAMPLED)) return !marked(ptr);
  return p == HH_PATH_LIBC || (p == HH_PATH_MARKED && !marked(ptr));
}

/* HH_PATH_NEXT's functions (hh_fast's next: set before the path, which is
 * read relaxed; the fence is no instruction on x86-64). */
static inline const hh_next_fns *next_fns(void) {
  atomic_thread_fence(memory_order_acquire);
  return &hh__fast.next;
}

/* HH_PATH_LEAD (runtime.h): the requests the lead path serves itself, far
 * below the hook's MAX_REQUEST (no overflow with the lead added). */
#define LEAD_MAX ((size_t)1 << 46)

/* A block of size bytes, not sampled, with a plain lead in front
 * (block.h); NULL with errno ENOMEM. */
static void *lead_block(size_t size, bool zero) {
  /* (hh_fast's operations were set before the path, read relaxed; no
   * instruction on x86-64) */
  atomic_thread_fence(memory_order_acquire);
  size_t n = (size ? size : 1) + HH_SAMPLED_LEAD;
  char *base = zero ? hh__fast.alloc_zeroed(n) : hh__fast.alloc(n, 1);
  if (unlikely(base == NULL)) {
    errno = ENOMEM;
    return NULL;
  }
  size_t lead = HH_SAMPLED_LEAD;
  if (unlikely(!hh__block_front_on_page(base + lead))) lead = hh__block_off_page(base, n, lead, zero);
  char *user = base + lead;
  hh__block_header(user)->lead16 = (uint32_t)(lead / 16);
  hh__block_header(user)->magic = HH_BLOCK_MAGIC;
  return user;
}

/* True when ptr is a plain lead block of the lead path: its header word
 * says lead HH_SAMPLED_LEAD and not sampled (a bootstrap block's says
 * lead 0; an aligned block's a longer lead). A page-aligned pointer takes
 * the hook, which looks whether the page in front is mapped before it
 * reads the header (a block of the allocator's own API may start a
 * mapping: api.c, owner_of). */
static inline bool plain_lead(void *ptr) {
  const hh_block_header *h = hh__block_header(ptr);
  return likely(ptr != NULL) && likely(hh__block_front_on_page(ptr)) && likely(h->magic == HH_BLOCK_MAGIC) &&
         likely(h->lead16 == HH_SAMPLED_LEAD / 16);
}

EXPORT void *malloc(size_t size) {
  int p = path();
  if (direct_alloc(p, size)) return __libc_malloc(size);
  if (p == HH_PATH_NEXT) return next_fns()->malloc(size);
  if (p == HH_PATH_LEAD && size < LEAD_MAX && hh__sample_skip(size)) return lead_block(size, false);
  NOTE_CFA();
  return hh__malloc(size);
}

EXPORT void free(void *ptr) {
  int p = path();
  if (likely(p == HH_PATH_SAMPLED)) {
    if (likely(!marked(ptr))) {
      __libc_free(ptr);
      return;
    }
  } else if (direct_free(p, ptr)) {
    if (likely(!hh__bootstrap_owns(ptr))) __libc_free(ptr);
    return;
  } else if (p == HH_PATH_NEXT) {
    if (likely(!hh__bootstrap_owns(ptr))) next_fns()->free(ptr);
    return;
  } else if (p == HH_PATH_LEAD && plain_lead(ptr)) {
    atomic_thread_fence(memory_order_acquire); /* (as in lead_block) */
    hh__block_forget(ptr);
    hh__fast.dealloc((char *)ptr - HH_SAMPLED_LEAD);
    return;
  }
  hh__free(ptr);
}

EXPORT void *calloc(size_t nmemb, size_t size) {
  int p = path();
  size_t total;
  if (likely(p == HH_PATH_LIBC) || (!__builtin_mul_overflow(nmemb, size, &total) && direct_alloc(p, total)))
    return __libc_calloc(nmemb, size);
  if (p == HH_PATH_NEXT) return next_fns()->calloc(nmemb, size);
  if (p == HH_PATH_LEAD && hh__fast.alloc_zeroed != NULL && !__builtin_mul_overflow(nmemb, size, &total) &&
      total < LEAD_MAX && hh__sample_skip(total))
    return lead_block(total, true);
  NOTE_CFA();
  return hh__calloc(nmemb, size);
}

EXPORT void *realloc(void *ptr, size_t size) {
  int p = path();
  /* (a bootstrap block fails direct_free on the sampled and marked paths,
   * by its header word; on glibc's path the test below keeps it) */
  if (likely(p == HH_PATH_LIBC) || (direct_free(p, ptr) && direct_alloc(p, size))) {
    if (likely(!hh__bootstrap_owns(ptr))) return __libc_realloc(ptr, size);
  }
  if (p == HH_PATH_NEXT && likely(!hh__bootstrap_owns(ptr))) return next_fns()->realloc(ptr, size);
  NOTE_CFA();
  return hh__realloc(ptr, size);
}

EXPORT void *reallocarray(void *ptr, size_t nmemb, size_t size) {
  NOTE_CFA();
  return hh__reallocarray(ptr, nmemb, size);
}
EXPORT int posix_memalign(void **out, size_t align, size_t size) {
  NOTE_CFA();
  return hh__posix_memalign(out, align, size);
}
EXPORT void *aligned_alloc(size_t align, size_t size) {
  NOTE_CFA();
  return hh__aligned_alloc(align, size);
}
EXPORT void *memalign(size_t align, size_t size) {
  NOTE_CFA();
  return hh__memalign(align, size);
}
EXPORT void *valloc(size_t size) {
  NOTE_CFA();
  return hh__valloc(size);
}
EXPORT void *pvalloc(size_t size) {
  NOTE_CFA();
  return hh__pvalloc(size);
}
EXPORT size_t malloc_usable_size(void *ptr) { return hh__malloc_usable_size(ptr); }
/* C23; glibc 2.36 does not declare them yet, programs built on newer
 * toolchains call them. */
EXPORT void free_sized(void *ptr, size_t size) { hh__free_sized(ptr, size); }
EXPORT void free_aligned_sized(void *ptr, size_t align, size_t size) {
  hh__free_aligned_sized(ptr, align, size);
}

/* (The names in parentheses: heaphook.h's macros of the same names.) */
EXPORT const char *(hh_allocator_of)(const void *ptr) { return hh__owner_name(ptr); }
EXPORT int(hh_thread_counts)(unsigned long long *counts, int n) { return hh__counts_thread(counts, n); }
EXPORT void(hh_marker)(const char *name) {
  /* From a signal handler that interrupted the hook on this thread, the
   * tracer may hold its locks (trace.signal_markers). */
  bool interrupted = hh__guard_held((uintptr_t)__builtin_dwarf_cfa());
  hh_guard guard = hh__guard_enter();
  hh__trace_marker(name, interrupted);
  hh__guard_leave(guard);
}

/* This library's own malloc, aligned_alloc and free (own.h): a hidden
 * alias binds here, where the public name binds to the process's first
 * definition. */
#ifdef __clang__
#define OWN_ALIAS(own, name) extern __typeof__(name) own __attribute__((alias(#name), visibility("hidden")))
#else /* (gcc wants the function's attributes copied) */
#define OWN_ALIAS(own, name) \
  extern __typeof__(name) own __attribute__((alias(#name), copy(name), visibility("hidden")))
#endif
OWN_ALIAS(hh__own_malloc, malloc);
OWN_ALIAS(hh__own_aligned_alloc, aligned_alloc);
OWN_ALIAS(hh__own_free, free);

/* Start before main even if nothing allocates, so configuration errors stop
 * the program before it runs; stop the recorders at exit (below). A plug-in
 * library (which carries this file too) loaded with HEAPHOOK_ALLOCATOR=path
 * is not the process's malloc: its copy of the hook stays idle. (It compared
 * the process's malloc with the name malloc, which in the plug-in also means
 * the preloaded one: its copy started too, and with HEAPHOOK_RECORD=trace
 * wrote a second, empty trace under the pid's name, trace.plugin_one_trace.)
 *
 * The recorders stop once every library's destructor has run. exit() runs
 * the exit handlers in the reverse of their registration: the program's,
 * then the loader's, which runs the libraries' destructors (the program's,
 * then this library's, then those of the libraries the program links: a
 * preloaded library comes before them), then those registered before the
 * loader's. glibc's start-up registers the loader's handler after the
 * libraries' constructors have run, so the one this constructor registers
 * runs when the loader's returns, and stops the recorders: a block that a
 * linked library frees in its destructor was a leak in every report when
 * they stopped in this library's destructor. After it come stdio's flush
 * and the rare exit handler registered with no library handle by a
 * constructor that ran before this one (on_exit). It is registered with no
 * library handle, so that this library's own finalization (__cxa_finalize)
 * does not run it early; a preloaded library is never unloaded, so its code
 * is still there then (trace.late_destructors). The hook's fork and
 * quick_exit handlers are registered with no library handle for the same
 * reason (base/handlers.h).
 *
 * A destructor that calls exit() makes glibc run the handlers not yet run
 * and end the process there: the loader's does not return, and the
 * destructors after that one do not run. This handler still runs then. It
 * was registered in this library's destructor until 2026-11-24, so the
 * program's own destructor calling exit() (it runs before this library's)
 * left a trace with no end and no chunk (trace.exit_in_destructor).
 * Where registering fails, this library's destructor tries again, and
 * failing that stops the recorders itself.
 *
 * Two threads that call exit() at once (or one that calls it while main
 * returns) both run the exit handlers in glibc 2.36, each taking the next
 * one not yet taken; the first to find none left flushes stdio and ends
 * the process, even while the other is still in one. The stop took a few
 * milliseconds there, and the process always ended before it had written
 * anything (trace.thread_ends, exit_both). So the handler holds stdio's
 * list lock while it runs: glibc's stdio flush at exit takes that lock
 * before the process may end, and waits. A thread that left the handlers
 * in the instant between the other's pop of this one and its lock got
 * past (exit_both failed once, on a loaded machine, on 2026-11-25), so a
 * second handler, registered just before this one and so run right after
 * it, waits for the stop to be done (wait_for_stop). The lock is
 * recursive (a signal handler that calls exit() inside fflush on the same
 * thread goes on), and this thread holds nothing of the tracer's while it
 * waits for it. glibc's fork takes it after the hook's fork handlers have
 * taken the tracer's and the TLSF allocator's locks, the stop before: a
 * fork in another thread meanwhile hung the process for good (found by
 * review), so forks and the stop take turns (fork_gate.h). */
extern int __cxa_atexit(void (*fn)(void *), void *arg, void *dso);

static atomic_bool stop_registered;

/* stdio's list lock (glibc exports it for fork handlers). */
extern void _IO_list_lock(void);
extern void _IO_list_unlock(void);

/* The forks under way finish first, and later ones wait: fork takes the
 * list lock after the hook's locks, the stop takes them after it
 * (fork_gate.h). */
static _Atomic pid_t stop_thread; /* the thread running the stop */
static atomic_bool stop_done;

/* Whether this thread runs the stop: the first thread to ask, by exit()'s
 * handler below or by _exit (hh__stop_before_end), runs it once; a second
 * one waits for it to be done (wait_for_stop, hh__stop_before_end). */
static bool take_stop(void) {
  pid_t none = 0;
  return atomic_compare_exchange_strong(&stop_thread, &none, gettid());
}

/* hh__shutdown has begun, by the thread that took the stop or by an _exit
 * that found the stop taken and not begun (hh__stop_before_end): once. */
static atomic_bool shutdown_begun;

/* hh__shutdown, then the stop marked done, if it has not begun; false
 * when it had. */
static bool shutdown_once(void) {
  if (atomic_exchange(&shutdown_begun, true)) return false;
  hh__shutdown();
  atomic_store(&stop_done, true);
  return true;
}

/* Until the stop is done, at most 10 s. */
static void wait_done(void) {
  struct timespec ms = {0, 1000 * 1000};
  for (int i = 0; i < 10000 && !atomic_load(&stop_done); i++) nanosleep(&ms, NULL);
}

/* stdio: whether stdio's list lock is held meanwhile (exit's stop, above).
 * Not at _exit's: it holds a second exiting thread back by itself
 * (hh__stop_before_end), and _exit is the end a signal handler or a
 * program holding a stream's lock may call (async-signal-safe): a thread
 * in fflush(NULL) holds the list lock while it waits for that stream's,
 * and the end waited for it for good (trace.thread_ends, _exit_stdio). */
static void run_stop(bool stdio) {
  /* (not cancelled part-way, base/cancel.h: a thread with a cancel pending
   * ended in the reports' write, the stop taken, the gate closed and the
   * list lock held; a cancel pending is acted on after, as glibc would) */
  int cancel = hh__cancel_off();
  hh__fork_gate_close();
  if (stdio) _IO_list_lock();
  if (!shutdown_once()) wait_done(); /* (an _exit's, which then ends the process) */
  if (stdio) _IO_list_unlock();
  atomic_store(&stop_done, true);
  hh__fork_gate_open();
  hh__cancel_restore(cancel);
}

/* stop_after_destructors is off the handler list (an exit() took it), in
 * this process and in a child forked from now on; and, in such a child
 * forked while the stop ran, that its exit's wait_for_stop runs the stop
 * (stop_at_child). */
static atomic_bool stop_handler_taken, stop_left_to_wait;

static void stop_after_destructors(void *arg) {
  (void)arg;
  /* A vfork child that calls exit() runs this in its parent's memory: the
   * stop stays the parent's to take, at its _exit (hh__shutdown says so;
   * trace.vfork_exit). */
  if (!hh__owner_process()) {
    hh__shutdown();
    return;
  }
  atomic_store(&stop_handler_taken, true);
  if (take_stop()) run_stop(true);
}

/* The handler after the stop: a thread that takes it while another runs
 * the stop waits until the stop is done, at most 10 s, before it goes on
 * to end the process. Not on the thread running the stop (exit() from a
 * signal handler in it: the stop cannot finish before the handler returns). */
static void wait_for_stop_done(void) {
  if (atomic_load(&stop_thread) != gettid()) wait_done();
}

/* Runs the stop in a child forked while its parent's exit ran it, whose
 * list has lost stop_after_destructors (stop_at_child). Nowhere else: a
 * thread that took the stop here, in the instant between another's pop
 * of stop_after_destructors and its take, would leave that one to end the
 * process before the list lock was held. */
static void wait_for_stop(void *arg) {
  (void)arg;
  if (!atomic_load(&stop_registered) || !hh__owner_process()) return;
  if (atomic_load(&stop_left_to_wait) && take_stop())
    run_stop(true);
  else
    wait_for_stop_done();
}

/* Before _exit, _Exit, quick_exit and daemon's parent end the process
 * (exit.c), which run no exit handlers: the stop as exit() runs it, the
 * trace finished and the reports printed (HEAPHOOK_RECORD's usage and
 * counts, HEAPHOOK_STATS), once. Until 2026-11-28 only the trace was
 * finished there, and a program that ended by _exit (Python's os._exit,
 * a multiprocessing worker, a program that skips its destructors) printed
 * no report at all (preload.reports_at_end). Not in a vfork child, which
 * runs in its parent's memory (the parent's stop is its own). A thread
 * that finds the stop under way in another waits for it, at most 10 s,
 * as exit() does: ending the process at once would cut the trace and the
 * reports short; on the stopping thread (a signal handler that
 * interrupted the stop) it ends the process as before. */
void hh__stop_before_end(void) {
  if (atomic_load(&hh__state) != HH_READY || !hh__owner_process()) return;
  /* _exit is no cancellation point, and the stop's writes and the wait's
   * sleep are: a thread with a cancel pending ended there, and its _exit
   * ended no process (preload.reports_at_end, cancelled). Not turned back
   * on: the process ends. (Not in a vfork child: the state is its
   * parent's thread's.) */
  hh__cancel_off();
  if (take_stop()) {
    run_stop(false);
    return;
  }
  /* Taken by another thread that has not begun it: exit's, which may wait
   * for stdio's list lock, held by this thread (a signal handler that
   * interrupted a fopen, fclose or fflush(NULL) calls _exit): waiting for
   * it cost 10 s, then the process ended with no report and a trace with
   * no END (trace.thread_ends, _exit_list_locked). This thread runs it. */
  if (atomic_load(&stop_thread) != gettid() && shutdown_once()) return;
  wait_for_stop_done();
}

/* A child forked while the stop ran in its parent (a fork already past the
 * gate when the stop closed it) records on, and its stop is its own to
 * take: it inherited the stop as taken, and nothing would end its wait
 * (its exit() slept 10 s: found by review, a third of 100 runs of threads
 * that fork and exit while main exits); then its _exit ran no stop at
 * all, its trace had no END and its reports were lost, until late on
 * 2026-11-28 (trace.fork_exit, child). Its exit() runs the stop in
 * wait_for_stop where its parent's exit had taken stop_after_destructors
 * off the list (trace.fork_exit, child_exit). A fork after the stop is
 * done leaves it done. */
static void stop_at_child(void) {
  if (atomic_load(&stop_done)) return;
  atomic_store(&stop_thread, 0);
  atomic_store(&shutdown_begun, false);
  atomic_store(&stop_left_to_wait, atomic_load(&stop_handler_taken));
}

/* Registers stop_after_destructors once the hook is ready, wait_for_stop
 * before it (exit runs the handlers in the reverse of their registration). */
static void register_stop(void) {
  static bool wait_registered;
  if (atomic_load(&stop_registered) || atomic_load(&hh__state) != HH_READY) return;
  hh_guard guard = hh__guard_enter(); /* (glibc's handler list is not the program's) */
  if (!wait_registered)
    wait_registered =
        hh__atfork(NULL, NULL, stop_at_child) == 0 && __cxa_atexit(wait_for_stop, NULL, NULL) == 0;
  if (wait_registered) atomic_store(&stop_registered, __cxa_atexit(stop_after_destructors, NULL, NULL) == 0);
  hh__guard_leave(guard);
}

/* True when sym lies in this library (own.h). */
bool hh__in_this_library(const void *sym) {
  Dl_info at, self;
  return sym != NULL && dladdr(sym, &at) != 0 && dladdr((void *)hh__own_malloc, &self) != 0 &&
         at.dli_fbase == self.dli_fbase;
}

/* The malloc the library at path defines itself (own.h). */
void *hh__malloc_of(const char *path) {
  void *lib = hh__dlopen_quiet(path, RTLD_LAZY | RTLD_NOLOAD);
  if (lib == NULL) return NULL;
  void *m = hh__dlsym_quiet(lib, "malloc"); /* (its own, or one of its dependencies') */
  Dl_info at;
  bool own = m != NULL && dladdr(m, &at) != 0 && at.dli_fname != NULL && strcmp(at.dli_fname, path) == 0;
  dlclose(lib);
  return own ? m : NULL;
}

/* The libraries loaded at start-up, in the loader's order (which is
 * the order it looks for symbols in, the program's own first). */
struct loaded {
  const char *name[64];
  int n;
};

static int note_loaded(struct dl_phdr_info *info, size_t size, void *arg) {
  (void)size;
  struct loaded *l = arg;
  if (info->dlpi_name != NULL && info->dlpi_name[0] != '\0' && l->n < 64) l->name[l->n++] = info->dlpi_name;
  return 0;
}

/* The path of the first library that defines malloc itself, when it is
 * not this one; NULL when it is (or none is found). dlopen is called once
 * the list is made: not inside dl_iterate_phdr, which holds the loader's
 * lock. */
static const char *first_malloc_library(void) {
  static struct loaded l;
  l.n = 0;
  dl_iterate_phdr(note_loaded, &l);
  for (int i = 0; i < l.n; i++) {
    void *m = hh__malloc_of(l.name[i]);
    if (m != NULL) return hh__in_this_library(m) ? NULL : l.name[i];
  }
  return NULL;
}

/* True when LD_PRELOAD names the library at path (by its file name: the
 * loader found a bare name in LD_LIBRARY_PATH, and gives the path it
 * found). A plug-in's copy of the hook, loaded by libheaphook.so, is not
 * named there. */
static bool named_in_ld_preload(const char *path) {
  const char *base = strrchr(path, '/');
  base = base != NULL ? base + 1 : path;
  size_t len = strlen(base);
  const char *list = hh__env_get("LD_PRELOAD");
  for (const char *p = list; p != NULL && *p != '\0';) {
    size_t n = strcspn(p, " :");
    const char *end = p + n, *name = end;
    while (name > p && name[-1] != '/') name--;
    if ((size_t)(end - name) == len && memcmp(name, base, len) == 0) return true;
    p = *end != '\0' ? end + 1 : end;
  }
  return false;
}

/* Another heaphook library was preloaded ahead of this one: its malloc
 * family and its hh_allocator_of are the program's, and this one does
 * nothing, its allocator, its variables and its default recorder
 * (libpreloaded_heaptrack.so's trace) included. Said in one line where
 * LD_PRELOAD names this library: until 2026-11-28 nothing was said, and
 * LD_PRELOAD="libpreloaded_tlsf.so libpreloaded_heaptrack.so" left no
 * trace, the other order a trace of glibc's malloc, not TLSF's. */
static void say_other_heaphook_ahead(void) {
  Dl_info self, other;
  void *theirs = hh__dlsym_quiet(RTLD_DEFAULT, "hh_allocator_of");
  if (theirs == NULL || dladdr(theirs, &other) == 0 || other.dli_fname == NULL) return;
  if (dladdr((void *)say_other_heaphook_ahead, &self) == 0 || self.dli_fname == NULL) return;
  if (!named_in_ld_preload(self.dli_fname)) return;
  hh__log(
      "%s does nothing: another heaphook library, %s, is preloaded ahead of it and serves every allocation "
      "(preload one; any of them traces with HEAPHOOK_RECORD=trace, libpreloaded_tlsf.so included)",
      self.dli_fname, other.dli_fname);
}

/* The program's malloc is not this library's: the program defines one
 * itself (an allocator linked in statically, as Redis links jemalloc), or
 * a library preloaded ahead of this one does. None of the program's calls
 * reach heaphook then, and it says so, once. Where the malloc is another
 * heaphook library's, that is said instead, unless this is a plug-in's
 * copy of the hook (loaded by libheaphook.so, whose malloc the program
 * has). */
static void say_malloc_is_elsewhere(void *def) {
  if (!hh__in_this_library(hh__dlsym_quiet(RTLD_DEFAULT, "hh_allocator_of"))) {
    say_other_heaphook_ahead();
    return;
  }
  Dl_info at;
  const ElfW(Sym) *sym = NULL;
  if (dladdr1(def, &at, (void **)&sym, RTLD_DL_SYMENT) == 0) return;
  const char *where = at.dli_fname != NULL && *at.dli_fname != '\0' ? at.dli_fname : "the program itself";
  /* A program that takes malloc's address (python3 does) has a stub in its
   * PLT stand for it, listed as undefined: its calls go on to the first
   * library that defines malloc, heaphook unless one is preloaded ahead
   * of it (review found that case unsaid). */
  if (sym == NULL || sym->st_shndx == SHN_UNDEF) {
    where = first_malloc_library();
    if (where == NULL) return;
  }
  hh__log(
      "malloc is defined ahead of heaphook, in %s: none of the program's allocations reach heaphook (preload "
      "heaphook first; a program with an allocator linked in statically cannot be followed)",
      where);
}

__attribute__((constructor)) static void hh_preload_start(void) {
  void *def = dlsym(RTLD_DEFAULT, "malloc");
  if (def != (void *)hh__own_malloc) {
    if (!hh__untraced_process()) say_malloc_is_elsewhere(def);
    return;
  }
  hh__start();
  register_stop();
}

__attribute__((destructor)) static void hh_preload_stop(void) {
  register_stop();
  if (!atomic_load(&stop_registered) && take_stop()) shutdown_once();
}
