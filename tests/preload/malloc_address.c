/* preload.own_allocator: a program built without PIE that takes malloc's
 * address, as python3 does: the loader gives it a stub in its PLT as
 * malloc's address, listed as undefined, and its calls go on to the first
 * library that defines malloc. Prints "ok". */
#include <stdio.h>
#include <stdlib.h>

void *(*volatile allocate)(size_t);

int main(void) {
  allocate = malloc; /* (in code built without PIE: the PLT stub's address) */
  void *p = allocate(10);
  free(p);
  puts(p != NULL ? "ok" : "malloc failed");
  return p == NULL;
}
