/* A producer and a consumer: the main thread allocates blocks and passes
 * each through a ring to the consumer thread, which frees it at once, so
 * a block is often allocated and freed by different threads within one
 * clock tick. Frees everything it allocates; prints nothing. argv[1]: the
 * number of blocks; argv[2] "own": the consumer allocates and frees a
 * block of its own before it frees each block it was handed (the
 * producer then often gets that block back in the same tick, while the
 * merge has the consumer's free behind its own allocation:
 * trace/tick_order.h); "realloc": the producer grows each block with
 * realloc before it hands it over (the realloc often receives a block
 * the consumer frees while it runs). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define RING 64
static _Atomic(void *) ring[RING];
static long blocks;
static int own, grow;

static void *consumer(void *arg) {
  (void)arg;
  for (long i = 0; i < blocks; i++) {
    void *p;
    while (!(p = atomic_exchange_explicit(&ring[i % RING], NULL, memory_order_acquire))) {
    }
    if (own) {
      void *volatile q = malloc(40); /* volatile: the pair is not optimized out */
      free(q);
    }
    free(p);
  }
  return NULL;
}

int main(int argc, char **argv) {
  blocks = argc > 1 ? atol(argv[1]) : 200000;
  own = argc > 2 && strcmp(argv[2], "own") == 0;
  grow = argc > 2 && strcmp(argv[2], "realloc") == 0;
  pthread_t t;
  if (pthread_create(&t, NULL, consumer, NULL) != 0) return 1;
  for (long i = 0; i < blocks; i++) {
    void *p = malloc(16 + (size_t)(i % 7) * 16);
    if (p && grow) p = realloc(p, 48 + (size_t)(i % 7) * 48);
    if (!p) return 1;
    while (atomic_load_explicit(&ring[i % RING], memory_order_relaxed)) {
    }
    atomic_store_explicit(&ring[i % RING], p, memory_order_release);
  }
  return pthread_join(t, NULL) != 0;
}
