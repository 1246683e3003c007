/* Tests of the TLSF hh_allocator glue (src/alloc/tlsf/tlsf_allocator.c):
 * the heaphook growth rule and its page rounding, configuration errors (the
 * exact message), mmap failure -> NULL, ownership, alignment, realloc,
 * fork safety of the priority-inheritance lock, errno, and the report. */
#define _GNU_SOURCE /* sched_getaffinity and the CPU_* macros */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
// cmocka needs the headers above first
#include <cmocka.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "alloc/tlsf/tlsf_allocator.h"

static const hh_allocator *A;
static size_t page;

/* The lower bound of the size class of a free block of f bytes: the core's
 * good-fit search rounds requests up to a class boundary; below 512 classes
 * are 16 bytes wide, above they split each power of two in 32. */
static size_t class_floor(size_t f) {
  if (f < 512) return f;
  unsigned m = 63u - (unsigned)__builtin_clzll(f);
  return f & ~(((size_t)1 << (m - 5)) - 1);
}

/* Allocates (and leaks) blocks that leave a fresh pool of pool_bytes bytes
 * with no free byte: each takes the class floor of the remaining free block
 * (+ 8 tail bytes a used block may use), until nothing is split off. */
static void fill_pool(size_t pool_bytes) {
  size_t f = pool_bytes - 48;
  for (;;) {
    size_t take = class_floor(f);
    assert_non_null(A->alloc(take + 8, 1));
    if (f < take + 32) break;
    f -= take + 16;
  }
}

static void init_with(size_t initial, size_t additional) {
  hh__tlsf_allocator_configure(initial, additional);
  assert_int_equal(A->init(), 0);
}

static int teardown(void **state) {
  (void)state;
  hh__tlsf_allocator_reset();
  return 0;
}

/* The README's example scaled to pages: ADDITIONAL = one page, the initial
 * pool exhausted, a request of 10 pages -> additions of 1, 2, 4, 8, 16
 * pages (README: 100, 200, 400, 800, 1600 bytes for malloc(1000)). */
static void test_growth_doubles_additions_until_request_fits(void **state) {
  (void)state;
  init_with(page, page);
  fill_pool(page);
  assert_int_equal(hh__tlsf_allocator_growths(), 0);
  void *big = A->alloc(10 * page, 1);
  assert_non_null(big);
  memset(big, 1, 10 * page);
  size_t sizes[16];
  size_t n = hh__tlsf_allocator_pool_sizes(sizes, 16);
  assert_int_equal(hh__tlsf_allocator_growths(), 5);
  assert_int_equal(n, 6);
  assert_int_equal(sizes[0], page);
  for (size_t i = 1; i < n; i++) assert_int_equal(sizes[i], page << (i - 1));
  /* Growth happens only on exhaustion: small requests now fit somewhere. */
  void *small = A->alloc(500, 1);
  assert_non_null(small);
  assert_int_equal(hh__tlsf_allocator_growths(), 5);
  assert_int_equal(hh__tlsf_allocator_check(), 0);
  A->dealloc(small);
  A->dealloc(big);
  assert_int_equal(hh__tlsf_allocator_check(), 0);
}

/* The README's literal example: ADDITIONAL_MEMPOOL_SIZE=100, malloc(1000)
 * with nothing free: additions of 100, 200, 400, 800 bytes (each too small
 * for the request) and 1600 (finally sufficient). */
static void test_growth_readme_example_100_bytes(void **state) {
  (void)state;
  init_with(0, 100);
  assert_int_equal(hh__tlsf_allocator_pool_sizes(NULL, 0), 0);
  void *p = A->alloc(1000, 1);
  assert_non_null(p);
  memset(p, 7, 1000);
  size_t sizes[8];
  assert_int_equal(hh__tlsf_allocator_pool_sizes(sizes, 8), 5);
  const size_t want[] = {100, 200, 400, 800, 1600};
  for (size_t i = 0; i < 5; i++) assert_int_equal(sizes[i], want[i]);
  assert_int_equal(hh__tlsf_allocator_growths(), 5);
  assert_int_equal(hh__tlsf_allocator_check(), 0);
  A->dealloc(p);
}

/* Small additions and a heap that keeps growing (tier4 heaphook's README
 * sizes, INITIAL = ADDITIONAL = 1000000, and a program of some gigabytes):
 * one-page pools that hold one 3000-byte block each, 6000 blocks. The
 * literal rule holds for the first 3840 pools; then each growth starts from
 * a sixteenth of the pools so far, and the table of 4096 pools never fills.
 * Before 2026-11-28 the 4097th block was NULL (ENOMEM with memory to spare:
 * a program on 1000000-byte pools failed past 4 GB). */
static void test_growth_goes_on_past_the_pool_table(void **state) {
  (void)state;
  init_with(page, page);
  for (int i = 0; i < 6000; i++) {
    void *p = A->alloc(3000, 1);
    if (p == NULL)
      fail_msg("block %d of 3000 bytes: NULL after %zu growths", i, hh__tlsf_allocator_growths());
    memset(p, 1, 3000);
  }
  static size_t sizes[4096];
  size_t n = hh__tlsf_allocator_pool_sizes(sizes, 4096);
  assert_true(n > 3840 && n < 4096);
  for (size_t i = 0; i < 3840; i++) assert_int_equal(sizes[i], page);
  for (size_t i = 3841; i < n; i++) assert_true(sizes[i] > page);
  assert_int_equal(hh__tlsf_allocator_check(), 0);
}

