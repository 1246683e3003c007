/* The trace reader: streams a heaphook trace (docs/trace-format.md) chunk by
 * chunk and hands out its records as decoded events, in file order
 * (hh_reader_next) or merged into time order across threads (hh_merge_next).
 *
 * Memory is bounded by what a trace defines, not by how many events it
 * holds: one decoded chunk (at most HH_CHUNK_MAX_DECODED) plus, for the
 * merge, a read-ahead window; the tables that records build and that stay
 * valid for the reader's life: stacks (a trie, one node per distinct stack
 * suffix), threads, modules, marker names, the command line; and for
 * format-2 traces each thread's model (10 bytes per allocation up to
 * 65,536 of them, ~75 bytes per size class it frees, from format 4 8 bytes
 * per free up to 8,192 of them: hh_reader_model_bytes).
 *
 * Errors come in kinds (hh_read_status). Opening refuses what is not a
 * readable trace with a one-line message. While reading, a trace that stops
 * mid-chunk is "cut short", one whose bytes are wrong is "damaged", one that
 * ends between chunks but without an END record has "no end"; in every case
 * the events before the problem have been delivered and hh_reader_message
 * says what happened. Hostile input never makes the reader crash or hang,
 * nor take memory for a length it has not seen the bytes of; what it keeps
 * grows with the decoded content, which zstd lets a small file make large
 * (a 16 KB file of THREAD records decodes to 40M of them), so it is held
 * to a memory limit (hh_reader_set_memory_limit): past it, reading stops
 * as at damage, with a status of its own. */
#ifndef HH_TRACE_READER_H
#define HH_TRACE_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "trace/format.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hh_reader hh_reader;

typedef enum hh_read_status {
  HH_READ_OK = 0,    /* so far so good; at the end: the END record was read */
  HH_READ_NO_END,    /* the file ends between chunks without an END record */
  HH_READ_CUT_SHORT, /* the last chunk is incomplete (killed mid-write) */
  HH_READ_DAMAGED,   /* wrong bytes: bad chunk, checksum, record */
  HH_READ_IO_ERROR,  /* read(2) failed */
  HH_READ_LIMIT,     /* the tables reached the memory limit (or the analysis did: hh_reader_stop) */
} hh_read_status;

typedef enum hh_ev_kind {
  HH_EV_ALLOC = 1,     /* addr, size, align, stack, weight, fn */
  HH_EV_FREE,          /* addr, fn */
  HH_EV_REALLOC,       /* old_addr -> addr, size, stack, weight, fn */
  HH_EV_STACK,         /* u.stack: a new trie node */
  HH_EV_THREAD,        /* u.thread */
  HH_EV_MODULE_LOAD,   /* u.module */
  HH_EV_MODULE_UNLOAD, /* u.module (the one unloaded; NULL when the base matched none) */
  HH_EV_RSS,           /* u.rss */
  HH_EV_MARKER,        /* u.marker */
  HH_EV_COMMAND,       /* see hh_reader_command */
  HH_EV_END,           /* u.end_events */
  HH_EV_EXEC,          /* u.exec: the program exec'd another (in file order where the record is; merged,
                          in END's place when it ended the trace: hh_reader_exec) */
} hh_ev_kind;

typedef struct hh_trace_segment {
  uint64_t start; /* absolute address */
  uint64_t size;
  uint64_t offset; /* file offset */
} hh_trace_segment;

/* A loaded module (MODULE_LOAD). Modules are numbered in load order
 * (index); load_epoch/unload_epoch count the module records read before it
 * was loaded / unloaded (UINT32_MAX while loaded), so that an address can be
 * matched with the module mapped there when a stack was recorded (see
 * hh_stack_node.epoch). */
typedef struct hh_trace_module {
  uint32_t index;
  uint64_t base; /* load bias (dl_iterate_phdr's dlpi_addr) */
  const char *path;
  const char *build_id; /* lower-case hex, "" when unknown */
  uint32_t nsegments;
  const hh_trace_segment *segments;
  uint32_t load_epoch, unload_epoch;
} hh_trace_module;

typedef struct hh_trace_thread {
  uint32_t index;
  uint64_t tid;
  const char *name;
} hh_trace_thread;

/* One decoded record. Times are nanoseconds since the trace's start
 * (header start_ticks), whatever the trace's clock; addresses absolute.
 * Pointers stay valid for the reader's life. 64 bytes: the analysis moves
 * ~10M of them per second between its threads, so u (the other records'
 * fields) shares its place with fields only events have. */
