/* Start-up and shutdown of the hook layer (see runtime.h). */
#define _GNU_SOURCE /* strerrordesc_np */
#include "runtime.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "alloc/libc/libc_allocator.h"
#include "alloc/next/next_allocator.h"
#include "base/backoff.h"
#include "base/env.h"
#include "base/glibc.h"
#include "base/handlers.h"
#include "base/log.h"
#include "base/own_fd.h"
#include "block.h"
#include "fork_gate.h"
#include "guard.h"
#include "hook.h"
#include "record/trace/trace.h"
#include "sample.h"
#include "trace/naming.h"

hh_runtime hh__rt;
atomic_int hh__state;
atomic_bool hh__recording;
hh_fast hh__fast __attribute__((aligned(64)));
__thread bool hh__in_hook __attribute__((tls_model("initial-exec")));
__thread uintptr_t hh__guard_cfa __attribute__((tls_model("initial-exec")));

bool hh__guard_abandoned(uintptr_t cfa) {
  if (!hh__in_hook || cfa < hh__guard_cfa) return false;
  int saved = errno;
  stack_t ss;
  bool alternate = sigaltstack(NULL, &ss) == 0 && (ss.ss_flags & SS_ONSTACK) != 0;
  errno = saved;
  if (alternate) return false;
  return hh__guard_release();
}

bool hh__guard_release(void) {
  if (!hh__trace_abandoned()) return false;
  hh__guard_drop();
  return true;
}

/* The recorders when HEAPHOOK_RECORD is unset: defined by preload libraries
 * that record by default (libpreloaded_heaptrack.so: "trace"). */
extern const char hh__default_record[] __attribute__((weak));
/* Defined by the libraries whose allocator is built in (select_fixed.c),
 * which ignore HEAPHOOK_ALLOCATOR. */
extern const bool hh__allocator_is_fixed __attribute__((weak));

static const hh_allocator *test_allocator;
static const char *test_record;
static bool test_setup;

void hh__hook_setup_for_test(const hh_allocator *allocator, const char *record) {
  test_allocator = allocator;
  test_record = record;
  test_setup = true;
}

static void check_allocator(const hh_allocator *a) {
  if (a->abi != HH_ALLOCATOR_ABI)
    hh__die("allocator '%s' was built for plug-in ABI %u, this heaphook has ABI %u", a->name ? a->name : "?",
            a->abi, HH_ALLOCATOR_ABI);
  if (a->alloc == NULL || a->dealloc == NULL || a->block_size == NULL)
    hh__die("allocator '%s' lacks alloc, dealloc or block_size", a->name ? a->name : "?");
}

static void read_options(void) {
  const char *stats = hh__env_get("HEAPHOOK_STATS");
  if (stats != NULL && hh__parse_bool(stats, &hh__rt.stats) != 0)
    hh__die("HEAPHOOK_STATS=%s: expected 1 or 0 (also true/false, yes/no, on/off)", stats);
}

static void add_callback(struct hh_callbacks *list, void (*cb)(const hh_event *, void *), size_t offset) {
  if (cb == NULL) return;
  list->cb[list->n] = cb;
  list->slot_offset[list->n] = offset;
  list->n++;
}

/* heaphook's TLSF, where a preload library has it. */
const hh_allocator *hh__tlsf_allocator_get(void) __attribute__((weak));

/* True for the allocators whose blocks are preceded by a size word of
 * their own, whose high half never equals a magic word (block.h): glibc's
 * and heaphook's TLSF. */
static bool size_word_in_front(const hh_allocator *a) {
  return a == hh__libc_allocator_get() || (hh__tlsf_allocator_get != NULL && a == hh__tlsf_allocator_get());
}