static void test_no_growth_when_additional_is_zero(void **state) {
  (void)state;
  init_with(page, 0);
  assert_null(A->alloc(2 * page, 1));
  assert_non_null(A->alloc(100, 1));
  assert_int_equal(hh__tlsf_allocator_growths(), 0);
}

static void test_growth_keeps_errno(void **state) {
  (void)state;
  init_with(page, page);
  errno = 1234;
  void *p = A->alloc(100 * page, 1);
  assert_non_null(p);
  assert_int_equal(errno, 1234);
  A->dealloc(p);
}

static void test_huge_request_returns_null(void **state) {
  (void)state;
  init_with(page, page);
  assert_null(A->alloc(SIZE_MAX, 1));
  assert_null(A->alloc(SIZE_MAX / 2, 1));
  assert_null(A->alloc(SIZE_MAX - 4096, (size_t)1 << 20));
  assert_int_equal(hh__tlsf_allocator_check(), 0);
}

/* Runs fn in a child with stderr captured; returns its exit status and the
 * text it wrote to fd 2. */
static int run_child(void (*fn)(void), char *err, size_t err_size) {
  int fds[2];
  assert_int_equal(pipe(fds), 0);
  fflush(NULL);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    close(fds[0]);
    dup2(fds[1], 2);
    alarm(20);
    fn();
    _exit(0);
  }
  close(fds[1]);
  size_t len = 0;
  ssize_t r;
  while (len + 1 < err_size && (r = read(fds[0], err + len, err_size - 1 - len)) > 0) {
    len += (size_t)r;
  }
  err[len] = '\0';
  close(fds[0]);
  int status;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return WEXITSTATUS(status);
}

/* fn, run in a child, ends it with TLSF's double-free message and abort. */
static void expect_double_free_abort(void (*fn)(void)) {
  char err[1024];
  assert_int_equal(run_child(fn, err, sizeof err), 128 + SIGABRT);
  assert_non_null(strstr(err, "heaphook: tlsf: double free (or realloc of a freed block) of 0x"));
}

static void init_from_env(void) {
  hh__tlsf_allocator_reset();
  A->init();
}

static void child_bad_initial(void) {
  setenv("INITIAL_MEMPOOL_SIZE", "12Q", 1);
  init_from_env();
}

static void child_bad_additional(void) {
  setenv("INITIAL_MEMPOOL_SIZE", "1M", 1);
  setenv("ADDITIONAL_MEMPOOL_SIZE", "-5", 1);
  init_from_env();
}

static void child_bad_mlock(void) {
  setenv("HEAPHOOK_TLSF_MLOCK", "maybe", 1);
  init_from_env();
}

/* Too small for a pool: the value as written, not the parsed bytes. */
static void child_small_initial(void) {
  setenv("INITIAL_MEMPOOL_SIZE", "64b", 1);
  init_from_env();
}

static void test_bad_env_values_stop_with_one_line(void **state) {
  (void)state;
  char err[1024];
  assert_int_equal(run_child(child_bad_initial, err, sizeof err), 1);
  assert_string_equal(err,
                      "heaphook: INITIAL_MEMPOOL_SIZE=12Q is not a size (use bytes or a K/M/G/T "
                      "suffix, e.g. 64M)\n");
  assert_int_equal(run_child(child_bad_additional, err, sizeof err), 1);
  assert_string_equal(err,
                      "heaphook: ADDITIONAL_MEMPOOL_SIZE=-5 is not a size (use bytes or a K/M/G/T "
                      "suffix, e.g. 64M)\n");
  assert_int_equal(run_child(child_small_initial, err, sizeof err), 1);
  assert_string_equal(err, "heaphook: INITIAL_MEMPOOL_SIZE=64b is too small for a pool: at least 80 bytes\n");
  assert_int_equal(run_child(child_bad_mlock, err, sizeof err), 1);
  assert_string_equal(err,
                      "heaphook: HEAPHOOK_TLSF_MLOCK=maybe is not a boolean (use 1/0, true/false, "
                      "yes/no or on/off)\n");
}

static void child_good_env(void) {
  setenv("INITIAL_MEMPOOL_SIZE", "1M", 1);
  setenv("ADDITIONAL_MEMPOOL_SIZE", "3000", 1);
  setenv("HEAPHOOK_TLSF_MLOCK", "on", 1);
  init_from_env();
  size_t sizes[8];
  if (hh__tlsf_allocator_pool_sizes(sizes, 8) != 1 || sizes[0] != ((size_t)1 << 20)) _exit(2);
  fill_pool((size_t)1 << 20);
  void *p = A->alloc(6144, 1); /* additions of 3000 and 6000 are too small, 12000 fits */
  if (p == NULL || hh__tlsf_allocator_pool_sizes(sizes, 8) != 4) _exit(3);
  if (sizes[1] != 3000 || sizes[2] != 6000 || sizes[3] != 12000) _exit(4);
  if (hh__tlsf_allocator_growths() != 3) _exit(6);
  _exit(hh__tlsf_allocator_check() == 0 ? 0 : 5);
}

