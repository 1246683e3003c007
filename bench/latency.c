/* hh_bench_latency: per-call latency of malloc and free under churn.
 *
 *   hh_bench_latency [--label NAME] [--threads T] [--iters N] [--warmup N]
 *                    [--slots N] [--seed S] [--classes]
 *
 * Each thread has its own working set of --slots blocks (no cross-thread
 * frees). A thread fills its working set, runs --warmup untimed replace steps,
 * waits at a barrier, then runs --iters measured steps: free of the block in a
 * random slot, malloc of a random size into it, each call bracketed by
 * rdtscp+lfence. Samples are stored in TSC cycles in buffers that are mmap'ed
 * and pre-faulted before the measured phase; cycles are converted to ns with a
 * calibration against CLOCK_MONOTONIC. Minor faults are counted with
 * getrusage(RUSAGE_THREAD) around each thread's measured phase and summed.
 * Each step also times an empty window (the timer around nothing): its tail
 * is the machine's noise floor (interrupts, preemption, the hypervisor).
 *
 * Output: one line of key=value pairs with the percentiles of all threads'
 * samples together (nearest rank), aggregate ops/s (calls of all threads /
 * wall time from the barrier to the last thread's end); with --classes also
 * one line per (operation, size class).
 */
#define _GNU_SOURCE
#include "workload.h"

#include <pthread.h>
#include <sys/resource.h>
#include <x86intrin.h>

static inline uint64_t tsc(void) {
  unsigned aux;
  uint64_t t = __rdtscp(&aux);
  _mm_lfence();
  return t;
}

struct thread_arg {
  unsigned id;
  uint64_t seed;
  size_t slots, iters, warmup;
  void **slot;
  unsigned char *slot_cls;
  uint32_t *mt, *ft, *nt; /* malloc / free / empty-window samples, cycles */
  unsigned char *mc, *fc; /* their size classes */
  double start, end;
  long minflt, majflt;
  int failed;
};

static pthread_barrier_t barrier;

static inline uint32_t sat32(uint64_t v) { return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v; }

static void *worker(void *p) {
  struct thread_arg *a = p;
  uint64_t rng = a->seed;
  unsigned cls;
  for (size_t i = 0; i < a->slots; i++) {
    size_t n = hhb_draw_size(&rng, &cls);
    a->slot[i] = malloc(n);
    if (!a->slot[i]) {
      a->failed = 1;
      return NULL;
    }
    hhb_touch(a->slot[i], n);
    a->slot_cls[i] = (unsigned char)cls;
  }
  for (size_t i = 0; i < a->warmup; i++) {
    size_t k = hhb_next(&rng) % a->slots;
    free(a->slot[k]);
    size_t n = hhb_draw_size(&rng, &cls);
    a->slot[k] = malloc(n);
    if (!a->slot[k]) {
      a->failed = 1;
      break;
    }
    hhb_touch(a->slot[k], n);
    a->slot_cls[k] = (unsigned char)cls;
  }
  pthread_barrier_wait(&barrier);
  if (a->failed) return NULL;

  struct rusage r0, r1;
  getrusage(RUSAGE_THREAD, &r0);
  a->start = hhb_now();
  for (size_t i = 0; i < a->iters; i++) {
    size_t k = hhb_next(&rng) % a->slots;
    void *old = a->slot[k];
    a->fc[i] = a->slot_cls[k];
    uint64_t t0 = tsc();
    free(old);
    uint64_t t1 = tsc();
    a->ft[i] = sat32(t1 - t0);

    size_t n = hhb_draw_size(&rng, &cls);
    t0 = tsc();
    void *q = malloc(n);
    t1 = tsc();
    a->mt[i] = sat32(t1 - t0);
    a->mc[i] = (unsigned char)cls;
    if (!q) {
      a->failed = 1;
      a->iters = i;
      break;
    }
    hhb_touch(q, n);
    a->slot[k] = q;
    a->slot_cls[k] = (unsigned char)cls;

    /* The noise floor: the same timer around nothing. */
    t0 = tsc();
    t1 = tsc();
    a->nt[i] = sat32(t1 - t0);
  }
  a->end = hhb_now();
  getrusage(RUSAGE_THREAD, &r1);
  a->minflt = r1.ru_minflt - r0.ru_minflt;
  a->majflt = r1.ru_majflt - r0.ru_majflt;
  for (size_t i = 0; i < a->slots; i++) free(a->slot[i]);
  return NULL;
}

