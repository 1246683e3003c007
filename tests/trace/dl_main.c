/* dlopens the library named by argv[1], has it allocate 20 x 777 bytes,
 * frees them, dlcloses it. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  if (argc != 2) return 2;
  void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (lib == NULL) {
    fprintf(stderr, "dlopen: %s\n", dlerror());
    return 1;
  }
  void *(*make)(size_t) = (void *(*)(size_t))dlsym(lib, "dl_make");
  void *p[20];
  for (int i = 0; i < 20; i++) p[i] = make(777);
  for (int i = 0; i < 20; i++) free(p[i]);
  dlclose(lib);
  puts("dl done");
  return 0;
}
