/* The trace reader (reader.h): chunk framing, checksums, zstd, record
 * decoding, the definition tables, and the time-ordered merge.
 *
 * Every length read from the file is checked against what is left before it
 * is used; sizes are capped by HH_CHUNK_MAX_DECODED (chunks) or by the bytes
 * of the chunk that holds them (strings, segment and argument counts). What
 * the reader keeps grows with what the chunks define and hold (stacks,
 * threads, modules; the format-2 thread models, up to ~640 KiB for a thread
 * that allocated 65,536 times), i.e. with the decoded bytes, never with a
 * length field taken on trust; zstd can make a file far smaller than that
 * (200 threads of 65,536 allocations: an 18 KB file, 125 MiB of models). */
#define _GNU_SOURCE
#include "trace/reader.h"
#include "trace/model.h"

#include "trace/strset.h"
#include "trace/xalloc.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

/* ---- small containers ------------------------------------------------------
 * u64map: open addressing (linear probing) from a 64-bit key to a 32-bit
 * value; used for stack ids, thread indexes and module bases. */
typedef struct u64map {
  uint64_t *keys;
  uint32_t *vals;  /* value + 1; 0 = empty slot */
  size_t cap, n;   /* cap is 0 or a power of two */
  uint64_t *bytes; /* where its growth is counted (the reader's tables), or NULL */
} u64map;

static int u64map_get(const u64map *m, uint64_t key, uint32_t *val) {
  if (!m->cap) return 0;
  size_t mask = m->cap - 1;
  for (size_t i = hh_mix64(key) & mask;; i = (i + 1) & mask) {
    if (!m->vals[i]) return 0;
    if (m->keys[i] == key) {
      *val = m->vals[i] - 1;
      return 1;
    }
  }
}

static void u64map_put(u64map *m, uint64_t key, uint32_t val);

static void u64map_grow(u64map *m) {
  u64map old = *m;
  m->cap = old.cap ? old.cap * 2 : 64;
  if (m->bytes) *m->bytes += (m->cap - old.cap) * (sizeof *m->keys + sizeof *m->vals);
  m->keys = xcalloc(m->cap, sizeof *m->keys);
  m->vals = xcalloc(m->cap, sizeof *m->vals);
  m->n = 0;
  for (size_t i = 0; i < old.cap; i++)
    if (old.vals[i]) u64map_put(m, old.keys[i], old.vals[i] - 1);
  free(old.keys);
  free(old.vals);
}

/* Inserts or replaces. */
static void u64map_put(u64map *m, uint64_t key, uint32_t val) {
  if ((m->n + 1) * 4 > m->cap * 3) u64map_grow(m);
  size_t mask = m->cap - 1;
  for (size_t i = hh_mix64(key) & mask;; i = (i + 1) & mask) {
    if (!m->vals[i]) {
      m->keys[i] = key;
      m->vals[i] = val + 1;
      m->n++;
      return;
    }
    if (m->keys[i] == key) {
      m->vals[i] = val + 1;
      return;
    }
  }
}

static void u64map_free(u64map *m) {
  free(m->keys);
  free(m->vals);
  m->keys = NULL;
  m->vals = NULL;
  m->cap = m->n = 0;
}

/* ---- the reader ----------------------------------------------------------- */

/* Where a record decoder stands in one decoded chunk. Deltas restart with
 * each chunk (docs/trace-format.md). */
typedef struct cursor {
  const uint8_t *start, *p, *end;
  uint64_t chunk_offset; /* file offset of the chunk header */
  uint64_t chunk_no;     /* 0-based */
  uint32_t thread;
  bool raw;      /* payload stored raw: decoded byte i is at file offset +24+i */
  uint64_t time; /* ticks */
  bool has_time; /* a CHUNK_TIME was read */
  uint64_t addr;
  uint64_t weight; /* pending SAMPLE_WEIGHT, valid when has_weight */
  bool has_weight;
  /* still compressed (read_chunk with defer_unpack): the merge decompresses
   * it to `unpacked` bytes when its queue reaches it */
  bool packed;
  uint32_t unpacked;
  /* a version-2 event chunk (version >= 2, thread != 0): its streams, once
   * the stream table has been read, and the thread's model */
  bool v2, v2_ready;
  bool v4;           /* of a version-4 trace: its streams and codes (model.h) */
  bool v5;           /* of a version-5 trace */
  bool provisional;  /* a provisional chunk (rows) that counts: its thread's last */
  bool after_alloc;  /* v4: the previous record was an allocation (op stream) */
  bool thread_known; /* a THREAD record has introduced its thread (decode) */
  const uint8_t *s[HH_STREAMS_MAX], *se[HH_STREAMS_MAX];
  struct v2dec *model;
} cursor;

/* What the reader keeps of a thread for its version-2 event chunks
 * (src/trace/model.h): the model's state; the LIFOs of the size classes the
 * thread has freed, found through a small map from class to LIFO (a direct
 * index of 936 bytes once it has freed more than 32 classes); and the
 * last allocations' addresses and size classes (a ring that grows with the
 * thread's allocations up to HH_V2_RING). Nothing is taken before it is
 * used: a thread costs ~150 bytes, ~75-150 more per size class it frees, 10
 * per allocation up to ~640 KiB, 8 per free up to 64 KiB. So the models grow with what the chunks hold
 * (like the analysis's live blocks), never by a fixed amount per chunk or
 * per thread that a file of tiny chunks could multiply. */
typedef struct v2dec {
  uint64_t seq, prev_addr, prev_stack, next_addr; /* as in hh_v2_state */
  uint32_t *cmap; /* open addressing: (class + 1) << 16 | (LIFO index + 1), 0 empty */
  uint32_t cmap_cap;
  /* once the thread has freed more than V2_DIRECT_AFTER classes: LIFO index
   * + 1 by class (HH_V2_CLASSES entries; cmap is then dropped) */
  uint16_t *cdirect;
  uint64_t (*lifos)[HH_V2_LIFO_DEPTH];
  uint16_t *lifo_cls; /* the class of each LIFO */
  uint32_t nlifos, lifos_cap;
  uint64_t *ring_addr;
  uint16_t *ring_cls;
  uint32_t ring_cap; /* a power of two, up to HH_V2_RING */
  /* version 4: the blocks freed so far, and the last ones' addresses (a ring
   * that grows up to HH_V4_FREED_RING, 8 bytes a free, 64 KiB at most) */
  uint64_t nfree;
  uint64_t *fring;
  uint32_t fring_cap;
  /* events already handed out from a provisional chunk of the thread: the
   * next chunk of the thread starts with them again (a file read while it
   * grew) and they are decoded without being handed out twice */
  uint64_t skip;
} v2dec;

struct hh_reader {
  /* source: a FILE or a memory block */
  FILE *fp;
  const uint8_t *mem;
  size_t mem_size;
  uint64_t offset, file_size;

  hh_trace_header hdr;
  /* ticks -> ns as ticks * (ns_int + ns_frac / 2^64): exact to 1 ns, no division */
  uint64_t ns_int, ns_frac;
  bool ns_identity;

  hh_read_status status;
  char msg[320];
  uint64_t status_chunk; /* chunk number the problem is in (reads: r->chunks) */
  bool done;             /* nothing more will be read */
  uint64_t chunks;
  bool seen_end;
  uint64_t end_ticks, end_events;
  uint64_t end_chunk;   /* the chunk END was in */
  uint64_t bytes_total; /* the weights of the events handed out (HH_BYTES_TOTAL_MAX) */
  uint64_t events_read; /* ALLOC, FREE and REALLOC records handed out */

  /* The file mapped (a regular file, as long as it was at open), or the
   * memory block: a chunk that lies in it whole is used where it is, not
   * copied (read_chunk, merge_read); the rest is read through fp. Reading
   * no longer copies each chunk and faults in a buffer for it (report on
   * the churn benchmark: 0.28 -> 0.25 s). A file truncated by someone else
   * while it is read ends the reader with SIGBUS, as it would any program
   * that maps files; the tracer only ever appends. */
  const uint8_t *map;
  size_t map_size;
  void *map_owned;    /* to munmap */
  size_t map_dropped; /* pages before this offset are given back (map_release) */

  /* chunk buffers, reused */
  uint8_t *stored;
  size_t stored_cap;
  uint8_t *decoded;
  size_t decoded_cap;
  ZSTD_DCtx *dctx;
  /* read_chunk leaves a compressed chunk of a program thread compressed (the
   * merge decompresses it when its queue reaches it): set by the merge. */
  bool defer_unpack;

  /* file-order iteration */
  cursor cur;
  bool have_cur;
  uint64_t last_ticks;

  /* stacks: nodes[1..nstacks]; while `dense`, node i has id i and the map is
   * unused; otherwise id_map gives the index. */
  hh_stack_node *stacks;
  size_t nstacks, stacks_cap;
  bool dense;
  u64map id_map;

  hh_trace_module **modules;
  size_t nmodules, modules_cap;
  u64map base_map; /* base -> index of the module most recently loaded there */
  uint32_t epoch;

  hh_trace_thread **all_threads; /* every THREAD record (owned) */
  size_t nall_threads, all_threads_cap;
  const hh_trace_thread **threads; /* the latest per index, first-seen order */
  size_t nthreads, threads_cap;
  u64map thread_map; /* thread index -> position in threads */

  hh_strset markers;     /* interned marker names (and exec'd programs) */
  const char *exec_path; /* the last EXEC record's program, unless END followed */

  char **argv; /* NULL-terminated */
  int argc;
  char *exe;

  struct hh_merge *merge; /* the merge reading this reader, if any */

  v2dec **v2;        /* per thread, in order of first appearance */
  uint64_t v2_bytes; /* what they hold (hh_reader_model_bytes) */
  /* What the other tables hold (stacks, threads, modules, marker names,
   * the maps that find them: hh_reader_table_bytes), and the most that
   * they and the models may hold (hh_reader_set_memory_limit). */
  uint64_t table_bytes, mem_limit;
  size_t nv2, v2_cap;
  u64map v2_map; /* thread index -> position in v2 */
};