/* LSD radix sort, two 16-bit digits; tmp has n entries. */
static size_t counts[65536];
static void radix_sort(uint32_t *v, uint32_t *tmp, size_t n) {
  for (int pass = 0; pass < 2; pass++) {
    int shift = pass * 16;
    memset(counts, 0, sizeof counts);
    for (size_t i = 0; i < n; i++) counts[(v[i] >> shift) & 0xffff]++;
    size_t sum = 0;
    for (size_t d = 0; d < 65536; d++) {
      size_t c = counts[d];
      counts[d] = sum;
      sum += c;
    }
    for (size_t i = 0; i < n; i++) tmp[counts[(v[i] >> shift) & 0xffff]++] = v[i];
    memcpy(v, tmp, n * sizeof *v);
  }
}

static double ns_per_cycle;

static double pct(const uint32_t *sorted, size_t n, double p) {
  if (n == 0) return 0;
  double r = p * (double)n;
  size_t k = (size_t)r;
  if ((double)k < r) k++;
  if (k == 0) k = 1;
  return sorted[k - 1] * ns_per_cycle;
}

static const double P[] = {0.5, 0.99, 0.999, 0.9999};
static const char *const PN[] = {"p50", "p99", "p999", "p9999"};

static void print_pcts(const char *op, const uint32_t *s, size_t n) {
  for (int i = 0; i < 4; i++) printf(" %s_%s_ns=%.1f", op, PN[i], pct(s, n, P[i]));
  printf(" %s_max_ns=%.1f", op, n ? s[n - 1] * ns_per_cycle : 0.0);
  /* How many calls took over 1 us and over 10 us (s is sorted). */
  const double lim[2] = {1e3, 1e4};
  for (int j = 0; j < 2; j++) {
    size_t lo = 0, hi = n;
    while (lo < hi) {
      size_t mid = lo + (hi - lo) / 2;
      if (s[mid] * ns_per_cycle > lim[j])
        hi = mid;
      else
        lo = mid + 1;
    }
    printf(" %s_over%s=%zu", op, j ? "10us" : "1us", n - lo);
  }
}

static void calibrate(void) {
  double w0 = hhb_now();
  uint64_t c0 = tsc();
  double w1;
  do w1 = hhb_now();
  while (w1 - w0 < 0.05);
  uint64_t c1 = tsc();
  ns_per_cycle = (w1 - w0) * 1e9 / (double)(c1 - c0);
}

