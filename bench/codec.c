/* zstd or lz4 for the trace's chunks: takes a trace written by the tracer,
 * decompresses its chunks back to what the tracer compressed (for a
 * version-2 event chunk: each stream on its own, as the writer compresses
 * them), then compresses the same blocks again with each codec and level
 * and prints one Markdown row per codec: stored bytes, bytes per event, and
 * compression and decompression time per event (best of several rounds, one
 * thread; "small match finder": zstd -1 with a 64-entry hash table and
 * matches of 7 bytes or more, which finds fewer spurious matches in
 * streams of near-random bytes); then, for an event-chunk trace, where the
 * bytes go: each stream's
 * bytes per event under zstd -1 and its order-0 entropy (what an ideal
 * coder of its bytes, one at a time, would need). Used by
 * bench/codec_bench.sh (`make bench`).
 *
 *   hh_bench_codec TRACE EVENTS */
#define _GNU_SOURCE
#include <lz4.h>
#include <lz4hc.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zstd.h>

#include "trace/format.h"
#include "trace/model.h"

typedef struct blk {
  const uint8_t *p;
  size_t n;
  int stream; /* of an event chunk (model.h), -1 for rows */
} blk;

static blk *blocks;
static size_t nblocks, cap_blocks, raw_total;

static void add_block(const uint8_t *p, size_t n, int stream) {
  if (n == 0) return;
  if (nblocks == cap_blocks) {
    cap_blocks = cap_blocks ? 2 * cap_blocks : 4096;
    blocks = realloc(blocks, cap_blocks * sizeof *blocks);
    if (!blocks) exit(1);
  }
  blocks[nblocks++] = (blk){p, n, stream};
  raw_total += n;
}

