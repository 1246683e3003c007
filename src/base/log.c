/* write(2)-based messages (see log.h). */
#include "log.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void write_all(int fd, const char *buf, size_t len) {
  while (len > 0) {
    ssize_t n = write(fd, buf, len);
    if (n < 0) {
      if (errno == EINTR) continue;
      return;
    }
    buf += n;
    len -= (size_t)n;
  }
}

static void vprint(int fd, const char *prefix, const char *fmt, va_list ap, const char *suffix) {
  int saved = errno;
  char buf[HH_LOG_MAX + 128];
  size_t len = 0;
  size_t plen = strlen(prefix);
  memcpy(buf, prefix, plen);
  len = plen;
  int n = vsnprintf(buf + len, HH_LOG_MAX, fmt, ap);
  if (n > 0) len += (size_t)n < HH_LOG_MAX - 1 ? (size_t)n : HH_LOG_MAX - 1;
  size_t slen = strlen(suffix);
  memcpy(buf + len, suffix, slen);
  len += slen;
  write_all(fd, buf, len);
  errno = saved;
}

void hh__log(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vprint(2, "heaphook: ", fmt, ap, "\n");
  va_end(ap);
}

void hh__dprint(int fd, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vprint(fd, "", fmt, ap, "");
  va_end(ap);
}

void hh__die(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vprint(2, "heaphook: ", fmt, ap, "\n");
  va_end(ap);
  _exit(1);
}
