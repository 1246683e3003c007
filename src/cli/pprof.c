/* pprof's profile.proto (github.com/google/pprof/proto/profile.proto),
 * gzipped with zlib (render.h).
 *
 * The protobuf wire format is written here by hand: the profile is six
 * small messages of integers, strings and nested messages, one pass, and
 * the encoder below is a few dozen lines. protobuf-c would bring a
 * generated .pb-c.c from the .proto (protoc-c at build time: one more
 * build tool) and a runtime library for what is a varint writer here.
 *
 * Field numbers used (profile.proto):
 *   Profile: 1 sample_type, 2 sample, 3 mapping, 4 location, 5 function,
 *            6 string_table, 9 time_nanos, 10 duration_nanos, 11 period_type,
 *            12 period,
 *            13 comment, 14 default_sample_type
 *   ValueType: 1 type, 2 unit            Sample: 1 location_id, 2 value
 *   Mapping: 1 id, 2 memory_start, 3 memory_limit, 4 file_offset,
 *            5 filename, 6 build_id, 7-10 has_functions/filenames/
 *            line_numbers/inline_frames
 *   Location: 1 id, 2 mapping_id, 3 address, 4 line
 *   Line: 1 function_id, 2 line           Function: 1 id, 2 name, 3 system_name, 4 filename
 * Sample's repeated numbers are written unpacked (a key per value: parsers
 * accept both forms, and protoc --decode_raw shows them as numbers).
 * Samples list their locations leaf first; a location's lines list the
 * inlined functions first and the function containing the address last. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "escape.h"
#include "render.h"

/* ---- the wire format ------------------------------------------------------ */

typedef struct pb {
  uint8_t *p;
  size_t len, cap;
  bool oom;
} pb;

static void pb_put(pb *b, const void *data, size_t n) {
  if (b->oom) return;
  if (b->len + n > b->cap) {
    size_t cap = b->cap ? b->cap : 256;
    while (b->len + n > cap) cap *= 2;
    uint8_t *grown = realloc(b->p, cap);
    if (!grown) {
      b->oom = true;
      return;
    }
    b->p = grown;
    b->cap = cap;
  }
  memcpy(b->p + b->len, data, n);
  b->len += n;
}

static void pb_varint(pb *b, uint64_t v) {
  uint8_t tmp[10];
  size_t n = 0;
  do {
    tmp[n] = (uint8_t)(v & 0x7f);
    v >>= 7;
    if (v) tmp[n] |= 0x80;
    n++;
  } while (v);
  pb_put(b, tmp, n);
}

/* A varint field (wire type 0); zero values are left out, as proto3 does. */
static void pb_uint(pb *b, unsigned field, uint64_t v) {
  if (v == 0) return;
  pb_varint(b, (uint64_t)field << 3);
  pb_varint(b, v);
}

/* A varint field written even when zero (a repeated field's element). */
static void pb_uint_always(pb *b, unsigned field, uint64_t v) {
  pb_varint(b, (uint64_t)field << 3);
  pb_varint(b, v);
}

/* A length-delimited field (wire type 2). */
static void pb_bytes(pb *b, unsigned field, const void *data, size_t n) {
  pb_varint(b, (uint64_t)field << 3 | 2);
  pb_varint(b, n);
  pb_put(b, data, n);
}

static void pb_message(pb *b, unsigned field, pb *sub) {
  if (sub->oom) b->oom = true;
  pb_bytes(b, field, sub->p, sub->len);
  sub->len = 0;
}

/* ---- tables: strings, functions, locations -------------------------------- */

typedef struct entry {
  const void *key; /* string (owned copy) or frame pointer */
  uint64_t key2;
  uint64_t id;
} entry;

typedef struct table {
  entry *slots;
  size_t nslots, n;
} table;

