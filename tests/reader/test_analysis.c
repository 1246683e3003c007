/* The analysis (src/analyze) on traces made by the test-only encoder:
 * what needs many events or threads to show, checked exactly. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "analyze/analysis.h"
#include "trace/reader.h"
#include "trace_builder.h"

/* 20,000 threads, numbered 1, 2, ... as the tracer numbers them, and one
 * with an index no tracer gives: each its own slot, with its own numbers
 * (thread k allocates k bytes, once). A linear search for the slot of each
 * event's thread took 16 s for 60,000 threads. */
static void many_threads(void **state) {
  (void)state;
  enum { N = 20000 };
  const uint32_t odd = 3000000000u;
  tb b;
  tb_init(&b, 0, 1000000000u);
  for (uint32_t k = 1; k <= N + 1; k++) {
    uint32_t index = k <= N ? k : odd;
    tb_chunk_begin(&b, index, k);
    tb_thread(&b, index, 100000 + k, "worker");
    tb_alloc(&b, 0, k, 0x10000 + 0x100 * (uint64_t)k, index == odd ? 7 : k, 0, 0);
    tb_chunk_end(&b, HH_CHUNK_RAW);
  }
  tb_chunk_begin(&b, 0, N + 2);
  tb_end(&b, N + 2, N + 1);
  tb_chunk_end(&b, HH_CHUNK_ZSTD);
  hh_reader *r = hh_reader_open_mem(b.buf, b.len, NULL, 0);
  hh_analysis *a = NULL;
  char err[256];
  assert_int_equal(hh_analyze(r, &(hh_analyze_options){0}, &a, err, sizeof err), 0);
  assert_int_equal(a->nthreads, N + 1);
  assert_int_equal(a->allocations, N + 1);
  size_t seen = 0;
  for (size_t i = 0; i < a->nthreads; i++) {
    const hh_thread_stats *t = &a->threads[i];
    assert_int_equal(t->allocations, 1);
    assert_int_equal(t->bytes, t->index == odd ? 7 : t->index);
    seen++;
  }
  assert_int_equal(seen, N + 1);
  hh_analysis_free(a);
  hh_reader_close(r);
  tb_free_all(&b);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(many_threads),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
