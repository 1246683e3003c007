/* The trace file: creation, the header, chunks, and the process buffer.
 *
 * Chunks are compressed by whoever writes them (the writer thread and its
 * helpers, or the thread whose buffer filled: recorder.c), with one of a few
 * zstd contexts living in mmap'd workspaces (no malloc), and written with one
 * write(2) each to a file opened with O_APPEND: concurrent chunks of several
 * threads land whole, one after the other, without a lock of ours. A trace
 * cut short by SIGKILL therefore ends with whole chunks, or one cut at its
 * end. */
#define ZSTD_STATIC_LINKING_ONLY /* ZSTD_initStaticCCtx: a context in our memory */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "base/backoff.h"
#include "base/cancel.h"
#include "base/log.h"
#include "base/own_fd.h"
#include "base/quiet_write.h"
#include "gate.h"
#include "internal.h"
#include "trace/model.h"
#include "trace/naming.h"

/* zstd's fastest positive level: -1 and below compress these records
 * worse for little gain in speed, 3 costs half again for 6% less. */
#define ZSTD_LEVEL 1
/* Largest raw chunk anyone hands us: the process buffer. */
#define PROC_CAP (1u << 20)
/* zstd contexts: one per writer thread (HEAPHOOK_TRACE_WRITERS, at most 8),
 * mapped at first use. */
#define POOL 8

hh_tr_options hh__tr_opt;
atomic_bool hh__tr_active;

static hh_own_fd file = HH_OWN_FD_INIT(HH_OWN_FD_TRACE);
static pid_t start_ppid;
/* The file's path (absolute: create_file prefixes start_dir) and identity:
 * a descriptor closed behind the hook's back (a raw close system call) is
 * replaced by the same file opened again, never by another. */
static char path[4096];
static dev_t file_dev;
static ino_t file_ino;
static pthread_mutex_t reopen_lock = PTHREAD_MUTEX_INITIALIZER;
static bool lost;    /* the file could not be opened again */
static bool deleted; /* the program deleted it */
static bool write_first_header(void);
static atomic_bool header_done;
static pthread_mutex_t header_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_bool warned;
static _Atomic uint64_t events_written;

void *hh__tr_map(size_t bytes) {
  void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? NULL : p;
}

/* ---- creating the file ---------------------------------------------------- */

/* pattern with each "%p" replaced by pid (and "%%" by "%"); -1 if too long. */
static int expand(const char *pattern, const char *pid, char *out, size_t size) {
  size_t n = 0, plen = strlen(pid);
  for (const char *p = pattern; *p != '\0'; p++) {
    const char *piece = p;
    size_t len = 1;
    if (p[0] == '%' && p[1] == 'p') {
      piece = pid;
      len = plen;
      p++;
    } else if (p[0] == '%' && p[1] == '%') {
      p++;
    }
    if (n + len >= size) return -1;
    memcpy(out + n, piece, len);
    n += len;
  }
  out[n] = '\0';
  return 0;
}

/* A path as the warnings show it: one of up to 4 KiB would push the reason
 * out of the line's 1 KiB (base/log.h), so past 400 bytes its middle is
 * left out ("..."): its start and its file name stay. */
#define PATH_SHOWN 400u
typedef struct shown_path {
  char s[PATH_SHOWN + 4];
} shown_path;
static shown_path show_path(const char *p) {
  shown_path out;
  size_t n = strlen(p);
  if (n <= PATH_SHOWN) {
    memcpy(out.s, p, n + 1);
  } else {
    size_t head = PATH_SHOWN / 3, tail = PATH_SHOWN - head - 3;
    memcpy(out.s, p, head);
    memcpy(out.s + head, "...", 3);
    memcpy(out.s + head + 3, p + n - tail, tail + 1);
  }
  return out;
}

static void warn_once(const char *what, int err) {
  if (atomic_exchange(&warned, true)) return;
  hh__log("trace %s: %s (%s); the program runs on without tracing", show_path(path).s, what, strerror(err));
}

/* The fixed path exists and is not a regular file (create_file). */
static bool not_regular;
/* The path names one of the program's descriptors (create_file). */
static bool descriptor;

/* The working directory when tracing started: a relative path names a file
 * there, as the README says, although the file is created at the first
 * chunk, after the program may have changed directory (the trace went to
 * the new one, or was lost when that one was not writable). */
