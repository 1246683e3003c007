/* A program that closes descriptors it never opened, as daemons do when
 * they detach (argv[1] says how), then opens files of its own at the low
 * numbers and goes on allocating, in this thread and in a new one (whose
 * first unwinds make libunwind test fresh stack pages through its pipe).
 *
 *   close        close(fd) for every number from 3 to the limit
 *   early        the same, and its files opened, before the first
 *                allocation in main (before the trace's first chunk)
 *   rawearly     the raw close_range system call there (the trace file,
 *                made at the start, was lost at its first chunk)
 *   closefrom    closefrom(3)
 *   close_range  close_range(3, ~0U, 0)
 *   raw          the close_range system call, bypassing glibc (and heaphook),
 *                then allocations until heaphook has its files open again
 *                above 100 (wait_for_reopen) before the program opens
 *                its own
 *   dup2, dup3   dup2 (dup3) of a file of its own onto every descriptor
 *                above 2 but pipes (heaphook's trace file, its copy of
 *                stderr, /proc/self/statm): the program now owns those
 *                numbers (heaphook's move ahead of the loop up to the
 *                limit, then below their bases; they were lost at the
 *                limit and opened again at 5, 6 and 7 for good: the file
 *                the program opened last got 8, not 5)
 *   dup2race     3,000 times dup2 of a file of its own onto the trace
 *                file's number, 20 us, then close, while another thread
 *                allocates (racer()): the file must stay empty (a chunk
 *                written between heaphook's check of the number and its
 *                write went into it: in 2 of 3 runs of the build before)
 *   rawrace      100 times the raw close_range system call while racer()
 *                runs (a write between the check and the close failed),
 *                then as raw
 *   vfork        a vfork child dup2s /dev/null onto every descriptor above
 *                2 but pipes, then _exits; at the end the program sends its
 *                stderr to its file: heaphook's copy of stderr must be
 *                intact (the child moved heaphook's descriptors, in the
 *                parent's memory, and the report went into that file)
 *   unlink       deletes the trace file (found among its descriptors), then
 *                goes on: heaphook says once that the trace is lost (it
 *                wrote on into the deleted file, silently)
 *   signal       a timer's signal handler makes a pipe and closes it, 20,000
 *                times, while the program allocates from changing depths
 *                (unwinds): each pipe must get the lowest numbers and close
 *                (one made while heaphook unwound was taken for libunwind's)
 *
 * Under heaphook the trace must hold every allocation (before: 100,000 from
 * before(); after: 100,000 from after() and 1,000 from in_thread()), and the
 * program's files must hold exactly what the program put there: what it
 * reads from its input and writes to its output is printed and compared
 * with a run without heaphook. Before the trace file existed the program
 * waits for it (HEAPHOOK_OUTPUT must name it "...trace..."), so that the
 * closing happens to an open trace. */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

__attribute__((noinline)) static void before(void) {
  for (int i = 0; i < 100000; i++) free(malloc(16 + i % 200));
}
__attribute__((noinline)) static void after(void) {
  for (int i = 0; i < 100000; i++) free(malloc(32 + i % 100));
}
__attribute__((noinline)) static void in_thread(void) {
  for (int i = 0; i < 1000; i++) free(malloc(24));
}
static void *thread_main(void *arg) {
  (void)arg;
  in_thread();
  return NULL;
}
static atomic_bool stop_racer;
__attribute__((noinline)) static void racer(void) {
  while (!atomic_load(&stop_racer)) {
    for (int i = 0; i < 1000; i++) free(malloc(40 + i % 300));
  }
}
static void *racer_main(void *arg) {
  (void)arg;
  racer();
  return NULL;
}

/* Allocations from recursion depth n: a new stack each depth, so that the
 * tracer unwinds (its cache is keyed by return address and stack). */
__attribute__((noinline)) static void deep(int n) {
  if (n > 0) {
    deep(n - 1);
    __asm__ volatile("" ::: "memory"); /* not a tail call */
    return;
  }
  free(malloc(24));
}

static volatile sig_atomic_t signals, moved, left_open;
static void on_alarm(int sig) {
  (void)sig;
  int p[2];
  if (pipe2(p, O_CLOEXEC) != 0) return;
  signals++;
  if (p[0] > 100 || p[1] > 100) moved++;
  close(p[0]);
  close(p[1]);
  if (fcntl(p[0], F_GETFD) != -1 || fcntl(p[1], F_GETFD) != -1) left_open++;
}

/* Whether descriptor fd is open on a file whose path contains "trace". */
static int is_trace(int fd) {
  char link[64], target[PATH_MAX];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  ssize_t n = readlink(link, target, sizeof target - 1);
  if (n <= 0) return 0;
  target[n] = '\0';
  const char *slash = strrchr(target, '/');
  return strstr(slash != NULL ? slash : target, "trace") != NULL;
}

