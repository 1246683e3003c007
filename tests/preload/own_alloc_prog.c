/* preload.own_allocator: a program linked with an allocator of its own
 * (own_alloc.c). Under heaphook every block must still be that
 * allocator's, and a block it made without malloc must go back to it.
 *
 * usage: hh_preload_own_alloc_prog own|other
 *   own    ordinary blocks are own_alloc's (heaphook stands in front of it)
 *   other  they are not (HEAPHOOK_ALLOCATOR=tlsf serves them)
 * Prints what it checked and ends with "N passed, N failed". */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int own_alloc_owns(const void *p);
long own_alloc_served(void);
long own_alloc_released(void);
long own_alloc_new_calls(void);
void *own_alloc_direct(size_t size);
/* operator new(size_t) and operator delete(void *), as C++ code calls them */
void *_Znwm(size_t size);
void _ZdlPv(void *ptr);

static int passed, failed;

static void check(int ok, const char *what) {
  if (ok)
    passed++;
  else {
    failed++;
    printf("FAIL: %s\n", what);
  }
}

int main(int argc, char **argv) {
  int own = argc > 1 && strcmp(argv[1], "own") == 0;
  void *m = malloc(100);
  char *c = calloc(10, 10);
  void *pm = NULL;
  int rc = posix_memalign(&pm, 256, 1000);
  void *aa = aligned_alloc(64, 128);
  char *s = strdup("a string glibc copies");
  check(m && c && rc == 0 && pm && aa && s, "every allocation succeeds");
  check(((unsigned long)pm & 255) == 0 && ((unsigned long)aa & 63) == 0, "alignments kept");
  if (own) {
    check(own_alloc_owns(m) && own_alloc_owns(c) && own_alloc_owns(pm) && own_alloc_owns(aa),
          "malloc, calloc, posix_memalign, aligned_alloc are the program's allocator's");
    check(own_alloc_owns(s), "strdup (glibc's malloc call) is the program's allocator's");
    check(malloc_usable_size(m) == 128, "malloc_usable_size is the program's allocator's");
  } else {
    check(!own_alloc_owns(m) && !own_alloc_owns(pm), "the blocks are another allocator's");
  }
  int zero = 1;
  for (int i = 0; i < 100; i++) zero = zero && c[i] == 0;
  check(zero, "calloc zeroes");
  /* The allocator defines operator new too, and serves it itself: under
   * heaphook it must still be served (heaphook's operator new, through
   * its malloc), by whoever serves malloc. */
  void *n = _Znwm(40);
  check(n != NULL && (own ? own_alloc_owns(n) : !own_alloc_owns(n)), "operator new");
  _ZdlPv(n);
  /* heaphook looked up the C++ runtime for that call, and this program
   * has none: the failed lookup's error is not the program's (until
   * 2026-11-28 dlerror() said "undefined symbol: _ZSt15get_new_handlerv",
   * and freed two blocks heaphook had made: unknown frees in the trace,
   * garbage in the usage recorder's bytes) */
  const char *dl_error = dlerror();
  check(dl_error == NULL, "no dlerror() pending from heaphook's lookups");
  if (dl_error != NULL) printf("dlerror(): %s\n", dl_error);
  m = realloc(m, 5000);
  check(m != NULL && (!own || own_alloc_owns(m)), "realloc");
  free(m);
  free(c);
  free(pm);
  free(aa);
  free(s);
  /* Alignments up to 16 asked for: the allocator's malloc(1) is 8 bytes
   * off 16 (as jemalloc's, tcmalloc's, mimalloc's), which heaphook handed
   * aligned_alloc(16, 1) with nothing recorded or traced in full, until
   * 2026-11-28. */
  void *a16 = aligned_alloc(16, 1), *m16 = memalign(16, 8), *p16 = NULL;
  int prc = posix_memalign(&p16, 16, 8);
  /* (the compiler takes the alignment asked for as given: hidden) */
  __asm__("" : "+r"(a16), "+r"(m16), "+r"(p16));
  check(a16 != NULL && m16 != NULL && prc == 0 &&
            (((unsigned long)a16 | (unsigned long)m16 | (unsigned long)p16) & 15) == 0,
        "aligned_alloc(16, 1), memalign(16, 8), posix_memalign(16, 8) are 16-aligned");
  free(a16);
  free(m16);
  free(p16);
  /* A size that is a multiple of the alignment, which the allocator's
   * posix_memalign (heaphook's way to it) serves off that alignment, as
   * mimalloc 2.0.9's does up to 1024 bytes (C++ aligned new rounds every
   * size up so: preload.cxx_new_delete_own_allocator's new of an
   * alignas(256) struct) */
  void *a256 = aligned_alloc(256, 256), *m512 = memalign(512, 1024);
  __asm__("" : "+r"(a256), "+r"(m512));
  check(a256 != NULL && m512 != NULL && ((unsigned long)a256 & 255) == 0 && ((unsigned long)m512 & 511) == 0,
        "aligned_alloc(256, 256) and memalign(512, 1024) are aligned");
  free(a256);
  free(m512);
  /* made by the allocator's own entry point, freed through the program's
   * free: it must go back to the allocator, whoever serves malloc */
  long before = own_alloc_released();
  void *d = own_alloc_direct(64);
  free(d);
  check(own_alloc_released() == before + 1, "a block of the allocator's own entry point goes back to it");
  /* Blocks whose user bytes start a page: the allocator makes some (its
   * blocks are bumped, 16 bytes apart or more); heaphook's own, with its
   * lead or prefix in front, never do here: such a block gets a lead 16
   * bytes longer from the bytes the allocator leaves to spare (the word in
   * front of a page-aligned pointer is read only after a system call,
   * hook/block.h). */
  enum { N = 10000 };
  static void *blocks[N];
  int on_page = 0;
  long calls = own_alloc_served();
  for (int i = 0; i < N; i++) {
    size_t size = 1 + (size_t)(i * 37 % 500);
    blocks[i] = i % 3 == 0 ? calloc(1, size) : malloc(size);
    if (blocks[i] != NULL && ((unsigned long)blocks[i] & 4095) == 0) on_page++;
  }
  calls = own_alloc_served() - calls;
  for (int i = 0; i < N; i++) free(blocks[i]);
  printf("blocks starting a page: %d\n", on_page);
  /* one call of the allocator's each (a first version exchanged a block
   * that would start a page for another, which jemalloc and tcmalloc then
   * handed out again at the next malloc: up to 5 calls a malloc) */
  printf("the allocator's calls for %d blocks: %ld\n", N, calls);
  /* whose operator new served: the allocator's own (untraced, and under
   * heaphook with nothing to record) or heaphook's, through malloc */
  printf("the allocator's operator new served %ld\n", own_alloc_new_calls());
  printf("%d passed, %d failed\n", passed, failed);
  return failed != 0;
}