static char start_dir[2048];

/* Creates path, O_EXCL: true, with the file registered; false with errno. */
static bool try_create(void) {
  int f = open(path, O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (f < 0) return false;
  /* Out of the way of the program's own descriptors, and kept open when
   * the program closes them all (base/own_fd.h). */
  f = hh__own_fd_raise(f, HH_OWN_FD_TRACE, true);
  struct stat st;
  if (fstat(f, &st) == 0) {
    file_dev = st.st_dev;
    file_ino = st.st_ino;
  }
  atomic_store(&file.unlinked, false);
  if (hh__own_fd_add(f, &file)) return true;
  close(f); /* the register is full (never so far): nothing to protect it */
  unlink(path);
  errno = EMFILE;
  return false;
}

/* v in decimal at out (24 bytes); returns out. */
static char *decimal(unsigned long v, char *out) {
  char tmp[24], *d = tmp + sizeof tmp;
  *--d = '\0';
  do *--d = (char)('0' + v % 10);
  while ((v /= 10) != 0);
  return memcpy(out, d, (size_t)(tmp + sizeof tmp - d));
}

/* The parent of process p (/proc/p/stat, read(2)); 0 when unknown. */
static pid_t parent_of(pid_t p) {
  char name[48] = "/proc/", buf[512];
  decimal((unsigned long)p, name + 6);
  memcpy(name + strlen(name), "/stat", 6);
  int fd = open(name, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return 0;
  buf[n] = '\0';
  /* "pid (comm) state ppid ...": comm may hold anything, ')' included */
  const char *q = strrchr(buf, ')');
  if (q == NULL || q[1] != ' ' || q[2] == '\0' || q[3] != ' ') return 0;
  pid_t v = 0;
  for (q += 4; *q >= '0' && *q <= '9'; q++) v = v * 10 + (*q - '0');
  return v;
}

/* Whose the trace at path is, for a fixed path that exists: 0 this
 * process's (the program before an exec; or this process's numbered trace
 * is there), 1 this run's (an ancestor's, the run's first process; or an
 * ancestor's trace follows the numbered pattern, which its process has
 * said already), 2 anything else (a trace of an earlier run, another
 * program's file, a link). */
static int fixed_owner(const char *numbered) {
  pid_t who = -1;
  int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd >= 0) {
    struct stat st;
    unsigned char h[20];
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && pread(fd, h, sizeof h, 0) == (ssize_t)sizeof h &&
        memcmp(h, "HHTRACE", 8) == 0)
      who = (pid_t)((uint32_t)h[16] | (uint32_t)h[17] << 8 | (uint32_t)h[18] << 16 | (uint32_t)h[19] << 24);
    close(fd);
  }
  static char other[sizeof path]; /* (with the header's lock: off the stack of any thread) */
  char pid[24];
  if (who == getpid() || (expand(numbered, decimal((unsigned long)getpid(), pid), other, sizeof other) == 0 &&
                          access(other, F_OK) == 0))
    return 0;
  pid_t p = start_ppid;
  for (int i = 0; p > 1 && i < 64; i++) {
    if (p == who) return 1;
    if (expand(numbered, decimal((unsigned long)p, pid), other, sizeof other) == 0 &&
        access(other, F_OK) == 0)
      return 1;
    p = i == 0 && p != getppid() ? getppid() : parent_of(p);
  }
  return 2;
}