int main(int argc, char **argv) {
  const char *label = "?";
  unsigned long long threads = 1;
  hhb_churn_opts o = {
      .iters = 2000000, .warmup = 500000, .slots = HHB_SLOTS_DEFAULT, .seed = HHB_SEED_DEFAULT};
  int classes = 0;
  for (int i = 1; i < argc; i++) {
    if (hhb_churn_arg(argc, argv, &i, &o))
      continue;
    else if (i + 1 < argc && !strcmp(argv[i], "--label"))
      label = argv[++i];
    else if (i + 1 < argc && !strcmp(argv[i], "--threads"))
      threads = hhb_arg(argv[++i]);
    else if (!strcmp(argv[i], "--classes"))
      classes = 1;
    else {
      fprintf(stderr,
              "usage: %s [--label NAME] [--threads T] [--iters N] [--warmup N] [--slots N] [--seed S] "
              "[--classes]\n",
              argv[0]);
      return 2;
    }
  }
  unsigned long long iters = o.iters, warmup = o.warmup, slots = o.slots, seed = o.seed;
  if (threads < 1 || threads > 1024 || slots < 1 || iters < 1) {
    fprintf(stderr, "bad arguments\n");
    return 2;
  }
  calibrate();

  size_t T = threads, total = T * iters;
  struct thread_arg *args = hhb_map(T * sizeof *args);
  uint32_t *mt = hhb_map(total * sizeof *mt), *ft = hhb_map(total * sizeof *ft),
           *nt = hhb_map(total * sizeof *nt);
  unsigned char *mc = hhb_map(total), *fc = hhb_map(total);
  void **slot = hhb_map(T * slots * sizeof *slot);
  unsigned char *slot_cls = hhb_map(T * slots);
  pthread_t *tid = hhb_map(T * sizeof *tid);
  for (size_t t = 0; t < T; t++) {
    args[t] = (struct thread_arg){.id = (unsigned)t,
                                  .seed = hhb_seed(seed, (unsigned)t),
                                  .slots = slots,
                                  .iters = iters,
                                  .warmup = warmup,
                                  .slot = slot + t * slots,
                                  .slot_cls = slot_cls + t * slots,
                                  .mt = mt + t * iters,
                                  .ft = ft + t * iters,
                                  .nt = nt + t * iters,
                                  .mc = mc + t * iters,
                                  .fc = fc + t * iters};
  }
  pthread_barrier_init(&barrier, NULL, (unsigned)T);
  for (size_t t = 1; t < T; t++)
    if (pthread_create(&tid[t], NULL, worker, &args[t])) {
      fprintf(stderr, "pthread_create failed\n");
      return 1;
    }
  worker(&args[0]);
  for (size_t t = 1; t < T; t++) pthread_join(tid[t], NULL);

  double start = args[0].start, end = args[0].end;
  long minflt = 0, majflt = 0;
  int failed = 0;
  for (size_t t = 0; t < T; t++) {
    if (args[t].start < start) start = args[t].start;
    if (args[t].end > end) end = args[t].end;
    minflt += args[t].minflt;
    majflt += args[t].majflt;
    failed |= args[t].failed;
    if (args[t].iters != iters) {
      fprintf(stderr, "thread %zu: allocation failed after %zu steps\n", t, args[t].iters);
      return 1;
    }
  }
  if (failed) {
    fprintf(stderr, "allocation failed\n");
    return 1;
  }

  uint32_t *tmp = hhb_map(total * sizeof *tmp);
  if (classes) {
    /* Per size class, before the full sort destroys the pairing with mc/fc. */
    for (int op = 0; op < 2; op++) {
      const uint32_t *v = op ? ft : mt;
      const unsigned char *c = op ? fc : mc;
      for (unsigned k = 0; k < HHB_NCLASS; k++) {
        uint32_t *sub = hhb_map(total * sizeof *sub);
        size_t n = 0;
        for (size_t i = 0; i < total; i++)
          if (c[i] == k) sub[n++] = v[i];
        radix_sort(sub, tmp, n);
        printf("class label=%s threads=%zu op=%s class=%s n=%zu", label, T, op ? "free" : "malloc",
               hhb_class_name[k], n);
        print_pcts("x", sub, n);
        printf("\n");
        munmap(sub, total * sizeof *sub);
      }
    }
  }
  radix_sort(mt, tmp, total);
  radix_sort(ft, tmp, total);
  radix_sort(nt, tmp, total);
  double calls = 2.0 * (double)total;
  printf("label=%s threads=%zu iters=%llu calls=%.0f wall_s=%.6f ops_per_s=%.0f", label, T, iters, calls,
         end - start, calls / (end - start));
  print_pcts("malloc", mt, total);
  print_pcts("free", ft, total);
  print_pcts("empty", nt, total);
  printf(" minflt=%ld majflt=%ld tsc_ghz=%.3f malloc_from=%s\n", minflt, majflt, 1.0 / ns_per_cycle,
         hhb_malloc_origin());
  return 0;
}
