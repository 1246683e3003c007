/* longjmp and its kin: a jump out of a signal handler that interrupted the
 * hook gives the recursion guard back.
 *
 * A program may leave a signal handler by siglongjmp (a timeout, a
 * recovery from an error); POSIX leaves that undefined when the handler
 * interrupted malloc, and glibc's malloc lives through it. Where the
 * handler interrupted heaphook's recorders, the recursion guard stayed
 * set: nothing the thread allocated afterwards was recorded, and its
 * exec or _exit left the trace without its buffered events and its end
 * (trace.signal_longjmp). A jump whose target lies above the frame that
 * set the guard leaves that call: the guard is given back then
 * (hh__guard_release, which also has the tracer drop the event it was
 * writing). One whose target is below it, or on the alternate signal
 * stack the handler runs on, stays in the handler (a setjmp of its own).
 * glibc keeps the stack pointer in a jmp_buf mangled with the thread's
 * pointer guard; it is read back as glibc's x86-64 setjmp stores it. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <setjmp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "guard.h"

#define EXPORT __attribute__((visibility("default")))

typedef void (*jump_fn)(struct __jmp_buf_tag *env, int val) __attribute__((noreturn));

/* glibc's, looked up at start-up: a signal handler cannot call dlsym. */
static jump_fn next_longjmp, next__longjmp, next_siglongjmp, next_longjmp_chk;

__attribute__((constructor)) static void jump_resolve(void) {
  next_longjmp = (jump_fn)dlsym(RTLD_NEXT, "longjmp");
  next__longjmp = (jump_fn)dlsym(RTLD_NEXT, "_longjmp");
  next_siglongjmp = (jump_fn)dlsym(RTLD_NEXT, "siglongjmp");
  next_longjmp_chk = (jump_fn)dlsym(RTLD_NEXT, "__longjmp_chk");
}

/* Whether a jump to env leaves the call that set the guard. */
static bool leaves_guard(struct __jmp_buf_tag *env) {
#if defined(__x86_64__)
  uintptr_t pointer_guard, v = (uintptr_t)env->__jmpbuf[6]; /* JB_RSP */
  __asm__("mov %%fs:0x30, %0" : "=r"(pointer_guard));       /* tcbhead_t.pointer_guard */
  uintptr_t sp = ((v >> 0x11) | (v << (64 - 0x11))) ^ pointer_guard;
  if (sp < hh__guard_cfa) return false;
  stack_t ss;
  if (sigaltstack(NULL, &ss) == 0 && (ss.ss_flags & SS_ONSTACK) != 0 && sp >= (uintptr_t)ss.ss_sp &&
      sp - (uintptr_t)ss.ss_sp < ss.ss_size)
    return false;
  return true;
#else
  (void)env;
  return false;
#endif
}

static void before_jump(struct __jmp_buf_tag *env) {
  if (__builtin_expect(hh__in_hook, 0) && leaves_guard(env)) hh__guard_release();
}

/* A jump made before this library's constructor ran (the constructor of
 * a library the program links runs first) looks glibc's function up
 * then. With none found (never seen), the jump cannot be made. */
static _Noreturn void jump(jump_fn *next, const char *name, struct __jmp_buf_tag *env, int val) {
  if (*next == NULL) *next = (jump_fn)dlsym(RTLD_NEXT, name);
  if (*next == NULL) abort();
  (*next)(env, val);
}

EXPORT _Noreturn void longjmp(struct __jmp_buf_tag env[1], int val) {
  before_jump(env);
  jump(&next_longjmp, "longjmp", env, val);
}
EXPORT _Noreturn void _longjmp(struct __jmp_buf_tag env[1], int val) {
  before_jump(env);
  jump(&next__longjmp, "_longjmp", env, val);
}
EXPORT _Noreturn void siglongjmp(struct __jmp_buf_tag env[1], int val) {
  before_jump(env);
  jump(&next_siglongjmp, "siglongjmp", env, val);
}
EXPORT _Noreturn void __longjmp_chk(struct __jmp_buf_tag *env, int val) {
  before_jump(env);
  jump(&next_longjmp_chk, "__longjmp_chk", env, val);
}