static uint64_t hash_bytes(const char *s, uint64_t seed) {
  uint64_t h = 1469598103934665603ull ^ seed;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

static uint64_t hash_ptr(const void *p, uint64_t k2) {
  uint64_t h = (uint64_t)(uintptr_t)p * 0xff51afd7ed558ccdull ^ k2 * 0x9e3779b97f4a7c15ull;
  return h ^ (h >> 31);
}

static int table_grow(table *t, bool strings) {
  size_t nslots = t->nslots ? t->nslots * 2 : 256;
  entry *slots = calloc(nslots, sizeof *slots);
  if (!slots) return -1;
  for (size_t i = 0; i < t->nslots; i++) {
    if (!t->slots[i].key) continue;
    uint64_t h = strings ? hash_bytes(t->slots[i].key, 0) : hash_ptr(t->slots[i].key, t->slots[i].key2);
    size_t k = h & (nslots - 1);
    while (slots[k].key) k = (k + 1) & (nslots - 1);
    slots[k] = t->slots[i];
  }
  free(t->slots);
  t->slots = slots;
  t->nslots = nslots;
  return 0;
}

/* Where the Profile's bytes go as they are made (hh_write_pprof: gzip);
 * returns 0, or -1 when they could not be written. */
typedef int (*sink_fn)(void *arg, const uint8_t *data, size_t n);

typedef struct enc {
  pb out;   /* the Profile (with a sink: what it has not been given yet) */
  pb sub;   /* a message being built */
  pb lines; /* Lines of a location */
  table strings, functions, locations;
  uint64_t nstrings, nfunctions, nlocations;
  const hh_trace_module *const *modules;
  size_t nmodules;
  bool oom;
  sink_fn sink; /* NULL: the whole Profile stays in out */
  void *sink_arg;
  bool sink_failed;
} enc;

/* With a sink, out's bytes go to it once they are past 1 MiB: a profile of
 * ~1M deep stacks is ~300 MB before gzip, held whole before. A Profile's
 * fields are written top-level messages one after another, so flushing
 * between them changes nothing in the bytes. */
static void flush(enc *e, size_t at_least) {
  if (!e->sink || e->out.len < at_least || e->out.oom || e->sink_failed) return;
  if (e->sink(e->sink_arg, e->out.p, e->out.len) != 0) e->sink_failed = true;
  e->out.len = 0;
}

static uint64_t str_id_valid(enc *e, const char *s);

/* The string table index of s, adding it (field 6) when new. Protobuf
 * strings are UTF-8: a program's bytes that are not become U+FFFD (strict
 * readers, protoc among them, refused a profile with a Latin-1 argument). */
static uint64_t str_id(enc *e, const char *s) {
  if (!s || !*s) return 0;
  char buf[256];
  const char *safe = hh_utf8_safe(s, buf, sizeof buf);
  if (safe == s) return str_id_valid(e, s);
  if (strlen(safe) + 1 < sizeof buf) return str_id_valid(e, safe); /* (not cut) */
  char *copy = hh_utf8_dup(s);
  if (!copy) {
    e->oom = true;
    return 0;
  }
  uint64_t id = str_id_valid(e, copy);
  free(copy);
  return id;
}

static uint64_t str_id_valid(enc *e, const char *s) {
  table *t = &e->strings;
  if (2 * (t->n + 1) > t->nslots && table_grow(t, true) != 0) {
    e->oom = true;
    return 0;
  }
  size_t k = hash_bytes(s, 0) & (t->nslots - 1);
  for (; t->slots[k].key; k = (k + 1) & (t->nslots - 1))
    if (t->slots[k].key2 == 0 && strcmp(t->slots[k].key, s) == 0) return t->slots[k].id;
  char *copy = strdup(s);
  if (!copy) {
    e->oom = true;
    return 0;
  }
  t->slots[k] = (entry){copy, 0, ++e->nstrings};
  t->n++;
  pb_bytes(&e->out, 6, s, strlen(s));
  return e->nstrings;
}

/* A Function for (name, file), keyed by the two string ids. */
static uint64_t function_id(enc *e, const hh_frame *f) {
  char *name = hh_frame_name_dup(f);
  if (!name) {
    e->oom = true;
    return 0;
  }
  uint64_t name_id = str_id(e, name);
  free(name);
  uint64_t file_id = str_id(e, f->file);
  table *t = &e->functions;
  if (2 * (t->n + 1) > t->nslots && table_grow(t, false) != 0) {
    e->oom = true;
    return 0;
  }
  /* key: the name id as a fake pointer, key2: the file id */
  const void *key = (const void *)(uintptr_t)(name_id + 1);
  size_t k = hash_ptr(key, file_id) & (t->nslots - 1);
  for (; t->slots[k].key; k = (k + 1) & (t->nslots - 1))
    if (t->slots[k].key == key && t->slots[k].key2 == file_id) return t->slots[k].id;
  t->slots[k] = (entry){key, file_id, ++e->nfunctions};
  t->n++;
  pb *m = &e->sub;
  pb_uint(m, 1, e->nfunctions);
  pb_uint(m, 2, name_id);
  pb_uint(m, 3, name_id);
  pb_uint(m, 4, file_id);
  pb_message(&e->out, 5, m);
  return e->nfunctions;
}

static bool module_has(const hh_trace_module *m, uint64_t ip) {
  for (uint32_t s = 0; s < m->nsegments; s++)
    if (ip >= m->segments[s].start && ip - m->segments[s].start < m->segments[s].size) return true;
  return false;
}

/* The Mapping of frame f: the module the symbolizer found it in (its path
 * and load bias), among those mapped at its address over the run; failing
 * that, the latest mapped there. (By address alone, a library unloaded
 * with dlclose gave its frames to the one loaded later at its address.) */
static uint64_t mapping_of(const enc *e, const hh_frame *f) {
  uint64_t any = 0;
  for (size_t i = e->nmodules; i-- > 0;) {
    const hh_trace_module *m = e->modules[i];
    if (!module_has(m, f->ip)) continue;
    if (f->module && f->ip - f->module_offset == m->base && strcmp(f->module, m->path ? m->path : "") == 0)
      return i + 1;
    if (!any) any = i + 1;
  }
  return any;
}

/* The Location of frames[0..n) (one address: inlined frames, then the
 * function containing it), keyed by the first frame's pointer. */
static uint64_t location_id(enc *e, const hh_frame *const *frames, size_t n) {
  table *t = &e->locations;
  if (2 * (t->n + 1) > t->nslots && table_grow(t, false) != 0) {
    e->oom = true;
    return 0;
  }
  size_t k = hash_ptr(frames[0], n) & (t->nslots - 1);
  for (; t->slots[k].key; k = (k + 1) & (t->nslots - 1))
    if (t->slots[k].key == frames[0] && t->slots[k].key2 == n) return t->slots[k].id;
  uint64_t id = ++e->nlocations;
  t->slots[k] = (entry){frames[0], n, id};
  t->n++;
  /* functions first: they write to e->sub */
  uint64_t fids[HH_PROFILE_MAX_DEPTH];
  for (size_t i = 0; i < n; i++) fids[i] = function_id(e, frames[i]);
  pb *m = &e->sub;
  pb_uint(m, 1, id);
  pb_uint(m, 2, mapping_of(e, frames[0]));
  pb_uint(m, 3, frames[0]->ip);
  for (size_t i = 0; i < n; i++) {
    pb_uint(&e->lines, 1, fids[i]);
    pb_uint(&e->lines, 2, frames[i]->line);
    pb_message(m, 4, &e->lines);
  }
  pb_message(&e->out, 4, m);
  return id;
}

static void table_free(table *t, bool strings) {
  if (strings)
    for (size_t i = 0; i < t->nslots; i++) free((void *)t->slots[i].key);
  free(t->slots);
}

static void value_type(enc *e, unsigned field, const char *type, const char *unit) {
  uint64_t tid = str_id(e, type), uid = str_id(e, unit);
  pb_uint(&e->sub, 1, tid);
  pb_uint(&e->sub, 2, uid);
  pb_message(&e->out, field, &e->sub);
}

/* The Profile, to sink (then *out and *size are not set) or, sink NULL, in
 * *out. Returns 0, -1 when out of memory, -2 when the sink failed. */
static int encode(const hh_profile *p, const hh_trace_module *const *modules, size_t nmodules,
                  const char *comment, sink_fn sink, void *sink_arg, uint8_t **out, size_t *size) {
  enc e = {.modules = modules, .nmodules = nmodules, .sink = sink, .sink_arg = sink_arg};
  const hh_analysis *a = p->analysis;
  pb_bytes(&e.out, 6, "", 0); /* string 0 is "" */
  value_type(&e, 1, "alloc_objects", "count");
  value_type(&e, 1, "alloc_space", "bytes");
  value_type(&e, 1, "inuse_objects", "count");
  value_type(&e, 1, "inuse_space", "bytes");

  for (size_t i = 0; i < nmodules; i++) {
    const hh_trace_module *m = modules[i];
    uint64_t start = UINT64_MAX, limit = 0, offset = 0;
    for (uint32_t s = 0; s < m->nsegments; s++) {
      if (m->segments[s].start < start) start = m->segments[s].start, offset = m->segments[s].offset;
      if (m->segments[s].start + m->segments[s].size > limit)
        limit = m->segments[s].start + m->segments[s].size;
    }
    if (start == UINT64_MAX) start = m->base, limit = m->base;
    uint64_t file = str_id(&e, m->path), build_id = str_id(&e, m->build_id);
    pb_uint(&e.sub, 1, i + 1);
    pb_uint(&e.sub, 2, start);
    pb_uint(&e.sub, 3, limit);
    pb_uint(&e.sub, 4, offset);
    pb_uint(&e.sub, 5, file);
    pb_uint(&e.sub, 6, build_id);
    for (unsigned f = 7; f <= 10; f++) pb_uint(&e.sub, f, 1);
    pb_message(&e.out, 3, &e.sub);
  }

  pb sample = {0}, ids = {0};
  const hh_frame *frames[HH_PROFILE_MAX_DEPTH];
  for (size_t i = 0; i < p->nsamples; i++) {
    const hh_site *site = hh_profile_site(p, i);
    size_t nframes = hh_profile_frames(p, i, frames);
    for (size_t f = 0; f < nframes;) {
      size_t g = f;
      while (g + 1 < nframes && frames[g]->inlined) g++;
      pb_uint_always(&ids, 1, location_id(&e, frames + f, g - f + 1));
      f = g + 1;
    }
    /* unpacked (one key per value): parsers read both forms, and
     * protoc --decode_raw shows these as numbers */
    sample.len = 0;
    pb_put(&sample, ids.p, ids.len);
    ids.len = 0;
    pb_uint_always(&sample, 2, site->allocations);
    pb_uint_always(&sample, 2, site->bytes);
    pb_uint_always(&sample, 2, site->peak_blocks);
    pb_uint_always(&sample, 2, site->peak_bytes);
    pb_message(&e.out, 2, &sample);
    flush(&e, 1u << 20);
  }
  /* when the program started (wall clock): pprof shows it as the profile's time */
  if (a->reader != NULL) pb_uint(&e.out, 9, hh_reader_header(a->reader)->start_wall_ns);
  pb_uint(&e.out, 10, a->duration_ns);
  value_type(&e, 11, "space", "bytes");
  pb_uint(&e.out, 12, 1);
  if (comment && *comment) {
    uint64_t cid = str_id(&e, comment);
    pb_uint(&e.out, 13, cid);
  }
  char buf[320], sbuf[160];
  const char *sampled = hh_sampled_note(a, sbuf, sizeof sbuf);
  if (sampled) pb_uint(&e.out, 13, str_id(&e, sampled));
  const char *note = hh_trace_note(a, buf, sizeof buf);
  if (note) pb_uint(&e.out, 13, str_id(&e, note)); /* (pprof -comments lists both) */
  pb_uint(&e.out, 14, str_id(&e, "inuse_space"));
  flush(&e, 0);

  bool oom = e.oom || e.out.oom || e.sub.oom || e.lines.oom || sample.oom || ids.oom;
  free(sample.p);
  free(ids.p);
  free(e.sub.p);
  free(e.lines.p);
  table_free(&e.strings, true);
  table_free(&e.functions, false);
  table_free(&e.locations, false);
  if (oom || e.sink_failed || sink) {
    free(e.out.p);
    return oom ? -1 : e.sink_failed ? -2 : 0;
  }
  *out = e.out.p;
  *size = e.out.len;
  return 0;
}

int hh_pprof_encode(const hh_profile *p, const hh_trace_module *const *modules, size_t nmodules,
                    const char *comment, uint8_t **out, size_t *size) {
  return encode(p, modules, nmodules, comment, NULL, NULL, out, size) == 0 ? 0 : -1;
}

/* The gzip stream a Profile goes to, and the errno of the write that
 * failed (0: none): taken when it fails, as what encode does after that
 * (symbolizing) may set errno for its own reasons. */
typedef struct gz_out {
  gzFile gz;
  int error;
} gz_out;

static int gz_sink(void *arg, const uint8_t *data, size_t size) {
  gz_out *o = arg;
  size_t done = 0;
  while (done < size) {
    unsigned chunk = size - done > (1u << 30) ? 1u << 30 : (unsigned)(size - done);
    errno = 0;
    int n = gzwrite(o->gz, data + done, chunk);
    if (n <= 0) {
      o->error = errno ? errno : EIO;
      return -1;
    }
    done += (size_t)n;
  }
  return 0;
}

int hh_write_pprof(const char *path, const hh_profile *p, const hh_trace_module *const *modules,
                   size_t nmodules, const char *comment, char *err, size_t err_size) {
  /* Level 6, gzip's default: level 9 took 30 times as long as the whole
   * analysis on a trace of 800,000 deep stacks (~95% of it in zlib) for
   * an output ~13% smaller. */
  gz_out o = {.gz = gzopen(path, "wb6")};
  if (!o.gz) {
    snprintf(err, err_size, "cannot write %s: %s", path, strerror(errno ? errno : ENOMEM));
    return -1;
  }
  int rc = encode(p, modules, nmodules, comment, gz_sink, &o, NULL, NULL);
  errno = 0;
  /* (a small Profile is all in zlib's buffer until here) */
  if (gzclose(o.gz) != Z_OK && rc == 0) {
    rc = -2;
    o.error = errno ? errno : EIO;
  }
  if (rc != 0) {
    if (rc == -1)
      snprintf(err, err_size, "out of memory");
    else
      snprintf(err, err_size, "cannot write %s: %s", path, strerror(o.error ? o.error : EIO));
    struct stat st; /* no half-written file left; never a device or pipe */
    if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) unlink(path);
  }
  return rc == 0 ? 0 : -1;
}
