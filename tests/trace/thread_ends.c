/* Programs whose threads end in the less travelled ways (argv[1]):
 *
 *   pthread_exit  main allocates 1,000 times (in_main()) and keeps 100 blocks
 *                 (keep()), starts two threads that allocate 50,000 times
 *                 each (worker()) and ends with pthread_exit: the process
 *                 ends, status 0, when they do (the tracer's writer thread
 *                 kept it alive forever). Its atexit handler frees the kept
 *                 blocks and prints whether SIGTERM is blocked: it runs in
 *                 the last thread, which was the tracer's writer (its frees
 *                 were not recorded, all signals blocked)
 *   cancel        60 rounds of two threads that allocate in a loop with
 *                 pthread_testcancel, cancelled and joined (a thread
 *                 cancelled inside the tracer's write held its lock; its
 *                 exit handler and the writer then spun on it forever)
 *   exit_race     four threads allocate 100,000 times; the second calls
 *                 exit(3) while the others return (the exit's flush encoded
 *                 a buffer that an ending thread gave back to the kernel:
 *                 "cannot write the trace file (Invalid argument)")
 *   quick_exit    1,000 allocations (in_main()), then quick_exit(4) (glibc's
 *                 quick_exit calls its internal _exit: the trace was lost)
 *   exit_both     main allocates 1,000 times (in_main()), a thread 1,000
 *                 times (worker()); they meet and both call exit(5) at once.
 *                 glibc 2.36 lets both run the exit handlers, and the first
 *                 to find none left flushes stdio and ends the process, even
 *                 while the other still runs one: the tracer's stop, which
 *                 left no chunk and no END, every time
 *   exit_return   the same, but main returns 5 from main (glibc's start-up
 *                 then calls exit(5) itself) while the thread calls exit(5)
 *   exit__exit    the same, but the thread calls _exit(5)
 *   _exit_both    the same, but both call _exit(5) (these two finished the
 *                 trace in both threads: every event was in it twice)
 *   _exit_stdio   main allocates 1,000 times (in_main()) and holds stdout's
 *                 lock (flockfile) while a thread's fflush(NULL) waits for
 *                 it holding stdio's list lock (as where a signal handler
 *                 calls _exit in a printf); then _exit(5). _exit takes no
 *                 stdio lock: heaphook's end at _exit waited for the list
 *                 lock for good
 *   _exit_list_locked
 *                 main allocates 1,000 times (in_main()); a thread takes
 *                 stdio's list lock (as a fopen that a signal handler
 *                 calling _exit interrupted), main calls exit(5), and once
 *                 main waits for that lock the thread calls _exit(5)
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

__attribute__((noinline)) static void in_main(void) {
  for (int i = 0; i < 1000; i++) free(malloc(100 + i % 50));
}

__attribute__((noinline)) static void worker(long n) {
  for (long i = 0; i < n; i++) free(malloc(16 + i % 300));
}

static void *worker_main(void *arg) {
  worker((long)arg);
  return NULL;
}

static void *cancelled_main(void *arg) {
  (void)arg;
  for (;;) {
    for (int i = 0; i < 100; i++) free(malloc(32 + (i * 97) % 4000));
    pthread_testcancel();
  }
  return NULL;
}

static void *racer_main(void *arg) {
  worker(100000);
  if ((long)arg == 1) exit(3);
  return NULL;
}

static pthread_barrier_t meet;

static void *exiting_main(void *arg) {
  const char *how = arg;
  worker(1000);
  pthread_barrier_wait(&meet);
  if (strcmp(how, "exit__exit") == 0 || strcmp(how, "_exit_both") == 0) _exit(5);
  exit(5);
}

static void quick_handler(void) { printf("at_quick_exit handler\n"); }

static void *kept[100];
__attribute__((noinline)) static void keep(void) {
  for (int i = 0; i < 100; i++) kept[i] = malloc(4096);
}
static void exit_handler(void) {
  for (int i = 0; i < 100; i++) free(kept[i]);
  sigset_t now;
  pthread_sigmask(SIG_BLOCK, NULL, &now);
  printf("exit handler: SIGTERM %s\n", sigismember(&now, SIGTERM) ? "blocked" : "not blocked");
}

static atomic_int flusher_tid;
static atomic_int flush_now;

static void *flusher_main(void *arg) {
  (void)arg;
  atomic_store(&flusher_tid, (int)syscall(SYS_gettid));
  while (!atomic_load(&flush_now)) sched_yield();
  fflush(NULL); /* stdio's list lock, then each stream's lock */
  return NULL;
}

