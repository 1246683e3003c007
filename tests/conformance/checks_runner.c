/* The conformance runner: selects checks, runs each (in a forked child by
 * default, so a crash, an abort, a hang or a runaway memory use becomes that
 * check's FAIL line and the rest still run), prints the result lines and the
 * summary; plus the helpers the checks share (failure recording, random
 * numbers, patterns). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "conformance.h"

/* Fixed by default so that a failure reproduces; HH_CONFORMANCE_SEED varies
 * it. */
#define DEFAULT_SEED 0x5eed0fc0ffee1234ull
#define DEFAULT_TIMEOUT_S 120
/* Resident-memory limit of a forked check. The suite itself peaks near
 * 20 MiB (natively and under ASan); an allocator that answers an impossible
 * size by growing and touching its pool (instead of returning NULL) would
 * otherwise run the machine into the OOM killer. */
#define DEFAULT_MAX_RSS_MB 2048

static const struct hh_check *const all_tables[] = {
    hh_checks_semantics, hh_checks_alignment, hh_checks_content,
    hh_checks_random,    hh_checks_threads,   hh_checks_libc,
};

/* ---- shared helpers ---------------------------------------------------- */

int hh_fail(struct hh_ctx *c, const char *fmt, ...) {
  pthread_mutex_lock(&c->lock);
  if (c->failures++ == 0) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->message, sizeof c->message, fmt, ap);
    va_end(ap);
  }
  pthread_mutex_unlock(&c->lock);
  return 0;
}

unsigned hh_failed(struct hh_ctx *c) {
  pthread_mutex_lock(&c->lock);
  unsigned n = c->failures;
  pthread_mutex_unlock(&c->lock);
  return n;
}

size_t hh_iterations(const struct hh_ctx *c, size_t full_n, size_t quick_n) {
  return c->quick ? quick_n : full_n;
}

void hh_rng_init(struct hh_rng *r, uint64_t seed, uint64_t salt) {
  r->s = seed ^ (salt * 0xd1342543de82ef95ull);
}

