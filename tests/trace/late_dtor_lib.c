/* A library whose destructor frees what it allocated while the program
 * ran, and allocates once more: the program links it, so the loader runs
 * its destructor after the preloaded heaphook's (late_dtor_main.c). */
#include <stdlib.h>
#include <string.h>

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

__attribute__((destructor, noinline)) static void late_dtor_fini(void) {
  free(cache);
  cache = NULL;
  late_dtor_fini_tail();
}
