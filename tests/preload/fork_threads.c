/* preload.fork_threads_*: fork while other threads allocate.
 *
 * Four threads churn malloc/free/realloc (and calloc, aligned blocks) while
 * the main thread forks FORKS times. Each child allocates and frees, checks
 * its blocks, starts a thread that allocates, joins it and _exits(0). The
 * parent checks every child's status. A deadlock (in the parent, or a child
 * that never exits) is turned into a failure by an alarm.
 *
 * usage: hh_preload_fork OWNER [FORKS]
 *   OWNER: what hh_allocator_of must say for blocks of the parent and of
 *   the children. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "heaphook/heaphook.h"

#define CHURNERS 4
#ifndef WATCHDOG_SECONDS
#define WATCHDOG_SECONDS 60
#endif

static atomic_bool stop;
static atomic_ulong churn_ops;
static const char *owner;
static volatile pid_t current_child;
static volatile int forks_done;
static void *volatile sink;

static void say(const char *msg) {
  ssize_t r = write(1, msg, strlen(msg));
  (void)r;
}

static void watchdog(int sig) {
  (void)sig;
  char msg[200];
  int n = snprintf(msg, sizeof msg,
                   "FAIL watchdog: still running after %d s (deadlock?) at fork %d; child %d killed\n"
                   "0 passed, 1 failed\n",
                   WATCHDOG_SECONDS, forks_done, (int)current_child);
  if (current_child > 0) kill(current_child, SIGKILL);
  ssize_t r = write(1, msg, (size_t)n);
  (void)r;
  _exit(3);
}

static uint64_t next_rand(uint64_t *s) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}

/* Fills a block with a pattern derived from its address and size. */
static void fill(unsigned char *p, size_t n, unsigned char tag) {
  for (size_t i = 0; i < n; i += 61) p[i] = (unsigned char)(tag + i);
  if (n > 0) p[n - 1] = tag;
}
static int intact(const unsigned char *p, size_t n, unsigned char tag) {
  for (size_t i = 0; i < n; i += 61) {
    if (i != n - 1 && p[i] != (unsigned char)(tag + i)) return 0;
  }
  return n == 0 || p[n - 1] == tag;
}

#define SLOTS 64

static void *churn(void *arg) {
  uint64_t seed = 0x9E3779B97F4A7C15ull * (uintptr_t)(arg) + 1;
  unsigned char *blocks[SLOTS] = {0};
  size_t sizes[SLOTS] = {0};
  unsigned char tags[SLOTS] = {0};
  unsigned long ops = 0;
  while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
    uint64_t r = next_rand(&seed);
    int i = (int)(r % SLOTS);
    size_t size = 1 + (size_t)((r >> 8) % ((r >> 40) % 8 == 0 ? 65536 : 512));
    if (blocks[i] != NULL && !intact(blocks[i], sizes[i], tags[i])) {
      say("FAIL churn: a block's content changed\n");
      _exit(4);
    }
    switch ((r >> 32) % 5) {
      case 0:
      case 1:
        free(blocks[i]);
        blocks[i] = (r >> 36) % 4 == 0 ? aligned_alloc(64, (size + 63) & ~(size_t)63) : malloc(size);
        break;
      case 2:
        free(blocks[i]);
        blocks[i] = calloc(1, size);
        if (blocks[i] != NULL && blocks[i][size - 1] != 0) {
          say("FAIL churn: calloc block not zero\n");
          _exit(4);
        }
        break;
      case 3: {
        unsigned char *p = realloc(blocks[i], size);
        if (p == NULL) break;
        if (blocks[i] != NULL) {
          /* The kept part keeps its content: check the first bytes. */
          size_t kept = sizes[i] < size ? sizes[i] : size;
          if (kept > 0 && p[0] != tags[i]) {
            say("FAIL churn: realloc lost the content\n");
            _exit(4);
          }
        }
        blocks[i] = p;
        break;
      }
      default:
        free(blocks[i]);
        blocks[i] = NULL;
        break;
    }
    if (blocks[i] == NULL) {
      sizes[i] = 0;
    } else {
      sizes[i] = size;
      tags[i] = (unsigned char)r;
      fill(blocks[i], size, tags[i]);
    }
    ops++;
  }
  for (int i = 0; i < SLOTS; i++) free(blocks[i]);
  atomic_fetch_add(&churn_ops, ops);
  return NULL;
}

static int owner_is(const void *p) {
  const char *o = hh_allocator_of(p);
  return o != NULL && strcmp(o, owner) == 0;
}

