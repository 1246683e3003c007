/* The heaphook command: `heaphook <command> [options] ...`. Each command
 * lives in its own cmd_<name>.c and is listed in commands.def; this file
 * only dispatches and prints the overall help. Never linked with the hook
 * layer. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/duration.h"
#include "base/memory_limit.h"
#include "base/size.h"
#include "cli.h"
#include "side_thread.h"

/* Exported (src/cli/CMakeLists.txt): a heaphook library preloaded into
 * this process, as LD_PRELOAD=libpreloaded_tlsf.so exported for a node
 * makes it, serves it glibc's malloc and records and reports nothing
 * (hook/runtime.h, hh__untraced_process). The command ran on the library's
 * allocator, traced itself under HEAPHOOK_RECORD=trace, and printed its own
 * HEAPHOOK_STATS report at exit, which `heaphook run` showed next to the
 * program's summary as if it were the program's. */
__attribute__((visibility("default"), used)) const char hh_untraced_process[] = "the heaphook command";

typedef struct command {
  const char *name, *summary;
  int (*run)(int argc, char **argv);
} command;

static const command commands[] = {
#define HH_COMMAND(name, summary) {#name, summary, hh_cmd_##name},
#include "commands.def"
#undef HH_COMMAND
};

static void usage(FILE *out) {
  fprintf(out,
          "usage: heaphook <command> [options] [arguments]\n"
          "\n"
          "Records every heap allocation of a program with its call stack, and analyses the\n"
          "recording (a trace file, docs/trace-format.md).\n"
          "\n"
          "commands:\n");
  for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
    fprintf(out, "  %-8s %s\n", commands[i].name, commands[i].summary);
  fprintf(out,
          "\n"
          "`heaphook <command> --help` describes a command.\n"
          "example: heaphook run -- ./myprogram arg1 arg2\n");
}

/* Output streams that keep the reason of their first failed write. glibc
 * drops a stdio buffer whose write failed, so the fflush at the end had
 * nothing to write and no errno to tell: `heaphook report t.hhtrace
 * >/dev/full` said "cannot write standard output" and no why, and an -o
 * file on a full disk "Input/output error". Standard output and every -o
 * file go through these (fopencookie over the descriptor). */
typedef struct tracked {
  FILE *f; /* NULL: the slot is free */
  int fd, err;
} tracked;
static tracked tracked_slots[4];

static ssize_t tracked_write(void *cookie, const char *buf, size_t size) {
  tracked *t = cookie;
  for (size_t done = 0; done < size;) {
    ssize_t n = write(t->fd, buf + done, size - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (t->err == 0) t->err = n < 0 ? errno : EIO;
      return -1;
    }
    done += (size_t)n;
  }
  return (ssize_t)size;
}

static int tracked_close(void *cookie) {
  tracked *t = cookie;
  t->f = NULL;
  return close(t->fd);
}

static FILE *tracked_open(int fd) {
  for (size_t i = 0; i < sizeof tracked_slots / sizeof *tracked_slots; i++) {
    tracked *t = &tracked_slots[i];
    if (t->f) continue;
    *t = (tracked){.fd = fd};
    t->f = fopencookie(t, "w", (cookie_io_functions_t){.write = tracked_write, .close = tracked_close});
    if (t->f) setvbuf(t->f, NULL, isatty(fd) ? _IOLBF : _IOFBF, 64 * 1024);
    return t->f;
  }
  return fdopen(fd, "w");
}

int hh_cli_write_error(FILE *f) {
  for (size_t i = 0; i < sizeof tracked_slots / sizeof *tracked_slots; i++)
    if (tracked_slots[i].f == f) return tracked_slots[i].err;
  return 0;
}

/* What a command wrote to standard output must have reached it: a full
 * disk or a closed pipe's reader is an error (exit 1), not a silent loss of
 * a report or JSON that a script then reads truncated. */
static int check_stdout(const char *name, int status) {
  errno = 0;
  bool ok = fflush(stdout) == 0 && !ferror(stdout);
  /* A closed standard output (>&-) that nothing went to loses nothing:
   * `heaphook run -- prog >&-` exited 1, not with prog's status. What was
   * written to it failed above. */
  if (ok && fclose(stdout) != 0 && errno != EBADF) ok = false;
  /* a command that failed has said why (those that write files say so
   * for standard output too) */
  if (ok || status != HH_EXIT_OK) return status;
  int err = hh_cli_write_error(stdout) ? hh_cli_write_error(stdout) : errno;
  /* (a closed descriptor can be told afterwards) */
  if (err == 0 && fcntl(STDOUT_FILENO, F_GETFD) < 0) err = errno;
  if (err)
    hh_cli_error(name, "cannot write standard output: %s", strerror(err));
  else
    hh_cli_error(name, "cannot write standard output");
  return HH_EXIT_FAIL;
}

