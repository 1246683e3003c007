/* tier4 heaphook's C++ allocator API (include/heaphook/heaphook.hpp) on the
 * C one (allocator.h): the table of a library made by build_library()
 * calls GlobalAllocator::get_instance(), which the plug-in defines. The
 * instance is made in init, at start-up, where the allocations its
 * constructor makes come from the start-up arena. The C++ API has no
 * owns(): every block that reaches do_dealloc is the allocator's (glibc's
 * blocks from before heaphook took over come from the start-up arena). */
#include "heaphook/allocator.h"
#include "heaphook/heaphook.hpp"

#ifndef HH_GLOBAL_ALLOCATOR_NAME
#define HH_GLOBAL_ALLOCATOR_NAME "GlobalAllocator"
#endif

namespace {

heaphook::GlobalAllocator *instance;

int global_init() {
  instance = &heaphook::GlobalAllocator::get_instance();
  return 0;
}

void *global_alloc(size_t size, size_t align) { return instance->alloc(size, align); }

void global_dealloc(void *ptr) { instance->dealloc(ptr); }

void *global_alloc_zeroed(size_t size) { return instance->alloc_zeroed(size); }

void *global_realloc(void *ptr, size_t new_size) { return instance->realloc(ptr, new_size); }

size_t global_block_size(void *ptr) { return instance->get_block_size(ptr); }

const hh_allocator global_allocator = {
    HH_ALLOCATOR_ABI,    HH_GLOBAL_ALLOCATOR_NAME, global_init,       global_alloc, global_dealloc,
    global_alloc_zeroed, global_realloc,           global_block_size, nullptr,      nullptr,
};

}  // namespace

HH_EXPORT_ALLOCATOR(global_allocator)