/* Lays out the recorder slots in front of the block header (block.h). */
static void place_recorders(const char *spec) {
  int n = hh__recorders_parse(spec, hh__rt.recorders, HH_MAX_RECORDERS);
  if (n < 0) _exit(1);
  size_t bytes = 0;
  for (int i = 0; i < n; i++) {
    hh__rt.slot_offset[i] = bytes;
    bytes += (hh__rt.recorders[i]->block_bytes + 7) & ~(size_t)7;
  }
  hh__rt.prefix = bytes == 0 ? 0 : (bytes + HH_BLOCK_HEADER + 15) & ~(size_t)15;
  /* Before the recorders start: the sampler's fork handler then runs
   * before theirs in the child. */
  if (n > 0) hh__sampler_atfork();
  for (int i = 0; i < n; i++) {
    if (hh__rt.recorders[i]->start != NULL && hh__rt.recorders[i]->start() != 0) _exit(1);
  }
  hh__rt.n_recorders = n;
  for (int i = 0; i < n; i++) {
    const hh_recorder *r = hh__rt.recorders[i];
    size_t period = r->sample_period != NULL ? r->sample_period() : 0;
    if (period != 0 && hh__rt.sample_period != 0 && period != hh__rt.sample_period)
      hh__die(
          "HEAPHOOK_RECORD=%s: recorders '%s' and others sample with different periods (%zu and %llu bytes)",
          spec, r->name, period, (unsigned long long)hh__rt.sample_period);
    size_t off = hh__rt.slot_offset[i];
    if (period != 0) {
      hh__rt.sample_period = period;
      add_callback(&hh__rt.sampled_alloc, r->on_alloc, off);
      add_callback(&hh__rt.sampled_free, r->on_free, off);
      add_callback(&hh__rt.sampled_realloc_begin, r->on_realloc_begin, off);
      add_callback(&hh__rt.sampled_realloc, r->on_realloc, off);
    } else {
      add_callback(&hh__rt.on_alloc, r->on_alloc, off);
      add_callback(&hh__rt.on_free, r->on_free, off);
      add_callback(&hh__rt.on_realloc_begin, r->on_realloc_begin, off);
      add_callback(&hh__rt.on_realloc, r->on_realloc, off);
    }
    if (r->on_call != NULL) hh__rt.on_call[hh__rt.n_on_call++] = r->on_call;
  }
  if (hh__rt.sample_period != 0) {
    hh__sampler_start(hh__rt.sample_period);
    /* Sampled blocks are marked in their header (block.h). With no prefix
     * that header is read in front of every block, which only allocators
     * known to keep a size word there allow; the others get a prefix. So
     * with sampling and no prefix, a sampled block has a lead of its own. */
    if (hh__rt.prefix == 0 && !size_word_in_front(hh__rt.alloc)) {
      hh__rt.prefix = HH_SAMPLED_LEAD;
      hh__rt.lead_only = true;
    }
  }
}

bool hh__straight_to_own(void) { return hh__rt.own_serves && hh__rt.prefix == 0 && hh__rt.n_recorders == 0; }

/* The exported functions' way to serve calls (runtime.h, hh_fast). */
static int choose_path(void) {
  const hh_runtime *rt = &hh__rt;
  bool every = rt->on_alloc.n + rt->on_free.n + rt->on_realloc_begin.n + rt->on_realloc.n != 0;
  if (rt->lead_only && rt->sample_period != 0 && !every && rt->n_on_call == 0) {
    hh__fast.alloc = rt->alloc->alloc;
    hh__fast.alloc_zeroed = rt->alloc->alloc_zeroed;
    hh__fast.dealloc = rt->alloc->dealloc;
    return HH_PATH_LEAD;
  }
  if (hh__straight_to_own()) {
    hh__fast.next = hh__next_allocator_fns();
    return HH_PATH_NEXT;
  }
  if (rt->alloc != hh__libc_allocator_get() || rt->prefix != 0 || rt->n_on_call != 0) return HH_PATH_HOOK;
  if (rt->on_alloc.n + rt->on_free.n + rt->on_realloc_begin.n + rt->on_realloc.n != 0) return HH_PATH_HOOK;
  return rt->sample_period != 0 ? HH_PATH_SAMPLED : HH_PATH_LIBC;
}

