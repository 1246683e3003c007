/* fork while other threads are in the dynamic linker because of the tracer:
 *   hh_trace_fork_loader FORKS
 * Three threads allocate from frames of ever-changing depth (alloca), so
 * that each allocation misses the tracer's stack cache: libunwind walks the
 * stack and the tracer reads the loader's counters, both through
 * dl_iterate_phdr, which holds glibc's loader lock. The main thread forks
 * FORKS times; each child allocates (its tracer scans the modules of its
 * new trace) and _exits. glibc 2.36 does not reset that lock in the child,
 * nor libunwind its own, so a fork while a thread of the tracer held one
 * left the child hung at its first unwind or scan (with its signals
 * blocked: libunwind blocks them while it holds its lock). A child that
 * has not exited after 10 s is killed and fails the test. */
#include <alloca.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

__attribute__((noinline)) static void allocate(size_t n) {
  void *volatile p = malloc(n);
  free(p);
}

__attribute__((noinline)) static void at_depth(unsigned pad, size_t n) {
  char *frame = alloca(16 + pad);
  frame[0] = (char)pad;
  __asm__ volatile("" : : "r"(frame) : "memory");
  allocate(n);
}

static void *churn(void *arg) {
  uint32_t x = (uint32_t)(uintptr_t)arg * 2654435761u + 1;
  for (;;) {
    x = x * 1103515245u + 12345u;
    at_depth((x >> 8) % 4096, 16 + (x >> 20) % 512);
  }
  return NULL;
}

int main(int argc, char **argv) {
  int forks = argc > 1 ? atoi(argv[1]) : 100;
  for (uintptr_t i = 0; i < 3; i++) {
    pthread_t t;
    if (pthread_create(&t, NULL, churn, (void *)(i + 1)) != 0) return 1;
  }
  usleep(20 * 1000);
  for (int i = 0; i < forks; i++) {
    pid_t p = fork();
    if (p < 0) {
      perror("fork");
      return 1;
    }
    if (p == 0) {
      at_depth((unsigned)i, 100);
      _exit(0);
    }
    int st = 0;
    pid_t w = 0;
    for (int ms = 0; ms < 10000 && (w = waitpid(p, &st, WNOHANG)) == 0; ms++) usleep(1000);
    if (w == 0) {
      kill(p, SIGKILL);
      waitpid(p, &st, 0);
      printf("child %d of fork %d hung (killed after 10 s)\n", (int)p, i);
      return 1;
    }
    if (w != p) {
      perror("waitpid");
      return 1;
    }
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
      printf("child %d of fork %d: %s %d\n", (int)p, i, WIFSIGNALED(st) ? "killed by signal" : "exit status",
             WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
      return 1;
    }
  }
  printf("%d forks by %d\n", forks, (int)getpid());
  return 0;
}
