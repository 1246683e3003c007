/* A library whose destructor frees what it allocated while the program
 * ran, and allocates once more: the program links it, so the loader runs
 * its destructor after the preloaded heaphook's (late_dtor_main.c). With
 * LATE_DTOR_MODE=fork the destructor then forks, and the child allocates
 * and goes on exiting; with LATE_DTOR_MODE=quick_exit it ends the process
 * with quick_exit(0). */
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static char *cache;

__attribute__((visibility("default"), noinline)) void late_dtor_use(void) {
  if (cache == NULL) cache = malloc(1000);
  if (cache != NULL) memset(cache, 1, 1000);
}

__attribute__((noinline)) static void late_dtor_fini_tail(void) {
  char *p = malloc(77);
  if (p != NULL) p[0] = 0;
  free(p);
}

__attribute__((noinline)) static void late_dtor_child(void) {
  char *p = malloc(55);
  if (p != NULL) p[0] = 0;
  free(p);
}

__attribute__((destructor, noinline)) static void late_dtor_fini(void) {
  free(cache);
  cache = NULL;
  late_dtor_fini_tail();
  const char *mode = getenv("LATE_DTOR_MODE");
  if (mode != NULL && strcmp(mode, "fork") == 0) {
    pid_t pid = fork();
    if (pid == 0) {
      late_dtor_child();
      return;
    }
    if (pid > 0) waitpid(pid, NULL, 0);
  } else if (mode != NULL && strcmp(mode, "quick_exit") == 0) {
    quick_exit(0);
  }
}
