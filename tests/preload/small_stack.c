/* small_stack DEPTH [LIBRARY]: a thread with a 16 KiB stack (PTHREAD_STACK_MIN)
 * recurses DEPTH levels of ~128 bytes, then allocates, grows and frees
 * blocks of sizes from 16 bytes to 200 KB, and allocates from 320 call
 * sites twice (more than the tracer's 256 cached call sites: both of its
 * unwinds run, the step-by-step one that fills an entry and the fast one
 * of a site whose entry another holds). With LIBRARY, the thread first
 * dlopen()s it, from a dl_iterate_phdr callback (where the tracer takes no
 * call stack, so that its scan of the modules, which it makes at the first
 * stack it takes after a dlopen, runs at the bottom), and at the bottom
 * allocates from one call site only (one unwind, in an empty cache: the
 * step-by-step one, whatever the addresses). Exits 0 and prints "depth N
 * ok", or dies of SIGSEGV when the stack runs out. small_stack.sh compares
 * the depth reached alone with the depth reached under heaphook. */
#define _GNU_SOURCE /* dl_iterate_phdr */
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int depth;
static const char *library;
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
  if (library != NULL) {
    for (int i = 0; i < 64; i++) free(sink = malloc(sizes[i % 6]));
    return sum;
  }
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

static int load_library(struct dl_phdr_info *info, size_t size, void *data) {
  (void)info;
  (void)size;
  (void)data;
  if (dlopen(library, RTLD_NOW) == NULL) abort();
  return 1;
}

static void *run(void *arg) {
  (void)arg;
  if (library != NULL) dl_iterate_phdr(load_library, NULL);
  return (void *)(long)dive(depth);
}

int main(int argc, char **argv) {
  if (argc != 2 && argc != 3) {
    fputs("usage: small_stack DEPTH [LIBRARY]\n", stderr);
    return 2;
  }
  depth = atoi(argv[1]);
  library = argc == 3 ? argv[2] : NULL;
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