static void set_status(hh_reader *r, hh_read_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void set_status(hh_reader *r, hh_read_status st, const char *fmt, ...) {
  if (r->status != HH_READ_OK) return; /* the first problem is the one to tell */
  r->status = st;
  r->status_chunk = r->chunks;
  r->done = true;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(r->msg, sizeof r->msg, fmt, ap);
  va_end(ap);
}

/* Damage in chunk `chunk_no`, which may be found after later chunks were
 * read (the merge decodes event chunks lazily): it replaces a problem found
 * further on in the file, so the status is the one reading in file order
 * gives. */
static void set_problem(hh_reader *r, hh_read_status st, uint64_t chunk_no, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void set_problem(hh_reader *r, hh_read_status st, uint64_t chunk_no, const char *fmt, ...) {
  if (r->status != HH_READ_OK && r->status_chunk <= chunk_no) return;
  r->status = st;
  r->status_chunk = chunk_no;
  r->done = true;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(r->msg, sizeof r->msg, fmt, ap);
  va_end(ap);
}

static size_t src_read(hh_reader *r, void *buf, size_t n) {
  size_t got;
  if (n == 0) return 0;
  if (r->map && r->offset <= r->map_size && n <= r->map_size - r->offset) {
    memcpy(buf, r->map + r->offset, n);
    r->offset += n;
    return n;
  }
  if (r->fp) {
    if (r->map && fseeko(r->fp, (off_t)r->offset, SEEK_SET) != 0) { /* past the mapped part: read on */
      set_status(r, HH_READ_IO_ERROR, "cannot read the trace at byte offset %" PRIu64 ": %s", r->offset,
                 strerror(errno));
      return 0;
    }
    got = fread(buf, 1, n, r->fp);
    if (got < n && ferror(r->fp)) {
      set_status(r, HH_READ_IO_ERROR, "cannot read the trace at byte offset %" PRIu64 ": %s", r->offset + got,
                 strerror(errno));
    }
  } else {
    size_t left = r->mem_size - (size_t)r->offset;
    got = n < left ? n : left;
    memcpy(buf, r->mem + r->offset, got);
  }
  r->offset += got;
  return got;
}

static void clock_init(hh_reader *r);

/* Nothing before file offset `low` will be looked at again: its pages leave
 * the process (they stay in the page cache), so that what the mapping holds
 * stays bounded like the merge's window, not by the size of the trace. In
 * steps of 16 MiB. */
#define MAP_RELEASE_STEP ((size_t)16 << 20)
static void map_release(hh_reader *r, uint64_t low) {
  if (!r->map_owned || low < r->map_dropped + MAP_RELEASE_STEP) return;
  size_t upto = (size_t)(low < r->map_size ? low : r->map_size) & ~(size_t)4095;
  if (upto <= r->map_dropped) return;
  madvise((char *)r->map_owned + r->map_dropped, upto - r->map_dropped, MADV_DONTNEED);
  r->map_dropped = upto;
}

/* The memory limit of the readers opened from now on (reader.h). */
static uint64_t default_mem_limit = UINT64_MAX;

void hh_reader_default_memory_limit(uint64_t bytes) { default_mem_limit = bytes ? bytes : UINT64_MAX; }

uint64_t hh_reader_memory_limit_default(void) { return default_mem_limit; }

void hh_reader_set_memory_limit(hh_reader *r, uint64_t bytes) { r->mem_limit = bytes ? bytes : UINT64_MAX; }

uint64_t hh_reader_memory_limit(const hh_reader *r) { return r->mem_limit; }

uint64_t hh_reader_table_bytes(const hh_reader *r) { return r->table_bytes + r->v2_bytes; }

void hh_reader_stop(hh_reader *r, const char *msg) {
  r->status = HH_READ_LIMIT;
  r->done = true;
  snprintf(r->msg, sizeof r->msg, "%s", msg);
}

/* What malloc adds to each block it gives (glibc: a size word, and blocks
 * in steps of 16 bytes): counted with each string and record the tables
 * keep, so that a trace of many tiny names is counted as what it costs. */
#define BLOCK_OVERHEAD 16u

/* "64 MiB" (a limit for messages; the reader does without base/size.c) */
static void format_bytes(char *buf, size_t size, uint64_t bytes) {
  if (bytes >= (1ull << 30) && bytes % (1ull << 30) == 0)
    snprintf(buf, size, "%" PRIu64 " GiB", bytes >> 30);
  else if (bytes >= (1ull << 30))
    snprintf(buf, size, "%.1f GiB", (double)bytes / (1 << 30));
  else if (bytes >= (1ull << 20) && bytes % (1ull << 20) == 0)
    snprintf(buf, size, "%" PRIu64 " MiB", bytes >> 20);
  else if (bytes >= (1ull << 20))
    snprintf(buf, size, "%.1f MiB", (double)bytes / (1 << 20));
  else
    snprintf(buf, size, "%" PRIu64 " byte%s", bytes, bytes == 1 ? "" : "s"); /* ("more than 1 bytes") */
}

void hh_reader_format_bytes(char *buf, size_t size, uint64_t bytes) { format_bytes(buf, size, bytes); }

static hh_reader *reader_init(hh_reader *r, char *err, size_t err_size, const char *name) {
  r->mem_limit = default_mem_limit;
  r->id_map.bytes = r->base_map.bytes = r->thread_map.bytes = &r->table_bytes;
  uint8_t h[HH_TRACE_HEADER_BYTES];
  size_t got = src_read(r, h, sizeof h);
  const char *why = NULL;
  char buf[128];
  if (r->status == HH_READ_IO_ERROR) {
    why = r->msg;
  } else if (got < 8 || memcmp(h, HH_TRACE_MAGIC, 8) != 0) {
    why = got == 0 ? "empty file, not a heaphook trace" : "not a heaphook trace";
  } else if (got < sizeof h) {
    snprintf(buf, sizeof buf, "truncated header (%zu of %u bytes)", got, HH_TRACE_HEADER_BYTES);
    why = buf;
  } else {
    memcpy(&r->hdr, h, sizeof h); /* little-endian host (x86-64, aarch64) */
    if (r->hdr.version > HH_TRACE_VERSION) {
      snprintf(buf, sizeof buf, "trace format version %" PRIu32 " is newer than this heaphook reads (%u)",
               r->hdr.version, HH_TRACE_VERSION);
      why = buf;
    } else if (r->hdr.version == 0) {
      why = "trace format version 0 is not a released format";
    } else if (r->hdr.reserved != 0 && r->hdr.reserved != hh_header_sum(&r->hdr)) {
      why = "damaged header: its checksum does not match its fields";
    } else if (r->hdr.ticks_per_second == 0) {
      why = "damaged header: the clock has 0 ticks per second";
    }
  }
  if (why) {
    if (err && err_size) snprintf(err, err_size, "%s: %s", name, why);
    hh_reader_close(r);
    return NULL;
  }
  r->dctx = ZSTD_createDCtx();
  if (!r->dctx) {
    if (err && err_size) snprintf(err, err_size, "%s: out of memory", name);
    hh_reader_close(r);
    return NULL;
  }
  r->dense = true;
  clock_init(r);
  return r;
}

hh_reader *hh_reader_open(const char *path, char *err, size_t err_size) {
  FILE *fp = fopen(path, "rbe");
  if (!fp) {
    if (err && err_size) snprintf(err, err_size, "cannot open %s: %s", path, strerror(errno));
    return NULL;
  }
  struct stat st;
  if (fstat(fileno(fp), &st) == 0 && S_ISDIR(st.st_mode)) {
    if (err && err_size) snprintf(err, err_size, "%s: is a directory, not a heaphook trace", path);
    fclose(fp);
    return NULL;
  }
  setvbuf(fp, NULL, _IOFBF, 1 << 20);
  hh_reader *r = xcalloc(1, sizeof *r);
  r->fp = fp;
  if (S_ISREG(st.st_mode)) r->file_size = (uint64_t)st.st_size;
  if (S_ISREG(st.st_mode) && st.st_size > 0 && (uint64_t)st.st_size <= SIZE_MAX) {
    void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fileno(fp), 0);
    if (m != MAP_FAILED) {
      r->map = m;
      r->map_size = (size_t)st.st_size;
      r->map_owned = m;
    }
  }
  return reader_init(r, err, err_size, path);
}

hh_reader *hh_reader_open_mem(const void *data, size_t size, char *err, size_t err_size) {
  hh_reader *r = xcalloc(1, sizeof *r);
  r->mem = data;
  r->mem_size = size;
  r->file_size = size;
  r->map = data;
  r->map_size = size;
  return reader_init(r, err, err_size, "trace");
}

void hh_reader_close(hh_reader *r) {
  if (!r) return;
  if (r->map_owned) munmap(r->map_owned, r->map_size);
  if (r->fp) fclose(r->fp);
  ZSTD_freeDCtx(r->dctx);
  free(r->stored);
  free(r->decoded);
  free(r->stacks);
  u64map_free(&r->id_map);
  for (size_t i = 0; i < r->nmodules; i++) {
    hh_trace_module *m = r->modules[i];
    free((char *)m->path);
    free((char *)m->build_id);
    free((void *)m->segments);
    free(m);
  }
  free(r->modules);
  u64map_free(&r->base_map);
  for (size_t i = 0; i < r->nall_threads; i++) {
    free((char *)r->all_threads[i]->name);
    free(r->all_threads[i]);
  }
  free(r->all_threads);
  free(r->threads);
  u64map_free(&r->thread_map);
  hh_strset_free(&r->markers);
  for (int i = 0; i < r->argc; i++) free(r->argv[i]);
  free(r->argv);
  free(r->exe);
  for (size_t i = 0; i < r->nv2; i++) {
    free(r->v2[i]->ring_addr);
    free(r->v2[i]->ring_cls);
    free(r->v2[i]->fring);
    free(r->v2[i]->cmap);
    free(r->v2[i]->cdirect);
    free(r->v2[i]->lifo_cls);
    free(r->v2[i]->lifos);
    free(r->v2[i]);
  }
  free(r->v2);
  u64map_free(&r->v2_map);
  free(r);
}

const hh_trace_header *hh_reader_header(const hh_reader *r) { return &r->hdr; }

static void clock_init(hh_reader *r) {
  uint64_t tps = r->hdr.ticks_per_second;
  r->ns_identity = tps == 1000000000u;
  r->ns_int = 1000000000u / tps;
  r->ns_frac = (uint64_t)(((unsigned __int128)(1000000000u % tps) << 64) / tps);
}

static inline uint64_t ticks_ns(const hh_reader *r, uint64_t ticks) {
  if (r->ns_identity) return ticks;
  uint64_t whole;
  if (__builtin_mul_overflow(ticks, r->ns_int, &whole)) return UINT64_MAX;
  uint64_t part = (uint64_t)(((unsigned __int128)ticks * r->ns_frac) >> 64);
  return whole + part < whole ? UINT64_MAX : whole + part;
}

uint64_t hh_reader_ticks_to_ns(const hh_reader *r, uint64_t ticks) { return ticks_ns(r, ticks); }

hh_read_status hh_reader_status(const hh_reader *r) { return r->status; }
const char *hh_reader_message(const hh_reader *r) { return r->msg; }
uint64_t hh_reader_chunks(const hh_reader *r) { return r->chunks; }
uint64_t hh_reader_offset(const hh_reader *r) { return r->offset; }
uint64_t hh_reader_file_size(const hh_reader *r) { return r->file_size; }
uint64_t hh_reader_end_events(const hh_reader *r) { return r->end_events; }
const char *hh_reader_exec(const hh_reader *r) { return r->exec_path; }
uint64_t hh_reader_model_bytes(const hh_reader *r) { return r->v2_bytes; }

/* ---- chunks ----------------------------------------------------------------*/

static int ensure_cap(uint8_t **buf, size_t *cap, size_t n) {
  if (n <= *cap && *buf) return 0; /* never NULL, even for empty payloads */
  size_t c = *cap ? *cap : 64 * 1024;
  while (c < n) c *= 2;
  *buf = xrealloc(*buf, c);
  *cap = c;
  return 0;
}

static inline uint32_t le32(const uint8_t *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* 24 bytes of the file at off, wherever the source holds them; false past
 * what can be read now. */
static bool peek_header(hh_reader *r, uint64_t off, uint8_t h[HH_CHUNK_HEADER_BYTES]) {
  if (r->map && off <= r->map_size && HH_CHUNK_HEADER_BYTES <= r->map_size - off) {
    memcpy(h, r->map + off, HH_CHUNK_HEADER_BYTES);
    return true;
  }
  if (r->fp) return pread(fileno(r->fp), h, HH_CHUNK_HEADER_BYTES, (off_t)off) == HH_CHUNK_HEADER_BYTES;
  if (r->mem && off <= r->mem_size && HH_CHUNK_HEADER_BYTES <= r->mem_size - off) {
    memcpy(h, r->mem + off, HH_CHUNK_HEADER_BYTES);
    return true;
  }
  return false;
}

/* At the end, END's count against the events read: fewer means chunks are
 * missing (a trace with a chunk taken out read as whole), more that some
 * are there twice or come from elsewhere (a chunk copied in, two traces
 * joined: read as whole, with their events counted twice, until
 * 2026-11-25). Not an EXEC's count, which may fall short of what the file
 * holds (trace-format.md). */
static void check_end_count(hh_reader *r) {
  if (r->exec_path != NULL || r->events_read == r->end_events) return;
  set_status(
      r, HH_READ_DAMAGED,
      "trace damaged: its end record counts %" PRIu64 " event%s, the file holds %" PRIu64 " (%s)",
      r->end_events, r->end_events == 1 ? "" : "s", r->events_read,
      r->events_read < r->end_events ? "chunks are missing" : "chunks are there twice, or not its own");
}

/* Whether the chunk at off (header h) lies whole in what can be read now,
 * its checksum right. */
static bool chunk_intact(hh_reader *r, uint64_t off, const uint8_t h[HH_CHUNK_HEADER_BYTES]) {
  uint32_t stored = le32(h + 8);
  uint64_t at = off + HH_CHUNK_HEADER_BYTES;
  const uint8_t *bytes = NULL;
  uint8_t *own = NULL;
  if (r->map && at <= r->map_size && stored <= r->map_size - at) {
    bytes = r->map + at;
  } else if (r->mem && at <= r->mem_size && stored <= r->mem_size - at) {
    bytes = r->mem + at;
  } else if (r->fp && stored <= ZSTD_compressBound(HH_CHUNK_MAX_DECODED)) {
    own = xmalloc(stored ? stored : 1);
    if (pread(fileno(r->fp), own, stored, (off_t)at) != (ssize_t)stored) {
      free(own);
      return false;
    }
    bytes = own;
  } else {
    return false;
  }
#ifndef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
  bool ok = hh_chunk_sum(r->hdr.version, bytes, stored) == le32(h + 16);
#else
  bool ok = true;
#endif
  free(own);
  return ok;
}

/* Whether a chunk of thread `thread` follows the one just read (from
 * r->offset on, as far as the file goes now), whole and undamaged: when
 * it is cut short or damaged, the provisional copy of its events is read
 * instead (it was skipped, and a trace cut inside that chunk lost events
 * that one cut just before it kept). *own: whether that chunk is the
 * thread's own, not another provisional copy. */
static bool later_chunk_of(hh_reader *r, uint32_t thread, bool *own) {
  uint8_t h[HH_CHUNK_HEADER_BYTES];
  for (uint64_t off = r->offset; peek_header(r, off, h) && memcmp(h, HH_CHUNK_MAGIC, 4) == 0;
       off += HH_CHUNK_HEADER_BYTES + le32(h + 8)) {
    if (le32(h + 20) == thread) {
      *own = (le32(h + 4) & HH_CHUNK_PROVISIONAL) == 0;
      return chunk_intact(r, off, h);
    }
  }
  return false;
}

/* Whether a chunk header's sizes are possible for its encoding (a known
 * one: RAW or ZSTD): a raw chunk stores what it decodes to, a compressed
 * one no more than zstd's bound for the largest chunk. */
static bool chunk_sizes_ok(uint32_t enc, uint32_t stored, uint32_t decoded) {
  return decoded <= HH_CHUNK_MAX_DECODED &&
         ((enc == HH_CHUNK_RAW && stored == decoded) ||
          (enc == HH_CHUNK_ZSTD && stored <= ZSTD_compressBound(HH_CHUNK_MAX_DECODED)));
}

/* Whether a whole chunk, its checksum right, starts in p[0..n), the bytes
 * after the header of a chunk whose size runs past the end of the file: a
 * chunk is written with one write(2), after the one before it, so a torn
 * chunk is the file's last; one followed by a whole chunk has a damaged
 * size (it read as cut short, the chunks after it dropped unsaid). */
static bool whole_chunk_in(const hh_reader *r, const uint8_t *p, size_t n) {
  /* Only headers that could be a chunk's are summed, and at most ~4 times
   * n bytes in all: a file made of headers that each claim the rest of it
   * took minutes (found by review). */
  uint64_t budget = 4 * (uint64_t)n + (1u << 20);
  for (size_t i = 0; i + HH_CHUNK_HEADER_BYTES <= n; i++) {
    const uint8_t *q = memmem(p + i, n - i, HH_CHUNK_MAGIC, 4);
    if (q == NULL) return false;
    i = (size_t)(q - p);
    if (i + HH_CHUNK_HEADER_BYTES > n) return false;
    uint32_t enc = le32(q + 4) & ~HH_CHUNK_PROVISIONAL, stored = le32(q + 8), decoded = le32(q + 12);
    if (!chunk_sizes_ok(enc, stored, decoded) || stored > n - i - HH_CHUNK_HEADER_BYTES) continue;
    if (stored > budget) return false;
    budget -= stored;
    if (hh_chunk_sum(r->hdr.version, q + HH_CHUNK_HEADER_BYTES, stored) == le32(q + 16)) return true;
  }
  return false;
}

/* Reads the next chunk and points c at its decoded payload (valid until the
 * next call). Returns 1, or 0 at the end or on a problem (status set). A
 * provisional chunk that a later chunk of its thread supersedes is
 * skipped. */
static int read_chunk(hh_reader *r, cursor *c) {
next:
  if (r->done) return 0;
  uint64_t off = r->offset;
  uint8_t h[HH_CHUNK_HEADER_BYTES];
  size_t got = src_read(r, h, sizeof h);
  if (r->status != HH_READ_OK) return 0;
  if (got == 0) {
    if (!r->seen_end)
      set_status(r, HH_READ_NO_END,
                 "trace has no end record after %" PRIu64
                 " chunk%s: the program was killed or is still running; the rest of the run is missing",
                 r->chunks, r->chunks == 1 ? "" : "s");
    r->done = true;
    return 0;
  }
  if (got < sizeof h && memcmp(h, HH_CHUNK_MAGIC, got < 4 ? got : 4) == 0) {
    set_status(r, HH_READ_CUT_SHORT,
               "trace cut short after %" PRIu64 " chunk%s; the rest of the run is missing", r->chunks,
               r->chunks == 1 ? "" : "s");
    return 0;
  }
  if (memcmp(h, HH_CHUNK_MAGIC, 4) != 0) {
    set_status(r, HH_READ_DAMAGED,
               "trace damaged at byte offset %" PRIu64 ": bad chunk magic (chunk %" PRIu64 ")", off,
               r->chunks);
    return 0;
  }
  /* A chunk after an EXEC record: that exec failed, and the program went
   * on; its END is still to come (a program killed after a failed exec
   * read as whole, "exec'd X; the trace ends there"). */
  if (r->seen_end && r->exec_path != NULL) {
    r->seen_end = false;
    r->exec_path = NULL;
  }
  uint32_t enc = le32(h + 4), stored = le32(h + 8), decoded = le32(h + 12), sum = le32(h + 16),
           thread = le32(h + 20);
  bool provisional = (enc & HH_CHUNK_PROVISIONAL) != 0 && r->hdr.version >= 4 && thread != 0;
  if (provisional) enc &= ~HH_CHUNK_PROVISIONAL;
  if (enc != HH_CHUNK_RAW && enc != HH_CHUNK_ZSTD) {
    set_status(r, HH_READ_DAMAGED,
               "trace damaged at byte offset %" PRIu64 ": unknown chunk encoding %" PRIu32, off, enc);
    return 0;
  }
  if (!chunk_sizes_ok(enc, stored, decoded)) {
    set_status(r, HH_READ_DAMAGED,
               "trace damaged at byte offset %" PRIu64 ": impossible chunk sizes (%" PRIu32
               " stored, %" PRIu32 " decoded)",
               off, stored, decoded);
    return 0;
  }
  const uint8_t *bytes; /* the stored payload: in place, or read into r->stored */
  if (r->map && r->offset <= r->map_size && stored <= r->map_size - r->offset) {
    bytes = r->map + r->offset;
    r->offset += stored;
    got = stored;
  } else {
    ensure_cap(&r->stored, &r->stored_cap, stored);
    got = src_read(r, r->stored, stored);
    bytes = r->stored;
  }
  if (r->status != HH_READ_OK) return 0;
  if (got < stored) {
    if (whole_chunk_in(r, bytes, got))
      set_status(r, HH_READ_DAMAGED,
                 "trace damaged at byte offset %" PRIu64 ": chunk %" PRIu64
                 "'s size runs past the end of the file, and whole chunks follow",
                 off, r->chunks);
    else
      set_status(r, HH_READ_CUT_SHORT,
                 "trace cut short after %" PRIu64 " chunk%s; the rest of the run is missing", r->chunks,
                 r->chunks == 1 ? "" : "s");
    return 0;
  }
#ifndef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION /* let the fuzzer reach the records */
  if (hh_chunk_sum(r->hdr.version, bytes, stored) != sum) {
    set_status(r, HH_READ_DAMAGED,
               "trace damaged at byte offset %" PRIu64 ": checksum mismatch in chunk %" PRIu64, off,
               r->chunks);
    return 0;
  }
#else
  (void)sum;
#endif
  /* A later chunk of the thread holds these events again. In file order
   * the copy is skipped. The merge reads the copy superseded by the
   * thread's own chunk, whose first events then are not handed out again
   * (model->skip, as in a file that grew): that chunk may lie far past the
   * merge's window, and its first events came too late (a main thread that
   * allocated, then waited in pthread_join while workers filled 64 MiB). */
  bool own = false;
  if (provisional && later_chunk_of(r, thread, &own) && !(r->merge && own)) {
    r->chunks++;
    goto next; /* (a loop: a file may hold any number of them) */
  }
  const uint8_t *payload = bytes;
  size_t len = decoded;
  bool packed = r->defer_unpack && enc == HH_CHUNK_ZSTD && thread != 0;
  if (packed) { /* left compressed: the cursor covers the stored bytes */
    len = stored;
  } else if (enc == HH_CHUNK_ZSTD) {
    ensure_cap(&r->decoded, &r->decoded_cap, decoded);
    size_t n = ZSTD_decompressDCtx(r->dctx, r->decoded, decoded, bytes, stored);
    if (ZSTD_isError(n) || n != decoded) {
      set_status(r, HH_READ_DAMAGED,
                 "trace damaged at byte offset %" PRIu64 ": chunk %" PRIu64 " does not decompress (%s)", off,
                 r->chunks, ZSTD_isError(n) ? ZSTD_getErrorName(n) : "wrong decoded size");
      return 0;
    }
    payload = r->decoded;
  }
  memset(c, 0, sizeof *c);
  c->start = c->p = payload;
  c->end = payload + len;
  c->chunk_offset = off;
  c->chunk_no = r->chunks;
  c->thread = thread;
  c->raw = enc == HH_CHUNK_RAW;
  c->v2 = r->hdr.version >= 2 && thread != 0 && !provisional;
  c->v4 = r->hdr.version >= 4;
  c->v5 = r->hdr.version >= 5;
  c->provisional = provisional;
  c->packed = packed;
  c->unpacked = packed ? decoded : 0;
  r->chunks++;
  return 1;
}

/* ---- records ---------------------------------------------------------------*/

static bool merge_catch_up(struct hh_merge *m, uint64_t chunk_no);

enum pass {
  PASS_ALL,    /* file order: apply definitions, return every record */
  PASS_DEFS,   /* merge, first look: apply and return definitions, validate the rest */
  PASS_EVENTS, /* merge, second look: return timed events, skip definitions */
  PASS_LAZY,   /* merge, the only look at an event chunk: like PASS_ALL but END is kept for last */
};

static int damaged(hh_reader *r, const cursor *c, const uint8_t *at, const char *what, ...)
    __attribute__((format(printf, 4, 5)));
static int damaged(hh_reader *r, const cursor *c, const uint8_t *at, const char *what, ...) {
  char buf[200];
  va_list ap;
  va_start(ap, what);
  vsnprintf(buf, sizeof buf, what, ap);
  va_end(ap);
  uint64_t pos = (uint64_t)(at - c->start);
  if (c->raw)
    set_problem(r, HH_READ_DAMAGED, c->chunk_no,
                "trace damaged at byte offset %" PRIu64 ": %s (chunk %" PRIu64 ")",
                c->chunk_offset + HH_CHUNK_HEADER_BYTES + pos, buf, c->chunk_no);
  else
    set_problem(r, HH_READ_DAMAGED, c->chunk_no,
                "trace damaged at byte offset %" PRIu64 ": %s (chunk %" PRIu64 ", decoded byte %" PRIu64 ")",
                c->chunk_offset, buf, c->chunk_no, pos);
  return -1;
}

/* A size, a weight or a sum past the bounds of format.h is damage. Before,
 * a crafted trace with sizes near 2^64 was read as whole and wrapped the
 * report's sums; then sample weights near 2^64, or many sizes just under
 * 2^57, still did. */
static int too_large(hh_reader *r, const cursor *c, const uint8_t *at, const hh_event *ev) {
  if (ev->size > HH_SIZE_MAX)
    return damaged(r, c, at, "an allocation of %" PRIu64 " bytes, more than an address space", ev->size);
  return damaged(r, c, at, "a sample weight of %" PRIu64 " bytes, more than a sampling period allows",
                 ev->weight);
}
static inline bool size_ok(const hh_event *ev) {
  return ev->size <= HH_SIZE_MAX && ev->weight <= HH_WEIGHT_MAX;
}

/* Counts an event's bytes into the trace's total as it is handed out. */
static int count_bytes(hh_reader *r, const cursor *c, const uint8_t *at, const hh_event *ev) {
  r->events_read++;
  if (ev->kind == HH_EV_FREE) return 1;
  r->bytes_total += ev->weight; /* each < 2^58: no wrap before the test */
  if (r->bytes_total > HH_BYTES_TOTAL_MAX)
    return damaged(r, c, at, "the allocations add up to more than 2^62 bytes");
  return 1;
}

/* hh_get_varint with the common cases first: one byte, or ten bytes left
 * (no bound check per byte). */
static inline int getv(const uint8_t **pp, const uint8_t *end, uint64_t *out) {
  const uint8_t *p = *pp;
  if (__builtin_expect(p < end && *p < 0x80, 1)) {
    *out = *p;
    *pp = p + 1;
    return 0;
  }
  if (end - p >= HH_VARINT_MAX) {
    uint64_t v = 0;
    for (unsigned i = 0; i < HH_VARINT_MAX; i++) {
      uint64_t b = p[i];
      v |= (b & 0x7f) << (7 * i);
      if (b < 0x80) {
        *out = v;
        *pp = p + i + 1;
        return 0;
      }
    }
    return -1;
  }
  return hh_get_varint(pp, end, out);
}

static int bad_varint(hh_reader *r, const cursor *c, const uint8_t *rec, unsigned type) {
  if (c->end - c->p >= HH_VARINT_MAX)
    return damaged(r, c, rec, "varint longer than 10 bytes in record 0x%02x", type);
  return damaged(r, c, rec, "record 0x%02x runs past the end of its chunk", type);
}

#define GETV(var)                                                             \
  do {                                                                        \
    if (getv(&c->p, c->end, &(var)) != 0) return bad_varint(r, c, rec, type); \
  } while (0)

/* A string at c->p: sets *s and *n (not NUL-terminated). */
#define GETS(s, n)                                                                               \
  do {                                                                                           \
    uint64_t len_;                                                                               \
    GETV(len_);                                                                                  \
    if (len_ > (uint64_t)(c->end - c->p))                                                        \
      return damaged(r, c, rec, "string in record 0x%02x runs past the end of its chunk", type); \
    (s) = (const char *)c->p;                                                                    \
    (n) = (size_t)len_;                                                                          \
    c->p += len_;                                                                                \
  } while (0)

/* A marker's or an exec'd program's name, interned (counted once). */
static const char *intern(hh_reader *r, const char *s, size_t n) {
  size_t had = r->markers.n, cap = r->markers.cap;
  const char *name = hh_strset_intern(&r->markers, s, n);
  if (r->markers.n != had) r->table_bytes += n + 1 + BLOCK_OVERHEAD;
  r->table_bytes += (r->markers.cap - cap) * sizeof *r->markers.items;
  return name;
}

static size_t stack_lookup(const hh_reader *r, uint64_t id) {
  if (id == 0) return 0;
  if (r->dense) return id <= r->nstacks ? (size_t)id : 0;
  uint32_t v;
  return u64map_get(&r->id_map, id, &v) ? v : 0;
}

static int define_stack(hh_reader *r, const cursor *c, const uint8_t *rec, uint64_t id, uint64_t parent,
                        uint64_t ip, hh_event *ev) {
  unsigned type = HH_REC_STACK;
  if (id == 0) return damaged(r, c, rec, "stack id 0 defined");
  if (stack_lookup(r, id)) return damaged(r, c, rec, "stack id %" PRIu64 " defined twice", id);
  size_t pidx = stack_lookup(r, parent);
  if (parent && !pidx)
    return damaged(r, c, rec, "stack %" PRIu64 " has an undefined parent %" PRIu64, id, parent);
  if (r->nstacks >= UINT32_MAX - 1) return damaged(r, c, rec, "too many stacks (record 0x%02x)", type);
  if (r->nstacks + 2 > r->stacks_cap) {
    size_t old = r->stacks_cap;
    r->stacks_cap = r->stacks_cap ? r->stacks_cap * 2 : 1024;
    r->stacks = xrealloc(r->stacks, r->stacks_cap * sizeof *r->stacks);
    r->table_bytes += (r->stacks_cap - old) * sizeof *r->stacks;
  }
  size_t idx = ++r->nstacks;
  if (r->dense && id != idx) {
    r->dense = false;
    for (size_t i = 1; i < idx; i++) u64map_put(&r->id_map, i, (uint32_t)i); /* (dense: id i) */
  }
  if (!r->dense) u64map_put(&r->id_map, id, (uint32_t)idx);
  hh_stack_node *n = &r->stacks[idx];
  n->parent = parent;
  n->ip = ip;
  n->depth = pidx ? r->stacks[pidx].depth + 1 : 1;
  n->epoch = r->epoch;
  ev->u.stack.id = id;
  ev->u.stack.parent = parent;
  ev->u.stack.ip = ip;
  return 1;
}

static const hh_trace_thread *define_thread(hh_reader *r, uint32_t index, uint64_t tid, const char *name,
                                            size_t n) {
  hh_trace_thread *t = xcalloc(1, sizeof *t);
  t->index = index;
  t->tid = tid;
  t->name = xstrndup(name, n);
  r->table_bytes += sizeof *t + n + 1 + 2 * BLOCK_OVERHEAD;
  if (r->nall_threads == r->all_threads_cap) {
    r->table_bytes += (r->all_threads_cap ? r->all_threads_cap : 16) * sizeof *r->all_threads;
    r->all_threads_cap = r->all_threads_cap ? r->all_threads_cap * 2 : 16;
    r->all_threads = xrealloc(r->all_threads, r->all_threads_cap * sizeof *r->all_threads);
  }
  r->all_threads[r->nall_threads++] = t;
  uint32_t pos;
  if (u64map_get(&r->thread_map, index, &pos)) {
    r->threads[pos] = t; /* renamed: the latest name wins; the old one stays valid */
  } else {
    if (r->nthreads == r->threads_cap) {
      r->table_bytes += (r->threads_cap ? r->threads_cap : 16) * sizeof *r->threads;
      r->threads_cap = r->threads_cap ? r->threads_cap * 2 : 16;
      r->threads = xrealloc(r->threads, r->threads_cap * sizeof *r->threads);
    }
    u64map_put(&r->thread_map, index, (uint32_t)r->nthreads);
    r->threads[r->nthreads++] = t;
  }
  return t;
}

/* Decodes one record at c->p. Returns 1 with *ev filled, 0 when the record
 * gives nothing to hand out in this pass, 2 at the end of the chunk, -1 on
 * damage (status set). */
static int decode_v2(hh_reader *r, cursor *c, hh_event *ev, enum pass pass);

static int decode_record(hh_reader *r, cursor *c, hh_event *ev, enum pass pass);
static v2dec *v2_model(hh_reader *r, uint32_t thread);

static inline bool is_event(hh_ev_kind k) {
  return k == HH_EV_ALLOC || k == HH_EV_FREE || k == HH_EV_REALLOC;
}

/* A program thread's events come after its THREAD record, which the tracer
 * puts in the thread's first chunk (a rule of version 4's, which its
 * tracer has always kept; test builders of older versions did not): events
 * of a thread never introduced
 * mean the chunk header's thread index (which the payload's checksum does
 * not cover) is damaged. Before, a flipped bit there made a thread
 * 4294967295 with no name, silently. */
static int check_thread(hh_reader *r, cursor *c, const hh_event *ev) {
  uint32_t pos;
  if (c->thread == 0 || !c->v4 || !is_event(ev->kind)) return 0;
  if (!u64map_get(&r->thread_map, c->thread, &pos))
    return damaged(r, c, c->start, "events of thread %" PRIu32 ", which no THREAD record introduced",
                   c->thread);
  c->thread_known = true;
  return 0;
}

/* Whether the tables are past the memory limit for a record of c in this
 * pass. Every pass that may grow them looks (not the merge's second look
 * at a chunk, which only hands out its events). The merge decodes a
 * program thread's chunk when its queue reaches it, after the chunks it
 * read ahead: a chunk before the one that reached the limit holds events
 * that come before that point, as in file order, and is still decoded, up
 * to half the limit more (its models may grow; the window holds up to
 * 64 MiB of chunks). */
static bool over(const hh_reader *r, const cursor *c, enum pass pass) {
  uint64_t held = r->table_bytes + r->v2_bytes;
  if (__builtin_expect(held <= r->mem_limit, 1) || pass == PASS_EVENTS) return false;
  if (pass == PASS_LAZY && r->status == HH_READ_LIMIT && c->chunk_no < r->status_chunk)
    return held - r->mem_limit > r->mem_limit / 2;
  return true;
}

/* The tables have grown past the memory limit: reading stops before the
 * record at c->p, as at damage there (the events before it still count),
 * with a status of its own. */
static int over_limit(hh_reader *r, const cursor *c) {
  char lim[32];
  format_bytes(lim, sizeof lim, r->mem_limit);
  set_problem(r, HH_READ_LIMIT, c->chunk_no,
              "trace read up to byte offset %" PRIu64 " (chunk %" PRIu64
              "): its stacks, threads, modules, names and thread models take more than %s, the memory "
              "limit (HEAPHOOK_MEMORY_LIMIT raises it)",
              c->chunk_offset + (c->raw ? HH_CHUNK_HEADER_BYTES + (uint64_t)(c->p - c->start) : 0),
              c->chunk_no, lim);
  return -1;
}

static int decode(hh_reader *r, cursor *c, hh_event *ev, enum pass pass) {
  if (over(r, c, pass)) return over_limit(r, c);
  int rc = c->v2 ? decode_v2(r, c, ev, pass) : decode_record(r, c, ev, pass);
  if (rc == 1 && !c->thread_known && check_thread(r, c, ev) != 0) return -1;
  if (c->v2) return rc;
  /* A provisional chunk's events handed out: if the file grows by the
   * thread's own chunk, its first events are these again. */
  if (rc == 1 && c->provisional && pass != PASS_DEFS && is_event(ev->kind)) v2_model(r, c->thread)->skip++;
  return rc;
}

/* Decodes one record of a chunk of rows (version 1's records). */
static int decode_record(hh_reader *r, cursor *c, hh_event *ev, enum pass pass) {
  if (c->p >= c->end) {
    if (c->has_weight && pass != PASS_EVENTS)
      return damaged(r, c, c->p, "sample weight not followed by an allocation");
    return 2;
  }
  const uint8_t *rec = c->p;
  unsigned type = *c->p++;
  bool apply = pass != PASS_EVENTS;
  uint64_t a, b, d, e;
  /* Events set every field they have; other records start from zero. */
  if (type < HH_REC_ALLOC || type >= HH_REC_STACK) memset(ev, 0, sizeof *ev);
  ev->thread = c->thread;
  /* Untimed records carry the chunk's time, or the last time seen. */
  uint64_t untimed = c->has_time ? c->time : r->last_ticks;
  switch (type) {
    case HH_REC_CHUNK_TIME:
      GETV(c->time);
      c->has_time = true;
      return 0;
    case HH_REC_SAMPLE_WEIGHT:
      if (c->has_weight) return damaged(r, c, rec, "two sample weights in a row");
      GETV(c->weight);
      c->has_weight = true;
      return 0;
    case HH_REC_STACK:
      GETV(a);
      GETV(b);
      GETV(d);
      if (!apply) return 0;
      ev->kind = HH_EV_STACK;
      ev->time = ticks_ns(r, untimed);
      return define_stack(r, c, rec, a, b, d, ev);
    case HH_REC_THREAD: {
      const char *s;
      size_t n;
      GETV(a);
      GETV(b);
      GETS(s, n);
      if (a > UINT32_MAX) return damaged(r, c, rec, "thread index %" PRIu64 " out of range", a);
      if (!apply) return 0;
      ev->kind = HH_EV_THREAD;
      ev->time = ticks_ns(r, untimed);
      ev->u.thread = define_thread(r, (uint32_t)a, b, s, n);
      return 1;
    }
    case HH_REC_MODULE_LOAD: {
      const char *path, *bid;
      size_t npath, nbid;
      GETV(a);
      GETS(path, npath);
      GETS(bid, nbid);
      GETV(b);
      if (b > (uint64_t)(c->end - c->p) / 3)
        return damaged(r, c, rec, "module with %" PRIu64 " segment%s runs past the end of its chunk", b,
                       b == 1 ? "" : "s");
      hh_trace_segment *segs = apply ? xcalloc(b, sizeof *segs) : NULL;
      for (uint64_t i = 0; i < b; i++) {
        uint64_t s0, s1, s2;
        if (hh_get_varint(&c->p, c->end, &s0) || hh_get_varint(&c->p, c->end, &s1) ||
            hh_get_varint(&c->p, c->end, &s2)) {
          free(segs);
          return damaged(r, c, rec, "record 0x%02x runs past the end of its chunk", type);
        }
        if (segs) segs[i] = (hh_trace_segment){s0, s1, s2};
      }
      if (!apply) return 0;
      hh_trace_module *m = xcalloc(1, sizeof *m);
      m->index = (uint32_t)r->nmodules;
      m->base = a;
      m->path = xstrndup(path, npath);
      m->build_id = xstrndup(bid, nbid);
      m->nsegments = (uint32_t)b;
      m->segments = segs;
      m->load_epoch = ++r->epoch;
      m->unload_epoch = UINT32_MAX;
      /* twice: each command that symbolizes keeps a copy (src/symbolize/) */
      r->table_bytes += 2 * (sizeof *m + npath + 1 + nbid + 1 + b * sizeof *segs + 4 * BLOCK_OVERHEAD);
      if (r->nmodules == r->modules_cap) {
        r->table_bytes += (r->modules_cap ? r->modules_cap : 64) * sizeof *r->modules;
        r->modules_cap = r->modules_cap ? r->modules_cap * 2 : 64;
        r->modules = xrealloc(r->modules, r->modules_cap * sizeof *r->modules);
      }
      r->modules[r->nmodules++] = m;
      u64map_put(&r->base_map, a, m->index);
      ev->kind = HH_EV_MODULE_LOAD;
      ev->time = ticks_ns(r, untimed);
      ev->u.module = m;
      return 1;
    }
    case HH_REC_MODULE_UNLOAD: {
      GETV(a);
      if (!apply) return 0;
      uint32_t idx;
      ev->kind = HH_EV_MODULE_UNLOAD;
      ev->time = ticks_ns(r, untimed);
      ev->u.module = NULL;
      if (u64map_get(&r->base_map, a, &idx) && r->modules[idx]->unload_epoch == UINT32_MAX) {
        r->modules[idx]->unload_epoch = ++r->epoch;
        ev->u.module = r->modules[idx];
      }
      return 1;
    }
    case HH_REC_COMMAND: {
      GETV(a);
      if (a > (uint64_t)(c->end - c->p))
        return damaged(r, c, rec, "command with %" PRIu64 " argument%s runs past the end of its chunk", a,
                       a == 1 ? "" : "s");
      char **argv = apply ? xcalloc(a + 1, sizeof *argv) : NULL;
      const char *s;
      size_t n;
      for (uint64_t i = 0; i < a; i++) {
        uint64_t len;
        if (hh_get_varint(&c->p, c->end, &len) || len > (uint64_t)(c->end - c->p)) {
          for (uint64_t j = 0; j < i && argv; j++) free(argv[j]);
          free(argv);
          return damaged(r, c, rec, "record 0x%02x runs past the end of its chunk", type);
        }
        if (argv) argv[i] = xstrndup((const char *)c->p, (size_t)len);
        c->p += len;
      }
      uint64_t len;
      if (hh_get_varint(&c->p, c->end, &len) || len > (uint64_t)(c->end - c->p)) {
        for (uint64_t j = 0; j < a && argv; j++) free(argv[j]);
        free(argv);
        return damaged(r, c, rec, "record 0x%02x runs past the end of its chunk", type);
      }
      s = (const char *)c->p;
      n = (size_t)len;
      c->p += len;
      if (!apply) return 0;
      for (int i = 0; i < r->argc; i++) free(r->argv[i]);
      free(r->argv);
      free(r->exe);
      r->argv = argv;
      r->argc = (int)a;
      r->exe = xstrndup(s, n);
      ev->kind = HH_EV_COMMAND;
      ev->time = ticks_ns(r, untimed);
      return 1;
    }
    case HH_REC_RSS:
      GETV(a);
      GETV(b);
      if (pass == PASS_DEFS) return 0;
      ev->kind = HH_EV_RSS;
      ev->time = ticks_ns(r, a);
      ev->u.rss = b;
      return 1;
    case HH_REC_MARKER: {
      const char *s;
      size_t n;
      GETV(a);
      GETS(s, n);
      if (pass == PASS_DEFS) return 0;
      ev->kind = HH_EV_MARKER;
      ev->time = ticks_ns(r, a);
      ev->u.marker = intern(r, s, n);
      return 1;
    }
    case HH_REC_END:
      GETV(a);
      GETV(b);
      if (pass == PASS_EVENTS) return 0;
      r->seen_end = true;
      r->end_chunk = c->chunk_no;
      if (r->status == HH_READ_NO_END) { /* the merge reached the end of the file before decoding this */
        r->status = HH_READ_OK;
        r->msg[0] = 0;
      }
      r->end_ticks = a;
      r->end_events = b;
      r->exec_path = NULL;
      if (pass == PASS_DEFS || pass == PASS_LAZY) return 0;
      if (pass == PASS_ALL) check_end_count(r); /* (in file order every event came before) */
      ev->kind = HH_EV_END;
      ev->time = ticks_ns(r, a);
      ev->u.end_events = b;
      return 1;
    case HH_REC_EXEC: {
      /* The program became another: its trace ends here, as with END,
       * unless the exec failed (more records and END follow). */
      const char *s;
      size_t n;
      GETV(a);
      GETV(b);
      GETS(s, n);
      if (pass == PASS_EVENTS) return 0;
      r->seen_end = true;
      r->end_chunk = c->chunk_no;
      if (r->status == HH_READ_NO_END) {
        r->status = HH_READ_OK;
        r->msg[0] = 0;
      }
      r->end_ticks = a;
      r->end_events = b;
      r->exec_path = intern(r, s, n);
      if (pass == PASS_DEFS || pass == PASS_LAZY) return 0;
      ev->kind = HH_EV_EXEC;
      ev->time = ticks_ns(r, a);
      ev->u.exec.path = r->exec_path;
      ev->u.exec.events = b;
      return 1;
    }
    default:
      break;
  }

  unsigned fn = type & 0x0f;
  switch (type & 0xf0) {
    case HH_REC_ALLOC:
      if (fn > 8) break;
      GETV(a);
      GETV(b);
      GETV(d);
      GETV(e);
      ev->kind = HH_EV_ALLOC;
      ev->align = 0;
      if (hh_trace_fn_has_align(fn)) GETV(ev->align);
      c->time += a;
      c->addr += (uint64_t)hh_unzigzag(b);
      ev->addr = c->addr;
      ev->old_addr = 0;
      ev->size = d;
      ev->stack = e;
      goto event;
    case HH_REC_FREE:
      if (fn != 2 && fn != 3 && fn != 9 && fn != 10 && fn != 11) break;
      if (c->has_weight) return damaged(r, c, rec, "sample weight not followed by an allocation");
      GETV(a);
      GETV(b);
      c->time += a;
      c->addr += (uint64_t)hh_unzigzag(b);
      ev->kind = HH_EV_FREE;
      ev->addr = c->addr;
      ev->old_addr = 0;
      ev->size = ev->align = ev->stack = ev->weight = 0;
      goto event_noweight;
    case HH_REC_REALLOC:
      if (fn != 2 && fn != 3) break;
      GETV(a);
      GETV(b);
      GETV(d);
      GETV(e);
      {
        uint64_t st;
        GETV(st);
        ev->stack = st;
      }
      c->time += a;
      ev->old_addr = c->addr + (uint64_t)hh_unzigzag(b);
      c->addr = ev->old_addr + (uint64_t)hh_unzigzag(d);
      ev->kind = HH_EV_REALLOC;
      ev->addr = c->addr;
      ev->size = e;
      ev->align = 0;
      goto event;
    default:
      break;
  }
  return damaged(r, c, rec, "unknown record type 0x%02x", type);

event:
  ev->weight = c->has_weight ? c->weight : ev->size;
  c->has_weight = false;
  if (!size_ok(ev)) return too_large(r, c, rec, ev);
event_noweight:
  ev->fn = (uint8_t)fn;
  if (pass != PASS_EVENTS && ev->stack && !stack_lookup(r, ev->stack) &&
      !(pass == PASS_LAZY && r->merge && merge_catch_up(r->merge, c->chunk_no) && stack_lookup(r, ev->stack)))
    return damaged(r, c, rec, "stack id %" PRIu64 " used before it was defined", ev->stack);
  if (pass == PASS_DEFS) return 0;
  ev->time = ticks_ns(r, c->time);
  return count_bytes(r, c, rec, ev);
}

/* ---- version-2 event chunks ------------------------------------------------
 * A thread's chunk of a version-2 trace: a table of stream lengths, then the
 * streams (src/trace/model.h, docs/trace-format.md). Records are told
 * against the thread's model, which carries over from the thread's previous
 * chunk: they must be decoded once, in file order (the merge does). */

static v2dec *v2_model(hh_reader *r, uint32_t thread) {
  uint32_t pos;
  if (u64map_get(&r->v2_map, thread, &pos)) return r->v2[pos];
  if (r->nv2 == r->v2_cap) {
    r->v2_cap = r->v2_cap ? r->v2_cap * 2 : 16;
    r->v2 = xrealloc(r->v2, r->v2_cap * sizeof *r->v2);
  }
  v2dec *m = xcalloc(1, sizeof *m);
  r->v2_bytes += sizeof *m + sizeof *r->v2 + sizeof(uint64_t) + sizeof(uint32_t); /* + its map entry */
  u64map_put(&r->v2_map, thread, (uint32_t)r->nv2);
  r->v2[r->nv2++] = m;
  return m;
}

static inline uint32_t cmap_home(unsigned cls, uint32_t mask) { return (cls * 2654435761u >> 16) & mask; }

static void cmap_put(v2dec *m, unsigned cls, uint32_t index) {
  uint32_t mask = m->cmap_cap - 1, i = cmap_home(cls, mask);
  while (m->cmap[i] != 0) i = (i + 1) & mask;
  m->cmap[i] = (uint32_t)(cls + 1) << 16 | (index + 1);
}

/* A thread that frees blocks of many classes gets a direct index instead
 * of the class map: a few hundred bytes more, and no probe per event. */
#define V2_DIRECT_AFTER 32u

static uint64_t *v2_lifo_new(hh_reader *r, v2dec *m, unsigned cls);

/* The LIFO of size class cls; made (empty) when make is set, else NULL
 * when the thread has freed nothing of that class. */
static uint64_t *v2_lifo_mapped(hh_reader *r, v2dec *m, unsigned cls, bool make);
static inline __attribute__((always_inline)) uint64_t *v2_lifo(hh_reader *r, v2dec *m, unsigned cls,
                                                               bool make) {
  if (m->cdirect) {
    uint16_t e = m->cdirect[cls];
    if (e) return m->lifos[e - 1];
  }
  return v2_lifo_mapped(r, m, cls, make);
}

/* (a thread with few classes, or a class not seen yet) */
static uint64_t *v2_lifo_mapped(hh_reader *r, v2dec *m, unsigned cls, bool make) {
  if (m->cdirect) return make ? v2_lifo_new(r, m, cls) : NULL;
  uint32_t want = (uint32_t)(cls + 1) << 16;
  if (m->cmap_cap) {
    uint32_t mask = m->cmap_cap - 1;
    for (uint32_t i = cmap_home(cls, mask);; i = (i + 1) & mask) {
      uint32_t e = m->cmap[i];
      if ((e & 0xffff0000u) == want) return m->lifos[(e & 0xffff) - 1];
      if (e == 0) break;
    }
  }
  if (!make) return NULL;
  return v2_lifo_new(r, m, cls);
}

static uint64_t *v2_lifo_new(hh_reader *r, v2dec *m, unsigned cls) {
  if (!m->cdirect && m->nlifos >= V2_DIRECT_AFTER) {
    m->cdirect = xcalloc(HH_V2_CLASSES, sizeof *m->cdirect);
    r->v2_bytes += HH_V2_CLASSES * sizeof *m->cdirect;
    for (uint32_t j = 0; j < m->nlifos; j++) m->cdirect[m->lifo_cls[j]] = (uint16_t)(j + 1);
    r->v2_bytes -= (uint64_t)m->cmap_cap * sizeof *m->cmap;
    free(m->cmap);
    m->cmap = NULL;
    m->cmap_cap = 0;
  }
  if (!m->cdirect && (m->nlifos + 1) * 2 > m->cmap_cap) { /* at most half full */
    uint32_t ncap = m->cmap_cap ? m->cmap_cap * 2 : 4;
    free(m->cmap);
    m->cmap = xcalloc(ncap, sizeof *m->cmap);
    r->v2_bytes += (uint64_t)(ncap - m->cmap_cap) * sizeof *m->cmap;
    m->cmap_cap = ncap;
    for (uint32_t j = 0; j < m->nlifos; j++) cmap_put(m, m->lifo_cls[j], j);
  }
  if (m->nlifos == m->lifos_cap) {
    uint32_t ncap = m->lifos_cap ? m->lifos_cap * 2 : 1;
    m->lifos = xrealloc(m->lifos, ncap * sizeof *m->lifos);
    m->lifo_cls = xrealloc(m->lifo_cls, ncap * sizeof *m->lifo_cls);
    r->v2_bytes += (uint64_t)(ncap - m->lifos_cap) * (sizeof *m->lifos + sizeof *m->lifo_cls);
    m->lifos_cap = ncap;
  }
  uint32_t j = m->nlifos++;
  memset(m->lifos[j], 0, sizeof *m->lifos);
  m->lifo_cls[j] = (uint16_t)cls;
  if (m->cdirect)
    m->cdirect[cls] = (uint16_t)(j + 1);
  else
    cmap_put(m, cls, j);
  return m->lifos[j];
}

#define V2_EXHAUSTED(st) \
  damaged(r, c, c->s[HH_V2_OPS], "record runs past the end of its stream %d", (int)(st))
#define V2_BYTE(st, var)                                \
  do {                                                  \
    if (c->s[st] >= c->se[st]) return V2_EXHAUSTED(st); \
    (var) = *c->s[st]++;                                \
  } while (0)
#define V2_VAR(st, var)                                                       \
  do {                                                                        \
    if (hh_get_varint(&c->s[st], c->se[st], &(var))) return V2_EXHAUSTED(st); \
  } while (0)
#define V2_16(lo, var)                                  \
  do {                                                  \
    uint64_t lo_, hi_;                                  \
    V2_BYTE(lo, lo_);                                   \
    V2_BYTE((lo) + 1, hi_);                             \
    (var) = lo_ | hi_ << 8;                             \
    if ((var) == HH_V2_WIDE16) V2_VAR(HH_V2_WIDE, var); \
  } while (0)

static int v2_table(hh_reader *r, cursor *c) {
  const uint8_t *p = c->p;
  const int n = hh_event_streams(r->hdr.version);
  uint64_t len[HH_STREAMS_MAX], total = 0;
  for (int i = 0; i < n; i++) {
    if (hh_get_varint(&p, c->end, &len[i]) || len[i] > (uint64_t)(c->end - c->start))
      return damaged(r, c, c->p, "bad stream table in an event chunk");
    total += len[i];
  }
  if (total != (uint64_t)(c->end - p))
    return damaged(r, c, c->p, "event chunk streams of %" PRIu64 " bytes in a payload of %" PRIu64, total,
                   (uint64_t)(c->end - p));
  for (int i = 0; i < HH_STREAMS_MAX; i++) {
    c->s[i] = p;
    p += i < n ? len[i] : 0;
    c->se[i] = p;
  }
  c->v2_ready = true;
  c->after_alloc = false;
  c->model = v2_model(r, c->thread);
  return 0;
}

/* The fields of an address code: an address delta (code DELTA) or a
 * distance among the freed blocks (FREED, version 4). */
#define HOT static inline __attribute__((always_inline))
HOT int v2_address_fields(hh_reader *r, cursor *c, bool v4, uint64_t code, uint64_t *field) {
  *field = 0;
  if (code == HH_V2_ADDR_DELTA && v4) {
    uint64_t b0, b1, b2;
    V2_BYTE(HH_V4_ADDR0, b0);
    V2_BYTE(HH_V4_ADDR1, b1);
    V2_BYTE(HH_V4_ADDR2, b2);
    uint64_t z = b0 | b1 << 8 | b2 << 16;
    if (z == HH_V4_ADDR_ESCAPE) {
      V2_VAR(HH_V2_WIDE, z);
      *field = (uint64_t)hh_unzigzag(z);
    } else {
      *field = (uint64_t)(hh_unzigzag(z) * 16);
    }
  } else if (code == HH_V2_ADDR_DELTA) {
    uint64_t z;
    V2_VAR(HH_V2_WIDE, z);
    *field = (uint64_t)hh_unzigzag(z);
  } else if (code == HH_V4_ADDR_FREED && v4) {
    uint64_t lo, hi;
    V2_BYTE(HH_V4_FREED_LO, lo);
    V2_BYTE(HH_V4_FREED_HI, hi);
    *field = lo | hi << 8;
  }
  return 0;
}

/* The address of an allocation with address code `code` (its field read
 * by v2_address_fields: the delta, or the distance among freed blocks). */
HOT int v2_address(hh_reader *r, cursor *c, bool v4, uint64_t code, uint64_t size, uint64_t field,
                   uint64_t old, uint64_t *out) {
  v2dec *m = c->model;
  if (code < HH_V2_LIFO_DEPTH) {
    uint64_t *l = v2_lifo(r, m, hh_v2_class(size), false);
    if (l == NULL || l[code] == 0)
      return damaged(r, c, c->s[HH_V2_OPS], "allocation names an empty slot of its size class");
    *out = hh_v2_lifo_take(l, (unsigned)code);
  } else if (code == HH_V2_ADDR_NEXT) {
    *out = m->next_addr;
  } else if (code == HH_V2_ADDR_DELTA) {
    *out = m->prev_addr + field;
  } else if (code == HH_V2_ADDR_SAME_OLD && old != 0) {
    *out = old;
  } else if (code == HH_V4_ADDR_FREED && v4) {
    if (field >= m->nfree || field >= HH_V4_FREED_RING)
      return damaged(r, c, c->s[HH_V2_OPS],
                     "allocation at the block freed %" PRIu64 " frees back, of %" PRIu64 " known", field + 1,
                     m->nfree < HH_V4_FREED_RING ? m->nfree : (uint64_t)HH_V4_FREED_RING);
    *out = m->fring[(m->nfree - field) & (m->fring_cap - 1)];
  } else {
    return damaged(r, c, c->s[HH_V2_OPS], "unknown address code %" PRIu64, code);
  }
  return 0;
}

/* The ring of allocations, grown before it wraps: allocation n stays at
 * n & (cap - 1). */
static __attribute__((noinline)) void v2_ring_grow(hh_reader *r, v2dec *m) {
  uint32_t ncap = m->ring_cap ? m->ring_cap * 2 : 4;
  r->v2_bytes += (uint64_t)(ncap - m->ring_cap) * (sizeof *m->ring_addr + sizeof *m->ring_cls);
  m->ring_addr = xrealloc(m->ring_addr, ncap * sizeof *m->ring_addr);
  m->ring_cls = xrealloc(m->ring_cls, ncap * sizeof *m->ring_cls);
  m->ring_cap = ncap;
}

HOT int v2_allocated(hh_reader *r, cursor *c, uint64_t addr, uint64_t size, hh_event *ev) {
  v2dec *m = c->model;
  uint64_t d;
  V2_VAR(HH_V2_STACK, d);
  m->prev_stack += (uint64_t)hh_unzigzag(d);
  ev->stack = m->prev_stack;
  m->seq++;
  if (m->seq >= m->ring_cap && m->ring_cap < HH_V2_RING) v2_ring_grow(r, m);
  m->ring_addr[m->seq & (m->ring_cap - 1)] = addr;
  m->ring_cls[m->seq & (m->ring_cap - 1)] = (uint16_t)hh_v2_class(size);
  m->prev_addr = addr;
  m->next_addr = hh_v2_next(addr, size);
  return 0;
}

/* A freed block: by distance in the allocation history, or by address. */
HOT int v2_freed(hh_reader *r, cursor *c, bool v4, bool push, uint64_t *out) {
  v2dec *m = c->model;
  uint64_t k, d;
  V2_16(HH_V2_REF_LO, k);
  if (k == 0) {
    V2_VAR(HH_V2_WIDE, d);
    *out = m->prev_addr + (uint64_t)hh_unzigzag(d);
  } else {
    if (k > m->seq || k > HH_V2_RING)
      return damaged(r, c, c->s[HH_V2_OPS], "free of allocation %" PRIu64 " back, of %" PRIu64 " known", k,
                     m->seq < HH_V2_RING ? m->seq : (uint64_t)HH_V2_RING);
    uint64_t at = (m->seq - k + 1) & (m->ring_cap - 1);
    *out = m->ring_addr[at];
    if (push) hh_v2_lifo_push(v2_lifo(r, m, m->ring_cls[at], true), *out);
  }
  m->prev_addr = *out;
  if (push && v4) {
    m->nfree++;
    if (m->nfree >= m->fring_cap && m->fring_cap < HH_V4_FREED_RING) {
      /* Grown before it wraps: free n stays at n & (cap - 1). */
      uint32_t ncap = m->fring_cap ? m->fring_cap * 2 : 4;
      r->v2_bytes += (uint64_t)(ncap - m->fring_cap) * sizeof *m->fring;
      m->fring = xrealloc(m->fring, ncap * sizeof *m->fring);
      m->fring_cap = ncap;
    }
    m->fring[m->nfree & (m->fring_cap - 1)] = *out;
  }
  return 0;
}

/* (one copy each for versions 5, 4 and 2-3) */
HOT int decode_events(hh_reader *r, cursor *c, hh_event *ev, enum pass pass, const int ver) {
  const bool v4 = ver >= 4, v5 = ver >= 5;
  if (!c->v2_ready && v2_table(r, c) < 0) return -1;
  /* v4: a record after an allocation has its op byte in a stream of its own */
  const int ops = v4 && c->after_alloc ? HH_V4_OPS_ALLOC : HH_V2_OPS;
  if (c->s[ops] >= c->se[ops]) {
    if (c->has_weight) return damaged(r, c, c->s[HH_V2_OPS], "sample weight not followed by an allocation");
    for (int i = 0; i < HH_STREAMS_MAX; i++)
      if (c->s[i] != c->se[i])
        return damaged(r, c, c->s[HH_V2_OPS], "stream %d has %zu byte%s left after the last record", i,
                       (size_t)(c->se[i] - c->s[i]), c->se[i] - c->s[i] == 1 ? "" : "s");
    return 2;
  }
  if (pass == PASS_DEFS || pass == PASS_EVENTS)
    return damaged(r, c, c->s[HH_V2_OPS],
                   "event chunk read out of order"); /* never: the merge reads them once */
  const uint8_t *rec = c->s[ops];
  unsigned op = *c->s[ops]++;
  c->after_alloc = false; /* until an allocation is decoded */
  uint64_t dt, code = 0, field = 0, size, align = 0, addr = 0, old = 0, v, w, n;
  unsigned fn, ss = HH_V5_SIZE_WIDE;
  /* every field an event has is set below; the rest are zero */
  ev->thread = c->thread;
  ev->addr = ev->old_addr = ev->align = ev->stack = ev->weight = ev->size = 0;
  ev->fn = 0;
  if (op & HH_V2_OP_MALLOC) { /* 1aaadddd; version 5: 1aaassdd */
    fn = 0;
    if (v5) {
      dt = op & 3;
      if (dt == 3) V2_VAR(HH_V2_WIDE, dt);
      ss = (op >> 2) & 3;
    } else {
      dt = op & 15;
      if (dt == 15) V2_VAR(HH_V2_WIDE, dt);
    }
    unsigned fast = (op >> 4) & 7;
    if (fast == HH_V2_FAST_WIDE && v5)
      V2_BYTE(HH_V5_CODE, code);
    else if (fast == HH_V2_FAST_WIDE)
      V2_VAR(HH_V2_WIDE, code);
    else
      code = hh_v2_code_of(v4 ? 4 : 2, fast);
    goto alloc;
  }
  if (op & HH_V2_OP_FREE) { /* 01dddddd */
    fn = 9;
    dt = op & 63;
    if (dt == 63) V2_VAR(HH_V2_WIDE, dt);
    goto free_;
  }
  fn = op & 0x0f;
  switch (op & 0x30) {
    case HH_V2_OP_ALLOC:
      if (fn > 8) break;
      V2_VAR(HH_V2_WIDE, dt);
      V2_VAR(HH_V2_WIDE, code);
      goto alloc;
    case HH_V2_OP_FREE_FN:
      if (fn != 2 && fn != 3 && fn != 9 && fn != 10 && fn != 11) break;
      V2_VAR(HH_V2_WIDE, dt);
      goto free_;
    case HH_V2_OP_REALLOC:
      if (fn != 2 && fn != 3) break;
      V2_VAR(HH_V2_WIDE, dt);
      if (v2_freed(r, c, v4, false, &old) < 0) return -1;
      V2_VAR(HH_V2_WIDE, code);
      if (v2_address_fields(r, c, v4, code, &field) < 0) return -1;
      V2_16(HH_V2_SIZE_LO, size);
      if (v2_address(r, c, v4, code, size, field, old, &addr) < 0) return -1;
      ev->kind = HH_EV_REALLOC;
      ev->old_addr = old;
      goto allocated;
    default:
      switch (op) {
        case HH_V2_OP_WEIGHT:
          if (c->has_weight) return damaged(r, c, rec, "two sample weights in a row");
          V2_VAR(HH_V2_WIDE, c->weight);
          c->has_weight = true;
          return 0;
        case HH_V2_OP_CHUNK_TIME:
          V2_VAR(HH_V2_WIDE, c->time);
          c->has_time = true;
          return 0;
        case HH_V2_OP_THREAD:
          V2_VAR(HH_V2_WIDE, v);
          V2_VAR(HH_V2_WIDE, w);
          V2_VAR(HH_V2_WIDE, n);
          if (n > (uint64_t)(c->se[HH_V2_WIDE] - c->s[HH_V2_WIDE])) return V2_EXHAUSTED(HH_V2_WIDE);
          if (v > UINT32_MAX) return damaged(r, c, rec, "thread index %" PRIu64 " out of range", v);
          {
            const char *name = (const char *)c->s[HH_V2_WIDE];
            c->s[HH_V2_WIDE] += n;
            ev->kind = HH_EV_THREAD;
            ev->time = ticks_ns(r, c->has_time ? c->time : r->last_ticks);
            ev->u.thread = define_thread(r, (uint32_t)v, w, name, (size_t)n);
          }
          return 1;
        default:
          break;
      }
  }
  return damaged(r, c, rec, "unknown event op 0x%02x", op);

alloc:
  if ((code == HH_V2_ADDR_DELTA || code == HH_V4_ADDR_FREED) && v2_address_fields(r, c, v4, code, &field) < 0)
    return -1;
  if (ss < HH_V5_SIZE_WIDE) {
    V2_BYTE(HH_V2_SIZE_LO, size);
    size |= (uint64_t)ss << 8;
  } else {
    V2_16(HH_V2_SIZE_LO, size);
  }
  if (hh_trace_fn_has_align(fn)) V2_VAR(HH_V2_WIDE, align);
  if (v2_address(r, c, v4, code, size, field, 0, &addr) < 0) return -1;
  ev->kind = HH_EV_ALLOC;
  ev->align = align;
allocated:
  if (v2_allocated(r, c, addr, size, ev) < 0) return -1;
  c->after_alloc = v4;
  ev->addr = addr;
  ev->size = size;
  ev->weight = c->has_weight ? c->weight : size;
  c->has_weight = false;
  if (!size_ok(ev)) return too_large(r, c, rec, ev);
  if (ev->stack && !stack_lookup(r, ev->stack))
    return damaged(r, c, rec, "stack id %" PRIu64 " used before it was defined", ev->stack);
  goto event;
free_:
  if (c->has_weight) return damaged(r, c, rec, "sample weight not followed by an allocation");
  if (v2_freed(r, c, v4, true, &addr) < 0) return -1;
  ev->kind = HH_EV_FREE;
  ev->addr = addr;
event:
  ev->fn = (uint8_t)fn;
  c->time += dt;
  ev->time = ticks_ns(r, c->time);
  if (c->model->skip != 0) { /* handed out from a provisional chunk already */
    c->model->skip--;
    return 0;
  }
  return count_bytes(r, c, rec, ev);
}

static int decode_v2(hh_reader *r, cursor *c, hh_event *ev, enum pass pass) {
  return c->v5   ? decode_events(r, c, ev, pass, 5)
         : c->v4 ? decode_events(r, c, ev, pass, 4)
                 : decode_events(r, c, ev, pass, 2);
}

int hh_reader_next(hh_reader *r, hh_event *ev) {
  for (;;) {
    if (!r->have_cur) {
      map_release(r, r->offset);
      if (!read_chunk(r, &r->cur)) return 0;
      r->have_cur = true;
    }
    int rc = decode(r, &r->cur, ev, PASS_ALL);
    if (rc == 1) {
      if (r->cur.has_time) r->last_ticks = r->cur.time;
      return 1;
    }
    if (rc == 2) {
      r->have_cur = false;
      continue;
    }
    if (rc < 0) {
      r->have_cur = false;
      return 0;
    }
  }
}

/* ---- tables ----------------------------------------------------------------*/

size_t hh_reader_stack_count(const hh_reader *r) { return r->nstacks; }
const hh_stack_node *hh_reader_stack(const hh_reader *r, uint64_t id) {
  size_t i = stack_lookup(r, id);
  return i ? &r->stacks[i] : NULL;
}
size_t hh_reader_stack_index(const hh_reader *r, uint64_t id) { return stack_lookup(r, id); }
const hh_stack_node *hh_reader_stack_at(const hh_reader *r, size_t i) {
  return i >= 1 && i <= r->nstacks ? &r->stacks[i] : NULL;
}
size_t hh_reader_module_count(const hh_reader *r) { return r->nmodules; }
const hh_trace_module *hh_reader_module(const hh_reader *r, size_t i) {
  return i < r->nmodules ? r->modules[i] : NULL;
}
uint32_t hh_reader_epoch(const hh_reader *r) { return r->epoch; }
size_t hh_reader_thread_count(const hh_reader *r) { return r->nthreads; }
const hh_trace_thread *hh_reader_thread_at(const hh_reader *r, size_t i) {
  return i < r->nthreads ? r->threads[i] : NULL;
}
const hh_trace_thread *hh_reader_thread(const hh_reader *r, uint32_t index) {
  uint32_t pos;
  return u64map_get(&r->thread_map, index, &pos) ? r->threads[pos] : NULL;
}
int hh_reader_command(const hh_reader *r, const char *const **argv, const char **exe) {
  if (argv) *argv = (const char *const *)r->argv;
  if (exe) *exe = r->exe;
  return r->argc;
}

/* ---- the time-ordered merge ------------------------------------------------
 * Chunks of thread 0 (the process records: definitions, RSS, markers, END)
 * are looked at twice: once when read (definitions applied and handed out,
 * everything validated, the chunk cut at the first damage), then queued like
 * the others. Chunks of the program's threads hold events only (the tracer
 * writes every definition into thread 0's chunks, before the events that
 * use them) and are decoded once, lazily, when the merge reaches them
 * (PASS_LAZY: a definition found there after all is applied and handed out
 * then; a stack id must be defined by the time its event is decoded). Damage
 * found that late is reported as the reader would have in file order
 * (set_problem), and the chunks after the damaged one that are still
 * buffered are dropped. Decoded payloads are taken over from the reader, not
 * copied, and their buffers recycled. A binary heap of threads keyed by
 * (time of the next event, thread index) picks what comes next. */
typedef struct mchunk {
  struct mchunk *next;
  uint8_t *data;
  size_t cap;          /* of data */
  size_t len;          /* what is decoded (cut at damage) */
  size_t alloc;        /* what counts in the window */
  uint64_t file_bytes; /* the chunk's bytes in the file, header included */
  bool borrowed;       /* data is the reader's map, not ours to free */
  bool lazy;           /* decoded once, in PASS_LAZY */
  cursor cur;
} mchunk;

typedef struct tqueue {
  uint32_t thread;
  bool in_heap;
  mchunk *head, *tail;
  hh_event next; /* valid while in the heap */
} tqueue;

#define MERGE_SPARE 8

struct hh_merge {
  hh_reader *r;
  size_t window, buffered;
  uint64_t buffered_file; /* the file bytes of the chunks buffered (hh_merge_offset) */
  tqueue **queues;
  size_t nqueues, queues_cap;
  u64map queue_map;
  tqueue **heap;
  size_t nheap;
  mchunk *def; /* the chunk being looked at first */
  bool exhausted, end_given;
  uint64_t last_time, late;
  bool pending; /* heap[0]'s next event is to be decoded (see "runs") */
  bool drop;    /* damage found lazily: drop chunks after drop_after */
  uint64_t drop_after;
  struct {
    uint8_t *data;
    size_t cap;
  } spare[MERGE_SPARE]; /* payload buffers to reuse */
  size_t nspare;
};

hh_merge *hh_merge_new(hh_reader *r, size_t window_bytes) {
  hh_merge *m = xcalloc(1, sizeof *m);
  m->r = r;
  m->window = window_bytes ? window_bytes : (size_t)64 << 20;
  r->merge = m;
  r->defer_unpack = true;
  return m;
}

static void spare_put(hh_merge *m, uint8_t *data, size_t cap) {
  if (data && m->nspare < MERGE_SPARE && cap <= ((size_t)1 << 20)) {
    m->spare[m->nspare].data = data;
    m->spare[m->nspare].cap = cap;
    m->nspare++;
  } else {
    free(data);
  }
}

static void mchunk_free(hh_merge *m, mchunk *k) {
  m->buffered -= k->alloc;
  m->buffered_file -= k->file_bytes;
  if (!k->borrowed) spare_put(m, k->data, k->cap);
  free(k);
}

/* Decompresses a chunk read compressed (read_chunk, defer_unpack), when its
 * queue reaches it: the payload is then decoded while it is in the cache,
 * and the read-ahead window holds compressed bytes. Returns false, with the
 * damage told as reading in file order would, when it does not decompress. */
static bool unpack(hh_merge *m, mchunk *k) {
  hh_reader *r = m->r;
  uint8_t *buf = NULL;
  size_t cap = 0;
  if (m->nspare) {
    m->nspare--;
    buf = m->spare[m->nspare].data;
    cap = m->spare[m->nspare].cap;
  }
  ensure_cap(&buf, &cap, k->cur.unpacked);
  size_t n = ZSTD_decompressDCtx(r->dctx, buf, k->cur.unpacked, k->data, k->len);
  if (ZSTD_isError(n) || n != k->cur.unpacked) {
    set_problem(r, HH_READ_DAMAGED, k->cur.chunk_no,
                "trace damaged at byte offset %" PRIu64 ": chunk %" PRIu64 " does not decompress (%s)",
                k->cur.chunk_offset, k->cur.chunk_no,
                ZSTD_isError(n) ? ZSTD_getErrorName(n) : "wrong decoded size");
    spare_put(m, buf, cap);
    return false;
  }
  if (!k->borrowed) spare_put(m, k->data, k->cap);
  k->borrowed = false;
  k->data = buf;
  k->cap = cap;
  k->len = n;
  k->cur.packed = false;
  k->cur.start = k->cur.p = buf;
  k->cur.end = buf + n;
  return true;
}

void hh_merge_free(hh_merge *m) {
  if (!m) return;
  if (m->r->merge == m) {
    m->r->merge = NULL;
    m->r->defer_unpack = false;
  }
  for (size_t i = 0; i < m->nqueues; i++) {
    for (mchunk *k = m->queues[i]->head, *n; k; k = n) {
      n = k->next;
      mchunk_free(m, k);
    }
    free(m->queues[i]);
  }
  if (m->def) mchunk_free(m, m->def);
  for (size_t i = 0; i < m->nspare; i++) free(m->spare[i].data);
  free(m->queues);
  free(m->heap);
  u64map_free(&m->queue_map);
  free(m);
}

uint64_t hh_merge_late(const hh_merge *m) { return m->late; }
uint64_t hh_merge_offset(const hh_merge *m) { return m->r->offset - m->buffered_file; }

/* Among events of equal time in different threads, frees (and reallocs)
 * come before allocations: a block freed by one thread and allocated by
 * another within one clock tick was freed first (docs/trace-format.md). */
static inline int free_rank(const hh_event *e) { return e->kind == HH_EV_ALLOC ? 1 : 0; }
/* Event e of thread `thread` comes before queue b's next one. */
static inline bool ev_before(const hh_event *e, uint32_t thread, const tqueue *b) {
  if (e->time != b->next.time) return e->time < b->next.time;
  int ra = free_rank(e), rb = free_rank(&b->next);
  return ra < rb || (ra == rb && thread < b->thread);
}
static inline bool before(const tqueue *a, const tqueue *b) { return ev_before(&a->next, a->thread, b); }

static void heap_push(hh_merge *m, tqueue *q) {
  size_t i = m->nheap++;
  q->in_heap = true;
  while (i > 0) {
    size_t p = (i - 1) / 2;
    if (!before(q, m->heap[p])) break;
    m->heap[i] = m->heap[p];
    i = p;
  }
  m->heap[i] = q;
}

static void heap_sift_down(hh_merge *m, size_t i) {
  tqueue *q = m->heap[i];
  for (;;) {
    size_t l = 2 * i + 1, best = i;
    tqueue *bq = q;
    if (l < m->nheap && before(m->heap[l], bq)) best = l, bq = m->heap[l];
    if (l + 1 < m->nheap && before(m->heap[l + 1], bq)) best = l + 1, bq = m->heap[l + 1];
    if (best == i) break;
    m->heap[i] = bq;
    i = best;
  }
  m->heap[i] = q;
}

static void queue_pop_head(hh_merge *m, tqueue *q) {
  mchunk *k = q->head;
  q->head = k->next;
  if (!q->head) q->tail = NULL;
  mchunk_free(m, k);
}

/* Decodes the queue's next timed event into q->next; returns false when the
 * queue has none buffered (its chunks are freed as they are used up). */
static bool queue_advance_into(hh_merge *m, tqueue *q, hh_event *out) {
  while (q->head) {
    mchunk *k = q->head;
    int rc;
    if (k->cur.packed && !unpack(m, k))
      rc = -1;
    else if (k->lazy && k->cur.v2 && k->cur.v5 && k->cur.thread_known &&
             m->r->table_bytes + m->r->v2_bytes <= m->r->mem_limit)
      /* what decode() does for the current format, inlined: two calls
       * fewer per event (the report ~8% faster, docs/benchmarks.md) */
      rc = decode_events(m->r, &k->cur, out, PASS_LAZY, 5);
    else
      rc = decode(m->r, &k->cur, out, k->lazy ? PASS_LAZY : PASS_EVENTS);
    if (rc == 1) return true;
    if (rc == 0) continue;
    if (rc < 0) { /* damage in a lazy chunk (eager ones were validated before) */
      if (!m->drop || k->cur.chunk_no < m->drop_after) m->drop_after = k->cur.chunk_no;
      m->drop = true;
      while (q->head) queue_pop_head(m, q);
      return false;
    }
    queue_pop_head(m, q); /* 2: used up */
  }
  return false;
}

static bool queue_advance(hh_merge *m, tqueue *q) { return queue_advance_into(m, q, &q->next); }

/* ---- runs ------------------------------------------------------------------
 * After the heap's first queue has handed its event out, its next one is
 * decoded on the following call, straight into the caller's event: while it
 * still comes before the next events of the other queues (the root's
 * children), it is handed out as is, with no copy and no sift (a trace of
 * one thread is one long run). m->pending: heap[0]'s `next` is used up. */
/* heap[0]'s queue has nothing buffered any more: out of the heap. */
static void heap_drop_root(hh_merge *m) {
  m->heap[0]->in_heap = false;
  m->heap[0] = m->heap[--m->nheap];
  if (m->nheap) heap_sift_down(m, 0);
}

/* heap[0]'s next event, into its `next` as usual. */
static void pending_resolve(hh_merge *m) {
  m->pending = false;
  if (queue_advance(m, m->heap[0]))
    heap_sift_down(m, 0);
  else
    heap_drop_root(m);
}

/* heap[0]'s next event, into out: 1 when it is the merge's next event too
 * (still pending), else 0 with the heap in order again. */
static int pending_next(hh_merge *m, hh_event *out) {
  m->pending = false;
  tqueue *q = m->heap[0];
  if (!queue_advance_into(m, q, out)) {
    heap_drop_root(m);
    return 0;
  }
  if (!m->drop && (m->nheap < 2 || ev_before(out, q->thread, m->heap[1])) &&
      (m->nheap < 3 || ev_before(out, q->thread, m->heap[2]))) {
    m->pending = true;
    return 1;
  }
  q->next = *out;
  heap_sift_down(m, 0);
  return 0;
}

/* After damage found lazily in chunk drop_after: nothing after it in the
 * file is handed out any more (reading in file order would stop there). */
static void merge_drop(hh_merge *m) {
  m->drop = false;
  m->exhausted = true;
  for (size_t i = 0; i < m->nqueues; i++) {
    tqueue *q = m->queues[i];
    mchunk **link = &q->head, *prev = NULL;
    while (*link && (*link)->cur.chunk_no <= m->drop_after) {
      prev = *link;
      link = &(*link)->next;
    }
    for (mchunk *k = *link, *n; k; k = n) {
      n = k->next;
      mchunk_free(m, k);
    }
    *link = NULL;
    q->tail = prev;
  }
  if (m->def && m->def->cur.chunk_no > m->drop_after) {
    mchunk_free(m, m->def);
    m->def = NULL;
  }
  size_t n = 0;
  for (size_t i = 0; i < m->nheap; i++) {
    if (m->heap[i]->head)
      m->heap[n++] = m->heap[i];
    else
      m->heap[i]->in_heap = false;
  }
  m->nheap = n;
  for (size_t i = n / 2; i-- > 0;) heap_sift_down(m, i);
}

/* A lazy chunk names a stack that is not defined (yet): the definition may
 * be in an earlier chunk of another thread not decoded yet (a trace not
 * written by the tracer, or a damaged chunk header). Applies the
 * definitions of every buffered lazy chunk before chunk_no, in file order,
 * without handing them out; those chunks are then read like thread 0's
 * (PASS_EVENTS skips their definitions). Returns whether any was found. */
static bool merge_catch_up(hh_merge *m, uint64_t chunk_no) {
  bool any = false;
  for (;;) {
    mchunk *first = NULL;
    for (size_t i = 0; i < m->nqueues; i++)
      for (mchunk *k = m->queues[i]->head; k && k->cur.chunk_no < chunk_no; k = k->next)
        if (k->lazy && !k->cur.v2 && (!first || k->cur.chunk_no < first->cur.chunk_no)) first = k;
    if (!first) return any;
    any = true;
    first->lazy = false;
    if (first->cur.packed && !unpack(m, first)) {
      if (!m->drop || first->cur.chunk_no < m->drop_after) m->drop_after = first->cur.chunk_no;
      m->drop = true;
      continue;
    }
    cursor c = first->cur;
    hh_event tmp;
    for (;;) {
      const uint8_t *at = c.p;
      int rc = decode(m->r, &c, &tmp, PASS_DEFS);
      if (rc == 2) break;
      if (rc < 0) {
        first->len = (size_t)(at - first->data); /* the events before the damage still count */
        first->cur.end = first->data + first->len;
        if (!m->drop || first->cur.chunk_no < m->drop_after) m->drop_after = first->cur.chunk_no;
        m->drop = true;
        break;
      }
    }
  }
}

static void enqueue(hh_merge *m, mchunk *k) {
  uint32_t pos;
  tqueue *q;
  if (u64map_get(&m->queue_map, k->cur.thread, &pos)) {
    q = m->queues[pos];
  } else {
    q = xcalloc(1, sizeof *q);
    q->thread = k->cur.thread;
    if (m->nqueues == m->queues_cap) {
      m->queues_cap = m->queues_cap ? m->queues_cap * 2 : 16;
      m->queues = xrealloc(m->queues, m->queues_cap * sizeof *m->queues);
      m->heap = xrealloc(m->heap, m->queues_cap * sizeof *m->heap);
    }
    u64map_put(&m->queue_map, q->thread, (uint32_t)m->nqueues);
    m->queues[m->nqueues++] = q;
  }
  bool idle = q->head == NULL;
  k->next = NULL;
  if (q->tail)
    q->tail->next = k;
  else
    q->head = k;
  q->tail = k;
  if (idle && !q->in_heap && queue_advance(m, q)) heap_push(m, q);
}

/* Reads the next chunk into a buffer of its own (the reader's payload
 * buffer is taken over and replaced by a spare one). */
static mchunk *merge_read(hh_merge *m) {
  hh_reader *r = m->r;
  if (!r->decoded && m->nspare) {
    m->nspare--;
    r->decoded = m->spare[m->nspare].data;
    r->decoded_cap = m->spare[m->nspare].cap;
  }
  if (!r->stored && m->nspare) {
    m->nspare--;
    r->stored = m->spare[m->nspare].data;
    r->stored_cap = m->spare[m->nspare].cap;
  }
  if (r->map_owned && r->offset >= r->map_dropped + MAP_RELEASE_STEP) {
    uint64_t low = r->offset; /* what the buffered chunks still use */
    for (size_t i = 0; i < m->nqueues; i++)
      if (m->queues[i]->head && m->queues[i]->head->cur.chunk_offset < low)
        low = m->queues[i]->head->cur.chunk_offset;
    if (m->def && m->def->cur.chunk_offset < low) low = m->def->cur.chunk_offset;
    map_release(r, low);
  }
  cursor c;
  if (!read_chunk(r, &c)) return NULL;
  mchunk *k = xcalloc(1, sizeof *k);
  k->len = (size_t)(c.end - c.start);
  if (c.start == r->decoded) {
    k->data = r->decoded;
    k->cap = r->decoded_cap;
    r->decoded = NULL;
    r->decoded_cap = 0;
  } else if (c.start == r->stored) {
    k->data = r->stored;
    k->cap = r->stored_cap;
    r->stored = NULL;
    r->stored_cap = 0;
  } else if (r->map && c.start >= r->map && c.start <= r->map + r->map_size) {
    k->data = (uint8_t *)(uintptr_t)c.start; /* read only, like every payload */
    k->cap = 0;
    k->borrowed = true;
  } else { /* an empty payload */
    k->data = xrealloc(NULL, k->len);
    k->cap = k->len;
    memcpy(k->data, c.start, k->len);
  }
  k->cur = c;
  k->cur.start = k->cur.p = k->data;
  k->cur.end = k->data + k->len;
  k->alloc = k->len;
  k->file_bytes = r->offset - c.chunk_offset;
  k->lazy = c.thread != 0;
  m->buffered += k->alloc;
  m->buffered_file += k->file_bytes;
  return k;
}

static inline bool timed_kind(hh_ev_kind k) {
  return k == HH_EV_ALLOC || k == HH_EV_FREE || k == HH_EV_REALLOC || k == HH_EV_RSS || k == HH_EV_MARKER;
}

static inline void note_time(hh_merge *m, const hh_event *ev) {
  if (timed_kind(ev->kind)) {
    if (ev->time < m->last_time)
      m->late++;
    else
      m->last_time = ev->time;
  }
}

int hh_merge_next(hh_merge *m, hh_event *ev) {
  hh_reader *r = m->r;
  for (;;) {
    if (m->pending) {
      /* nothing else to do first (damage, definitions, read-ahead): the run goes on */
      if (!m->drop && !m->def && (m->exhausted || m->buffered >= m->window)) {
        if (pending_next(m, ev)) {
          note_time(m, ev);
          return 1;
        }
        continue;
      }
      pending_resolve(m);
    }
    if (m->drop) merge_drop(m);
    if (m->def) {
      cursor *c = &m->def->cur;
      const uint8_t *at = c->p;
      int rc = decode(r, c, ev, PASS_DEFS);
      if (rc == 1) return 1;
      if (rc == 0) continue;
      mchunk *k = m->def;
      m->def = NULL;
      if (rc < 0) k->len = (size_t)(at - k->data); /* hand out what precedes the damage */
      /* Rewind for the second look (same start state as the first). */
      uint64_t t0 = k->cur.chunk_offset, n0 = k->cur.chunk_no;
      uint32_t th = k->cur.thread;
      bool raw = k->cur.raw, provisional = k->cur.provisional;
      memset(&k->cur, 0, sizeof k->cur);
      k->cur.start = k->cur.p = k->data;
      k->cur.end = k->data + k->len;
      k->cur.chunk_offset = t0;
      k->cur.chunk_no = n0;
      k->cur.thread = th;
      k->cur.raw = raw;
      k->cur.provisional = provisional;
      enqueue(m, k);
      continue;
    }
    /* read ahead to fill the window, and always when nothing is buffered */
    if (!m->exhausted && (m->buffered < m->window || m->nheap == 0)) {
      mchunk *k = merge_read(m);
      if (!k) {
        m->exhausted = true;
        continue;
      }
      if (k->lazy)
        enqueue(m, k);
      else
        m->def = k;
      continue;
    }
    if (m->nheap) {
      *ev = m->heap[0]->next;
      note_time(m, ev);
      m->pending = true;
      return 1;
    }
    if (r->seen_end && !m->end_given && (r->status == HH_READ_OK || r->end_chunk < r->status_chunk)) {
      /* the last event: END, or the EXEC that ended the program */
      m->end_given = true;
      check_end_count(r);
      memset(ev, 0, sizeof *ev);
      ev->time = ticks_ns(r, r->end_ticks);
      if (r->exec_path != NULL) {
        ev->kind = HH_EV_EXEC;
        ev->u.exec.path = r->exec_path;
        ev->u.exec.events = r->end_events;
      } else {
        ev->kind = HH_EV_END;
        ev->u.end_events = r->end_events;
      }
      return 1;
    }
    return 0;
  }
}

/* The reader's hot loop: a program thread's run of events goes out with
 * one call per batch instead of one per event. */
size_t hh_merge_next_n(hh_merge *m, hh_event *evs, size_t max) {
  size_t n = 0;
  while (n < max) {
    /* a run going on (see "runs"), its events decoded here without the
     * rest of hh_merge_next's checks */
    while (m->pending && !m->drop && !m->def && (m->exhausted || m->buffered >= m->window)) {
      if (!pending_next(m, &evs[n])) break;
      note_time(m, &evs[n]);
      if (++n == max) return n;
    }
    if (!hh_merge_next(m, &evs[n])) break;
    n++;
  }
  return n;
}

/* ---- names -----------------------------------------------------------------*/

const char *hh_fn_name(unsigned fn) {
  static const char *const names[] = {"malloc",         "calloc",        "realloc",    "reallocarray",
                                      "posix_memalign", "aligned_alloc", "memalign",   "valloc",
                                      "pvalloc",        "free",          "free_sized", "free_aligned_sized"};
  return fn < sizeof names / sizeof *names ? names[fn] : "?";
}

const char *hh_ev_kind_name(hh_ev_kind kind) {
  switch (kind) {
    case HH_EV_ALLOC:
      return "alloc";
    case HH_EV_FREE:
      return "free";
    case HH_EV_REALLOC:
      return "realloc";
    case HH_EV_STACK:
      return "stack";
    case HH_EV_THREAD:
      return "thread";
    case HH_EV_MODULE_LOAD:
      return "module";
    case HH_EV_MODULE_UNLOAD:
      return "unload";
    case HH_EV_RSS:
      return "rss";
    case HH_EV_MARKER:
      return "marker";
    case HH_EV_COMMAND:
      return "command";
    case HH_EV_END:
      return "end";
    case HH_EV_EXEC:
      return "exec";
  }
  return "?";
}
