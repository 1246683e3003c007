/* A small program for the preload scripts; what it does depends on argv[1]:
 *
 *   main-ran        prints "main ran" (config_errors: must never appear)
 *   usage N         N x malloc(1000) kept, then the first N/2 freed; no
 *                   stdio, so that the usage recorder's numbers differ from
 *                   a run with N = 0 by exactly these blocks
 *   blocks4k BYTES  allocates BYTES in 4 KiB blocks, writes them, frees
 *                   them; prints "pid <pid>"
 *   owner SIZE...   prints hh_allocator_of(malloc(SIZE)) for each size, one
 *                   a line ("none" when no heaphook library is loaded)
 *   cancel-pending BYTES
 *                   a thread with a pthread_cancel pending (it reaches no
 *                   cancellation point of its own) mallocs BYTES; then main
 *                   mallocs BYTES, with a 10 s alarm; prints whether the
 *                   thread returned or was cancelled, and main's result
 *   huge BYTES [mlockall]
 *                   (after mlockall(MCL_FUTURE) when asked) mallocs BYTES,
 *                   writes them, and prints the AnonHugePages line of the
 *                   mapping that holds the block, from /proc/self/smaps
 *   aslimit ROOM BYTES
 *                   limits its address space (RLIMIT_AS) to what it has
 *                   mapped and ROOM bytes more, then mallocs BYTES; prints
 *                   "malloc ok" or "malloc failed"
 *   exhaust BYTES   mallocs BYTES until malloc gives NULL (at most 100000
 *                   blocks), then 100 more times; frees them all; prints
 *                   how many blocks it got, their usable bytes, the errno
 *                   of the first NULL and how many of the 100 were NULL
 *                   with ENOMEM (no stdio before: nothing else allocates)
 *   exhaust-realloc BYTES
 *                   reallocs a malloc(1000) to BYTES; prints whether it
 *                   failed with ENOMEM and kept the block
 *   end N HOW       as usage N, then ends by HOW, with status 0 where it
 *                   can: return, exit, _exit, _Exit, quick_exit, abort,
 *                   vfork (a vfork child calls _exit(0), then main returns),
 *                   thread (another thread calls _exit(0) while main
 *                   waits), cancelled and cancelled_exit (another thread
 *                   with a cancel pending, pthread_cancel'd by main, which
 *                   joins it, calls _exit(0) or exit(0); status 5 where
 *                   the join returns), crash_handler (a write past
 *                   malloc(8000)'s end over the free block after it,
 *                   then a SIGSEGV whose handler calls _exit(0)) */
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "heaphook/heaphook.h"

static void *volatile sink;

static void *exhaust_blocks[100000];

static atomic_int cancel_sent;

static void *malloc_with_cancel_pending(void *bytes) {
  while (!atomic_load(&cancel_sent)) {
  }
  return malloc(*(size_t *)bytes);
}

static void *thread_exit(void *arg) {
  (void)arg;
  _exit(0);
}

static volatile uintptr_t nowhere;
static volatile size_t past_end = 64;

static void exit_in_handler(int sig) {
  (void)sig;
  _exit(0);
}

static void *thread_exit_cancel_pending(void *how) {
  while (!atomic_load(&cancel_sent)) {
  }
  if (strcmp(how, "cancelled_exit") == 0) exit(0);
  _exit(0);
}

/* Ends the process by how (see "end" above); returns when how is "return"
 * or a vfork child's _exit was waited for. */
static int end_by(const char *how) {
  if (strcmp(how, "exit") == 0) exit(0);
  if (strcmp(how, "_exit") == 0) _exit(0);
  if (strcmp(how, "_Exit") == 0) _Exit(0);
  if (strcmp(how, "quick_exit") == 0) quick_exit(0);
  if (strcmp(how, "abort") == 0) abort();
  if (strcmp(how, "vfork") == 0) {
    pid_t pid = vfork();
    if (pid == 0) _exit(0);
    int status;
    if (pid < 0 || waitpid(pid, &status, 0) != pid || status != 0) return 4;
  }
  if (strcmp(how, "thread") == 0) {
    pthread_t t;
    if (pthread_create(&t, NULL, thread_exit, NULL) != 0) return 4;
    for (;;) pause();
  }
  if (strcmp(how, "crash_handler") == 0) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = exit_in_handler;
    sigaction(SIGSEGV, &sa, NULL);
    char *p = malloc(8000);
    if (p == NULL) return 4;
    memset(p, 0x41, malloc_usable_size(p) + past_end);
    *(volatile int *)nowhere = 1;
    return 4;
  }
  if (strcmp(how, "cancelled") == 0 || strcmp(how, "cancelled_exit") == 0) {
    pthread_t t;
    if (pthread_create(&t, NULL, thread_exit_cancel_pending, (void *)how) != 0) return 4;
    pthread_cancel(t);
    atomic_store(&cancel_sent, 1);
    pthread_join(t, NULL);
    return 5;
  }
  return 0;
}