static void child_default_env(void) {
  unsetenv("INITIAL_MEMPOOL_SIZE");
  unsetenv("ADDITIONAL_MEMPOOL_SIZE");
  init_from_env();
  size_t sizes[8];
  if (hh__tlsf_allocator_pool_sizes(sizes, 8) != 1 || sizes[0] != ((size_t)64 << 20)) _exit(2);
  _exit(0);
}

static void test_env_sizes_with_suffixes_and_defaults(void **state) {
  (void)state;
  char err[1024];
  assert_int_equal(run_child(child_good_env, err, sizeof err), 0);
  assert_int_equal(run_child(child_default_env, err, sizeof err), 0);
}

/* With the address space limit below what is mapped, every growth mmap
 * fails: the allocation returns NULL, existing pools keep working. */
static void child_mmap_fails(void) {
  hh__tlsf_allocator_configure(page, page);
  if (A->init() != 0) _exit(2);
  struct rlimit lim = {1, 1};
  if (setrlimit(RLIMIT_AS, &lim) != 0) _exit(3);
  if (A->alloc((size_t)1 << 30, 1) != NULL) _exit(4);
  if (A->alloc(10 * page, 4096) != NULL) _exit(5);
  if (A->alloc(100, 1) == NULL) _exit(6);
  if (hh__tlsf_allocator_growths() != 0) _exit(7);
  _exit(hh__tlsf_allocator_check() == 0 ? 0 : 8);
}

static void test_mmap_failure_returns_null(void **state) {
  (void)state;
  char err[1024];
  assert_int_equal(run_child(child_mmap_fails, err, sizeof err), 0);
}

static void child_double_free(void) {
  hh__tlsf_allocator_configure(page, page);
  if (A->init() != 0) _exit(2);
  void *p = A->alloc(100, 1);
  A->dealloc(p);
  A->dealloc(p);
  _exit(3);
}

static void test_double_free_aborts_with_message(void **state) {
  (void)state;
  expect_double_free_abort(child_double_free);
}

/* Confined to one CPU (taskset -c N, a cpuset) on a machine of several,
 * a thread does not spin on the lock, whose holder cannot run meanwhile:
 * it sleeps at once. Before, the online CPUs were counted and it spun 500
 * times (4 threads on one CPU: 3-21 s instead of 0.3 s). */
static void child_one_cpu(void) {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) != 0) _exit(2);
  int cpu = 0;
  while (!CPU_ISSET(cpu, &set)) cpu++;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (sched_setaffinity(0, sizeof set, &set) != 0) _exit(2);
  init_with(page * 4, page);
  _exit(hh__tlsf_allocator_spin_tries() == 0 ? 0 : 3);
}

static void test_no_spin_on_one_cpu(void **state) {
  (void)state;
  char err[1024];
  assert_int_equal(run_child(child_one_cpu, err, sizeof err), 0);
  cpu_set_t set;
  assert_int_equal(sched_getaffinity(0, sizeof set, &set), 0);
  init_with(page * 4, page);
  assert_int_equal(hh__tlsf_allocator_spin_tries(), CPU_COUNT(&set) > 1 ? 500 : 0);
}

static void test_owns_only_pool_addresses(void **state) {
  (void)state;
  init_with(page, page);
  void *a = A->alloc(100, 1);
  void *b = A->alloc(3 * page, 1); /* forces a second pool */
  int local;
  assert_true(A->owns(a));
  assert_true(A->owns(b));
  assert_true(A->owns((char *)b + 3 * page - 1));
  assert_false(A->owns(&local));
  assert_false(A->owns(A));
  assert_false(A->owns(NULL));
  void *m = malloc(100);
  assert_false(A->owns(m));
  free(m);
  A->dealloc(a);
  A->dealloc(b);
}

/* Hundreds of pools (every 3000-byte block needs a new one-page pool):
 * owns() answers from the sorted index for every block and gap. */
static void test_owns_with_many_pools(void **state) {
  (void)state;
  enum { N = 700 };
  static void *p[N];
  init_with(page, page);
  for (int i = 0; i < N; i++) {
    p[i] = A->alloc(3000, 1);
    assert_non_null(p[i]);
  }
  size_t pools = hh__tlsf_allocator_pool_sizes(NULL, 0);
  assert_true(pools >= (page == 4096 ? (size_t)N : (size_t)N / 30));
  for (int i = 0; i < N; i++) {
    assert_true(A->owns(p[i]));
    assert_true(A->owns((char *)p[i] + 2999));
  }
  int local;
  assert_false(A->owns(&local));
  void *m = malloc(100);
  assert_false(A->owns(m));
  free(m);
  for (int i = 0; i < N; i++) A->dealloc(p[i]);
  assert_int_equal(hh__tlsf_allocator_check(), 0);
}

