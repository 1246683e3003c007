/* `heaphook run`: runs a program with the tracer preloaded
 * (libheaphook.so, HEAPHOOK_RECORD=trace), waits for it, prints a summary
 * of its heap use to stderr, and exits with the program's status. */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/env.h"
#include "base/size.h"
#include "cli.h"
#include "escape.h"
#include "run_library.h"
#include "run_reach.h"
#include "run_signals.h"
#include "run_traces.h"
#include "summary.h"
#include "trace/format.h"
#include "trace/naming.h"

static const char usage[] =
    "usage: heaphook run [-o PATH] [--sample BYTES] [--no-stacks] -- PROGRAM [ARGS...]\n"
    "\n"
    "Runs PROGRAM with heaphook's tracer, then prints a summary (allocations, frees, peak\n"
    "bytes in use and when, bytes still allocated at exit, the trace file) to stderr.\n"
    "Exits with PROGRAM's status (128+N when signal N ended it). When PROGRAM execs\n"
    "another (env, a script's exec, a version manager's shim), the summary is of the\n"
    "last program that process ran, and the ones before are named. The traces of the\n"
    "processes it started are counted and named after the summary. The signals\n"
    "TERM, INT, HUP, QUIT, USR1 and USR2 sent to heaphook are passed on to PROGRAM\n"
    "(one sent to the whole process group, as timeout(1) does, reaches it twice).\n"
    "\n"
    "options:\n"
    "  -o, --output PATH   trace file (default heaplog.%p.hhtrace; %p is the pid). Each\n"
    "                      child process writes its own trace: without %p, PATH is\n"
    "                      the first program's (replaced if it exists), and the\n"
    "                      others' have .<pid> before its extension\n"
    "  --sample BYTES      record a sample of about one allocation per BYTES allocated\n"
    "                      (e.g. 512K), with unbiased estimates (the peak reads high\n"
    "                      when the heap rises and falls), for the least overhead\n"
    "  --no-stacks         record events without call stacks\n"
    "  -h, --help          this help\n"
    "\n"
    "environment: HEAPHOOK_LIBRARY overrides the tracer library (default: libheaphook.so\n"
    "next to this program's directory, ../libheaphook.so, or installed, ../lib/libheaphook.so).\n"
    "Where LD_PRELOAD already has a heaphook library serve the program (libpreloaded_tlsf.so,\n"
    "libheaphook.so, a plug-in's), none is added: that library traces it, on its allocator\n"
    "and with its variables (HEAPHOOK_STATS), as it runs without run; HEAPHOOK_LIBRARY is\n"
    "not used then. heaphook itself runs on glibc's malloc and reports nothing of its own.\n"
    "HEAPHOOK_OUTPUT, HEAPHOOK_TRACE_SAMPLE and HEAPHOOK_TRACE_STACKS=0 are the defaults of\n"
    "-o, --sample and --no-stacks (the options win); the tracer's other variables\n"
    "(HEAPHOOK_TRACE_CHILDREN, ...) reach the program as they are. A bad value of any of\n"
    "these is refused before the program starts.\n";

/* The tracer's variables in heaphook's own environment are the defaults of
 * the options that set them, which win: HEAPHOOK_OUTPUT of -o,
 * HEAPHOOK_TRACE_SAMPLE of --sample (0: every event, as for the library),
 * HEAPHOOK_TRACE_STACKS=0 of --no-stacks. run set them over the
 * environment's without a word: HEAPHOOK_TRACE_SAMPLE=512K heaphook run
 * traced every event. A bad value is refused before the program starts, in
 * one line; HEAPHOOK_RECORD other than trace is said to be replaced. */