/* The exit status, or no return when a side thread still runs (its
 * libraries must not be torn down under it: side_thread.h). */
static int finish(const char *name, int status) {
  status = check_stdout(name, status);
  if (hh_side_left_running() > 0) {
    fflush(stderr);
    _exit(status);
  }
  return status;
}

/* The memory limit of every trace's reading (hh_reader_default_memory_limit):
 * HEAPHOOK_MEMORY_LIMIT (a size; 0: none), or by default half of what this
 * process may use: the machine's memory, its cgroup's limit, ulimit -v
 * (RLIMIT_AS) or -d (RLIMIT_DATA), whichever is least. The other half is
 * for what the limit does not count (the merge's window, the mapped file,
 * debug information, the output being built) and the rest of the machine.
 * docs/trace-format.md, "The reader's memory". Returns false (said) for a
 * value that is not a size. */
static bool set_memory_limit(void) {
  const char *v = getenv("HEAPHOOK_MEMORY_LIMIT");
  if (v && *v) {
    size_t bytes;
    if (hh__parse_size(v, &bytes) != 0) {
      fprintf(stderr,
              "heaphook: HEAPHOOK_MEMORY_LIMIT=%s is not a size (bytes, or with K, M, G, T; 0: none)\n", v);
      return false;
    }
    hh_reader_default_memory_limit(bytes);
    return true;
  }
  uint64_t may = hh__memory_limit();
  struct rlimit rl;
  if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < may) may = rl.rlim_cur;
  if (getrlimit(RLIMIT_DATA, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < may)
    may = rl.rlim_cur;
  hh_reader_default_memory_limit(may == SIZE_MAX ? 0 : may / 2);
  return true;
}

int main(int argc, char **argv) {
  if (!set_memory_limit()) return HH_EXIT_FAIL;
  /* (a closed one stays as it is: nothing written to it, nothing lost) */
  if (fcntl(STDOUT_FILENO, F_GETFD) >= 0) {
    FILE *out = tracked_open(STDOUT_FILENO);
    if (out) stdout = out;
  }
  if (argc < 2) {
    fprintf(stderr, "heaphook: no command given (heaphook --help lists them)\n");
    return HH_EXIT_USAGE;
  }
  const char *name = argv[1];
  if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0 || strcmp(name, "help") == 0) {
    if (strcmp(name, "help") == 0 && argc > 2 && strcmp(argv[2], "--help") != 0 &&
        strcmp(argv[2], "-h") != 0) {
      char *sub[] = {argv[2], "--help", NULL};
      for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
        if (strcmp(argv[2], commands[i].name) == 0) return finish(commands[i].name, commands[i].run(2, sub));
      /* (the overall usage, exit status 0, as if the command existed) */
      fprintf(stderr, "heaphook: unknown command \"%s\" (heaphook --help lists them)\n", argv[2]);
      return HH_EXIT_USAGE;
    }
    /* (checked as a command's output is: `heaphook --help >/dev/full`
     * exited 0, where `heaphook run --help` said so and exited 1) */
    usage(stdout);
    return finish(NULL, HH_EXIT_OK);
  }
  if (strcmp(name, "--version") == 0) {
    printf("heaphook %s (trace format %u)\n", HH_VERSION, HH_TRACE_VERSION);
    return finish(NULL, HH_EXIT_OK);
  }
  for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
    if (strcmp(name, commands[i].name) == 0) return finish(name, commands[i].run(argc - 1, argv + 1));
  if (name[0] == '-')
    fprintf(stderr, "heaphook: unknown option %s (options go after the command; heaphook --help)\n", name);
  else
    fprintf(stderr, "heaphook: unknown command \"%s\" (heaphook --help lists them)\n", name);
  return HH_EXIT_USAGE;
}

/* ---- shared helpers (cli.h) ---------------------------------------------- */

static void vmessage(const char *cmd, const char *fmt, va_list ap) {
  if (cmd)
    fprintf(stderr, "heaphook %s: ", cmd);
  else
    fprintf(stderr, "heaphook: ");
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
}

void hh_cli_error(const char *cmd, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vmessage(cmd, fmt, ap);
  va_end(ap);
}