/* A copy of stderr taken at start-up when something will report at exit:
 * programs such as coreutils close stderr before the library destructor
 * runs. Close-on-exec, and high, so the program's own fds are undisturbed;
 * registered (base/own_fd.h), so that a program closing every descriptor
 * leaves it, and one that put a file of its own under its number gets no
 * report in that file. */
static hh_own_fd stderr_copy = HH_OWN_FD_INIT(HH_OWN_FD_STDERR);

/* HEAPHOOK_LOG's file, named and set: the reports go there, else to stderr. */
static bool log_named(void) {
  const char *log = hh__env_get("HEAPHOOK_LOG");
  return log != NULL && *log != '\0';
}

/* The reports go to the copy (stderr_copy), not to HEAPHOOK_LOG opened at
 * exit: it could not be opened at start-up (said then), and they go to
 * stderr, as without it; or it names one of the process's descriptors
 * (log_descriptor), which the copy is of. */
static bool log_to_copy;

/* The descriptor the copy is of (2, or HEAPHOOK_LOG's): the reports go
 * there when there is no copy. */
static int report_fd = 2;

/* The descriptor of the process's that HEAPHOOK_LOG names (/dev/stdout,
 * /dev/stderr, /dev/fd/N, /proc/{self,thread-self,%p,PID}/fd/N:
 * trace/naming.h), else -1. Opened at exit, it was no more for a program
 * that closes its stdout and stderr at exit (GNU tools do), and the
 * reports were lost without a word: a copy is taken at start-up instead,
 * as of stderr without HEAPHOOK_LOG. */
static int log_descriptor(const char *pattern) {
  if (strcmp(pattern, "/dev/stdin") == 0 || !hh_trace_descriptor_path(pattern)) return -1;
  if (strcmp(pattern, "/dev/stdout") == 0) return 1;
  if (strcmp(pattern, "/dev/stderr") == 0) return 2;
  const char *at = strstr(pattern, "/fd/");
  if (strncmp(pattern, "/proc/", 6) == 0 && pattern[6] >= '0' && pattern[6] <= '9') {
    long pid = 0;
    for (const char *p = pattern + 6; p < at && pid <= INT_MAX; p++) pid = pid * 10 + (*p - '0');
    if (pid != (long)syscall(SYS_getpid)) return -1; /* another process's */
  }
  const char *d = at + 4;
  long n = 0;
  for (; *d >= '0' && *d <= '9' && n <= INT_MAX; d++) n = n * 10 + (*d - '0');
  return d > at + 4 && *d == '\0' && n <= INT_MAX ? (int)n : -1;
}

#define HH_LOG_NOT_PROBED (-2)

/* The log opened (made when missing), or why not said: -1. At start-up
 * (probe) a log that exists and is no regular file is left alone
 * (HH_LOG_NOT_PROBED): opened and closed, a named pipe's reader saw its
 * end at once, and the open at exit then waited for a reader for good. */
static int open_named_log(const char *pattern, bool probe) {
  char path[4096];
  if (hh__expand_pid(pattern, path, sizeof path) != 0) {
    hh__log("HEAPHOOK_LOG=%s: path too long; reporting to stderr", pattern);
    return -1;
  }
  struct stat st;
  if (probe && stat(path, &st) == 0 && !S_ISREG(st.st_mode)) return HH_LOG_NOT_PROBED;
  /* (links followed, as a shell's >> does: HEAPHOOK_LOG=/dev/stderr is
   * one; until 2026-11-28 O_NOFOLLOW refused them, preload.stats_and_log) */
  int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0)
    hh__log("HEAPHOOK_LOG=%s: cannot open %s (%s); reporting to stderr", pattern, path, strerror(errno));
  return fd;
}