static int from_environment(const char **output, const char **sample, bool *stacks) {
  const char *e = getenv("HEAPHOOK_OUTPUT");
  if (!*output && e && *e) *output = e;
  e = getenv("HEAPHOOK_TRACE_SAMPLE");
  if (!*sample && e && *e) {
    size_t v;
    if (hh__parse_size(e, &v) != 0) {
      hh_cli_error("run", "HEAPHOOK_TRACE_SAMPLE=%s: expected a size in bytes such as 512K (0: every event)",
                   e);
      return -1;
    }
    if (v > HH_SAMPLE_PERIOD_MAX) {
      hh_cli_error("run", "HEAPHOOK_TRACE_SAMPLE=%s: a period of at most 65536T (2^56 bytes)", e);
      return -1;
    }
    *sample = v ? e : NULL;
  }
  e = getenv("HEAPHOOK_TRACE_STACKS");
  if (*stacks && e && *e && hh__parse_bool(e, stacks) != 0) {
    hh_cli_error("run", "HEAPHOOK_TRACE_STACKS=%s: expected 1 or 0 (true/false, yes/no, on/off)", e);
    return -1;
  }
  /* The tracer's other variables reach the program as they are; a bad one
   * stopped it at its start, and run then said "no trace was written for
   * PROGRAM (it made no allocation, or the tracer could not write)". */
  e = getenv("HEAPHOOK_TRACE_WRITERS");
  if (e && *e) {
    int n = 0;
    for (const char *c = e; *c && n >= 0 && n <= 8; c++)
      n = *c >= '0' && *c <= '9' ? n * 10 + (*c - '0') : -1;
    if (n < 1 || n > 8) {
      hh_cli_error("run", "HEAPHOOK_TRACE_WRITERS=%s: expected a number of threads from 1 to 8", e);
      return -1;
    }
  }
  e = getenv("HEAPHOOK_TRACE_CHILDREN");
  bool children;
  /* (a false value with its first character made '-' is a traced parent's
   * mark, which the tracer takes: recorder.c, marked_off) */
  bool marked =
      e && e[0] == '-' &&
      (e[1] == '\0' || !strcasecmp(e + 1, "alse") || !strcasecmp(e + 1, "o") || !strcasecmp(e + 1, "ff"));
  if (e && *e && !marked && hh__parse_bool(e, &children) != 0) {
    hh_cli_error("run", "HEAPHOOK_TRACE_CHILDREN=%s: expected 1 or 0 (true/false, yes/no, on/off)", e);
    return -1;
  }
  e = getenv("HEAPHOOK_RECORD");
  if (e && *e && strcmp(e, "trace") != 0)
    hh_cli_error("run",
                 "HEAPHOOK_RECORD=%s in the environment is replaced by trace: run records a trace only", e);
  return 0;
}

/* A path as the user would type it: relative to the working directory when
 * it is below it. */
static const char *shown(const char *path) {
  static char cwd[PATH_MAX];
  if (!getcwd(cwd, sizeof cwd)) return path;
  size_t n = strlen(cwd);
  return strncmp(path, cwd, n) == 0 && path[n] == '/' ? path + n + 1 : path;
}

/* The traces the program's child processes (and theirs) wrote: how many,
 * and the first few with their programs. */
static void print_descendants(const char *pattern, pid_t pid, uint64_t since_ns, bool none_of_its_own) {
  enum { SHOW = 4 };
  char paths[SHOW][PATH_MAX];
  int n = hh_run_descendants(pattern, pid, since_ns, paths, SHOW);
  if (n == 0) return;
  fprintf(stderr, "heaphook: %s%d trace%s from its child processes:", none_of_its_own ? "" : "and ", n,
          n == 1 ? "" : "s");
  for (int i = 0; i < n && i < SHOW; i++) {
    char name[256];
    hh_run_program(paths[i], name, sizeof name);
    fprintf(stderr, "%s %s (%s)", i ? "," : "", shown(paths[i]), name);
  }
  if (n > SHOW) fprintf(stderr, " and %d more", n - SHOW);
  fputc('\n', stderr);
}

/* The program of paths[i], the i-th trace of the process run started: its
 * COMMAND record's; for a process killed before its first chunk (a trace
 * of its header only, where this said "?"), what run ran itself (prog, as
 * shown) for the first, the program the trace before it exec'd for the
 * others. */
static void chain_program(char (*paths)[PATH_MAX], int i, const char *prog, char *out, size_t size) {
  if (hh_run_program(paths[i], out, size)) return;
  if (i > 0) {
    hh_run_exec_of(paths[i - 1], out, size);
  } else {
    const char *slash = strrchr(prog, '/');
    snprintf(out, size, "%s", slash ? slash + 1 : prog);
  }
}

