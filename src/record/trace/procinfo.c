/* What the tracer records about the process besides its events: loaded
 * modules (so that addresses can be symbolized later), the command line,
 * and RSS. /proc is read with open/read (no stdio); modules come from
 * dl_iterate_phdr, rescanned when its load/unload counters move. */
#define _GNU_SOURCE
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/cancel.h"
#include "base/own_fd.h"
#include "gate.h"
#include "internal.h"

/* ---- the loader gate (internal.h) --------------------------------------------- */

static hh_tr_gate loader_gate;
static __thread int t_loader_depth __attribute__((tls_model("initial-exec")));
static __thread bool t_forking __attribute__((tls_model("initial-exec")));

void hh__tr_loader_enter(void) {
  hh__tr_gate_enter(&loader_gate, t_forking);
  t_loader_depth++;
}

bool hh__tr_loader_try_enter(void) {
  if (!hh__tr_gate_try_enter(&loader_gate, t_forking)) return false;
  t_loader_depth++;
  return true;
}

void hh__tr_loader_leave(void) {
  t_loader_depth--;
  hh__tr_gate_leave(&loader_gate);
}

void hh__tr_loader_fork_prepare(void) {
  t_forking = true;
  hh__tr_gate_close(&loader_gate, t_loader_depth);
}

void hh__tr_loader_fork_parent(void) {
  t_forking = false;
  hh__tr_gate_open(&loader_gate);
}

void hh__tr_loader_fork_child(void) {
  t_forking = false;
  hh__tr_gate_reset(&loader_gate);
  /* the calls this thread was inside (a fork from a signal handler) go on */
  atomic_store(&loader_gate.inside, t_loader_depth);
}

static char exe[4096];
static size_t exe_len;

static void read_exe(void) {
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  exe_len = n > 0 ? (size_t)n : 0;
  exe[exe_len] = '\0';
}

/* ---- our own text ------------------------------------------------------------- */

static uintptr_t self_lo, self_hi;

typedef struct text {
  uintptr_t addr, lo, hi; /* an address, and the executable text around it */
} text;

static int find_text(struct dl_phdr_info *info, size_t size, void *data) {
  (void)size;
  text *t = data;
  uintptr_t me = t->addr, lo = UINTPTR_MAX, hi = 0;
  bool mine = false;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type != PT_LOAD) continue;
    uintptr_t s = info->dlpi_addr + ph->p_vaddr, e = s + ph->p_memsz;
    if (me >= s && me < e) mine = true;
    if (ph->p_flags & PF_X) {
      if (s < lo) lo = s;
      if (e > hi) hi = e;
    }
  }
  if (!mine) return 0;
  t->lo = lo;
  t->hi = hi;
  return 1;
}

bool hh__tr_text_of(uintptr_t addr, uintptr_t *lo, uintptr_t *hi) {
  text t = {addr, 0, 0};
  hh__tr_loader_enter();
  dl_iterate_phdr(find_text, &t);
  hh__tr_loader_leave();
  *lo = t.lo;
  *hi = t.hi;
  return t.hi != 0;
}

void hh__tr_self_init(void) {
  hh__tr_text_of((uintptr_t)hh__tr_self_init, &self_lo, &self_hi);
  read_exe();
}

bool hh__tr_in_self(uintptr_t ip) { return ip >= self_lo && ip < self_hi; }

/* ---- modules --------------------------------------------------------------------- */

#define MAX_MODULES 4096
#define SCRATCH_BYTES (4u << 20)

typedef struct known {
  uint64_t base, name_hash;
  uintptr_t lo, hi; /* its segments' span */
} known;

static pthread_mutex_t mod_lock = PTHREAD_MUTEX_INITIALIZER;
static known *mods, *cur;
static size_t nmods, ncur;
static uint8_t *scratch; /* records, each after its u32 length */
static size_t scratch_len;
/* A relative module name made absolute (note_module; under mod_lock), here
 * and not on the stack: the scan after a dlopen runs in the stack cache's
 * next miss, in whatever thread, and with these 4 KiB in its frame a
 * thread of 16 KiB whose first allocation after a dlopen came deep in its
 * stack overflowed 17 levels of ~170 bytes sooner (preload.small_stack). */
static char abs_name[4096];
static unsigned long long last_adds, last_subs;
static atomic_bool scanned_once;

