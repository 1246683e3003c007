/* A stop-the-world collector, as Boehm's garbage collector stops threads:
 * SIGUSR1's handler says it has stopped (sem_post) and waits until the
 * collector lets it go; the collector waits for each thread's word.
 *
 * Thread b stops inside dl_iterate_phdr, holding glibc's loader lock.
 * Thread a then allocates from a call stack new to the tracer, whose
 * capture calls dl_iterate_phdr and waits for that lock; once a sleeps in
 * the kernel (futex), main stops it with SIGUSR1 and waits up to 60 s for
 * its word. Prints "a stopped" (status 0), else "a never stopped"
 * (status 1), or "a never waited" (status 2) when a was not seen in
 * futex within 20 s: the run would have checked nothing (a signalled
 * before its capture waited, or a capture that no longer waits there).
 * The tracer must not hold the signals back while it waits for a lock
 * that a stopped thread may hold: when it did so in every capture of a
 * program that had installed a handler (2026-11-28, reverted), a never
 * stopped, the collector waited for it and it for b, for good (found by
 * a helper's review). Without heaphook the capture is not there, and a
 * never waits (status 2).
 *
 * With argv[1] "free", a sleeps 30 ms and frees a block instead: no new
 * stack, but the tracer's RSS sample is due at that event, and it scanned
 * the modules (dl_iterate_phdr) with the signals held back: a never
 * stopped, under both libraries, in every run, until 2026-11-28 (found by
 * a helper's review); a buffer's hand-over scanned so too. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static sem_t stopped;
static atomic_int resume, go, a_tid;

static void on_stop(int sig) {
  (void)sig;
  sem_post(&stopped);
  while (!atomic_load(&resume)) {
    struct timespec t = {0, 1000000};
    nanosleep(&t, NULL);
  }
}

/* b's callback stops b there, the loader's lock held. */
static int stop_here(struct dl_phdr_info *info, size_t size, void *arg) {
  (void)info;
  (void)size;
  int *once = arg;
  if (*once == 0) {
    *once = 1;
    syscall(SYS_tgkill, getpid(), (int)syscall(SYS_gettid), SIGUSR1);
  }
  return 1;
}

static void *b_main(void *arg) {
  (void)arg;
  int once = 0;
  dl_iterate_phdr(stop_here, &once);
  return NULL;
}

/* A call stack the tracer has not seen. */
__attribute__((noinline)) static void after(void) {
  void *volatile p = malloc(77);
  free(p);
  __asm__ volatile("" ::: "memory");
}

static int at_free; /* argv[1] "free" */

static void *a_main(void *arg) {
  (void)arg;
  void *volatile p = malloc(5);
  if (!at_free) free(p);
  atomic_store(&a_tid, (int)syscall(SYS_gettid));
  while (!atomic_load(&go)) {
  }
  if (at_free) {
    struct timespec d = {0, 30 * 1000 * 1000};
    while (nanosleep(&d, &d) != 0) {
    }
    free(p); /* no stack taken; the RSS sample is due */
  } else {
    after();
  }
  return NULL;
}

/* Whether thread tid sleeps in futex (/proc's "NR args...": its number). */
static int in_futex(int tid) {
  char path[64], buf[64] = {0}, want[16];
  snprintf(path, sizeof path, "/proc/self/task/%d/syscall", tid);
  int fd = open(path, O_RDONLY);
  if (fd < 0) return 0;
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  int w = snprintf(want, sizeof want, "%d ", (int)SYS_futex);
  return n > w && strncmp(buf, want, (size_t)w) == 0;
}

int main(int argc, char **argv) {
  at_free = argc > 1 && strcmp(argv[1], "free") == 0;
  sem_init(&stopped, 0, 0);
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_stop;
  sa.sa_flags = SA_RESTART;
  sigaction(SIGUSR1, &sa, NULL);
  pthread_t a, b;
  pthread_create(&a, NULL, a_main, NULL);
  while (!atomic_load(&a_tid)) {
  }
  pthread_create(&b, NULL, b_main, NULL);
  sem_wait(&stopped); /* b stopped, the loader's lock held */
  atomic_store(&go, 1);
  /* a waits for the lock in its capture of after()'s stack, or at its free */
  int waited = 0;
  for (int i = 0; i < 20000 && !(waited = in_futex(atomic_load(&a_tid))); i++) usleep(1000);
  if (!waited) {
    printf("a never waited\n");
    fflush(stdout);
    _exit(2);
  }
  pthread_kill(a, SIGUSR1);
  struct timespec t;
  clock_gettime(CLOCK_REALTIME, &t);
  t.tv_sec += 60;
  int ok = sem_timedwait(&stopped, &t) == 0;
  atomic_store(&resume, 1);
  printf(ok ? "a stopped\n" : "a never stopped\n");
  fflush(stdout);
  if (!ok) _exit(1);
  pthread_join(b, NULL);
  pthread_join(a, NULL);
  return 0;
}
