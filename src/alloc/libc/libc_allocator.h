/* The libc passthrough allocator: glibc's own malloc behind the plug-in API. */
#ifndef HH_ALLOC_LIBC_H
#define HH_ALLOC_LIBC_H
#include "heaphook/allocator.h"
const hh_allocator *hh__libc_allocator_get(void);
#endif
