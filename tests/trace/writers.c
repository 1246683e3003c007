/* writers THREADS EACH [exit]: THREADS threads at once, each EACH times
 * free(malloc(16 + i % 64)) from churn(), then main prints how many of its
 * threads are the tracer's (named heaphook-trace): the writer and its
 * helpers, all started by then (the buffers filled many times). With
 * "exit", main then ends by pthread_exit, after starting one more thread
 * that churns as long again: the process must end when that one does. */
#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long each;

__attribute__((noinline)) static void churn(void) {
  for (long i = 0; i < each; i++) free(malloc(16 + (size_t)(i % 64)));
}

static void *worker(void *arg) {
  (void)arg;
  churn();
  return NULL;
}

static int tracer_threads(void) {
  DIR *d = opendir("/proc/self/task");
  if (d == NULL) return -1;
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.') continue;
    char path[64], comm[32] = "";
    snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
    FILE *f = fopen(path, "r");
    if (f == NULL) continue;
    if (fgets(comm, sizeof comm, f) != NULL && strcmp(comm, "heaphook-trace\n") == 0) n++;
    fclose(f);
  }
  closedir(d);
  return n;
}

int main(int argc, char **argv) {
  if (argc < 3) return 2;
  int threads = atoi(argv[1]);
  each = atol(argv[2]);
  pthread_t *t = calloc((size_t)threads, sizeof *t);
  if (t == NULL) return 1;
  for (int i = 0; i < threads; i++) pthread_create(&t[i], NULL, worker, NULL);
  for (int i = 0; i < threads; i++) pthread_join(t[i], NULL);
  free(t);
  printf("tracer threads: %d\n", tracer_threads());
  fflush(stdout);
  if (argc > 3 && strcmp(argv[3], "exit") == 0) {
    pthread_t last;
    pthread_create(&last, NULL, worker, NULL);
    pthread_exit(NULL);
  }
  return 0;
}