static uint64_t hash_name(const char *s) {
  uint64_t h = 1469598103934665603ull;
  for (; *s; s++) h = (h ^ (uint8_t)*s) * 1099511628211ull;
  return h;
}

static int read_counters(struct dl_phdr_info *info, size_t size, void *data) {
  unsigned long long *out = data;
  if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs) {
    out[0] = info->dlpi_adds;
    out[1] = info->dlpi_subs;
  }
  return 1;
}

static size_t build_id(const struct dl_phdr_info *info, char *hex, size_t cap) {
  static const char digits[] = "0123456789abcdef";
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type != PT_NOTE) continue;
    const uint8_t *p = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr), *end = p + ph->p_memsz;
    while (p + sizeof(ElfW(Nhdr)) <= end) {
      const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)p;
      const uint8_t *name = p + sizeof *nh;
      const uint8_t *desc = name + ((nh->n_namesz + 3u) & ~3u);
      const uint8_t *next = desc + ((nh->n_descsz + 3u) & ~3u);
      if (next > end) break;
      if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 && memcmp(name, "GNU", 4) == 0) {
        size_t n = 0;
        for (uint32_t k = 0; k < nh->n_descsz && n + 2 < cap; k++) {
          hex[n++] = digits[desc[k] >> 4];
          hex[n++] = digits[desc[k] & 15];
        }
        return n;
      }
      p = next;
    }
  }
  return 0;
}

static bool is_known(const known *set, size_t n, uint64_t base, uint64_t h) {
  for (size_t i = 0; i < n; i++) {
    if (set[i].base == base && set[i].name_hash == h) return true;
  }
  return false;
}

static uint8_t *scratch_reserve(size_t n) {
  if (scratch_len + 4 + n > SCRATCH_BYTES) return NULL;
  return scratch + scratch_len + 4;
}

static void scratch_commit(uint8_t *end) {
  uint32_t n = (uint32_t)(end - (scratch + scratch_len + 4));
  memcpy(scratch + scratch_len, &n, 4);
  scratch_len += 4 + n;
}

static int note_module(struct dl_phdr_info *info, size_t size, void *data) {
  (void)size;
  (void)data;
  const char *name = info->dlpi_name != NULL && info->dlpi_name[0] != '\0' ? info->dlpi_name : NULL;
  if (name == NULL) {
    /* The main program (empty name) or an unnamed object: the program's
     * path, for the one whose base is the executable's. */
    if (ncur > 0 && is_known(cur, ncur, info->dlpi_addr, hash_name(exe))) return 0;
    name = exe;
  }
  uint64_t h = hash_name(name);
  uintptr_t lo = UINTPTR_MAX, hi = 0;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type != PT_LOAD) continue;
    uintptr_t s = info->dlpi_addr + ph->p_vaddr;
    if (s < lo) lo = s;
    if (s + ph->p_memsz > hi) hi = s + ph->p_memsz;
  }
  if (ncur < MAX_MODULES) cur[ncur++] = (known){info->dlpi_addr, h, lo, hi};
  if (is_known(mods, nmods, info->dlpi_addr, h)) return 0;
  /* A relative name (dlopen("./lib.so"), a library found through a
   * relative LD_LIBRARY_PATH) is the loader's, relative to the directory
   * the program was in at the load: made absolute with the directory it is
   * in now (the same, but for a program that changed directory between
   * the load and the first allocation since). Before, it was recorded as
   * given and no reader could find the file (trace.dl_relative). */
  /* (a name without '/' is no file's: the vDSO, "linux-vdso.so.1") */
  char *abs = abs_name;
  if (name[0] != '/' && strchr(name, '/') != NULL && name != exe && getcwd(abs, sizeof abs_name) != NULL &&
      abs[0] == '/') {
    size_t dl = strlen(abs), nl = strlen(name);
    const char *rest = name;
    while (rest[0] == '.' && rest[1] == '/') rest += 2;
    nl = strlen(rest);
    if (dl + 1 + nl < sizeof abs_name) {
      if (dl > 1) abs[dl++] = '/';
      memcpy(abs + dl, rest, nl + 1);
      name = abs;
    }
  }
  size_t path_len = strnlen(name, 4096);
  uint8_t *p = scratch_reserve(1 + 10 + 12 + path_len + 140 + 12 + (size_t)info->dlpi_phnum * 30);
  if (p == NULL) return 0;
  char hex[130];
  size_t hex_len = build_id(info, hex, sizeof hex);
  *p++ = HH_REC_MODULE_LOAD;
  p = hh__tr_varint(p, info->dlpi_addr);
  p = hh__tr_string(p, name, path_len);
  p = hh__tr_string(p, hex, hex_len);
  uint64_t nseg = 0;
  for (int i = 0; i < info->dlpi_phnum; i++) nseg += info->dlpi_phdr[i].p_type == PT_LOAD;
  p = hh__tr_varint(p, nseg);
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type != PT_LOAD) continue;
    p = hh__tr_varint(p, info->dlpi_addr + ph->p_vaddr);
    p = hh__tr_varint(p, ph->p_memsz);
    p = hh__tr_varint(p, ph->p_offset);
  }
  scratch_commit(p);
  return 0;
}

