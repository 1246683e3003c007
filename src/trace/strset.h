/* Hashes and interned strings for the tool side (the reader's marker
 * names, the symbolizer's function, file and module names): equal strings
 * share one copy, freed with the set. Header-only, like xalloc.h. */
#ifndef HH_TRACE_STRSET_H
#define HH_TRACE_STRSET_H

#include <stdint.h>

#include "trace/xalloc.h"

typedef struct hh_strset {
  char **items; /* open addressing; NULL = empty slot */
  size_t cap, n;
} hh_strset;

/* splitmix64's finalizer: integer keys (stack ids, addresses) to hashes. */
static inline uint64_t hh_mix64(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

/* FNV-1a of n bytes. */
static inline uint64_t hh_hash_bytes(const char *s, size_t n) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; i++) h = (h ^ (uint8_t)s[i]) * 1099511628211ull;
  return h;
}

/* The set's copy of the n bytes at s (which hold no NUL). */
static inline const char *hh_strset_intern(hh_strset *set, const char *s, size_t n) {
  if ((set->n + 1) * 2 > set->cap) {
    hh_strset old = *set;
    set->cap = old.cap ? old.cap * 2 : 64;
    set->items = xcalloc(set->cap, sizeof *set->items);
    for (size_t i = 0; i < old.cap; i++) {
      if (!old.items[i]) continue;
      size_t j = hh_hash_bytes(old.items[i], strlen(old.items[i])) & (set->cap - 1);
      while (set->items[j]) j = (j + 1) & (set->cap - 1);
      set->items[j] = old.items[i];
    }
    free(old.items);
  }
  size_t j = hh_hash_bytes(s, n) & (set->cap - 1);
  for (; set->items[j]; j = (j + 1) & (set->cap - 1))
    if (strncmp(set->items[j], s, n) == 0 && set->items[j][n] == 0) return set->items[j];
  set->items[j] = xstrndup(s, n);
  set->n++;
  return set->items[j];
}

static inline void hh_strset_free(hh_strset *set) {
  for (size_t i = 0; i < set->cap; i++) free(set->items[i]);
  free(set->items);
  memset(set, 0, sizeof *set);
}

#endif
