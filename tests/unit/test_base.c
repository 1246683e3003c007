/* Unit tests of src/base: size and boolean parsing, size and duration
 * formatting, environment scanning,
 * the register of heaphook's own descriptors. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/duration.h"
#include "base/env.h"
#include "base/log.h"
#include "base/memory_limit.h"
#include "base/own_fd.h"
#include "base/quiet_write.h"
#include "base/size.h"

static void parse_size_accepts_bytes_and_suffixes(void **state) {
  (void)state;
  size_t v;
  assert_int_equal(hh__parse_size("0", &v), 0), assert_int_equal(v, 0);
  assert_int_equal(hh__parse_size("1000000", &v), 0), assert_int_equal(v, 1000000);
  assert_int_equal(hh__parse_size("64K", &v), 0), assert_int_equal(v, 64 * 1024);
  assert_int_equal(hh__parse_size("64k", &v), 0), assert_int_equal(v, 64 * 1024);
  assert_int_equal(hh__parse_size("512M", &v), 0), assert_int_equal(v, 512u << 20);
  assert_int_equal(hh__parse_size("1G", &v), 0), assert_int_equal(v, 1u << 30);
  assert_int_equal(hh__parse_size("6GiB", &v), 0), assert_int_equal(v, (size_t)6 << 30);
  assert_int_equal(hh__parse_size("2MB", &v), 0), assert_int_equal(v, 2u << 20);
  assert_int_equal(hh__parse_size("1T", &v), 0), assert_int_equal(v, (size_t)1 << 40);
  assert_int_equal(hh__parse_size("100B", &v), 0), assert_int_equal(v, 100);
}

/* The unit changes where the number would print as 1024.0 or 1000.000
 * ("1024.0 KiB" for 1048525 bytes, "1000.000 ms" for 999999500 ns before). */
static void format_size_and_duration_change_unit_before_rounding_up(void **state) {
  (void)state;
  char b[32];
  static const struct {
    uint64_t n;
    const char *want;
  } sizes[] = {{0, "0 B"},
               {1023, "1023 B"},
               {1024, "1.0 KiB"},
               {1536, "1.5 KiB"},
               {1048524, "1023.9 KiB"},
               {1048525, "1.0 MiB"},
               {1048575, "1.0 MiB"},
               {1048576, "1.0 MiB"},
               {(uint64_t)1 << 30, "1.0 GiB"},
               {(uint64_t)1 << 50, "1024.0 TiB"}},
    times[] = {{0, "0.000 us"},         {999, "0.999 us"},         {999999, "999.999 us"},
               {1000000, "1.000 ms"},   {999999499, "999.999 ms"}, {999999500, "1.000 s"},
               {1000000000, "1.000 s"}, {61500000000, "61.500 s"}};
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    hh__format_size(b, sizeof b, sizes[i].n);
    assert_string_equal(b, sizes[i].want);
  }
  for (size_t i = 0; i < sizeof times / sizeof times[0]; i++) {
    hh__format_duration(b, sizeof b, times[i].n);
    assert_string_equal(b, times[i].want);
  }
}

static void parse_size_rejects_what_is_not_a_size(void **state) {
  (void)state;
  size_t v = 7;
  const char *bad[] = {
      "", "abc", "-1", "12X", "1.5G", "10 M", "0x100", "1KK", "18446744073709551616", "17179869184G", " 1"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    assert_int_equal(hh__parse_size(bad[i], &v), -1);
  }
  assert_int_equal(hh__parse_size(NULL, &v), -1);
  assert_int_equal(v, 7);
}

static void parse_bool_words(void **state) {
  (void)state;
  bool b;
  const char *yes[] = {"1", "true", "TRUE", "yes", "On"};
  const char *no[] = {"0", "false", "No", "off"};
  for (size_t i = 0; i < 5; i++) assert_true(hh__parse_bool(yes[i], &b) == 0 && b);
  for (size_t i = 0; i < 4; i++) assert_true(hh__parse_bool(no[i], &b) == 0 && !b);
  assert_int_equal(hh__parse_bool("2", &b), -1);
  assert_int_equal(hh__parse_bool("yess", &b), -1);
  assert_int_equal(hh__parse_bool("", &b), -1);
}

