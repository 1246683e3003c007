/* One thread opens and closes a library with RTLD_DEEPBIND (heaphook's
 * dlopen, which rebinds it after glibc's returns: it walks every object
 * loaded since), while main opens and closes, with the flag, a library the
 * loader takes a while to relocate (deepbind_race_table.c), through
 * glibc's dlopen itself, as a library's own dlopen reference still bound
 * to glibc's does. The walk must leave alone an object that the loader is
 * still relocating: making its RELRO read-only under it killed the
 * program (SIGSEGV in ld.so). Prints "done". */
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

static atomic_int stop;

static void *opener(void *arg) {
  (void)arg;
  while (!atomic_load(&stop)) {
    void *h = dlopen("libhh_deep_lazy.so", RTLD_NOW | RTLD_DEEPBIND);
    if (h == NULL) return (void *)dlerror();
    dlclose(h);
  }
  return NULL;
}

int main(void) {
  void *libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
  void *(*glibc_dlopen)(const char *, int) =
      libc ? (void *(*)(const char *, int))dlsym(libc, "dlopen") : NULL;
  if (glibc_dlopen == NULL) return 2;
  pthread_t t;
  if (pthread_create(&t, NULL, opener, NULL) != 0) return 2;
  for (int i = 0; i < 400; i++) {
    void *h = glibc_dlopen("libhh_deep_race_table.so", RTLD_NOW | RTLD_DEEPBIND);
    if (h == NULL) {
      printf("dlopen: %s\n", dlerror());
      return 1;
    }
    dlclose(h);
  }
  atomic_store(&stop, 1);
  void *why;
  pthread_join(t, &why);
  if (why != NULL) {
    printf("the thread's dlopen: %s\n", (const char *)why);
    return 1;
  }
  printf("done\n");
  return 0;
}