static uint32_t u32(const uint8_t *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

typedef struct codec {
  const char *name;
  int kind; /* 0 zstd, 1 lz4, 2 lz4hc, 3 zstd with a small match finder (few, long matches) */
  int level;
} codec;

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s TRACE EVENTS\n", argv[0]);
    return 2;
  }
  double events = atof(argv[2]);
  FILE *f = fopen(argv[1], "rb");
  if (!f) {
    perror(argv[1]);
    return 1;
  }
  fseek(f, 0, SEEK_END);
  long size = ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t *file = malloc((size_t)size);
  if (!file || fread(file, 1, (size_t)size, f) != (size_t)size) return 1;
  fclose(f);
  const hh_trace_header *h = (const hh_trace_header *)file;
  if (size < (long)HH_TRACE_HEADER_BYTES || memcmp(h->magic, HH_TRACE_MAGIC, 8) != 0) {
    fprintf(stderr, "%s: not a heaphook trace\n", argv[1]);
    return 1;
  }
  /* The raw blocks: every chunk's payload decompressed, a v2 event chunk
   * split into its streams. */
  size_t stored_now = 0;
  for (size_t off = HH_TRACE_HEADER_BYTES; off + HH_CHUNK_HEADER_BYTES <= (size_t)size;) {
    const uint8_t *c = file + off;
    uint32_t enc = u32(c + 4), stored = u32(c + 8), raw = u32(c + 12), thread = u32(c + 20);
    if (memcmp(c, HH_CHUNK_MAGIC, 4) != 0 || off + HH_CHUNK_HEADER_BYTES + stored > (size_t)size) break;
    const uint8_t *pl = c + HH_CHUNK_HEADER_BYTES;
    stored_now += stored;
    uint8_t *dec = malloc(raw ? raw : 1);
    if (!dec) return 1;
    if (enc == HH_CHUNK_ZSTD) {
      size_t n = ZSTD_decompress(dec, raw, pl, stored);
      if (ZSTD_isError(n) || n != raw) {
        fprintf(stderr, "chunk at %zu: %s\n", off, ZSTD_isError(n) ? ZSTD_getErrorName(n) : "size");
        return 1;
      }
    } else {
      memcpy(dec, pl, raw);
    }
    if (h->version >= 2 && thread != 0) {
      const uint8_t *p = dec, *end = dec + raw;
      const int nstreams = hh_event_streams(h->version);
      uint64_t len[HH_STREAMS_MAX];
      for (int i = 0; i < nstreams; i++)
        if (hh_get_varint(&p, end, &len[i])) return 1;
      size_t table = (size_t)(p - dec);
      for (int i = 0; i < nstreams; i++) {
        /* the table travels with the first stream, as the writer does */
        const uint8_t *s = i == 0 ? dec : p;
        size_t n = i == 0 ? table + len[0] : len[i];
        add_block(s, n, i);
        p += len[i];
      }
    } else {
      add_block(dec, raw, -1);
    }
    off += HH_CHUNK_HEADER_BYTES + stored;
  }
  const codec codecs[] = {
      {"zstd -1 (the tracer's)", 0, 1},         {"zstd -2", 0, 2}, {"zstd -3", 0, 3},  {"zstd -6", 0, 6},
      {"zstd -1, hashLog 6, minMatch 7", 3, 1}, {"lz4", 1, 0},     {"lz4hc -9", 2, 9},
  };
  size_t max_block = 0;
  for (size_t i = 0; i < nblocks; i++)
    if (blocks[i].n > max_block) max_block = blocks[i].n;
  size_t bound = ZSTD_compressBound(max_block);
  if ((size_t)LZ4_compressBound((int)max_block) > bound) bound = (size_t)LZ4_compressBound((int)max_block);
  uint8_t *out = malloc(bound), *back = malloc(max_block ? max_block : 1);
  ZSTD_CCtx *cc = ZSTD_createCCtx();
  ZSTD_DCtx *dc = ZSTD_createDCtx();
  void *hc = malloc((size_t)LZ4_sizeofStateHC());
  if (!out || !back || !cc || !dc || !hc) return 1;
  printf("%zu blocks, %.1f MiB before compression (%.2f bytes per event), %.1f MiB stored in the file\n\n",
         nblocks, (double)raw_total / 1048576.0, (double)raw_total / events, (double)stored_now / 1048576.0);
  printf("| codec | stored MiB | bytes per event | compress ns per event | decompress ns per event |\n");
  printf("|---|---|---|---|---|\n");
  for (size_t k = 0; k < sizeof codecs / sizeof *codecs; k++) {
    const codec *cd = &codecs[k];
    double best_c = 1e30, best_d = 1e30;
    size_t total = 0;
    for (int round = 0; round < 3; round++) {
      total = 0;
      double tc = 0, td = 0;
      for (size_t i = 0; i < nblocks; i++) {
        const blk *b = &blocks[i];
        double t0 = now();
        size_t z;
        if (cd->kind == 0) {
          z = ZSTD_compressCCtx(cc, out, bound, b->p, b->n, cd->level);
          if (ZSTD_isError(z)) return 1;
        } else if (cd->kind == 3) {
          ZSTD_CCtx_reset(cc, ZSTD_reset_session_and_parameters);
          ZSTD_CCtx_setParameter(cc, ZSTD_c_compressionLevel, cd->level);
          ZSTD_CCtx_setParameter(cc, ZSTD_c_hashLog, 6);
          ZSTD_CCtx_setParameter(cc, ZSTD_c_minMatch, 7);
          z = ZSTD_compress2(cc, out, bound, b->p, b->n);
          ZSTD_CCtx_reset(cc, ZSTD_reset_session_and_parameters);
          if (ZSTD_isError(z)) return 1;
        } else if (cd->kind == 1) {
          z = (size_t)LZ4_compress_default((const char *)b->p, (char *)out, (int)b->n, (int)bound);
        } else {
          z = (size_t)LZ4_compress_HC_extStateHC(hc, (const char *)b->p, (char *)out, (int)b->n, (int)bound,
                                                 cd->level);
        }
        if (z == 0) return 1;
        double t1 = now();
        size_t n;
        if (cd->kind == 0 || cd->kind == 3) {
          n = ZSTD_decompressDCtx(dc, back, b->n, out, z);
          if (ZSTD_isError(n)) return 1;
        } else {
          int r = LZ4_decompress_safe((const char *)out, (char *)back, (int)z, (int)b->n);
          n = r < 0 ? 0 : (size_t)r;
        }
        double t2 = now();
        if (n != b->n || memcmp(back, b->p, n) != 0) {
          fprintf(stderr, "%s: round trip failed\n", cd->name);
          return 1;
        }
        tc += t1 - t0;
        td += t2 - t1;
        total += z;
      }
      if (tc < best_c) best_c = tc;
      if (td < best_d) best_d = td;
    }
    printf("| %s | %.1f | %.2f | %.1f | %.1f |\n", cd->name, (double)total / 1048576.0,
           (double)total / events, best_c * 1e9 / events, best_d * 1e9 / events);
  }
  /* Where the bytes go: per stream of the event chunks, zstd -1 as the
   * tracer stores it, and the order-0 entropy of each block (its byte
   * histogram), summed. */
  static const char *const stream_names[HH_STREAMS_MAX] = {
      "OPS",       "WIDE",  "REF_LO", "REF_HI", "SIZE_LO",  "SIZE_HI",  "STACK",
      "OPS_ALLOC", "ADDR0", "ADDR1",  "ADDR2",  "FREED_LO", "FREED_HI", "CODE"};
  double zsum[HH_STREAMS_MAX] = {0}, hsum[HH_STREAMS_MAX] = {0};
  bool any = false;
  for (size_t i = 0; i < nblocks; i++) {
    const blk *b = &blocks[i];
    if (b->stream < 0) continue;
    any = true;
    size_t z = ZSTD_compressCCtx(cc, out, bound, b->p, b->n, 1);
    if (ZSTD_isError(z)) return 1;
    zsum[b->stream] += (double)z;
    double hist[256] = {0};
    for (size_t j = 0; j < b->n; j++) hist[b->p[j]]++;
    for (int v = 0; v < 256; v++)
      if (hist[v] > 0) hsum[b->stream] -= hist[v] * log2(hist[v] / (double)b->n) / 8.0;
  }
  if (any) {
    printf("\nWhere the bytes go (event chunks, per stream; bytes per event):\n\n");
    printf("| stream | zstd -1 | order-0 entropy |\n|---|---|---|\n");
    for (int i = 0; i < HH_STREAMS_MAX; i++)
      if (zsum[i] > 0) printf("| %s | %.3f | %.3f |\n", stream_names[i], zsum[i] / events, hsum[i] / events);
  }
  return 0;
}
