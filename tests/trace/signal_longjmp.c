/* A thread that leaves signal handlers by siglongjmp, as programs with a
 * timeout do: 20 times, a SIGALRM on an alternate signal stack ends a
 * loop of malloc(300) and free (churn()), often inside heaphook; then
 * 1,000 blocks of 24 bytes (after()) are allocated and freed, and with
 * argv[1] "exec" the program execs /bin/true, else it ends by _exit(0)
 * after printing "longjmp done".
 *
 * churn()'s first pass, one malloc and free from the loop's own call
 * site, runs before any timer is armed, so that the tracer has taken
 * that call stack before the first jump. A jump out of a capture (under
 * the tracer's meta lock, hh__tr_busy) cannot give the guard back, and
 * the thread records nothing more, nor writes its buffer at exec: on a
 * loaded machine the first capture outlasted the 500 us timer in 3 of
 * 400 runs (NO_END chunks=0; CI failed on it once). This run is about
 * jumps out of the tracer's other stretches; the "misses" run, below,
 * about those out of captures.
 *
 * POSIX leaves a longjmp out of a handler that interrupted malloc
 * undefined. The handler jumps only from this program's code or
 * heaphook's (a preloaded library whose name holds "heaphook"), never
 * from inside glibc's malloc, which a jump can leave half-way (the plain
 * run crashed in 1 of 6 runs); elsewhere it sets the timer again and
 * returns. heaphook's recursion guard stayed set when the handler
 * interrupted a recorder: every later allocation of the thread went
 * unrecorded (after() was missing), and an exec or _exit took the
 * thread's buffered events with it, and with _exit the trace's end
 * (src/hook/jump.c).
 *
 * With argv[2] "misses", churn() allocates from frames of 4000 sizes (a
 * new call stack for the tracer at each of the first 4000 allocations,
 * taken under its locks) and the loop runs 200 times: a jump out of a
 * new stack's capture left its meta lock taken, and with the guard given
 * back the thread took the lock again: the process hung (found by
 * review). */
#define _GNU_SOURCE
#include <link.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <ucontext.h>
#include <unistd.h>

static sigjmp_buf back;

/* The code the handler may jump from: this program's and heaphook's. */
static struct { uintptr_t start, end; } ranges[16];
static int n_ranges;

static int note_module(struct dl_phdr_info *info, size_t size, void *arg) {
  (void)size;
  (void)arg;
  if (info->dlpi_name[0] != '\0' && strstr(info->dlpi_name, "heaphook") == NULL) return 0;
  for (int i = 0; i < info->dlpi_phnum && n_ranges < 16; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X)) continue;
    ranges[n_ranges].start = info->dlpi_addr + ph->p_vaddr;
    ranges[n_ranges].end = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
    n_ranges++;
  }
  return 0;
}

static void arm(long us) {
  struct itimerval t = {{0, 0}, {0, us}};
  setitimer(ITIMER_REAL, &t, NULL);
}

static void on_alarm(int sig, siginfo_t *info, void *ctx) {
  (void)sig;
  (void)info;
  uintptr_t pc = (uintptr_t)((ucontext_t *)ctx)->uc_mcontext.gregs[REG_RIP];
  for (int i = 0; i < n_ranges; i++)
    if (pc >= ranges[i].start && pc < ranges[i].end) siglongjmp(back, 1);
  arm(50);
}

/* Set for churn()'s first pass, made before any timer is armed. */
static volatile int warming;

__attribute__((noinline)) static void churn(void) {
  for (;;) {
    void *volatile p = malloc(300);
    free(p);
    if (warming) return;
  }
}

/* A block from a frame of k * 16 bytes more: a call stack of its own. */
__attribute__((noinline)) static void leaf(unsigned k) {
  volatile char pad[k * 16 + 1];
  pad[0] = 0;
  void *volatile p = malloc(300);
  free(p);
  (void)pad[0];
}

__attribute__((noinline)) static void churn_misses(void) {
  for (unsigned k = 0;; k++) leaf(k % 4000);
}

__attribute__((noinline)) static void after(void) {
  void *blocks[1000];
  for (int i = 0; i < 1000; i++) blocks[i] = malloc(24);
  for (int i = 0; i < 1000; i++) free(blocks[i]);
}

int main(int argc, char **argv) {
  dl_iterate_phdr(note_module, NULL);
  static char alt[1 << 16];
  stack_t ss = {.ss_sp = alt, .ss_size = sizeof alt};
  sigaltstack(&ss, NULL);
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_alarm;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
  sigaction(SIGALRM, &sa, NULL);
  int misses = argc > 2 && strcmp(argv[2], "misses") == 0;
  warming = !misses;
  for (volatile int i = misses ? 0 : -1; i < (misses ? 200 : 20); i++) {
    if (sigsetjmp(back, 1) == 0) {
      if (!warming) arm(500);
      if (misses)
        churn_misses();
      else
        churn();
    }
    warming = 0;
  }
  after();
  if (argc > 1 && strcmp(argv[1], "exec") == 0) {
    execl("/bin/true", "true", (char *)NULL);
    return 1;
  }
  printf("longjmp done\n");
  fflush(stdout);
  _exit(0);
}
