/* Collapsed stacks and the SVG flame graph (render.h). Both fold a
 * profile's sites into paths of function names, outermost first; the flame
 * graph is written as SVG text directly (cairo's SVG surface cannot attach
 * the <title> elements that give each box its hover text). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "render.h"
#include "slots.h"

#define NAME_MAX_LEN 1024

/* ---- frame names ----------------------------------------------------------
 * Made once per frame pointer (the symbolizer's pointers repeat: a name
 * made per frame of every site was a third of the time for ~1M deep
 * stacks) and kept once per distinct name. */

typedef struct name_of {
  const hh_frame *f;
  const char *name;
} name_of;

typedef struct names {
  name_of *of; /* frame pointer -> name */
  size_t nof, of_cap;
  hh_slots of_index;
  char **strings; /* the distinct names */
  size_t nstrings, strings_cap;
  hh_slots strings_index;
} names;

static uint64_t hash_ptr(const void *p, uint64_t seed) {
  uint64_t h = ((uint64_t)(uintptr_t)p ^ seed) * 0x9e3779b97f4a7c15ull;
  return h ^ (h >> 29);
}

static uint64_t hash_name(size_t parent, const char *name) {
  uint64_t h = 1469598103934665603ull ^ (parent * 0x9e3779b97f4a7c15ull);
  for (; *name; name++) h = (h ^ (unsigned char)*name) * 1099511628211ull;
  return h;
}

static uint64_t of_hash(const void *items, size_t i) { return hash_ptr(((const name_of *)items)[i].f, 0); }
static bool is_of(const void *items, size_t i, const void *key) {
  return ((const name_of *)items)[i].f == key;
}
static uint64_t string_hash(const void *items, size_t i) { return hash_name(0, ((char *const *)items)[i]); }
static bool is_string(const void *items, size_t i, const void *key) {
  return strcmp(((char *const *)items)[i], key) == 0;
}

/* The shared name of frame f; NULL when out of memory. */
static const char *name_get(names *n, const hh_frame *f) {
  if (hh_slots_fit(&n->of_index, n->nof, 256, 0, of_hash, n->of) != 0) return NULL;
  size_t *slot = hh_slots_find(&n->of_index, hash_ptr(f, 0), is_of, n->of, f);
  if (*slot) return n->of[*slot - 1].name;
  if (n->nof == n->of_cap) {
    size_t cap = n->of_cap ? 2 * n->of_cap : 256;
    name_of *grown = realloc(n->of, cap * sizeof *grown);
    if (!grown) return NULL;
    n->of = grown;
    n->of_cap = cap;
  }
  char *name = hh_frame_name_dup(f);
  if (!name) return NULL;
  if (hh_slots_fit(&n->strings_index, n->nstrings, 256, 0, string_hash, n->strings) != 0) {
    free(name);
    return NULL;
  }
  size_t *s = hh_slots_find(&n->strings_index, hash_name(0, name), is_string, n->strings, name);
  if (*s) {
    free(name);
  } else {
    if (n->nstrings == n->strings_cap) {
      size_t cap = n->strings_cap ? 2 * n->strings_cap : 256;
      char **grown = realloc(n->strings, cap * sizeof *grown);
      if (!grown) {
        free(name);
        return NULL;
      }
      n->strings = grown;
      n->strings_cap = cap;
    }
    n->strings[n->nstrings] = name;
    *s = ++n->nstrings;
  }
  n->of[n->nof] = (name_of){f, n->strings[*s - 1]};
  *slot = ++n->nof;
  return n->strings[*s - 1];
}

static void names_free(names *n) {
  for (size_t i = 0; i < n->nstrings; i++) free(n->strings[i]);
  free(n->strings);
  free(n->of);
  hh_slots_free(&n->of_index);
  hh_slots_free(&n->strings_index);
}

/* ---- collapsed stacks ----------------------------------------------------- */

typedef struct path_cost {
  char *path;
  uint64_t cost;
} path_cost;

static int by_path(const void *x, const void *y) {
  return strcmp(((const path_cost *)x)->path, ((const path_cost *)y)->path);
}

/* "outer;...;inner" for sample k (malloc'd, no longer than it needs), or
 * NULL when out of memory. */
