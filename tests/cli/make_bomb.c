/* Writes a small trace that decodes to a great deal (a compression bomb):
 * make_bomb KIND CHUNKS OUT. Each chunk after the first is 16 MiB of
 * records zstd makes ~1.6 KB of: KIND threads, THREAD records (renames of
 * thread 1: the reader keeps each); leak, allocations never freed (the
 * analysis's live blocks); markers, MARKER records at one time (the
 * analysis keeps each). No END: the reading stops before it anyway.
 * KIND deep: CHUNKS thousand call sites under one prefix of 300 frames
 * (collapsed stacks and massif's inverted tree: a path or a branch of 256
 * frames per site), with END. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace_builder.h"

int main(int argc, char **argv) {
  if (argc != 4 || (strcmp(argv[1], "threads") != 0 && strcmp(argv[1], "leak") != 0 &&
                    strcmp(argv[1], "deep") != 0 && strcmp(argv[1], "markers") != 0)) {
    fprintf(stderr, "usage: make_bomb threads|leak|markers|deep CHUNKS OUT\n");
    return 2;
  }
  bool leak = strcmp(argv[1], "leak") == 0, deep = strcmp(argv[1], "deep") == 0,
       markers = strcmp(argv[1], "markers") == 0;
  int chunks = atoi(argv[2]);
  tb b;
  tb_init(&b, HH_TRACE_FLAG_ZSTD | (deep ? HH_TRACE_FLAG_STACKS : 0), 1000000000u);
  tb_chunk_begin(&b, 0, 0);
  tb_thread(&b, 1, 100, "main");
  if (deep) {
    uint64_t sites = 1000 * (uint64_t)chunks;
    for (uint64_t id = 1; id <= 300; id++) tb_stack(&b, id, id - 1, 0x400000 + 16 * id);
    for (uint64_t i = 0; i < sites; i++) tb_stack(&b, 301 + i, 300, 0x800000 + 16 * i);
    tb_chunk_end(&b, HH_CHUNK_ZSTD);
    tb_chunk_begin(&b, 1, 1);
    for (uint64_t i = 0; i < sites; i++) tb_alloc(&b, 0, 1, 0x10000 + 16 * i, 16, 301 + i, 0);
    tb_chunk_end(&b, HH_CHUNK_ZSTD);
    tb_chunk_begin(&b, 0, 2);
    tb_end(&b, 2, sites);
    chunks = 0;
  }
  tb_chunk_end(&b, HH_CHUNK_ZSTD);
  uint64_t addr = 0x10000;
  for (int c = 0; c < chunks; c++) {
    tb_chunk_begin(&b, leak ? 1 : 0, 1);
    while (b.pl_len < HH_CHUNK_MAX_DECODED - 64) {
      if (leak) {
        addr += 16;
        tb_alloc(&b, 0, 1, addr, 16, 0, 0);
      } else if (markers) {
        tb_marker(&b, 1, "m");
      } else {
        tb_thread(&b, 1, 100, "");
      }
    }
    tb_chunk_end(&b, HH_CHUNK_ZSTD);
  }
  FILE *f = fopen(argv[3], "wb");
  if (!f || fwrite(b.buf, 1, b.len, f) != b.len || fclose(f) != 0) {
    perror(argv[3]);
    return 1;
  }
  tb_free_all(&b);
  return 0;
}
