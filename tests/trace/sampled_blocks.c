/* Sampled blocks through every change of their lead (src/hook/block.h),
 * run under the tracer with HEAPHOOK_TRACE_SAMPLE=1M: a block of 33 MiB or
 * more is sampled (probability 1 - e^-33), one of 100 bytes or less almost
 * never (1e-4). Each cycle
 *   - grows a small block into a sampled one (it moves: a lead is added),
 *   - shrinks it to a block that is not sampled (it keeps its lead),
 *   - grows that into a sampled one again (in place, the lead kept),
 *   - makes sampled blocks aligned to 64 and 4096 bytes (the lead is the
 *     alignment) and shrinks one (it moves: a plain block),
 *   - makes a sampled zeroed block,
 * and checks every byte it wrote, the usable sizes and the alignments; the
 * trace is checked by check.sh (sampled_blocks). Prints what it did, the
 * same with and without the hook, with write(2): stdout's buffer, which
 * stays allocated, would be a sampled block of 4 KiB in 1 run of 250. */
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BIG ((size_t)33 << 20) /* above glibc's largest mmap threshold: mapped */
#define CYCLES 100

static void die(const char *what, int cycle) {
  fprintf(stderr, "sampled_blocks: cycle %d: %s\n", cycle, what);
  exit(1);
}

static void fill(unsigned char *p, size_t n, int seed) {
  for (size_t i = 0; i < n; i++) p[i] = (unsigned char)(seed * 31 + i);
}

static void expect_fill(const unsigned char *p, size_t n, int seed, const char *what, int cycle) {
  for (size_t i = 0; i < n; i++) {
    if (p[i] != (unsigned char)(seed * 31 + i)) die(what, cycle);
  }
}

static void expect_usable(void *p, size_t n, const char *what, int cycle) {
  if (p == NULL) die(what, cycle);
  if (malloc_usable_size(p) < n) die(what, cycle);
  ((unsigned char *)p)[n - 1] = 0x5a; /* the last byte is the program's */
}

int main(void) {
  unsigned long long sum = 0;
  for (int c = 0; c < CYCLES; c++) {
    unsigned char *p = malloc(16);
    if (p == NULL) die("malloc", c);
    fill(p, 16, c);
    p = realloc(p, BIG);
    expect_usable(p, BIG, "grown to a sampled block: usable size", c);
    expect_fill(p, 16, c, "grown to a sampled block: bytes", c);
    p = realloc(p, 24);
    expect_usable(p, 24, "shrunk: usable size", c);
    expect_fill(p, 16, c, "shrunk: bytes", c);
    p = realloc(p, BIG + 4096);
    expect_usable(p, BIG + 4096, "grown again: usable size", c);
    expect_fill(p, 16, c, "grown again: bytes", c);
    sum += malloc_usable_size(p) >= BIG + 4096;
    free(p);

    void *q = NULL;
    if (posix_memalign(&q, 4096, BIG) != 0) die("posix_memalign", c);
    if ((uintptr_t)q % 4096 != 0) die("posix_memalign: alignment", c);
    expect_usable(q, BIG, "posix_memalign: usable size", c);
    fill(q, 64, c + 1);
    q = realloc(q, 100);
    expect_usable(q, 100, "aligned block shrunk: usable size", c);
    expect_fill(q, 64, c + 1, "aligned block shrunk: bytes", c);
    free(q);

    unsigned char *a = aligned_alloc(64, BIG);
    if (a == NULL || (uintptr_t)a % 64 != 0) die("aligned_alloc", c);
    expect_usable(a, BIG, "aligned_alloc: usable size", c);
    free(a);

    unsigned char *z = calloc(BIG / 4096, 4096);
    if (z == NULL) die("calloc", c);
    for (size_t i = 0; i < BIG; i += 4096 * 511) {
      if (z[i] != 0) die("calloc: a byte not zero", c);
    }
    if (z[BIG - 1] != 0) die("calloc: the last byte not zero", c);
    free(z);
    sum += 4;
  }
  char line[80];
  int n = snprintf(line, sizeof line, "sampled_blocks: %d cycles, %llu checks\n", CYCLES, sum);
  return write(1, line, (size_t)n) == n ? 0 : 1;
}
