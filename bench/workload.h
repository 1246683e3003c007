/* The churn workload shared by the heaphook benchmarks (see docs/benchmarks.md).
 *
 * A working set of HHB_SLOTS blocks; every step frees the block in a random
 * slot and puts a new block of a random size there ("random replace").
 * Sizes (ANCHORS.md): 90% 16-528 B, 9.5% 529 B-33 KiB, 0.5% 64 KiB-4 MiB,
 * uniform inside each range. Everything is driven by a fixed-seed xorshift
 * generator, so each run makes the same sequence of calls.
 *
 * Nothing here allocates from the allocator under test except the blocks
 * themselves: the benchmark's own arrays come from mmap.
 */
#ifndef HHB_WORKLOAD_H
#define HHB_WORKLOAD_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* dladdr, RUSAGE_THREAD */
#endif

#include <dlfcn.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#define HHB_SLOTS_DEFAULT 8192u
#define HHB_SEED_DEFAULT 0x5eed1234abcdull

enum { HHB_SMALL = 0, HHB_MEDIUM = 1, HHB_LARGE = 2, HHB_NCLASS = 3 };
static const char *const hhb_class_name[HHB_NCLASS] = {"16-528B", "529B-33KiB", "64KiB-4MiB"};

static inline uint64_t hhb_next(uint64_t *s) {
  /* xorshift64* */
  uint64_t x = *s;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  *s = x;
  return x * 0x2545F4914F6CDD1Dull;
}

static inline uint64_t hhb_seed(uint64_t seed, unsigned stream) {
  uint64_t s = seed ^ (0x9E3779B97F4A7C15ull * (stream + 1u));
  return s ? s : 1;
}

static inline size_t hhb_draw_size(uint64_t *s, unsigned *cls) {
  uint64_t r = hhb_next(s);
  unsigned pick = (unsigned)((r >> 32) % 1000u);
  uint64_t v = hhb_next(s) >> 11;
  if (pick < 900) {
    *cls = HHB_SMALL;
    return 16 + (size_t)(v % (528 - 16 + 1));
  }
  if (pick < 995) {
    *cls = HHB_MEDIUM;
    return 529 + (size_t)(v % (33 * 1024 - 529 + 1));
  }
  *cls = HHB_LARGE;
  return 64 * 1024 + (size_t)(v % (4 * 1024 * 1024 - 64 * 1024 + 1));
}

/* The application uses its block: one write at each end. (Touching every
 * page would turn the figures into a measure of page touching.) */
static inline void hhb_touch(void *p, size_t n) {
  volatile unsigned char *c = (volatile unsigned char *)p;
  c[0] = (unsigned char)n;
  c[n - 1] = (unsigned char)(n >> 8);
}

/* Pre-faulted anonymous memory, not from the allocator under test. */
static inline void *hhb_map(size_t bytes) {
  if (bytes == 0) bytes = 1;
  void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
  if (p == MAP_FAILED) {
    perror("mmap");
    exit(1);
  }
  for (size_t i = 0; i < bytes; i += 4096) ((volatile char *)p)[i] = 0;
  return p;
}

static inline double hhb_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Which shared object the program's malloc resolves to: proves that the
 * LD_PRELOAD took effect. */
static inline const char *hhb_malloc_origin(void) {
  Dl_info info;
  void *(*volatile m)(size_t) = malloc;
  if (dladdr((void *)m, &info) && info.dli_fname) {
    const char *slash = strrchr(info.dli_fname, '/');
    return slash ? slash + 1 : info.dli_fname;
  }
  return "?";
}

static inline unsigned long long hhb_arg(const char *s) {
  char *end;
  unsigned long long v = strtoull(s, &end, 10);
  if (*end == 'k' || *end == 'K')
    v *= 1000ull, end++;
  else if (*end == 'm' || *end == 'M')
    v *= 1000000ull, end++;
  if (*end) {
    fprintf(stderr, "bad number: %s\n", s);
    exit(2);
  }
  return v;
}

/* The churn's own options, shared by the programs that run it. */
typedef struct hhb_churn_opts {
  unsigned long long iters, warmup, slots, seed;
} hhb_churn_opts;

/* argv[*i] is one of the churn's options (--iters, --warmup, --slots,
 * --seed N): its value stored into o, *i moved past it, true. */
static inline bool hhb_churn_arg(int argc, char **argv, int *i, hhb_churn_opts *o) {
  static const char *const names[] = {"--iters", "--warmup", "--slots", "--seed"};
  unsigned long long *dest[] = {&o->iters, &o->warmup, &o->slots, &o->seed};
  if (*i + 1 >= argc) return false;
  for (int k = 0; k < 4; k++) {
    if (strcmp(argv[*i], names[k]) == 0) {
      *dest[k] = hhb_arg(argv[++*i]);
      return true;
    }
  }
  return false;
}

#endif
