/* Two threads: one calls dl_iterate_phdr and allocates 32 bytes in each
 * callback (as backtrace libraries do when they list the loaded objects),
 * the other allocates 48 bytes from call stacks of varying depth. Prints
 * "callbacks N" (the 32-byte allocations) at the end. */
#define _GNU_SOURCE
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static long callbacks;

static int on_object(struct dl_phdr_info *info, size_t size, void *data) {
  (void)info;
  (void)size;
  (void)data;
  free(malloc(32));
  callbacks++;
  return 0;
}

__attribute__((noinline)) static void iterate(int depth) {
  if (depth == 0)
    dl_iterate_phdr(on_object, NULL);
  else
    iterate(depth - 1);
}

__attribute__((noinline)) static void allocate(int depth) {
  if (depth == 0)
    free(malloc(48));
  else
    allocate(depth - 1);
}

static void *lister(void *arg) {
  for (int i = 0; i < 5000; i++) iterate(i % 17);
  return arg;
}

static void *allocator(void *arg) {
  for (int i = 0; i < 100000; i++) allocate(i % 23);
  return arg;
}

int main(void) {
  pthread_t a, b;
  if (pthread_create(&a, NULL, lister, NULL) != 0 || pthread_create(&b, NULL, allocator, NULL) != 0) return 1;
  pthread_join(a, NULL);
  pthread_join(b, NULL);
  printf("callbacks %ld\n", callbacks);
  return 0;
}
