/* `heaphook diff A B`: what grew and what shrank between two traces, by
 * call site. Stack ids differ between traces, so sites are matched by their
 * symbolized, folded stacks (function names outermost to innermost,
 * allocator frames left out; hh_report_site_key): sites of one trace with
 * the same key are added up. */
#define _GNU_SOURCE
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "load.h"
#include "report_common.h"
#include "slots.h"
#include "trace/strset.h"
#include "trace/xalloc.h"

static const char usage[] =
    "usage: heaphook diff [--json] [--top N] [--frames N] A B\n"
    "\n"
    "Compares two traces (e.g. before and after a change) call site by call site:\n"
    "allocations, bytes allocated, temporary allocations, bytes at the peak and bytes\n"
    "leaked at exit in A, in B, and the difference B - A. Call sites are matched by\n"
    "their stacks' function names (stack ids and line numbers may differ between the\n"
    "runs), and listed by the size of the change of their bytes at the peak: first\n"
    "what grew, then what shrank. A totals line compares the whole runs.\n"
    "\n"
    "Exits 1 when either trace is cut short or damaged (after printing the diff).\n"
    "\n"
    "options:\n"
    "  --json       the same content as JSON (docs/report-json.md, \"heaphook-diff\")\n"
    "  --top N      call sites per list (default 20; 0: all)\n"
    "  --frames N   stack frames shown per call site (default 5; 0: all)\n"
    "  -h, --help   this help\n";

typedef struct side {
  uint64_t allocations, bytes, peak_bytes, leaked_bytes, leaked_blocks, temporary;
} side;

typedef struct row {
  uint64_t hash; /* of the key */
  /* the key, made for the rows listed; the others' keys are made again
   * from their representative stack when compared (one string per site
   * was ~250 bytes a site for ~1M deep stacks) */
  char *key;
  side v[2];
  /* a representative stack, for the key and the frames shown */
  int trace;
  uint64_t stack;
} row;

typedef struct input {
  const char *path;
  hh_loaded l;
} input;

typedef struct rows {
  row *v;
  size_t n, cap;
  hh_slots index; /* key -> row */
  input *in;
  char *scratch; /* a row's key made again */
  size_t scratch_cap;
} rows;

/* the key looked for */
typedef struct key_ref {
  rows *t;
  uint64_t hash;
  const char *key;
  size_t len;
} key_ref;

static uint64_t row_hash(const void *rows, size_t i) { return ((const row *)rows)[i].hash; }

static bool is_row(const void *rows, size_t i, const void *key) {
  const row *r = (const row *)rows + i;
  const key_ref *k = key;
  if (r->hash != k->hash) return false;
  input *in = &k->t->in[r->trace];
  size_t len = hh_report_site_key_into(in->l.sym, in->l.reader, r->stack, &k->t->scratch, &k->t->scratch_cap);
  return len == k->len && memcmp(k->t->scratch, k->key, len) == 0;
}

/* The row of the key in key[0..len), made when missing. */
static row *rows_get(rows *t, const char *key, size_t len, int trace, uint64_t stack) {
  if (hh_slots_fit(&t->index, t->n, 256, 0, row_hash, t->v) != 0) abort();
  key_ref ref = {t, hh_hash_bytes(key, len), key, len};
  size_t *slot = hh_slots_find(&t->index, ref.hash, is_row, t->v, &ref);
  if (*slot) return &t->v[*slot - 1];
  if (t->n == t->cap) {
    t->cap = t->cap ? t->cap * 2 : 256;
    t->v = xrealloc(t->v, t->cap * sizeof *t->v);
  }
  row *r = &t->v[t->n];
  memset(r, 0, sizeof *r);
  r->hash = ref.hash;
  r->trace = trace;
  r->stack = stack;
  *slot = ++t->n;
  return r;
}

static void warn_cb(void *arg, const char *message) {
  fprintf(stderr, "heaphook diff: warning: %s: %s\n", (const char *)arg, message);
}

static int64_t delta(uint64_t a, uint64_t b) { return (int64_t)(b - a); }
static uint64_t mag(int64_t d) { return d < 0 ? (uint64_t)0 - (uint64_t)d : (uint64_t)d; }