static void print_summary(const char *path, const hh_summary *s, hh_reader *r) {
  char a[32], b[32], c[32], d[32];
  const char *est = s->sampled ? " (estimated from samples)" : "";
  fprintf(stderr,
          "heaphook: %" PRIu64 " allocation%s, %" PRIu64 " free%s, %" PRIu64
          " realloc%s; %s allocated in all%s\n",
          s->allocs, hh_cli_s(s->allocs), s->frees, hh_cli_s(s->frees), s->reallocs, hh_cli_s(s->reallocs),
          hh_cli_bytes(a, sizeof a, s->allocated_bytes), est);
  if (s->peak_bytes)
    fprintf(
        stderr, "heaphook: peak %" PRIu64 " byte%s (%s) in use at %s%s\n", s->peak_bytes,
        hh_cli_s(s->peak_bytes), hh_cli_bytes(b, sizeof b, s->peak_bytes),
        hh_cli_duration(c, sizeof c, s->peak_time),
        s->sampled ? " (the highest estimate: reads high when the heap rose and fell again and again)" : "");
  else
    fprintf(stderr, "heaphook: peak 0 bytes in use\n");
  if (hh_reader_exec(r))
    fprintf(stderr, "heaphook: %" PRIu64 " byte%s (%s) in %" PRIu64 " block%s still allocated at the exec\n",
            s->leaked_bytes, hh_cli_s(s->leaked_bytes), hh_cli_bytes(d, sizeof d, s->leaked_bytes),
            s->leaked_blocks, hh_cli_s(s->leaked_blocks));
  else if (hh_reader_status(r) != HH_READ_OK) /* (killed: there was no exit; as the chart says it) */
    fprintf(stderr,
            "heaphook: %" PRIu64 " byte%s (%s) in %" PRIu64 " block%s still in use where the trace ends\n",
            s->leaked_bytes, hh_cli_s(s->leaked_bytes), hh_cli_bytes(d, sizeof d, s->leaked_bytes),
            s->leaked_blocks, hh_cli_s(s->leaked_blocks));
  else
    fprintf(stderr, "heaphook: leaked %" PRIu64 " byte%s (%s) in %" PRIu64 " block%s at exit\n",
            s->leaked_bytes, hh_cli_s(s->leaked_bytes), hh_cli_bytes(d, sizeof d, s->leaked_bytes),
            s->leaked_blocks, hh_cli_s(s->leaked_blocks));
  if (s->unknown_frees) /* as the report says them */
    fprintf(stderr,
            "heaphook: %" PRIu64
            " unknown free%s (%s allocated before the trace started, by a signal handler inside heaphook,"
            " or by an allocator's own API such as jemalloc's mallocx)\n",
            s->unknown_frees, hh_cli_s(s->unknown_frees), s->unknown_frees == 1 ? "a block" : "blocks");
  struct stat st;
  uint64_t size = stat(path, &st) == 0 ? (uint64_t)st.st_size : 0;
  uint64_t chunks = hh_reader_chunks(r);
  fprintf(stderr, "heaphook: trace %s (%s, %" PRIu64 " chunk%s)\n", path, hh_cli_bytes(a, sizeof a, size),
          chunks, hh_cli_s(chunks));
  if (hh_reader_status(r) != HH_READ_OK) fprintf(stderr, "heaphook: note: %s\n", hh_reader_message(r));
}