/* Creates the file (with the header's lock held). */
static bool create_file(void) {
  const char *output =
      hh__tr_opt.output != NULL && hh__tr_opt.output[0] != '\0' ? hh__tr_opt.output : "heaplog.%p.hhtrace";
  char pattern[4096];
  size_t dlen = strlen(start_dir), olen = strlen(output);
  if (output[0] != '/' && dlen > 0 && 2 * dlen + 1 + olen < sizeof pattern) {
    size_t n = 0;
    for (size_t i = 0; i < dlen; i++) { /* a '%' of the directory's is itself */
      pattern[n++] = start_dir[i];
      if (start_dir[i] == '%') pattern[n++] = '%';
    }
    pattern[n] = '/';
    memcpy(pattern + n + 1, output, olen + 1);
  } else {
    memcpy(pattern, output, olen < sizeof pattern ? olen + 1 : sizeof pattern);
    pattern[sizeof pattern - 1] = '\0';
  }
  int seq = 0;
  not_regular = false;
  descriptor = hh_trace_descriptor_path(output);
  if (descriptor) { /* (HEAPHOOK_OUTPUT=/dev/stderr: trace/naming.h) */
    memcpy(path, output, olen < sizeof path ? olen + 1 : sizeof path);
    path[sizeof path - 1] = '\0';
    errno = EEXIST;
    return false;
  }
  /* With the header's lock, off the stack of the thread (a fork may come
   * from one with a small stack): the fixed path when another's file is
   * there (said below), its numbered pattern. */
  static char fixed[sizeof path], numbered[sizeof path]; /* (pattern's size: it is copied there) */
  fixed[0] = '\0';
  if (hh_trace_pid_at(output) == NULL) { /* (not the directory's) */
    /* A fixed path: the first process's trace; the others follow its
     * numbered pattern (trace/naming.h). */
    if (expand(pattern, "", path, sizeof path) != 0) {
      errno = ENAMETOOLONG;
      return false;
    }
    if (try_create()) return true;
    if (errno != EEXIST || hh_trace_numbered(pattern, numbered, sizeof numbered) != 0) return false;
    /* No earlier run's trace but a device, a directory or a pipe
     * (HEAPHOOK_OUTPUT=/dev/null): refused, as `heaphook run -o` refuses
     * it; its numbered pattern made a file beside it (as root,
     * /dev/null.<pid> in /dev). A link to a regular file is another's. */
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
      not_regular = true;
      errno = EEXIST;
      return false;
    }
    int owner = fixed_owner(numbered);
    if (owner == 2) memcpy(fixed, path, sizeof fixed); /* said below */
    seq = owner == 0 ? 1 : 0;
    memcpy(pattern, numbered, sizeof pattern);
  }
  /* An exec'd program keeps its pid: when its predecessor's trace is there,
   * "%p" becomes "<pid>.1", "<pid>.2", ... */
  for (; seq < 100; seq++) {
    char pid[48];
    size_t len = strlen(decimal((unsigned long)getpid(), pid));
    if (seq > 0) {
      pid[len] = '.';
      decimal((unsigned long)seq, pid + len + 1);
    }
    if (expand(pattern, pid, path, sizeof path) != 0) {
      size_t plen = strnlen(pattern, sizeof path - 1);
      memcpy(path, pattern, plen);
      path[plen] = '\0';
      errno = ENAMETOOLONG;
      return false;
    }
    if (try_create()) {
      if (fixed[0] != '\0')
        hh__log(
            "trace %s: the file exists (an earlier run's, or another process's); this process's trace is %s",
            show_path(fixed).s, show_path(path).s);
      return true;
    }
    if (errno != EEXIST) return false;
  }
  return false;
}

/* The file is made, and its header written, when tracing starts (at the
 * start, or in a forked child): made at the first chunk, as before, it
 * was lost to a program that had by then dropped its privileges (setuid),
 * changed its root, or used up its descriptors (trace.file_early). */
int hh__tr_file_open(pid_t parent) {
  start_ppid = parent;
  /* The directory the traced process started in; a forked child keeps its
   * parent's (it used to take its own, so the children of a program that
   * had changed its directory, as daemons do, wrote their traces there or
   * lost them: trace.fork_chdir). */
  static bool dir_taken;
  if (!dir_taken && (getcwd(start_dir, sizeof start_dir) == NULL || start_dir[0] != '/')) start_dir[0] = '\0';
  dir_taken = true;
  atomic_store(&file.fd, -1);
  atomic_store(&header_done, false);
  atomic_store(&hh__tr_active, true);
  int cancel = hh__cancel_off();
  pthread_mutex_lock(&header_lock);
  bool made = create_file();
  bool ok = made && write_first_header();
  if (!ok) {
    int err = errno;
    hh__own_fd_close(&file);
    if (made) unlink(path);
    atomic_store(&hh__tr_active, false);
    if (descriptor) {
      if (!atomic_exchange(&warned, true))
        hh__log(
            "trace %s: names one of the program's descriptors, which it writes to itself; name a file "
            "(HEAPHOOK_OUTPUT); the program runs on without tracing",
            show_path(path).s);
    } else if (not_regular) {
      if (!atomic_exchange(&warned, true))
        hh__log("trace %s: it exists and is not a regular file; the program runs on without tracing",
                show_path(path).s);
    } else {
      warn_once("cannot create the trace file", err);
    }
    atomic_store_explicit(&header_done, true, memory_order_release);
  }
  pthread_mutex_unlock(&header_lock);
  hh__cancel_restore(cancel);
  return ok ? 0 : -1;
}