static void keep_stderr(void) {
  bool reports = hh__rt.stats;
  for (int i = 0; i < hh__rt.n_recorders; i++) reports = reports || hh__rt.recorders[i]->reports;
  if (!reports) return; /* (the tracer alone reports nothing at exit) */
  int saved = errno;
  /* Not kept with HEAPHOOK_LOG: a daemon the program forks would hold the
   * caller's stderr open for its whole life, and whoever reads it
   * ($(prog 2>&1), ssh, CI logs) would wait for the daemon to end. But the
   * log is tried now, while stderr is surely open: one that cannot be
   * opened is said at once, and its reports go to the copy. Before, it was
   * said at exit on fd 2, which GNU tools have closed by then: the warning
   * and the reports were lost without a word. A log that names one of the
   * process's descriptors (/dev/stderr) is kept as stderr is without it. */
  if (log_named()) {
    const char *log = hh__env_get("HEAPHOOK_LOG");
    int named = log_descriptor(log);
    if (named >= 0 && fcntl(named, F_GETFD) != -1) {
      report_fd = named; /* (one not open is tried as a file: said) */
    } else {
      int fd = open_named_log(log, true);
      if (fd >= 0 || fd == HH_LOG_NOT_PROBED) {
        if (fd >= 0) close(fd);
        errno = saved;
        return;
      }
    }
    log_to_copy = true;
  }
  int copy = fcntl(report_fd, F_DUPFD_CLOEXEC, hh__own_fd_base(HH_OWN_FD_STDERR));
  if (copy < 0) copy = fcntl(report_fd, F_DUPFD_CLOEXEC, 3);
  if (copy >= 0 && !hh__own_fd_add(copy, &stderr_copy))
    close(copy); /* the register is full: report_fd then */
  errno = saved;
}

/* The process whose exit stops the recorders: the one that started the
 * hook, then each forked child (fork handlers run there; not in a vfork
 * child, which shares its parent's memory). */
static pid_t owner_pid;
static void owner_is_child(void) { owner_pid = (pid_t)syscall(SYS_getpid); }

bool hh__owner_process(void) { return (pid_t)syscall(SYS_getpid) == owner_pid; }

/* The heaphook command's own process (runtime.h): the loader binds this
 * weak reference to the command's exported array, else leaves it NULL.
 * Until 2026-11-28 a dlsym looked it up in every process, and its failure
 * (the symbol is nowhere but in the command) left glibc's setlocale lock
 * taken under valgrind: cmake --version under libheaphook.so hung at exit
 * in libp11-kit's freelocale. */
extern const char hh_untraced_process[] __attribute__((weak, visibility("default")));
bool hh__untraced_process(void) { return hh_untraced_process != NULL; }

/* HEAPHOOK_ALLOCATOR names the allocator a, or this library (a plug-in's
 * lib<name>.so named by its path). */
static bool names_allocator(const char *name, const hh_allocator *a, const char *self) {
  if (strcmp(name, a->name) == 0) return true;
  struct stat n, s;
  return strchr(name, '/') != NULL && self != NULL && stat(name, &n) == 0 && stat(self, &s) == 0 &&
         n.st_dev == s.st_dev && n.st_ino == s.st_ino;
}

/* A library with its allocator built in (select_fixed.c:
 * libpreloaded_heaptrack.so, libpreloaded_tlsf.so,
 * liboriginal_allocator.so, a plug-in's) serves that allocator whatever
 * HEAPHOOK_ALLOCATOR says, as tier4's drop-ins did, and says so when the
 * variable names another. Until 2026-11-28 each ignored it without a word
 * (libpreloaded_heaptrack.so said it from that day): with
 * liboriginal_allocator.so exported, HEAPHOOK_ALLOCATOR=tlsf, and
 * `HEAPHOOK_ALLOCATOR=tlsf heaphook run`, which traces through that library,
 * ran on glibc's malloc. */
