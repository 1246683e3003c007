/* Writes a small trace that decodes to a great deal (a compression bomb):
 * make_bomb KIND CHUNKS OUT. Each chunk after the first is 16 MiB of
 * records zstd makes ~1.6 KB of: KIND threads, THREAD records (renames of
 * thread 1: the reader keeps each); leak, allocations never freed (the
 * analysis's live blocks). No END: the reading stops before it anyway. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace_builder.h"

int main(int argc, char **argv) {
  if (argc != 4 || (strcmp(argv[1], "threads") != 0 && strcmp(argv[1], "leak") != 0)) {
    fprintf(stderr, "usage: make_bomb threads|leak CHUNKS OUT\n");
    return 2;
  }
  bool leak = strcmp(argv[1], "leak") == 0;
  int chunks = atoi(argv[2]);
  tb b;
  tb_init(&b, HH_TRACE_FLAG_ZSTD, 1000000000u);
  tb_chunk_begin(&b, 0, 0);
  tb_thread(&b, 1, 100, "main");
  tb_chunk_end(&b, HH_CHUNK_ZSTD);
  uint64_t addr = 0x10000;
  for (int c = 0; c < chunks; c++) {
    tb_chunk_begin(&b, leak ? 1 : 0, 1);
    while (b.pl_len < HH_CHUNK_MAX_DECODED - 64) {
      if (leak) {
        addr += 16;
        tb_alloc(&b, 0, 1, addr, 16, 0, 0);
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
