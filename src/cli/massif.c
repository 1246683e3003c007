/* valgrind massif's output format (render.h), as massif.out.<pid> files
 * are written by valgrind 3.x and read by ms_print and massif-visualizer:
 *
 *   desc: ...            cmd: ...            time_unit: ms
 *   #-----------
 *   snapshot=N
 *   #-----------
 *   time=T  mem_heap_B=B  mem_heap_extra_B=0  mem_stacks_B=0
 *   heap_tree=empty|detailed|peak
 *   n2: 7000 (heap allocation functions) malloc/new/new[], --alloc-fns, etc.
 *    n1: 5000 0x4011D6: grow (known.c:19)
 *     n0: 5000 0x401250: main (known.c:30)
 *    ...
 *
 * A tree is inverted (allocating function first, then its callers), each
 * level's children sorted by bytes, those under 1% of the snapshot's bytes
 * gathered into one "in N places, all below massif's threshold" line, as
 * massif does. heaphook knows the call sites' bytes at the peak and at the
 * end, so those two snapshots are detailed; the others only give the heap
 * size. Times are milliseconds with microsecond decimals (ms_print reads
 * them as numbers). Extra heap (allocator overhead) is not recorded: 0. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "render.h"
#include "slots.h"

#define THRESHOLD_PERCENT 1.0

typedef struct mnode {
  const hh_frame *frame; /* NULL for the root */
  uint64_t bytes;
  size_t parent, first_child, next_sibling;
} mnode;

typedef struct mtree {
  mnode *nodes;
  size_t n, cap;
  hh_slots index; /* (parent, frame) -> node; the root is not in it */
} mtree;

static uint64_t key_hash(size_t parent, const hh_frame *f) {
  uint64_t h = (uint64_t)parent * 0x9e3779b97f4a7c15ull ^ (uint64_t)(uintptr_t)f * 0xff51afd7ed558ccdull;
  return h ^ (h >> 29);
}

typedef struct child_key {
  size_t parent;
  const hh_frame *frame;
} child_key;

static uint64_t node_hash(const void *nodes, size_t i) {
  const mnode *n = (const mnode *)nodes + i;
  return key_hash(n->parent, n->frame);
}

static bool is_child(const void *nodes, size_t i, const void *key) {
  const mnode *n = (const mnode *)nodes + i;
  const child_key *k = key;
  return n->parent == k->parent && n->frame == k->frame;
}

static size_t child(mtree *t, size_t parent, const hh_frame *f) {
  if (hh_slots_fit(&t->index, t->n, 1024, 1, node_hash, t->nodes) != 0) return (size_t)-1;
  size_t *slot = hh_slots_find(&t->index, key_hash(parent, f), is_child, t->nodes, &(child_key){parent, f});
  if (*slot) return *slot - 1;
  if (t->n == t->cap) {
    mnode *grown = realloc(t->nodes, 2 * t->cap * sizeof *grown);
    if (!grown) return (size_t)-1;
    t->nodes = grown;
    t->cap *= 2;
  }
  size_t i = t->n++;
  t->nodes[i] = (mnode){.frame = f, .parent = parent, .next_sibling = t->nodes[parent].first_child};
  t->nodes[parent].first_child = i;
  *slot = i + 1;
  return i;
}

static int by_bytes_desc(const void *x, const void *y) {
  const mnode *a = *(const mnode *const *)x, *b = *(const mnode *const *)y;
  if (a->bytes != b->bytes) return a->bytes > b->bytes ? -1 : 1;
  return a->frame->ip < b->frame->ip ? -1 : a->frame->ip > b->frame->ip;
}

static void put_frame(FILE *out, const hh_frame *f) {
  char safe[4096 + 1];
  char *name = f->function ? hh_frame_name_dup(f) : NULL;
  /* ms_print drops a line's text from a '#' on (a comment) */
  for (char *c = name; c && *c; c++)
    if (*c == '#') *c = '_';
  fprintf(out, " 0x%" PRIX64 ": %s", f->ip, name ? name : "???");
  free(name);
  /* (escaped: a newline in a file's name broke the tree's line in two) */
  if (f->file)
    fprintf(out, " (%s:%" PRIu32 ")", hh_text_safe(hh_basename(f->file), safe, sizeof safe), f->line);
  else if (f->module)
    fprintf(out, " (in %s)", hh_text_safe(f->module, safe, sizeof safe));
}