static void env_get_matches_whole_names(void **state) {
  (void)state;
  setenv("HH_TEST_VAR", "value", 1);
  setenv("HH_TEST_VARX", "other", 1);
  assert_true(hh__env_ready());
  assert_string_equal(hh__env_get("HH_TEST_VAR"), "value");
  assert_string_equal(hh__env_get("HH_TEST_VARX"), "other");
  assert_null(hh__env_get("HH_TEST_VA"));
  assert_null(hh__env_get("HH_TEST_UNSET"));
}

static int open_null(void) {
  int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
  assert_true(fd >= 0);
  return fd;
}

static int open_high(int base) { return hh__own_fd_raise(open_null(), base, true); }

static void own_fd_raised_registered_closed(void **state) {
  (void)state;
  hh_own_fd o = HH_OWN_FD_INIT(HH_OWN_FD_TRACE);
  assert_int_equal(hh__own_fd_use(&o), -1);
  hh__own_fd_done(&o);
  int fd = open_high(HH_OWN_FD_TRACE);
  assert_true(fd >= hh__own_fd_base(HH_OWN_FD_TRACE));
  assert_int_equal(fcntl(fd, F_GETFD), FD_CLOEXEC);
  assert_false(hh__own_fd_holds(fd));
  assert_true(hh__own_fd_add(fd, &o));
  assert_int_equal(atomic_load(&o.fd), fd);
  assert_true(hh__own_fd_holds(fd));
  assert_false(hh__own_fd_holds_claimed(fd));
  assert_int_equal(hh__own_fd_use(&o), fd);
  assert_int_equal(atomic_load(&o.users), 1);
  hh__own_fd_done(&o);
  hh__own_fd_close(&o);
  assert_int_equal(atomic_load(&o.fd), -1);
  assert_false(hh__own_fd_holds(fd));
  assert_int_equal(fcntl(fd, F_GETFD), -1); /* closed */
  /* libunwind's: no owner, claimed, forgotten by hh__own_fd_remove. */
  int pipe_end = open_high(HH_OWN_FD_PIPE);
  assert_true(hh__own_fd_add(pipe_end, NULL));
  assert_true(hh__own_fd_holds_claimed(pipe_end));
  hh__own_fd_remove(pipe_end);
  assert_false(hh__own_fd_holds(pipe_end));
  close(pipe_end);
  /* Already high enough: left where it is. */
  int high = fcntl(open_null(), F_DUPFD_CLOEXEC, hh__own_fd_base(HH_OWN_FD_STDERR));
  assert_true(high >= 0);
  assert_int_equal(hh__own_fd_raise(high, HH_OWN_FD_TRACE, true), high);
  close(high);
}

/* A number the program put another file under (closed with a raw system
 * call and opened again, or dup2 past the wrappers) is no longer ours, nor
 * is one whose close-on-exec flag changed. */
static void own_fd_another_file_under_the_number_is_not_ours(void **state) {
  (void)state;
  hh_own_fd o = HH_OWN_FD_INIT(HH_OWN_FD_TRACE);
  int fds[2];
  assert_int_equal(pipe2(fds, O_CLOEXEC), 0);
  int ours = hh__own_fd_raise(fds[0], HH_OWN_FD_TRACE, true);
  assert_true(hh__own_fd_add(ours, &o));
  int theirs = open_null();
  assert_int_equal(dup2(theirs, ours), ours);
  assert_false(hh__own_fd_holds(ours));
  assert_int_equal(hh__own_fd_use(&o), -1);
  hh__own_fd_done(&o);
  close(ours);
  close(theirs);
  close(fds[1]);
  int gone = open_high(HH_OWN_FD_TRACE);
  assert_true(hh__own_fd_add(gone, &o));
  close(gone);
  assert_false(hh__own_fd_holds(gone));
  int flags = open_high(HH_OWN_FD_TRACE);
  assert_true(hh__own_fd_add(flags, &o));
  fcntl(flags, F_SETFD, 0);
  assert_false(hh__own_fd_holds(flags));
  close(flags);
}

