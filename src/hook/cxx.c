/* C++ operator new and delete, every form (the Itanium C++ ABI's names,
 * written in C as mimalloc writes its overrides).
 *
 * Most programs get them from the C++ runtime (libstdc++), whose operators
 * call malloc, aligned_alloc and free: heaphook then sees every C++
 * allocation without them, and these definitions only jump on to the
 * runtime's, so that the call stacks, the new_handler and bad_alloc stay
 * the runtime's own. But jemalloc, tcmalloc and mimalloc define the
 * operators themselves and serve them without calling malloc: a program
 * linked with one of them made its C++ allocations past heaphook, unseen
 * by the tracer and never served by TLSF. When the operator new after this
 * library's comes from a library that also defines malloc, these
 * definitions serve every form through heaphook's malloc family instead,
 * as libstdc++ does: the new_handler loop, std::bad_alloc thrown through
 * libstdc++'s std::__throw_bad_alloc (a nothrow form: through the C++
 * runtime's, which catches it).
 *
 * Not reachable from malloc: these may call dlsym (the choice, made at the
 * first call) and the program's new_handler. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>

#include "base/dl_next.h"
#include "base/dl_quiet.h"
#include "base/log.h"
#include "guard.h"
#include "own.h"
#include "runtime.h"

#define EXPORT __attribute__((visibility("default")))
#define likely(x) __builtin_expect(!!(x), 1)

/* The forms, in the order of names[]. */
enum op {
  NEW,
  NEW_ARRAY,
  NEW_NOTHROW,
  NEW_ARRAY_NOTHROW,
  NEW_ALIGNED,
  NEW_ARRAY_ALIGNED,
  NEW_ALIGNED_NOTHROW,
  NEW_ARRAY_ALIGNED_NOTHROW,
  DELETE,
  DELETE_ARRAY,
  DELETE_SIZED,
  DELETE_ARRAY_SIZED,
  DELETE_NOTHROW,
  DELETE_ARRAY_NOTHROW,
  DELETE_ALIGNED,
  DELETE_ARRAY_ALIGNED,
  DELETE_SIZED_ALIGNED,
  DELETE_ARRAY_SIZED_ALIGNED,
  DELETE_ALIGNED_NOTHROW,
  DELETE_ARRAY_ALIGNED_NOTHROW,
  N_OPS
};

static const char *const names[N_OPS] = {
    "_Znwm",
    "_Znam",
    "_ZnwmRKSt9nothrow_t",
    "_ZnamRKSt9nothrow_t",
    "_ZnwmSt11align_val_t",
    "_ZnamSt11align_val_t",
    "_ZnwmSt11align_val_tRKSt9nothrow_t",
    "_ZnamSt11align_val_tRKSt9nothrow_t",
    "_ZdlPv",
    "_ZdaPv",
    "_ZdlPvm",
    "_ZdaPvm",
    "_ZdlPvRKSt9nothrow_t",
    "_ZdaPvRKSt9nothrow_t",
    "_ZdlPvSt11align_val_t",
    "_ZdaPvSt11align_val_t",
    "_ZdlPvmSt11align_val_t",
    "_ZdaPvmSt11align_val_t",
    "_ZdlPvSt11align_val_tRKSt9nothrow_t",
    "_ZdaPvSt11align_val_tRKSt9nothrow_t",
};

/* The definition after this library's for each form, while the calls go
 * on to the C++ runtime's; NULL until the choice is made, and for good
 * when the forms are served here. One load on the way through. */
static _Atomic(void *) next_op[N_OPS];
static atomic_bool decided;
/* A call was served here before the choice (decide). */
static atomic_bool served_early;

/* The form of the same parameters each one calls in libstdc++ (and
 * libc++): new[] is new, delete[] is delete, for each of the plain,
 * nothrow, aligned and sized kinds; a plain form is its own. */