/* owns() stays right for old blocks while another thread keeps adding
 * pools (readers never wait; a moved generation sends them to the scan). */
static int grower_stop; /* atomic */

static void *grower(void *arg) {
  (void)arg;
  for (int i = 0; i < 1500 && !__atomic_load_n(&grower_stop, __ATOMIC_RELAXED); i++) A->alloc(3000, 1);
  return NULL;
}

static void test_owns_during_growth(void **state) {
  (void)state;
  init_with(page, page);
  void *mine[64];
  for (int i = 0; i < 64; i++) mine[i] = A->alloc(3000, 1);
  __atomic_store_n(&grower_stop, 0, __ATOMIC_RELAXED);
  pthread_t th;
  assert_int_equal(pthread_create(&th, NULL, grower, NULL), 0);
  int local;
  for (int round = 0; round < 20000; round++) {
    assert_true(A->owns(mine[round % 64]));
    assert_false(A->owns(&local));
  }
  __atomic_store_n(&grower_stop, 1, __ATOMIC_RELAXED);
  pthread_join(th, NULL);
  assert_int_equal(hh__tlsf_allocator_check(), 0);
}

static void test_alignment_and_realloc_through_glue(void **state) {
  (void)state;
  init_with((size_t)8 << 20, (size_t)1 << 20);
  for (size_t align = 8; align <= ((size_t)1 << 20); align <<= 1) {
    void *p = A->alloc(1000, align);
    assert_non_null(p);
    assert_int_equal((uintptr_t)p % (align < 16 ? 16 : align), 0);
    assert_true(A->block_size(p) >= 1000);
    memset(p, 0x5A, 1000);
    void *wall = A->alloc(16, 1);
    void *q = A->realloc(p, 50000);
    assert_non_null(q);
    for (int i = 0; i < 1000; i++) assert_int_equal(((unsigned char *)q)[i], 0x5A);
    A->dealloc(q);
    A->dealloc(wall);
  }
  unsigned char *z = A->alloc_zeroed(4000);
  for (int i = 0; i < 4000; i++) assert_int_equal(z[i], 0);
  A->dealloc(z);
  assert_int_equal(hh__tlsf_allocator_check(), 0);
}

/* fork while another thread allocates: the child must be able to allocate
 * (the PI mutex is re-created in the child, not unlocked). */
static int churn_stop; /* atomic */

static void *churn(void *arg) {
  (void)arg;
  while (!__atomic_load_n(&churn_stop, __ATOMIC_RELAXED)) {
    void *p = A->alloc(64, 1);
    A->dealloc(p);
  }
  return NULL;
}

static void test_fork_while_allocating(void **state) {
  (void)state;
  init_with((size_t)1 << 20, (size_t)1 << 20);
  __atomic_store_n(&churn_stop, 0, __ATOMIC_RELAXED);
  pthread_t th;
  assert_int_equal(pthread_create(&th, NULL, churn, NULL), 0);
  for (int i = 0; i < 50; i++) {
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
      alarm(10);
      void *p = A->alloc(128, 1);
      A->dealloc(p);
      _exit(p != NULL && hh__tlsf_allocator_check() == 0 ? 0 : 1);
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
  }
  __atomic_store_n(&churn_stop, 1, __ATOMIC_RELAXED);
  pthread_join(th, NULL);
  assert_int_equal(hh__tlsf_allocator_check(), 0);
}

/* The allocator's HEAPHOOK_STATS report, as a string. */
static void read_report(char *buf, size_t size) {
  char path[] = "/tmp/hh_tlsf_report_XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  unlink(path);
  A->report(fd);
  ssize_t n = pread(fd, buf, size - 1, 0);
  close(fd);
  assert_true(n > 0);
  buf[n] = '\0';
}

static void test_report_lists_growths_and_fragmentation(void **state) {
  (void)state;
  init_with(page, page);
  fill_pool(page);
  void *big = A->alloc(10 * page, 1);
  char buf[2048];
  read_report(buf, sizeof buf);
  assert_non_null(strstr(buf, "  growths: 5\n"));
  assert_non_null(strstr(buf, "  pools: 6\n"));
  char line[128];
  snprintf(line, sizeof line, "  pool bytes: %zu\n", 32 * page);
  assert_non_null(strstr(buf, line));
  snprintf(line, sizeof line, "  largest request: %zu\n", 10 * page);
  assert_non_null(strstr(buf, line));
  assert_non_null(strstr(buf, "  peak used: "));
  assert_non_null(strstr(buf, "  current used: "));
  assert_non_null(strstr(buf, "% (1 - largest free block / free bytes)\n"));
  A->dealloc(big);
}

/* "peak in pools" is what the pool held at the peak: 48 bytes of pool
 * overhead and each block with its 8-byte header, 32 bytes for a block of
 * 24 usable ones. "peak used" (the usable bytes) leaves the headers out:
 * a pool sized on it, with a quarter more, cannot hold the same blocks,
 * and one of "peak in pools" can. */
