/* The sampler's size gate (src/hook/sample.h) on small blocks: 60,000
 * allocations of 16-2015 bytes through malloc, calloc, realloc (growing and
 * shrinking), aligned_alloc and posix_memalign, 512 live at a time, every
 * byte written and checked, all freed. At a 256 KiB period the gate is
 * 2 KiB, above every size here: each sampled block is allocated larger than
 * asked, and its free must still be recorded (check.sh sample_gate). Prints
 * a checksum of the contents, the same with and without heaphook. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { N = 60000, LIVE = 512 };

static uint64_t next(uint64_t *x) {
  *x ^= *x >> 12;
  *x ^= *x << 25;
  *x ^= *x >> 27;
  return *x * 0x2545F4914F6CDD1Dull;
}

static void *block[LIVE];
static size_t size[LIVE];
static unsigned char fill[LIVE];

static uint64_t check_and_sum(int k) {
  const unsigned char *p = block[k];
  uint64_t s = 0;
  for (size_t i = 0; i < size[k]; i++) {
    if (p[i] != fill[k]) {
      fprintf(stderr, "block %d: byte %zu is %u, not %u\n", k, i, p[i], fill[k]);
      exit(1);
    }
    s += p[i];
  }
  return s;
}

int main(void) {
  uint64_t x = 88172645463325252ull, sum = 0;
  for (int i = 0; i < N; i++) {
    uint64_t r = next(&x);
    int k = (int)(r % LIVE);
    size_t n = 16 + (size_t)(r >> 20) % 2000;
    unsigned char c = (unsigned char)(r >> 40);
    if (block[k] != NULL) sum += check_and_sum(k);
    void *p = NULL;
    switch (i % 5) {
      case 0:
        free(block[k]);
        p = malloc(n);
        break;
      case 1:
        free(block[k]);
        p = calloc(1, n);
        for (size_t j = 0; p != NULL && j < n; j++) {
          if (((unsigned char *)p)[j] != 0) {
            fprintf(stderr, "calloc(%zu): byte %zu not zero\n", n, j);
            return 1;
          }
        }
        break;
      case 2: /* keeps the old content up to the smaller size */
        p = realloc(block[k], n);
        if (p != NULL && block[k] != NULL) {
          size_t kept = n < size[k] ? n : size[k];
          for (size_t j = 0; j < kept; j++) {
            if (((unsigned char *)p)[j] != fill[k]) {
              fprintf(stderr, "realloc lost byte %zu\n", j);
              return 1;
            }
          }
        }
        break;
      case 3:
        free(block[k]);
        p = aligned_alloc(64, (n + 63) & ~(size_t)63);
        if (((uintptr_t)p & 63) != 0) return 1;
        break;
      default:
        free(block[k]);
        if (posix_memalign(&p, 128, n) != 0) p = NULL;
        if (((uintptr_t)p & 127) != 0) return 1;
        break;
    }
    if (p == NULL) {
      fprintf(stderr, "allocation %d of %zu bytes failed\n", i, n);
      return 1;
    }
    block[k] = p;
    size[k] = n;
    fill[k] = c;
    memset(p, c, n);
  }
  for (int k = 0; k < LIVE; k++) {
    if (block[k] != NULL) sum += check_and_sum(k);
    free(block[k]);
  }
  printf("sample_gate %llu\n", (unsigned long long)sum);
  return 0;
}
