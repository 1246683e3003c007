/* The usage recorder's numbers (requested bytes, not allocator rounding). */
#ifndef HH_RECORD_USAGE_H
#define HH_RECORD_USAGE_H
#include <stdint.h>
typedef struct hh_usage {
  uint64_t live_bytes, live_blocks, peak_bytes, total_bytes, total_blocks;
} hh_usage;
void hh__usage_get(hh_usage *out);
#endif
