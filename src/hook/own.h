/* This library's own exported functions under hidden names (entry.c):
 * a call by these names binds here, where a call by the public names binds
 * to the process's first definition. */
#ifndef HH_HOOK_OWN_H
#define HH_HOOK_OWN_H

#include <stdbool.h>
#include <stddef.h>

void *hh__own_malloc(size_t size) __attribute__((visibility("hidden")));
void *hh__own_aligned_alloc(size_t align, size_t size) __attribute__((visibility("hidden")));
void hh__own_free(void *ptr) __attribute__((visibility("hidden")));

/* The malloc that the loaded library at path defines itself (not one of
 * its dependencies'); NULL when it has none. Calls dlopen: not from inside
 * malloc, nor from a dl_iterate_phdr callback. */
void *hh__malloc_of(const char *path) __attribute__((visibility("hidden")));

/* True when sym (a function or object) lies in this library. */
bool hh__in_this_library(const void *sym) __attribute__((visibility("hidden")));

/* Before _exit and its kin end the process (exit.c): what exit() runs after
 * the destructors, the recorders stopped and the reports printed, once
 * per process (entry.c). Called outside the hook (the guard not held). */
void hh__stop_before_end(void) __attribute__((visibility("hidden")));

#endif
