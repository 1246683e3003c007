/* The HTML report's writer (html_page.h): the page template with the
 * analysis as one JSON object:
 *
 *   { "version": 1, "title", "command", "status", "exec" (the program the
 *     process exec'd where its trace ends, or null), "sampled", "duration_ns",
 *     "totals": {allocations, frees, reallocs, allocation_calls, bytes_allocated, temporary,
 *                peak_bytes, peak_blocks, peak_time_ns, leaked_bytes, leaked_blocks},
 *     "sites": [{"id", "f": [frame index, innermost first], "a" allocations,
 *                "b" bytes, "t" temporary, "p" peak bytes, "pb" peak blocks,
 *                "l" leaked bytes, "lb" leaked blocks}],
 *     "sites_total", "site_cap",
 *     "frames": [[function, file, line, module, inlined, module_offset]]
 *                (strings as indexes into "strings", -1 for none),
 *     "strings": [...],
 *     "timeline": [[ns, heap bytes]], "rss": [[ns, bytes]], "markers": [[ns, name]],
 *     "histogram": [[bucket, count, bytes]] (non-empty buckets),
 *     "threads": [{index, tid, name, allocations, frees, bytes, peak_bytes,
 *                  temporary, leaked_bytes, leaked_blocks}],
 *     "frag": {present, sampled (true: a sampled trace, no map), blocks, bytes, gap,
 *              regions_total, hidden_bytes,
 *              regions: [{start, end ("0x.." strings), used, count, cell,
 *                         u: [bytes occupied per cell], n: [blocks starting per cell]}]} }
 *
 * Escaping: strings are JSON with <, >, & and U+2028/9 as \u escapes (so
 * neither "</script>" nor "<!--" can appear inside the script element) and
 * invalid UTF-8 replaced by U+FFFD; the title is HTML-escaped. The page's JS
 * only ever puts data into the document as text (textContent, attributes). */
#define _GNU_SOURCE
#include "html_page.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"

#define MAX_FRAMES 512
/* Fragmentation map: blocks closer than GAP belong to one region; at most
 * MAX_REGIONS regions (the largest by bytes occupied) are drawn, each with at
 * most MAX_CELLS_REGION cells and all of them with at most MAX_CELLS. */
#define FRAG_GAP (4u << 20)
#define FRAG_MAX_REGIONS 64
#define FRAG_MAX_CELLS_REGION 4096
#define FRAG_MAX_CELLS 65536

/* ---- JSON output ------------------------------------------------------------ */

static void put_u64(FILE *out, uint64_t v) { fprintf(out, "%" PRIu64, v); }

/* A JSON string, safe inside the <script> element. */
static void put_string(FILE *out, const char *s) { hh_json_put_string(out, s, HH_JSON_SCRIPT); }

/* Element i of an array of [x, y] pairs. */
static void put_pair(FILE *out, size_t i, uint64_t x, uint64_t y) {
  fprintf(out, "%s[%" PRIu64 ",%" PRIu64 "]", i ? "," : "", x, y);
}

static void put_hex(FILE *out, uint64_t v) { fprintf(out, "\"0x%" PRIx64 "\"", v); }

/* ---- interning: strings and frames --------------------------------------- */

static uint64_t hash_bytes(const void *p, size_t n, uint64_t h) {
  const unsigned char *b = p;
  for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 0x100000001b3ull;
  return h;
}

typedef struct strtab {
  const char **items; /* by index */
  size_t n, cap;
  uint32_t *slots; /* index + 1; 0 empty */
  size_t nslots;
} strtab;

typedef struct frame_key {
  int32_t function, file, module;
  uint32_t line;
  uint32_t inlined;
  uint64_t offset; /* module offset, only when the function is unknown */
} frame_key;

typedef struct frametab {
  frame_key *items;
  size_t n, cap;
  uint32_t *slots;
  size_t nslots;
} frametab;

static bool grow_slots(uint32_t **slots, size_t *nslots, size_t n) {
  if (n * 2 < *nslots) return true;
  size_t ns = *nslots ? *nslots * 2 : 1024;
  free(*slots);
  *slots = calloc(ns, sizeof **slots);
  *nslots = ns;
  return *slots != NULL;
}

