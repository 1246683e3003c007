/* The tracer recorder (HEAPHOOK_RECORD=trace): every malloc-family event
 * with its time, thread and call stack, written to a trace file
 * (docs/trace-format.md). The hook layer calls hh__trace_marker for the
 * public hh_marker(). */
#ifndef HH_RECORD_TRACE_TRACE_H
#define HH_RECORD_TRACE_TRACE_H

#include "record/recorder.h"

extern const hh_recorder hh__trace_recorder;

/* Writes a MARKER record (nothing when the tracer is not recording).
 * interrupted: called from a signal handler that may have interrupted
 * this thread inside the tracer, where it may hold the locks the marker
 * needs; the marker is then written only if it can be without waiting. */
void hh__trace_marker(const char *name, bool interrupted);

/* The program is about to exec `path` (src/hook/exec.c; NULL when it is a
 * descriptor): everything queued for the writer, the calling thread's
 * buffered events, the other threads' as provisional chunks, the process
 * records and an EXEC record naming the program are written before this
 * returns, and from then on no other thread writes to the file (exec ends
 * them wherever they are, a write half done included: the writes under way
 * finish before this returns) until hh__trace_exec_failed. Nothing is closed: if the exec fails, recording
 * goes on. */
void hh__trace_before_exec(const char *path);

/* The exec after hh__trace_before_exec failed: the other threads write
 * again. Nothing when this thread's hh__trace_before_exec wrote nothing. */
void hh__trace_exec_failed(void);

/* Above 0 while a dl_iterate_phdr callback runs on this thread (the
 * loader's lock held, src/hook/dl.c): the tracer takes no stack then.
 * initial-exec TLS. */
extern __thread unsigned hh__trace_in_dl_callback __attribute__((tls_model("initial-exec")));

/* The program's dlclose returned (src/hook/dl.c): the module list is
 * brought up to date, and stacks through a module gone get new ids. */
void hh__trace_after_dlclose(void);

/* The process is about to end by _exit or _Exit (src/hook/exit.c): the
 * trace is finished as at exit (every thread's buffer, then END). */
void hh__trace_before_exit(void);

/* Whether a trace is being recorded (one atomic load): the kill and raise
 * wrappers (src/hook/exit.c) look at the signal's action only then, so
 * that they make no system call of their own without a trace. */
bool hh__trace_recording(void);

/* This thread left a recorder call part-way (a signal handler that
 * interrupted it jumped out, src/hook/jump.c): the event it was writing
 * is dropped, and the next one starts a new chunk (its deltas were told
 * against the dropped one's). */
/* Returns false, and does nothing, when the thread left it inside a
 * stretch that holds the tracer's locks or state (hh__tr_busy: a new call
 * stack, a buffer handed over, the periodic records): given back, the
 * guard let the thread take the meta lock it still held, and the process
 * hung (found by review); the thread then records no more, as before
 * there was jump.c. */
bool hh__trace_abandoned(void);

#endif
