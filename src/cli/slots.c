/* The open-addressing index (slots.h). */
#include "slots.h"

#include <stdlib.h>

int hh_slots_fit(hh_slots *s, size_t count, size_t min, size_t first, hh_slots_hash_fn hash,
                 const void *items) {
  if (2 * (count + 1) <= s->n) return 0;
  size_t n = s->n ? s->n * 2 : min;
  size_t *slot = calloc(n, sizeof *slot);
  if (!slot) return -1;
  for (size_t i = first; i < count; i++) {
    size_t k = hash(items, i) & (n - 1);
    while (slot[k]) k = (k + 1) & (n - 1);
    slot[k] = i + 1;
  }
  free(s->slot);
  s->slot = slot;
  s->n = n;
  return 0;
}

size_t *hh_slots_find(const hh_slots *s, uint64_t hash, hh_slots_same_fn same, const void *items,
                      const void *key) {
  size_t k = hash & (s->n - 1);
  while (s->slot[k] && !same(items, s->slot[k] - 1, key)) k = (k + 1) & (s->n - 1);
  return &s->slot[k];
}

void hh_slots_free(hh_slots *s) {
  free(s->slot);
  s->slot = NULL;
  s->n = 0;
}
