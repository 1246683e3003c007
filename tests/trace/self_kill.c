/* A program that ends by a signal it sends itself, as Python does after an
 * uncaught KeyboardInterrupt (it sets SIGINT's action back to the default,
 * then kill(getpid(), SIGINT)), and as shells and programs that clean up
 * on a signal, then re-raise it. A worker thread makes 300 allocations of
 * 50 bytes, frees them and waits for good; then main makes 500 allocations
 * and frees of 100 bytes in before_end and keeps one block of 777 bytes,
 * and ends as MODE says:
 *   kill     signal(SIGINT, SIG_DFL); kill(getpid(), SIGINT)
 *   raise    raise(SIGTERM)
 *   group    setpgid(0, 0); kill(0, SIGUSR1) (its own process group)
 *   abort    abort() (as C++'s std::terminate calls it)
 *   blocked  SIGTERM blocked; raise(SIGTERM), which only pends; then
 *            sigwait takes it, 10 allocations of 200 bytes, exit 0
 *   handled  SIGUSR2 handled; raise(SIGUSR2), then 10 allocations of 200
 *            bytes, exit 0
 *   init     run as the first process of a PID namespace (a container's
 *            program), where the kernel drops the signals it sends itself
 *            with the default action: kill(getpid(), SIGTERM) and
 *            raise(SIGINT) return, then 10 allocations of 200 bytes, exit 0
 *   loop     SIGUSR2 handled; getppid() marks the start, 100 raise(SIGUSR2)
 *            and 100 kill(getpid(), SIGUSR2), getppid() marks the end;
 *            exit 0 (the wrappers' system calls, seen by strace)
 *   stopped  a thread holds the loader's lock (in a dl_iterate_phdr
 *            callback) until main has called abort() and waits for that
 *            lock in the trace's end, then sends main SIGUSR1, whose
 *            handler calls exit(3): the end is left there (a program's
 *            timer or watchdog whose handler exits); status 3
 *   self_kill MODE */
#define _GNU_SOURCE
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void *volatile keep;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t never = PTHREAD_COND_INITIALIZER;
static int worker_done;

static void *worker(void *arg) {
  (void)arg;
  void *p[300];
  for (int i = 0; i < 300; i++) p[i] = malloc(50);
  for (int i = 0; i < 300; i++) free(p[i]);
  pthread_mutex_lock(&lock);
  worker_done = 1;
  pthread_cond_broadcast(&never);
  for (;;) pthread_cond_wait(&never, &lock);
  return NULL;
}

static void before_end(void) {
  for (int i = 0; i < 500; i++) {
    keep = malloc(100);
    free(keep);
  }
  keep = malloc(777);
}

static void after_signal(void) {
  for (int i = 0; i < 10; i++) {
    void *volatile p = malloc(200);
    free(p);
  }
}

static void on_usr2(int sig) { (void)sig; }

static void on_usr1_exit(int sig) {
  (void)sig;
  exit(3);
}

static pthread_t main_thread;
static pid_t main_tid;
static atomic_int holding, aborting;

/* Whether thread TID waits in futex (system call 202 on x86-64, 98 on
 * aarch64): /proc/self/task/TID/syscall starts with its number. */
static int waits_in_futex(pid_t tid) {
  char path[64], buf[32] = {0};
  snprintf(path, sizeof path, "/proc/self/task/%d/syscall", (int)tid);
  int fd = open(path, O_RDONLY);
  if (fd < 0) return 0;
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return 0;
#if defined(__x86_64__)
  return strncmp(buf, "202 ", 4) == 0;
#else
  return strncmp(buf, "98 ", 3) == 0;
#endif
}

static int hold_loader(struct dl_phdr_info *info, size_t size, void *arg) {
  (void)info, (void)size, (void)arg;
  atomic_store(&holding, 1);
  while (!atomic_load(&aborting)) sched_yield();
  while (!waits_in_futex(main_tid)) sched_yield();
  pthread_kill(main_thread, SIGUSR1);
  for (;;) pause();
  return 1;
}

static void *holder(void *arg) {
  (void)arg;
  dl_iterate_phdr(hold_loader, NULL);
  return NULL;
}

int main(int argc, char **argv) {
  if (argc != 2) return 2;
  const char *mode = argv[1];
  pthread_t t;
  if (pthread_create(&t, NULL, worker, NULL) != 0) return 1;
  pthread_mutex_lock(&lock);
  while (!worker_done) pthread_cond_wait(&never, &lock);
  pthread_mutex_unlock(&lock);
  before_end();
  if (strcmp(mode, "kill") == 0) {
    signal(SIGINT, SIG_DFL);
    kill(getpid(), SIGINT);
  } else if (strcmp(mode, "raise") == 0) {
    raise(SIGTERM);
  } else if (strcmp(mode, "group") == 0) {
    if (setpgid(0, 0) != 0) return 1;
    kill(0, SIGUSR1);
  } else if (strcmp(mode, "abort") == 0) {
    abort();
  } else if (strcmp(mode, "blocked") == 0) {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    if (raise(SIGTERM) != 0) return 1;
    int sig = 0;
    if (sigwait(&set, &sig) != 0 || sig != SIGTERM) return 1;
    after_signal();
    return 0;
  } else if (strcmp(mode, "init") == 0) {
    if (getpid() != 1) return 3;
    kill(getpid(), SIGTERM);
    raise(SIGINT);
    after_signal();
    return 0;
  } else if (strcmp(mode, "stopped") == 0) {
    signal(SIGUSR1, on_usr1_exit);
    main_thread = pthread_self();
    main_tid = gettid();
    pthread_t h;
    if (pthread_create(&h, NULL, holder, NULL) != 0) return 1;
    while (!atomic_load(&holding)) sched_yield();
    atomic_store(&aborting, 1);
    abort();
  } else if (strcmp(mode, "loop") == 0) {
    signal(SIGUSR2, on_usr2);
    getppid();
    for (int i = 0; i < 100; i++)
      if (raise(SIGUSR2) != 0) return 1;
    pid_t self = getpid();
    for (int i = 0; i < 100; i++)
      if (kill(self, SIGUSR2) != 0) return 1;
    getppid();
    return 0;
  } else if (strcmp(mode, "handled") == 0) {
    signal(SIGUSR2, on_usr2);
    if (raise(SIGUSR2) != 0) return 1;
    after_signal();
    return 0;
  } else {
    return 2;
  }
  fprintf(stderr, "self_kill %s: still running after the signal\n", mode);
  return 1;
}