/* Until thread tid waits in the kernel for a lock (futex, as its
 * /proc/self/task/TID/syscall says). */
static void wait_in_futex(int tid) {
  char path[64], line[32], futex[16];
  snprintf(path, sizeof path, "/proc/self/task/%d/syscall", tid);
  int len = snprintf(futex, sizeof futex, "%d ", (int)SYS_futex);
  for (;;) {
    int fd = open(path, O_RDONLY);
    ssize_t n = fd >= 0 ? read(fd, line, sizeof line - 1) : -1;
    if (fd >= 0) close(fd);
    if (n > 0 && strncmp(line, futex, (size_t)len) == 0) return;
    sched_yield();
  }
}

extern void _IO_list_lock(void);
static atomic_int main_tid, list_locked;

static void *list_locker_main(void *arg) {
  (void)arg;
  _IO_list_lock();
  atomic_store(&list_locked, 1);
  wait_in_futex(atomic_load(&main_tid));
  _exit(5);
}

int main(int argc, char **argv) {
  const char *how = argc == 2 ? argv[1] : "";
  setvbuf(stdout, NULL, _IONBF, 0);
  if (strcmp(how, "pthread_exit") == 0) {
    atexit(exit_handler);
    in_main();
    keep();
    pthread_t t[2];
    for (long i = 0; i < 2; i++) pthread_create(&t[i], NULL, worker_main, (void *)50000L);
    printf("main ends by pthread_exit\n");
    pthread_exit(NULL);
  }
  if (strcmp(how, "cancel") == 0) {
    for (int round = 0; round < 60; round++) {
      pthread_t t[2];
      for (int j = 0; j < 2; j++) pthread_create(&t[j], NULL, cancelled_main, NULL);
      usleep(1000 + (unsigned)(round * 7919) % 20000);
      for (int j = 0; j < 2; j++) pthread_cancel(t[j]);
      for (int j = 0; j < 2; j++) {
        void *res;
        pthread_join(t[j], &res);
        if (res != PTHREAD_CANCELED) printf("thread not cancelled\n");
      }
    }
    printf("60 rounds cancelled\n");
    return 0;
  }
  if (strcmp(how, "exit_race") == 0) {
    pthread_t t[4];
    for (long i = 0; i < 4; i++) pthread_create(&t[i], NULL, racer_main, (void *)i);
    for (int i = 0; i < 4; i++) pthread_join(t[i], NULL);
    return 0; /* not reached: thread 1's exit(3) ends the process while main waits */
  }
  if (strcmp(how, "exit_both") == 0 || strcmp(how, "exit_return") == 0 || strcmp(how, "exit__exit") == 0 ||
      strcmp(how, "_exit_both") == 0) {
    pthread_t t;
    pthread_barrier_init(&meet, NULL, 2);
    pthread_create(&t, NULL, exiting_main, (void *)how);
    in_main();
    pthread_barrier_wait(&meet);
    if (strcmp(how, "exit_return") == 0) return 5;
    if (strcmp(how, "_exit_both") == 0) _exit(5);
    exit(5);
  }
  if (strcmp(how, "_exit_stdio") == 0) {
    in_main();
    pthread_t t;
    pthread_create(&t, NULL, flusher_main, NULL);
    while (atomic_load(&flusher_tid) == 0) sched_yield();
    flockfile(stdout);
    atomic_store(&flush_now, 1);
    wait_in_futex(atomic_load(&flusher_tid));
    _exit(5);
  }
  if (strcmp(how, "_exit_list_locked") == 0) {
    in_main();
    atomic_store(&main_tid, (int)syscall(SYS_gettid));
    pthread_t t;
    pthread_create(&t, NULL, list_locker_main, NULL);
    while (!atomic_load(&list_locked)) sched_yield();
    exit(5);
  }
  if (strcmp(how, "quick_exit") == 0) {
    at_quick_exit(quick_handler);
    in_main();
    quick_exit(4);
  }
  fprintf(stderr,
          "usage: thread_ends "
          "pthread_exit|cancel|exit_race|quick_exit|exit_both|exit_return|exit__exit|_exit_both|_exit_stdio|_"
          "exit_list_locked\n");
  return 2;
}