static uint64_t str_hash(const char *s) { return hash_bytes(s, strlen(s), 0xcbf29ce484222325ull); }

/* Index of s (-1 for NULL; -2 when out of memory). */
static int32_t strtab_get(strtab *t, const char *s) {
  if (!s) return -1;
  if ((t->n + 1) * 2 >= t->nslots) {
    size_t before = t->nslots;
    if (!grow_slots(&t->slots, &t->nslots, t->n + 1)) return -2;
    if (t->nslots != before) {
      /* grow_slots cleared the table: put every item back */
      for (size_t i = 0; i < t->n; i++) {
        size_t j = str_hash(t->items[i]) & (t->nslots - 1);
        while (t->slots[j]) j = (j + 1) & (t->nslots - 1);
        t->slots[j] = (uint32_t)i + 1;
      }
    }
  }
  size_t j = str_hash(s) & (t->nslots - 1);
  while (t->slots[j]) {
    if (strcmp(t->items[t->slots[j] - 1], s) == 0) return (int32_t)t->slots[j] - 1;
    j = (j + 1) & (t->nslots - 1);
  }
  if (t->n == t->cap) {
    size_t nc = t->cap ? t->cap * 2 : 256;
    const char **ni = realloc(t->items, nc * sizeof *ni);
    if (!ni) return -2;
    t->items = ni;
    t->cap = nc;
  }
  t->items[t->n] = s;
  t->slots[j] = (uint32_t)++t->n;
  return (int32_t)t->n - 1;
}

static uint64_t frame_hash(const frame_key *k) {
  uint64_t h = 0xcbf29ce484222325ull;
  h = hash_bytes(&k->function, sizeof k->function, h);
  h = hash_bytes(&k->file, sizeof k->file, h);
  h = hash_bytes(&k->module, sizeof k->module, h);
  h = hash_bytes(&k->line, sizeof k->line, h);
  h = hash_bytes(&k->inlined, sizeof k->inlined, h);
  h = hash_bytes(&k->offset, sizeof k->offset, h);
  return h;
}

static bool frame_eq(const frame_key *a, const frame_key *b) {
  return a->function == b->function && a->file == b->file && a->module == b->module && a->line == b->line &&
         a->inlined == b->inlined && a->offset == b->offset;
}

static int64_t frametab_get(frametab *t, const frame_key *k) {
  if ((t->n + 1) * 2 >= t->nslots) {
    size_t before = t->nslots;
    if (!grow_slots(&t->slots, &t->nslots, t->n + 1)) return -1;
    if (t->nslots != before) {
      for (size_t i = 0; i < t->n; i++) {
        size_t j = frame_hash(&t->items[i]) & (t->nslots - 1);
        while (t->slots[j]) j = (j + 1) & (t->nslots - 1);
        t->slots[j] = (uint32_t)i + 1;
      }
    }
  }
  size_t j = frame_hash(k) & (t->nslots - 1);
  while (t->slots[j]) {
    if (frame_eq(&t->items[t->slots[j] - 1], k)) return t->slots[j] - 1;
    j = (j + 1) & (t->nslots - 1);
  }
  if (t->n == t->cap) {
    size_t nc = t->cap ? t->cap * 2 : 256;
    frame_key *ni = realloc(t->items, nc * sizeof *ni);
    if (!ni) return -1;
    t->items = ni;
    t->cap = nc;
  }
  t->items[t->n] = *k;
  t->slots[j] = (uint32_t)++t->n;
  return (int64_t)t->n - 1;
}

/* ---- call sites ------------------------------------------------------------ */

static uint64_t site_cost(const hh_site *s, int cost) {
  switch (cost) {
    case 0:
      return s->peak_bytes;
    case 1:
      return s->allocations;
    case 2:
      return s->temporary;
    case 3:
      return s->leaked_bytes;
    default:
      return s->bytes;
  }
}

static int sort_cost; /* qsort's context (one writer at a time) */
static const hh_site *sort_sites;

