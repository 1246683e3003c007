/* A thread that does optional work beside the caller's, at low priority,
 * and that the caller waits for only while it gets processor time. The
 * heaphook command opens modules' debug information in one while it reads
 * the trace (load.c). On a busy machine a low-priority thread gets little
 * time; the caller then leaves it to end alone instead of waiting. */
#ifndef HH_CLI_SIDE_THREAD_H
#define HH_CLI_SIDE_THREAD_H

#include <stdatomic.h>
#include <stdbool.h>

typedef struct hh_side hh_side;

/* run(arg, stop) works until it is done or *stop is true. */
typedef void (*hh_side_run_fn)(void *arg, const atomic_bool *stop);
typedef void (*hh_side_free_fn)(void *arg);

/* Starts run(arg) in a thread named name (its first 15 bytes) at nice 10; NULL if it cannot
 * (arg is then still the caller's). */
hh_side *hh_side_start(const char *name, hh_side_run_fn run, hh_side_free_fn free_arg, void *arg);

/* Asks the thread to stop, and waits while it runs (while it gets at least
 * a quarter of the time waited, looked at every step_ms). true: it has
 * ended, and arg is the caller's again. false: it is left to end alone,
 * and it frees arg with free_arg when it does. s is freed either way. */
bool hh_side_end(hh_side *s, unsigned step_ms);

/* How many threads hh_side_end left are still running. A program that
 * ends while one is must not run its exit handlers: the libraries it is
 * in (libdw, libcurl's OpenSSL) would be torn down under it (a report on
 * a busy machine died of SIGSEGV in OpenSSL's cleanup at exit); main
 * ends by _exit then (main.c). */
int hh_side_left_running(void);

#endif
