/* double_free free|realloc: frees a block of 40 bytes, then frees it again
 * (or reallocs it); prints "survived" if the process goes on. The preload
 * tests check that heaphook's allocator says so and aborts. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
  void *p = malloc(40), *keep = malloc(40);
  free(p);
  if (argc > 1 && strcmp(argv[1], "realloc") == 0)
    p = realloc(p, 100);
  else
    free(p);
  puts("survived");
  free(keep);
  return 0;
}