static int by_cost(const void *pa, const void *pb) {
  const hh_site *a = &sort_sites[*(const size_t *)pa], *b = &sort_sites[*(const size_t *)pb];
  uint64_t ca = site_cost(a, sort_cost), cb = site_cost(b, sort_cost);
  if (ca != cb) return ca > cb ? -1 : 1;
  for (int c = 0; c < 5; c++) { /* then by the other costs, then by stack id: a stable order */
    uint64_t x = site_cost(a, c), y = site_cost(b, c);
    if (x != y) return x > y ? -1 : 1;
  }
  return a->stack < b->stack ? -1 : a->stack > b->stack;
}

/* Marks the top `cap` sites by each cost in keep[]; returns the indexes of
 * the kept sites (by peak, then the others) in *order and their count. */
static size_t select_sites(const hh_analysis *a, size_t cap, size_t **order_out) {
  size_t n = a->nsites;
  size_t *idx = malloc((n ? n : 1) * sizeof *idx);
  bool *keep = calloc(n ? n : 1, 1);
  size_t *order = malloc((n ? n : 1) * sizeof *order);
  if (!idx || !keep || !order) {
    free(idx);
    free(keep);
    free(order);
    return SIZE_MAX;
  }
  sort_sites = a->sites;
  for (int cost = 4; cost >= 0; cost--) { /* ends sorted by peak (cost 0) */
    for (size_t i = 0; i < n; i++) idx[i] = i;
    sort_cost = cost;
    qsort(idx, n, sizeof *idx, by_cost);
    for (size_t i = 0; i < n && i < cap; i++)
      if (site_cost(&a->sites[idx[i]], cost) > 0) keep[idx[i]] = true;
  }
  size_t m = 0;
  for (size_t i = 0; i < n; i++)
    if (keep[idx[i]]) order[m++] = idx[i];
  free(idx);
  free(keep);
  *order_out = order;
  return m;
}

/* ---- the fragmentation map ------------------------------------------------- */

typedef struct region {
  size_t first, last; /* blocks [first, last] */
  uint64_t start, end, used;
} region;

static uint64_t block_end(const hh_live_block *b) {
  return b->addr + b->size < b->addr ? UINT64_MAX : b->addr + b->size;
}

static int by_used(const void *pa, const void *pb) {
  const region *a = pa, *b = pb;
  if (a->used != b->used) return a->used > b->used ? -1 : 1;
  return a->start < b->start ? -1 : a->start > b->start;
}

static int by_start(const void *pa, const void *pb) {
  const region *a = pa, *b = pb;
  return a->start < b->start ? -1 : a->start > b->start;
}

