/* The allocator conformance suite: checks of glibc's malloc-family semantics
 * written against a table of entry points, so the same checks run
 *   - in hh_conformance, which calls the real libc names (plain glibc is the
 *     reference; the same binary runs with LD_PRELOAD of each heaphook
 *     library), and
 *   - in conformance_direct_<name>, linked against the hook layer's hh__*
 *     functions under ASan+UBSan.
 * Every run must agree: a check that fails on plain glibc is a wrong check.
 *
 * Output: one line per check, `ok <name>` or `FAIL <name>: <what>`, then
 * `N passed, M failed`; the exit status is non-zero on any failure.
 * argv[1], when given, runs only the checks whose name contains it.
 *
 * Environment:
 *   HH_CONFORMANCE_QUICK=1     fewer iterations (random sizes, churn, threads)
 *   HH_CONFORMANCE_SEED=N      seed of the random checks (default fixed)
 *   HH_CONFORMANCE_FORK=0      run checks in-process (default: each check in a
 *                              forked child, so a crash or a hang fails that
 *                              check instead of killing the run)
 *   HH_CONFORMANCE_TIMEOUT=S   per-check limit in seconds when forking (120)
 *   HH_CONFORMANCE_MAX_RSS_MB=M  per-check resident-memory limit when forking
 *                              (2048): a check past it is killed and fails
 */
#ifndef HH_CONFORMANCE_H
#define HH_CONFORMANCE_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

/* The entry points under test, with glibc's signatures. */
struct hh_api {
  void *(*malloc)(size_t);
  void (*free)(void *);
  void *(*calloc)(size_t, size_t);
  void *(*realloc)(void *, size_t);
  void *(*reallocarray)(void *, size_t, size_t);
  int (*posix_memalign)(void **, size_t, size_t);
  void *(*aligned_alloc)(size_t, size_t);
  void *(*memalign)(size_t, size_t);
  void *(*valloc)(size_t);
  void *(*pvalloc)(size_t);
  size_t (*malloc_usable_size)(void *);
  /* 1 when these are the libc names themselves (hh_conformance): blocks
   * that glibc makes for the program (strdup...) are then theirs too. */
  int libc_names;
};

/* Runs the suite (or the checks selected by argv[1]) against api and returns
 * the process exit status: 0 when every selected check passed, 1 when one
 * failed, 2 when the filter selected no check. label names the run in the
 * first output line. */
int hh_conformance_run(const struct hh_api *api, const char *label, int argc, char **argv);

/* ------------------------------------------------------------------------
 * Below: the framework shared by checks_*.c. Not for the front ends.
 * ------------------------------------------------------------------------ */

/* What a check gets. failures and message are written by hh_fail only (it
 * is thread-safe: checks may fail from worker threads). */
struct hh_ctx {
  const struct hh_api *api;
  int quick;     /* HH_CONFORMANCE_QUICK: scale iterations down */
  uint64_t seed; /* base seed of this run's random checks */
  size_t page;   /* the page size */
  pthread_mutex_t lock;
  unsigned failures; /* number of hh_fail calls */
  char message[512]; /* the first failure's text */
};

typedef void (*hh_check_fn)(struct hh_ctx *c);

struct hh_check {
  const char *name;
  hh_check_fn fn;
};

/* The check tables, one per topic file, each ended by {NULL, NULL}. */
extern const struct hh_check hh_checks_semantics[];
extern const struct hh_check hh_checks_alignment[];
extern const struct hh_check hh_checks_content[];
extern const struct hh_check hh_checks_random[];
extern const struct hh_check hh_checks_threads[];
extern const struct hh_check hh_checks_libc[];

/* Records a failure (the first one's text is what the FAIL line shows; the
 * rest are counted). Returns 0 so it can end an expression. */
int hh_fail(struct hh_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* 1 when cond holds; otherwise records the failure and gives 0:
 *   if (!HH_EXPECT(c, p != NULL, "malloc(%zu) returned NULL", n)) return; */
#define HH_EXPECT(c, cond, ...) ((cond) ? 1 : hh_fail((c), __VA_ARGS__))

/* Number of failures so far; loops use it to stop early once something broke
 * (the first message is the one that matters). */
unsigned hh_failed(struct hh_ctx *c);

/* quick ? quick_n : full_n. */
size_t hh_iterations(const struct hh_ctx *c, size_t full_n, size_t quick_n);

/* Deterministic random numbers (splitmix64); a check seeds its own stream
 * from c->seed and a per-check salt, so checks do not depend on each other's
 * order. */
struct hh_rng {
  uint64_t s;
};
void hh_rng_init(struct hh_rng *r, uint64_t seed, uint64_t salt);
uint64_t hh_rng_next(struct hh_rng *r);
/* Uniform in [0, n), n > 0. */
size_t hh_rng_below(struct hh_rng *r, size_t n);
/* A size in [1, max] spread evenly over orders of magnitude, so small and
 * large blocks both appear in a thousand draws. */
size_t hh_rng_size(struct hh_rng *r, size_t max);

/* The content pattern: byte i of a block tagged t is a function of (t, i), so
 * a prefix kept by realloc can be verified after a move, and two blocks with
 * different tags never look alike. */
void hh_fill(void *p, size_t n, uint64_t tag);
/* Offset of the first byte of p[0, n) that differs from the pattern, or
 * SIZE_MAX when all match. */
size_t hh_verify(const void *p, size_t n, uint64_t tag);
/* Offset of the first non-zero byte of p[0, n), or SIZE_MAX. */
size_t hh_first_nonzero(const void *p, size_t n);
/* The byte the pattern puts at offset i (for failure messages). */
unsigned hh_pattern_byte(uint64_t tag, size_t i);

/* Alignment tests. */
static inline int hh_aligned(const void *p, size_t align) { return ((uintptr_t)p & (align - 1)) == 0; }
/* The largest power of two dividing the address (for messages). */
size_t hh_alignment_of(const void *p);
/* The smallest power of two >= x (x <= SIZE_MAX / 2 + 1); 1 for 0. */
size_t hh_next_pow2(size_t x);

/* A slot of the random-operation workloads (checks_random.c, used by the
 * single-threaded churn and the multi-threaded stress): an empty slot (p ==
 * NULL) or a live block whose first size bytes hold the pattern of tag and
 * whose address is a multiple of align (0: no alignment was asked for). busy is the claim flag of the
 * threaded stress (0 free, 1 claimed), touched only with __atomic builtins. */
struct hh_slot {
  int busy;
  void *p;
  size_t size;
  size_t align;
  uint64_t tag;
};
/* One random operation on a claimed slot: an empty slot gets a new block
 * from a random entry point (checked: alignment, usable size, zeros for
 * calloc) filled with the pattern of new_tag; a live slot is verified and
 * then freed or resized (prefix verified, refilled with new_tag). */
void hh_slot_op(struct hh_ctx *c, struct hh_rng *r, struct hh_slot *s, uint64_t new_tag);
/* Verifies and frees a live slot's block; leaves the slot empty. */
void hh_slot_clear(struct hh_ctx *c, struct hh_slot *s);

/* The errno value checks plant before a call that must not touch errno. */
#define HH_ERRNO_SENTINEL 12345

#endif
