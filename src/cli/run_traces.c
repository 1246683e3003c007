/* The traces of a `heaphook run` (run_traces.h). */
#define _GNU_SOURCE
#include "run_traces.h"

#include <dirent.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "escape.h"
#include "trace/format.h"
#include "trace/naming.h"
#include "trace/reader.h"
#include "trace/xalloc.h"

/* A trace is "ours" when it started after the run did (a second of slack:
 * the header's start is taken before the program's first allocation). */
#define SLACK_NS 1000000000ull

pid_t hh_run_trace_writer(const char *path, const char *pattern) {
  struct stat st;
  hh_trace_header h;
  FILE *f = fopen(path, "rb");
  if (f == NULL) return 0;
  bool is_trace = fstat(fileno(f), &st) == 0 && fread(&h, sizeof h, 1, f) == 1 &&
                  memcmp(h.magic, HH_TRACE_MAGIC, sizeof h.magic) == 0 && h.pid != 0;
  fclose(f);
  if (!is_trace) return 0;
  /* The files that process writes: this one, and when it exec'd other
   * programs, theirs, which follow the numbered pattern ("<pid>.1", ...):
   * after its exec the process has closed this one, but its run goes on
   * and reads it for its summary. */
  struct {
    dev_t dev;
    ino_t ino;
  } files[100] = {{st.st_dev, st.st_ino}};
  int nfiles = 1;
  char numbered[PATH_MAX + 8];
  if (pattern != NULL && hh_trace_numbered(pattern, numbered, sizeof numbered) == 0) {
    for (; nfiles < (int)(sizeof files / sizeof *files); nfiles++) {
      char pid[32], next[PATH_MAX];
      struct stat n;
      snprintf(pid, sizeof pid, "%" PRIu32 ".%d", h.pid, nfiles);
      hh_run_expand(numbered, pid, next, sizeof next);
      if (stat(next, &n) != 0) break;
      files[nfiles].dev = n.st_dev;
      files[nfiles].ino = n.st_ino;
    }
  }
  char dir[64];
  snprintf(dir, sizeof dir, "/proc/%" PRIu32 "/fd", h.pid);
  DIR *d = opendir(dir);
  if (d == NULL) return 0; /* gone (or another user's: not ours to replace anyway) */
  pid_t writer = 0;
  for (struct dirent *e; writer == 0 && (e = readdir(d)) != NULL;) {
    char fd[64 + 256];
    struct stat o;
    snprintf(fd, sizeof fd, "%s/%s", dir, e->d_name);
    if (e->d_name[0] == '.' || stat(fd, &o) != 0) continue;
    for (int i = 0; i < nfiles && writer == 0; i++)
      if (o.st_dev == files[i].dev && o.st_ino == files[i].ino) writer = (pid_t)h.pid;
  }
  closedir(d);
  return writer;
}

void hh_run_expand(const char *pattern, const char *pid, char *out, size_t size) {
  size_t n = 0;
  for (const char *p = pattern; *p && n + 1 < size; p++) {
    if (p[0] == '%' && p[1] == 'p') {
      n += (size_t)snprintf(out + n, size - n, "%s", pid);
      if (n >= size) n = size - 1;
      p++;
    } else {
      if (p[0] == '%' && p[1] == '%') p++;
      out[n++] = *p;
    }
  }
  out[n] = 0;
}

int hh_run_exec_chain(const char *pattern, pid_t pid, uint64_t since_ns, char (*out)[PATH_MAX], int max) {
  /* A fixed path is the first program's trace; the ones it execs follow
   * the numbered pattern, from "<pid>.1" (trace/naming.h). */
  char numbered[PATH_MAX + 8];
  bool fixed = !hh_trace_pid_at(pattern);
  if (fixed && hh_trace_numbered(pattern, numbered, sizeof numbered) != 0) fixed = false;
  int found = 0;
  for (int seq = 0; seq < 100 && found < max; seq++) {
    char pidtext[32], path[PATH_MAX];
    if (seq)
      snprintf(pidtext, sizeof pidtext, "%d.%d", (int)pid, seq);
    else
      snprintf(pidtext, sizeof pidtext, "%d", (int)pid);
    hh_run_expand(fixed && seq ? numbered : pattern, pidtext, path, sizeof path);
    hh_reader *r = hh_reader_open(path, NULL, 0);
    if (!r) {
      if (access(path, F_OK) != 0) break;
      continue;
    }
    const hh_trace_header *h = hh_reader_header(r);
    bool ours = h->pid == (uint32_t)pid && h->start_wall_ns + SLACK_NS >= since_ns;
    hh_reader_close(r);
    if (ours) snprintf(out[found++], PATH_MAX, "%s", path);
  }
  return found;
}

/* name without its directory, safe for heaphook's lines (escape.h) */
static void program_name(const char *name, char *out, size_t size) {
  const char *slash = strrchr(name, '/');
  char safe[PATH_MAX];
  snprintf(out, size, "%s", hh_text_safe(slash ? slash + 1 : name, safe, sizeof safe));
}

bool hh_run_exec_of(const char *path, char *out, size_t size) {
  hh_reader *r = hh_reader_open(path, NULL, 0);
  if (!r) return false;
  hh_event ev;
  while (hh_reader_next(r, &ev)) {
  }
  const char *exec = hh_reader_exec(r);
  bool found = exec && *exec;
  if (found) program_name(exec, out, size);
  hh_reader_close(r);
  return found;
}