static char *sample_path(const hh_profile *p, size_t k, names *names) {
  const hh_frame *frames[HH_PROFILE_MAX_DEPTH];
  size_t nframes = hh_profile_frames(p, k, frames);
  size_t cap = 256, len = 0;
  char *path = malloc(cap);
  if (!path) return NULL;
  path[0] = 0;
  for (size_t i = nframes; i-- > 0;) {
    const char *name = name_get(names, frames[i]);
    if (!name) {
      free(path);
      return NULL;
    }
    size_t n = strlen(name);
    if (len + n + 2 > cap) {
      while (len + n + 2 > cap) cap *= 2;
      char *grown = realloc(path, cap);
      if (!grown) {
        free(path);
        return NULL;
      }
      path = grown;
    }
    if (len) path[len++] = ';';
    memcpy(path + len, name, n + 1);
    len += n;
  }
  char *fit = realloc(path, len + 1);
  return fit ? fit : path;
}

int hh_write_collapsed(FILE *out, const hh_profile *p, hh_cost cost) {
  path_cost *lines = calloc(p->nsamples ? p->nsamples : 1, sizeof *lines);
  if (!lines) return -1;
  names names = {0};
  size_t n = 0;
  int rc = 0;
  /* the lines and their paths, each with malloc's 16 bytes (the names
   * are the symbolizer's, a few per frame) */
  uint64_t left = hh_profile_memory_left(p), held = (uint64_t)p->nsamples * sizeof *lines;
  for (size_t i = 0; i < p->nsamples; i++) {
    uint64_t c = hh_site_cost(hh_profile_site(p, i), cost);
    if (c == 0) continue;
    lines[n].path = sample_path(p, i, &names);
    if (!lines[n].path) {
      rc = -1;
      goto done;
    }
    lines[n++].cost = c;
    held += strlen(lines[n - 1].path) + 1 + 16;
    if (held > left) {
      rc = HH_WRITE_LIMIT;
      goto done;
    }
  }
  qsort(lines, n, sizeof *lines, by_path);
  for (size_t i = 0; i < n;) {
    uint64_t sum = 0;
    size_t j = i;
    for (; j < n && strcmp(lines[j].path, lines[i].path) == 0; j++) sum += lines[j].cost;
    fprintf(out, "%s %" PRIu64 "\n", lines[i].path, sum);
    i = j;
  }
done:
  for (size_t i = 0; i < n; i++) free(lines[i].path);
  free(lines);
  names_free(&names);
  return rc;
}

/* ---- the flame graph tree --------------------------------------------------
 * Node 0 is the root ("all"); every other node is a frame name under a
 * parent. A hash table on (parent, name) finds a node's child. Nodes share
 * the names (above) and compare them by pointer: a copy of the name per
 * node took ~220 MB for ~1M deep stacks by allocations. */

typedef struct fnode {
  const char *name; /* shared (names) */
  uint64_t cost;
  uint32_t parent;
  uint32_t first_child, next_sibling; /* 0: none (the root is nobody's child) */
  uint32_t depth;
} fnode;

typedef struct ftree {
  fnode *nodes;
  size_t n, cap;
  hh_slots index; /* (parent, name) -> node; the root is not in it */
  uint32_t max_depth;
  names names;
} ftree;

typedef struct child_key {
  size_t parent;
  const char *name;
} child_key;

static uint64_t node_hash(const void *nodes, size_t i) {
  const fnode *n = (const fnode *)nodes + i;
  return hash_ptr(n->name, n->parent);
}

static bool is_child(const void *nodes, size_t i, const void *key) {
  const fnode *n = (const fnode *)nodes + i;
  const child_key *k = key;
  return n->parent == k->parent && n->name == k->name;
}

/* The child `name` (a shared name) of `parent`, made when missing;
 * (size_t)-1 when out of memory. */
