/* preload.thread_exit_frees: what a thread frees while it exits reaches the
 * pools, wherever in the exit it is freed.
 *
 * Runs THREADS threads one after another; each leaves blocks that are freed
 * during its exit, after heaphook's key destructor has given its cache
 * back (heaphook's key is older, so glibc runs that destructor first):
 *
 *   key      64 small blocks and their array, freed by the program's key
 *            destructor in the first round (the tester's reproduction)
 *   late     one block, freed by the program's key destructor in the last
 *            of glibc's PTHREAD_DESTRUCTOR_ITERATIONS rounds (the thread
 *            frees nothing before)
 *   freeres  strerror's buffer for an unknown error number, which glibc's
 *            __libc_thread_freeres frees after every key destructor (the
 *            thread frees nothing before)
 *
 * No block is left over from a thread, so HEAPHOOK_STATS' "current used" is
 * the same for any THREADS (before: it grew by ~2.2 KB, 100 and 24 bytes
 * per thread: the blocks went into the dead thread's cache).
 *
 * usage: hh_preload_thread_exit MODE THREADS */
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { BLOCKS = 64 };

static pthread_key_t key;
static __thread int rounds_left;

static void free_blocks(void *arg) {
  void **blocks = arg;
  for (int i = 0; i < BLOCKS; i++) free(blocks[i]);
  free(blocks);
}

/* Sets the key again until the last round, then frees the block. */
static void free_in_last_round(void *block) {
  if (--rounds_left > 0) {
    pthread_setspecific(key, block);
    return;
  }
  free(block);
}

static void *leave_blocks(void *arg) {
  (void)arg;
  free(malloc(100));
  void **blocks = malloc(BLOCKS * sizeof *blocks);
  for (int i = 0; i < BLOCKS; i++) blocks[i] = malloc(100);
  pthread_setspecific(key, blocks);
  return NULL;
}

static void *leave_block_for_last_round(void *arg) {
  (void)arg;
  rounds_left = PTHREAD_DESTRUCTOR_ITERATIONS;
  pthread_setspecific(key, malloc(100));
  return NULL;
}

static void *leave_strerror_buffer(void *arg) {
  (void)arg;
  const char *volatile text = strerror(100000); /* "Unknown error 100000", malloc'd */
  (void)text;
  return NULL;
}

int main(int argc, char **argv) {
  if (argc != 3) return 2;
  int threads = atoi(argv[2]);
  void *(*body)(void *);
  void (*destructor)(void *) = NULL;
  if (strcmp(argv[1], "key") == 0) {
    body = leave_blocks;
    destructor = free_blocks;
  } else if (strcmp(argv[1], "late") == 0) {
    body = leave_block_for_last_round;
    destructor = free_in_last_round;
  } else if (strcmp(argv[1], "freeres") == 0) {
    body = leave_strerror_buffer;
  } else {
    return 2;
  }
  free(malloc(1)); /* heaphook starts (and makes its key) before ours */
  if (destructor != NULL && pthread_key_create(&key, destructor) != 0) return 3;
  for (int i = 0; i < threads; i++) {
    pthread_t t;
    if (pthread_create(&t, NULL, body, NULL) != 0 || pthread_join(t, NULL) != 0) return 4;
  }
  printf("%s: %d threads\n", argv[1], threads);
  return 0;
}
