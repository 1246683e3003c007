/* Call stacks that pass through frames no call made: an allocation in a
 * signal handler, whose caller is the kernel's signal trampoline
 * (glibc's __restore_rt), and one in a makecontext coroutine, whose
 * outermost frame is glibc's __start_context. The return address of such
 * a frame is the first byte of its function, not the byte after a call
 * instruction, so the symbolizer's usual step back (ip - 1) lands before
 * the function, where no symbol is: the frames came out unnamed, as
 * "0x7f...  (libc.so.6+0x3c050)".
 *
 * main raises SIGUSR1 10 times, whose handler allocates 10 x 40 bytes
 * (in_handler), then runs a coroutine that allocates 10 x 41 bytes
 * (in_coroutine), and prints "signal frames done". */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>

static void in_handler(int sig) {
  (void)sig;
  free(malloc(40));
}

static ucontext_t main_context, coroutine;

static void in_coroutine(void) {
  for (int i = 0; i < 10; i++) free(malloc(41));
}

int main(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = in_handler;
  if (sigaction(SIGUSR1, &sa, NULL) != 0) return 1;
  for (int i = 0; i < 10; i++) raise(SIGUSR1);

  static char stack[256 * 1024];
  if (getcontext(&coroutine) != 0) return 1;
  coroutine.uc_stack.ss_sp = stack;
  coroutine.uc_stack.ss_size = sizeof stack;
  coroutine.uc_link = &main_context;
  makecontext(&coroutine, in_coroutine, 0);
  if (swapcontext(&main_context, &coroutine) != 0) return 1;
  printf("signal frames done\n");
  return 0;
}