int hh_cli_usage_error(const char *cmd, const char *usage_text, const char *fmt, ...) {
  (void)usage_text; /* one line; --help prints it */
  char text[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text, sizeof text, fmt, ap);
  va_end(ap);
  hh_cli_error(cmd, "%s (heaphook %s --help)", text, cmd);
  return HH_EXIT_USAGE;
}

/* The long option that "--" followed by name's first len characters is, as
 * getopt_long takes it: the whole name, or a prefix of one option's (or of
 * several that are the same option); NULL when none or ambiguous. */
static const struct option *long_option(const struct option *longopts, const char *name, size_t len) {
  const struct option *found = NULL;
  bool ambiguous = false;
  for (const struct option *o = longopts; len && o && o->name; o++) {
    if (strncmp(o->name, name, len) != 0) continue;
    if (o->name[len] == '\0') return o;
    if (!found)
      found = o;
    else if (found->has_arg != o->has_arg || found->flag != o->flag || found->val != o->val)
      ambiguous = true;
  }
  return ambiguous ? NULL : found;
}

/* What was wrong with the option getopt could not take (c: '?' or ':').
 * A long one is argv[optind - 1] ("--name" or "--name=value"): unknown
 * (optopt 0), given a value it takes none of, or missing its value (which
 * happens only at the end). A short one is optopt, also inside a cluster
 * such as -jx, where argv[optind - 1] is another argument. */
const char *hh_cli_option_error(char **argv, int c, const struct option *longopts, char *buf, size_t size) {
  const char *arg = argv[optind - 1];
  if (strncmp(arg, "--", 2) == 0) {
    int len = (int)strcspn(arg, "=");
    /* (abbreviated: "--no-st=1" was "unknown option -n") */
    const struct option *o = long_option(longopts, arg + 2, (size_t)len - 2);
    bool known = o != NULL;
    if (c == '?' && !known && optopt == 0) {
      snprintf(buf, size, "unknown option %.*s", len, arg);
      return buf;
    }
    if (c == '?' && known && arg[len] == '=' && o->has_arg == no_argument) {
      snprintf(buf, size, "%.*s takes no value", len, arg);
      return buf;
    }
    if (c == ':' && known) {
      snprintf(buf, size, "%.*s needs a value", len, arg);
      return buf;
    }
  }
  snprintf(buf, size, c == ':' ? "-%c needs a value" : "unknown option -%c", optopt);
  return buf;
}

const char *hh_cli_value_error(char **argv, const struct option *longopts, char *buf, size_t size) {
  /* only a value given as the next argument: "--output=--" is meant */
  if (!optarg || optind < 2 || optarg != argv[optind - 1]) return NULL;
  const char *opt = argv[optind - 2];
  bool is_option = strcmp(optarg, "--") == 0;
  /* (abbreviated as getopt_long takes it: "-o --js" was a file) */
  if (!is_option && strncmp(optarg, "--", 2) == 0)
    is_option = long_option(longopts, optarg + 2, strcspn(optarg + 2, "=")) != NULL;
  if (!is_option) return NULL;
  if (strncmp(opt, "--", 2) == 0)
    snprintf(buf, size, "%.*s needs a value before %s", (int)strcspn(opt, "="), opt, optarg);
  else
    snprintf(buf, size, "-%c needs a value before %s", opt[strlen(opt) - 1], optarg); /* (-jo --) */
  return buf;
}

int hh_cli_getopt(hh_cli_args *a, const char *shortopts, const struct option *longopts) {
  if (!a->started) {
    opterr = 0;
    optind = 1;
    a->started = true;
  }
  int c = getopt_long(a->argc, a->argv, shortopts, longopts, NULL);
  switch (c) {
    case 'h':
      fputs(a->usage, stdout);
      a->status = HH_EXIT_OK;
      return HH_CLI_STOP;
    case ':':
    case '?': {
      char buf[256];
      a->status = hh_cli_usage_error(a->cmd, a->usage, "%s",
                                     hh_cli_option_error(a->argv, c, longopts, buf, sizeof buf));
      return HH_CLI_STOP;
    }
    default: {
      char buf[256];
      if (c != -1 && hh_cli_value_error(a->argv, longopts, buf, sizeof buf)) {
        a->status = hh_cli_usage_error(a->cmd, a->usage, "%s", buf);
        return HH_CLI_STOP;
      }
      return c;
    }
  }
}

