/* A library whose constructor registers fork handlers that allocate (the
 * prepare handler mallocs, the others free): registered before heaphook's
 * (a library the program links runs its constructor first), its prepare
 * handler runs after the tracer's, which holds the tracer's locks then. */
#include <pthread.h>
#include <stdlib.h>

static void *keep;
__attribute__((noinline)) static void prepare(void) { keep = malloc(123); }
__attribute__((noinline)) static void parent(void) { free(keep); }
__attribute__((noinline)) static void child(void) { free(keep); }
__attribute__((constructor)) static void init(void) { pthread_atfork(prepare, parent, child); }
__attribute__((visibility("default"))) void atfork_lib_linked(void) {}
