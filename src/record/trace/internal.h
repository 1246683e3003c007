/* The tracer's internal interfaces (src/record/trace/): the clock, byte
 * buffers, the trace file and its process records, the stack unwinder and
 * trie, and what it reads from /proc and the dynamic linker.
 *
 * Everything here runs inside malloc (see record/recorder.h): no stdio, no
 * getenv, no malloc (memory comes from mmap), initial-exec TLS. */
#ifndef HH_RECORD_TRACE_INTERNAL_H
#define HH_RECORD_TRACE_INTERNAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "trace/format.h"

/* ---- clock (clock.c) --------------------------------------------------------
 * Timestamps are the TSC (rdtsc) where the CPU says it is invariant, else
 * CLOCK_MONOTONIC in ns. Event times are ticks since hh__tr_start_ticks. */
extern bool hh__tr_use_tsc;
extern uint64_t hh__tr_start_ticks;   /* ticks at start (header field) */
extern uint64_t hh__tr_start_wall_ns; /* CLOCK_REALTIME at start */
extern unsigned hh__tr_tick_shift;    /* trace ticks = clock ticks >> this */

uint64_t hh__tr_ticks_slow(void);
static inline uint64_t hh__tr_ticks(void) {
#if defined(__x86_64__)
  if (__builtin_expect(hh__tr_use_tsc, 1)) return __builtin_ia32_rdtsc();
#endif
  return hh__tr_ticks_slow();
}
/* Ticks since the start. */
static inline uint64_t hh__tr_now(void) { return (hh__tr_ticks() >> hh__tr_tick_shift) - hh__tr_start_ticks; }
/* Chooses the clock and notes the start instant (again in a forked child). */
void hh__tr_clock_start(void);
/* Ticks per second, calibrated against CLOCK_MONOTONIC since the first
 * start (waits until 2 ms have passed so that the ratio is exact to ~1e-5). */
uint64_t hh__tr_ticks_per_second(void);
/* The same, without waiting: an estimate (*exact false) while the TSC has
 * not been calibrated yet. */
uint64_t hh__tr_ticks_per_second_now(bool *exact);

/* ---- encoding into memory ------------------------------------------------ */
static inline uint8_t *hh__tr_varint(uint8_t *p, uint64_t v) {
  while (v >= 0x80) {
    *p++ = (uint8_t)(v | 0x80);
    v >>= 7;
  }
  *p++ = (uint8_t)v;
  return p;
}
static inline uint8_t *hh__tr_svarint(uint8_t *p, int64_t v) { return hh__tr_varint(p, hh_zigzag(v)); }
static inline uint8_t *hh__tr_string(uint8_t *p, const char *s, size_t n) {
  p = hh__tr_varint(p, n);
  memcpy(p, s, n);
  return p + n;
}

/* Anonymous memory for the tracer's own data; NULL on failure. */
void *hh__tr_map(size_t bytes);

/* ---- the trace file (writer.c) --------------------------------------------
 * One file per process. Chunks are compressed (zstd) by the thread that
 * fills them and written with one write(2) each (O_APPEND). The first chunk
 * writer writes the file header. */

/* Options, set by the recorder at start. */
typedef struct hh_tr_options {
  const char *output; /* HEAPHOOK_OUTPUT pattern, or NULL for the default */
  uint64_t sample;    /* HEAPHOOK_TRACE_SAMPLE bytes; 0: every event */
  bool stacks;        /* HEAPHOOK_TRACE_STACKS */
  bool children;      /* HEAPHOOK_TRACE_CHILDREN */
} hh_tr_options;
extern hh_tr_options hh__tr_opt;

/* True while the trace is being written (the file is open and no write has
 * failed, and the recorder has not stopped). */
extern atomic_bool hh__tr_active;

/* Creates the trace file for this process (pid in the name). Returns 0, or
 * -1 after one warning on stderr (then hh__tr_active stays false). */