void hh__tr_file_forget(void) {
  hh__own_fd_close(&file);
  atomic_store(&hh__tr_active, false);
}

/* The file opened again, when the program closed it behind the hook's
 * back (a use of `file` found its number no longer registered); -1 (errno
 * set) when the file is gone or another has its name now. A program that
 * closes everything with raw system calls may close the new descriptor too
 * before it is registered: then again, a few times. */
static int reopen(void) {
  pthread_mutex_lock(&reopen_lock);
  int f = hh__own_fd_use(&file); /* another thread may have done it */
  hh__own_fd_done(&file);
  for (int tries = 0; f < 0 && !lost; tries++) {
    int n = tries < 8 ? open(path, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC) : -1;
    if (n < 0) {
      if (tries >= 8) errno = EBADF;
      lost = true;
      break;
    }
    n = hh__own_fd_raise(n, HH_OWN_FD_TRACE, true);
    struct stat st;
    if (fstat(n, &st) != 0) continue; /* closed meanwhile */
    if (st.st_dev != file_dev || st.st_ino != file_ino) {
      close(n);
      errno = ENOENT; /* another file has the name now */
      lost = true;
      break;
    }
    if (hh__own_fd_add(n, &file)) {
      f = n;
    } else if (fcntl(n, F_GETFD) >= 0) {
      close(n); /* the register is full: unregistered, it would be opened again at each write */
      errno = EMFILE;
      lost = true;
    }
    /* The old number is the program's now, or nobody's: not closed. */
  }
  if (f < 0 && !lost) errno = ENOENT;
  pthread_mutex_unlock(&reopen_lock);
  return f;
}

/* data written whole to the file, with one write(2) unless the kernel
 * writes less. A dup2 of the program's onto the file's number waits for
 * it (hh__own_fd_use); a descriptor closed behind the hook's back between
 * the check and the write (EBADF) is opened again and the rest written. */
static bool write_all(const void *data, size_t n) {
  const char *p = data;
  for (int tries = 0; tries < 3; tries++) {
    int f = hh__own_fd_use(&file);
    if (f < 0) f = reopen();
    if (atomic_load(&file.unlinked)) {
      /* The program deleted the file: what it holds and what would follow
       * is lost; said once, and tracing stops (it used to go on, silently,
       * into a file nobody could open). */
      hh__own_fd_done(&file);
      deleted = true;
      errno = ENOENT;
      return false;
    }
    int err = f < 0 ? errno : 0;
    while (f >= 0 && n > 0) {
      ssize_t w = hh__write_quiet(f, p, n);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) {
        err = w < 0 ? errno : ENOSPC;
        break;
      }
      p += w;
      n -= (size_t)w;
    }
    hh__own_fd_done(&file);
    if (n == 0) return true;
    if (err != EBADF) {
      errno = err;
      return false;
    }
  }
  errno = EBADF;
  return false;
}

/* ---- exec: nobody else writes --------------------------------------------------
 * A successful exec ends every other thread wherever it is, one inside a
 * write(2) of a chunk included: the kernel may stop a write to a file
 * part-way for a fatal signal, and the trace would end in a torn chunk
 * (read as cut short). So from hh__tr_exec_begin (the trace's last
 * records written) until the exec fails (hh__tr_exec_end), only the
 * execing thread writes: the others wait at this gate in front of
 * write_all (the exec ends them there), and the writes already under way
 * finish first (gate.h). */
static hh_tr_gate exec_gate;
static __thread bool t_exec __attribute__((tls_model("initial-exec")));

void hh__tr_exec_begin(void) {
  if (t_exec) return;
  t_exec = true;
  hh__tr_gate_close(&exec_gate, 0);
}

void hh__tr_exec_end(void) {
  if (!t_exec) return;
  t_exec = false;
  hh__tr_gate_open(&exec_gate);
}

static bool write_gated(const void *data, size_t n) {
  hh__tr_gate_enter(&exec_gate, t_exec);
  bool ok = write_all(data, n);
  hh__tr_gate_leave(&exec_gate);
  return ok;
}

