/* speedscope's JSON file format (render.h;
 * https://www.speedscope.app/file-format-schema.json):
 *
 *   {"$schema": "...", "shared": {"frames": [{"name", "file"}...]},
 *    "profiles": [{"type": "sampled", "name", "unit", "startValue",
 *                  "endValue", "samples": [[frame...]], "weights": [...]}],
 *    "name", "activeProfileIndex", "exporter"}
 *
 * "name" is the command line, and the reader's note after it when the trace
 * is not whole (hh_trace_note).
 *
 * A frame is a function (name and source file: call sites in one function
 * share its frame, so speedscope's views add them up); a sample is one call
 * site, its stack outermost frame first, weighed by the profile's cost.
 * Frames are numbered most used first (docs/benchmarks.md, "Deep stacks:
 * memory of flame, export and diff"). */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "render.h"
#include "slots.h"

typedef struct frame_key {
  char *name;
  const char *file; /* the symbolizer's string; NULL when unknown */
} frame_key;

typedef struct frames {
  frame_key *keys;
  size_t n, cap;
  hh_slots index; /* (name, file) -> frame */
} frames;

static uint64_t key_hash(const char *name, const char *file) {
  uint64_t h = 1469598103934665603ull;
  for (const char *s = name; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  h = (h ^ 0xff) * 1099511628211ull;
  if (file)
    for (const char *s = file; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

static bool same_file(const char *a, const char *b) { return a == b || (a && b && strcmp(a, b) == 0); }

static uint64_t frame_hash(const void *keys, size_t i) {
  const frame_key *k = (const frame_key *)keys + i;
  return key_hash(k->name, k->file);
}

static bool is_frame(const void *keys, size_t i, const void *key) {
  const frame_key *e = (const frame_key *)keys + i, *k = key;
  return strcmp(e->name, k->name) == 0 && same_file(e->file, k->file);
}

/* The index of frame f; (size_t)-1 when out of memory. */
static size_t frame_index(frames *t, const hh_frame *f) {
  char *name = hh_frame_name_dup(f);
  if (!name) return (size_t)-1;
  if (hh_slots_fit(&t->index, t->n, 256, 0, frame_hash, t->keys) != 0) {
    free(name);
    return (size_t)-1;
  }
  size_t *slot =
      hh_slots_find(&t->index, key_hash(name, f->file), is_frame, t->keys, &(frame_key){name, f->file});
  if (*slot) {
    free(name);
    return *slot - 1;
  }
  if (t->n == t->cap) {
    size_t cap = t->cap ? 2 * t->cap : 256;
    frame_key *grown = realloc(t->keys, cap * sizeof *grown);
    if (!grown) {
      free(name);
      return (size_t)-1;
    }
    t->keys = grown;
    t->cap = cap;
  }
  t->keys[t->n] = (frame_key){name, f->file};
  *slot = t->n + 1;
  return t->n++;
}

/* Frame pointers seen (the symbolizer's: the same pointer each time a
 * sample is asked for) and their frame's index: the name is made and
 * hashed once per distinct pointer, not once per frame of every sample. */
typedef struct seen {
  const hh_frame *f;
  size_t index;
} seen;

typedef struct seen_table {
  seen *items;
  size_t n, cap;
  hh_slots index;
} seen_table;

static uint64_t ptr_hash(const hh_frame *f) { return (uint64_t)(uintptr_t)f * 0x9e3779b97f4a7c15ull; }

static uint64_t seen_hash(const void *items, size_t i) { return ptr_hash(((const seen *)items)[i].f); }

static bool is_seen(const void *items, size_t i, const void *key) {
  return ((const seen *)items)[i].f == key;
}

/* The frame index of f, from the table of pointers seen, else made (and
 * the pointer remembered); (size_t)-1 when out of memory. */
static size_t seen_index(seen_table *s, frames *t, const hh_frame *f) {
  if (hh_slots_fit(&s->index, s->n, 256, 0, seen_hash, s->items) != 0) return (size_t)-1;
  size_t *slot = hh_slots_find(&s->index, ptr_hash(f), is_seen, s->items, f);
  if (*slot) return s->items[*slot - 1].index;
  if (s->n == s->cap) {
    size_t cap = s->cap ? 2 * s->cap : 256;
    seen *grown = realloc(s->items, cap * sizeof *grown);
    if (!grown) return (size_t)-1;
    s->items = grown;
    s->cap = cap;
  }
  size_t index = frame_index(t, f);
  if (index == (size_t)-1) return index;
  s->items[s->n] = (seen){f, index};
  *slot = ++s->n;
  return index;
}

static const struct {
  hh_cost cost;
  const char *name, *unit;
} profiles[] = {
    {HH_COST_PEAK, "peak", "bytes"},
    {HH_COST_ALLOCATIONS, "allocations", "none"},
    {HH_COST_LEAKED, "leaked", "bytes"},
};

/* frame numbers: most used first, then by first use */
typedef struct frame_order {
  uint64_t uses;
  size_t first; /* the number in order of first use */
} frame_order;

static int by_uses(const void *x, const void *y) {
  const frame_order *a = x, *b = y;
  if (a->uses != b->uses) return a->uses > b->uses ? -1 : 1;
  return a->first < b->first ? -1 : a->first > b->first;
}

int hh_write_speedscope(FILE *out, const hh_profile *p, const char *name) {
  frames t = {0};
  seen_table st = {0};
  int rc = -1;
  uint64_t *uses = NULL;
  size_t uses_cap = 0, *number = NULL;
  frame_order *order = NULL;
  const hh_frame *fr[HH_PROFILE_MAX_DEPTH];
  /* The frames in order of first use (outermost first), and how often the
   * profiles name each. Most used first: the indices that fill the file
   * get the fewest digits (a recursion's two frames, 57M of the 64M
   * indices of ~1M stacks of ~70 frames, were 11 and 12, and the file 28%
   * larger). Each profile then asks for its samples' frames again. */
  for (size_t i = 0; i < p->nsamples; i++) {
    uint64_t in = 0;
    for (size_t k = 0; k < sizeof profiles / sizeof *profiles; k++)
      in += hh_site_cost(hh_profile_site(p, i), profiles[k].cost) != 0;
    for (size_t f = hh_profile_frames(p, i, fr); f-- > 0;) {
      size_t x = seen_index(&st, &t, fr[f]);
      if (x == (size_t)-1) goto done;
      if (x >= uses_cap) {
        size_t cap = uses_cap ? 2 * uses_cap : 256;
        uint64_t *grown = realloc(uses, cap * sizeof *grown);
        if (!grown) goto done;
        memset(grown + uses_cap, 0, (cap - uses_cap) * sizeof *grown);
        uses = grown;
        uses_cap = cap;
      }
      uses[x] += in;
    }
  }
  order = malloc((t.n ? t.n : 1) * sizeof *order);
  number = malloc((t.n ? t.n : 1) * sizeof *number);
  if (!order || !number) goto done;
  for (size_t i = 0; i < t.n; i++) order[i] = (frame_order){uses[i], i};
  qsort(order, t.n, sizeof *order, by_uses);
  for (size_t i = 0; i < t.n; i++) number[order[i].first] = i;

  fputs("{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\n\"shared\":{\"frames\":[",
        out);
  for (size_t i = 0; i < t.n; i++) {
    const frame_key *key = &t.keys[order[i].first];
    fputs(i ? ",\n{\"name\":" : "\n{\"name\":", out);
    hh_json_put_string(out, key->name, 0);
    if (key->file) {
      fputs(",\"file\":", out);
      hh_json_put_string(out, key->file, 0);
    }
    fputc('}', out);
  }
  fputs("]},\n\"profiles\":[", out);
  for (size_t k = 0; k < sizeof profiles / sizeof *profiles; k++) {
    uint64_t sum = 0;
    for (size_t i = 0; i < p->nsamples; i++) sum += hh_site_cost(hh_profile_site(p, i), profiles[k].cost);
    fprintf(out,
            "%s{\"type\":\"sampled\",\"name\":\"%s\",\"unit\":\"%s\",\"startValue\":0,\"endValue\":%" PRIu64
            ",\n\"samples\":[",
            k ? ",\n" : "\n", profiles[k].name, profiles[k].unit, sum);
    bool first = true;
    for (size_t i = 0; i < p->nsamples; i++) {
      if (hh_site_cost(hh_profile_site(p, i), profiles[k].cost) == 0) continue;
      fputs(first ? "[" : ",[", out);
      first = false;
      size_t n = hh_profile_frames(p, i, fr);
      for (size_t f = n; f-- > 0;) {
        size_t x = seen_index(&st, &t, fr[f]);
        if (x >= t.n) goto done; /* (every frame was seen above) */
        fprintf(out, f + 1 < n ? ",%zu" : "%zu", number[x]);
      }
      fputc(']', out);
    }
    fputs("],\n\"weights\":[", out);
    first = true;
    for (size_t i = 0; i < p->nsamples; i++) {
      uint64_t c = hh_site_cost(hh_profile_site(p, i), profiles[k].cost);
      if (c == 0) continue;
      fprintf(out, first ? "%" PRIu64 : ",%" PRIu64, c);
      first = false;
    }
    fputs("]}", out);
  }
  fputs("],\n\"name\":", out);
  char buf[320], sbuf[160];
  const char *note = hh_trace_note(p->analysis, buf, sizeof buf);
  const char *sampled = hh_sampled_note(p->analysis, sbuf, sizeof sbuf);
  if (note || sampled) {
    /* (speedscope shows the name as the page's title) */
    char *both = NULL;
    if (asprintf(&both, "%s (%s%s%s)", name, sampled ? sampled : "", note && sampled ? "; " : "",
                 note ? note : "") < 0)
      goto done;
    hh_json_put_string(out, both, 0);
    free(both);
  } else {
    hh_json_put_string(out, name, 0);
  }
  fputs(",\"activeProfileIndex\":0,\"exporter\":\"heaphook\"}\n", out);
  rc = 0;
done:
  for (size_t i = 0; i < t.n; i++) free(t.keys[i].name);
  free(t.keys);
  hh_slots_free(&t.index);
  free(st.items);
  hh_slots_free(&st.index);
  free(uses);
  free(order);
  free(number);
  return rc;
}
