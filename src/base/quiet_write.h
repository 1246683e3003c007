/* write(2) and pwrite(2) for heaphook's own files (the trace, HEAPHOOK_LOG)
 * that fail with EFBIG at the program's file-size limit (RLIMIT_FSIZE,
 * `ulimit -f`) without the SIGXFSZ the kernel then sends the writing
 * thread: its default action ends the program, and a recorder that cannot
 * write is to warn once and let the program run. The signal is held for
 * the one call and taken back when that call raised it. When the program
 * had one pending already (it blocks SIGXFSZ), nothing is taken back: the
 * kernel's goes to the thread, so a program whose pending one was sent to
 * the whole process (kill) then has two. Safe in the hook (no allocation,
 * no stdio) and in a signal handler (system calls only). Errno as the
 * write left it. */
#ifndef HH_BASE_QUIET_WRITE_H
#define HH_BASE_QUIET_WRITE_H

#include <sys/types.h>

ssize_t hh__write_quiet(int fd, const void *buf, size_t n);
ssize_t hh__pwrite_quiet(int fd, const void *buf, size_t n, off_t at);

#endif