static void own_fd_in_range_ascending(void **state) {
  (void)state;
  hh_own_fd oa = HH_OWN_FD_INIT(HH_OWN_FD_STDERR), ob = HH_OWN_FD_INIT(HH_OWN_FD_TRACE);
  int a = open_high(HH_OWN_FD_STDERR), b = open_high(HH_OWN_FD_TRACE), c = open_high(HH_OWN_FD_PIPE);
  assert_true(hh__own_fd_add(a, &oa) && hh__own_fd_add(b, &ob) && hh__own_fd_add(c, NULL));
  int out[HH_OWN_FD_MAX];
  assert_int_equal(hh__own_fd_in_range(0, ~0u, out), 3);
  assert_int_equal(out[0], b), assert_int_equal(out[1], c), assert_int_equal(out[2], a);
  assert_int_equal(hh__own_fd_in_range((unsigned)b + 1, (unsigned)a - 1, out), 1);
  assert_int_equal(out[0], c);
  assert_int_equal(hh__own_fd_in_range(0, (unsigned)b - 1, out), 0);
  /* HH_OWN_FD_MAX at most: one more is not protected. */
  enum { MORE = HH_OWN_FD_MAX - 3 + 1 };
  int more[MORE];
  for (int i = 0; i < MORE; i++) more[i] = open_high(HH_OWN_FD_TRACE);
  for (int i = 0; i < MORE - 1; i++) assert_true(hh__own_fd_add(more[i], NULL));
  assert_false(hh__own_fd_add(more[MORE - 1], NULL));
  assert_int_equal(hh__own_fd_in_range(0, ~0u, out), HH_OWN_FD_MAX);
  for (int i = 0; i < MORE; i++) hh__own_fd_remove(more[i]), close(more[i]);
  hh__own_fd_close(&oa), hh__own_fd_close(&ob);
  hh__own_fd_remove(c), close(c);
  assert_int_equal(hh__own_fd_in_range(0, ~0u, out), 0);
}

/* The program dup2s onto one of ours: ours moves first (its owner told),
 * and a descriptor without an owner (libunwind's) cannot. */
/* Under a soft limit below 1024 the bases move under it, in their order
 * (ulimit -n 256: the move to 900 failed, and heaphook's descriptors stayed
 * at the numbers the program's next files expect). */
static void own_fd_bases_fit_under_a_low_limit(void **state) {
  (void)state;
  struct rlimit was;
  assert_int_equal(getrlimit(RLIMIT_NOFILE, &was), 0);
  if (was.rlim_cur >= 1024) assert_int_equal(hh__own_fd_base(HH_OWN_FD_TRACE), HH_OWN_FD_TRACE);
  const int kinds[] = {HH_OWN_FD_TRACE, HH_OWN_FD_STATM, HH_OWN_FD_PIPE, HH_OWN_FD_STDERR};
  struct rlimit low = {256, was.rlim_max};
  assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
  int last = 2;
  for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
    int b = hh__own_fd_base(kinds[i]);
    assert_true(b > last && b < 256);
    last = b;
  }
  int fd = hh__own_fd_raise(open_null(), HH_OWN_FD_TRACE, true);
  assert_int_equal(fd, hh__own_fd_base(HH_OWN_FD_TRACE));
  close(fd);
  assert_int_equal(setrlimit(RLIMIT_NOFILE, &was), 0);
}