/* With the loader gate passed. */
static void modules_scan(bool cheap) {
  unsigned long long c[2] = {0, 0};
  if (cheap && atomic_load_explicit(&scanned_once, memory_order_relaxed)) {
    dl_iterate_phdr(read_counters, c);
    if (c[0] == __atomic_load_n(&last_adds, __ATOMIC_RELAXED) &&
        c[1] == __atomic_load_n(&last_subs, __ATOMIC_RELAXED))
      return;
  }
  /* Never wait: the caller may be inside a dl_iterate_phdr callback. */
  if (pthread_mutex_trylock(&mod_lock) != 0) return;
  if (scratch == NULL) {
    scratch = hh__tr_map(SCRATCH_BYTES);
    mods = hh__tr_map(MAX_MODULES * sizeof(known));
    cur = hh__tr_map(MAX_MODULES * sizeof(known));
    if (scratch == NULL || mods == NULL || cur == NULL) {
      pthread_mutex_unlock(&mod_lock);
      return;
    }
  }
  dl_iterate_phdr(read_counters, c);
  scratch_len = 0;
  ncur = 0;
  dl_iterate_phdr(note_module, NULL);
  /* The modules gone come first: an UNLOAD names a base only, and a
   * module loaded where one was unloaded since the last scan has its base
   * (before, its LOAD came first, and the reader applied the UNLOAD to it:
   * trace.dl_reuse). Stacks through a module gone get new ids. */
  size_t gone = 0;
  for (size_t i = 0; i < nmods; i++) gone += !is_known(cur, ncur, mods[i].base, mods[i].name_hash);
  if (gone > 0 || scratch_len > 0) {
    hh__tr_meta_lock();
    for (size_t i = 0; i < nmods && gone > 0; i++) {
      if (is_known(cur, ncur, mods[i].base, mods[i].name_hash)) continue;
      hh__tr_stacks_forget(mods[i].lo, mods[i].hi);
      uint8_t *p = hh__tr_proc_reserve(1 + HH_VARINT_MAX);
      if (p == NULL) break;
      *p++ = HH_REC_MODULE_UNLOAD;
      p = hh__tr_varint(p, mods[i].base);
      hh__tr_proc_commit(p);
    }
    for (size_t i = 0; i < ncur; i++)
      if (!is_known(mods, nmods, cur[i].base, cur[i].name_hash)) hh__tr_stacks_loaded(cur[i].lo, cur[i].hi);
    hh__tr_meta_unlock();
  }
  memcpy(mods, cur, ncur * sizeof(known));
  nmods = ncur;
  __atomic_store_n(&last_adds, c[0], __ATOMIC_RELAXED);
  __atomic_store_n(&last_subs, c[1], __ATOMIC_RELAXED);
  atomic_store(&scanned_once, true);
  if (scratch_len > 0) {
    hh__tr_meta_lock();
    for (size_t off = 0; off < scratch_len;) {
      uint32_t n;
      memcpy(&n, scratch + off, 4);
      uint8_t *p = hh__tr_proc_reserve(n);
      if (p == NULL) break;
      memcpy(p, scratch + off + 4, n);
      hh__tr_proc_commit(p + n);
      off += 4 + n;
    }
    hh__tr_meta_unlock();
  }
  pthread_mutex_unlock(&mod_lock);
}

/* Skipped while a fork is under way (the callers may hold the tracer's
 * locks; a later scan catches up). */
void hh__tr_modules_scan(bool cheap) {
  if (!hh__tr_loader_try_enter()) return;
  modules_scan(cheap);
  hh__tr_loader_leave();
}

