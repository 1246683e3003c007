// preload.real_allocators: the program run with jemalloc, tcmalloc or
// mimalloc (Debian's) preloaded after heaphook, as a program linked with
// one of them has it: what heaphook hands the program is what the malloc
// family and C++ new promise, in every mode. Prints each failure and ends
// with "N passed, N failed".
// usage: hh_preload_real_alloc [own-new]
//   own-new  C++ new is the allocator's own (heaphook records nothing):
//            aligned new is not looked at (mimalloc 2.0.9's own is off for
//            an alignas(256) struct, with or without heaphook)
#include <dlfcn.h>
#include <malloc.h>
#include <pthread.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

static int passed, failed;

static void check(bool ok, const char *what, size_t a = 0, size_t b = 0) {
  if (ok) {
    passed++;
  } else {
    failed++;
    std::printf("FAIL: %s (%zu, %zu)\n", what, a, b);
  }
}

// (the compiler takes an alignment asked for as given: hidden)
static std::uintptr_t addr(void *p) {
  __asm__("" : "+r"(p));
  return reinterpret_cast<std::uintptr_t>(p);
}

struct alignas(256) Aligned256 {
  char bytes[24];
};

static void *blocks[64];

static void *make(void *) {
  for (int i = 0; i < 64; i++) {
    blocks[i] = std::malloc(1 + (size_t)i * 97);
    std::memset(blocks[i], i, 1 + (size_t)i * 97);
  }
  return nullptr;
}

static void *release(void *) {
  for (int i = 0; i < 64; i++) std::free(blocks[i]);
  return nullptr;
}

int main(int argc, char **argv) {
  bool own_new = argc > 1 && std::strcmp(argv[1], "own-new") == 0;
  // Alignments up to 16: these allocators serve 1 to 8 bytes 8 off 16.
  int off16 = 0;
  for (int i = 0; i < 64; i++) {
    void *a = aligned_alloc(16, 1), *m = memalign(16, 8), *p = nullptr;
    int rc = posix_memalign(&p, 16, 8);
    off16 += !(a && m && rc == 0 && ((addr(a) | addr(m) | addr(p)) & 15) == 0);
    std::free(a);
    std::free(m);
    std::free(p);
  }
  check(off16 == 0, "alignment 16 of 1 and 8 bytes: blocks off of 64", (size_t)off16);
  // Every alignment to 2 MiB, sizes about it (mimalloc 2.0.9's own
  // posix_memalign is off for sizes that are multiples of 256 to 1024).
  for (size_t align = 32; align <= ((size_t)2 << 20); align *= 2) {
    const size_t sizes[] = {1, align / 2, align, 2 * align, 3 * align + 5};
    for (size_t size : sizes) {
      void *a = aligned_alloc(align, size), *m = memalign(align, size), *p = nullptr;
      int rc = posix_memalign(&p, align, size);
      bool ok = a && m && rc == 0 && ((addr(a) | addr(m) | addr(p)) & (align - 1)) == 0;
      check(ok, "aligned_alloc, memalign, posix_memalign", align, size);
      if (!ok) continue;
      check(malloc_usable_size(a) >= size && malloc_usable_size(p) >= size, "usable size", align, size);
      std::memset(a, 1, size);
      std::memset(m, 2, size);
      std::memset(p, 3, size);
      std::free(a);
      std::free(m);
      std::free(p);
    }
  }
  // C++ aligned new: heaphook rounds the size up to the alignment.
  for (size_t align = 32; align <= 4096 && !own_new; align *= 2) {
    void *p = ::operator new(5, std::align_val_t(align));
    void *q = ::operator new[](align, std::align_val_t(align), std::nothrow);
    check((addr(p) & (align - 1)) == 0 && q && (addr(q) & (align - 1)) == 0, "aligned new", align);
    ::operator delete(p, 5, std::align_val_t(align));
    ::operator delete[](q, std::align_val_t(align));
  }
  Aligned256 *s = new Aligned256;
  check(own_new || (addr(s) & 255) == 0, "new of an alignas(256) struct");
  delete s;
  check(dlerror() == nullptr, "no dlerror() pending");
  // realloc keeps the bytes, growing and shrinking; calloc zeroes.
  char *r = static_cast<char *>(std::malloc(10));
  std::memcpy(r, "0123456789", 10);
  bool kept = true;
  for (size_t size = 10; size < ((size_t)8 << 20); size *= 3) {
    r = static_cast<char *>(std::realloc(r, size));
    kept = kept && r && std::memcmp(r, "0123456789", 10) == 0;
  }
  for (size_t size = (size_t)8 << 20; size > 10; size /= 7) {
    r = static_cast<char *>(std::realloc(r, size));
    kept = kept && r && std::memcmp(r, "0123456789", 10) == 0;
  }
  check(kept, "realloc keeps the bytes");
  std::free(r);
  bool zero = true;
  for (size_t size = 1; size < ((size_t)4 << 20); size = size * 5 + 3) {
    unsigned char *c = static_cast<unsigned char *>(std::calloc(1, size));
    for (size_t i = 0; c && i < size; i++) zero = zero && c[i] == 0;
    std::memset(c, 0xff, size);
    std::free(c);
  }
  check(zero, "calloc zeroes");
  // Blocks made in one thread, freed in another.
  pthread_t t;
  pthread_create(&t, nullptr, make, nullptr);
  pthread_join(t, nullptr);
  pthread_create(&t, nullptr, release, nullptr);
  pthread_join(t, nullptr);
  std::printf("%d passed, %d failed\n", passed, failed);
  return failed != 0;
}