static size_t tree_child(ftree *t, size_t parent, const char *name) {
  if (hh_slots_fit(&t->index, t->n, 1024, 1, node_hash, t->nodes) != 0) return (size_t)-1;
  size_t *slot =
      hh_slots_find(&t->index, hash_ptr(name, parent), is_child, t->nodes, &(child_key){parent, name});
  if (*slot) return *slot - 1;
  if (t->n == UINT32_MAX) return (size_t)-1; /* (nodes are numbered in 32 bits) */
  if (t->n == t->cap) {
    size_t cap = t->cap * 2;
    fnode *grown = realloc(t->nodes, cap * sizeof *grown);
    if (!grown) return (size_t)-1;
    t->nodes = grown;
    t->cap = cap;
  }
  size_t i = t->n++;
  fnode *pn = &t->nodes[parent];
  t->nodes[i] = (fnode){
      .name = name, .parent = (uint32_t)parent, .next_sibling = pn->first_child, .depth = pn->depth + 1};
  pn->first_child = (uint32_t)i;
  if (t->nodes[i].depth > t->max_depth) t->max_depth = t->nodes[i].depth;
  *slot = i + 1;
  return i;
}

static void tree_free(ftree *t) {
  free(t->nodes);
  hh_slots_free(&t->index);
  names_free(&t->names);
}

static int tree_build(ftree *t, const hh_profile *p, hh_cost cost) {
  memset(t, 0, sizeof *t);
  t->cap = 256;
  t->nodes = malloc(t->cap * sizeof *t->nodes);
  if (!t->nodes) return -1;
  t->nodes[0] = (fnode){.name = "all"};
  t->n = 1;
  const hh_frame *frames[HH_PROFILE_MAX_DEPTH];
  for (size_t i = 0; i < p->nsamples; i++) {
    uint64_t c = hh_site_cost(hh_profile_site(p, i), cost);
    if (c == 0) continue;
    size_t node = 0;
    t->nodes[0].cost += c;
    for (size_t f = hh_profile_frames(p, i, frames); f-- > 0;) {
      const char *name = name_get(&t->names, frames[f]);
      if (!name) return -1;
      node = tree_child(t, node, name);
      if (node == (size_t)-1) return -1;
      t->nodes[node].cost += c;
    }
  }
  return 0;
}

/* ---- SVG ------------------------------------------------------------------ */

enum { SVG_WIDTH = 1200, FRAME_H = 16, PAD = 10, TITLE_H = 40, NOTE_H = 18, CHAR_W = 7 };

/* The unit after a count of n (a count of one in the singular). */
static const char *cost_unit(hh_cost cost, uint64_t n) {
  if (cost == HH_COST_ALLOCATIONS || cost == HH_COST_TEMPORARY) return n == 1 ? "allocation" : "allocations";
  return n == 1 ? "byte" : "bytes";
}

/* flamegraph.pl's warm palette, from a hash of the name (stable colors). */
static void color_of(const char *name, int *r, int *g, int *b) {
  uint64_t h = hash_name(0, name);
  *r = 205 + (int)(h % 51);
  *g = (int)((h >> 8) % 231);
  *b = (int)((h >> 16) % 56);
}

typedef struct svg_ctx {
  FILE *out;
  const ftree *t;
  hh_cost cost;
  double scale; /* pixels per unit of cost */
  int height;
} svg_ctx;

static int by_name_desc(const void *x, const void *y) {
  /* children come out of the tree newest first; sort them by name */
  const fnode *a = *(const fnode *const *)x, *b = *(const fnode *const *)y;
  return strcmp(a->name, b->name);
}

