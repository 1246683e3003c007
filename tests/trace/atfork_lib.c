/* A library whose constructor registers fork handlers that allocate (the
 * prepare handler mallocs, the others free) and mark (hh_marker):
 * registered before heaphook's (a library the program links runs its
 * constructor first), its prepare handler runs after the tracer's, and its
 * parent and child handlers before the tracer's, which holds the tracer's
 * locks meanwhile. */
#include <pthread.h>
#include <stdlib.h>

#include "heaphook/heaphook.h"

static void *keep;
__attribute__((noinline)) static void prepare(void) {
  keep = malloc(123);
  HH_MARKER("atfork prepare");
}
__attribute__((noinline)) static void parent(void) {
  HH_MARKER("atfork parent");
  free(keep);
}
__attribute__((noinline)) static void child(void) {
  HH_MARKER("atfork child");
  free(keep);
}
__attribute__((constructor)) static void init(void) { pthread_atfork(prepare, parent, child); }
__attribute__((visibility("default"))) void atfork_lib_linked(void) {}
