/* A plug-in whose initial-exec thread-local data (what code under malloc
 * must use, STYLE.md) is larger than the room glibc keeps for libraries
 * loaded at run time: dlopen refuses it, and preload.config_errors checks
 * that heaphook's message says what to do. Nothing here runs. */
#include <stddef.h>

static __thread char per_thread[256 << 10] __attribute__((tls_model("initial-exec")));

__attribute__((visibility("default"))) const void *hh_allocator_get(void) { return per_thread; }