const char *hh_cli_one_trace(hh_cli_args *a) {
  if (optind >= a->argc) {
    a->status = hh_cli_usage_error(a->cmd, a->usage, "no trace given");
    return NULL;
  }
  if (optind + 1 < a->argc) {
    a->status =
        hh_cli_usage_error(a->cmd, a->usage, "one trace at a time (got \"%s\" too)", a->argv[optind + 1]);
    return NULL;
  }
  return a->argv[optind];
}

static bool is_stdout(const char *path) { return !path || strcmp(path, "-") == 0; }

FILE *hh_cli_open_output(const char *cmd, const char *path) {
  if (is_stdout(path)) return stdout;
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  FILE *out = fd >= 0 ? tracked_open(fd) : NULL;
  if (!out) {
    hh_cli_error(cmd, "cannot write %s: %s", path, strerror(errno));
    if (fd >= 0) close(fd);
  }
  return out;
}

int hh_cli_close_output(const char *cmd, FILE *out, const char *path) {
  bool to_stdout = is_stdout(path);
  errno = 0;
  bool failed = fflush(out) != 0 || ferror(out);
  int err = hh_cli_write_error(out) ? hh_cli_write_error(out) : errno;
  if (!to_stdout && fclose(out) != 0 && !failed) {
    failed = true;
    err = errno;
  }
  if (!failed) return 0;
  hh_cli_error(cmd, "cannot write %s: %s", to_stdout ? "standard output" : path, strerror(err ? err : EIO));
  if (!to_stdout) hh_cli_discard_output(path);
  return -1;
}

void hh_cli_discard_output(const char *path) {
  struct stat st; /* only a regular file: -o may name a device (/dev/full) or a pipe */
  if (!is_stdout(path) && stat(path, &st) == 0 && S_ISREG(st.st_mode)) unlink(path);
}

bool hh_cli_output_is_trace(const char *cmd, const char *output, const char *trace) {
  struct stat o, t;
  if (is_stdout(output) || stat(output, &o) != 0 || stat(trace, &t) != 0) return false;
  if (o.st_dev != t.st_dev || o.st_ino != t.st_ino) return false;
  hh_cli_error(cmd, "-o %s is the trace being read; name another file", output);
  return true;
}

bool hh_cli_wants_help(int argc, char **argv) {
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--") == 0) return false;
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) return true;
  }
  return false;
}

const char *hh_cli_bytes(char *buf, size_t size, uint64_t bytes) {
  hh__format_size(buf, size, bytes);
  return buf;
}

const char *hh_cli_duration(char *buf, size_t size, uint64_t ns) {
  hh__format_duration(buf, size, ns);
  return buf;
}

/* The trace being read, for a failed allocation's message. */
static const char *reading_cmd, *reading_path;

/* (trace/xalloc.h) An allocation that failed, anywhere in reading, analysing
 * or writing: one line naming the trace, and status 1, where it aborted
 * (core dumped) saying "heaphook: out of memory (N bytes)". Other threads
 * may be running (the reading thread, the symbols thread): the process ends
 * at once, without exit handlers (what stdio holds of standard output is
 * not written: the output is not whole). */
void hh_tool_out_of_memory(size_t bytes) {
  char what[64];
  hh__format_size(what, sizeof what, bytes);
  if (reading_path)
    hh_cli_error(reading_cmd,
                 "%s: out of memory (%s more could not be had; HEAPHOOK_MEMORY_LIMIT lower stops the "
                 "reading with a report instead)",
                 reading_path, what);
  else
    hh_cli_error(reading_cmd, "out of memory (%s more could not be had)", what);
  _exit(HH_EXIT_FAIL);
}

hh_reader *hh_cli_open_trace(const char *cmd, const char *path) {
  reading_cmd = cmd;
  reading_path = path;
  char err[512];
  hh_reader *r = hh_reader_open(path, err, sizeof err);
  if (!r) hh_cli_error(cmd, "%s", err);
  return r;
}

int hh_cli_report_status_of(const char *cmd, const char *name, const hh_reader *r) {
  const char *sep = name ? ": " : "";
  if (!name) name = "";
  switch (hh_reader_status(r)) {
    case HH_READ_OK:
      return HH_EXIT_OK;
    case HH_READ_NO_END:
      hh_cli_error(cmd, "warning: %s%s%s", name, sep, hh_reader_message(r));
      return HH_EXIT_OK;
    default:
      hh_cli_error(cmd, "%s%s%s", name, sep, hh_reader_message(r));
      return HH_EXIT_FAIL;
  }
}
