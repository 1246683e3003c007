/* Allocates enough for the tracer to start its writer thread (a few
 * hundred thousand events), then sits without allocating between two
 * markers, then exits: RSS must still be sampled during the quiet part.
 *
 * The quiet part lasts 300 ms, and until the tracer's writer thread has
 * woken 12 times from its sleeps of 20 ms (each a voluntary context switch
 * in /proc/self/task/TID/status, each a time to sample RSS), 20 s at most.
 * A fixed 300 ms held as few as none of its wake-ups on a loaded machine
 * (run at nice 10 against 3 busy loops: 5 runs of 39 had fewer than 5
 * samples), where the writer waited ~100 ms for a processor after each
 * sleep. Read with system calls only: nothing allocated (opendir and stdio
 * would). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "heaphook/heaphook.h"

static void *volatile sink;

/* The file /proc/self/task/TID/NAME read into buf (NUL-terminated);
 * its length, or -1. */
static ssize_t read_task_file(const char *tid, const char *name, char *buf, size_t cap) {
  char path[96] = "/proc/self/task/";
  strncat(path, tid, 32);
  strcat(path, "/");
  strcat(path, name);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  ssize_t n = read(fd, buf, cap - 1);
  close(fd);
  if (n < 0) return -1;
  buf[n] = '\0';
  return n;
}

/* The voluntary context switches of the tracer's threads (named
 * heaphook-trace: the writer, and its helpers, which sleep while there is
 * nothing to write), summed; -1 when there is none. */
static long tracer_switches(void) {
  int dir = open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) return -1;
  char ents[4096];
  long sum = -1, n;
  while ((n = syscall(SYS_getdents64, dir, ents, sizeof ents)) > 0) {
    for (long off = 0; off < n;) {
      /* struct linux_dirent64: ino (8), off (8), reclen (2), type (1), name */
      unsigned short reclen;
      memcpy(&reclen, ents + off + 16, sizeof reclen);
      const char *tid = ents + off + 19;
      off += reclen;
      char text[4096];
      if (tid[0] == '.' || strlen(tid) > 32 || read_task_file(tid, "comm", text, sizeof text) < 0 ||
          strcmp(text, "heaphook-trace\n") != 0 || read_task_file(tid, "status", text, sizeof text) < 0)
        continue;
      const char *p = strstr(text, "\nvoluntary_ctxt_switches:");
      if (p == NULL) continue;
      sum = (sum < 0 ? 0 : sum) + strtol(p + strlen("\nvoluntary_ctxt_switches:"), NULL, 10);
    }
  }
  close(dir);
  return sum;
}

static long elapsed_ms(const struct timespec *since) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (now.tv_sec - since->tv_sec) * 1000 + (now.tv_nsec - since->tv_nsec) / 1000000;
}

int main(void) {
  for (int i = 0; i < 200000; i++) {
    sink = malloc(64 + (size_t)(i % 512));
    free(sink);
  }
  long first = tracer_switches();
  hh_marker("idle-start");
  struct timespec start;
  clock_gettime(CLOCK_MONOTONIC, &start);
  for (;;) {
    struct timespec t = {0, 10 * 1000 * 1000};
    while (nanosleep(&t, &t) != 0) {
    }
    long ms = elapsed_ms(&start);
    if (ms >= 20000) break;
    if (ms < 300) continue;
    long now = tracer_switches();
    if (first < 0 || now < 0 || now - first >= 12) break;
  }
  hh_marker("idle-end");
  return 0;
}
