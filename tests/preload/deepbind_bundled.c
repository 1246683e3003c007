/* A library with an allocator of its own (a bump allocator over a static
 * arena; free does nothing), which it opens with RTLD_DEEPBIND so that its
 * own calls keep it: deepbind_prog.c checks they still do under heaphook. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

static _Alignas(16) char arena[1 << 16];
static size_t used;

void *malloc(size_t n) {
  n = (n + 15) & ~(size_t)15;
  if (n > sizeof arena - used) return NULL;
  void *p = arena + used;
  used += n;
  return p;
}
void free(void *p) { (void)p; }
void *calloc(size_t n, size_t size) {
  void *p = malloc(n * size);
  if (p != NULL) memset(p, 0, n * size);
  return p;
}
void *realloc(void *p, size_t n) {
  void *q = malloc(n);
  if (q != NULL && p != NULL) memcpy(q, p, n);
  return q;
}

void *bundled_alloc(size_t n) { return malloc(n); }
void bundled_free(void *p) { free(p); }
int bundled_owns(const void *p) { return (const char *)p >= arena && (const char *)p < arena + sizeof arena; }
