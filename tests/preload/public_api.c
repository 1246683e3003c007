/* Calls every function of heaphook.h by its plain name, with arguments that
 * count their evaluations, and prints what each gave:
 *
 *   owner=<hh_allocator_of(p) or (null)> counts=<hh_thread_counts's result>
 *   evaluated=<how many times the arguments were evaluated: 4>
 *
 * Without heaphook the calls must neither crash (the weak functions are
 * NULL) nor skip the arguments' evaluation. Also built as C++
 * (public_api.cpp), where the header's macros must compile as well. */
#include <heaphook/heaphook.h>
#include <stdio.h>
#include <stdlib.h>

static int evaluated;

static const char *counted(const char *s) {
  evaluated++;
  return s;
}

int main(void) {
  void *p = malloc(100);
  unsigned long long counts[HH_CALL_COUNT];
  const char *owner = hh_allocator_of((evaluated++, p));
  int n = hh_thread_counts((evaluated++, counts), HH_CALL_COUNT);
  hh_marker(counted("public-api"));
  HH_MARKER(counted("public-api-macro"));
  printf("owner=%s counts=%d evaluated=%d\n", owner ? owner : "(null)", n, evaluated);
  free(p);
  return 0;
}