typedef struct hh_event {
  hh_ev_kind kind : 8;
  unsigned fn : 8; /* ALLOC/FREE/REALLOC: the hooked function, enum hh_call order */
  uint32_t thread; /* thread index of the chunk the record came from */
  uint64_t time;   /* ns; for untimed records the time of the last record before */
  uint64_t addr;   /* block (ALLOC, FREE) or new block (REALLOC) */
  uint64_t size;   /* requested bytes */
  uint64_t align;  /* requested alignment; 0 when the function takes none */
  union {
    struct { /* ALLOC, FREE, REALLOC */
      uint64_t old_addr;
      uint64_t stack;  /* stack id, 0 when none was recorded */
      uint64_t weight; /* bytes this event stands for: size, or the sample weight */
    };
    union { /* the other records */
      struct {
        uint64_t id, parent, ip;
      } stack;
      const hh_trace_thread *thread;
      const hh_trace_module *module;
      uint64_t rss;
      const char *marker; /* interned: equal names, equal pointers */
      uint64_t end_events;
      struct {
        const char *path; /* as the program gave it ("" for a descriptor) */
        uint64_t events;  /* written before it */
      } exec;
    } u;
  };
} hh_event;

/* How many allocations an ALLOC or REALLOC event stands for: 1, or in a
 * sampled trace weight / size, an unbiased estimate (a block drawn with
 * probability p stands for 1/p of its kind), as a whole number: rounded up
 * or down at random, up with a probability of the fraction, so that the
 * sum of the counts is still unbiased. The random number comes from the
 * event itself (address, time, size): every reading of a trace counts
 * alike, the analyzer and `heaphook run`'s summary too. Until 2026-11-25
 * each count was rounded to the nearest: 16 KiB blocks sampled every
 * 16 KiB (1/p = 1.58) counted 2 each, 26% too many, 32 KiB blocks (1.16)
 * 1 each, 13.5% too few. */
static inline uint64_t hh_event_count(bool sampled, const hh_event *ev) {
  if (!sampled || ev->size == 0) return 1;
  uint64_t n = ev->weight / ev->size, rest = ev->weight % ev->size;
  if (rest != 0) {
    /* (splitmix64's finalizer over the event's fields) */
    uint64_t h = ev->addr ^ (ev->time * 0x9E3779B97F4A7C15ull) ^ (ev->size << 1);
    h = (h ^ (h >> 30)) * 0xBF58476D1CE4E5B9ull;
    h = (h ^ (h >> 27)) * 0x94D049BB133111EBull;
    h ^= h >> 31;
    /* uniform in [0, size): below rest with probability rest / size */
    if ((uint64_t)(((unsigned __int128)h * ev->size) >> 64) < rest) n++;
  }
  return n ? n : 1;
}
_Static_assert(sizeof(hh_event) == 64, "hh_event is one cache line");

/* A stack trie node (hh_reader_stack(r, id)): stack `id` is `parent`'s
 * stack plus `ip` as its innermost frame. The id is not kept in the node:
 * 24 bytes a node, not 32 (a trace of ~1M deep stacks has 7.4M nodes). */
typedef struct hh_stack_node {
  uint64_t parent; /* id; 0 for the outermost frame */
  uint64_t ip;     /* return address */
  uint32_t depth;  /* frames in the stack, this one included */
  uint32_t epoch;  /* module records read when the node was defined */
} hh_stack_node;
_Static_assert(sizeof(hh_stack_node) == 24, "a stack node is 24 bytes");

/* ---- opening ---------------------------------------------------------------
 * Both return NULL with a one-line message in err (no trailing newline) when
 * the file cannot be opened or its header is not that of a readable trace:
 * "not a heaphook trace", "trace format version N is newer than this
 * heaphook reads (1)", "truncated header (N of 64 bytes)". */
hh_reader *hh_reader_open(const char *path, char *err, size_t err_size);
/* Reads from memory (tests, the fuzzer); data must outlive the reader. */
hh_reader *hh_reader_open_mem(const void *data, size_t size, char *err, size_t err_size);
void hh_reader_close(hh_reader *r);

const hh_trace_header *hh_reader_header(const hh_reader *r);
uint64_t hh_reader_ticks_to_ns(const hh_reader *r, uint64_t ticks);

/* ---- reading in file order -------------------------------------------------
 * Stores the next record in *ev and returns 1; returns 0 at the end of what
 * can be read (then see hh_reader_status). Definition records (STACK,
 * THREAD, MODULE_*, COMMAND) update the tables before they are returned.
 * Do not mix with a merge on the same reader. */
int hh_reader_next(hh_reader *r, hh_event *ev);

hh_read_status hh_reader_status(const hh_reader *r);
/* A one-line description of the status (e.g. "trace cut short after 12
 * chunks; the rest of the run is missing"); "" while HH_READ_OK. */
const char *hh_reader_message(const hh_reader *r);
uint64_t hh_reader_chunks(const hh_reader *r);     /* complete chunks read */
uint64_t hh_reader_offset(const hh_reader *r);     /* file bytes consumed */
uint64_t hh_reader_file_size(const hh_reader *r);  /* at open; 0 if unknown */
uint64_t hh_reader_end_events(const hh_reader *r); /* END's count; 0 before END */
/* The program the traced one exec'd where its trace ends (EXEC record, format
 * 4: the trace is whole, its END is that record), or NULL when the trace
 * ends otherwise; valid for the reader's life. An exec that failed is
 * followed by more records and END, and is not one. */