static const enum op base_form[N_OPS] = {
    [NEW] = NEW,
    [NEW_ARRAY] = NEW,
    [NEW_NOTHROW] = NEW_NOTHROW,
    [NEW_ARRAY_NOTHROW] = NEW_NOTHROW,
    [NEW_ALIGNED] = NEW_ALIGNED,
    [NEW_ARRAY_ALIGNED] = NEW_ALIGNED,
    [NEW_ALIGNED_NOTHROW] = NEW_ALIGNED_NOTHROW,
    [NEW_ARRAY_ALIGNED_NOTHROW] = NEW_ALIGNED_NOTHROW,
    [DELETE] = DELETE,
    [DELETE_ARRAY] = DELETE,
    [DELETE_SIZED] = DELETE_SIZED,
    [DELETE_ARRAY_SIZED] = DELETE_SIZED,
    [DELETE_NOTHROW] = DELETE_NOTHROW,
    [DELETE_ARRAY_NOTHROW] = DELETE_NOTHROW,
    [DELETE_ALIGNED] = DELETE_ALIGNED,
    [DELETE_ARRAY_ALIGNED] = DELETE_ALIGNED,
    [DELETE_SIZED_ALIGNED] = DELETE_SIZED_ALIGNED,
    [DELETE_ARRAY_SIZED_ALIGNED] = DELETE_SIZED_ALIGNED,
    [DELETE_ALIGNED_NOTHROW] = DELETE_ALIGNED_NOTHROW,
    [DELETE_ARRAY_ALIGNED_NOTHROW] = DELETE_ALIGNED_NOTHROW,
};

static bool same_library(void *a, void *b) {
  Dl_info x, y;
  return dladdr(a, &x) != 0 && dladdr(b, &y) != 0 && x.dli_fbase == y.dli_fbase;
}

/* The unsized delete each sized one calls in libstdc++, where the runtime
 * defines both (other forms: NULL). Tried before next_op by the sized
 * forms: their size is dropped, as the runtime drops it. */
static _Atomic(void *) unsized_op[N_OPS];
static const enum op unsized_form[N_OPS] = {
    [DELETE_SIZED] = DELETE,
    [DELETE_ARRAY_SIZED] = DELETE,
    [DELETE_SIZED_ALIGNED] = DELETE_ALIGNED,
    [DELETE_ARRAY_SIZED_ALIGNED] = DELETE_ALIGNED,
};

/* True when the library that defines fn also defines malloc. */
static bool from_an_allocator(void *fn) {
  Dl_info info;
  return dladdr(fn, &info) != 0 && info.dli_fname != NULL && hh__malloc_of(info.dli_fname) != NULL;
}

/* The C++ runtime's definition of a nothrow new form (NULL for the other
 * forms, or with no runtime loaded): the library that defines
 * std::get_new_handler. Its nothrow forms call the throwing ones by name
 * inside a try block, which C cannot write: served here, a new_handler
 * that threw went through a nothrow new until 2026-11-28. */