static int max_fd(void) {
  long m = sysconf(_SC_OPEN_MAX);
  return m > 0 && m < 65536 ? (int)m : 65536;
}

/* Where heaphook's descriptors are (src/base/own_fd.h): 900 and up, or
 * just under a lower soft limit of descriptors. */
static int own_lo(void) { return max_fd() >= 1024 ? 900 : 3; }
static int own_hi(void) { return max_fd() < 1100 ? max_fd() : 1100; }

static void close_all(void) {
  for (int fd = max_fd() - 1; fd > 2; fd--) close(fd);
}

/* Waits up to 20 s for the tracer's file to be open (heaphook's writer
 * thread creates it); 1 when it is, 0 without heaphook. */
static int wait_for_trace(void) {
  if (getenv("LD_PRELOAD") == NULL) return 0;
  for (int tries = 0; tries < 2000; tries++) {
    for (int fd = 3; fd < max_fd(); fd++) {
      if (is_trace(fd)) return 1;
    }
    struct timespec ts = {0, 10 * 1000 * 1000};
    nanosleep(&ts, NULL);
  }
  fprintf(stderr, "the trace file never opened\n");
  exit(3);
}

__attribute__((noinline)) static void settle(void) {
  for (int i = 0; i < 10000; i++) free(malloc(48));
}

/* Whether heaphook's trace file, /proc/self/statm and /proc/self/stat are
 * open at numbers above 100: heaphook's (900 and up, 225 and up under a
 * soft limit of 256), never the program's, which are below 10. */
static bool heaphook_files_back(void) {
  bool trace = false, statm = false, stat = false;
  DIR *d = opendir("/proc/self/fd");
  if (d == NULL) return false;
  for (struct dirent *e; (e = readdir(d)) != NULL;) {
    if (atoi(e->d_name) <= 100) continue;
    char link[300], target[PATH_MAX];
    snprintf(link, sizeof link, "/proc/self/fd/%s", e->d_name);
    ssize_t n = readlink(link, target, sizeof target - 1);
    if (n <= 0) continue;
    target[n] = '\0';
    const char *slash = strrchr(target, '/');
    const char *base = slash != NULL ? slash + 1 : target;
    trace |= strstr(base, "trace") != NULL;
    statm |= strcmp(base, "statm") == 0;
    stat |= strcmp(base, "stat") == 0;
  }
  closedir(d);
  return trace && statm && stat;
}

/* After a raw close of heaphook's descriptors (raw, rawrace): allocates
 * until heaphook has opened its files again at its numbers, up to 20 s.
 * heaphook opens them again when it next writes or samples the RSS, in
 * whichever thread does that, its writer thread too, and an open takes
 * the lowest free number for a moment before heaphook moves it up
 * (docs/trace-format.md, "The program's descriptors": left); a file the
 * program opened just then got the next number ("descriptors 4 3" in 1
 * run of ~350 on a loaded machine). So the program opens its files once
 * heaphook's are back, which must be above the program's numbers. */
