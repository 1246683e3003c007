/* The program's own allocator, when it is not glibc's: the malloc family
 * that comes after heaphook in the loader's search order (a jemalloc,
 * tcmalloc or mimalloc the program links, or one preloaded after
 * heaphook). heaphook stands in front of it as it stands in front of
 * glibc, so the program keeps the allocator it was built for. */
#ifndef HH_ALLOC_NEXT_H
#define HH_ALLOC_NEXT_H

#include <stddef.h>

#include "heaphook/allocator.h"

/* Looks up the malloc after heaphook's (once, at start-up: dlsym
 * allocates). NULL when it is glibc's; else the table that forwards to it,
 * named after the library that defines it. NULL too, said in one line,
 * when that library lacks a function heaphook would need from it (glibc's
 * would be handed its blocks): glibc then serves the program, as before
 * heaphook looked. */
const hh_allocator *hh__next_allocator_find(void);

/* The found allocator's own functions, for the hook's direct path when
 * nothing is recorded (hook/runtime.h, HH_PATH_NEXT): the program's calls
 * then reach them as they would without heaphook. Only once
 * hh__next_allocator_find has returned the table. */
typedef struct hh_next_fns {
  void *(*malloc)(size_t size);
  void (*free)(void *ptr);
  void *(*calloc)(size_t nmemb, size_t size);
  void *(*realloc)(void *ptr, size_t size);
} hh_next_fns;
hh_next_fns hh__next_allocator_fns(void);

/* Where blocks that are not the chosen allocator's go (hook/api.c,
 * FOREIGN): to the program's own allocator once hh__next_allocator_find
 * has found one, else to glibc. */
void hh__below_free(void *ptr);
void *hh__below_realloc(void *ptr, size_t size);
size_t hh__below_usable_size(void *ptr);

#endif
