/* A library whose constructor calls abort() with a SIGABRT handler of its
 * own that jumps out (a crash reporter set up in a C++ static initializer,
 * then an initializer that throws): it runs before the preload library's
 * constructors. The handler must run, as without heaphook. */
#include <setjmp.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

static sigjmp_buf back;

static void on_abort(int sig) {
  (void)sig;
  siglongjmp(back, 1);
}

__attribute__((constructor)) static void abort_early(void) {
  signal(SIGABRT, on_abort);
  if (sigsetjmp(back, 1) == 0) abort();
  signal(SIGABRT, SIG_DFL);
  (void)!write(1, "handler ran\n", 12);
}