static void test_report_peak_in_pools_holds_the_peak(void **state) {
  (void)state;
  enum { N = 1000 };
  static void *blocks[N];
  init_with((size_t)1 << 20, 0);
  for (int i = 0; i < N; i++) assert_non_null(blocks[i] = A->alloc(24, 1));
  for (int i = 0; i < N; i++) A->dealloc(blocks[i]);
  char buf[2048];
  read_report(buf, sizeof buf);
  assert_non_null(strstr(buf, "  peak used: 24000\n"));
  assert_non_null(strstr(
      buf, "  peak in pools: 32048 (peak used with block headers: size INITIAL_MEMPOOL_SIZE from this)\n"));
  hh__tlsf_allocator_reset();
  init_with(24000 + 24000 / 4, 0);
  int fit = 0;
  while (fit < N && (blocks[fit] = A->alloc(24, 1)) != NULL) fit++;
  assert_true(fit < N);
  hh__tlsf_allocator_reset();
  init_with(32048, 0);
  for (int i = 0; i < N; i++) assert_non_null(A->alloc(24, 1));
  assert_int_equal(hh__tlsf_allocator_growths(), 0);
}

/* ---- Huge pages ---------------------------------------------------------- */

/* With huge pages on, a pool of 2 MiB or more starts on a 2 MiB boundary
 * (so the kernel can back it with huge pages), keeps its exact size, and
 * works like any other; a smaller pool is mapped as before. errno is kept. */
static void test_hugepage_pools_are_aligned(void **state) {
  (void)state;
  const size_t huge = (size_t)2 << 20;
  hh__tlsf_allocator_configure(2 * huge + 100, page);
  hh__tlsf_allocator_set_hugepages(true);
  errno = 1234;
  assert_int_equal(A->init(), 0);
  assert_int_equal(errno, 1234);
  size_t sizes[2];
  assert_int_equal(hh__tlsf_allocator_pool_sizes(sizes, 2), 1);
  assert_int_equal(sizes[0], 2 * huge + 100);
  char *p = A->alloc(100, 1);
  assert_non_null(p);
  assert_int_equal(((uintptr_t)p - 32) % huge, 0); /* pool header + block header */
  assert_true(A->owns(p));
  char *big = A->alloc(huge, 1);
  assert_non_null(big);
  memset(big, 0x11, huge);
  assert_true(A->owns(big + huge - 1));
  void *more = A->alloc(2 * huge, 1); /* does not fit: pages of additions */
  assert_non_null(more);
  assert_true(hh__tlsf_allocator_growths() > 0);
  assert_int_equal(errno, 1234);
  A->dealloc(more);
  A->dealloc(big);
  A->dealloc(p);
  assert_int_equal(hh__tlsf_allocator_check(), 0);
}

/* ---- The per-thread cache ---------------------------------------------- */

static void init_with_cache(void) {
  hh__tlsf_allocator_configure((size_t)1 << 20, 0);
  hh__tlsf_allocator_set_cache(true);
  assert_int_equal(A->init(), 0);
}

/* A freed small block is handed back to the next request of its size
 * class, without the lock; other sizes do not get it. */
static void test_cache_reuses_freed_block(void **state) {
  (void)state;
  init_with_cache();
  void *p = A->alloc(100, 1);
  A->dealloc(p);
  void *other = A->alloc(300, 1);
  assert_ptr_not_equal(other, p);
  void *q = A->alloc(97, 1); /* same 16-byte class as 100 */
  assert_ptr_equal(q, p);
  assert_true(A->block_size(q) >= 100);
  A->dealloc(q);
  A->dealloc(other);
  assert_int_equal(hh__tlsf_allocator_check(), 0);
}

/* At most 16 blocks per small class stay in a thread's cache; the rest go
 * back to the pools at once. */
static void test_cache_is_bounded(void **state) {
  (void)state;
  init_with_cache();
  size_t base = hh__tlsf_allocator_used_bytes();
  void *p[40];
  for (int i = 0; i < 40; i++) p[i] = A->alloc(64, 1);
  size_t block = hh__tlsf_allocator_used_bytes() - base;
  assert_int_equal(block % 40, 0);
  block /= 40;
  for (int i = 0; i < 40; i++) A->dealloc(p[i]);
  assert_int_equal(hh__tlsf_allocator_used_bytes() - base, 16 * block);
}

/* Medium blocks (521 B to 32 KiB requests) are cached too: a miss asks the
 * core for the class's lower bound (4 classes per power of two: ... 896,
 * 1024, 1280 ...), so a recycled block keeps that usable size, serves any
 * request of its class (897 to 1032 bytes), and no larger one. */
static void test_cache_recycles_medium_block_with_its_size(void **state) {
  (void)state;
  init_with_cache();
  void *p = A->alloc(1000, 1);
  assert_int_equal(A->block_size(p), 1024 + 8);
  memset(p, 0x5a, 1000);
  A->dealloc(p);
  void *big = A->alloc(1100, 1); /* class 1280: not p */
  assert_ptr_not_equal(big, p);
  assert_int_equal(A->block_size(big), 1280 + 8);
  void *q = A->alloc(1010, 1); /* class 1024 again */
  assert_ptr_equal(q, p);
  assert_int_equal(A->block_size(q), 1024 + 8);
  memset(q, 0xa5, A->block_size(q));
  A->dealloc(q);
  assert_ptr_equal(A->alloc(1032, 1), p); /* the largest request of the class */
  A->dealloc(p);
  A->dealloc(big);
  assert_int_equal(hh__tlsf_allocator_check(), 0);
}

