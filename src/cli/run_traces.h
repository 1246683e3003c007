/* The traces a `heaphook run` produced (run_traces.c): the programs its
 * process ran in turn (exec), and the traces of the processes it started.
 * The tracer names a trace by HEAPHOOK_OUTPUT with "%p" replaced by the
 * pid, "<pid>.1", "<pid>.2", ... for the programs a process execs in turn
 * (docs/trace-format.md, "Writing a trace"); with a fixed path (no "%p"),
 * the first program's trace is that path and the others follow its
 * numbered pattern (trace/naming.h). */
#ifndef HH_CLI_RUN_TRACES_H
#define HH_CLI_RUN_TRACES_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The live process that is writing the trace at path: the pid in its
 * header when that process still has the file open, or one of the traces
 * of the programs it exec'd since (pattern's numbered pattern with
 * "<pid>.1", ...; pattern the path's, "%%" for a '%', or NULL), else 0
 * (not a trace, or its writer is gone). */
pid_t hh_run_trace_writer(const char *path, const char *pattern);

/* pattern with "%p" -> pid ("%%" -> "%"), as the tracer expands it. */
void hh_run_expand(const char *pattern, const char *pid, char *out, size_t size);

/* The traces of process pid started after since_ns (wall clock), in the
 * order its programs ran: at most max, how many found. */
int hh_run_exec_chain(const char *pattern, pid_t pid, uint64_t since_ns, char (*out)[PATH_MAX], int max);

/* The program a trace recorded, without its directory (its COMMAND
 * record): true. Else false, with out "pid N, program not recorded (no
 * chunk written)": a process killed before its first chunk leaves a
 * header-only trace (it said "?"); "?" for a file that is not a trace. */
bool hh_run_program(const char *path, char *out, size_t size);
/* The program the trace's EXEC record names, without its directory (the
 * one its process went on to run): true, or false (none, or by
 * descriptor). */
bool hh_run_exec_of(const char *path, char *out, size_t size);

/* Traces of pid's descendants (children, their children, ...) matching
 * pattern (or a fixed path's numbered pattern) and started after since_ns:
 * how many, and the first up to max of them in out, by pid. */
int hh_run_descendants(const char *pattern, pid_t pid, uint64_t since_ns, char (*out)[PATH_MAX], int max);

#endif
