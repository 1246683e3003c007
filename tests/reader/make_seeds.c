/* Writes a small seed corpus for the reader's fuzzer: valid traces of each
 * record kind, raw and zstd chunks, a sampled one, a cut one. */
#include <stdio.h>
#include <string.h>

#include "trace_builder.h"

static void save(const char *dir, const char *name, tb *b, size_t len) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "wb");
  if (!f || fwrite(b->buf, 1, len, f) != len) {
    perror(path);
    return;
  }
  fclose(f);
}

static void full(tb *b, uint32_t enc) {
  tb_init(b, HH_TRACE_FLAG_STACKS, 1000000000u);
  tb_chunk_begin(b, 0, 0);
  const char *argv[] = {"prog", "x"};
  tb_command(b, 2, argv, "/bin/prog");
  tb_thread(b, 1, 100, "main");
  tb_segment seg = {0x400000, 0x1000, 0};
  tb_module(b, 0x400000, "/bin/prog", "abcd", 1, &seg);
  tb_stack(b, 1, 0, 0x400010);
  tb_stack(b, 2, 1, 0x400020);
  tb_chunk_end(b, enc);
  tb_chunk_begin(b, 1, 10);
  tb_alloc(b, 0, 10, 0x1000, 16, 2, 0);
  tb_alloc(b, 5, 11, 0x2000, 64, 1, 64);
  tb_realloc(b, 2, 12, 0x1000, 0x3000, 32, 2);
  tb_free(b, 9, 13, 0x3000);
  tb_marker(b, 14, "m");
  tb_rss(b, 15, 4096);
  tb_chunk_end(b, enc);
  tb_chunk_begin(b, 0, 20);
  tb_unload(b, 0x400000);
  tb_end(b, 20, 4);
  tb_chunk_end(b, enc);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: make_seeds DIR\n");
    return 2;
  }
  tb b;
  full(&b, HH_CHUNK_RAW);
  save(argv[1], "full_raw", &b, b.len);
  save(argv[1], "cut_raw", &b, b.len - 7);
  tb_free_all(&b);
  full(&b, HH_CHUNK_ZSTD);
  save(argv[1], "full_zstd", &b, b.len);
  tb_free_all(&b);
  tb_init(&b, HH_TRACE_FLAG_SAMPLED, 3000000000u);
  tb_chunk_begin(&b, 2, 1);
  tb_weight(&b, 1000);
  tb_alloc(&b, 0, 1, 0x5000, 8, 0, 0);
  tb_free(&b, 9, 2, 0x5000);
  tb_chunk_end(&b, HH_CHUNK_RAW);
  tb_chunk_begin(&b, 1, 0);
  tb_alloc(&b, 1, 1, 0x6000, 8, 0, 0);
  tb_end(&b, 3, 2);
  tb_chunk_end(&b, HH_CHUNK_RAW);
  save(argv[1], "sampled_two_threads", &b, b.len);
  tb_free_all(&b);
  /* Two threads' allocations at one time, the trace's last events: the
   * analysis reorders that run after the last batch (an empty one). */
  tb_init(&b, 0, 1000000000u);
  tb_chunk_begin(&b, 1, 5);
  tb_thread(&b, 1, 100, "a");
  tb_alloc(&b, 0, 5, 0x1000, 8, 0, 0);
  tb_chunk_end(&b, HH_CHUNK_RAW);
  tb_chunk_begin(&b, 2, 5);
  tb_thread(&b, 2, 101, "b");
  tb_alloc(&b, 0, 5, 0x2000, 8, 0, 0);
  tb_chunk_end(&b, HH_CHUNK_RAW);
  save(argv[1], "same_time_at_the_end", &b, b.len);
  tb_free_all(&b);
  return 0;
}