static void fail(void) {
  int err = errno;
  atomic_store(&hh__tr_active, false);
  warn_once(deleted ? "the trace file was deleted while the program ran; the trace is lost"
            : lost  ? "the program closed the trace file and it cannot be opened again"
                    : "cannot write the trace file",
            err);
}

/* The header, written when the file is made: a process killed before its
 * first chunk leaves a trace that reads as cut short, not an empty file.
 * Its clock rate is an estimate until the first chunk (calibrate). */
/* The header as written: calibrate() writes it again with the clock's
 * rate, and the checksum of that (hh_header_sum). */
static hh_trace_header header;

static bool write_first_header(void) {
  hh_trace_header h;
  memset(&h, 0, sizeof h);
  memcpy(h.magic, HH_TRACE_MAGIC, 8);
  h.version = HH_TRACE_VERSION;
  h.flags = HH_TRACE_FLAG_ZSTD | (hh__tr_opt.stacks ? HH_TRACE_FLAG_STACKS : 0) |
            (hh__tr_opt.sample != 0 ? HH_TRACE_FLAG_SAMPLED : 0);
  h.pid = (uint32_t)getpid();
  h.ppid = (uint32_t)start_ppid;
  bool exact;
  h.ticks_per_second = hh__tr_ticks_per_second_now(&exact);
  h.start_wall_ns = hh__tr_start_wall_ns;
  h.start_ticks = hh__tr_start_ticks;
  h.sample_bytes = hh__tr_opt.sample;
  h.reserved = hh_header_sum(&h);
  header = h;
  bool ok = write_gated(&h, sizeof h);
  if (ok && exact) atomic_store_explicit(&header_done, true, memory_order_release);
  return ok;
}

/* With the header's lock: the calibrated clock rate written over the
 * header's estimate, with the checksum, before any chunk (they all wait
 * for the lock): the whole header in one write. The file is opened
 * O_APPEND, under which Linux's pwrite appends: the flag is off for that
 * one write. */
static bool calibrate(void) {
  header.ticks_per_second = hh__tr_ticks_per_second();
  header.reserved = hh_header_sum(&header);
  int f = hh__own_fd_use(&file);
  if (f < 0) f = reopen(); /* closed behind the hook's back since the start */
  int flags = f >= 0 ? fcntl(f, F_GETFL) : -1;
  bool ok = flags >= 0 && fcntl(f, F_SETFL, flags & ~O_APPEND) == 0;
  if (ok) {
    ok = hh__pwrite_quiet(f, &header, sizeof header, 0) == (ssize_t)sizeof header;
    fcntl(f, F_SETFL, flags);
  }
  hh__own_fd_done(&file);
  return ok;
}

/* The file made and its header written (hh__tr_file_open), the rate
 * calibrated, once; false when there is no file to write to. */
static bool write_header(void) {
  if (atomic_load_explicit(&header_done, memory_order_acquire)) return atomic_load(&file.fd) >= 0;
  pthread_mutex_lock(&header_lock);
  if (!atomic_load_explicit(&header_done, memory_order_relaxed)) {
    bool ok = atomic_load(&file.fd) >= 0 ? calibrate() : create_file() && write_first_header() && calibrate();
    if (!ok) {
      int err = errno;
      hh__own_fd_close(&file);
      atomic_store(&hh__tr_active, false);
      warn_once("cannot write the trace file's header", err);
    }
    atomic_store_explicit(&header_done, true, memory_order_release);
  }
  pthread_mutex_unlock(&header_lock);
  return atomic_load(&file.fd) >= 0;
}

/* ---- compression contexts --------------------------------------------------- */

typedef struct ctx {
  atomic_flag busy;
  ZSTD_CCtx *cctx;
  uint8_t *out; /* chunk header + stored payload */
  size_t out_cap;
  uint8_t *events; /* a thread's buffer transcoded (transcode.c) */
} ctx;
static ctx pool[POOL];

static ctx *ctx_get(void) {
  for (unsigned turns = 0;;) {
    for (int i = 0; i < POOL; i++) {
      if (!atomic_flag_test_and_set_explicit(&pool[i].busy, memory_order_acquire)) return &pool[i];
    }
    hh__backoff(&turns);
  }
}