/* parent: the header's parent pid, given now: by the time the header is
 * written (the first chunk) a daemon's parent may have exited, leaving init
 * (1) as its parent, and heaphook run no longer found it among the run's
 * processes. */
int hh__tr_file_open(pid_t parent);
/* Forgets the parent's file in a forked child (without closing: the parent
 * still writes it... it is the child's copy of the descriptor, closed). */
void hh__tr_file_forget(void);
/* A thread's buffer: what its thread appends to before handing it over. */
#define HH_TR_BUF_CAP (256u << 10)

/* The version-2 event model of one thread (transcode.c): threads encode
 * version-1 rows into their buffers (cheap to append); where a chunk is
 * written they become a version-2 event chunk, told against what the reader
 * will know (src/trace/model.h). A model belongs to one thread's chunks,
 * which are written in order, one at a time. */
typedef struct hh_tr_model hh_tr_model;
hh_tr_model *hh__tr_model_new(void); /* NULL when no memory */
void hh__tr_model_reset(hh_tr_model *m);
/* The trace format whose event chunks it writes: HH_TRACE_VERSION unless
 * set (tests write older versions' chunks, 2 or 3). */
void hh__tr_model_set_version(hh_tr_model *m, uint32_t version);
/* Bytes dst must have for a buffer of len bytes. */
size_t hh__tr_transcode_room(size_t len);
/* The rows raw[0, len) as an event chunk payload at dst (stream table,
 * then the streams); sizes gets each stream's bytes (the first including
 * the table; HH_STREAMS_MAX entries, those the version has set). Returns the payload's length (0: rows
 * unreadable). */
size_t hh__tr_transcode(hh_tr_model *m, const uint8_t *raw, size_t len, uint8_t *dst, size_t sizes[]);

/* Compresses raw[0, len) into one chunk of thread `thread` and writes it:
 * with a model (a thread's events) as a version-2 event chunk, without
 * (the process records) as rows. `events` counts the ALLOC/FREE/REALLOC
 * records in it (for END). On a failed write: one warning, tracing stops. */
void hh__tr_write_chunk(const uint8_t *raw, size_t len, uint32_t thread, uint64_t events, hh_tr_model *model);
/* A provisional chunk of thread `thread` (format.h): its buffer's rows
 * raw[0, len) as they are, not counted in END's events. */
void hh__tr_write_provisional(const uint8_t *raw, size_t len, uint32_t thread);
/* Events written so far (END's count). */
uint64_t hh__tr_events_written(void);

/* The process buffer: STACK, MODULE_*, RSS, MARKER, COMMAND and END records,
 * written as chunks of thread 0. It is flushed before any thread's chunk is
 * written, so that every stack id is defined in the file before it is used.
 * All of it under the meta lock (also the stack trie's). */
void hh__tr_meta_lock(void);
void hh__tr_meta_unlock(void);
/* With the lock: room for n bytes (n <= 64 KiB), flushing first if needed. */
uint8_t *hh__tr_proc_reserve(size_t n);
void hh__tr_proc_commit(uint8_t *end);
/* For a signal handler that may have interrupted its thread inside the
 * tracer: the lock, if it is free, and room for n bytes without a flush
 * (which may wait for what the interrupted code holds); NULL, the lock not
 * held, otherwise. */
uint8_t *hh__tr_proc_try_reserve(size_t n);
void hh__tr_proc_flush_locked(void);
/* Flushes the process buffer if it holds anything (takes the lock). */
void hh__tr_proc_flush(void);
/* fork: prepare/parent/child handlers for the writer's locks and buffers. */
void hh__tr_writer_prepare(void);
void hh__tr_writer_parent(void);
void hh__tr_writer_child(void);

/* Exec: from begin until end (the exec failed) no thread but the caller
 * writes to the file; begin returns once the writes under way are done. */
void hh__tr_exec_begin(void);
void hh__tr_exec_end(void);

