/* tier4 heaphook's allocator API in C++: a GlobalAllocator subclass, built
 * into a preloadable lib<name>.so by the CMake function build_library(<name>
 * <sources>...) (cmake/HeaphookAllocator.cmake). src/preload/global_allocator.cpp
 * turns it into the C table of allocator.h; everything said there holds
 * here too (the hook checks the arguments; no malloc, stdio or getenv behind
 * these functions).
 *
 *   #include "heaphook/heaphook.hpp"
 *   using namespace heaphook;
 *   class MyAllocator : public GlobalAllocator {
 *     void *do_alloc(size_t size, size_t align) override { ... }
 *     void do_dealloc(void *ptr) override { ... }
 *     size_t do_get_block_size(void *ptr) override { ... }
 *   };
 *   GlobalAllocator &GlobalAllocator::get_instance() {
 *     static MyAllocator allocator;
 *     return allocator;
 *   }
 *
 * get_instance() is first called at start-up, from the first allocation of
 * the process: allocations the constructor makes come from heaphook's
 * start-up arena. The instance must outlive every allocation, exit's
 * included: a static object whose destructor is not trivial (a member
 * such as std::vector) is destroyed at exit while other threads, and the
 * exit itself, still allocate through it. Give such a class no destructor
 * to run, or build it once in static storage with placement new:
 *
 *   alignas(MyAllocator) static unsigned char storage[sizeof(MyAllocator)];
 *   static MyAllocator *allocator = new (storage) MyAllocator;  // never destroyed
 *   return *allocator; */
#ifndef HEAPHOOK_HEAPHOOK_HPP
#define HEAPHOOK_HEAPHOOK_HPP

#include <cstddef>
#include <cstring>

namespace heaphook {

class GlobalAllocator {
 protected:
  GlobalAllocator() = default;

 public:
  GlobalAllocator(const GlobalAllocator &) = delete;
  GlobalAllocator &operator=(const GlobalAllocator &) = delete;
  GlobalAllocator(GlobalAllocator &&) = delete;
  GlobalAllocator &operator=(GlobalAllocator &&) = delete;

  /* The one allocator: defined by the plug-in, as above. */
  static GlobalAllocator &get_instance();

  /* A block of at least size bytes aligned to align, or nullptr (malloc,
   * the memalign family, new). size > 0; align is 1 (glibc's 16-byte
   * alignment) or a power of two and a multiple of sizeof(void *). */
  [[nodiscard]] void *alloc(size_t size, size_t align = 1) { return do_alloc(size, align); }

  /* Releases a block of alloc, alloc_zeroed or realloc (free, delete);
   * ptr != nullptr. */
  void dealloc(void *ptr) { do_dealloc(ptr); }

  /* The usable bytes of the block at ptr (malloc_usable_size). */
  size_t get_block_size(void *ptr) { return do_get_block_size(ptr); }

  /* As alloc, zero-filled (calloc); size > 0. */
  [[nodiscard]] void *alloc_zeroed(size_t size) { return do_alloc_zeroed(size); }

  /* Resizes the block at ptr keeping its content, or nullptr with the
   * block left as it was (realloc); ptr != nullptr, new_size > 0. */
  [[nodiscard]] void *realloc(void *ptr, size_t new_size) { return do_realloc(ptr, new_size); }

 private:
  virtual void *do_alloc(size_t size, size_t align) = 0;
  virtual void do_dealloc(void *ptr) = 0;
  virtual size_t do_get_block_size(void *ptr) = 0;

  /* Default: do_alloc and zero the bytes. */
  virtual void *do_alloc_zeroed(size_t size) {
    void *p = do_alloc(size, 1);
    if (p != nullptr) std::memset(p, 0, size);
    return p;
  }

  /* Default: do_alloc(new_size, 1), copy, do_dealloc(ptr). */
  virtual void *do_realloc(void *ptr, size_t new_size) {
    void *p = do_alloc(new_size, 1);
    if (p == nullptr) return nullptr;
    size_t old = do_get_block_size(ptr);
    std::memcpy(p, ptr, old < new_size ? old : new_size);
    do_dealloc(ptr);
    return p;
  }
};

}  // namespace heaphook

#endif /* HEAPHOOK_HEAPHOOK_HPP */