static void *child_thread(void *arg) {
  (void)arg;
  void *blocks[32];
  for (int i = 0; i < 32; i++) {
    blocks[i] = malloc((size_t)(i + 1) * 1024);
    if (blocks[i] == NULL || !owner_is(blocks[i])) return (void *)1;
    fill(blocks[i], (size_t)(i + 1) * 1024, (unsigned char)i);
  }
  for (int i = 0; i < 32; i++) {
    if (!intact(blocks[i], (size_t)(i + 1) * 1024, (unsigned char)i)) return (void *)2;
    free(blocks[i]);
  }
  void *big = malloc(300 * 1024);
  sink = big;
  free(big);
  return NULL;
}

/* The child: exit status 0 when all is well, a distinct code otherwise. */
static void child(int n) {
  unsigned long long before[HH_CALL_COUNT], after[HH_CALL_COUNT];
  int counting = hh_thread_counts(before, HH_CALL_COUNT) == HH_CALL_COUNT;
  size_t size = 100 + (size_t)n * 13;
  unsigned char *p = malloc(size);
  if (p == NULL) _exit(10);
  if (!owner_is(p)) _exit(11);
  fill(p, size, 0x33);
  unsigned char *q = realloc(p, size * 40);
  if (q == NULL) _exit(12);
  if (!intact(q, size, 0x33)) _exit(13);
  free(q);
  if (counting) {
    /* The child's thread-local counts continue the forking thread's. */
    if (hh_thread_counts(after, HH_CALL_COUNT) != HH_CALL_COUNT) _exit(14);
    if (after[HH_CALL_MALLOC] - before[HH_CALL_MALLOC] != 1 ||
        after[HH_CALL_REALLOC] - before[HH_CALL_REALLOC] != 1 ||
        after[HH_CALL_FREE] - before[HH_CALL_FREE] != 1)
      _exit(15);
  }
  pthread_t t;
  if (pthread_create(&t, NULL, child_thread, NULL) != 0) _exit(16);
  void *ret;
  if (pthread_join(t, &ret) != 0) _exit(17);
  if (ret != NULL) _exit(17 + (int)(intptr_t)ret); /* 18, 19 */
  _exit(0);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s OWNER [FORKS]\n", argv[0]);
    return 2;
  }
  owner = argv[1];
  int forks = argc > 2 ? atoi(argv[2]) : 200;
  if (hh_allocator_of == NULL) {
    printf("FAIL no heaphook library is preloaded\n0 passed, 1 failed\n");
    return 1;
  }
  signal(SIGALRM, watchdog);
  alarm(WATCHDOG_SECONDS);
  setvbuf(stdout, NULL, _IONBF, 0);

  int passed = 0, failed = 0;
  pthread_t threads[CHURNERS];
  for (int i = 0; i < CHURNERS; i++) {
    if (pthread_create(&threads[i], NULL, churn, (void *)(uintptr_t)(i + 1)) != 0) {
      printf("FAIL pthread_create\n0 passed, 1 failed\n");
      return 1;
    }
  }
  int bad_children = 0;
  for (int n = 0; n < forks; n++) {
    /* The parent allocates around the fork too. */
    void *around = malloc(64 + (size_t)n);
    pid_t pid = fork();
    if (pid < 0) {
      printf("FAIL fork %d: %s\n", n, strerror(errno));
      failed++;
      break;
    }
    if (pid == 0) child(n);
    current_child = pid;
    int status;
    pid_t w;
    while ((w = waitpid(pid, &status, 0)) < 0 && errno == EINTR) {
    }
    current_child = 0;
    forks_done = n + 1;
    if (w != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      if (bad_children++ < 10) {
        if (WIFSIGNALED(status))
          printf("FAIL child %d (fork %d) killed by signal %d\n", (int)pid, n, WTERMSIG(status));
        else
          printf("FAIL child %d (fork %d) exit status %d\n", (int)pid, n, WEXITSTATUS(status));
      }
    }
    free(around);
  }
  if (bad_children == 0) {
    passed++;
    printf("ok %d children forked while %d threads allocated all exited 0\n", forks, CHURNERS);
  } else {
    failed++;
    printf("FAIL %d of %d children failed\n", bad_children, forks);
  }
  atomic_store(&stop, true);
  for (int i = 0; i < CHURNERS; i++) pthread_join(threads[i], NULL);
  unsigned long ops = atomic_load(&churn_ops);
  if (ops > 0) {
    passed++;
    printf("ok the churn threads ran %lu operations\n", ops);
  } else {
    failed++;
    printf("FAIL the churn threads did nothing\n");
  }
  void *p = malloc(1000);
  if (p != NULL && owner_is(p)) {
    passed++;
  } else {
    failed++;
    printf("FAIL the parent's blocks are not %s's after the forks\n", owner);
  }
  free(p);
  alarm(0);
  printf("%d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
