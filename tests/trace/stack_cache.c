/* Six threads of 8 MiB stacks start and end at once; 300 ms later main
 * joins them. glibc keeps 40 MiB of ended threads' stacks for new ones:
 * the sixth join goes past it, and glibc frees the oldest stacks' DTVs,
 * holding the lock of its stack cache, which pthread_create takes. Those
 * frees are the program's first events in 300 ms: the tracer's writer
 * thread, due from ~0.1 s into the run, was started in them and waited for
 * that lock for good. Prints "stack cache done". */
#include <pthread.h>
#include <stdio.h>
#include <time.h>

static void *ends(void *arg) { return arg; }

int main(void) {
  pthread_attr_t attr;
  pthread_t t[6];
  if (pthread_attr_init(&attr) != 0 || pthread_attr_setstacksize(&attr, 8u << 20) != 0) return 1;
  for (int i = 0; i < 6; i++)
    if (pthread_create(&t[i], &attr, ends, NULL) != 0) return 1;
  struct timespec pause = {0, 300 * 1000 * 1000};
  while (nanosleep(&pause, &pause) != 0) {
  }
  for (int i = 0; i < 6; i++) pthread_join(t[i], NULL);
  printf("stack cache done\n");
  return 0;
}