static void ctx_put(ctx *c) { atomic_flag_clear_explicit(&c->busy, memory_order_release); }

static bool ctx_ready(ctx *c) {
  if (c->out != NULL) return true;
  size_t cap = HH_CHUNK_HEADER_BYTES + ZSTD_compressBound(PROC_CAP);
  uint8_t *out = hh__tr_map(cap);
  if (out == NULL) return false;
  size_t wk = ZSTD_estimateCCtxSize(ZSTD_LEVEL);
  void *work = hh__tr_map(wk);
  if (work != NULL) {
    c->cctx = ZSTD_initStaticCCtx(work, wk);
    if (c->cctx == NULL) munmap(work, wk);
  }
  c->events = hh__tr_map(hh__tr_transcode_room(HH_TR_BUF_CAP));
  if (c->events == NULL) {
    munmap(out, cap);
    return false;
  }
  c->out = out;
  c->out_cap = cap;
  return true;
}

/* Compresses each stream of a transcoded event chunk as a zstd frame of
 * its own (a frame's entropy tables then fit its stream), the frames one
 * after the other; 0 when that does not make it smaller. */
static size_t compress_streams(ctx *c, uint8_t *dst, size_t cap, const uint8_t *src,
                               const size_t sizes[HH_STREAMS_MAX], size_t total) {
  size_t stored = 0;
  for (int i = 0; i < HH_STREAMS_MAX; i++) {
    if (sizes[i] == 0) continue;
    size_t z = ZSTD_compressCCtx(c->cctx, dst + stored, cap - stored, src, sizes[i], ZSTD_LEVEL);
    if (ZSTD_isError(z)) return 0;
    stored += z;
    src += sizes[i];
  }
  return stored < total ? stored : 0;
}

static void write_chunk_now(const uint8_t *raw, size_t len, uint32_t thread, uint64_t events,
                            hh_tr_model *model, uint32_t flags);

/* Not cancelled part-way (base/cancel.h): the callers hold their locks. */
static void write_chunk(const uint8_t *raw, size_t len, uint32_t thread, uint64_t events, hh_tr_model *model,
                        uint32_t flags) {
  if (len == 0 || !atomic_load_explicit(&hh__tr_active, memory_order_relaxed)) return;
  int cancel = hh__cancel_off();
  write_chunk_now(raw, len, thread, events, model, flags);
  hh__cancel_restore(cancel);
}

static void write_chunk_now(const uint8_t *raw, size_t len, uint32_t thread, uint64_t events,
                            hh_tr_model *model, uint32_t flags) {
  if (!write_header()) return;
  ctx *c = ctx_get();
  if (!ctx_ready(c)) {
    ctx_put(c);
    errno = ENOMEM;
    fail();
    return;
  }
  uint8_t *payload = c->out + HH_CHUNK_HEADER_BYTES;
  size_t cap = c->out_cap - HH_CHUNK_HEADER_BYTES, stored = 0;
  uint32_t enc = HH_CHUNK_RAW;
  if (model != NULL && len <= HH_TR_BUF_CAP) {
    /* A thread's events: an event chunk (model.h). */
    size_t sizes[HH_STREAMS_MAX] = {0};
    size_t n = hh__tr_transcode(model, raw, len, c->events, sizes);
    if (n == 0) { /* cannot happen: our own rows */
      errno = EINVAL;
      ctx_put(c);
      fail();
      return;
    }
    raw = c->events;
    len = n;
    if (c->cctx != NULL && (stored = compress_streams(c, payload, cap, raw, sizes, len)) != 0)
      enc = HH_CHUNK_ZSTD;
  } else if (c->cctx != NULL) {
    size_t z = ZSTD_compressCCtx(c->cctx, payload, cap, raw, len, ZSTD_LEVEL);
    if (!ZSTD_isError(z) && z < len) {
      stored = z;
      enc = HH_CHUNK_ZSTD;
    }
  }
  if (enc == HH_CHUNK_RAW) {
    memcpy(payload, raw, len);
    stored = len;
  }
  hh_chunk_header h;
  memcpy(h.magic, HH_CHUNK_MAGIC, 4);
  h.encoding = enc | flags;
  h.stored_bytes = (uint32_t)stored;
  h.decoded_bytes = (uint32_t)len;
  h.checksum = hh_chunk_sum(HH_TRACE_VERSION, payload, stored);
  h.thread = thread;
  memcpy(c->out, &h, sizeof h);
  if (atomic_load_explicit(&hh__tr_active, memory_order_relaxed)) {
    if (write_gated(c->out, HH_CHUNK_HEADER_BYTES + stored))
      atomic_fetch_add_explicit(&events_written, events, memory_order_relaxed);
    else
      fail();
  }
  ctx_put(c);
}