static void wait_for_reopen(void) {
  if (getenv("LD_PRELOAD") == NULL) return;
  for (int tries = 0; tries < 2000; tries++) {
    settle();
    if (heaphook_files_back()) return;
    struct timespec ts = {0, 10 * 1000 * 1000};
    nanosleep(&ts, NULL);
  }
  fprintf(stderr, "heaphook's files were not opened again above 100\n");
  exit(3);
}

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr,
            "usage: close_fds "
            "close|early|rawearly|unlink|closefrom|close_range|raw|dup2|dup3|dup2race|rawrace|vfork|signal "
            "INPUT OUTPUT\n");
    return 2;
  }
  const char *how = argv[1];
  bool redirect_stderr = false;
  bool early = strcmp(how, "early") == 0 || strcmp(how, "rawearly") == 0;
  int in = -1, out = -1;
  if (early) {
    if (how[0] == 'r') {
      if (syscall(SYS_close_range, 3, ~0U, 0) != 0) perror("close_range");
    } else {
      close_all();
    }
    in = open(argv[2], O_RDONLY);
    out = open(argv[3], O_WRONLY | O_CREAT | O_APPEND, 0644);
  }
  before();
  if (!early) wait_for_trace();
  if (early) {
  } else if (strcmp(how, "close") == 0) {
    close_all();
  } else if (strcmp(how, "closefrom") == 0) {
    closefrom(3);
  } else if (strcmp(how, "close_range") == 0) {
    if (close_range(3, ~0U, 0) != 0) perror("close_range");
  } else if (strcmp(how, "raw") == 0) {
    if (syscall(SYS_close_range, 3, ~0U, 0) != 0) perror("close_range");
  } else if (strcmp(how, "dup2") == 0 || strcmp(how, "dup3") == 0) {
    int mine = open(argv[3], O_WRONLY | O_CREAT | O_TRUNC, 0644);
    /* Onto every descriptor it did not open but a pipe's (libunwind's: a
     * program that dup2s onto it is out of reach, docs/trace-format.md). */
    for (int fd = 3; fd < max_fd(); fd++) {
      struct stat st;
      if (fd == mine || fstat(fd, &st) != 0 || S_ISFIFO(st.st_mode)) continue;
      int r = how[3] == '2' ? dup2(mine, fd) : dup3(mine, fd, O_CLOEXEC);
      if (r != fd) perror("dup");
    }
    close(mine);
  } else if (strcmp(how, "dup2race") == 0 || strcmp(how, "rawrace") == 0) {
    pthread_t r;
    pthread_create(&r, NULL, racer_main, NULL);
    if (how[0] == 'r') {
      for (int i = 0; i < 100; i++) {
        if (syscall(SYS_close_range, 3, ~0U, 0) != 0) perror("close_range");
        struct timespec ts = {0, 1000 * 1000};
        nanosleep(&ts, NULL);
      }
    } else {
      int mine = open(argv[3], O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
      int lo = own_lo(), hi = own_hi();
      /* (without heaphook no trace is open: the plain run, whose 3,000
       * rounds of 200 readlinks took 17 s of the test's 120 on a loaded
       * machine, only prints the file's size) */
      int rounds = getenv("LD_PRELOAD") != NULL ? 3000 : 0;
      for (int i = 0; i < rounds; i++) {
        for (int fd = lo; fd < hi; fd++) {
          if (!is_trace(fd)) continue;
          dup2(mine, fd);
          usleep(20); /* the program's file under the number a while */
          close(fd);
          break;
        }
      }
      struct stat st;
      fstat(mine, &st);
      printf("the file dup2'd onto the trace's number holds %lld bytes\n", (long long)st.st_size);
      close(mine);
    }
    atomic_store(&stop_racer, true);
    pthread_join(r, NULL);
  } else if (strcmp(how, "unlink") == 0) {
    for (int fd = own_lo(); fd < own_hi(); fd++) {
      char link[64], target[PATH_MAX];
      snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
      ssize_t n = is_trace(fd) ? readlink(link, target, sizeof target - 1) : -1;
      if (n <= 0) continue;
      target[n] = '\0';
      if (unlink(target) != 0) perror("unlink");
      break;
    }
  } else if (strcmp(how, "vfork") == 0) {
    int null = open("/dev/null", O_WRONLY);
    pid_t child = vfork();
    if (child == 0) {
      for (int fd = 3; fd < 1100; fd++) {
        struct stat st;
        if (fd != null && fstat(fd, &st) == 0 && !S_ISFIFO(st.st_mode)) dup2(null, fd);
      }
      _exit(0);
    }
    waitpid(child, NULL, 0);
    close(null);
    redirect_stderr = true;
  } else if (strcmp(how, "signal") == 0) {
    signal(SIGALRM, on_alarm);
    struct itimerval every = {{0, 50}, {0, 50}}, off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &every, NULL);
    while (signals < 20000) {
      for (int d = 0; d < 64; d++) deep(d);
    }
    setitimer(ITIMER_REAL, &off, NULL);
    printf("pipes made by the signal handler: %s; moved: %d, left open: %d\n",
           signals >= 20000 ? "20000+" : "too few", (int)moved, (int)left_open);
  } else {
    fprintf(stderr, "close_fds: unknown way to close: %s\n", how);
    return 2;
  }
  if (strcmp(how, "raw") == 0 || strcmp(how, "rawrace") == 0) wait_for_reopen();
  if (!early) {
    in = open(argv[2], O_RDONLY);
    out = open(argv[3], O_WRONLY | O_CREAT | O_APPEND, 0644);
  }
  after();
  pthread_t t;
  pthread_create(&t, NULL, thread_main, NULL);
  pthread_join(t, NULL);
  char buf[256];
  ssize_t n = read(in, buf, sizeof buf - 1);
  buf[n > 0 ? n : 0] = '\0';
  if (write(out, "the program's own line\n", 23) != 23) perror("write");
  /* A file opened last, once heaphook has written and sampled on: its
   * number says whether heaphook holds one under it (it lost its
   * descriptors at the end of dup2's climb, and opened them again at 5, 6
   * and 7, for good). */
  int last = open(argv[2], O_RDONLY);
  printf("descriptors %d %d, then %d, read %zd bytes: %s", in, out, last, n, buf);
  /* As a daemon sends its stderr to its log: heaphook's report at exit
   * must still reach the stderr heaphook was given. */
  if (redirect_stderr) dup2(out, 2);
  return 0;
}