void hh__tr_modules_reset(void) {
  pthread_mutex_init(&mod_lock, NULL);
  nmods = 0;
  atomic_store(&scanned_once, false);
}

/* ---- command line ------------------------------------------------------------------ */

/* The arguments kept (the process records' room), then a last one that
 * says what was left out. */
#define CMDLINE_MAX (60u << 10)
#define CMDLINE_NOTE 128u
#define CMDLINE_SCRATCH 4096u

/* The rest of the command line after CMDLINE_MAX bytes, counted: arguments
 * (their ends) and bytes. */
static void count_rest(int fd, uint8_t *scratch, uint64_t *args, uint64_t *bytes) {
  for (;;) {
    ssize_t n = read(fd, scratch, CMDLINE_SCRATCH);
    if (n <= 0) return;
    *bytes += (uint64_t)n;
    for (ssize_t i = 0; i < n; i++) *args += scratch[i] == '\0';
  }
}

void hh__tr_command_record(void) {
  uint8_t *buf = hh__tr_map(CMDLINE_MAX + CMDLINE_NOTE + CMDLINE_SCRATCH);
  if (buf == NULL) return;
  size_t len = 0;
  uint64_t more_args = 0, more_bytes = 0;
  int cancel = hh__cancel_off();
  int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    while (len < CMDLINE_MAX) {
      ssize_t n = read(fd, buf + len, CMDLINE_MAX - len);
      if (n <= 0) break;
      len += (size_t)n;
    }
    if (len == CMDLINE_MAX) count_rest(fd, buf + CMDLINE_MAX + CMDLINE_NOTE, &more_args, &more_bytes);
    close(fd);
  }
  hh__cancel_restore(cancel);
  if (more_bytes > 0 || (len == CMDLINE_MAX && buf[len - 1] != '\0')) {
    /* Cut: the argument read in part is left out whole, and a last one
     * says how many were (a command of 20,001 arguments came out as its
     * first 12,091, the last cut mid-word, as if it were the whole). */
    size_t keep = len;
    while (keep > 0 && buf[keep - 1] != '\0') keep--;
    more_bytes += len - keep;
    if (keep < len && more_bytes == len - keep) more_args++; /* (its end never came) */
    len = keep;
    int n =
        snprintf((char *)buf + len, CMDLINE_NOTE, "[heaphook: %llu more arguments (%llu bytes) not recorded]",
                 (unsigned long long)more_args, (unsigned long long)more_bytes);
    if (n > 0 && (unsigned)n < CMDLINE_NOTE) len += (size_t)n + 1;
  } else if (len > 0 && buf[len - 1] != '\0') {
    buf[len++] = '\0'; /* (a title the program wrote over its arguments) */
  }
  uint64_t argc = 0;
  for (size_t i = 0; i < len; i++) argc += buf[i] == '\0';
  hh__tr_meta_lock();
  uint8_t *p = hh__tr_proc_reserve(1 + HH_VARINT_MAX + len + argc * HH_VARINT_MAX + HH_VARINT_MAX + exe_len);
  if (p != NULL) {
    *p++ = HH_REC_COMMAND;
    p = hh__tr_varint(p, argc);
    for (size_t i = 0; i < len;) {
      size_t n = strlen((const char *)buf + i);
      p = hh__tr_string(p, (const char *)buf + i, n);
      i += n + 1;
    }
    p = hh__tr_string(p, exe, exe_len);
    hh__tr_proc_commit(p);
  }
  hh__tr_meta_unlock();
  munmap(buf, CMDLINE_MAX + 1);
}

/* ---- RSS ------------------------------------------------------------------------------ */

/* /proc/self/statm stays open (registered, base/own_fd.h) and is read again
 * from its start: opening it every 10 ms inside a program thread's malloc
 * took the lowest free number for a moment, which another thread of the
 * program, opening a file as it does after close(0), could then not get.
 * Opened at start-up (hh__tr_procfs_open) while only one thread runs, and
 * opened again here only when the program closed it with a raw system
 * call. */
static hh_own_fd statm = HH_OWN_FD_INIT(HH_OWN_FD_STATM);
/* /proc/self/stat, kept open the same way for hh__tr_only_tracer_left. */
static hh_own_fd stat_fd = HH_OWN_FD_INIT(HH_OWN_FD_STATM);
static pthread_mutex_t statm_lock = PTHREAD_MUTEX_INITIALIZER;

