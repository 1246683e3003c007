/* A program whose heap use is known exactly, for the heaphook command's
 * end-to-end tests. No stdio (its buffers would be allocations too).
 *   known_allocs [EXIT_STATUS]   (or many, grow, realloc, zero, big: below)
 * allocates, in this order:
 *   alloc_small:   malloc(1000)           freed
 *   alloc_array:   calloc(10, 200)        leaked (2000 bytes)
 *   alloc_grow:    malloc(3000), realloc to 5000   leaked (5000 bytes)
 *   alloc_aligned: posix_memalign(64, 4096)        freed
 * Peak in use: 1000 + 2000 + 3000, then - 1000 (free) ... computed in the
 * test: 2000 + 5000 + 4096 = 11096 bytes, after the aligned block. */
#include <malloc.h> /* pvalloc */
#include <stdlib.h>

void *volatile keep[4];

__attribute__((noinline)) void *alloc_small(void) { return malloc(1000); }
__attribute__((noinline)) void *alloc_array(void) { return calloc(10, 200); }
__attribute__((noinline)) void *alloc_grow(void) { return malloc(3000); }
__attribute__((noinline)) void *grow(void *p) { return realloc(p, 5000); }
__attribute__((noinline)) void *alloc_aligned(void) {
  void *p = NULL;
  if (posix_memalign(&p, 64, 4096) != 0) abort();
  return p;
}

/* known_allocs many: 200000 x malloc(100), every 200th kept (1000 blocks,
 * 100000 bytes leaked), the rest freed at once: for sampled runs. */
static void many(void) {
  static void *kept[1000];
  for (int i = 0; i < 200000; i++) {
    void *p = malloc(100);
    if (i % 200 == 0)
      kept[i / 200] = p;
    else
      free(p);
  }
  keep[0] = kept;
}

/* known_allocs zero: malloc(0) and pvalloc(5000), both freed: recorded as
 * asked for, 0 and 5000 bytes (not 1 and a page's 8192). */
static void zero(void) {
  free(malloc(0));
  free(pvalloc(5000));
}

/* known_allocs realloc: malloc(5000) shrunk in place to 100, then freed;
 * malloc(100) grown to 6000, then freed; malloc(100) shrunk in place to
 * 50 and kept (leaked). */
static void reallocs(void) {
  void *p = malloc(5000);
  keep[0] = p = realloc(p, 100);
  free(p);
  void *q = malloc(100);
  keep[1] = q = realloc(q, 6000);
  free(q);
  void *r = malloc(100);
  keep[2] = realloc(r, 50);
  if (keep[2] != r) abort(); /* (glibc shrinks in place) */
}

/* known_allocs grow: 200000 x malloc(64), grown by realloc, then freed:
 * for sampled runs, whose estimates of all three counts must be near
 * 200000. */
static void grow_many(void) {
  for (int i = 0; i < 200000; i++) {
    char *p = malloc(64);
    p = realloc(p, 64 + (size_t)(i % 64) * 16);
    keep[0] = p;
    free(p);
  }
}

/* known_allocs big: 100000 x malloc(16384) and 100000 x malloc(32768),
 * each freed at once: for runs sampled every 16 KiB, where a sample stands
 * for 1.58 and 1.16 blocks (the counts were rounded: 2 and 1). */
static void big(void) {
  for (int i = 0; i < 200000; i++) {
    char *p = malloc(i % 2 ? 32768 : 16384);
    p[0] = 1;
    keep[0] = p;
    free(p);
  }
}

#include <unistd.h> /* pause, usleep (here: the lines above are in dump_symbols' expectations) */

/* known_allocs sleep: 1000 x malloc(100), kept, over ~0.3 s (a trace's
 * writer thread starts ~0.1 s into a run: README), then waits to be killed
 * (100000 bytes in 1000 blocks in use where its trace ends). */
static void sleep_kept(void) {
  static void *kept[1000];
  for (int i = 0; i < 1000; i++) {
    kept[i] = malloc(100);
    usleep(300);
  }
  keep[0] = kept;
  for (;;) pause();
}

/* known_allocs one: a single byte, kept (a count of 1 in every line that
 * says one: "1 byte", "1 allocation call"). */
static void one_byte(void) { keep[0] = malloc(1); }

/* The other programs, by the first letter of their name. */
static const struct {
  char name;
  void (*run)(void);
} modes[] = {{'m', many}, {'g', grow_many},  {'r', reallocs}, {'z', zero},
             {'b', big},  {'s', sleep_kept}, {'o', one_byte}};

int main(int argc, char **argv) {
  for (size_t i = 0; argc > 1 && i < sizeof modes / sizeof *modes; i++) {
    if (argv[1][0] == modes[i].name) {
      modes[i].run();
      return 0;
    }
  }
  keep[0] = alloc_small();
  keep[1] = alloc_array();
  keep[2] = alloc_grow();
  free(keep[0]);
  keep[2] = grow(keep[2]);
  keep[3] = alloc_aligned();
  free(keep[3]);
  return argc > 1 ? atoi(argv[1]) : 0;
}
