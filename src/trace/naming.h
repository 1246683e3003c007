/* How traces are named when HEAPHOOK_OUTPUT is a fixed path (no "%p"):
 * shared by the tracer, which names them, and `heaphook run`, which finds
 * them (docs/trace-format.md, "Writing a trace").
 *
 * The fixed path is the trace of the process that starts tracing first.
 * The others (its forked children, the programs they exec, the program it
 * execs itself, which keeps its pid) follow the numbered pattern: the path
 * with ".%p" put before the file name's extension, "app.hhtrace" ->
 * "app.%p.hhtrace" ("trace" -> "trace.%p"), whose "%p" becomes the pid, or
 * "<pid>.1", "<pid>.2", ... as for any pattern with "%p". No allocation,
 * no stdio: the tracer calls it at its start. */
#ifndef HH_TRACE_NAMING_H
#define HH_TRACE_NAMING_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

/* The first "%p" of pattern that stands for the pid, NULL when it has
 * none: a "%%" (a '%' of the path's own, as a directory's name may hold)
 * is skipped whole, so "a%%p" is the fixed path "a%p". */
static inline const char *hh_trace_pid_at(const char *pattern) {
  for (const char *p = pattern; *p != '\0'; p++) {
    if (p[0] != '%') continue;
    if (p[1] == 'p') return p;
    if (p[1] == '%') p++;
  }
  return NULL;
}

/* The numbered pattern of pattern (a path pattern without "%p", "%%"
 * standing for "%"); 0, or -1 when it does not fit in size bytes. */
static inline int hh_trace_numbered(const char *pattern, char *out, size_t size) {
  size_t n = strlen(pattern);
  const char *slash = strrchr(pattern, '/');
  const char *name = slash ? slash + 1 : pattern;
  const char *dot = strrchr(name, '.');
  /* a leading dot starts a hidden name, not an extension */
  size_t at = dot != NULL && dot > name ? (size_t)(dot - pattern) : n;
  if (n + 4 > size) return -1;
  memcpy(out, pattern, at);
  memcpy(out + at, ".%p", 3);
  memcpy(out + at + 3, pattern + at, n - at + 1);
  return 0;
}

/* Whether pattern names one of the process's descriptors: /dev/stdin,
 * /dev/stdout, /dev/stderr, /dev/fd/N, /proc/self/fd/N,
 * /proc/thread-self/fd/N, /proc/PID/fd/N ("%p" standing for the pid). The
 * program writes to those itself, so a trace there is mixed with its
 * output; one that led to a regular file was another's file to the tracer,
 * whose numbered pattern made a file beside the link (/dev/stderr.<pid>,
 * in /dev as root). The tracer and `heaphook run` refuse them. */
static inline bool hh_trace_descriptor_path(const char *pattern) {
  if (strcmp(pattern, "/dev/stdin") == 0 || strcmp(pattern, "/dev/stdout") == 0 ||
      strcmp(pattern, "/dev/stderr") == 0 || strncmp(pattern, "/dev/fd/", 8) == 0)
    return true;
  if (strncmp(pattern, "/proc/", 6) != 0) return false;
  const char *p = pattern + 6;
  if (strncmp(p, "self/", 5) == 0) {
    p += 5;
  } else if (strncmp(p, "thread-self/", 12) == 0) {
    p += 12;
  } else if (strncmp(p, "%p/", 3) == 0) {
    p += 3;
  } else {
    const char *d = p;
    while (*p >= '0' && *p <= '9') p++;
    if (p == d || *p != '/') return false;
    p++;
  }
  return strncmp(p, "fd/", 3) == 0;
}

#endif
