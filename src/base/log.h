/* Messages from inside malloc: formatted into a stack buffer and written to
 * fd 2 with write(2). No stdio, no allocation; errno is preserved. */
#ifndef HH_BASE_LOG_H
#define HH_BASE_LOG_H

#include <stdarg.h>

/* Messages are cut at this many bytes: room for a variable's pattern and
 * the path made from it, each ~450 bytes long, and the reason after them
 * (cut at 512, a long TMPDIR lost the reason). On the stack of whichever
 * thread logs. */
#define HH_LOG_MAX 1024u

/* Writes "heaphook: <message>\n" to stderr. The message is cut at HH_LOG_MAX bytes,
 * its last three then "...".
 * snprintf with the plain conversions (%s %d %zu %llu %x %p) does not
 * allocate in glibc; do not use %f or positional arguments here. */
void hh__log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Writes fmt to fd as hh__log does, without the prefix or newline. */
void hh__dprint(int fd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The errno of the first hh__dprint whose write failed since the last
 * call (0: none), and forgets it: a report to a full disk is said. */
int hh__dprint_error(void);

/* Prints the message like hh__log and ends the process with status 1,
 * without running atexit handlers (which may allocate). */
void hh__die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

#endif