static int put_tree(FILE *out, const mtree *t, size_t i, unsigned depth, uint64_t total) {
  const mnode *n = &t->nodes[i];
  size_t nchildren = 0;
  for (size_t k = n->first_child; k; k = t->nodes[k].next_sibling) nchildren++;
  const mnode **children = NULL;
  if (nchildren) {
    children = malloc(nchildren * sizeof *children);
    if (!children) return -1;
    size_t j = 0;
    for (size_t k = n->first_child; k; k = t->nodes[k].next_sibling) children[j++] = &t->nodes[k];
    qsort(children, nchildren, sizeof *children, by_bytes_desc);
  }
  size_t significant = 0;
  uint64_t below = 0;
  for (size_t j = 0; j < nchildren; j++) {
    if ((double)children[j]->bytes * 100.0 >= THRESHOLD_PERCENT * (double)total)
      significant++;
    else
      below += children[j]->bytes;
  }
  size_t insignificant = nchildren - significant;
  fprintf(out, "%*sn%zu: %" PRIu64, (int)depth, "", significant + (insignificant ? 1 : 0), n->bytes);
  if (i == 0)
    fputs(" (heap allocation functions) malloc/new/new[], --alloc-fns, etc.", out);
  else
    put_frame(out, n->frame);
  fputc('\n', out);
  int rc = 0;
  for (size_t j = 0; j < significant && rc == 0; j++)
    rc = put_tree(out, t, (size_t)(children[j] - t->nodes), depth + 1, total);
  if (insignificant)
    fprintf(out, "%*sn0: %" PRIu64 " in %zu place%s, all below massif's threshold (%.2f%%)\n", (int)depth + 1,
            "", below, insignificant, insignificant == 1 ? "" : "s", THRESHOLD_PERCENT);
  free(children);
  return rc;
}

/* The allocation tree of what the sites hold by `cost` (peak or leaked). */
static int put_heap_tree(FILE *out, const hh_profile *p, hh_cost cost) {
  mtree t = {.cap = 256};
  t.nodes = malloc(t.cap * sizeof *t.nodes);
  int rc = -1;
  if (!t.nodes) goto done;
  t.nodes[0] = (mnode){0};
  t.n = 1;
  const hh_frame *frames[HH_PROFILE_MAX_DEPTH];
  /* The tree is inverted: each site's innermost frame first, so sites
   * under one deep prefix each have a branch of their own (a node per
   * site and frame, up to 256). */
  uint64_t left = hh_profile_memory_left(p);
  for (size_t i = 0; i < p->nsamples; i++) {
    uint64_t bytes = hh_site_cost(hh_profile_site(p, i), cost);
    if (bytes == 0) continue;
    t.nodes[0].bytes += bytes;
    size_t node = 0;
    size_t nframes = hh_profile_frames(p, i, frames);
    for (size_t f = 0; f < nframes; f++) {
      node = child(&t, node, frames[f]);
      if (node == (size_t)-1) goto done;
      t.nodes[node].bytes += bytes;
    }
    if ((uint64_t)t.cap * sizeof *t.nodes + (uint64_t)t.index.n * sizeof *t.index.slot > left) {
      rc = HH_WRITE_LIMIT;
      goto done;
    }
  }
  rc = put_tree(out, &t, 0, 0, t.nodes[0].bytes);
done:
  free(t.nodes);
  hh_slots_free(&t.index);
  return rc;
}

enum { SNAP_EMPTY, SNAP_PEAK, SNAP_END };

typedef struct snap {
  uint64_t time_ns, bytes;
  int kind;
} snap;

static int by_time(const void *x, const void *y) {
  const snap *a = x, *b = y;
  if (a->time_ns != b->time_ns) return a->time_ns < b->time_ns ? -1 : 1;
  return a->kind - b->kind; /* at one time: the timeline, then the peak, then the end */
}

