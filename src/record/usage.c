/* The usage recorder: bytes in use now, at the peak, and at exit.
 *
 * It keeps each block's requested size in its per-block slot, so a free
 * subtracts exactly what the allocation added, whatever the allocator
 * rounded it to. Totals are relaxed atomics; the peak is raised with a CAS
 * loop. Printed to stderr at exit: the numbers to size a TLSF pool with. */
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "base/log.h"
#include "recorder.h"
#include "usage.h"

static _Atomic uint64_t live_bytes, live_blocks, peak_bytes, total_bytes, total_blocks;

static void add(uint64_t bytes) {
  uint64_t now = atomic_fetch_add_explicit(&live_bytes, bytes, memory_order_relaxed) + bytes;
  uint64_t peak = atomic_load_explicit(&peak_bytes, memory_order_relaxed);
  while (now > peak && !atomic_compare_exchange_weak_explicit(&peak_bytes, &peak, now, memory_order_relaxed,
                                                              memory_order_relaxed)) {
  }
  atomic_fetch_add_explicit(&total_bytes, bytes, memory_order_relaxed);
  atomic_fetch_add_explicit(&total_blocks, 1, memory_order_relaxed);
}

static void usage_on_alloc(const hh_event *ev, void *slot) {
  uint64_t size = ev->size;
  memcpy(slot, &size, sizeof size);
  atomic_fetch_add_explicit(&live_blocks, 1, memory_order_relaxed);
  add(size);
}

static void usage_on_free(const hh_event *ev, void *slot) {
  (void)ev;
  uint64_t size;
  memcpy(&size, slot, sizeof size);
  atomic_fetch_sub_explicit(&live_bytes, size, memory_order_relaxed);
  atomic_fetch_sub_explicit(&live_blocks, 1, memory_order_relaxed);
}

static void usage_on_realloc(const hh_event *ev, void *slot) {
  uint64_t old, size = ev->size;
  memcpy(&old, slot, sizeof old);
  memcpy(slot, &size, sizeof size);
  atomic_fetch_sub_explicit(&live_bytes, old, memory_order_relaxed);
  add(size);
}

void hh__usage_get(hh_usage *out) {
  out->live_bytes = atomic_load(&live_bytes);
  out->live_blocks = atomic_load(&live_blocks);
  out->peak_bytes = atomic_load(&peak_bytes);
  out->total_bytes = atomic_load(&total_bytes);
  out->total_blocks = atomic_load(&total_blocks);
}

static void usage_stop(int fd) {
  hh_usage u;
  hh__usage_get(&u);
  hh__dprint(fd,
             "heaphook: heap usage (pid %d): peak %llu bytes; at exit %llu bytes in %llu block%s; "
             "%llu bytes allocated in %llu allocation%s\n",
             (int)getpid(), (unsigned long long)u.peak_bytes, (unsigned long long)u.live_bytes,
             (unsigned long long)u.live_blocks, u.live_blocks == 1 ? "" : "s",
             (unsigned long long)u.total_bytes, (unsigned long long)u.total_blocks,
             u.total_blocks == 1 ? "" : "s");
}

const hh_recorder hh__usage_recorder = {
    .name = "usage",
    .summary = "bytes in use: peak, at exit, and in total (requested sizes); printed at exit",
    .block_bytes = sizeof(uint64_t),
    .on_alloc = usage_on_alloc,
    .on_free = usage_on_free,
    .on_realloc = usage_on_realloc,
    .stop = usage_stop,
    .reports = true,
};