static void keep_open(hh_own_fd *o, const char *path) {
  int fd = hh__own_fd_use(o);
  hh__own_fd_done(o);
  if (fd >= 0) return;
  fd = hh__own_fd_raise(open(path, O_RDONLY | O_CLOEXEC), HH_OWN_FD_STATM, true);
  if (fd >= 0 && !hh__own_fd_add(fd, o)) close(fd);
}

void hh__tr_procfs_open(void) {
  int cancel = hh__cancel_off();
  pthread_mutex_lock(&statm_lock);
  keep_open(&statm, "/proc/self/statm");
  keep_open(&stat_fd, "/proc/self/stat");
  pthread_mutex_unlock(&statm_lock);
  hh__cancel_restore(cancel);
}

void hh__tr_procfs_reset(void) {
  pthread_mutex_init(&statm_lock, NULL);
  hh__own_fd_close(&statm); /* the parent's process */
  hh__own_fd_close(&stat_fd);
}

/* ---- the end of the program's threads ------------------------------------------
 * When main returns from pthread_exit, the process lives on until its last
 * thread ends, and glibc's last thread calls exit(0). The tracer's writer
 * thread is one of them: left alone, it kept the process alive forever,
 * with every signal blocked (a program ending that way could only be
 * SIGKILLed). The writer asks this every time it wakes: main is gone (the
 * thread group's leader a zombie) and no thread but the tracer's
 * tracer_threads live (the count includes the zombie). */
bool hh__tr_only_tracer_left(char name[16], int tracer_threads) {
  char buf[512];
  int fd = hh__own_fd_use(&stat_fd);
  ssize_t n = fd >= 0 ? pread(fd, buf, sizeof buf - 1, 0) : -1;
  hh__own_fd_done(&stat_fd);
  if (n <= 0) return false;
  buf[n] = '\0';
  const char *p = strrchr(buf, ')'); /* after the command's name, which may hold anything */
  const char *open = strchr(buf, '(');
  if (p == NULL || open == NULL || open > p || p[1] != ' ' || p[2] != 'Z') return false;
  size_t len = (size_t)(p - open - 1) < 15 ? (size_t)(p - open - 1) : 15;
  memcpy(name, open + 1, len);
  name[len] = '\0';
  /* Field 3 (the state) follows the first space after it, field 20
   * (num_threads) the 18th. */
  for (int space = 0; space < 18 && p != NULL; space++) p = strchr(p + 1, ' ');
  return p != NULL && strtol(p + 1, NULL, 10) <= 1 + tracer_threads;
}

void hh__tr_rss_record(uint64_t time) {
  char buf[128];
  int cancel = hh__cancel_off();
  int fd = hh__own_fd_use(&statm);
  if (fd < 0) {
    hh__own_fd_done(&statm);
    hh__tr_procfs_open();
    fd = hh__own_fd_use(&statm);
  }
  ssize_t n = fd >= 0 ? pread(fd, buf, sizeof buf - 1, 0) : -1;
  hh__own_fd_done(&statm);
  hh__cancel_restore(cancel);
  if (n <= 0) return;
  buf[n] = '\0';
  const char *p = buf;
  while (*p != ' ' && *p != '\0') p++; /* size, then resident */
  while (*p == ' ') p++;
  uint64_t pages = 0;
  for (; *p >= '0' && *p <= '9'; p++) pages = pages * 10 + (uint64_t)(*p - '0');
  long page = sysconf(_SC_PAGESIZE);
  hh__tr_meta_lock();
  /* Timed again under the lock, which orders the records: two samplers
   * (the writer, a program thread's periodic look) that took their times
   * before it, the later first, wrote the earlier time after the later
   * one when a stack table's growth held the lock between them ("events
   * came too late" on a single-threaded program with 500,000 stacks). */
  uint64_t now = hh__tr_now();
  if (now > time) time = now;
  uint8_t *q = hh__tr_proc_reserve(1 + 2 * HH_VARINT_MAX);
  if (q != NULL) {
    *q++ = HH_REC_RSS;
    q = hh__tr_varint(q, time);
    q = hh__tr_varint(q, pages * (uint64_t)(page > 0 ? page : 4096));
    hh__tr_proc_commit(q);
  }
  hh__tr_meta_unlock();
}