static void *runtime_nothrow(int op) {
  if (op != NEW_NOTHROW && op != NEW_ARRAY_NOTHROW && op != NEW_ALIGNED_NOTHROW &&
      op != NEW_ARRAY_ALIGNED_NOTHROW)
    return NULL;
  void *anchor = hh__dlsym_quiet(RTLD_DEFAULT, "_ZSt15get_new_handlerv");
  Dl_info info;
  if (anchor == NULL || dladdr(anchor, &info) == 0 || info.dli_fname == NULL) return NULL;
  void *runtime = hh__dlopen_quiet(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
  if (runtime == NULL) return NULL;
  void *fn = hh__dlsym_quiet(runtime, names[op]);
  if (fn != NULL && !same_library(fn, anchor)) fn = NULL;
  dlclose(runtime);
  return fn;
}

/* Made at the first call that finds no next definition: the calls go on
 * to the definitions after this library's, unless the next operator new
 * is an allocator's, or there is none (a C program whose C++ runtime came
 * with a library loaded RTLD_LOCAL: the operators bind here first all the
 * same). Returns the next definition of op to jump to, or NULL to serve
 * the call here. */
static __attribute__((noinline, cold)) void *decide(enum op op) {
  if (!atomic_load_explicit(&decided, memory_order_acquire)) {
    /* The choice needs the hook's path: with start-up under way in this
     * thread, the call is served here, from the bootstrap arena, and an
     * allocator's operators are never used (its delete would get that
     * block). */
    if (!hh__start()) {
      atomic_store(&served_early, true);
      return NULL;
    }
    /* (what the loader allocates for the look-ups is heaphook's, not the
     * program's: the recorders do not hear of it) */
    hh_guard guard = hh__guard_enter();
    /* (past another heaphook library preloaded after this one, which
     * never starts: until 2026-11-28 its operators were taken for an
     * allocator's, and the program's operator new started it, with a
     * recorder and an allocator of its own; preload.own_allocator,
     * two_heaphook_own) */
    void *found[N_OPS], *global[N_OPS];
    for (int i = 0; i < N_OPS; i++) {
      found[i] = hh__dlsym_next(names[i]);
      global[i] = hh__dlsym_quiet(RTLD_DEFAULT, names[i]);
    }
    /* An allocator's operators are used as they are when heaphook has
     * nothing to see (HH_PATH_NEXT: no recorder): served here, a tcmalloc
     * program's C++ churn ran 2.2x its time alone. */
    bool allocator = found[NEW] != NULL && from_an_allocator(found[NEW]);
    bool unseen = hh__straight_to_own() && !atomic_load(&served_early);
    bool forward = found[NEW] != NULL && (!allocator || unseen);
    void *next[N_OPS] = {0}, *unsized[N_OPS] = {0};
    for (int i = 0; i < N_OPS; i++) {
      enum op plain = base_form[i], u = unsized_form[i]; /* (u NEW: none) */
      /* A plain form the program replaced (C++ lets it; the executable's
       * definition comes first) is what the runtime's array and sized
       * forms call, by name: found by review, new[] and sized deletes
       * went past a replaced operator new and delete, and free() got the
       * program's own blocks. */
      bool replaced = plain != (enum op)i && global[plain] != NULL && !hh__in_this_library(global[plain]);
      bool replaced_u = u != NEW && global[u] != NULL && !hh__in_this_library(global[u]);
      if (forward) {
        /* libstdc++'s array and sized forms only call its plain ones, by
         * the names that bind here: each took two trips through this file
         * (a C++ new[]/delete[] churn ran 4% slower with no recorder).
         * Where the runtime defines both, and the plain one is not
         * replaced, a form goes straight to the runtime's plain one. */
        next[i] = found[i];
        if (allocator) continue; /* (its forms are its own: a sized delete uses the size) */
        if (!replaced && plain != (enum op)i && found[i] != NULL && found[plain] != NULL &&
            same_library(found[i], found[plain]))
          next[i] = found[plain];
        if (!replaced_u && u != NEW && found[i] != NULL && found[u] != NULL &&
            same_library(found[i], found[u]))
          unsized[i] = found[u];
      } else {
        /* served here: an array or sized form goes to the program's
         * replacement of its plain one, as the runtime's would; a nothrow
         * new to the C++ runtime's, which calls the plain form (this
         * file's, or the program's) and turns what it throws into NULL */
        if (replaced)
          next[i] = global[plain];
        else
          next[i] = runtime_nothrow(i);
        if (replaced_u) unsized[i] = global[u];
      }
    }
    hh__guard_leave(guard);
    for (int i = 0; i < N_OPS; i++) {
      atomic_store_explicit(&unsized_op[i], unsized[i], memory_order_relaxed);
      atomic_store_explicit(&next_op[i], next[i], memory_order_relaxed);
    }
    atomic_store_explicit(&decided, true, memory_order_release);
  }
  return atomic_load_explicit(&next_op[op], memory_order_relaxed);
}

/* The definition to jump to, or NULL to serve the call here. */
static inline void *forward(enum op op) {
  void *next = atomic_load_explicit(&next_op[op], memory_order_relaxed);
  if (likely(next != NULL)) return next;
  /* (decided: served here, unless the decision was made meanwhile; decide
   * was 11% of a tcmalloc program's C++ churn, sampled, when called each
   * time) */
  if (atomic_load_explicit(&decided, memory_order_acquire))
    return atomic_load_explicit(&next_op[op], memory_order_relaxed);
  return decide(op);
}

typedef void (*new_handler)(void);

/* What libstdc++'s operator new does when malloc fails: the program's
 * new_handler, if it has set one, then try again; else std::bad_alloc
 * (nothrow: NULL). The handler may throw: the exception passes through
 * these frames (C code has unwind tables on x86-64). The nothrow forms
 * come here only with no C++ runtime loaded to catch it (runtime_nothrow). */
static bool out_of_memory(bool nothrow) {
  new_handler (*get)(void) = (new_handler(*)(void))hh__dlsym_quiet(RTLD_DEFAULT, "_ZSt15get_new_handlerv");
  new_handler h = get != NULL ? get() : NULL;
  if (h != NULL) {
    h();
    return true;
  }
  if (nothrow) return false;
  void (*throw_bad_alloc)(void) = (void (*)(void))hh__dlsym_quiet(RTLD_DEFAULT, "_ZSt17__throw_bad_allocv");
  if (throw_bad_alloc != NULL) throw_bad_alloc();
  hh__log("operator new: out of memory, and no C++ runtime to throw std::bad_alloc");
  abort();
}

static void *serve_new(size_t size, bool nothrow) {
  if (size == 0) size = 1;
  for (;;) {
    void *p = hh__own_malloc(size);
    if (likely(p != NULL) || !out_of_memory(nothrow)) return p;
  }
}

/* As libstdc++'s: aligned_alloc of the size rounded up to the alignment
 * (C11's rule for aligned_alloc), at least that of a pointer. */
static void *serve_new_aligned(size_t size, size_t align, bool nothrow) {
  if (align < sizeof(void *)) align = sizeof(void *);
  if (size == 0) size = 1;
  size_t rounded = (size + align - 1) & ~(align - 1);
  if (rounded < size) rounded = size; /* (overflow: aligned_alloc fails on it) */
  for (;;) {
    void *p = hh__own_aligned_alloc(align, rounded);
    if (likely(p != NULL) || !out_of_memory(nothrow)) return p;
  }
}

typedef void *(*new_fn)(size_t);
typedef void *(*new_nothrow_fn)(size_t, const void *);
typedef void *(*new_aligned_fn)(size_t, size_t);
typedef void *(*new_aligned_nothrow_fn)(size_t, size_t, const void *);
typedef void (*delete_fn)(void *);
typedef void (*delete_sized_fn)(void *, size_t);
typedef void (*delete_nothrow_fn)(void *, const void *);
typedef void (*delete_aligned_fn)(void *, size_t);
typedef void (*delete_sized_aligned_fn)(void *, size_t, size_t);
typedef void (*delete_aligned_nothrow_fn)(void *, size_t, const void *);

/* std::nothrow_t and std::align_val_t pass as a pointer and a size_t. */
#define DEFINE_NEW(name, op)                                   \
  EXPORT void *name(size_t size) {                             \
    new_fn next = (new_fn)forward(op);                         \
    return next != NULL ? next(size) : serve_new(size, false); \
  }
#define DEFINE_NEW_NOTHROW(name, op)                              \
  EXPORT void *name(size_t size, const void *nt) {                \
    new_nothrow_fn next = (new_nothrow_fn)forward(op);            \
    return next != NULL ? next(size, nt) : serve_new(size, true); \
  }
#define DEFINE_NEW_ALIGNED(name, op)                                                 \
  EXPORT void *name(size_t size, size_t align) {                                     \
    new_aligned_fn next = (new_aligned_fn)forward(op);                               \
    return next != NULL ? next(size, align) : serve_new_aligned(size, align, false); \
  }
#define DEFINE_NEW_ALIGNED_NOTHROW(name, op)                                            \
  EXPORT void *name(size_t size, size_t align, const void *nt) {                        \
    new_aligned_nothrow_fn next = (new_aligned_nothrow_fn)forward(op);                  \
    return next != NULL ? next(size, align, nt) : serve_new_aligned(size, align, true); \
  }

DEFINE_NEW(_Znwm, NEW)
DEFINE_NEW(_Znam, NEW_ARRAY)
DEFINE_NEW_NOTHROW(_ZnwmRKSt9nothrow_t, NEW_NOTHROW)
DEFINE_NEW_NOTHROW(_ZnamRKSt9nothrow_t, NEW_ARRAY_NOTHROW)
DEFINE_NEW_ALIGNED(_ZnwmSt11align_val_t, NEW_ALIGNED)
DEFINE_NEW_ALIGNED(_ZnamSt11align_val_t, NEW_ARRAY_ALIGNED)
DEFINE_NEW_ALIGNED_NOTHROW(_ZnwmSt11align_val_tRKSt9nothrow_t, NEW_ALIGNED_NOTHROW)
DEFINE_NEW_ALIGNED_NOTHROW(_ZnamSt11align_val_tRKSt9nothrow_t, NEW_ARRAY_ALIGNED_NOTHROW)

/* Every delete is a free once served here (the size and the alignment are
 * the block's own; glibc's free needs neither). */
#define DEFINE_DELETE(name, op, type, params, args) \
  EXPORT void name params {                         \
    type next = (type)forward(op);                  \
    if (next != NULL)                               \
      next args;                                    \
    else                                            \
      hh__own_free(ptr);                            \
  }

/* A sized form: straight to the runtime's unsized delete where it has one
 * (unsized_op), else as the others. */
#define DEFINE_DELETE_SIZED(name, op, utype, uargs, type, params, args)               \
  EXPORT void name params {                                                           \
    utype plain = (utype)atomic_load_explicit(&unsized_op[op], memory_order_relaxed); \
    if (likely(plain != NULL)) {                                                      \
      plain uargs;                                                                    \
      return;                                                                         \
    }                                                                                 \
    type next = (type)forward(op); /* (decides: unsized_op is set from then on) */    \
    plain = (utype)atomic_load_explicit(&unsized_op[op], memory_order_relaxed);       \
    if (plain != NULL)                                                                \
      plain uargs;                                                                    \
    else if (next != NULL)                                                            \
      next args;                                                                      \
    else                                                                              \
      hh__own_free(ptr);                                                              \
  }

DEFINE_DELETE(_ZdlPv, DELETE, delete_fn, (void *ptr), (ptr))
DEFINE_DELETE(_ZdaPv, DELETE_ARRAY, delete_fn, (void *ptr), (ptr))
DEFINE_DELETE_SIZED(_ZdlPvm, DELETE_SIZED, delete_fn, (ptr), delete_sized_fn, (void *ptr, size_t size),
                    (ptr, size))
DEFINE_DELETE_SIZED(_ZdaPvm, DELETE_ARRAY_SIZED, delete_fn, (ptr), delete_sized_fn, (void *ptr, size_t size),
                    (ptr, size))
DEFINE_DELETE(_ZdlPvRKSt9nothrow_t, DELETE_NOTHROW, delete_nothrow_fn, (void *ptr, const void *nt), (ptr, nt))
DEFINE_DELETE(_ZdaPvRKSt9nothrow_t, DELETE_ARRAY_NOTHROW, delete_nothrow_fn, (void *ptr, const void *nt),
              (ptr, nt))
DEFINE_DELETE(_ZdlPvSt11align_val_t, DELETE_ALIGNED, delete_aligned_fn, (void *ptr, size_t align),
              (ptr, align))
DEFINE_DELETE(_ZdaPvSt11align_val_t, DELETE_ARRAY_ALIGNED, delete_aligned_fn, (void *ptr, size_t align),
              (ptr, align))
DEFINE_DELETE_SIZED(_ZdlPvmSt11align_val_t, DELETE_SIZED_ALIGNED, delete_aligned_fn, (ptr, align),
                    delete_sized_aligned_fn, (void *ptr, size_t size, size_t align), (ptr, size, align))
DEFINE_DELETE_SIZED(_ZdaPvmSt11align_val_t, DELETE_ARRAY_SIZED_ALIGNED, delete_aligned_fn, (ptr, align),
                    delete_sized_aligned_fn, (void *ptr, size_t size, size_t align), (ptr, size, align))
DEFINE_DELETE(_ZdlPvSt11align_val_tRKSt9nothrow_t, DELETE_ALIGNED_NOTHROW, delete_aligned_nothrow_fn,
              (void *ptr, size_t align, const void *nt), (ptr, align, nt))
DEFINE_DELETE(_ZdaPvSt11align_val_tRKSt9nothrow_t, DELETE_ARRAY_ALIGNED_NOTHROW, delete_aligned_nothrow_fn,
              (void *ptr, size_t align, const void *nt), (ptr, align, nt))
