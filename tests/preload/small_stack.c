/* small_stack DEPTH: a thread with a 16 KiB stack (PTHREAD_STACK_MIN)
 * recurses DEPTH levels of ~128 bytes, then allocates, grows and frees
 * blocks of sizes from 16 bytes to 200 KB, and allocates from 320 call
 * sites twice (more than the tracer's 256 cached call sites: both of its
 * unwinds run, the step-by-step one that fills an entry and the fast one
 * of a site whose entry another holds); exits 0 and prints "depth N ok",
 * or dies of SIGSEGV when the stack runs out. small_stack.sh compares the
 * depth reached alone with the depth reached under heaphook. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int depth;
static void *volatile sink;

/* 320 call sites of malloc, each its own return address. */
#define SITE free(sink = malloc(24));
#define SITES10 SITE SITE SITE SITE SITE SITE SITE SITE SITE SITE
#define SITES80 SITES10 SITES10 SITES10 SITES10 SITES10 SITES10 SITES10 SITES10
static void __attribute__((noinline)) many_sites(void) { SITES80 SITES80 SITES80 SITES80 }

static int __attribute__((noinline)) dive(int d) {
  volatile char pad[96];
  memset((char *)pad, d, sizeof pad);
  if (d > 0) return dive(d - 1) + pad[5];
  static const size_t sizes[] = {16, 200, 1000, 5000, 30000, 200000};
  int sum = 0;
  for (int i = 0; i < 64; i++) {
    char *p = malloc(sizes[i % 6]);
    char *q = calloc(3, sizes[(i + 1) % 6]);
    if (!p || !q) abort();
    p[0] = 1;
    p = realloc(p, sizes[(i + 2) % 6]);
    if (!p) abort();
    sum += p[0] + q[0];
    free(q);
    free(p);
  }
  many_sites();
  many_sites();
  return sum;
}

static void *run(void *arg) {
  (void)arg;
  return (void *)(long)dive(depth);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fputs("usage: small_stack DEPTH\n", stderr);
    return 2;
  }
  depth = atoi(argv[1]);
  pthread_attr_t attr;
  pthread_t t;
  void *result;
  if (pthread_attr_init(&attr) != 0 || pthread_attr_setstacksize(&attr, 16384) != 0 ||
      pthread_create(&t, &attr, run, NULL) != 0 || pthread_join(t, &result) != 0) {
    fputs("small_stack: cannot run a thread with a 16 KiB stack\n", stderr);
    return 2;
  }
  printf("depth %d ok\n", depth);
  return 0;
}
