/* stack_oom K MB: 2^K distinct call stacks (K levels of A or B), made
 * twice (phase 1: malloc(16) under each, phase 2: malloc(17) under the
 * same stacks), after the address space was limited to what the program
 * uses plus MB MiB, so that the tracer's table of stacks cannot grow to
 * hold them all. Prints nothing. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>

#define NI __attribute__((noinline))
static volatile int sink;
NI static void leaf(size_t n) {
  free(malloc(n));
  sink++;
}
NI static void a(int k, unsigned i, size_t n);
NI static void b(int k, unsigned i, size_t n);
NI static void step(int k, unsigned i, size_t n) {
  if (k == 0)
    leaf(n);
  else if (i & 1)
    a(k - 1, i >> 1, n);
  else
    b(k - 1, i >> 1, n);
  sink++;
}
NI static void a(int k, unsigned i, size_t n) {
  step(k, i, n);
  sink++;
}
NI static void b(int k, unsigned i, size_t n) {
  step(k, i, n);
  sink++;
}

int main(int argc, char **argv) {
  if (argc != 3) return 2;
  int k = atoi(argv[1]);
  long extra = atol(argv[2]);
  for (int i = 0; i < 400000; i++) leaf(8); /* the tracer's buffers in use */
  FILE *f = fopen("/proc/self/statm", "r");
  long pages = 0;
  if (f == NULL || fscanf(f, "%ld", &pages) != 1) return 1;
  fclose(f);
  rlim_t limit = (rlim_t)pages * 4096 + ((rlim_t)extra << 20);
  struct rlimit rl = {limit, limit};
  if (setrlimit(RLIMIT_AS, &rl) != 0) return 1;
  for (int phase = 0; phase < 2; phase++)
    for (unsigned i = 0; i < (1u << k); i++) step(k, i, 16 + (size_t)phase);
  return 0;
}