/* The report's largest request counts the requests the cache served too:
 * 1032 bytes, served by the cached block the core gave for 1000 (class
 * 1024), was not in it. */
static void test_report_largest_request_served_by_cache(void **state) {
  (void)state;
  init_with_cache();
  void *p = A->alloc(1000, 1);
  A->dealloc(p);
  void *q = A->alloc(1032, 1);
  assert_ptr_equal(q, p); /* from the cache */
  char buf[2048];
  read_report(buf, sizeof buf);
  assert_non_null(strstr(buf, "  largest request: 1032\n"));
  A->dealloc(q);
}

/* A thread's cache holds at most HH_TLSF_CACHE_MAX_BYTES of payload: 8
 * blocks of each of the 24 medium classes (1.6 MiB) do not all stay. */
static void test_cache_byte_bound(void **state) {
  (void)state;
  hh__tlsf_allocator_configure((size_t)16 << 20, 0);
  hh__tlsf_allocator_set_cache(true);
  assert_int_equal(A->init(), 0);
  size_t base = hh__tlsf_allocator_used_bytes();
  enum { CLASSES = 24, EACH = 8 };
  void *p[CLASSES * EACH];
  size_t total = 0;
  for (unsigned c = 0; c < CLASSES; c++) {
    unsigned k = c + 1, m = k / 4 + 9;
    size_t bound = (size_t)(4 + k % 4) << (m - 2); /* 640, 768, ... 32768 */
    for (unsigned i = 0; i < EACH; i++) {
      p[c * EACH + i] = A->alloc(bound + 8, 1);
      assert_non_null(p[c * EACH + i]);
      assert_int_equal(A->block_size(p[c * EACH + i]), bound + 8);
      total += bound + 8;
    }
  }
  assert_true(total > HH_TLSF_CACHE_MAX_BYTES + HH_TLSF_CACHE_MAX_BYTES / 2);
  assert_int_equal(hh__tlsf_allocator_used_bytes() - base, total);
  for (unsigned i = 0; i < CLASSES * EACH; i++) A->dealloc(p[i]);
  size_t cached = hh__tlsf_allocator_used_bytes() - base;
  assert_true(cached <= HH_TLSF_CACHE_MAX_BYTES + 8 * CLASSES * EACH);
  assert_true(cached >= HH_TLSF_CACHE_MAX_BYTES / 2);
  assert_int_equal(hh__tlsf_allocator_check(), 0);
}

/* The cache's rounding of a medium request never makes an allocation fail
 * that the exact size would satisfy: one page (a free block of 4048 bytes)
 * and no growth; a 4008-byte request rounds to the 4096 class, which does
 * not fit, so the exact size is used. */
static void test_cache_rounding_falls_back_to_exact_size(void **state) {
  (void)state;
  hh__tlsf_allocator_configure(page, 0);
  hh__tlsf_allocator_set_cache(true);
  assert_int_equal(A->init(), 0);
  void *p = A->alloc(page - 88, 1);
  assert_non_null(p);
  assert_true(A->block_size(p) >= page - 88);
  A->dealloc(p);
  assert_int_equal(hh__tlsf_allocator_check(), 0);
}

static void *free_in_thread(void *arg) {
  void **p = arg;
  for (int i = 0; i < 6; i++) A->dealloc(p[i]);
  return NULL;
}

/* A thread's cached blocks (small and medium) go back to the pools when it
 * exits. */
static void test_cache_flushed_at_thread_exit(void **state) {
  (void)state;
  init_with_cache();
  size_t base = hh__tlsf_allocator_used_bytes();
  void *p[6];
  for (int i = 0; i < 6; i++) p[i] = A->alloc(i < 3 ? 48 : 3000, 1);
  assert_true(hh__tlsf_allocator_used_bytes() > base);
  pthread_t t;
  assert_int_equal(pthread_create(&t, NULL, free_in_thread, p), 0);
  assert_int_equal(pthread_join(t, NULL), 0);
  assert_int_equal(hh__tlsf_allocator_used_bytes(), base);
  assert_int_equal(hh__tlsf_allocator_check(), 0);
}

/* Allocates 8 blocks each of 4 medium sizes and frees them all: about
 * 800 KB, of which the cache keeps what its bound allows, scattered over
 * the pool between the blocks that went back. */
static void free_medium_blocks_into_cache(void) {
  static const size_t sizes[4] = {32000, 28000, 24000, 20000};
  void *p[32];
  for (int i = 0; i < 32; i++) assert_non_null(p[i] = A->alloc(sizes[i / 8], 1));
  for (int i = 0; i < 32; i++) A->dealloc(p[i]);
}

/* A request the pools cannot hold while the calling thread's cache holds
 * blocks: the cache goes back to the pools and the request is served from
 * them, with a fixed pool (before: NULL, ENOMEM) and with growth on
 * (before: a growth it did not need). */
