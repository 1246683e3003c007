/* A plugin of dl_reuse.c; dl_bravo.c is the same code under other names. */
#include <stdlib.h>

__attribute__((noinline)) void *alpha_alloc(size_t n) { return malloc(n); }
__attribute__((visibility("default"))) void *work(size_t n) { return alpha_alloc(n); }
