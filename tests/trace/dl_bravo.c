/* A plugin of dl_reuse.c; dl_alpha.c is the same code under other names. */
#include <stdlib.h>

__attribute__((noinline)) void *bravo_alloc(size_t n) { return malloc(n); }
__attribute__((visibility("default"))) void *work(size_t n) { return bravo_alloc(n); }