static void test_cache_given_back_before_failing_or_growing(void **state) {
  (void)state;
  for (int grow = 0; grow < 2; grow++) {
    hh__tlsf_allocator_configure((size_t)2 << 20, grow ? (size_t)2 << 20 : 0);
    hh__tlsf_allocator_set_cache(true);
    assert_int_equal(A->init(), 0);
    size_t base = hh__tlsf_allocator_used_bytes();
    free_medium_blocks_into_cache();
    assert_true(hh__tlsf_allocator_used_bytes() > base); /* the cache holds some */
    errno = 0;
    void *big = A->alloc(1500000, 1);
    assert_non_null(big);
    assert_int_equal(errno, 0);
    assert_int_equal(hh__tlsf_allocator_growths(), 0);
    assert_int_equal(hh__tlsf_allocator_used_bytes() - base, A->block_size(big));
    A->dealloc(big);
    assert_int_equal(hh__tlsf_allocator_check(), 0);
  }
}

/* A realloc that can grow only into its successor while that successor is
 * in the calling thread's cache: the cache goes back to the pools and the
 * block grows in place, its content kept, with a fixed pool and with growth
 * on. A fresh 2 MiB pool holds p and q (2048-byte blocks), a block of
 * 2000000 bytes (freed: to the core) and a free tail; q is cached. The new
 * size, 2090000, rounds up past every free block's class even once q has
 * gone back (2095040 bytes with its free neighbour), but p, q and the rest
 * together hold it. Before, the realloc failed with ENOMEM from the fixed
 * pool, and with growth on mapped two pools it did not need. */
static void test_cache_given_back_before_realloc_fails_or_grows(void **state) {
  (void)state;
  for (int grow = 0; grow < 2; grow++) {
    hh__tlsf_allocator_configure((size_t)2 << 20, grow ? (size_t)2 << 20 : 0);
    hh__tlsf_allocator_set_cache(true);
    assert_int_equal(A->init(), 0);
    unsigned char *p = A->alloc(2000, 1), *q = A->alloc(2000, 1);
    assert_non_null(p);
    assert_ptr_equal(q, p + A->block_size(p) + 8); /* q right after p */
    void *rest = A->alloc(2000000, 1);
    assert_non_null(rest);
    A->dealloc(rest);
    A->dealloc(q); /* into the cache: p's successor stays used to the core */
    for (size_t i = 0; i < 2000; i++) p[i] = (unsigned char)(i * 7);
    errno = 0;
    unsigned char *r = A->realloc(p, 2090000);
    assert_ptr_equal(r, p);
    assert_int_equal(errno, 0);
    assert_true(A->block_size(r) >= 2090000);
    for (size_t i = 0; i < 2000; i++) assert_int_equal(r[i], (unsigned char)(i * 7));
    assert_int_equal(hh__tlsf_allocator_growths(), 0);
    A->dealloc(r);
    assert_int_equal(hh__tlsf_allocator_check(), 0);
  }
}

/* A program's pthread key, younger than the allocator's: glibc runs the
 * allocator's destructor (which gives the cache back) first in each round. */
static pthread_key_t program_key;
static __thread int rounds_left;

static void free_blocks_of_key(void *arg) {
  void **p = arg;
  for (int i = 0; i < 6; i++) A->dealloc(p[i]);
}

/* Sets the key again until glibc's last round, then frees the block. */
static void free_in_last_round(void *block) {
  if (--rounds_left > 0) {
    pthread_setspecific(program_key, block);
    return;
  }
  A->dealloc(block);
}

static void *leave_blocks_to_key(void *arg) {
  void **p = arg;
  for (int i = 0; i < 6; i++) p[i] = A->alloc(i < 3 ? 48 : 3000, 1);
  A->dealloc(A->alloc(48, 1)); /* the cache holds a block: it is armed */
  pthread_setspecific(program_key, p);
  return NULL;
}

static void *leave_block_to_last_round(void *arg) {
  (void)arg;
  rounds_left = PTHREAD_DESTRUCTOR_ITERATIONS;
  pthread_setspecific(program_key, A->alloc(48, 1)); /* and frees nothing itself */
  return NULL;
}

static void run_thread_with_key(void *(*body)(void *), void (*destructor)(void *), void *arg) {
  assert_int_equal(pthread_key_create(&program_key, destructor), 0);
  pthread_t t;
  assert_int_equal(pthread_create(&t, NULL, body, arg), 0);
  assert_int_equal(pthread_join(t, NULL), 0);
  assert_int_equal(pthread_key_delete(program_key), 0);
}

/* Blocks a program's key destructor frees, after the allocator's own
 * destructor has given the exiting thread's cache back, go to the pools:
 * in the first round, and in the last, by a thread that freed nothing
 * before. Before, they went into the dead thread's cache and were lost. */
