/* write(2)-based messages (see log.h). */
#include "log.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "quiet_write.h"

/* The first error of a write of hh__dprint's since the last look. */
static _Atomic int dprint_error;

/* 0, or the errno of the write that failed. */
static int write_all(int fd, const char *buf, size_t len) {
  while (len > 0) {
    ssize_t n = hh__write_quiet(fd, buf, len);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    buf += n;
    len -= (size_t)n;
  }
  return 0;
}

static int vprint(int fd, const char *prefix, const char *fmt, va_list ap, const char *suffix) {
  int saved = errno;
  char buf[HH_LOG_MAX + 128];
  size_t len = 0;
  size_t plen = strlen(prefix);
  memcpy(buf, prefix, plen);
  len = plen;
  int n = vsnprintf(buf + len, HH_LOG_MAX, fmt, ap);
  if (n > 0 && (size_t)n < HH_LOG_MAX) {
    len += (size_t)n;
  } else if (n > 0) {
    /* cut: said by "..." in place of the last bytes kept (a path named
     * whole but for its end read as the whole path) */
    len += HH_LOG_MAX - 1;
    memcpy(buf + len - 3, "...", 3);
  }
  size_t slen = strlen(suffix);
  memcpy(buf + len, suffix, slen);
  len += slen;
  int err = write_all(fd, buf, len);
  errno = saved;
  return err;
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
  int err = vprint(fd, "", fmt, ap, "");
  va_end(ap);
  int none = 0;
  if (err != 0) atomic_compare_exchange_strong(&dprint_error, &none, err);
}

int hh__dprint_error(void) { return atomic_exchange(&dprint_error, 0); }

void hh__die(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vprint(2, "heaphook: ", fmt, ap, "\n");
  va_end(ap);
  _exit(1);
}
