/* The exec family, exported by the preload libraries so that what the
 * recorders hold in memory reaches their files before the program image is
 * replaced: exec runs no destructors, so without this the tracer's last
 * buffered events of a program that execs would be lost.
 *
 * Each wrapper tells the recorders (hh__before_exec, with the program's
 * path or name as given), then calls the next
 * definition of the same function (glibc's). If the exec fails the program
 * goes on and so does recording: nothing was closed, only written early.
 * glibc's own exec functions call its internal __execve, not these, so each
 * public entry point is wrapped by itself; the variadic execl* forms build
 * their argv on the stack (no allocation) and go through the execv* ones of
 * glibc. These run outside malloc, but may run in a forked child of a
 * multi-threaded program, so they use nothing that could be locked there
 * besides the recorders' own fork-safe state. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <unistd.h>

#include "guard.h"
#include "record/trace/trace.h"

#define EXPORT __attribute__((visibility("default")))

/* Skipped when the exec comes from a signal handler that interrupted the
 * hook on this thread: the recorders may hold their locks there, and waiting
 * for them would hang the program. What this thread had buffered is then
 * lost, as with _exit. */
static void hh__before_exec(const char *path) {
  if (hh__guard_held((uintptr_t)__builtin_dwarf_cfa())) return;
  int saved = errno;
  hh_guard guard = hh__guard_enter();
  hh__trace_before_exec(path);
  hh__guard_leave(guard);
  errno = saved;
}

/* exec returned: it failed, and the program goes on. The other threads may
 * write to the trace again (hh__trace_exec_failed). */
static void hh__after_failed_exec(void) {
  int saved = errno;
  hh__trace_exec_failed();
  errno = saved;
}

/* The next definition of name (glibc's), looked up once per function. */
#define NEXT(type, name)                         \
  static type next_##name;                       \
  if (next_##name == NULL) {                     \
    next_##name = (type)dlsym(RTLD_NEXT, #name); \
    if (next_##name == NULL) {                   \
      errno = ENOSYS;                            \
      return -1;                                 \
    }                                            \
  }

typedef int (*execve_fn)(const char *, char *const[], char *const[]);
typedef int (*execv_fn)(const char *, char *const[]);
typedef int (*fexecve_fn)(int, char *const[], char *const[]);
typedef int (*execveat_fn)(int, const char *, char *const[], char *const[], int);

EXPORT int execve(const char *path, char *const argv[], char *const envp[]) {
  NEXT(execve_fn, execve);
  hh__before_exec(path);
  int r = next_execve(path, argv, envp);
  hh__after_failed_exec();
  return r;
}

EXPORT int execv(const char *path, char *const argv[]) {
  NEXT(execv_fn, execv);
  hh__before_exec(path);
  int r = next_execv(path, argv);
  hh__after_failed_exec();
  return r;
}

EXPORT int execvp(const char *file, char *const argv[]) {
  NEXT(execv_fn, execvp);
  hh__before_exec(file);
  int r = next_execvp(file, argv);
  hh__after_failed_exec();
  return r;
}

EXPORT int execvpe(const char *file, char *const argv[], char *const envp[]) {
  NEXT(execve_fn, execvpe);
  hh__before_exec(file);
  int r = next_execvpe(file, argv, envp);
  hh__after_failed_exec();
  return r;
}

EXPORT int fexecve(int fd, char *const argv[], char *const envp[]) {
  NEXT(fexecve_fn, fexecve);
  hh__before_exec(NULL);
  int r = next_fexecve(fd, argv, envp);
  hh__after_failed_exec();
  return r;
}

EXPORT int execveat(int dirfd, const char *path, char *const argv[], char *const envp[], int flags) {
  NEXT(execveat_fn, execveat);
  hh__before_exec(path);
  int r = next_execveat(dirfd, path, argv, envp, flags);
  hh__after_failed_exec();
  return r;
}

/* execl, execlp, execle: count the arguments, then copy them into an array
 * on the stack (the kernel's own limit on arguments bounds it in practice;
 * beyond 64 Ki arguments the call fails with E2BIG as the kernel would). */
#define MAX_LIST_ARGS 65536
#define COLLECT_ARGS(first, last_named, with_env)                  \
  size_t argc = 1;                                                 \
  va_list ap;                                                      \
  va_start(ap, last_named);                                        \
  while (va_arg(ap, const char *) != NULL) argc++;                 \
  va_end(ap);                                                      \
  if (argc >= MAX_LIST_ARGS) {                                     \
    errno = E2BIG;                                                 \
    return -1;                                                     \
  }                                                                \
  char *argv[argc + 1];                                            \
  char *const *envp = NULL;                                        \
  va_start(ap, last_named);                                        \
  argv[0] = (char *)(first);                                       \
  for (size_t i = 1; i <= argc; i++) argv[i] = va_arg(ap, char *); \
  if (with_env) envp = va_arg(ap, char *const *);                  \
  va_end(ap);                                                      \
  (void)envp;

EXPORT int execl(const char *path, const char *arg, ...) {
  COLLECT_ARGS(arg, arg, 0);
  return execv(path, argv);
}

EXPORT int execlp(const char *file, const char *arg, ...) {
  COLLECT_ARGS(arg, arg, 0);
  return execvp(file, argv);
}

EXPORT int execle(const char *path, const char *arg, ...) {
  COLLECT_ARGS(arg, arg, 1);
  return execve(path, argv, envp);
}