uint64_t hh_rng_next(struct hh_rng *r) {
  uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

size_t hh_rng_below(struct hh_rng *r, size_t n) { return (size_t)(hh_rng_next(r) % n); }

size_t hh_rng_size(struct hh_rng *r, size_t max) {
  unsigned bits = 0;
  while (bits < 63 && ((size_t)1 << (bits + 1)) <= max) bits++;
  size_t top = (size_t)1 << hh_rng_below(r, bits + 1); /* 1 .. 2^bits */
  size_t n = 1 + hh_rng_below(r, top * 2);
  return n > max ? max : n;
}

/* One 8-byte word of the pattern: word k of a block tagged tag. */
static inline uint64_t pattern_word(uint64_t tag, size_t k) {
  uint64_t x = (tag ^ 0x6a09e667f3bcc909ull) + (uint64_t)k * 0x9e3779b97f4a7c15ull;
  x ^= x >> 31;
  x *= 0xbf58476d1ce4e5b9ull;
  return x ^ (x >> 29);
}

unsigned hh_pattern_byte(uint64_t tag, size_t i) {
  uint64_t w = pattern_word(tag, i / 8);
  unsigned char b[8];
  memcpy(b, &w, 8);
  return b[i % 8];
}

void hh_fill(void *p, size_t n, uint64_t tag) {
  unsigned char *q = p;
  size_t words = n / 8;
  for (size_t k = 0; k < words; k++) {
    uint64_t w = pattern_word(tag, k);
    memcpy(q + 8 * k, &w, 8);
  }
  for (size_t i = words * 8; i < n; i++) q[i] = (unsigned char)hh_pattern_byte(tag, i);
}

size_t hh_verify(const void *p, size_t n, uint64_t tag) {
  const unsigned char *q = p;
  size_t words = n / 8;
  for (size_t k = 0; k < words; k++) {
    uint64_t w = pattern_word(tag, k), got;
    memcpy(&got, q + 8 * k, 8);
    if (got != w) {
      for (size_t i = 8 * k;; i++)
        if (q[i] != hh_pattern_byte(tag, i)) return i;
    }
  }
  for (size_t i = words * 8; i < n; i++)
    if (q[i] != hh_pattern_byte(tag, i)) return i;
  return SIZE_MAX;
}

size_t hh_first_nonzero(const void *p, size_t n) {
  const unsigned char *q = p;
  size_t words = n / 8;
  for (size_t k = 0; k < words; k++) {
    uint64_t got;
    memcpy(&got, q + 8 * k, 8);
    if (got != 0) {
      for (size_t i = 8 * k;; i++)
        if (q[i] != 0) return i;
    }
  }
  for (size_t i = words * 8; i < n; i++)
    if (q[i] != 0) return i;
  return SIZE_MAX;
}

size_t hh_alignment_of(const void *p) {
  uintptr_t a = (uintptr_t)p;
  return a == 0 ? (size_t)1 << 63 : (size_t)(a & -a);
}

size_t hh_next_pow2(size_t x) {
  size_t p = 1;
  while (p < x) p <<= 1;
  return p;
}

/* ---- running ----------------------------------------------------------- */

static int env_flag(const char *name, int dflt) {
  const char *v = getenv(name);
  if (v == NULL || *v == '\0') return dflt;
  return !(strcmp(v, "0") == 0 || strcasecmp(v, "false") == 0 || strcasecmp(v, "off") == 0 ||
           strcasecmp(v, "no") == 0);
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void ctx_init(struct hh_ctx *c, const struct hh_api *api, int quick, uint64_t seed) {
  memset(c, 0, sizeof *c);
  c->api = api;
  c->quick = quick;
  c->seed = seed;
  long pg = sysconf(_SC_PAGESIZE);
  c->page = pg > 0 ? (size_t)pg : 4096;
  pthread_mutex_init(&c->lock, NULL);
}

/* Runs the check here and writes its result line (no newline) to line. */
static int run_here(const struct hh_check *chk, const struct hh_api *api, int quick, uint64_t seed,
                    char *line, size_t cap) {
  struct hh_ctx c;
  ctx_init(&c, api, quick, seed);
  chk->fn(&c);
  int ok = c.failures == 0;
  if (ok)
    snprintf(line, cap, "ok %s", chk->name);
  else if (c.failures == 1)
    snprintf(line, cap, "FAIL %s: %s", chk->name, c.message);
  else
    snprintf(line, cap, "FAIL %s: %s (and %u more failures)", chk->name, c.message, c.failures - 1);
  pthread_mutex_destroy(&c.lock);
  return ok;
}

/* Resident set size of process pid in MiB, or 0 when unknown. Read with
 * read(2) from /proc/<pid>/statm (second field, in pages). */
static size_t rss_mb(pid_t pid) {
  char path[64], buf[128];
  snprintf(path, sizeof path, "/proc/%d/statm", (int)pid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return 0;
  buf[n] = '\0';
  unsigned long long size_pages = 0, rss_pages = 0;
  if (sscanf(buf, "%llu %llu", &size_pages, &rss_pages) != 2) return 0;
  long pg = sysconf(_SC_PAGESIZE);
  return (size_t)(rss_pages * (unsigned long long)(pg > 0 ? pg : 4096) >> 20);
}

/* Runs the check in a child; the child sends its result line through a pipe
 * and exits normally (so atexit work such as a sanitizer's leak check still
 * runs and can fail the check). While waiting, the parent polls the child's
 * resident size and kills it beyond max_rss_mb. */
static int run_forked(const struct hh_check *chk, const struct hh_api *api, int quick, uint64_t seed,
                      unsigned timeout_s, size_t max_rss_mb, char *line, size_t cap) {
  int fds[2];
  if (pipe(fds) != 0) {
    snprintf(line, cap, "FAIL %s: pipe: %s", chk->name, strerror(errno));
    return 0;
  }
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    snprintf(line, cap, "FAIL %s: fork: %s", chk->name, strerror(errno));
    return 0;
  }
  if (pid == 0) {
    close(fds[0]);
    alarm(timeout_s);
    char buf[1024];
    int ok = run_here(chk, api, quick, seed, buf, sizeof buf);
    size_t len = strlen(buf), off = 0;
    while (off < len) {
      ssize_t w = write(fds[1], buf + off, len - off);
      if (w <= 0) break;
      off += (size_t)w;
    }
    close(fds[1]);
    exit(ok ? 0 : 1);
  }
  close(fds[1]);
  size_t got = 0, killed_at_mb = 0;
  for (;;) {
    struct pollfd pfd = {.fd = fds[0], .events = POLLIN};
    int pr = poll(&pfd, 1, 20);
    if (pr == 0 || (pr < 0 && errno == EINTR)) {
      size_t mb = rss_mb(pid);
      if (killed_at_mb == 0 && mb > max_rss_mb) {
        killed_at_mb = mb;
        kill(pid, SIGKILL);
      }
      continue;
    }
    if (pr < 0) break;
    ssize_t r = read(fds[0], line + got, cap - 1 - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    got += (size_t)r;
    if (got == cap - 1) break;
  }
  line[got] = '\0';
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  int reported_ok = strncmp(line, "ok ", 3) == 0;
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && reported_ok) return 1;
  if (got > 0 && !reported_ok && WIFEXITED(status) && WEXITSTATUS(status) == 1)
    return 0; /* an ordinary FAIL line */
  /* The child died, or its exit status disagrees with what it reported. */
  char what[160];
  if (killed_at_mb != 0) {
    snprintf(what, sizeof what,
             "killed: resident memory reached %zu MiB "
             "(limit %zu MiB, HH_CONFORMANCE_MAX_RSS_MB)",
             killed_at_mb, max_rss_mb);
  } else if (WIFSIGNALED(status)) {
    int sig = WTERMSIG(status);
    if (sig == SIGALRM)
      snprintf(what, sizeof what, "timed out after %u s", timeout_s);
    else
      snprintf(what, sizeof what, "killed by signal %d (%s)", sig, strsignal(sig));
  } else {
    snprintf(what, sizeof what, "exited with status %d", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  }
  if (got == 0)
    snprintf(line, cap, "FAIL %s: %s before reporting (see stderr)", chk->name, what);
  else if (reported_ok)
    snprintf(line, cap, "FAIL %s: passed, then %s (see stderr)", chk->name, what);
  else {
    size_t l = strlen(line);
    snprintf(line + l, cap - l, "; then %s", what);
  }
  return 0;
}

int hh_conformance_run(const struct hh_api *api, const char *label, int argc, char **argv) {
  const char *filter = argc > 1 ? argv[1] : NULL;
  int quick = env_flag("HH_CONFORMANCE_QUICK", 0);
  int isolate = env_flag("HH_CONFORMANCE_FORK", 1);
  uint64_t seed = DEFAULT_SEED;
  const char *s = getenv("HH_CONFORMANCE_SEED");
  if (s != NULL && *s != '\0') seed = strtoull(s, NULL, 0);
  unsigned timeout_s = DEFAULT_TIMEOUT_S;
  const char *t = getenv("HH_CONFORMANCE_TIMEOUT");
  if (t != NULL && atoi(t) > 0) timeout_s = (unsigned)atoi(t);
  size_t max_rss = DEFAULT_MAX_RSS_MB;
  const char *m = getenv("HH_CONFORMANCE_MAX_RSS_MB");
  if (m != NULL && atol(m) > 0) max_rss = (size_t)atol(m);

  printf("# conformance %s: seed=0x%llx quick=%d fork=%d%s%s\n", label, (unsigned long long)seed, quick,
         isolate, filter ? " filter=" : "", filter ? filter : "");
  fflush(stdout);

  unsigned passed = 0, failed = 0;
  double t0 = now_s();
  for (size_t ti = 0; ti < sizeof all_tables / sizeof all_tables[0]; ti++) {
    for (const struct hh_check *chk = all_tables[ti]; chk->name; chk++) {
      if (filter && strstr(chk->name, filter) == NULL) continue;
      char line[1024];
      int ok = isolate ? run_forked(chk, api, quick, seed, timeout_s, max_rss, line, sizeof line)
                       : run_here(chk, api, quick, seed, line, sizeof line);
      if (ok)
        passed++;
      else
        failed++;
      printf("%s\n", line);
      fflush(stdout);
    }
  }
  printf("# %.2f s\n", now_s() - t0);
  printf("%u passed, %u failed\n", passed, failed);
  fflush(stdout);
  if (passed + failed == 0) {
    fprintf(stderr, "conformance: no check name contains \"%s\"\n", filter ? filter : "");
    return 2;
  }
  return failed ? 1 : 0;
}