static int write_frag(FILE *out, const hh_analysis *a) {
  /* A sampled trace knows a sample of the blocks, each as the bytes it
   * stands for, not its own: drawn from its address, a 777-byte block
   * sampled at 4K covered 4.5 KiB, regions read "107.8% occupied", and the
   * note counted the samples where the cards count blocks. */
  if (a->sampled && a->sample_bytes > 1) {
    fprintf(out, "{\"present\":false,\"sampled\":true}");
    return 0;
  }
  const hh_live_block *bl = a->peak_block_list;
  size_t nb = bl ? a->npeak_blocks : 0;
  uint64_t total = 0;
  for (size_t i = 0; i < nb; i++) total += bl[i].size;
  fprintf(out, "{\"present\":%s,\"blocks\":", a->peak_block_list || a->npeak_blocks ? "true" : "false");
  put_u64(out, nb);
  fputs(",\"bytes\":", out);
  put_u64(out, total);
  fprintf(out, ",\"gap\":%u", FRAG_GAP);

  /* regions: runs of blocks with gaps below FRAG_GAP (blocks address-sorted;
   * any overlap of hostile input is tolerated) */
  size_t nr = 0, cap = 0;
  region *rs = NULL;
  for (size_t i = 0; i < nb; i++) {
    uint64_t s = bl[i].addr, e = block_end(&bl[i]);
    if (nr && s >= rs[nr - 1].start && (s <= rs[nr - 1].end || s - rs[nr - 1].end < FRAG_GAP)) {
      region *r = &rs[nr - 1];
      r->last = i;
      if (e > r->end) r->end = e;
      r->used += bl[i].size;
      continue;
    }
    if (nr == cap) {
      size_t nc = cap ? cap * 2 : 64;
      region *n2 = realloc(rs, nc * sizeof *n2);
      if (!n2) {
        free(rs);
        return -1;
      }
      rs = n2;
      cap = nc;
    }
    rs[nr++] = (region){i, i, s, e, bl[i].size};
  }
  size_t shown = nr < FRAG_MAX_REGIONS ? nr : FRAG_MAX_REGIONS;
  uint64_t hidden = 0;
  if (nr > shown) {
    qsort(rs, nr, sizeof *rs, by_used);
    for (size_t i = shown; i < nr; i++) hidden += rs[i].used;
    qsort(rs, shown, sizeof *rs, by_start);
  }
  fputs(",\"regions_total\":", out);
  put_u64(out, nr);
  fputs(",\"hidden_bytes\":", out);
  put_u64(out, hidden);
  fputs(",\"regions\":[", out);
  size_t cells_max = shown ? FRAG_MAX_CELLS / shown : FRAG_MAX_CELLS;
  if (cells_max > FRAG_MAX_CELLS_REGION) cells_max = FRAG_MAX_CELLS_REGION;
  uint64_t *used = malloc(cells_max * sizeof *used);
  uint64_t *count = malloc(cells_max * sizeof *count);
  if (!used || !count) {
    free(used);
    free(count);
    free(rs);
    return -1;
  }
  for (size_t ri = 0; ri < shown; ri++) {
    const region *r = &rs[ri];
    uint64_t span = r->end - r->start;
    uint64_t cell = 16;
    while (cell < (UINT64_C(1) << 62) && (span + cell - 1) / cell > cells_max) cell *= 2;
    size_t ncells = (size_t)((span + cell - 1) / cell);
    if (ncells == 0) ncells = 1;
    if (ncells > cells_max) ncells = cells_max;
    memset(used, 0, ncells * sizeof *used);
    memset(count, 0, ncells * sizeof *count);
    uint64_t covered = r->start; /* bytes below are counted: overlaps count once */
    for (size_t i = r->first; i <= r->last; i++) {
      uint64_t s = bl[i].addr, e = block_end(&bl[i]);
      size_t c0 = (size_t)((s - r->start) / cell);
      if (c0 >= ncells) c0 = ncells - 1;
      count[c0]++;
      if (s < covered) s = covered;
      if (e <= s) continue;
      covered = e;
      for (size_t c = (size_t)((s - r->start) / cell); c < ncells; c++) {
        uint64_t cs = r->start + c * cell, ce = cs + cell;
        if (cs >= e) break;
        uint64_t lo = s > cs ? s : cs, hi = e < ce ? e : ce;
        used[c] += hi - lo;
      }
    }
    fputs(ri ? ",{\"start\":" : "{\"start\":", out);
    put_hex(out, r->start);
    fputs(",\"end\":", out);
    put_hex(out, r->end);
    fputs(",\"used\":", out);
    put_u64(out, r->used);
    fputs(",\"count\":", out);
    put_u64(out, r->last - r->first + 1);
    fputs(",\"cell\":", out);
    put_u64(out, cell);
    fputs(",\"u\":[", out);
    for (size_t c = 0; c < ncells; c++) {
      if (c) fputc(',', out);
      put_u64(out, used[c]);
    }
    fputs("],\"n\":[", out);
    for (size_t c = 0; c < ncells; c++) {
      if (c) fputc(',', out);
      put_u64(out, count[c]);
    }
    fputs("]}", out);
  }
  fputs("]}", out);
  free(used);
  free(count);
  free(rs);
  return 0;
}

/* ---- the page ---------------------------------------------------------------- */