/* A row's changes (B - A) in the order that ranks them: peak bytes, leaked
 * bytes, bytes allocated, allocations, temporary allocations (0 when a
 * trace does not know them: a sampled one's 0s are no change), leaked
 * blocks. */
enum { NDELTAS = 6 };
static bool temporary_known;

static void row_deltas(const row *r, int64_t d[NDELTAS]) {
  const side *a = &r->v[0], *b = &r->v[1];
  d[0] = delta(a->peak_bytes, b->peak_bytes);
  d[1] = delta(a->leaked_bytes, b->leaked_bytes);
  d[2] = delta(a->bytes, b->bytes);
  d[3] = delta(a->allocations, b->allocations);
  d[4] = temporary_known ? delta(a->temporary, b->temporary) : 0;
  d[5] = delta(a->leaked_blocks, b->leaked_blocks);
}

/* The largest change first, by the first that differs; then by key. */
static int cmp_row(const void *x, const void *y) {
  const row *a = *(const row *const *)x, *b = *(const row *const *)y;
  int64_t da[NDELTAS], db[NDELTAS];
  row_deltas(a, da);
  row_deltas(b, db);
  for (int i = 0; i < NDELTAS; i++)
    if (mag(da[i]) != mag(db[i])) return mag(da[i]) > mag(db[i]) ? -1 : 1;
  return strcmp(a->key, b->key);
}

/* How a row changed: 1 grew, -1 shrank, 0 the same, by the first change
 * that is not 0 (a site whose temporary allocations alone changed was left
 * out until 2026-11-25). */
static int direction(const row *r) {
  int64_t d[NDELTAS];
  row_deltas(r, d);
  for (int i = 0; i < NDELTAS; i++)
    if (d[i]) return d[i] > 0 ? 1 : -1;
  return 0;
}

static void put_change(FILE *out, const char *what, uint64_t a, uint64_t b) {
  fprintf(out, "%s %+" PRId64 " (%" PRIu64 " -> %" PRIu64 ")", what, delta(a, b), a, b);
}

/* One line: A's numbers against B's; temporary allocations when both
 * traces know them (a sampled trace does not). */
static void text_changes(FILE *out, const side *a, const side *b, const input *in) {
  put_change(out, "peak bytes", a->peak_bytes, b->peak_bytes);
  fputs(", ", out);
  put_change(out, "leaked bytes", a->leaked_bytes, b->leaked_bytes);
  fputs(", ", out);
  put_change(out, "allocations", a->allocations, b->allocations);
  fputs(", ", out);
  put_change(out, "bytes allocated", a->bytes, b->bytes);
  if (in[0].l.analysis->temporary_known && in[1].l.analysis->temporary_known) {
    fputs(", ", out);
    put_change(out, "temporary", a->temporary, b->temporary);
  }
  fputc('\n', out);
}

static void text_row(FILE *out, const row *r, input *in, size_t frames) {
  fputs("  ", out);
  text_changes(out, &r->v[0], &r->v[1], in);
  hh_report_text_stack(out, in[r->trace].l.sym, in[r->trace].l.reader, r->stack, frames);
}

static void json_side(FILE *out, const side *s) {
  fprintf(out,
          "{\"allocations\": %" PRIu64 ", \"bytes\": %" PRIu64 ", \"temporary\": %" PRIu64
          ", \"peak_bytes\": %" PRIu64 ", \"leaked_bytes\": %" PRIu64 ", \"leaked_blocks\": %" PRIu64 "}",
          s->allocations, s->bytes, s->temporary, s->peak_bytes, s->leaked_bytes, s->leaked_blocks);
}

static void json_delta(FILE *out, const side *a, const side *b) {
  fprintf(out,
          "{\"allocations\": %" PRId64 ", \"bytes\": %" PRId64 ", \"temporary\": %" PRId64
          ", \"peak_bytes\": %" PRId64 ", \"leaked_bytes\": %" PRId64 ", \"leaked_blocks\": %" PRId64 "}",
          delta(a->allocations, b->allocations), delta(a->bytes, b->bytes), delta(a->temporary, b->temporary),
          delta(a->peak_bytes, b->peak_bytes), delta(a->leaked_bytes, b->leaked_bytes),
          delta(a->leaked_blocks, b->leaked_blocks));
}

