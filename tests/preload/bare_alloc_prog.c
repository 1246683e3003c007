/* preload.bare_allocator: blocks of the program's own allocator's own API
 * (bare_alloc_direct, as jemalloc's mallocx) passed to free, which the
 * README allows, under heaphook sampling or keeping bytes per block, where
 * heaphook's blocks carry a header in front. Two ways that went wrong:
 * - a block that starts a mapping (a large one): heaphook read the word in
 *   front of it, on an unmapped page, and the program died of SIGSEGV;
 * - a small block in a page that held heaphook's blocks before, a header
 *   left in front of it: heaphook took it for its own and freed the block
 *   16 bytes before it, another live block, which the allocator then
 *   handed out again.
 * usage: bare_alloc_prog large|reused */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *bare_alloc_direct(size_t size);

#define N 20000
static void *a[N];

int main(int argc, char **argv) {
  int failed = 0;
  const char *part = argc > 1 ? argv[1] : "large";
  if (strcmp(part, "large") == 0) {
    /* 1. large blocks of the allocator's own API, each starting a mapping */
    for (int i = 0; i < 20; i++) {
      char *p = bare_alloc_direct((size_t)(i + 1) << 16);
      if (p == NULL) return 2;
      p[0] = 1;
      free(p);
    }
    printf("ok: large blocks of its own freed\n");
    return 0;
  }
  if (strcmp(part, "reused") != 0) return 2;
  /* 2. pages of heaphook's freed blocks (malloc(8): 24 or more bytes to the
   * allocator with a lead) reused for the allocator's own 16-byte blocks */
  for (int i = 0; i < N; i++) {
    a[i] = malloc(8);
    memset(a[i], 1, 8);
  }
  for (int i = 0; i < N; i++) free(a[i]);
  for (int i = 0; i < N; i++) {
    a[i] = bare_alloc_direct(16);
    memcpy(a[i], &i, sizeof i);
  }
  for (int i = 1; i < N; i += 2) free(a[i]);
  /* the even half stays live: none handed out again, none overwritten */
  for (int i = 1; i < N; i += 2) {
    char *p = bare_alloc_direct(16);
    for (int j = 0; j < N; j += 2) {
      if (p == a[j]) {
        printf("FAIL: block %d, still live, handed out again\n", j);
        failed++;
        break;
      }
    }
    memset(p, 0xee, 16);
    if (failed > 5) break;
  }
  for (int i = 0; i < N && failed <= 5; i += 2) {
    if (memcmp(a[i], &i, sizeof i) != 0) {
      printf("FAIL: block %d overwritten\n", i);
      failed++;
    }
  }
  printf("%s\n", failed ? "FAIL" : "ok: own blocks freed where they belong");
  return failed != 0;
}