int main(int argc, char **argv) {
  if (argc >= 2 && strcmp(argv[1], "main-ran") == 0) {
    puts("main ran");
    return 0;
  }
  if ((argc == 3 && strcmp(argv[1], "usage") == 0) || (argc == 4 && strcmp(argv[1], "end") == 0)) {
    int n = atoi(argv[2]);
    void *blocks[64];
    if (n < 0 || n > 64) return 2;
    for (int i = 0; i < n; i++) {
      blocks[i] = malloc(1000);
      if (blocks[i] == NULL) return 3;
      memset(blocks[i], i, 1000);
      sink = blocks[i];
    }
    for (int i = 0; i < n / 2; i++) free(blocks[i]);
    return argc == 4 ? end_by(argv[3]) : 0;
  }
  if (argc == 3 && strcmp(argv[1], "blocks4k") == 0) {
    size_t total = strtoul(argv[2], NULL, 0), n = total / 4096;
    char **blocks = malloc(n * sizeof *blocks);
    if (blocks == NULL) return 3;
    for (size_t i = 0; i < n; i++) {
      blocks[i] = malloc(4096);
      if (blocks[i] == NULL) return 3;
      memset(blocks[i], (int)i, 4096);
    }
    for (size_t i = 0; i < n; i++) free(blocks[i]);
    free(blocks);
    printf("pid %d\n", (int)getpid());
    return 0;
  }
  if (argc == 3 && strcmp(argv[1], "cancel-pending") == 0) {
    size_t bytes = strtoul(argv[2], NULL, 0);
    pthread_t t;
    void *got;
    if (pthread_create(&t, NULL, malloc_with_cancel_pending, &bytes) != 0) return 2;
    pthread_cancel(t);
    atomic_store(&cancel_sent, 1);
    pthread_join(t, &got);
    alarm(10);
    void *p = malloc(bytes);
    printf("thread %s; main's malloc %s\n", got == PTHREAD_CANCELED ? "cancelled" : "returned",
           p != NULL ? "ok" : "NULL");
    return 0;
  }
  if (argc >= 3 && strcmp(argv[1], "huge") == 0) {
    if (argc == 4 && mlockall(MCL_FUTURE) != 0) return 4;
    size_t bytes = strtoul(argv[2], NULL, 0);
    char *p = malloc(bytes);
    if (p == NULL) return 3;
    memset(p, 1, bytes);
    FILE *f = fopen("/proc/self/smaps", "r");
    if (f == NULL) return 5;
    char line[256];
    int in = 0;
    while (fgets(line, sizeof line, f) != NULL) {
      unsigned long lo, hi;
      if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' ')) {
        in = (unsigned long)p >= lo && (unsigned long)p < hi;
      } else if (in && strncmp(line, "AnonHugePages:", 14) == 0) {
        fputs(line, stdout);
      }
    }
    fclose(f);
    return 0;
  }
  if (argc == 4 && strcmp(argv[1], "aslimit") == 0) {
    size_t room = strtoul(argv[2], NULL, 0), bytes = strtoul(argv[3], NULL, 0);
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long pages;
    if (f == NULL || fscanf(f, "%lu", &pages) != 1) return 5;
    fclose(f);
    struct rlimit lim = {.rlim_cur = pages * (unsigned long)sysconf(_SC_PAGESIZE) + room};
    lim.rlim_max = lim.rlim_cur;
    if (setrlimit(RLIMIT_AS, &lim) != 0) return 4;
    char *p = malloc(bytes);
    if (p != NULL) memset(p, 1, bytes);
    sink = p;
    puts(p != NULL ? "malloc ok" : "malloc failed");
    return 0;
  }
  if (argc == 3 && strcmp(argv[1], "exhaust") == 0) {
    size_t bytes = strtoul(argv[2], NULL, 0), n = 0, usable = 0,
           max = sizeof exhaust_blocks / sizeof *exhaust_blocks;
    while (n < max && (exhaust_blocks[n] = malloc(bytes)) != NULL)
      usable += malloc_usable_size(exhaust_blocks[n++]);
    int err = errno, again = 0;
    for (int i = 0; i < 100; i++) {
      errno = 0;
      void *p = malloc(bytes);
      if (p == NULL && errno == ENOMEM) again++;
      free(p);
    }
    for (size_t i = 0; i < n; i++) free(exhaust_blocks[i]);
    printf("%zu blocks of %zu usable bytes in all, then NULL with %s; %d more NULL with ENOMEM\n", n, usable,
           err == ENOMEM ? "ENOMEM" : strerror(err), again);
    return 0;
  }
  if (argc == 3 && strcmp(argv[1], "exhaust-realloc") == 0) {
    char *p = malloc(1000);
    if (p == NULL) return 3;
    memset(p, 7, 1000);
    errno = 0;
    char *q = realloc(p, strtoul(argv[2], NULL, 0));
    int err = errno;
    printf("realloc %s; block %s\n", q == NULL && err == ENOMEM ? "NULL with ENOMEM" : "did not fail",
           q == NULL && p[999] == 7 ? "kept" : "not kept");
    free(q != NULL ? q : p);
    return 0;
  }
  if (argc >= 3 && strcmp(argv[1], "owner") == 0) {
    for (int i = 2; i < argc; i++) {
      void *p = malloc(strtoul(argv[i], NULL, 0));
      sink = p;
      printf("%s\n", hh_allocator_of == NULL ? "none" : p == NULL ? "(malloc failed)" : hh_allocator_of(p));
      free(p);
    }
    return 0;
  }
  fprintf(stderr, "usage: %s main-ran | usage N | blocks4k BYTES | owner SIZE...\n", argv[0]);
  return 2;
}
