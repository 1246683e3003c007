/* Opens a library (argv[1]: a bare name found through this program's
 * RUNPATH, or a name with $ORIGIN) with RTLD_DEEPBIND (argv[2] "deep" or
 * "keep") or without ("plain"), and passes blocks both ways between it and
 * the program (deepbind_lib.c; "keep": the library frees its own blocks,
 * its constructor's among them, and none is passed), or checks that a library with an allocator of
 * its own keeps it (deepbind_bundled.c; "nested": one that a library's
 * constructor opens, deepbind_nested.c). With argv[3], argv[1] is opened
 * with RTLD_DEEPBIND by that library's nocrt_open. Prints what it saw. */
#include <dlfcn.h>
#include <heaphook/heaphook.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ROUNDS 1000

static void *sym(void *h, const char *name) {
  void *f = dlsym(h, name);
  if (f == NULL) {
    printf("dlsym %s: %s\n", name, dlerror());
    exit(1);
  }
  return f;
}

int main(int argc, char **argv) {
  if (argc < 3) return 2;
  int deep = strcmp(argv[2], "plain") != 0;
  void *h;
  if (argc > 3) { /* opened by a library with no _fini (deepbind_nocrt.c) */
    void *helper = dlopen(argv[3], RTLD_LAZY);
    if (helper == NULL) {
      printf("dlopen: %s\n", dlerror());
      return 1;
    }
    h = ((void *(*)(const char *))sym(helper, "nocrt_open"))(argv[1]);
  } else {
    h = dlopen(argv[1], RTLD_LAZY | (deep ? RTLD_DEEPBIND : 0));
  }
  if (h == NULL) {
    printf("dlopen: %s\n", dlerror());
    return 1;
  }
  if (strcmp(argv[2], "nested") == 0) { /* deepbind_nested.c */
    void *user = ((void *(*)(void))sym(h, "nested_user"))();
    if (user == NULL) {
      printf("the library's dlopen: %s\n", dlerror());
      return 1;
    }
    void *(*alloc)(size_t) = (void *(*)(size_t))sym(user, "user_alloc");
    int (*owns)(const void *) = (int (*)(const void *))sym(user, "bundled_owns");
    printf("bundled allocator, opened in a constructor: %s\n", owns(alloc(24)) ? "its own" : "not its own");
    return 0;
  }
  if (dlsym(h, "bundled_owns") != NULL) {
    void *(*alloc)(size_t) = (void *(*)(size_t))sym(h, "bundled_alloc");
    int (*owns)(const void *) = (int (*)(const void *))sym(h, "bundled_owns");
    void *p = alloc(24);
    printf("bundled allocator: %s\n", owns(p) ? "its own" : "not its own");
    return 0;
  }
  (void)dlerror();
  if (strcmp(argv[2], "keep") == 0) { /* no block passed between the two */
    void *(*alloc)(size_t) = (void *(*)(size_t))sym(h, "deep_alloc");
    void (*release)(void *) = (void (*)(void *))sym(h, "deep_free");
    unsigned long long before[1] = {0}, after[1] = {0};
    int counted = hh_thread_counts(before, 1) == 1;
    for (int i = 0; i < ROUNDS; i++) release(alloc(1 + (size_t)i * 37 % 5000));
    if (counted) hh_thread_counts(after, 1);
    ((void (*)(void))sym(h, "deep_free_made_at_load"))();
    printf("%d rounds: the library's blocks freed by the library\n", ROUNDS);
    if (counted) printf("counted: malloc %llu\n", after[0] - before[0]);
    return 0;
  }
  void *(*alloc)(size_t) = (void *(*)(size_t))sym(h, "deep_alloc");
  void (*release)(void *) = (void (*)(void *))sym(h, "deep_free");
  void *(*resize)(void *, size_t) = (void *(*)(void *, size_t))sym(h, "deep_realloc");
  void *(*alloc_ptr)(size_t) = (void *(*)(size_t))sym(h, "deep_alloc_by_pointer");
  void (*release_ptr)(void *) = (void (*)(void *))sym(h, "deep_free_by_pointer");
  void *(*at_load)(void) = (void *(*)(void))sym(h, "deep_made_at_load");

  unsigned long long before[2] = {0, 0}, after[2] = {0, 0};
  int counted = hh_thread_counts(before, 2) == 2;
  const char *owner = NULL;
  for (int i = 0; i < ROUNDS; i++) {
    size_t n = 1 + (size_t)i * 37 % 5000;
    char *a = alloc(n); /* the library's, freed by the program */
    memset(a, 1, n);
    if (i == 0) owner = hh_allocator_of(a);
    a = realloc(a, n + 100);
    free(a);
    char *b = malloc(n); /* the program's, freed by the library */
    memset(b, 2, n);
    b = resize(b, n * 2);
    release(b);
    char *c = alloc_ptr(n);
    memset(c, 3, n);
    free(c);
    char *d = malloc(n);
    release_ptr(d);
  }
  if (counted) hh_thread_counts(after, 2);
  /* glibc's block, made in the constructor inside dlopen */
  free(at_load());
  printf("%d rounds: blocks both ways\n", ROUNDS);
  printf("the library's blocks: %s\n", owner != NULL ? owner : "(no heaphook)");
  /* A library it opens with RTLD_DEEPBIND, through its own RUNPATH */
  void *(*open_inner)(void) = (void *(*)(void))sym(h, "deep_open_inner");
  void *inner = open_inner();
  if (inner == NULL) {
    printf("the library's dlopen: %s\n", dlerror());
    return 1;
  }
  void *(*inner_alloc)(size_t) = (void *(*)(size_t))sym(inner, "deep_alloc");
  void *e = inner_alloc(64);
  owner = hh_allocator_of(e);
  free(e);
  printf("its own library's blocks: %s\n", owner != NULL ? owner : "(no heaphook)");
  if (counted) printf("counted: malloc %llu\n", after[0] - before[0]);
  return 0;
}