static void own_fd_makes_room_for_the_program(void **state) {
  (void)state;
  hh_own_fd o = HH_OWN_FD_INIT(HH_OWN_FD_TRACE);
  int first = open_high(HH_OWN_FD_TRACE);
  assert_true(hh__own_fd_add(first, &o));
  assert_true(hh__own_fd_make_room(first));
  int moved = atomic_load(&o.fd);
  assert_true(moved >= hh__own_fd_base(HH_OWN_FD_TRACE) && moved != first);
  assert_true(hh__own_fd_holds(moved));
  assert_false(hh__own_fd_holds(first)); /* still open, no longer registered */
  assert_int_equal(hh__own_fd_use(&o), moved);
  hh__own_fd_done(&o);
  assert_int_equal(fcntl(moved, F_GETFD), FD_CLOEXEC);
  close(first);
  assert_false(hh__own_fd_make_room(first)); /* not ours */
  int pipe_end = open_high(HH_OWN_FD_PIPE);
  assert_true(hh__own_fd_add(pipe_end, NULL));
  assert_false(hh__own_fd_make_room(pipe_end));
  hh__own_fd_remove(pipe_end);
  close(pipe_end);
  hh__own_fd_close(&o);
}

/* A message longer than HH_LOG_MAX is cut, and says so with "..." at its
 * end (a path cut short read as the whole path). */
/* A quiet write gives the thread back its signal mask as it was, glibc's
 * cancel signal (32) included: heaphook blocks it through the system call
 * in its stretches that hold locks (base/cancel.h), and glibc's
 * sigprocmask, which restored the mask here, unblocked it; an asynchronous
 * cancel then unwound a thread in a trace's write, a lock held. */
static void quiet_write_keeps_the_cancel_signal_blocked(void **state) {
  (void)state;
  uint64_t all = ~(uint64_t)0, before, after;
  assert_int_equal(syscall(SYS_rt_sigprocmask, SIG_SETMASK, &all, &before, sizeof all), 0);
  int fd = open("/dev/null", O_WRONLY);
  assert_true(fd >= 0);
  assert_int_equal(hh__write_quiet(fd, "x", 1), 1);
  assert_int_equal(hh__pwrite_quiet(fd, "x", 1, 0), 1);
  close(fd);
  assert_int_equal(syscall(SYS_rt_sigprocmask, SIG_SETMASK, &before, &after, sizeof before), 0);
  uint64_t unblockable = ((uint64_t)1 << (SIGKILL - 1)) | ((uint64_t)1 << (SIGSTOP - 1));
  assert_true((after >> (32 - 1)) & 1); /* glibc's cancel signal */
  assert_true(after == (all & ~unblockable));
}

static void log_cut_says_so(void **state) {
  (void)state;
  int fds[2];
  assert_int_equal(pipe(fds), 0);
  static char path[HH_LOG_MAX + 200];
  memset(path, 'a', sizeof path - 1);
  hh__dprint(fds[1], "cannot open %s: %s", path, "Permission denied");
  hh__dprint(fds[1], "|short %d|", 42);
  close(fds[1]);
  static char got[2 * HH_LOG_MAX];
  size_t len = 0;
  ssize_t n;
  while ((n = read(fds[0], got + len, sizeof got - 1 - len)) > 0) len += (size_t)n;
  close(fds[0]);
  got[len] = 0;
  assert_int_equal(len, HH_LOG_MAX - 1 + strlen("|short 42|"));
  assert_memory_equal(got, "cannot open aaa", 15);
  assert_memory_equal(got + HH_LOG_MAX - 5, "a...|short 42|", 14);
  assert_int_equal(hh__dprint_error(), 0);
}

/* Writes text to root/rel, making its directories. */
static void put_file(const char *root, const char *rel, const char *text) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", root, rel);
  for (char *p = path + strlen(root) + 1; (p = strchr(p, '/')) != NULL; p++) {
    *p = '\0';
    mkdir(path, 0700);
    *p = '/';
  }
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
}

