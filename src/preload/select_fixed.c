/* A single-allocator preload library (libpreloaded_tlsf.so, a plug-in's
 * lib<name>.so): the allocator is the one linked in, named at build time by
 * HH_FIXED_ALLOCATOR, a function returning its table. */
#include "heaphook/allocator.h"
#include "hook/runtime.h"

#ifndef HH_FIXED_ALLOCATOR
#error "HH_FIXED_ALLOCATOR must name the allocator's getter"
#endif

const hh_allocator *HH_FIXED_ALLOCATOR(void);

const hh_allocator *hh__select_allocator(void) { return HH_FIXED_ALLOCATOR(); }

/* HEAPHOOK_ALLOCATOR is not read here: runtime.c says it is ignored when
 * it names another allocator. */
extern const bool hh__allocator_is_fixed;
const bool hh__allocator_is_fixed = true;
