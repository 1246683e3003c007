// preload.cxx_new_delete: every form of C++ new and delete reaches the hooked
// malloc family exactly once, and blocks of every form belong to the
// preloaded allocator.
//
// usage: hh_preload_cxx OWNER [counts]
//   OWNER   what hh_allocator_of must say for every block ("libc", "tlsf", ...)
//   counts  HEAPHOOK_RECORD includes counts: check the exact per-thread call
//           deltas (hh_thread_counts) around each new and delete
//
// Built with -fno-builtin; every pointer goes through a volatile sink so that
// the compiler cannot elide a new/delete pair.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <new>

#include "heaphook/heaphook.h"

namespace {

int passed = 0, failed = 0;
bool want_counts = false;
const char *owner = nullptr;

void *volatile sink;
volatile std::size_t huge_size = SIZE_MAX / 2;

void check(bool ok, const char *what, const char *detail = "") {
  if (ok) {
    passed++;
  } else {
    failed++;
    std::printf("FAIL %s %s\n", what, detail);
  }
}

struct Plain {
  char bytes[40];
};
struct alignas(64) Aligned64 {
  char bytes[100];
};
struct alignas(256) Aligned256 {
  char bytes[24];
};
// A non-trivial destructor: new[] stores an element count (array cookie).
struct WithDtor {
  char bytes[24];
  ~WithDtor() { sink = this; }
};

const char *call_name(int i) {
  static const char *const names[HH_CALL_COUNT] = {
      "malloc", "calloc",  "realloc", "reallocarray", "posix_memalign",     "aligned_alloc",     "memalign",
      "valloc", "pvalloc", "free",    "free_sized",   "free_aligned_sized", "malloc_usable_size"};
  return names[i];
}

struct Snapshot {
  unsigned long long c[HH_CALL_COUNT];
};

Snapshot snap() {
  Snapshot s;
  std::memset(&s, 0, sizeof s);
  if (want_counts) hh_thread_counts(s.c, HH_CALL_COUNT);
  return s;
}

// The calls between before and now must be exactly: one of `fn` (or, for
// expect_n, n of them), nothing else.
void expect_calls(const char *what, const Snapshot &before, const int (&expect)[HH_CALL_COUNT]) {
  if (!want_counts) return;
  Snapshot now = snap();
  char detail[512] = "";
  bool ok = true;
  for (int i = 0; i < HH_CALL_COUNT; i++) {
    unsigned long long d = now.c[i] - before.c[i];
    if (d != (unsigned long long)expect[i]) {
      ok = false;
      std::size_t len = std::strlen(detail);
      std::snprintf(detail + len, sizeof detail - len, "%s: %llu calls, expected %d; ", call_name(i), d,
                    expect[i]);
    }
  }
  char label[128];
  std::snprintf(label, sizeof label, "%s (calls)", what);
  check(ok, label, detail);
}

void expect_one(const char *what, const Snapshot &before, hh_call fn) {
  int e[HH_CALL_COUNT] = {};
  e[fn] = 1;
  expect_calls(what, before, e);
}

void expect_owner(const char *what, const void *p, std::size_t align) {
  char label[128];
  std::snprintf(label, sizeof label, "%s (block)", what);
  if (p == nullptr) {
    check(false, label, "returned NULL");
    return;
  }
  const char *o = hh_allocator_of(p);
  char detail[160];
  std::snprintf(detail, sizeof detail, "hh_allocator_of = %s, expected %s; address %p, alignment %zu",
                o ? o : "(null)", owner, p, align);
  check(o != nullptr && std::strcmp(o, owner) == 0 && (std::uintptr_t)p % align == 0, label, detail);
}

// new expression `expr` of type T: one call of `fn`, a block of the owner
// that starts `cookie` bytes before the pointer (new[] of a type with a
// destructor puts the element count there).
#define CHECK_NEW_COOKIE(what, T, expr, fn, align, cookie)       \
  [&]() -> T * {                                                 \
    Snapshot before_ = snap();                                   \
    T *p_ = expr;                                                \
    sink = (void *)p_;                                           \
    expect_one(what, before_, fn);                               \
    expect_owner(what, (const char *)p_ - (cookie), align);      \
    if (p_ != nullptr) std::memset((void *)p_, 0x5a, sizeof(T)); \
    return p_;                                                   \
  }()
#define CHECK_NEW(what, T, expr, fn, align) CHECK_NEW_COOKIE(what, T, expr, fn, align, 0)

// delete statement: exactly one free.
#define CHECK_DELETE(what, stmt)             \
  do {                                       \
    Snapshot before_ = snap();               \
    stmt;                                    \
    expect_one(what, before_, HH_CALL_FREE); \
  } while (0)

void forms() {
  // Plain forms.
  Plain *a = CHECK_NEW("new T", Plain, new Plain, HH_CALL_MALLOC, 16);
  CHECK_DELETE("delete", delete a);

  Plain *b = CHECK_NEW("new T[n]", Plain, new Plain[7], HH_CALL_MALLOC, 16);
  CHECK_DELETE("delete[]", delete[] b);

  WithDtor *w = CHECK_NEW_COOKIE("new T[n] with cookie", WithDtor, new WithDtor[5], HH_CALL_MALLOC, 16,
                                 sizeof(std::size_t));
  CHECK_DELETE("delete[] with cookie", delete[] w);

  Plain *c = CHECK_NEW("new (nothrow) T", Plain, new (std::nothrow) Plain, HH_CALL_MALLOC, 16);
  CHECK_DELETE("delete of nothrow T", delete c);

  Plain *d = CHECK_NEW("new (nothrow) T[n]", Plain, new (std::nothrow) Plain[9], HH_CALL_MALLOC, 16);
  CHECK_DELETE("delete[] of nothrow T[n]", delete[] d);

  // Sized deallocation, called explicitly.
  Plain *e = CHECK_NEW("operator new(n)", Plain, static_cast<Plain *>(::operator new(sizeof(Plain))),
                       HH_CALL_MALLOC, 16);
  CHECK_DELETE("sized operator delete(p, n)", ::operator delete(e, sizeof(Plain)));

  Plain *f = CHECK_NEW("operator new[](n)", Plain, static_cast<Plain *>(::operator new[](3 * sizeof(Plain))),
                       HH_CALL_MALLOC, 16);
  CHECK_DELETE("sized operator delete[](p, n)", ::operator delete[](f, 3 * sizeof(Plain)));

  // Over-aligned forms: operator new(n, align_val_t) calls aligned_alloc.
  Aligned64 *g = CHECK_NEW("new alignas(64) T", Aligned64, new Aligned64, HH_CALL_ALIGNED_ALLOC, 64);
  CHECK_DELETE("delete alignas(64) T", delete g);

  Aligned256 *h = CHECK_NEW("new alignas(256) T", Aligned256, new Aligned256, HH_CALL_ALIGNED_ALLOC, 256);
  CHECK_DELETE("delete alignas(256) T", delete h);

  char *i =
      CHECK_NEW("operator new(n, align_val_t(256))", char,
                static_cast<char *>(::operator new(1000, std::align_val_t(256))), HH_CALL_ALIGNED_ALLOC, 256);
  CHECK_DELETE("aligned operator delete(p, align_val_t(256))", ::operator delete(i, std::align_val_t(256)));

  char *j =
      CHECK_NEW("operator new(n, align_val_t(64))", char,
                static_cast<char *>(::operator new(333, std::align_val_t(64))), HH_CALL_ALIGNED_ALLOC, 64);
  CHECK_DELETE("sized aligned operator delete(p, n, align_val_t(64))",
               ::operator delete(j, 333, std::align_val_t(64)));

  Aligned64 *k = CHECK_NEW("new alignas(64) T[n]", Aligned64, new Aligned64[6], HH_CALL_ALIGNED_ALLOC, 64);
  CHECK_DELETE("delete[] alignas(64) T[n]", delete[] k);

  char *l = CHECK_NEW("operator new[](n, align_val_t(128))", char,
                      static_cast<char *>(::operator new[](777, std::align_val_t(128))),
                      HH_CALL_ALIGNED_ALLOC, 128);
  CHECK_DELETE("sized aligned operator delete[](p, n, align_val_t(128))",
               ::operator delete[](l, 777, std::align_val_t(128)));

  char *m = CHECK_NEW("operator new[](n, align_val_t(4096))", char,
                      static_cast<char *>(::operator new[](5000, std::align_val_t(4096))),
                      HH_CALL_ALIGNED_ALLOC, 4096);
  CHECK_DELETE("aligned operator delete[](p, align_val_t(4096))",
               ::operator delete[](m, std::align_val_t(4096)));

  Aligned64 *n = CHECK_NEW("new (nothrow) alignas(64) T", Aligned64, new (std::nothrow) Aligned64,
                           HH_CALL_ALIGNED_ALLOC, 64);
  CHECK_DELETE("delete of nothrow alignas(64) T", delete n);

  Aligned256 *o = CHECK_NEW("new (nothrow) alignas(256) T[n]", Aligned256, new (std::nothrow) Aligned256[4],
                            HH_CALL_ALIGNED_ALLOC, 256);
  CHECK_DELETE("delete[] of nothrow alignas(256) T[n]", delete[] o);

  char *q = CHECK_NEW("operator new(n, align_val_t(512), nothrow)", char,
                      static_cast<char *>(::operator new(100, std::align_val_t(512), std::nothrow)),
                      HH_CALL_ALIGNED_ALLOC, 512);
  CHECK_DELETE("operator delete(p, align_val_t(512), nothrow)",
               ::operator delete(q, std::align_val_t(512), std::nothrow));

  char *r = CHECK_NEW("operator new(n, nothrow)", char, static_cast<char *>(::operator new(50, std::nothrow)),
                      HH_CALL_MALLOC, 16);
  CHECK_DELETE("operator delete(p, nothrow)", ::operator delete(r, std::nothrow));
}

// An impossible size: operator new's malloc fails, so it throws bad_alloc
// (whose exception object libstdc++ allocates with malloc and releases with
// free once caught): 2 mallocs, 1 free. The nothrow form returns nullptr.
void impossible(const char *what, void *(*attempt)(std::size_t), hh_call fn, bool nothrow) {
  Snapshot before = snap();
  bool threw = false, other = false;
  void *p = nullptr;
  try {
    p = attempt(huge_size);
    sink = p;
  } catch (const std::bad_alloc &) {
    threw = true;
  } catch (...) {
    other = true;
  }
  char detail[128];
  std::snprintf(detail, sizeof detail, "threw bad_alloc: %d, threw something else: %d, returned %p", threw,
                other, p);
  check(nothrow ? (!threw && !other && p == nullptr) : (threw && p == nullptr), what, detail);
  int e[HH_CALL_COUNT] = {};
  e[fn]++;
  // the exception object (libstdc++'s nothrow new catches one; served by
  // heaphook, the nothrow form is the runtime's all the same)
  e[HH_CALL_MALLOC]++;
  e[HH_CALL_FREE]++;
  expect_calls(what, before, e);
}

}  // namespace