const char *hh_reader_exec(const hh_reader *r);
/* Bytes the reader holds for decoding version-2 event chunks (the threads'
 * models): they grow with the allocations and size classes the chunks hold,
 * not with the number of chunks or threads. */
uint64_t hh_reader_model_bytes(const hh_reader *r);

/* ---- memory ----------------------------------------------------------------
 * The reader's tables (stacks, threads, modules, marker names, the maps
 * that find them, the threads' models) are held to a limit of bytes: a
 * record that finds them past it is not read, and reading ends there as
 * at damage (the events before it are handed out) with HH_READ_LIMIT and a
 * message that names the limit. What is counted is what the tables hold,
 * with 16 bytes of malloc's per string or record; not the chunk buffers,
 * the merge's window (64 MiB) or the command line (one record's). 0 (or
 * never set) is no limit. The default applies to readers opened after it
 * is set: the heaphook command sets it once, before any (docs/trace-format.md,
 * "The reader's memory"). */
void hh_reader_default_memory_limit(uint64_t bytes);
uint64_t hh_reader_memory_limit_default(void); /* UINT64_MAX: none */
void hh_reader_set_memory_limit(hh_reader *r, uint64_t bytes);
uint64_t hh_reader_memory_limit(const hh_reader *r); /* UINT64_MAX: none */
/* What the tables hold now (the models included: hh_reader_model_bytes). */
uint64_t hh_reader_table_bytes(const hh_reader *r);
/* A consumer of the events (the analysis) has stopped at its own memory
 * limit: the status becomes HH_READ_LIMIT with msg, whatever the reader
 * found further on. Call once the reader is no longer read from. */
void hh_reader_stop(hh_reader *r, const char *msg);
/* Bytes for messages: "64 MiB", "2 GiB", "1.5 MiB", "4096 bytes". */
void hh_reader_format_bytes(char *buf, size_t size, uint64_t bytes);

/* ---- tables ----------------------------------------------------------------*/
size_t hh_reader_stack_count(const hh_reader *r);
/* The node with this id, or NULL (id 0, or not defined yet). */
const hh_stack_node *hh_reader_stack(const hh_reader *r, uint64_t id);
/* A dense index in [1, hh_reader_stack_count] for a defined id (0 for id 0
 * or unknown ids): consumers size per-stack arrays with it. */
size_t hh_reader_stack_index(const hh_reader *r, uint64_t id);
/* The node with dense index i (1-based). */
const hh_stack_node *hh_reader_stack_at(const hh_reader *r, size_t i);

size_t hh_reader_module_count(const hh_reader *r);
const hh_trace_module *hh_reader_module(const hh_reader *r, size_t index);
/* Module records read so far (the current epoch). */
uint32_t hh_reader_epoch(const hh_reader *r);

size_t hh_reader_thread_count(const hh_reader *r);
const hh_trace_thread *hh_reader_thread_at(const hh_reader *r, size_t i);    /* in order of THREAD records */
const hh_trace_thread *hh_reader_thread(const hh_reader *r, uint32_t index); /* by thread index, or NULL */

/* The recorded command line; argc 0 until the COMMAND record is read. */
int hh_reader_command(const hh_reader *r, const char *const **argv, const char **exe);

/* ---- reading in time order -------------------------------------------------
 * Threads' events come in separate chunks, each chunk in time order, chunks
 * written roughly in time order. The merge reads ahead until window_bytes of
 * decoded chunks are buffered (0: 64 MiB) and hands out the earliest
 * buffered event (ties: lower thread index first). An event earlier than one
 * already handed out (its chunk came later than the window allows) is handed
 * out at once and counted in hh_merge_late. Definition records are handed
 * out as soon as their chunk is read (tables are always up to date);
 * ALLOC/FREE/REALLOC/RSS/MARKER in time order; END last. */
typedef struct hh_merge hh_merge;
hh_merge *hh_merge_new(hh_reader *r, size_t window_bytes);
int hh_merge_next(hh_merge *m, hh_event *ev);
/* Up to max of the next events into evs, as hh_merge_next would give them
 * one by one; fewer only at the end. */
size_t hh_merge_next_n(hh_merge *m, hh_event *evs, size_t max);
uint64_t hh_merge_late(const hh_merge *m);
/* The file bytes of the chunks whose events the merge has all handed out
 * (and of those it skipped): how much of the trace its reader has been
 * through, for a progress bar. hh_reader_offset is how far the merge has
 * read ahead, up to window_bytes further: all of a trace smaller than the
 * window before the first event. */
uint64_t hh_merge_offset(const hh_merge *m);
void hh_merge_free(hh_merge *m);

/* Names for printing. */
const char *hh_fn_name(unsigned fn); /* "malloc", ..., "?" */
const char *hh_ev_kind_name(hh_ev_kind kind);

#ifdef __cplusplus
}
#endif

#endif