static void say_allocator_ignored(const hh_allocator *fixed) {
  const char *name = hh__env_get("HEAPHOOK_ALLOCATOR");
  if (&hh__allocator_is_fixed == NULL || name == NULL || *name == '\0') return;
  Dl_info at;
  const char *self = dladdr((void *)hh__select_allocator, &at) && at.dli_fname ? at.dli_fname : NULL;
  if (names_allocator(name, fixed, self)) return;
  if (hh__default_record != NULL) {
    hh__log(
        "HEAPHOOK_ALLOCATOR=%s is ignored: libpreloaded_heaptrack.so traces glibc's malloc (to trace another "
        "allocator, preload libheaphook.so with HEAPHOOK_ALLOCATOR and HEAPHOOK_RECORD=trace)",
        name);
    return;
  }
  const char *base = self ? strrchr(self, '/') : NULL;
  const char *lib = base ? base + 1 : self ? self : "this library";
  if (strcmp(fixed->name, "libc") == 0)
    hh__log(
        "HEAPHOOK_ALLOCATOR=%s is ignored: %s serves %s (to choose the allocator, preload libheaphook.so "
        "with "
        "HEAPHOOK_ALLOCATOR)",
        name, lib, hh__rt.own_serves ? "the program's own allocator" : "glibc's malloc");
  else
    hh__log(
        "HEAPHOOK_ALLOCATOR=%s is ignored: %s serves every allocation from its allocator, %s (to choose the "
        "allocator, preload libheaphook.so with HEAPHOOK_ALLOCATOR)",
        name, lib, fixed->name);
}

static void start_up(void) {
  const hh_allocator *a;
  /* The heaphook command run under a preloaded heaphook library (LD_PRELOAD
   * exported for a node, then `heaphook run`): glibc's malloc, nothing
   * recorded, no report, no log opened, no variable read. It ran on the
   * library's allocator (a pre-faulted TLSF pool, a plug-in), traced itself
   * under HEAPHOOK_RECORD, and printed HEAPHOOK_STATS's report at its exit,
   * which read as the program's. */
  bool untraced = !test_setup && hh__untraced_process();
  if (test_setup)
    a = test_allocator;
  else if (untraced)
    a = hh__libc_allocator_get();
  else if (hh__select_allocator != NULL)
    a = hh__select_allocator();
  else
    a = hh__libc_allocator_get();
  const hh_allocator *selected = a;
  /* The program's own allocator, when it links one (jemalloc, tcmalloc,
   * mimalloc): the passthrough forwards to it, not to glibc, and the
   * blocks another allocator does not own go back to it (api.c). Not in
   * the tests that link the hook layer: after them come the sanitizers'
   * interceptors. */
  const hh_allocator *own = test_setup ? NULL : hh__next_allocator_find();
  if (own != NULL && a == hh__libc_allocator_get()) {
    a = own;
    hh__rt.own_serves = true;
  }
  hh__rt.foreign_bare = own != NULL;
  check_allocator(a);
  if (!untraced) read_options();
  if (!test_setup && !untraced) say_allocator_ignored(selected);
  long page = sysconf(_SC_PAGESIZE);
  hh__rt.page = page > 0 ? (size_t)page : 4096;
  hh__glibc_resolve();
  if (a->init != NULL && a->init() != 0) hh__die("allocator '%s' failed to start", a->name);
  hh__rt.alloc = a;
  const char *record = test_setup ? test_record : untraced ? NULL : hh__env_get("HEAPHOOK_RECORD");
  if (!test_setup && !untraced && record == NULL && hh__default_record != NULL) record = hh__default_record;
  place_recorders(record);
  hh__fork_gate_register(); /* (after the allocator's and the recorders' fork handlers) */
  owner_pid = (pid_t)syscall(SYS_getpid);
  hh__atfork(NULL, NULL, owner_is_child);
  if (!untraced) keep_stderr();
  atomic_store(&hh__recording, hh__rt.n_recorders > 0);
}

