/* Linked with abort_early_lib.c, whose constructor aborts with a handler:
 * prints "handler ran" then "main", status 0 (preload.abort_early). */
#include <stdio.h>

int main(void) {
  puts("main");
  return 0;
}