static void test_cache_frees_in_key_destructors_reach_pools(void **state) {
  (void)state;
  init_with_cache();
  size_t base = hh__tlsf_allocator_used_bytes();
  void *p[6];
  run_thread_with_key(leave_blocks_to_key, free_blocks_of_key, p);
  assert_int_equal(hh__tlsf_allocator_used_bytes(), base);
  run_thread_with_key(leave_block_to_last_round, free_in_last_round, NULL);
  assert_int_equal(hh__tlsf_allocator_used_bytes(), base);
  assert_int_equal(hh__tlsf_allocator_check(), 0);
}

static void child_cached_double_free(void) {
  init_with_cache();
  void *p = A->alloc(32, 1);
  A->dealloc(p);
  A->dealloc(p);
  _exit(0);
}

static void child_cached_medium_double_free(void) {
  init_with_cache();
  void *p = A->alloc(5000, 1);
  A->dealloc(p);
  A->dealloc(p);
  _exit(0);
}

/* Freed by one thread (into its cache), freed again by another: before,
 * only the freeing thread's own bin was searched, and the block went into
 * a second cache, to be handed out twice. */
static void *free_once(void *arg) {
  A->dealloc(arg);
  return NULL;
}

static void child_cross_thread_double_free(void) {
  init_with_cache();
  void *p = A->alloc(48, 1);
  pthread_t t;
  if (pthread_create(&t, NULL, free_once, p) != 0 || pthread_join(t, NULL) != 0) _exit(3);
  A->dealloc(p); /* t's cache has gone back to the pools at its exit: TLSF's own check */
  _exit(0);
}

static void *free_once_and_wait(void *arg) {
  void **shared = arg;
  A->dealloc(shared[0]);
  __atomic_store_n((int *)shared[1], 1, __ATOMIC_RELEASE);
  while (__atomic_load_n((int *)shared[1], __ATOMIC_ACQUIRE) != 2) sched_yield();
  return NULL;
}

/* The block is in the other thread's cache (that thread still runs) when
 * it is freed again, or realloc'ed. */
static void child_cached_elsewhere(bool realloc_it) {
  init_with_cache();
  void *p = A->alloc(realloc_it ? 48 : 5000, 1);
  int flag = 0;
  void *shared[2] = {p, &flag};
  pthread_t t;
  if (pthread_create(&t, NULL, free_once_and_wait, shared) != 0) _exit(3);
  while (__atomic_load_n(&flag, __ATOMIC_ACQUIRE) != 1) sched_yield();
  if (realloc_it)
    A->realloc(p, 64);
  else
    A->dealloc(p);
  _exit(0);
}

static void child_cached_elsewhere_free(void) { child_cached_elsewhere(false); }
static void child_cached_elsewhere_realloc(void) { child_cached_elsewhere(true); }

static void test_cache_cross_thread_double_free_aborts(void **state) {
  (void)state;
  expect_double_free_abort(child_cross_thread_double_free);
  expect_double_free_abort(child_cached_elsewhere_free);
  expect_double_free_abort(child_cached_elsewhere_realloc);
}

/* A second free of a block still in the cache is caught, as TLSF catches a
 * second free of a block back in the pools. */
static void test_cache_double_free_aborts(void **state) {
  (void)state;
  expect_double_free_abort(child_cached_double_free);
  expect_double_free_abort(child_cached_medium_double_free);
}

int main(void) {
  A = hh__tlsf_allocator_get();
  page = (size_t)sysconf(_SC_PAGESIZE);
  const struct CMUnitTest tests[] = {
#define T_(f) cmocka_unit_test_teardown(f, teardown)
      T_(test_growth_doubles_additions_until_request_fits),
      T_(test_growth_readme_example_100_bytes),
      T_(test_growth_goes_on_past_the_pool_table),
      T_(test_no_growth_when_additional_is_zero),
      T_(test_growth_keeps_errno),
      T_(test_huge_request_returns_null),
      T_(test_bad_env_values_stop_with_one_line),
      T_(test_env_sizes_with_suffixes_and_defaults),
      T_(test_mmap_failure_returns_null),
      T_(test_double_free_aborts_with_message),
      T_(test_owns_only_pool_addresses),
      T_(test_owns_with_many_pools),
      T_(test_owns_during_growth),
      T_(test_alignment_and_realloc_through_glue),
      T_(test_fork_while_allocating),
      T_(test_report_lists_growths_and_fragmentation),
      T_(test_report_peak_in_pools_holds_the_peak),
      T_(test_report_largest_request_served_by_cache),
      T_(test_hugepage_pools_are_aligned),
      T_(test_cache_reuses_freed_block),
      T_(test_cache_is_bounded),
      T_(test_cache_recycles_medium_block_with_its_size),
      T_(test_cache_byte_bound),
      T_(test_cache_rounding_falls_back_to_exact_size),
      T_(test_cache_flushed_at_thread_exit),
      T_(test_cache_frees_in_key_destructors_reach_pools),
      T_(test_cache_given_back_before_failing_or_growing),
      T_(test_cache_given_back_before_realloc_fails_or_grows),
      T_(test_no_spin_on_one_cpu),
      T_(test_cache_double_free_aborts),
      T_(test_cache_cross_thread_double_free_aborts),
#undef T_
  };
  return cmocka_run_group_tests_name("tlsf_allocator", tests, NULL, NULL);
}
