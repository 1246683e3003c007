/* dl_reuse ALPHA BRAVO: two plugins with the same code layout (dl_alpha.c,
 * dl_bravo.c), each loaded, called and closed in turn, three rounds, from
 * one call site; the loader maps the second where the first was. Each
 * plugin's work() allocates 111 bytes (alpha) or 222 (bravo) in its own
 * function. Prints the base of each load ("base ALPHA|BRAVO 0x..."). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  if (argc != 3) return 2;
  for (int round = 0; round < 3; round++) {
    for (int i = 1; i <= 2; i++) {
      void *h = dlopen(argv[i], RTLD_NOW | RTLD_LOCAL);
      if (h == NULL) {
        fprintf(stderr, "dlopen: %s\n", dlerror());
        return 1;
      }
      void *(*work)(size_t) = (void *(*)(size_t))dlsym(h, "work");
      Dl_info di;
      if (work == NULL || dladdr((void *)work, &di) == 0) return 1;
      printf("base %s %p\n", i == 1 ? "ALPHA" : "BRAVO", di.dli_fbase);
      free(work(i == 1 ? 111 : 222));
      if (dlclose(h) != 0) return 1;
    }
  }
  return 0;
}