/* A trace's fields after its path: status, sampling, temporary_known. */
static void json_trace(FILE *out, const hh_analysis *a) {
  fprintf(out,
          ", \"status\": \"%s\", \"sampled\": %s, \"sample_bytes\": %" PRIu64 ", \"temporary_known\": %s}",
          hh_report_status_word(a->status), a->sampled ? "true" : "false", a->sample_bytes,
          a->temporary_known ? "true" : "false");
}

static side totals_of(const hh_analysis *a) {
  /* allocation calls, as each site counts them (the ALLOC records alone
   * said "allocations +0" above a site's +5 when only reallocs came) */
  side s = {a->allocation_calls, a->bytes_allocated, a->peak_bytes,
            a->leaked_bytes,     a->leaked_blocks,   a->temporary};
  return s;
}

int hh_cmd_diff(int argc, char **argv) {
  hh_cli_args args = HH_CLI_ARGS("diff", usage, argc, argv);
  bool json = false;
  size_t top = 20, frames = 5;
  if (!hh_report_options(&args, &json, &top, &frames)) return args.status;
  if (argc - optind != 2) return hh_cli_usage_error("diff", usage, "two traces wanted, A and B");

  input in[2] = {{0}};
  int rc = HH_EXIT_OK;
  rows t = {.in = in};
  char *key = NULL;
  size_t key_cap = 0;
  /* Both traces are held at once: each gets half of the memory limit. */
  uint64_t limit = hh_reader_memory_limit_default();
  if (limit != UINT64_MAX) hh_reader_default_memory_limit(limit / 2);
  for (int k = 0; k < 2; k++) {
    in[k].path = argv[optind + k];
    hh_load_options opt = {
        .symbols = true, .status_later = true, .warn = warn_cb, .warn_arg = (void *)in[k].path};
    rc = hh_load("diff", in[k].path, &opt, &in[k].l);
    if (rc != 0) goto done;
    const hh_analysis *a = in[k].l.analysis;
    for (size_t i = 0; i < a->nsites; i++) {
      const hh_site *s = &a->sites[i];
      size_t len = hh_report_site_key_into(in[k].l.sym, in[k].l.reader, s->stack, &key, &key_cap);
      row *r = rows_get(&t, key, len, k, s->stack);
      side *v = &r->v[k];
      v->allocations += s->allocations;
      v->bytes += s->bytes;
      v->temporary += s->temporary;
      v->peak_bytes += s->peak_bytes;
      v->leaked_bytes += s->leaked_bytes;
      v->leaked_blocks += s->leaked_blocks;
    }
    /* the sites are in the rows now: A's are let go before B is read
     * (64 bytes a site) */
    free(in[k].l.analysis->sites);
    in[k].l.analysis->sites = NULL;
    in[k].l.analysis->nsites = 0;
  }
  {
    temporary_known = in[0].l.analysis->temporary_known && in[1].l.analysis->temporary_known;
    row **order = xcalloc(t.n, sizeof *order);
    size_t ngrew = 0, nshrank = 0, n = 0;
    for (size_t i = 0; i < t.n; i++) {
      int d = direction(&t.v[i]);
      if (d == 0) continue;
      order[n++] = &t.v[i];
      t.v[i].key = hh_report_site_key(in[t.v[i].trace].l.sym, in[t.v[i].trace].l.reader, t.v[i].stack);
      if (d > 0)
        ngrew++;
      else
        nshrank++;
    }
    qsort(order, n, sizeof *order, cmp_row);
    side ta = totals_of(in[0].l.analysis), tb = totals_of(in[1].l.analysis);
    FILE *out = stdout;
    if (json) {
      fputs("{\n  \"schema\": \"heaphook-diff\",\n  \"version\": 1,\n  \"a\": {\"path\": ", out);
      hh_json_put_string(out, in[0].path, 0);
      json_trace(out, in[0].l.analysis);
      fputs(", \"b\": {\"path\": ", out);
      hh_json_put_string(out, in[1].path, 0);
      json_trace(out, in[1].l.analysis);
      fputs(",\n  \"totals\": {\"a\": ", out);
      json_side(out, &ta);
      fputs(", \"b\": ", out);
      json_side(out, &tb);
      fputs(", \"delta\": ", out);
      json_delta(out, &ta, &tb);
      fprintf(out,
              "},\n  \"sites_changed\": %zu, \"sites_grew\": %zu, \"sites_shrank\": %zu,\n  \"sites\": [", n,
              ngrew, nshrank);
      /* --top N sites of each direction, as the text lists them (it was
       * the top N of both together: --top 1 gave the text a site that
       * grew and one that shrank, the JSON only the larger change) */
      size_t shown = 0, grew = 0, shrank = 0;
      for (size_t i = 0; i < n; i++) {
        const row *r = order[i];
        size_t *count = direction(r) > 0 ? &grew : &shrank;
        if (top && *count == top) continue;
        ++*count;
        fputs(shown++ ? ",\n    {\"key\": " : "\n    {\"key\": ", out);
        hh_json_put_string(out, r->key, 0);
        fputs(", \"a\": ", out);
        json_side(out, &r->v[0]);
        fputs(", \"b\": ", out);
        json_side(out, &r->v[1]);
        fputs(", \"delta\": ", out);
        json_delta(out, &r->v[0], &r->v[1]);
        fputs(",\n     \"frames\": ", out);
        const hh_frame *f[HH_REPORT_MAX_FRAMES];
        size_t nf =
            hh_report_frames(in[r->trace].l.sym, in[r->trace].l.reader, r->stack, f, HH_REPORT_MAX_FRAMES);
        hh_report_json_frames(out, f, nf);
        fputc('}', out);
      }
      fputs(shown ? "\n  ]\n}\n" : "]\n}\n", out);
    } else {
      fprintf(out, "heaphook diff: A = %s, B = %s\n", in[0].path, in[1].path);
      /* as the report says it: a sampled trace's numbers are estimates
       * (the diff said nothing, and showed them as exact beside a full
       * trace's) */
      for (int k = 0; k < 2; k++)
        if (in[k].l.analysis->sampled)
          fprintf(out,
                  "%s: sampled trace (one sample per %" PRIu64
                  " byte%s on average): its bytes and counts are estimates\n",
                  k ? "B" : "A", in[k].l.analysis->sample_bytes, hh_cli_s(in[k].l.analysis->sample_bytes));
      for (int k = 0; k < 2; k++)
        if (in[k].l.analysis->status != HH_READ_OK)
          fprintf(out, "%s: %s: %s\n", in[k].l.analysis->status == HH_READ_NO_END ? "warning" : "error",
                  k ? "B" : "A", in[k].l.analysis->status_message);
      fputs("totals: ", out);
      text_changes(out, &ta, &tb, in);
      for (int dir = 1; dir >= -1; dir -= 2) {
        size_t total = dir > 0 ? ngrew : nshrank, shown = 0;
        fprintf(out, "\n%s (%zu call site%s)%s\n", dir > 0 ? "grew" : "shrank", total, hh_cli_s(total),
                total ? ":" : "");
        for (size_t i = 0; i < n && (!top || shown < top); i++) {
          if (direction(order[i]) != dir) continue;
          text_row(out, order[i], in, frames);
          shown++;
        }
        if (shown < total) fprintf(out, "  ... %zu more\n", total - shown);
      }
    }
    fflush(out);
    free(order);
  }
  for (int k = 0; k < 2; k++) {
    char name[64 + PATH_MAX];
    snprintf(name, sizeof name, "%s (%s)", k ? "B" : "A", in[k].path);
    int s = hh_cli_report_status_of("diff", name, in[k].l.reader);
    if (s > rc) rc = s;
  }
done:
  for (size_t i = 0; i < t.n; i++) free(t.v[i].key);
  free(t.v);
  hh_slots_free(&t.index);
  free(t.scratch);
  free(key);
  for (int k = 0; k < 2; k++) hh_loaded_free(&in[k].l);
  return rc;
}