bool hh_run_program(const char *path, char *out, size_t size) {
  snprintf(out, size, "?");
  hh_reader *r = hh_reader_open(path, NULL, 0);
  if (!r) return false;
  snprintf(out, size, "pid %" PRIu32 ", program not recorded (no chunk written)", hh_reader_header(r)->pid);
  bool found = false;
  hh_event ev;
  /* COMMAND is among the first records of the first chunk */
  for (int i = 0; i < 100000 && hh_reader_next(r, &ev); i++) {
    if (ev.kind != HH_EV_COMMAND) continue;
    const char *const *argv;
    const char *exe;
    hh_reader_command(r, &argv, &exe);
    found = exe && *exe;
    if (found) program_name(exe, out, size);
    break;
  }
  hh_reader_close(r);
  return found;
}

typedef struct found {
  uint32_t pid, ppid;
  char *path;
} found;

static int by_pid(const void *a, const void *b) {
  const found *x = a, *y = b;
  if (x->pid != y->pid) return x->pid < y->pid ? -1 : 1;
  return strcmp(x->path, y->path);
}

/* Whether name is prefix, then "<digits>" or "<digits>.<digits>", then suffix. */
static bool matches(const char *name, const char *prefix, const char *suffix) {
  size_t n = strlen(name), np = strlen(prefix), ns = strlen(suffix);
  if (n <= np + ns || strncmp(name, prefix, np) != 0 || strcmp(name + n - ns, suffix) != 0) return false;
  const char *p = name + np, *end = name + n - ns;
  bool digits = false, dot = false;
  for (; p < end; p++) {
    if (*p >= '0' && *p <= '9') {
      digits = true;
    } else if (*p == '.' && digits && !dot) {
      dot = true;
      digits = false;
    } else {
      return false;
    }
  }
  return digits;
}

int hh_run_descendants(const char *pattern, pid_t pid, uint64_t since_ns, char (*out)[PATH_MAX], int max) {
  /* the names the tracer gives: the expansion around the first %p (a
   * pattern with another %p after it is not searched) */
  char numbered[PATH_MAX + 8];
  if (!hh_trace_pid_at(pattern)) { /* a fixed path: the others follow its numbered pattern */
    if (hh_trace_numbered(pattern, numbered, sizeof numbered) != 0) return 0;
    pattern = numbered;
  }
  const char *at = hh_trace_pid_at(pattern);
  if (at == NULL || hh_trace_pid_at(at + 2) != NULL) return 0;
  char head[PATH_MAX], tail[PATH_MAX], before[PATH_MAX];
  snprintf(before, sizeof before, "%.*s", (int)(at - pattern), pattern);
  hh_run_expand(before, "", head, sizeof head);
  hh_run_expand(at + 2, "", tail, sizeof tail);
  if (strchr(tail, '/') != NULL) return 0;
  char *slash = strrchr(head, '/');
  const char *dir = ".", *prefix = head;
  if (slash != NULL) {
    *slash = 0;
    dir = head[0] ? head : "/";
    prefix = slash + 1;
  }
  DIR *d = opendir(dir);
  if (d == NULL) return 0;
  found *all = NULL;
  size_t n = 0, cap = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (!matches(e->d_name, prefix, tail)) continue;
    char path[PATH_MAX];
    if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, e->d_name) >= sizeof path) continue;
    hh_reader *r = hh_reader_open(path, NULL, 0);
    if (r == NULL) continue;
    const hh_trace_header *h = hh_reader_header(r);
    if (h->start_wall_ns + SLACK_NS >= since_ns && h->pid != (uint32_t)pid) {
      if (n == cap) {
        cap = cap ? 2 * cap : 64;
        all = xrealloc(all, cap * sizeof *all);
      }
      all[n++] = (found){h->pid, h->ppid, xstrdup(path)};
    }
    hh_reader_close(r);
  }
  closedir(d);
  /* pid's descendants: the traces whose parent is pid or a descendant, and
   * those of a descendant's pid (a program it exec'd: its parent, read when
   * it started, may have exited by then, as a daemon's has), a pass per
   * generation; pids are looked up in the list itself */
  bool *in = xcalloc(n ? n : 1, sizeof *in);
  for (bool grew = true; grew;) {
    grew = false;
    for (size_t i = 0; i < n; i++) {
      if (in[i]) continue;
      bool child = all[i].ppid == (uint32_t)pid;
      for (size_t j = 0; j < n && !child; j++)
        child = in[j] && (all[j].pid == all[i].ppid || all[j].pid == all[i].pid);
      if (child) in[i] = grew = true;
    }
  }
  size_t k = 0;
  for (size_t i = 0; i < n; i++) {
    if (in[i])
      all[k++] = all[i];
    else
      free(all[i].path);
  }
  qsort(all, k, sizeof *all, by_pid);
  for (size_t i = 0; i < k; i++) {
    if ((int)i < max) snprintf(out[i], PATH_MAX, "%s", all[i].path);
    free(all[i].path);
  }
  free(all);
  free(in);
  return (int)k;
}