static int draw(svg_ctx *c, size_t i, double x) {
  const fnode *n = &c->t->nodes[i];
  double w = (double)n->cost * c->scale;
  if (w < 0.1) return 0; /* too narrow to see: left to its parent's box */
  double y = c->height - PAD - (double)(n->depth + 1) * FRAME_H;
  int r, g, b;
  if (i == 0)
    r = 230, g = 230, b = 230;
  else
    color_of(n->name, &r, &g, &b);
  double total = (double)c->t->nodes[0].cost;
  fprintf(c->out, "<g class=\"f\"><title>");
  hh_xml_put_text(c->out, n->name, 0);
  fprintf(c->out, " (%" PRIu64 " %s, %.2f%%)</title>", n->cost, cost_unit(c->cost, n->cost),
          total > 0 ? 100.0 * (double)n->cost / total : 0.0);
  fprintf(c->out,
          "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%d\" fill=\"rgb(%d,%d,%d)\" rx=\"2\"/>", x, y,
          w, FRAME_H - 1, r, g, b);
  size_t fit = w > 3 * CHAR_W ? (size_t)((w - 6) / CHAR_W) : 0;
  if (fit >= 3) {
    char label[NAME_MAX_LEN];
    size_t len = strlen(n->name);
    if (len <= fit) {
      snprintf(label, sizeof label, "%s", n->name);
    } else {
      size_t keep = hh_utf8_cut(n->name, fit - 2 < sizeof label - 3 ? fit - 2 : sizeof label - 3);
      memcpy(label, n->name, keep); /* (cut at a character's end: XML must stay UTF-8) */
      memcpy(label + keep, "..", 3);
    }
    fprintf(c->out, "<text x=\"%.1f\" y=\"%.1f\">", x + 3, y + FRAME_H - 4);
    hh_xml_put_text(c->out, label, 0);
    fputs("</text>", c->out);
  }
  fputs("</g>\n", c->out);

  size_t nchildren = 0;
  for (size_t k = n->first_child; k; k = c->t->nodes[k].next_sibling) nchildren++;
  if (nchildren == 0) return 0;
  const fnode **children = malloc(nchildren * sizeof *children);
  if (!children) return -1;
  size_t j = 0;
  for (size_t k = n->first_child; k; k = c->t->nodes[k].next_sibling) children[j++] = &c->t->nodes[k];
  qsort(children, nchildren, sizeof *children, by_name_desc);
  int rc = 0;
  for (j = 0; j < nchildren && rc == 0; j++) {
    rc = draw(c, (size_t)(children[j] - c->t->nodes), x);
    x += (double)children[j]->cost * c->scale;
  }
  free(children);
  return rc;
}

int hh_write_flame_svg(FILE *out, const hh_profile *p, hh_cost cost, const char *title) {
  ftree t;
  if (tree_build(&t, p, cost) != 0) {
    tree_free(&t);
    return -1;
  }
  char buf[320], sbuf[160];
  const char *note = hh_trace_note(p->analysis, buf, sizeof buf);
  const char *sampled = hh_sampled_note(p->analysis, sbuf, sizeof sbuf);
  int title_h = TITLE_H + (note ? NOTE_H : 0) + (sampled ? NOTE_H : 0);
  int height = title_h + (int)(t.max_depth + 1) * FRAME_H + 2 * PAD;
  fprintf(out,
          "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
          "<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
          "viewBox=\"0 0 %d %d\">\n"
          "<style>text{font-family:Verdana,sans-serif;font-size:12px;fill:#000;pointer-events:none}"
          "g.f:hover rect{stroke:#000;stroke-width:0.5}</style>\n"
          "<rect x=\"0\" y=\"0\" width=\"100%%\" height=\"100%%\" fill=\"#f8f8f8\"/>\n"
          "<text x=\"%d\" y=\"24\" text-anchor=\"middle\" style=\"font-size:16px\">",
          SVG_WIDTH, height, SVG_WIDTH, height, SVG_WIDTH / 2);
  hh_xml_put_text(out, title, 0);
  fputs("</text>\n", out);
  if (note) {
    fprintf(out, "<text x=\"%d\" y=\"%d\" style=\"fill:#b00\">", PAD, TITLE_H);
    hh_xml_put_text(out, note, 0);
    fputs("</text>\n", out);
  }
  if (sampled) {
    fprintf(out, "<text x=\"%d\" y=\"%d\">", PAD, TITLE_H + (note ? NOTE_H : 0));
    hh_xml_put_text(out, sampled, 0);
    fputs("</text>\n", out);
  }
  fprintf(out, "<text x=\"%d\" y=\"%d\">%s: %" PRIu64 " %s in all</text>\n", PAD, title_h - 4,
          hh_cost_name(cost), t.nodes[0].cost, cost_unit(cost, t.nodes[0].cost));
  svg_ctx c = {.out = out, .t = &t, .cost = cost, .height = height};
  c.scale = t.nodes[0].cost ? (double)(SVG_WIDTH - 2 * PAD) / (double)t.nodes[0].cost : 0;
  int rc = t.nodes[0].cost ? draw(&c, 0, PAD) : 0;
  fputs("</svg>\n", out);
  tree_free(&t);
  return rc;
}