bool hh__start_slow(void) {
  if (hh__in_hook) return false;
  /* Before libc has set up environ the configuration cannot be read; the
   * first calls are then served by the bootstrap arena. */
  if (!test_setup && !hh__env_ready()) return false;
  int expected = HH_UNSTARTED;
  if (!atomic_compare_exchange_strong(&hh__state, &expected, HH_STARTING)) {
    /* Another thread is starting the hook: wait for it rather than fill the
     * bootstrap arena, which is sized for start-up, not for a program. */
    for (unsigned turns = 0; atomic_load_explicit(&hh__state, memory_order_acquire) != HH_READY;)
      hh__backoff(&turns);
    return true;
  }
  int saved = errno;
  hh_guard guard = hh__guard_enter();
  start_up();
  hh__guard_leave(guard);
  atomic_store_explicit(&hh__state, HH_READY, memory_order_release);
  if (!test_setup) atomic_store_explicit(&hh__fast.path, choose_path(), memory_order_release);
  errno = saved;
  return true;
}

/* Where the reports at exit go: stderr (the copy, in use until close_log),
 * or the file HEAPHOOK_LOG names ("%p" becomes the pid), appended to. Falls
 * back to stderr with a warning. */
/* Where the reports go: HEAPHOOK_LOG's file, else the copy of stderr, else
 * fd 2 (a log that opened at start-up and no longer does: said there). */
static int open_log(bool to_log) {
  if (!to_log) {
    int copy = hh__own_fd_use(&stderr_copy);
    return copy >= 0 ? copy : report_fd;
  }
  int fd = open_named_log(hh__env_get("HEAPHOOK_LOG"), false);
  return fd >= 0 ? fd : 2;
}

void hh__shutdown(void) {
  if (atomic_load(&hh__state) != HH_READY) return;
  /* A vfork child that calls exit() (after a failed exec, say) runs the
   * exit handlers in its parent's memory, and glibc marks them run there:
   * the parent's exit will run none of them, ours included. Stopping here
   * ended the parent's recording: its trace got END and silently lost
   * every later event. The recording goes on instead: the parent's trace
   * ends without END (read as cut short) unless it ends by _exit, which
   * heaphook's own _exit finishes; the child says so. */
  pid_t pid = (pid_t)syscall(SYS_getpid);
  if (pid != owner_pid) {
    hh__dprint(2,
               "heaphook: a vfork child (pid %d) called exit(): its parent's exit handlers ran in it, and "
               "heaphook's "
               "will not run in the parent (pid %d): the parent's trace and reports lose their end\n",
               (int)pid, (int)owner_pid);
    return;
  }
  int saved = errno;
  bool was = atomic_exchange(&hh__recording, false);
  if (atomic_load(&hh__fast.path) == HH_PATH_SAMPLED) atomic_store(&hh__fast.path, HH_PATH_MARKED);
  bool report = hh__rt.stats && hh__rt.alloc->report != NULL;
  hh_guard guarded = hh__guard_enter();
  if (was || report) {
    bool to_log = log_named() && !log_to_copy;
    int fd = open_log(to_log);
    hh__dprint_error(); /* (forgets older ones) */
    for (int i = 0; was && i < hh__rt.n_recorders; i++) {
      if (hh__rt.recorders[i]->stop != NULL) hh__rt.recorders[i]->stop(fd);
    }
    if (report) hh__rt.alloc->report(fd);
    int err = hh__dprint_error();
    if (to_log && fd != 2 && close(fd) != 0 && err == 0) err = errno; /* NFS: at close */
    /* said once on stderr, if the program has not closed it (GNU tools
     * close fd 2 at exit; no copy is kept with HEAPHOOK_LOG, keep_stderr) */
    if (err != 0 && to_log && fd != 2)
      hh__dprint(2, "heaphook: HEAPHOOK_LOG=%s: cannot write the report (%s); it is lost\n",
                 hh__env_get("HEAPHOOK_LOG"), strerrordesc_np(err));
    if (!to_log) hh__own_fd_done(&stderr_copy);
  }
  hh__guard_leave(guarded);
  errno = saved;
}