/* Above 0 while this thread is in a part of the tracer that takes its
 * locks (a buffer's hand-over, a stack cache miss, the periodic records):
 * a signal handler that interrupted it there must not wait for them. A
 * fork then leaves the tracer's locks alone (its child is not traced), and
 * an exit does not finish the trace (recorder.c). initial-exec TLS. */
extern __thread unsigned hh__tr_busy __attribute__((tls_model("initial-exec")));

/* ---- stacks (stacks.c) ------------------------------------------------------
 * A per-thread cache of recent stacks, keyed by the call site (the program's
 * return address and stack pointer at the call) and validated by re-reading
 * the stack slots each return address was found in; behind it a DWARF
 * unwind (libunwind) and the process-wide trie of stack ids. */
#define HH_TR_MAX_FRAMES 64
typedef struct hh_tr_stack_cache hh_tr_stack_cache;
size_t hh__tr_stack_cache_bytes(void);
/* The stack of the current malloc-family call; cache is the thread's (not
 * NULL: a miss works in it); cfa is hh__call_cfa (NULL: unknown, then
 * frames inside heaphook are skipped by address). Returns its id, 0 when
 * no frame was found. */
uint64_t hh__tr_stack_capture(hh_tr_stack_cache *cache, void *cfa);
void hh__tr_stacks_init(void);
/* With the meta lock: a module at [lo, hi) was unloaded; stacks through it
 * get new ids from now on. */
void hh__tr_stacks_forget(uintptr_t lo, uintptr_t hi);
/* A module loaded at [lo, hi) (under the meta lock): over an unloaded one's
 * range, the fast unwind is off from here on (stacks.c, no_fast). */
void hh__tr_stacks_loaded(uintptr_t lo, uintptr_t hi);
/* In a forked child: forget every id (the child's file defines its own). */
void hh__tr_stacks_reset(void);

/* ---- the process (procinfo.c) ----------------------------------------------- */
/* The dynamic linker and the unwinder. dl_iterate_phdr (modules, and
 * libunwind's search for unwind tables) holds glibc's loader lock, which
 * glibc 2.36 does not reset in a forked child: a child forked while
 * another thread was inside deadlocks at its first dl_iterate_phdr. So the
 * tracer's own calls pass a gate (gate.h) that the tracer's fork handler
 * closes: none is under way at a fork. enter waits while a fork is under
 * way (call it holding none of the tracer's locks); try_enter gives up. */
void hh__tr_loader_enter(void);
bool hh__tr_loader_try_enter(void);
void hh__tr_loader_leave(void);
/* The fork handlers' part: close (prepare), open (parent), reset (child). */
void hh__tr_loader_fork_prepare(void);
void hh__tr_loader_fork_parent(void);
void hh__tr_loader_fork_child(void);
/* Appends MODULE_LOAD/UNLOAD records for what changed since the last scan
 * (everything at the first). `cheap`: return at once unless the dynamic
 * linker's load/unload counters moved. */
void hh__tr_modules_scan(bool cheap);
void hh__tr_modules_reset(void);
void hh__tr_command_record(void);
/* Appends an RSS record (the lock is taken inside). */
void hh__tr_rss_record(uint64_t time);
/* /proc/self/statm opened for the RSS samples (at start-up and in a forked
 * child, while one thread runs); in a forked child, first the parent's
 * closed. */
void hh__tr_procfs_open(void);
void hh__tr_procfs_reset(void);
/* True when main has ended (pthread_exit) and no other thread of the
 * program lives: the tracer's writer thread, the last, should end too;
 * name: the program's (main's) name. */
bool hh__tr_only_tracer_left(char name[16], int tracer_threads);
/* Our own library's text, to skip our frames when the call site is unknown. */
bool hh__tr_in_self(uintptr_t ip);
void hh__tr_self_init(void);
/* The executable text of the module that holds addr. */
bool hh__tr_text_of(uintptr_t addr, uintptr_t *lo, uintptr_t *hi);

#endif