static int write_data(FILE *out, const hh_html_input *in) {
  const hh_analysis *a = in->a;
  int rc = -1;
  strtab strs = {0};
  frametab frames = {0};
  size_t *order = NULL;

  fputs("{\"version\":1,\"title\":", out);
  put_string(out, in->trace_name ? in->trace_name : "");
  fputs(",\"command\":", out);
  put_string(out, in->command);
  fputs(",\"status\":", out);
  put_string(out, a->status != HH_READ_OK && a->status_message ? a->status_message : NULL);
  fputs(",\"exec\":", out);
  put_string(out, a->reader ? hh_reader_exec(a->reader) : NULL);
  fprintf(out, ",\"sampled\":%s,\"temporary_known\":%s,\"duration_ns\":", a->sampled ? "true" : "false",
          a->temporary_known ? "true" : "false");
  put_u64(out, a->duration_ns);
  fputs(",\n\"totals\":{", out);
  const struct {
    const char *name;
    uint64_t v;
  } totals[] = {
      {"allocations", a->allocations},
      {"frees", a->frees},
      {"reallocs", a->reallocs},
      {"allocation_calls", a->allocation_calls},
      {"bytes_allocated", a->bytes_allocated},
      {"temporary", a->temporary},
      {"peak_bytes", a->peak_bytes},
      {"peak_blocks", a->peak_blocks},
      {"peak_time_ns", a->peak_time_ns},
      {"leaked_bytes", a->leaked_bytes},
      {"leaked_blocks", a->leaked_blocks},
      {"events", a->events},
      {"unknown_frees", a->unknown_frees},
      {"late_events", a->late_events},
      {"sample_bytes", a->sample_bytes},
      {"peak_rss_bytes", a->peak_rss_bytes},
  };
  for (size_t i = 0; i < sizeof totals / sizeof *totals; i++) {
    fprintf(out, "%s\"%s\":", i ? "," : "", totals[i].name);
    put_u64(out, totals[i].v);
  }
  fputs("},\n\"sites\":[", out);

  size_t cap = in->site_cap ? in->site_cap : HH_HTML_SITE_CAP;
  size_t nsel = select_sites(a, cap, &order);
  if (nsel == SIZE_MAX) goto done;
  const hh_frame *fr[MAX_FRAMES];
  for (size_t k = 0; k < nsel; k++) {
    const hh_site *s = &a->sites[order[k]];
    size_t nf = s->stack && in->stack ? in->stack(in->stack_arg, s->stack, fr, MAX_FRAMES) : 0;
    fputs(k ? ",\n{\"id\":" : "\n{\"id\":", out);
    put_u64(out, s->stack);
    fputs(",\"f\":[", out);
    for (size_t i = 0; i < nf; i++) {
      const hh_frame *f = fr[i];
      frame_key key = {strtab_get(&strs, f->function),
                       strtab_get(&strs, f->file),
                       strtab_get(&strs, f->module),
                       f->line,
                       f->inlined,
                       f->function ? 0 : f->module_offset};
      if (key.function == -2 || key.file == -2 || key.module == -2) goto done;
      if (!f->module && !f->function) key.offset = f->ip;
      int64_t fi = frametab_get(&frames, &key);
      if (fi < 0) goto done;
      fprintf(out, "%s%" PRId64, i ? "," : "", fi);
    }
    fputs("],\"a\":", out);
    put_u64(out, s->allocations);
    fputs(",\"b\":", out);
    put_u64(out, s->bytes);
    fputs(",\"t\":", out);
    put_u64(out, s->temporary);
    fputs(",\"p\":", out);
    put_u64(out, s->peak_bytes);
    fputs(",\"pb\":", out);
    put_u64(out, s->peak_blocks);
    fputs(",\"l\":", out);
    put_u64(out, s->leaked_bytes);
    fputs(",\"lb\":", out);
    put_u64(out, s->leaked_blocks);
    fputc('}', out);
  }
  fputs("],\n\"sites_total\":", out);
  put_u64(out, a->nsites);
  fputs(",\"site_cap\":", out);
  put_u64(out, cap);

  /* threads' and markers' names go in as plain strings */
  fputs(",\n\"frames\":[", out);
  for (size_t i = 0; i < frames.n; i++) {
    const frame_key *k = &frames.items[i];
    fprintf(out, "%s[%" PRId32 ",%" PRId32 ",%" PRIu32 ",%" PRId32 ",%u,", i ? ",\n" : "", k->function,
            k->file, k->line, k->module, k->inlined ? 1u : 0u);
    put_u64(out, k->offset);
    fputc(']', out);
  }
  fputs("],\n\"strings\":[", out);
  for (size_t i = 0; i < strs.n; i++) {
    if (i) fputs(",\n", out);
    put_string(out, strs.items[i]);
  }
  fputs("],\n\"timeline\":[", out);
  for (size_t i = 0; i < a->npoints; i++) put_pair(out, i, a->timeline[i].time_ns, a->timeline[i].heap_bytes);
  fputs("],\n\"rss\":[", out);
  for (size_t i = 0; i < a->nrss; i++) put_pair(out, i, a->rss[i].time_ns, a->rss[i].rss_bytes);
  fputs("],\n\"markers\":[", out);
  for (size_t i = 0; i < a->nmarkers; i++) {
    fputs(i ? ",[" : "[", out);
    put_u64(out, a->markers[i].time_ns);
    fputc(',', out);
    put_string(out, a->markers[i].name ? a->markers[i].name : "");
    fputc(']', out);
  }
  fputs("],\n\"histogram\":[", out);
  bool first = true;
  for (int i = 0; i < HH_HISTOGRAM_BUCKETS; i++) {
    if (!a->histogram.count[i]) continue;
    fprintf(out, "%s[%d,", first ? "" : ",", i);
    put_u64(out, a->histogram.count[i]);
    fputc(',', out);
    put_u64(out, a->histogram.bytes[i]);
    fputc(']', out);
    first = false;
  }
  fputs("],\n\"threads\":[", out);
  for (size_t i = 0; i < a->nthreads; i++) {
    const hh_thread_stats *t = &a->threads[i];
    fprintf(out, "%s{\"index\":%" PRIu32 ",\"tid\":", i ? "," : "", t->index);
    put_u64(out, t->tid);
    fputs(",\"name\":", out);
    put_string(out, t->name ? t->name : "");
    fputs(",\"allocations\":", out);
    put_u64(out, t->allocations);
    fputs(",\"frees\":", out);
    put_u64(out, t->frees);
    fputs(",\"bytes\":", out);
    put_u64(out, t->bytes);
    fputs(",\"peak_bytes\":", out);
    put_u64(out, t->peak_bytes);
    fputs(",\"temporary\":", out);
    put_u64(out, t->temporary);
    fputs(",\"leaked_bytes\":", out);
    put_u64(out, t->leaked_bytes);
    fputs(",\"leaked_blocks\":", out);
    put_u64(out, t->leaked_blocks);
    fputc('}', out);
  }
  fputs("],\n\"frag\":", out);
  if (write_frag(out, a) != 0) goto done;
  fputs("}", out);
  rc = 0;
done:
  free(order);
  free(strs.items);
  free(strs.slots);
  free(frames.items);
  free(frames.slots);
  return rc;
}