/* A container's memory limit lowers what the process may use: cgroup v2's
 * memory.max of the group or an ancestor, v1's memory.limit_in_bytes;
 * "max", v1's "unlimited" (2^63 less a page) and missing files are none.
 * TLSF used the machine's physical memory alone, and a request past a
 * container's limit met the OOM killer instead of ENOMEM. */
static void memory_limit_follows_the_cgroup(void **state) {
  (void)state;
  char root[] = "/tmp/hh_memlimit_XXXXXX";
  assert_non_null(mkdtemp(root));
  const size_t physical = (size_t)64 << 30;
  /* no /proc/self/cgroup: the physical memory */
  assert_true(hh__memory_limit_under(root, physical) == physical);
  /* v2: the group's own limit is "max", its parent's 2 GiB */
  put_file(root, "proc/self/cgroup", "0::/system.slice/app.service\n");
  put_file(root, "sys/fs/cgroup/system.slice/app.service/memory.max", "max\n");
  put_file(root, "sys/fs/cgroup/system.slice/memory.max", "2147483648\n");
  errno = 1234;
  assert_true(hh__memory_limit_under(root, physical) == (size_t)2 << 30);
  assert_int_equal(errno, 1234);
  /* a smaller limit below wins; one above the physical memory is none */
  put_file(root, "sys/fs/cgroup/system.slice/app.service/memory.max", "1073741824\n");
  assert_true(hh__memory_limit_under(root, physical) == (size_t)1 << 30);
  assert_true(hh__memory_limit_under(root, (size_t)512 << 20) == (size_t)512 << 20);
  /* inside a container (cgroup namespace): "0::/" and the top's file */
  put_file(root, "proc/self/cgroup", "0::/\n");
  put_file(root, "sys/fs/cgroup/memory.max", "3221225472\n");
  assert_true(hh__memory_limit_under(root, physical) == (size_t)3 << 30);
  /* v1, the memory controller among others; the group's directory is not
   * there (another namespace's path): the top's limit */
  put_file(root, "proc/self/cgroup",
           "12:pids:/docker/abc\n4:cpu,memory:/docker/abc\n1:name=systemd:/docker/abc\n0::/\n");
  put_file(root, "sys/fs/cgroup/memory.max", "max\n");
  put_file(root, "sys/fs/cgroup/memory/memory.limit_in_bytes", "9223372036854771712\n");
  assert_true(hh__memory_limit_under(root, physical) == physical);
  put_file(root, "sys/fs/cgroup/memory/memory.limit_in_bytes", "536870912\n");
  assert_true(hh__memory_limit_under(root, physical) == (size_t)512 << 20);
  put_file(root, "sys/fs/cgroup/memory/docker/abc/memory.limit_in_bytes", "268435456\n");
  assert_true(hh__memory_limit_under(root, physical) == (size_t)256 << 20);
  /* this machine: at most its physical memory, and not 0 */
  size_t here = hh__memory_limit();
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  assert_true(here > 0 && here <= (size_t)pages * (size_t)page);
  char cmd[64];
  snprintf(cmd, sizeof cmd, "rm -rf %s", root);
  assert_int_equal(system(cmd), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(log_cut_says_so),
      cmocka_unit_test(memory_limit_follows_the_cgroup),
      cmocka_unit_test(quiet_write_keeps_the_cancel_signal_blocked),
      cmocka_unit_test(parse_size_accepts_bytes_and_suffixes),
      cmocka_unit_test(parse_size_rejects_what_is_not_a_size),
      cmocka_unit_test(format_size_and_duration_change_unit_before_rounding_up),
      cmocka_unit_test(parse_bool_words),
      cmocka_unit_test(env_get_matches_whole_names),
      cmocka_unit_test(own_fd_raised_registered_closed),
      cmocka_unit_test(own_fd_another_file_under_the_number_is_not_ours),
      cmocka_unit_test(own_fd_in_range_ascending),
      cmocka_unit_test(own_fd_bases_fit_under_a_low_limit),
      cmocka_unit_test(own_fd_makes_room_for_the_program),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