int hh_write_massif(FILE *out, const hh_profile *p, const char *cmd, size_t max_snapshots) {
  const hh_analysis *a = p->analysis;
  if (max_snapshots < 4) max_snapshots = 100;
  /* snapshot 0 (empty heap at 0), timeline points, the peak, the end */
  size_t room = max_snapshots - 3;
  size_t step = a->npoints > room ? (a->npoints + room - 1) / room : 1;
  snap *snaps = malloc((a->npoints / step + 4) * sizeof *snaps);
  if (!snaps) return -1;
  size_t n = 0;
  uint64_t end = a->duration_ns > a->peak_time_ns ? a->duration_ns : a->peak_time_ns;
  snaps[n++] = (snap){0, 0, SNAP_EMPTY};
  for (size_t i = 0; i < a->npoints; i += step) {
    /* the largest point of each group of `step` (a chart's rule: no peak lost) */
    hh_point best = a->timeline[i];
    for (size_t j = i + 1; j < i + step && j < a->npoints; j++)
      if (a->timeline[j].heap_bytes > best.heap_bytes) best = a->timeline[j];
    /* the peak snapshot stands for the group the peak is in; the heap back
     * at the peak's level later is a snapshot of its own (every point at
     * that level was left out: one rise where the chart drew three) */
    uint64_t next = i + step < a->npoints ? a->timeline[i + step].time_ns : UINT64_MAX;
    if (best.heap_bytes >= a->peak_bytes && a->timeline[i].time_ns <= a->peak_time_ns &&
        a->peak_time_ns < next)
      continue;
    if (best.time_ns >= end) continue; /* the timeline's end point: the end snapshot's */
    snaps[n++] = (snap){best.time_ns, best.heap_bytes, SNAP_EMPTY};
  }
  snaps[n++] = (snap){a->peak_time_ns, a->peak_bytes, SNAP_PEAK};
  snaps[n++] = (snap){end, a->leaked_bytes, SNAP_END};
  qsort(snaps, n, sizeof *snaps, by_time);

  char buf[320], sbuf[160];
  const char *note = hh_trace_note(p->analysis, buf, sizeof buf);
  const char *sampled = hh_sampled_note(p->analysis, sbuf, sizeof sbuf);
  fprintf(out, "desc: heaphook trace (heap bytes requested; allocator overhead not recorded)%s%s%s%s\n",
          sampled ? "; " : "", sampled ? sampled : "", note ? "; " : "", note ? note : "");
  /* the program's own text escaped as in the report (ms_print shows it
   * raw: an ESC in an argument reached the terminal) */
  size_t safe_size = 4 * strlen(cmd) + 1;
  char *safe = malloc(safe_size);
  if (!safe) {
    free(snaps);
    return -1;
  }
  fputs("cmd: ", out);
  for (const char *c = hh_text_safe(cmd, safe, safe_size); *c; c++) fputc(*c == '#' ? ' ' : *c, out);
  free(safe);
  fputs("\ntime_unit: ms\n", out);
  int rc = 0;
  for (size_t i = 0; i < n && rc == 0; i++) {
    fprintf(out,
            "#-----------\nsnapshot=%zu\n#-----------\ntime=%" PRIu64 ".%03" PRIu64 "\nmem_heap_B=%" PRIu64
            "\nmem_heap_extra_B=0\nmem_stacks_B=0\n",
            i, snaps[i].time_ns / 1000000, snaps[i].time_ns / 1000 % 1000, snaps[i].bytes);
    switch (snaps[i].kind) {
      case SNAP_EMPTY:
        fputs("heap_tree=empty\n", out);
        break;
      case SNAP_PEAK:
        fputs("heap_tree=peak\n", out);
        rc = put_heap_tree(out, p, HH_COST_PEAK);
        break;
      case SNAP_END:
        fputs("heap_tree=detailed\n", out);
        rc = put_heap_tree(out, p, HH_COST_LEAKED);
        break;
    }
  }
  free(snaps);
  return rc;
}