/* Writes template bytes [from, to) of page.html, replacing each @@NAME@@. */
static int write_template(FILE *out, const hh_html_input *in) {
  const char *t = (const char *)hh_asset_page_html, *end = t + hh_asset_page_html_len;
  while (t < end) {
    const char *at = memmem(t, (size_t)(end - t), "@@", 2);
    if (!at) {
      fwrite(t, 1, (size_t)(end - t), out);
      break;
    }
    fwrite(t, 1, (size_t)(at - t), out);
    const char *close = memmem(at + 2, (size_t)(end - at - 2), "@@", 2);
    if (!close) {
      fwrite(at, 1, (size_t)(end - at), out);
      break;
    }
    size_t n = (size_t)(close - at - 2);
    const char *name = at + 2;
    if (n == 5 && memcmp(name, "TITLE", 5) == 0) {
      hh_xml_put_text(out, in->trace_name ? in->trace_name : "", HH_XML_HTML);
    } else if (n == 5 && memcmp(name, "STYLE", 5) == 0) {
      fwrite(hh_asset_page_css, 1, hh_asset_page_css_len, out);
    } else if (n == 6 && memcmp(name, "SCRIPT", 6) == 0) {
      fwrite(hh_asset_page_js, 1, hh_asset_page_js_len, out);
    } else if (n == 4 && memcmp(name, "DATA", 4) == 0) {
      if (write_data(out, in) != 0) return -1;
    } else {
      fwrite(at, 1, (size_t)(close + 2 - at), out);
    }
    t = close + 2;
  }
  return 0;
}

int hh_html_write(FILE *out, const hh_html_input *in) {
  if (write_template(out, in) != 0) {
    errno = ENOMEM;
    return -1;
  }
  if (fflush(out) != 0 || ferror(out)) return -1;
  return 0;
}
