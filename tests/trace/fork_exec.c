/* fork and exec under the tracer.
 *   parent: 50 x malloc(111) in parent_alloc, then fork; the child makes
 *   30 x malloc(222) in child_alloc and exits; a second child makes 20 x
 *   malloc(666) in quick_child_alloc and ends by _exit; the parent waits, then execs
 *   itself with "exec", which makes 40 x malloc(333) in exec_alloc.
 *   Between the wait and the exec the parent makes 25 x malloc(444) in
 *   before_exec, tries to exec a program that does not exist (fails), makes
 *   5 x malloc(555) in after_failed_exec: all of them must reach the
 *   parent's trace although exec runs no destructors. Before those, a vfork
 *   child execs /bin/true (traced on its own, the parent's trace intact).
 *   A second thread, started before the failed exec, makes 15 x malloc(777)
 *   in worker_alloc before it, 10 x malloc(888) in worker_more between the
 *   two execs, and then waits: exec ends it with its events buffered, and
 *   they must reach the parent's trace too, each once. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void *volatile sink;

__attribute__((noinline)) static void many(size_t n, int count) {
  for (int i = 0; i < count; i++) {
    sink = malloc(n);
    free(sink);
  }
}
__attribute__((noinline)) void parent_alloc(void) { many(111, 50); }
__attribute__((noinline)) void child_alloc(void) { many(222, 30); }
__attribute__((noinline)) void exec_alloc(void) { many(333, 40); }
__attribute__((noinline)) void before_exec(void) { many(444, 25); }
__attribute__((noinline)) void after_failed_exec(void) { many(555, 5); }
__attribute__((noinline)) void quick_child_alloc(void) { many(666, 20); }
__attribute__((noinline)) void worker_alloc(void) { many(777, 15); }
__attribute__((noinline)) void worker_more(void) { many(888, 10); }

static int to_worker[2], from_worker[2];

static void *worker(void *arg) {
  (void)arg;
  char c = 'a';
  worker_alloc();
  if (write(from_worker[1], &c, 1) != 1 || read(to_worker[0], &c, 1) != 1) abort();
  worker_more();
  if (write(from_worker[1], &c, 1) != 1) abort();
  for (;;) pause();
}

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "exec") == 0) {
    exec_alloc();
    printf("exec'd %d\n", (int)getpid());
    return 0;
  }
  parent_alloc();
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    child_alloc();
    exit(0);
  }
  int st;
  waitpid(pid, &st, 0);
  printf("child %d parent %d\n", (int)pid, (int)getpid());
  fflush(stdout);
  /* A child that ends by _exit (no destructors: Python's os._exit, a
   * server's worker): its trace must still be whole. */
  pid_t q = fork();
  if (q == 0) {
    quick_child_alloc();
    _exit(0);
  }
  waitpid(q, &st, 0);
  printf("quick %d\n", (int)q);
  fflush(stdout);
  before_exec();
  /* A vfork child shares the parent's memory, closes descriptors it does not
   * pass on and execs (as gcc starts its programs): it must leave the
   * tracer's state alone (writing the parent's buffer there failed on the
   * closed trace file and stopped the parent's tracing). */
  pid_t v = vfork();
  if (v == 0) {
    for (int fd = 3; fd < 1024; fd++) close(fd);
    execl("/bin/true", "true", (char *)NULL);
    _exit(127);
  }
  if (v < 0 || waitpid(v, &st, 0) != v || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
    printf("vfork + exec of /bin/true failed\n");
    return 1;
  }
  pthread_t t;
  char c;
  if (pipe(to_worker) != 0 || pipe(from_worker) != 0 || pthread_create(&t, NULL, worker, NULL) != 0 ||
      read(from_worker[0], &c, 1) != 1) {
    printf("worker thread failed\n");
    return 1;
  }
  char *const none[] = {"does-not-exist", NULL};
  if (execv("/does-not-exist/at-all", none) == 0 || errno != ENOENT) {
    printf("exec of a missing program: errno %d, want ENOENT\n", errno);
    return 1;
  }
  if (write(to_worker[1], &c, 1) != 1 || read(from_worker[0], &c, 1) != 1) {
    printf("worker thread failed\n");
    return 1;
  }
  after_failed_exec();
  execl("/proc/self/exe", argv[0], "exec", (char *)NULL);
  perror("execl");
  return 1;
}