void hh__tr_write_chunk(const uint8_t *raw, size_t len, uint32_t thread, uint64_t events,
                        hh_tr_model *model) {
  write_chunk(raw, len, thread, events, model, 0);
}

void hh__tr_write_provisional(const uint8_t *raw, size_t len, uint32_t thread) {
  write_chunk(raw, len, thread, 0, NULL, HH_CHUNK_PROVISIONAL);
}

uint64_t hh__tr_events_written(void) { return atomic_load(&events_written); }

/* ---- the process buffer ---------------------------------------------------------- */

static pthread_mutex_t meta = PTHREAD_MUTEX_INITIALIZER;
static uint8_t *proc;
static size_t proc_len;
static atomic_bool proc_pending;

void hh__tr_meta_lock(void) { pthread_mutex_lock(&meta); }
void hh__tr_meta_unlock(void) { pthread_mutex_unlock(&meta); }

void hh__tr_proc_flush_locked(void) {
  if (proc_len == 0) return;
  hh__tr_write_chunk(proc, proc_len, 0, 0, NULL);
  proc_len = 0;
  atomic_store_explicit(&proc_pending, false, memory_order_relaxed);
}

uint8_t *hh__tr_proc_reserve(size_t n) {
  if (proc == NULL) {
    proc = hh__tr_map(PROC_CAP);
    if (proc == NULL) return NULL;
  }
  if (proc_len + n > PROC_CAP) hh__tr_proc_flush_locked();
  if (proc_len == 0) {
    /* Every chunk starts with its base time. */
    uint8_t *p = proc;
    *p++ = HH_REC_CHUNK_TIME;
    p = hh__tr_varint(p, hh__tr_now());
    proc_len = (size_t)(p - proc);
  }
  return proc + proc_len;
}

uint8_t *hh__tr_proc_try_reserve(size_t n) {
  if (pthread_mutex_trylock(&meta) != 0) return NULL;
  if (proc == NULL || proc_len + n > PROC_CAP) {
    pthread_mutex_unlock(&meta);
    return NULL;
  }
  return hh__tr_proc_reserve(n);
}

void hh__tr_proc_commit(uint8_t *end) {
  proc_len = (size_t)(end - proc);
  atomic_store_explicit(&proc_pending, true, memory_order_relaxed);
}

void hh__tr_proc_flush(void) {
  if (!atomic_load_explicit(&proc_pending, memory_order_relaxed)) return;
  pthread_mutex_lock(&meta);
  hh__tr_proc_flush_locked();
  pthread_mutex_unlock(&meta);
}

/* ---- fork ------------------------------------------------------------------------ */

void hh__tr_writer_prepare(void) {
  pthread_mutex_lock(&meta);
  pthread_mutex_lock(&header_lock);
  for (int i = 0; i < POOL; i++) {
    for (unsigned turns = 0; atomic_flag_test_and_set_explicit(&pool[i].busy, memory_order_acquire);)
      hh__backoff(&turns);
  }
}

void hh__tr_writer_parent(void) {
  for (int i = 0; i < POOL; i++) ctx_put(&pool[i]);
  pthread_mutex_unlock(&header_lock);
  pthread_mutex_unlock(&meta);
}

void hh__tr_writer_child(void) {
  for (int i = 0; i < POOL; i++) ctx_put(&pool[i]);
  pthread_mutex_init(&header_lock, NULL);
  pthread_mutex_init(&meta, NULL);
  pthread_mutex_init(&reopen_lock, NULL);
  lost = false;
  deleted = false;
  /* The parent's pending process records are the parent's to write. */
  proc_len = 0;
  atomic_store(&proc_pending, false);
  atomic_store(&events_written, 0);
  atomic_store(&warned, false);
  /* Only the forking thread lives on, and not between an exec's begin and
   * end (fork is not called there). */
  hh__tr_gate_reset(&exec_gate);
  t_exec = false;
}
