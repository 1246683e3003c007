/* The allocator of tier4 heaphook's README, "How to add a new memory
 * allocator": a GlobalAllocator subclass with the three required functions
 * (do_alloc_zeroed and do_realloc are the defaults) and get_instance() in
 * its fixed form, built with build_library(). Blocks come from glibc's own
 * entry points, with the size and the distance to glibc's block kept in the
 * 16 bytes (or the alignment) in front. */
#include <malloc.h>

#include "heaphook/heaphook.hpp"

extern "C" void *__libc_memalign(size_t align, size_t size);
extern "C" void __libc_free(void *ptr);

using namespace heaphook;

class MyAllocator : public GlobalAllocator {
  void *do_alloc(size_t size, size_t align) override {
    size_t lead = align < 16 ? 16 : align;
    char *base = static_cast<char *>(__libc_memalign(lead, size + lead));
    if (base == nullptr) return nullptr;
    size_t *user = reinterpret_cast<size_t *>(base + lead);
    user[-1] = size;
    user[-2] = lead;
    return user;
  }

  void do_dealloc(void *ptr) override {
    size_t *user = static_cast<size_t *>(ptr);
    __libc_free(reinterpret_cast<char *>(ptr) - user[-2]);
  }

  size_t do_get_block_size(void *ptr) override { return static_cast<size_t *>(ptr)[-1]; }
};

GlobalAllocator &GlobalAllocator::get_instance() {
  static MyAllocator allocator;
  return allocator;
}
