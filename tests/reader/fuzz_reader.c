/* libFuzzer target for the trace reader: any bytes, read in file order and
 * through the time-ordered merge, with every stack walked. Built by clang
 * with FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION (chunk checksums are not
 * enforced, so that mutations reach the record decoder). */
#include <stddef.h>
#include <stdint.h>

#include "trace/reader.h"

static void walk(const hh_reader *r, uint64_t id) {
  size_t depth = 0;
  for (const hh_stack_node *n = hh_reader_stack(r, id); n; n = hh_reader_stack(r, n->parent))
    if (++depth > hh_reader_stack_count(r)) __builtin_trap(); /* a cycle */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  for (int merged = 0; merged < 2; merged++) {
    char err[256];
    hh_reader *r = hh_reader_open_mem(data, size, err, sizeof err);
    if (!r) return 0;
    /* (a compression bomb stops at a limit, as in the heaphook command,
     * far under the fuzzer's -rss_limit_mb) */
    hh_reader_set_memory_limit(r, 256 << 20);
    hh_merge *m = merged ? hh_merge_new(r, 256) : NULL;
    hh_event ev;
    while (m ? hh_merge_next(m, &ev) : hh_reader_next(r, &ev)) {
      if (ev.kind == HH_EV_ALLOC || ev.kind == HH_EV_REALLOC) walk(r, ev.stack);
      if (ev.kind == HH_EV_STACK) walk(r, ev.u.stack.id);
    }
    (void)hh_reader_message(r);
    for (size_t i = 0; i < hh_reader_module_count(r); i++) (void)hh_reader_module(r, i)->path[0];
    for (size_t i = 0; i < hh_reader_thread_count(r); i++) (void)hh_reader_thread_at(r, i)->name[0];
    hh_merge_free(m);
    hh_reader_close(r);
  }
  return 0;
}
