/* The memory a process may use (memory_limit.h). */
#include "base/memory_limit.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#define PATH_BYTES 4096

static char g_text[PATH_BYTES]; /* a file's first bytes */
static char g_dir[PATH_BYTES];  /* a cgroup directory, then a file in it */

/* Reads the start of path into g_text (NUL-terminated); its length or -1. */
static ssize_t read_text(const char *path) {
  int fd;
  do fd = open(path, O_RDONLY | O_CLOEXEC);
  while (fd < 0 && errno == EINTR);
  if (fd < 0) return -1;
  size_t n = 0;
  while (n < sizeof g_text - 1) {
    ssize_t r = read(fd, g_text + n, sizeof g_text - 1 - n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    n += (size_t)r;
  }
  close(fd);
  g_text[n] = '\0';
  return (ssize_t)n;
}

/* The limit in g_text's number, or SIZE_MAX ("max", not a number). */
static size_t parse_limit(void) {
  const char *p = g_text;
  if (*p < '0' || *p > '9') return SIZE_MAX;
  uint64_t v = 0;
  for (; *p >= '0' && *p <= '9'; p++) {
    if (v > (UINT64_MAX - 9) / 10) return SIZE_MAX;
    v = v * 10 + (uint64_t)(*p - '0');
  }
  return v >= (uint64_t)1 << 62 ? SIZE_MAX : (size_t)v; /* (v1's "unlimited": 2^63 less a page) */
}

/* Appends s to g_dir at *len; false when it does not fit. */
static bool append(size_t *len, const char *s, size_t n) {
  if (*len + n >= sizeof g_dir) return false;
  memcpy(g_dir + *len, s, n);
  *len += n;
  g_dir[*len] = '\0';
  return true;
}

/* The smallest limit in file `name` of the directory base + cgroup and of
 * each of its ancestors down to base itself (a limit applies to the groups
 * below it; inside a container the group's path may name a directory that
 * is not there, where base is the container's own group). */
static size_t smallest_up(const char *root, const char *base, const char *cgroup, size_t cgroup_len,
                          const char *name) {
  size_t best = SIZE_MAX;
  for (;;) {
    size_t len = 0;
    g_dir[0] = '\0';
    if (!append(&len, root, strlen(root)) || !append(&len, base, strlen(base)) ||
        !append(&len, cgroup, cgroup_len) || !append(&len, "/", 1) || !append(&len, name, strlen(name)))
      return best;
    if (read_text(g_dir) > 0) {
      size_t v = parse_limit();
      if (v < best) best = v;
    }
    if (cgroup_len == 0) return best;
    while (cgroup_len > 0 && cgroup[cgroup_len - 1] != '/') cgroup_len--; /* the parent */
    if (cgroup_len > 0) cgroup_len--;                                     /* (its slash) */
  }
}

/* True when the comma-separated list [s, s + n) names the memory controller. */
static bool names_memory(const char *s, size_t n) {
  const char *end = s + n;
  while (s < end) {
    const char *comma = memchr(s, ',', (size_t)(end - s));
    size_t len = (size_t)((comma ? comma : end) - s);
    if (len == 6 && memcmp(s, "memory", 6) == 0) return true;
    s += len + 1;
  }
  return false;
}

size_t hh__memory_limit_under(const char *root, size_t physical) {
  int saved = errno;
  size_t limit = physical;
  size_t len = 0;
  g_dir[0] = '\0';
  if (append(&len, root, strlen(root)) && append(&len, "/proc/self/cgroup", 17) && read_text(g_dir) > 0) {
    /* Lines "ID:CONTROLLERS:PATH"; v2's has ID 0 and no controllers. Copied
     * out of g_text first: smallest_up reads files into it. */
    static char lines[PATH_BYTES];
    memcpy(lines, g_text, sizeof lines);
    for (char *line = lines; *line;) {
      char *eol = strchr(line, '\n');
      size_t line_len = eol ? (size_t)(eol - line) : strlen(line);
      char *c1 = memchr(line, ':', line_len);
      char *c2 = c1 ? memchr(c1 + 1, ':', line_len - (size_t)(c1 + 1 - line)) : NULL;
      if (c2) {
        const char *path = c2 + 1;
        size_t path_len = line_len - (size_t)(path - line);
        while (path_len > 0 && path[path_len - 1] == '/') path_len--; /* "/" is the top */
        size_t v = SIZE_MAX;
        if (c2 == c1 + 1 && c1 - line == 1 && line[0] == '0')
          v = smallest_up(root, "/sys/fs/cgroup", path, path_len, "memory.max");
        else if (names_memory(c1 + 1, (size_t)(c2 - c1 - 1)))
          v = smallest_up(root, "/sys/fs/cgroup/memory", path, path_len, "memory.limit_in_bytes");
        if (v < limit) limit = v;
      }
      if (!eol) break;
      line = eol + 1;
    }
  }
  errno = saved;
  return limit;
}

size_t hh__memory_limit(void) {
  int saved = errno;
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  size_t physical = pages > 0 && page > 0 ? (size_t)pages * (size_t)page : SIZE_MAX;
  errno = saved;
  return hh__memory_limit_under("", physical);
}
