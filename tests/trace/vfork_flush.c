/* A vfork child that fills its thread's buffer before the tracer's writer
 * thread exists: at once, before the writer starts (~0.1 s into the run),
 * main vforks; the child makes 100,000 allocations (from child_churn, more
 * than a buffer holds, so the buffer is handed over in the child) and
 * _exits; then main makes 300,000 (from parent_churn) and prints
 * "vfork done". The child shares the parent's memory: a writer thread it
 * started ended with it, while the parent took it to be running. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

__attribute__((noinline)) static void child_churn(void) {
  for (int i = 0; i < 100000; i++) free(malloc(16 + (size_t)(i % 64)));
}

__attribute__((noinline)) static void parent_churn(void) {
  for (int i = 0; i < 300000; i++) free(malloc(16 + (size_t)(i % 64)));
}

int main(void) {
  pid_t p = vfork();
  if (p < 0) return 1;
  if (p == 0) {
    child_churn();
    _exit(0);
  }
  int status;
  if (waitpid(p, &status, 0) != p || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return 1;
  parent_churn();
  puts("vfork done");
  return 0;
}