int main(int argc, char **argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s OWNER [counts]\n", argv[0]);
    return 2;
  }
  owner = argv[1];
  want_counts = argc > 2 && std::strcmp(argv[2], "counts") == 0;
  if (hh_allocator_of == nullptr || hh_thread_counts == nullptr) {
    std::printf("FAIL no heaphook library is preloaded (hh_allocator_of is NULL)\n0 passed, 1 failed\n");
    return 1;
  }
  unsigned long long probe[HH_CALL_COUNT];
  int got = hh_thread_counts(probe, HH_CALL_COUNT);
  check(want_counts ? got == HH_CALL_COUNT : got == -1, "hh_thread_counts",
        want_counts ? "should return HH_CALL_COUNT with HEAPHOOK_RECORD=counts"
                    : "should return -1 without the counts recorder");
  // Warm up libstdc++'s exception machinery (the first throw may allocate
  // for its own bookkeeping), so that the checks below see only their calls.
  try {
    sink = ::operator new(huge_size);
  } catch (const std::bad_alloc &) {
  }

  forms();
  impossible(
      "new char[SIZE_MAX/2] throws bad_alloc", [](std::size_t n) -> void * { return new char[n]; },
      HH_CALL_MALLOC, false);
  impossible(
      "operator new(SIZE_MAX/2) throws bad_alloc", [](std::size_t n) { return ::operator new(n); },
      HH_CALL_MALLOC, false);
  impossible(
      "operator new(SIZE_MAX/2, align_val_t(64)) throws bad_alloc",
      [](std::size_t n) { return ::operator new(n, std::align_val_t(64)); }, HH_CALL_ALIGNED_ALLOC, false);
  impossible(
      "new (nothrow) char[SIZE_MAX/2] is nullptr",
      [](std::size_t n) -> void * { return new (std::nothrow) char[n]; }, HH_CALL_MALLOC, true);
  // A new_handler that throws: a nothrow form returns nullptr all the same
  // (served by heaphook, it let the exception through until 2026-11-28).
  std::set_new_handler([] { throw std::bad_alloc(); });
  impossible(
      "new (nothrow) char[SIZE_MAX/2] with a new_handler that throws is nullptr",
      [](std::size_t n) -> void * { return new (std::nothrow) char[n]; }, HH_CALL_MALLOC, true);
  impossible(
      "operator new(SIZE_MAX/2, align_val_t(64), nothrow) with a new_handler that throws is nullptr",
      [](std::size_t n) { return ::operator new(n, std::align_val_t(64), std::nothrow); },
      HH_CALL_ALIGNED_ALLOC, true);
  std::set_new_handler(nullptr);
  // The forms again, now that the exception paths have run.
  forms();
  std::printf("%d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
