/* An open-addressing hash index over items that live in the caller's own
 * array (flame graph and massif tree nodes, speedscope frames, diff rows):
 * a slot holds an item's index + 1 (0: empty), the table kept at most half
 * full. The caller hashes and compares its items through callbacks. */
#ifndef HH_CLI_SLOTS_H
#define HH_CLI_SLOTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct hh_slots {
  size_t *slot;
  size_t n; /* a power of two; 0 before the first hh_slots_fit */
} hh_slots;

/* The hash of items[i]. */
typedef uint64_t (*hh_slots_hash_fn)(const void *items, size_t i);
/* Whether items[i] is the one key describes. */
typedef bool (*hh_slots_same_fn)(const void *items, size_t i, const void *key);

/* Makes room for one more item when `count` are in: when that would fill
 * more than half the table, doubles it (`min` slots the first time) and puts
 * items first..count-1 back. Returns 0, or -1 when out of memory (the index
 * as it was). */
int hh_slots_fit(hh_slots *s, size_t count, size_t min, size_t first, hh_slots_hash_fn hash,
                 const void *items);
/* The slot of the item that key describes, or the empty slot where it
 * belongs (*slot == 0). */
size_t *hh_slots_find(const hh_slots *s, uint64_t hash, hh_slots_same_fn same, const void *items,
                      const void *key);
void hh_slots_free(hh_slots *s);

#endif