int hh_cmd_run(int argc, char **argv) {
  static const struct option opts[] = {
      {"output", required_argument, NULL, 'o'},
      {"sample", required_argument, NULL, 's'},
      {"no-stacks", no_argument, NULL, 'n'},
      {"help", no_argument, NULL, 'h'},
      {NULL, 0, NULL, 0},
  };
  const char *output = NULL, *sample = NULL;
  bool stacks = true;
  opterr = 0;
  optind = 1;
  int c;
  while ((c = getopt_long(argc, argv, "+:o:h", opts, NULL)) != -1) {
    /* "-o -- prog": the trace was named "--" (cli.usage_errors) */
    char value_buf[256];
    if (c != ':' && c != '?' && hh_cli_value_error(argv, opts, value_buf, sizeof value_buf))
      return hh_cli_usage_error("run", usage, "%s", value_buf);
    switch (c) {
      case 'o':
        output = optarg;
        break;
      case 's': {
        size_t v;
        if (hh__parse_size(optarg, &v) != 0)
          return hh_cli_usage_error("run", usage, "--sample wants a size in bytes such as 512K, not \"%s\"",
                                    optarg);
        /* (HEAPHOOK_TRACE_SAMPLE=0 is every event: said so, where it was
         * "not a size in bytes") */
        if (v == 0)
          return hh_cli_usage_error(
              "run", usage,
              "--sample %s: a period of at least 1 byte; leave --sample out to record every event", optarg);
        if (v > HH_SAMPLE_PERIOD_MAX)
          return hh_cli_usage_error("run", usage, "--sample %s: a period of at most 65536T (2^56 bytes)",
                                    optarg);
        sample = optarg;
        break;
      }
      case 'n':
        stacks = false;
        break;
      case 'h':
        fputs(usage, stdout);
        return HH_EXIT_OK;
      case ':':
      default: {
        char buf[256];
        return hh_cli_usage_error("run", usage, "%s", hh_cli_option_error(argv, c, opts, buf, sizeof buf));
      }
    }
  }
  if (optind >= argc) return hh_cli_usage_error("run", usage, "no program given");
  char **prog = argv + optind;
  bool output_given = output != NULL;
  if (from_environment(&output, &sample, &stacks) != 0) return HH_EXIT_USAGE;
  /* How the lines about the trace's path name where it came from: -o, the
   * environment (where "-o" was said) or run's default name */
  const char *output_from = output_given ? "-o " : output ? "HEAPHOOK_OUTPUT=" : "";

  /* A heaphook library that LD_PRELOAD already has serve the program
   * (libpreloaded_tlsf.so exported for a ROS 2 node) traces it, on its own
   * allocator: libheaphook.so put ahead of it served glibc's malloc, and it
   * said it did nothing. HEAPHOOK_LIBRARY names the library run adds, so
   * it is not used then. */
  char real[PATH_MAX], lib[PATH_MAX], why[PATH_MAX + 128], preloaded[PATH_MAX];
  bool through = hh_run_preloaded_heaphook(preloaded, sizeof preloaded);
  if (through) {
    const char *env = getenv("HEAPHOOK_LIBRARY");
    char a[PATH_MAX], b[PATH_MAX], env_buf[PATH_MAX], pre_buf[PATH_MAX];
    if (env && *env && (!realpath(env, a) || !realpath(preloaded, b) || strcmp(a, b) != 0))
      hh_cli_error("run",
                   "HEAPHOOK_LIBRARY=%s is not used: LD_PRELOAD has a heaphook library serve the program",
                   hh_text_safe(env, env_buf, sizeof env_buf));
    hh_cli_error("run", "the program runs on LD_PRELOAD's %s, which traces it (on its allocator)",
                 hh_text_safe(preloaded, pre_buf, sizeof pre_buf));
  } else if (hh_run_find_library(real, sizeof real, why, sizeof why) != 0) {
    hh_cli_error("run", "%s", why);
    return HH_EXIT_FAIL;
  } else if (hh_run_preload_path(real, lib, sizeof lib, why, sizeof why) != 0) {
    hh_cli_error(
        "run", "the tracer library %s has a space or a colon in its path, where LD_PRELOAD is split, and %s",
        real, why);
    return HH_EXIT_FAIL;
  }
  if (output && !*output) return hh_cli_usage_error("run", usage, "-o wants a file name, not an empty one");
  /* (-o /dev/stderr: it said "it exists and is not a regular file", or,
   * stderr a file, wrote it; the tracer refuses it too) */
  if (output && hh_trace_descriptor_path(output))
    return hh_cli_usage_error("run", usage,
                              "%s%s names one of the program's descriptors, which it writes to itself; "
                              "name a file",
                              output_from, output);
  /* An absolute pattern: the program may change directory before it starts tracing. */
  char pattern[PATH_MAX * 2];
  const char *want = output ? output : "heaplog.%p.hhtrace";
  if (want[0] == '/') {
    snprintf(pattern, sizeof pattern, "%s", want);
  } else {
    char cwd[PATH_MAX], escaped[PATH_MAX * 2];
    if (!getcwd(cwd, sizeof cwd)) {
      hh_cli_error("run", "cannot get the working directory: %s", strerror(errno));
      return HH_EXIT_FAIL;
    }
    /* a '%' of the directory's is itself ("%%"): in a directory named
     * "d%p" the traces went to "d<pid>", which is not there, and none
     * was written (cli.run_percent_dir) */
    size_t e = 0;
    for (const char *c = cwd; *c; c++) {
      if (*c == '%') escaped[e++] = '%';
      escaped[e++] = *c;
    }
    escaped[e] = '\0';
    if ((size_t)snprintf(pattern, sizeof pattern, "%s/%s", escaped, want) >= sizeof pattern) {
      hh_cli_error("run", "trace path too long: %s", want);
      return HH_EXIT_USAGE;
    }
  }

  /* A directory the traces cannot go to is said before the program runs
   * (it may run for hours; it ran untraced, with the tracer's warning at
   * its start). Not one whose name has a pattern in it (%p). */
  const char *slash = strrchr(pattern, '/');
  char dir[sizeof pattern];
  snprintf(dir, sizeof dir, "%.*s", slash == pattern ? 1 : (int)(slash - pattern), pattern);
  char dir_path[sizeof dir];
  hh_run_expand(dir, "", dir_path, sizeof dir_path);
  if (!hh_trace_pid_at(dir) && access(dir_path, W_OK | X_OK) != 0) {
    char dir_buf[sizeof dir];
    hh_cli_error("run", "%s%s: cannot create files in %s: %s", output_from, want,
                 hh_text_safe(dir_path, dir_buf, sizeof dir_buf), strerror(errno));
    return HH_EXIT_FAIL;
  }

  /* A fixed path is replaced, as -o does elsewhere: the tracer never
   * writes over a file (O_EXCL), and would name this run's trace after the
   * numbered pattern instead, away from where the user looks. */
  if (!hh_trace_pid_at(want)) {
    char fixed[sizeof pattern];
    hh_run_expand(pattern, "", fixed, sizeof fixed);
    struct stat st;
    if (lstat(fixed, &st) == 0) {
      if (!S_ISREG(st.st_mode)) {
        hh_cli_error("run", "%s%s: it exists and is not a regular file", output_from, want);
        return HH_EXIT_USAGE;
      }
      /* not a trace still being written: replacing it lost that run's
       * ("the trace file was deleted while the program ran") */
      pid_t writer = hh_run_trace_writer(fixed, pattern);
      if (writer != 0) {
        hh_cli_error("run", "%s%s: process %d is still writing that trace; give another name", output_from,
                     want, (int)writer);
        return HH_EXIT_FAIL;
      }
      if (unlink(fixed) != 0) {
        hh_cli_error("run", "%s%s: cannot replace it: %s", output_from, want, strerror(errno));
        return HH_EXIT_FAIL;
      }
    }
  }

  /* The program's name as heaphook's lines show it (escape.h). */
  char name_buf[PATH_MAX];
  const char *name = hh_text_safe(prog[0], name_buf, sizeof name_buf);

  /* Said before it runs (it may run for hours); exec errors are exec's to say. */
  char unreached[PATH_MAX + 64], unreached_buf[PATH_MAX + 64];
  bool untraced = hh_run_unreachable(prog[0], unreached, sizeof unreached);
  if (untraced)
    hh_cli_error("run", "%s: the loader does not preload the tracer into it, so it runs untraced",
                 hh_text_safe(unreached, unreached_buf, sizeof unreached_buf));
  /* The heaphook command is left alone by heaphook's libraries: run said
   * after it "no trace was written (it made no allocation, or the tracer
   * could not write)" */
  else if ((untraced = hh_run_heaphook_command(prog[0], unreached, sizeof unreached)))
    hh_cli_error("run",
                 "%s is the heaphook command, which heaphook's libraries leave untraced: no trace of it",
                 hh_text_safe(unreached, unreached_buf, sizeof unreached_buf));

  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  uint64_t start_ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;

  /* While the program runs, the terminal's signals are its, and those sent
   * to heaphook are passed on to it (run_signals.h). */
  hh_run_signals_hold();
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) {
    hh_run_signals_child(); /* (the mask it had) */
    hh_cli_error("run", "cannot fork: %s", strerror(errno));
    return HH_EXIT_FAIL;
  }
  if (pid == 0) {
    hh_run_signals_child();
    const char *pre = getenv("LD_PRELOAD");
    char *preload = NULL;
    if (through) {
      /* (LD_PRELOAD as it is) */
    } else if (pre && *pre) {
      if (asprintf(&preload, "%s:%s", lib, pre) < 0) _exit(127);
    } else {
      preload = lib;
    }
    if (preload) setenv("LD_PRELOAD", preload, 1);
    setenv("HEAPHOOK_RECORD", "trace", 1);
    setenv("HEAPHOOK_OUTPUT", pattern, 1);
    if (sample)
      setenv("HEAPHOOK_TRACE_SAMPLE", sample, 1);
    else
      unsetenv("HEAPHOOK_TRACE_SAMPLE");
    setenv("HEAPHOOK_TRACE_STACKS", stacks ? "1" : "0", 1);
    execvp(prog[0], prog);
    int e = errno;
    fprintf(stderr, "heaphook run: cannot run %s: %s\n", name, strerror(e));
    _exit(e == ENOENT ? 127 : 126);
  }
  hh_run_signals_forward(pid);
  /* Waited for without reaping first: until it is reaped, its pid is not
   * another's, so a signal passed on meanwhile cannot reach a stranger. */
  siginfo_t ended;
  int status;
  while (waitid(P_PID, (id_t)pid, &ended, WEXITED | WNOWAIT) < 0) {
    if (errno != EINTR) {
      hh_cli_error("run", "waiting for %s: %s", name, strerror(errno));
      return HH_EXIT_FAIL;
    }
  }
  hh_run_signals_restore();
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      hh_cli_error("run", "waiting for %s: %s", name, strerror(errno));
      return HH_EXIT_FAIL;
    }
  }
  int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);

  enum { CHAIN_MAX = 100 };
  char(*paths)[PATH_MAX] = calloc(CHAIN_MAX, PATH_MAX);
  int n = paths ? hh_run_exec_chain(pattern, pid, start_ns, paths, CHAIN_MAX) : 0;
  /* The program that died is the last the process exec'd ("env was killed"
   * where the sh env started was: cli.run_children) */
  char last[256];
  if (n > 1) chain_program(paths, n - 1, name, last, sizeof last);
  if (WIFSIGNALED(status))
    fprintf(stderr, "heaphook: %s was killed by signal %d (%s)\n", n > 1 ? last : name, WTERMSIG(status),
            strsignal(WTERMSIG(status)));
  if (!paths) {
    hh_cli_error("run", "out of memory");
    return code;
  }
  if (n == 0) {
    /* exec failed (127/126: said above), the tracer could not write (it
     * said why), or the program never allocated before it ended (a shell
     * that only starts other programs and leaves by _exit) */
    /* Through LD_PRELOAD's library, that library read its own variables
     * in the program, and a bad one (INITIAL_MEMPOOL_SIZE=12X) stopped it
     * at its start with a line of its own: the reasons given left that out. */
    if (code != 127 && code != 126 && !untraced) {
      hh_cli_error("run",
                   "no trace was written for %s (it made no allocation, or the tracer could not write%s)",
                   name, through ? ", or LD_PRELOAD's heaphook library refused its settings" : "");
    }
    if (code != 127 && code != 126) print_descendants(pattern, pid, start_ns, true);
    free(paths);
    return code;
  }
  /* The process exec'd other programs: the summary is the last one's (the
   * program a wrapper or script started), the chain is told first. */
  const char *path = paths[n - 1];
  if (n == 1) chain_program(paths, 0, name, last, sizeof last);
  if (n > 1) {
    fprintf(stderr, "heaphook: process %d ran %d programs in turn (exec):", (int)pid, n);
    for (int i = 0; i < n; i++) {
      char name_i[256];
      if (i == n - 1)
        snprintf(name_i, sizeof name_i, "%s", last);
      else
        chain_program(paths, i, name, name_i, sizeof name_i);
      fprintf(stderr, "%s %s", i ? " ->" : "", name_i);
    }
    fprintf(stderr, "; the summary is %s's, the other traces %s%s%s\n", last, shown(paths[0]),
            n > 2 ? " to " : "", n > 2 ? shown(paths[n - 2]) : "");
  }
  hh_reader *r = hh_cli_open_trace("run", path);
  if (r) {
    hh_summary s;
    hh_summarize(r, &s);
    print_summary(shown(path), &s, r);
    char exec_buf[PATH_MAX];
    if (hh_reader_exec(r))
      fprintf(stderr,
              "heaphook: note: %s then exec'd %s, which was not traced (a static or set-user-ID program, "
              "an environment without heaphook's LD_PRELOAD such as env -i gives, "
              "or HEAPHOOK_TRACE_CHILDREN=0)\n",
              last,
              hh_reader_exec(r)[0] ? hh_text_safe(hh_reader_exec(r), exec_buf, sizeof exec_buf)
                                   : "a program by descriptor");
    hh_reader_close(r);
  }
  print_descendants(pattern, pid, start_ns, false);
  free(paths);
  return code;
}
