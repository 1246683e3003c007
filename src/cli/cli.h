/* Shared pieces of the heaphook command (src/cli/): the command table,
 * usage errors, number formatting, opening traces with clear messages. */
#ifndef HH_CLI_H
#define HH_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "trace/reader.h"

#define HH_COMMAND(name, summary) int hh_cmd_##name(int argc, char **argv);
#include "commands.def"
#undef HH_COMMAND

/* Exit statuses: 0 fine, 1 the work failed (unreadable or damaged trace),
 * 2 bad usage. `heaphook run` exits with its program's status. */
enum { HH_EXIT_OK = 0, HH_EXIT_FAIL = 1, HH_EXIT_USAGE = 2 };

/* Prints "heaphook cmd: <message> (heaphook cmd --help)" to stderr: one
 * line (the usage is --help's); returns 2. */
int hh_cli_usage_error(const char *cmd, const char *usage, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Prints "heaphook[ cmd]: <message>" to stderr. */
void hh_cli_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A failed allocation (trace/xalloc.h): says so, naming the trace being
 * read, and ends the process with status 1. */
__attribute__((noreturn)) void hh_tool_out_of_memory(size_t bytes);
struct option;
/* After getopt_long returned c, '?' or ':': what was wrong with the option
 * it could not take, as the user wrote it ("unknown option -x", also
 * inside a cluster; "--json takes no value"; "--top needs a value"), in
 * buf. */
const char *hh_cli_option_error(char **argv, int c, const struct option *longopts, char *buf, size_t size);
/* After getopt_long returned option c with its value in the next argument:
 * when that value is "--" or one of longopts, whole or abbreviated as getopt_long
 * takes it ("heaphook run -o -- prog",
 * "-o --json", where the file name was forgotten), what is wrong
 * ("-o needs a value before --") in buf; else NULL. */
const char *hh_cli_value_error(char **argv, const struct option *longopts, char *buf, size_t size);

/* Option parsing for the commands that read traces: getopt_long over
 * argv[1..] (from the start on the first call), with -h/--help, an option
 * missing its value and an unknown option handled alike everywhere. */
typedef struct hh_cli_args {
  const char *cmd, *usage;
  int argc;
  char **argv;
  int status; /* what the command returns after HH_CLI_STOP */
  bool started;
} hh_cli_args;
#define HH_CLI_ARGS(name, usage_text, count, vector) \
  { .cmd = (name), .usage = (usage_text), .argc = (count), .argv = (vector) }
#define HH_CLI_STOP (-2)
struct option;
/* The next option's character for the caller to handle, or -1 after the
 * last; HH_CLI_STOP once the usage was printed for -h (a->status 0) or
 * after a usage error, "OPT needs a value" or "unknown option OPT"
 * (a->status 2). shortopts starts with ':'. */
int hh_cli_getopt(hh_cli_args *a, const char *shortopts, const struct option *longopts);
/* After the options: the one trace's path, or NULL after the usage error
 * "no trace given" or "one trace at a time" (a->status 2). */
const char *hh_cli_one_trace(hh_cli_args *a);

/* Opens the output named by -o for writing: NULL or "-" is standard
 * output. On failure prints "cannot write PATH: why" and returns NULL. */
FILE *hh_cli_open_output(const char *cmd, const char *path);
/* The errno of the first write to out that failed (standard output or a
 * stream of hh_cli_open_output; glibc's own errno is lost by then), else 0. */
int hh_cli_write_error(FILE *out);
/* Flushes out and closes it (standard output stays open); returns 0, or -1
 * after printing "cannot write PATH: why" when writing it failed (and
 * removing the half-written file, hh_cli_discard_output). */
int hh_cli_close_output(const char *cmd, FILE *out, const char *path);
/* Removes what -o path holds after a failed write, when it is a regular
 * file (never a device or pipe, never standard output). */
void hh_cli_discard_output(const char *path);
/* True, having said so, when -o output is the file trace (writing it
 * would destroy the trace while it is read). */
bool hh_cli_output_is_trace(const char *cmd, const char *output, const char *trace);

/* Whether argv[1..] asks for help ("-h" or "--help" before any "--"). */
bool hh_cli_wants_help(int argc, char **argv);

/* "s" after a count other than 1: "%" PRIu64 " block%s", n, hh_cli_s(n) */
static inline const char *hh_cli_s(uint64_t n) { return n == 1 ? "" : "s"; }

/* "1.5 MiB", "512 B" */
const char *hh_cli_bytes(char *buf, size_t size, uint64_t bytes);
/* "12.345 s" / "1.234 ms" style, from ns */
const char *hh_cli_duration(char *buf, size_t size, uint64_t ns);

/* Opens a trace; on failure prints the reader's one-line message and
 * returns NULL. */
hh_reader *hh_cli_open_trace(const char *cmd, const char *path);
/* After reading: prints the reader's status message when it is not OK,
 * after "NAME: " (the trace's path; diff's "A (path)"), as an error that
 * the trace cannot be opened names it. Returns the exit status it implies:
 * 0 for a complete trace or one with no END record (a killed program's),
 * 1 for a cut short or damaged one. */
int hh_cli_report_status_of(const char *cmd, const char *name, const hh_reader *r);

#endif
