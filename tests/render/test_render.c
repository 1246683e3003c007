/* The writers of plot, flame and export (src/cli/render.h) on a made-up
 * analysis with made-up stacks: exact collapsed stacks, the flame graph's
 * boxes and escaping, massif's snapshots and trees, pprof's protobuf
 * (decoded here), speedscope's JSON, and the chart's three formats. */
#define _GNU_SOURCE
#include <malloc.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "escape.h"
#include "render.h"

/* ---- the made-up program ---------------------------------------------------
 *   _start -> main:30 -> leaky          3 allocations, 3000 B, all leaked, held at the peak
 *   _start -> main:31 -> leaky          1 allocation, 500 B leaked (same functions: one path)
 *   _start -> main:32 -> churn          10 temporary allocations of 100 B
 *   _start -> main:33 -> helper (inlined into main) -> big   8000 B at the peak, freed
 *   _start -> main:34 -> a<b>&c;d       1 allocation of 7 B, freed (a name to escape)
 *   no stack                            1 allocation of 10 B, freed                    */
#define MOD "/opt/prog/bin/prog"
static const hh_frame f_start = {0x401000, "_start", NULL, 0, MOD, 0x1000, false, false};
static const hh_frame f_main30 = {0x401130, "main", "/src/prog.c", 30, MOD, 0x1130, false, false};
static const hh_frame f_main31 = {0x401131, "main", "/src/prog.c", 31, MOD, 0x1131, false, false};
static const hh_frame f_main32 = {0x401132, "main", "/src/prog.c", 32, MOD, 0x1132, false, false};
static const hh_frame f_helper = {0x401133, "helper", "/src/prog.c", 20, MOD, 0x1133, true, false};
static const hh_frame f_main33 = {0x401133, "main", "/src/prog.c", 33, MOD, 0x1133, false, false};
static const hh_frame f_main34 = {0x401134, "main", "/src/prog.c", 34, MOD, 0x1134, false, false};
static const hh_frame f_leaky = {0x401200, "leaky", "/src/prog.c", 10, MOD, 0x1200, false, false};
static const hh_frame f_churn = {0x401300, "churn", "/src/prog.c", 12, MOD, 0x1300, false, false};
static const hh_frame f_big = {0x401400, "big", "/src/prog.c", 14, MOD, 0x1400, false, false};
static const hh_frame f_odd = {0x401500, "a<b>&c;d", NULL, 0, NULL, 0, false, false};

/* innermost first, as hh_sym_stack gives them */
static const hh_frame *const stack1[] = {&f_leaky, &f_main30, &f_start};
static const hh_frame *const stack2[] = {&f_leaky, &f_main31, &f_start};
static const hh_frame *const stack3[] = {&f_churn, &f_main32, &f_start};
static const hh_frame *const stack4[] = {&f_big, &f_helper, &f_main33, &f_start};
static const hh_frame *const stack5[] = {&f_odd, &f_main34, &f_start};

static size_t fake_frames(void *arg, uint64_t stack, const hh_frame **out, size_t max) {
  (void)arg;
  const hh_frame *const *s = NULL;
  size_t n = 0;
  switch (stack) {
#define CASE(id, arr)             \
  case id:                        \
    s = arr;                      \
    n = sizeof arr / sizeof *arr; \
    break;
    CASE(1, stack1)
    CASE(2, stack2)
    CASE(3, stack3)
    CASE(4, stack4)
    CASE(5, stack5)
#undef CASE
  }
  if (n > max) n = max;
  memcpy(out, s, n * sizeof *out);
  return n;
}

static hh_site sites[] = {
    /* stack allocs bytes temp peak_b peak_n leaked_b leaked_n */
    {1, 3, 3000, 0, 3000, 3, 3000, 3}, {2, 1, 500, 0, 0, 0, 500, 1}, {3, 10, 1000, 10, 0, 0, 0, 0},
    {4, 1, 8000, 0, 8000, 1, 0, 0},    {5, 1, 7, 0, 0, 0, 0, 0},     {0, 1, 10, 0, 0, 0, 0, 0},
};
static hh_point timeline[] = {
    {1000000, 3000},
    {2000000, 11000},
    {3000000, 3100},
    {4000000, 3500},
};
static hh_rss_point rss[] = {{0, 1 << 20}, {2500000, 3 << 20}, {4500000, 2 << 20}};
static hh_marker_at markers[] = {{1500000, "load"}, {3500000, "done"}};

static hh_analysis fake_analysis(void) {
  return (hh_analysis){
      .duration_ns = 5000000,
      .allocations = 17,
      .frees = 13,
      .bytes_allocated = 12517,
      .temporary = 10,
      .peak_bytes = 11000,
      .peak_blocks = 4,
      .peak_time_ns = 2000000,
      .leaked_bytes = 3500,
      .leaked_blocks = 4,
      .nsites = sizeof sites / sizeof *sites,
      .sites = sites,
      .nmarkers = 2,
      .markers = markers,
      .npoints = sizeof timeline / sizeof *timeline,
      .timeline = timeline,
      .nrss = 3,
      .rss = rss,
  };
}

typedef struct fixture {
  hh_analysis a;
  hh_profile p;
  char *text;
  size_t len;
  FILE *out;
} fixture;

static int setup(void **state) {
  fixture *f = calloc(1, sizeof *f);
  f->a = fake_analysis();
  if (hh_profile_build(&f->p, &f->a, fake_frames, NULL) != 0) return -1;
  f->out = open_memstream(&f->text, &f->len);
  *state = f;
  return 0;
}

static int teardown(void **state) {
  fixture *f = *state;
  if (f->out) fclose(f->out);
  free(f->text);
  hh_profile_free(&f->p);
  free(f);
  return 0;
}

static const char *text_of(fixture *f) {
  fflush(f->out);
  return f->text;
}

/* ---- collapsed stacks ----------------------------------------------------- */

static void collapsed_merges_paths_and_drops_zero_costs(void **state) {
  fixture *f = *state;
  assert_int_equal(hh_write_collapsed(f->out, &f->p, HH_COST_LEAKED), 0);
  assert_string_equal(text_of(f), "_start;main;leaky 3500\n");
}

static void collapsed_peak_with_inlined_frame(void **state) {
  fixture *f = *state;
  assert_int_equal(hh_write_collapsed(f->out, &f->p, HH_COST_PEAK), 0);
  assert_string_equal(text_of(f), "_start;main;helper;big 8000\n_start;main;leaky 3000\n");
}

static void collapsed_allocations_sanitizes_names(void **state) {
  fixture *f = *state;
  assert_int_equal(hh_write_collapsed(f->out, &f->p, HH_COST_ALLOCATIONS), 0);
  assert_string_equal(text_of(f),
                      "[no stack] 1\n"
                      "_start;main;a<b>&c_d 1\n"
                      "_start;main;churn 10\n"
                      "_start;main;helper;big 1\n"
                      "_start;main;leaky 4\n");
}

static void collapsed_temporary(void **state) {
  fixture *f = *state;
  assert_int_equal(hh_write_collapsed(f->out, &f->p, HH_COST_TEMPORARY), 0);
  assert_string_equal(text_of(f), "_start;main;churn 10\n");
}

static void frame_names_without_function(void **state) {
  (void)state;
  char buf[64];
  hh_frame in_module = {.ip = 0x7f0000001234, .module = "/usr/lib/libfoo.so.1", .module_offset = 0x1234};
  assert_string_equal(hh_frame_name(&in_module, buf, sizeof buf), "libfoo.so.1+0x1234");
  hh_frame nowhere = {.ip = 0xdead};
  assert_string_equal(hh_frame_name(&nowhere, buf, sizeof buf), "0xdead");
}

/* C++ templates' demangled names run to thousands of bytes, the member's
 * own name at the end: two such functions of one class were one frame
 * (their names cut at 1023 bytes) in the collapsed stacks, the flame
 * graph, massif's tree, pprof's functions and speedscope's frames. */
#define LONG_CLASS_LEN 1500
static char long_class[LONG_CLASS_LEN + 32], long_first[LONG_CLASS_LEN + 32],
    long_second[LONG_CLASS_LEN + 32];
static hh_frame f_first = {0x401600, long_first, "/src/prog.cc", 40, MOD, 0x1600, false, false};
static hh_frame f_second = {0x401700, long_second, "/src/prog.cc", 50, MOD, 0x1700, false, false};

static size_t long_frames(void *arg, uint64_t stack, const hh_frame **out, size_t max) {
  (void)arg;
  const hh_frame *s[] = {stack == 1 ? &f_first : &f_second, stack == 1 ? &f_main30 : &f_main31, &f_start};
  size_t n = max < 3 ? max : 3;
  memcpy(out, s, n * sizeof *out);
  return n;
}

static void long_names_kept_whole_in_every_format(void **state) {
  fixture *f = *state;
  memset(long_class, 'T', LONG_CLASS_LEN);
  long_class[LONG_CLASS_LEN] = 0;
  strcat(strcpy(long_first, long_class), "::first()");
  strcat(strcpy(long_second, long_class), "::second()");
  hh_site two[] = {{1, 1, 100, 0, 100, 1, 100, 1}, {2, 1, 200, 0, 200, 1, 200, 1}};
  hh_analysis a = fake_analysis();
  a.sites = two;
  a.nsites = 2;
  a.peak_bytes = 300;
  a.leaked_bytes = 300;
  hh_profile p;
  assert_int_equal(hh_profile_build(&p, &a, long_frames, NULL), 0);
  char want[4 * LONG_CLASS_LEN];

  assert_int_equal(hh_write_collapsed(f->out, &p, HH_COST_ALLOCATIONS), 0);
  snprintf(want, sizeof want, "_start;main;%s 1\n_start;main;%s 1\n", long_first, long_second);
  assert_string_equal(text_of(f), want);

  rewind(f->out);
  assert_int_equal(hh_write_flame_svg(f->out, &p, HH_COST_PEAK, "t"), 0);
  snprintf(want, sizeof want, "<title>%s (100 bytes, ", long_first);
  assert_non_null(strstr(text_of(f), want));
  snprintf(want, sizeof want, "<title>%s (200 bytes, ", long_second);
  assert_non_null(strstr(text_of(f), want));

  rewind(f->out);
  assert_int_equal(hh_write_massif(f->out, &p, "x", 0), 0);
  snprintf(want, sizeof want, ": %s (prog.cc:40)\n", long_first);
  assert_non_null(strstr(text_of(f), want));
  snprintf(want, sizeof want, ": %s (prog.cc:50)\n", long_second);
  assert_non_null(strstr(text_of(f), want));

  rewind(f->out);
  assert_int_equal(hh_write_speedscope(f->out, &p, "x"), 0);
  snprintf(want, sizeof want, "{\"name\":\"%s\"", long_first);
  assert_non_null(strstr(text_of(f), want));
  snprintf(want, sizeof want, "{\"name\":\"%s\"", long_second);
  assert_non_null(strstr(text_of(f), want));

  uint8_t *data;
  size_t size;
  assert_int_equal(hh_pprof_encode(&p, NULL, 0, "x", &data, &size), 0);
  assert_non_null(memmem(data, size, long_first, strlen(long_first)));
  assert_non_null(memmem(data, size, long_second, strlen(long_second)));
  free(data);
  hh_profile_free(&p);
}

/* A C++ lambda's demangled name has a '#' ("main::{lambda()#1}"), as the
 * report, diff and HTML page show it: the collapsed stacks, the flame
 * graph, speedscope and pprof named it "main::{lambda()_1}", as only
 * massif needs ('#' starts a comment for ms_print). */
static hh_frame f_lambda = {
    0x401800, "main::{lambda()#1}::operator()() const", "/src/prog.cc", 60, MOD, 0x1800, false, false};

static size_t lambda_frames(void *arg, uint64_t stack, const hh_frame **out, size_t max) {
  (void)arg;
  (void)stack;
  const hh_frame *s[] = {&f_lambda, &f_main30, &f_start};
  size_t n = max < 3 ? max : 3;
  memcpy(out, s, n * sizeof *out);
  return n;
}

static void hash_in_names_kept_but_in_massif(void **state) {
  fixture *f = *state;
  hh_site one[] = {{1, 1, 100, 0, 100, 1, 100, 1}};
  hh_analysis a = fake_analysis();
  a.sites = one;
  a.nsites = 1;
  a.peak_bytes = 100;
  a.leaked_bytes = 100;
  hh_profile p;
  assert_int_equal(hh_profile_build(&p, &a, lambda_frames, NULL), 0);
  const char *name = f_lambda.function;

  assert_int_equal(hh_write_collapsed(f->out, &p, HH_COST_ALLOCATIONS), 0);
  assert_string_equal(text_of(f), "_start;main;main::{lambda()#1}::operator()() const 1\n");

  rewind(f->out);
  assert_int_equal(hh_write_flame_svg(f->out, &p, HH_COST_PEAK, "t"), 0);
  assert_non_null(strstr(text_of(f), "<title>main::{lambda()#1}::operator()() const (100 bytes, "));

  rewind(f->out);
  assert_int_equal(hh_write_speedscope(f->out, &p, "x"), 0);
  assert_non_null(strstr(text_of(f), "{\"name\":\"main::{lambda()#1}::operator()() const\""));

  char *text = NULL;
  size_t len = 0;
  FILE *out = open_memstream(&text, &len);
  assert_non_null(out);
  assert_int_equal(hh_write_massif(out, &p, "x", 0), 0);
  assert_int_equal(fclose(out), 0);
  assert_non_null(strstr(text, ": main::{lambda()_1}::operator()() const (prog.cc:60)\n"));
  assert_null(strstr(text, "lambda()#"));
  free(text);

  uint8_t *data;
  size_t size;
  assert_int_equal(hh_pprof_encode(&p, NULL, 0, "x", &data, &size), 0);
  assert_non_null(memmem(data, size, name, strlen(name)));
  free(data);
  hh_profile_free(&p);
}

/* ---- flame graph ---------------------------------------------------------- */

static void flame_svg_boxes_titles_and_escaping(void **state) {
  fixture *f = *state;
  assert_int_equal(hh_write_flame_svg(f->out, &f->p, HH_COST_ALLOCATIONS, "t<1>"), 0);
  const char *s = text_of(f);
  assert_non_null(strstr(s, "<?xml"));
  assert_non_null(strstr(s, ">t&lt;1&gt;</text>"));
  assert_non_null(strstr(s, "<title>all (17 allocations, 100.00%)</title>"));
  assert_non_null(strstr(s, "<title>main (16 allocations, 94.12%)</title>"));
  assert_non_null(strstr(s, "<title>leaky (4 allocations, 23.53%)</title>"));
  assert_non_null(strstr(s, "<title>churn (10 allocations, 58.82%)</title>"));
  assert_non_null(strstr(s, "<title>a&lt;b&gt;&amp;c_d (1 allocation, 5.88%)</title>"));
  assert_null(strstr(s, "a<b"));
  /* widths proportional: "all" spans the 1180 pixels, churn 10/17 of it */
  assert_non_null(strstr(s, "width=\"1180.0\""));
  assert_non_null(strstr(s, "width=\"694.1\""));
  assert_non_null(strstr(s, "</svg>\n"));
}

static void flame_svg_empty_cost(void **state) {
  fixture *f = *state;
  hh_site none[] = {{1, 1, 10, 0, 0, 0, 0, 0}};
  hh_analysis a = fake_analysis();
  a.sites = none;
  a.nsites = 1;
  hh_profile p;
  assert_int_equal(hh_profile_build(&p, &a, fake_frames, NULL), 0);
  assert_int_equal(hh_write_flame_svg(f->out, &p, HH_COST_LEAKED, "x"), 0);
  assert_non_null(strstr(text_of(f), "leaked: 0 bytes in all"));
  assert_null(strstr(text_of(f), "<rect x=\"10.0\""));
  hh_profile_free(&p);
}

/* ---- massif --------------------------------------------------------------- */

static void massif_snapshots_and_trees(void **state) {
  fixture *f = *state;
  assert_int_equal(hh_write_massif(f->out, &f->p, "prog --flag", 0), 0);
  const char *s = text_of(f);
  assert_non_null(strstr(s, "cmd: prog --flag\ntime_unit: ms\n"));
  /* snapshot 0 empty; the timeline; the peak at 2 ms; the end at 5 ms */
  assert_non_null(strstr(s, "snapshot=0\n#-----------\ntime=0.000\nmem_heap_B=0\n"));
  assert_non_null(strstr(s, "snapshot=1\n#-----------\ntime=1.000\nmem_heap_B=3000\n"));
  assert_non_null(strstr(s,
                         "snapshot=2\n#-----------\ntime=2.000\nmem_heap_B=11000\nmem_heap_extra_B=0\n"
                         "mem_stacks_B=0\nheap_tree=peak\n"
                         "n2: 11000 (heap allocation functions) malloc/new/new[], --alloc-fns, etc.\n"
                         " n1: 8000 0x401400: big (prog.c:14)\n"
                         "  n1: 8000 0x401133: helper (prog.c:20)\n"
                         "   n1: 8000 0x401133: main (prog.c:33)\n"
                         "    n0: 8000 0x401000: _start (in /opt/prog/bin/prog)\n"
                         " n1: 3000 0x401200: leaky (prog.c:10)\n"));
  assert_null(strstr(s,
                     "snapshot=2\n#-----------\ntime=2.000\nmem_heap_B=11000\nmem_heap_extra_B=0\n"
                     "mem_stacks_B=0\nheap_tree=empty"));
  assert_non_null(strstr(s, "snapshot=4\n#-----------\ntime=4.000\nmem_heap_B=3500\n"));
  assert_non_null(strstr(s,
                         "snapshot=5\n#-----------\ntime=5.000\nmem_heap_B=3500\nmem_heap_extra_B=0\n"
                         "mem_stacks_B=0\nheap_tree=detailed\n"
                         "n1: 3500 (heap allocation functions) malloc/new/new[], --alloc-fns, etc.\n"
                         " n2: 3500 0x401200: leaky (prog.c:10)\n"
                         "  n1: 3000 0x401130: main (prog.c:30)\n"));
  assert_null(strstr(s, "snapshot=6"));
}

/* The massif file of the fake analysis with these timeline points. */
static const char *massif_of_timeline(fixture *f, hh_point *points, size_t n) {
  hh_analysis a = fake_analysis();
  a.timeline = points;
  a.npoints = n;
  hh_profile p;
  assert_int_equal(hh_profile_build(&p, &a, fake_frames, NULL), 0);
  assert_int_equal(hh_write_massif(f->out, &p, "x", 0), 0);
  hh_profile_free(&p);
  return text_of(f);
}

/* A timeline that ends with the analysis's end point (the heap where the
 * trace ends, after a last bucket whose maximum was higher): one snapshot
 * at the end, the detailed one, not a second one beside it. */
static void massif_end_point_once(void **state) {
  fixture *f = *state;
  static hh_point ending[] = {{1000000, 3000}, {2000000, 11000}, {4000000, 9000}, {5000000, 3500}};
  const char *s = massif_of_timeline(f, ending, 4);
  assert_non_null(strstr(s, "snapshot=3\n#-----------\ntime=4.000\nmem_heap_B=9000\n"));
  assert_non_null(strstr(s,
                         "snapshot=4\n#-----------\ntime=5.000\nmem_heap_B=3500\nmem_heap_extra_B=0\n"
                         "mem_stacks_B=0\nheap_tree=detailed\n"));
  assert_null(strstr(s, "snapshot=5"));
}

/* The heap back at the peak's level later (a 1 MB buffer made and freed
 * three times, 100 ms apart): only the peak's own time is the peak
 * snapshot's; the later plateaus were left out (every point at the peak's
 * level was), and ms_print drew one rise where plot and the HTML page drew
 * three. */
static void massif_peak_level_again(void **state) {
  fixture *f = *state;
  static hh_point again[] = {{1000000, 3000}, {2000000, 11000}, {3000000, 3100}, {4000000, 11000}};
  const char *s = massif_of_timeline(f, again, 4);
  assert_non_null(strstr(s,
                         "snapshot=2\n#-----------\ntime=2.000\nmem_heap_B=11000\nmem_heap_extra_B=0\n"
                         "mem_stacks_B=0\nheap_tree=peak\n"));
  assert_non_null(strstr(s,
                         "snapshot=4\n#-----------\ntime=4.000\nmem_heap_B=11000\nmem_heap_extra_B=0\n"
                         "mem_stacks_B=0\nheap_tree=empty\n"));
  assert_non_null(strstr(s, "snapshot=5\n#-----------\ntime=5.000\nmem_heap_B=3500\n"));
  assert_null(strstr(s, "snapshot=6"));
}

static void massif_threshold_gathers_small_sites(void **state) {
  fixture *f = *state;
  hh_site many[] = {{1, 1, 10000, 0, 10000, 1, 0, 0}, {3, 1, 50, 0, 50, 1, 0, 0}, {5, 1, 40, 0, 40, 1, 0, 0}};
  hh_analysis a = fake_analysis();
  a.sites = many;
  a.nsites = 3;
  a.peak_bytes = 10090;
  hh_profile p;
  assert_int_equal(hh_profile_build(&p, &a, fake_frames, NULL), 0);
  assert_int_equal(hh_write_massif(f->out, &p, "x", 0), 0);
  assert_non_null(strstr(text_of(f), "n2: 10090 (heap allocation functions)"));
  assert_non_null(strstr(text_of(f), " n0: 90 in 2 places, all below massif's threshold (1.00%)\n"));
  hh_profile_free(&p);
}

/* ---- pprof: a small protobuf decoder --------------------------------------- */

typedef struct field {
  unsigned num, wire;
  uint64_t v;
  const uint8_t *p;
  size_t len;
} field;

static uint64_t varint(const uint8_t **p, const uint8_t *end) {
  uint64_t v = 0;
  for (unsigned shift = 0; *p < end; shift += 7) {
    uint8_t b = *(*p)++;
    v |= (uint64_t)(b & 0x7f) << shift;
    if (!(b & 0x80)) return v;
  }
  fail_msg("truncated varint");
  return 0;
}

static bool next_field(const uint8_t **p, const uint8_t *end, field *f) {
  if (*p >= end) return false;
  uint64_t key = varint(p, end);
  f->num = (unsigned)(key >> 3);
  f->wire = key & 7;
  if (f->wire == 0) {
    f->v = varint(p, end);
  } else if (f->wire == 2) {
    f->len = varint(p, end);
    assert_true(f->len <= (size_t)(end - *p));
    f->p = *p;
    *p += f->len;
  } else {
    fail_msg("unexpected wire type %u", f->wire);
  }
  return true;
}

static void pprof_profile_decodes(void **state) {
  fixture *f = *state;
  hh_trace_segment segs[] = {{0x400000, 0x1000, 0}, {0x401000, 0x2000, 0x1000}};
  hh_trace_module mod = {
      .index = 0, .base = 0, .path = MOD, .build_id = "abcd", .nsegments = 2, .segments = segs};
  const hh_trace_module *mods[] = {&mod};
  uint8_t *data;
  size_t size;
  assert_int_equal(hh_pprof_encode(&f->p, mods, 1, "prog --flag", &data, &size), 0);

  const char *strings[64];
  size_t nstrings = 0, nsamples = 0, nlocations = 0, nfunctions = 0, nmappings = 0, ntypes = 0;
  uint64_t values[8][4];
  size_t nlocs_of[8];
  uint64_t mapping_start = 0, mapping_limit = 0, default_type = 0, comment = 0;
  char buf[64][64];
  const uint8_t *p = data, *end = data + size;
  field fl;
  while (next_field(&p, end, &fl)) {
    switch (fl.num) {
      case 6:
        assert_true(nstrings < 64 && fl.len < 64);
        memcpy(buf[nstrings], fl.p, fl.len);
        buf[nstrings][fl.len] = 0;
        strings[nstrings] = buf[nstrings];
        nstrings++;
        break;
      case 2: {
        assert_true(nsamples < 8);
        const uint8_t *q = fl.p, *qend = fl.p + fl.len;
        field sf;
        nlocs_of[nsamples] = 0;
        int nvalues = 0;
        while (next_field(&q, qend, &sf)) {
          assert_int_equal(sf.wire, 0); /* written unpacked */
          if (sf.num == 1) nlocs_of[nsamples]++;
          if (sf.num == 2 && nvalues < 4) values[nsamples][nvalues] = sf.v;
          if (sf.num == 2) nvalues++;
        }
        assert_int_equal(nvalues, 4);
        nsamples++;
        break;
      }
      case 3: {
        const uint8_t *q = fl.p;
        field mf;
        while (next_field(&q, fl.p + fl.len, &mf)) {
          if (mf.num == 2) mapping_start = mf.v;
          if (mf.num == 3) mapping_limit = mf.v;
        }
        nmappings++;
        break;
      }
      case 1:
        ntypes++;
        break;
      case 4:
        nlocations++;
        break;
      case 5:
        nfunctions++;
        break;
      case 13:
        comment = fl.v;
        break;
      case 14:
        default_type = fl.v;
        break;
    }
  }
  free(data);
  assert_int_equal(ntypes, 4);
  assert_int_equal(nmappings, 1);
  assert_int_equal(mapping_start, 0x400000);
  assert_int_equal(mapping_limit, 0x403000);
  assert_int_equal(nsamples, 6);
  /* sample 0: leaky's 3 allocations, 3000 B, 3 blocks / 3000 B at the peak */
  assert_int_equal(values[0][0], 3);
  assert_int_equal(values[0][1], 3000);
  assert_int_equal(values[0][2], 3);
  assert_int_equal(values[0][3], 3000);
  assert_int_equal(values[3][3], 8000);
  assert_int_equal(nlocs_of[0], 3);
  /* helper is inlined at main:33's address: one location with two lines */
  assert_int_equal(nlocs_of[3], 3);
  /* locations: _start, main x5 addresses, leaky, churn, big(+helper), odd, no stack */
  assert_int_equal(nlocations, 11);
  /* functions: _start, main, leaky, churn, big, helper, odd, [no stack] */
  assert_int_equal(nfunctions, 8);
  assert_string_equal(strings[0], "");
  bool seen_leaky = false, seen_helper = false;
  for (size_t i = 0; i < nstrings; i++) {
    seen_leaky |= strcmp(strings[i], "leaky") == 0;
    seen_helper |= strcmp(strings[i], "helper") == 0;
  }
  assert_true(seen_leaky && seen_helper);
  assert_true(default_type < nstrings);
  assert_string_equal(strings[default_type], "inuse_space");
  assert_string_equal(strings[comment], "prog --flag");
}

/* A library unloaded (dlclose) and another loaded later at its address:
 * the frames recorded while the first was there are the first's (the
 * symbolizer says which: hh_frame's module and load bias). By address
 * alone they were all given to the later library's Mapping. */
static void pprof_location_keeps_its_module_when_another_reused_the_address(void **state) {
  fixture *f = *state;
  hh_trace_segment segs[] = {{0x400000, 0x1000, 0}, {0x401000, 0x2000, 0x1000}};
  hh_trace_module mod = {.index = 0,
                         .base = 0x400000, /* (the frames' ip - module_offset) */
                         .path = MOD,
                         .build_id = "abcd",
                         .nsegments = 2,
                         .segments = segs,
                         .load_epoch = 0,
                         .unload_epoch = 1};
  hh_trace_module later = {.index = 1,
                           .base = 0x400000,
                           .path = "/opt/prog/lib/later.so",
                           .build_id = "ef01",
                           .nsegments = 2,
                           .segments = segs,
                           .load_epoch = 1,
                           .unload_epoch = UINT32_MAX};
  const hh_trace_module *mods[] = {&mod, &later};
  uint8_t *data;
  size_t size;
  assert_int_equal(hh_pprof_encode(&f->p, mods, 2, "prog", &data, &size), 0);
  const uint8_t *p = data, *end = data + size;
  field fl;
  size_t with_address = 0;
  while (next_field(&p, end, &fl)) {
    if (fl.num != 4) continue;
    const uint8_t *q = fl.p;
    field lf;
    uint64_t address = 0, mapping = 0;
    while (next_field(&q, fl.p + fl.len, &lf)) {
      if (lf.num == 2) mapping = lf.v;
      if (lf.num == 3) address = lf.v;
    }
    /* (f_odd is in no module: the symbolizer found none there) */
    if (address < 0x400000 || address >= 0x403000 || address == f_odd.ip) continue;
    with_address++;
    assert_int_equal(mapping, 1); /* MOD's, not later.so's (2) */
  }
  free(data);
  assert_true(with_address >= 8);
}

static void pprof_file_is_gzipped(void **state) {
  fixture *f = *state;
  char path[] = "/tmp/hh_render_XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  close(fd);
  char err[256];
  assert_int_equal(hh_write_pprof(path, &f->p, NULL, 0, NULL, err, sizeof err), 0);
  FILE *in = fopen(path, "rb");
  unsigned char magic[2] = {0};
  assert_int_equal(fread(magic, 1, 2, in), 2);
  fclose(in);
  unlink(path);
  assert_int_equal(magic[0], 0x1f);
  assert_int_equal(magic[1], 0x8b);
  assert_int_not_equal(hh_write_pprof("/nonexistent/dir/x.pb.gz", &f->p, NULL, 0, NULL, err, sizeof err), 0);
  assert_non_null(strstr(err, "cannot write /nonexistent/dir/x.pb.gz"));
}

/* ---- speedscope ----------------------------------------------------------- */

static void speedscope_profiles_and_weights(void **state) {
  fixture *f = *state;
  assert_int_equal(hh_write_speedscope(f->out, &f->p, "prog \"q\""), 0);
  const char *s = text_of(f);
  assert_non_null(strstr(s, "{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\""));
  /* frames most used in the three profiles first (the fewest digits where
   * most indices are), ties in order of first use: _start (9) main (9)
   * leaky (5) helper (2) big (2) churn (1) odd (1) [no stack] (1); in order
   * of first use, churn came before helper */
  assert_non_null(
      strstr(s,
             "\"frames\":[\n{\"name\":\"_start\"},\n{\"name\":\"main\",\"file\":\"/src/prog.c\"},\n"
             "{\"name\":\"leaky\",\"file\":\"/src/prog.c\"},\n"
             "{\"name\":\"helper\",\"file\":\"/src/prog.c\"},\n"
             "{\"name\":\"big\",\"file\":\"/src/prog.c\"},\n"
             "{\"name\":\"churn\",\"file\":\"/src/prog.c\"},\n"
             "{\"name\":\"a<b>&c_d\"},\n{\"name\":\"[no stack]\"}]}"));
  assert_non_null(strstr(s,
                         "\"name\":\"peak\",\"unit\":\"bytes\",\"startValue\":0,\"endValue\":11000,\n"
                         "\"samples\":[[0,1,2],[0,1,3,4]],\n\"weights\":[3000,8000]}"));
  assert_non_null(strstr(s, "\"name\":\"allocations\",\"unit\":\"none\",\"startValue\":0,\"endValue\":17,"));
  assert_non_null(strstr(s, "\"weights\":[3,1,10,1,1,1]}"));
  assert_non_null(strstr(s,
                         "\"name\":\"leaked\",\"unit\":\"bytes\",\"startValue\":0,\"endValue\":3500,\n"
                         "\"samples\":[[0,1,2],[0,1,2]],\n\"weights\":[3000,500]}"));
  assert_non_null(strstr(s, "\"name\":\"prog \\\"q\\\"\""));
}

/* ---- chart ---------------------------------------------------------------- */

static uint32_t be32(const unsigned char *p) {
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void chart_formats_by_extension(void **state) {
  (void)state;
  hh_chart_format fmt;
  assert_int_equal(hh_chart_format_of("a.svg", &fmt), 0);
  assert_int_equal(fmt, HH_CHART_SVG);
  assert_int_equal(hh_chart_format_of("dir.x/A.PDF", &fmt), 0);
  assert_int_equal(fmt, HH_CHART_PDF);
  assert_int_equal(hh_chart_format_of("a.png", &fmt), 0);
  assert_int_equal(fmt, HH_CHART_PNG);
  assert_int_equal(hh_chart_format_of("a.jpg", &fmt), -1);
  assert_int_equal(hh_chart_format_of("dir.svg/a", &fmt), -1);
  assert_int_equal(hh_chart_format_of("noext", &fmt), -1);
}

static void chart_renders_three_formats(void **state) {
  fixture *f = *state;
  static const struct {
    const char *ext;
    hh_chart_format fmt;
  } cases[] = {{".png", HH_CHART_PNG}, {".pdf", HH_CHART_PDF}, {".svg", HH_CHART_SVG}};
  for (size_t i = 0; i < 3; i++) {
    char path[64];
    snprintf(path, sizeof path, "/tmp/hh_chart_%d%s", (int)getpid(), cases[i].ext);
    char err[256];
    assert_int_equal(hh_chart_write(path, cases[i].fmt, &f->a, "prog --flag", err, sizeof err), 0);
    FILE *in = fopen(path, "rb");
    assert_non_null(in);
    unsigned char head[32] = {0};
    size_t n = fread(head, 1, sizeof head, in);
    fclose(in);
    unlink(path);
    assert_true(n >= 24);
    if (cases[i].fmt == HH_CHART_PNG) {
      assert_memory_equal(head, "\x89PNG\r\n\x1a\n", 8);
      assert_memory_equal(head + 12, "IHDR", 4);
      assert_int_equal(be32(head + 16), 1000);
      assert_int_equal(be32(head + 20), 560);
    } else if (cases[i].fmt == HH_CHART_PDF) {
      assert_memory_equal(head, "%PDF-", 5);
    } else {
      assert_memory_equal(head, "<?xml", 5);
    }
  }
  char err[256];
  assert_int_not_equal(hh_chart_write("/nonexistent/dir/x.png", HH_CHART_PNG, &f->a, "x", err, sizeof err),
                       0);
  assert_non_null(strstr(err, "cannot write /nonexistent/dir/x.png"));
  assert_int_not_equal(hh_chart_write("/nonexistent/dir/x.pdf", HH_CHART_PDF, &f->a, "x", err, sizeof err),
                       0);
}

/* The time axis in the unit that keeps the run's length at 1 or more, and
 * the peak's time as the report writes it: a 300-us run's ticks read
 * "5e-05", "0.0001", "0.00015" (seconds), its peak "at 0.00015 s". The
 * text read back by pdftotext (poppler-utils, as render.plot needs). */
static void chart_time_in_the_runs_unit(void **state) {
  (void)state;
  static const struct {
    uint64_t duration_ns;
    const char *want[3];
  } cases[] = {
      {300000, {"time (microseconds)", "\n150\n", "peak 1000 B at 150.000 us;"}},
      {7400000, {"time (milliseconds)", "\n6\n", "peak 1000 B at 3.700 ms;"}},
      {2000000000, {"time (seconds)", "\n1.5\n", "peak 1000 B at 1.000 s;"}},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    hh_analysis a = {0};
    a.duration_ns = cases[i].duration_ns;
    a.peak_bytes = 1000;
    a.peak_time_ns = a.duration_ns / 2;
    char path[64], cmd[128], err[256];
    snprintf(path, sizeof path, "/tmp/hh_chart_unit_%d.pdf", (int)getpid());
    assert_int_equal(hh_chart_write(path, HH_CHART_PDF, &a, "x", err, sizeof err), 0);
    snprintf(cmd, sizeof cmd, "pdftotext %s -", path);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    char text[8192];
    size_t n = fread(text, 1, sizeof text - 1, p);
    text[n] = 0;
    int status = pclose(p);
    unlink(path);
    assert_int_equal(status, 0);
    for (int k = 0; k < 3; k++)
      if (!strstr(text, cases[i].want[k])) fail_msg("%s: no \"%s\" in:\n%s", path, cases[i].want[k], text);
    assert_null(strstr(text, "e-0"));
  }
}

static void chart_of_an_empty_trace(void **state) {
  (void)state;
  hh_analysis a = {0};
  char path[64], err[256];
  snprintf(path, sizeof path, "/tmp/hh_chart_empty_%d.svg", (int)getpid());
  assert_int_equal(hh_chart_write(path, HH_CHART_SVG, &a, "", err, sizeof err), 0);
  unlink(path);
}

/* JSON is UTF-8: a program's argv or file names with other bytes come
 * out as U+FFFD (report --json and speedscope wrote them raw, and JSON
 * readers refused the file); valid UTF-8 goes out as it is. */
static void json_strings_are_utf8(void **state) {
  (void)state;
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  hh_json_put_string(f, "bad\xff\xfe ok \xc3\xa9 \xe2\x80\xa8 \xed\xa0\x80 \xc0\xaf \"q\"\n", 0);
  fputc(' ', f);
  hh_json_put_string(f, "\xe2\x80\xa8<\xf0\x9f\x98\x80", HH_JSON_SCRIPT);
  fclose(f);
  assert_string_equal(
      buf,
      "\"bad\\ufffd\\ufffd ok \xc3\xa9 \xe2\x80\xa8 \\ufffd\\ufffd\\ufffd \\ufffd\\ufffd \\\"q\\\"\\n\" "
      "\"\\u2028\\u003c\xf0\x9f\x98\x80\"");
  free(buf);
}

/* XML, protobuf strings and cairo's text are UTF-8 too: a program's other
 * bytes become U+FFFD, and text cut to fit is cut at a character's end
 * (an SVG was not well-formed, a pprof profile refused by protoc, a chart
 * not written at all: cairo stays in error after invalid text). */
static void utf8_everywhere(void **state) {
  (void)state;
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  hh_xml_put_text(f, "caf\xe9 <\xc3\xa9>", 0);
  fclose(f);
  assert_string_equal(buf, "caf\xef\xbf\xbd &lt;\xc3\xa9&gt;");
  free(buf);

  char small[8];
  const char *ok = "plain \xc3\xa9";
  assert_ptr_equal(hh_utf8_safe(ok, small, 16), ok);
  assert_string_equal(hh_utf8_safe("a\xff"
                                   "b",
                                   small, sizeof small),
                      "a\xef\xbf\xbd"
                      "b");
  /* cut: "\xc3\xa9" x 4 is 8 bytes, 7 fit: three characters */
  assert_string_equal(hh_utf8_safe("\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9", small, sizeof small),
                      "\xc3\xa9\xc3\xa9\xc3\xa9");
  char *d = hh_utf8_dup("\xe9\xe9");
  assert_string_equal(d, "\xef\xbf\xbd\xef\xbf\xbd");
  free(d);
  assert_int_equal(hh_utf8_cut("ab\xc3\xa9", 3), 2);
  assert_int_equal(hh_utf8_cut("ab\xc3\xa9", 4), 4);
  assert_int_equal(hh_utf8_cut("ab\xe2\x82\xac", 4), 2);
}

static void pprof_strings_are_utf8(void **state) {
  fixture *f = *state;
  uint8_t *data;
  size_t size;
  assert_int_equal(hh_pprof_encode(&f->p, NULL, 0, "prog caf\xe9", &data, &size), 0);
  const uint8_t *p = data, *end = data + size;
  field fl;
  uint64_t comment = 0, n = 0, comment_at = 0;
  char comment_text[64] = "";
  const uint8_t *strings[64];
  size_t lens[64];
  while (next_field(&p, end, &fl)) {
    if (fl.num == 6 && n < 64) {
      strings[n] = fl.p;
      lens[n++] = fl.len;
    }
    if (fl.num == 13) comment = fl.v;
  }
  for (uint64_t i = 0; i < n; i++) {
    char s[256];
    assert_true(lens[i] < sizeof s);
    memcpy(s, strings[i], lens[i]);
    s[lens[i]] = 0;
    char tmp[256];
    assert_ptr_equal(hh_utf8_safe(s, tmp, sizeof tmp), s); /* valid as it is */
    if (i == comment) {
      comment_at = i;
      memcpy(comment_text, s, lens[i] + 1 < sizeof comment_text ? lens[i] + 1 : 1);
    }
  }
  free(data);
  assert_true(comment_at > 0);
  assert_string_equal(comment_text, "prog caf\xef\xbf\xbd");
}

static void chart_with_text_not_utf8(void **state) {
  fixture *f = *state;
  hh_marker_at bad[] = {{1500000, "caf\xe9"}};
  hh_analysis a = f->a;
  a.markers = bad;
  a.nmarkers = 1;
  /* a long title of two-byte characters, cut to fit the width */
  char title[400] = "prog ";
  for (int i = 0; i < 120; i++) strcat(title, "\xc3\xa9");
  strcat(title, " \xe9");
  static const hh_chart_format fmts[] = {HH_CHART_SVG, HH_CHART_PNG, HH_CHART_PDF};
  for (size_t i = 0; i < 3; i++) {
    char path[64], err[256] = "";
    snprintf(path, sizeof path, "/tmp/hh_chart_utf8_%d.%zu", (int)getpid(), i);
    if (hh_chart_write(path, fmts[i], &a, title, err, sizeof err) != 0) fail_msg("format %zu: %s", i, err);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_true(st.st_size > 1000);
    unlink(path);
  }
}

/* ---- a trace that is not whole --------------------------------------------- */

/* Each file says so itself (hh_trace_note): whoever opens it later has not
 * seen the command's message. Until 2026-11-25 a cut-short trace's chart,
 * massif file, flame graph and profiles looked whole, the chart saying
 * "0 B leaked at exit" of blocks it had simply not seen freed. */
static void writers_say_the_trace_is_not_whole(void **state) {
  (void)state;
  char buf[320];
  hh_analysis whole = fake_analysis();
  assert_null(hh_trace_note(&whole, buf, sizeof buf));
  static const struct {
    hh_read_status status;
    const char *message, *note;
  } cases[] = {
      {HH_READ_CUT_SHORT, "trace cut short after 3 chunks; the rest of the run is missing",
       "error: trace cut short after 3 chunks; the rest of the run is missing"},
      {HH_READ_DAMAGED, "chunk 2: checksum mismatch", "error: chunk 2: checksum mismatch"},
      {HH_READ_NO_END, "trace has no end record after 4 chunks",
       "warning: trace has no end record after 4 chunks"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    hh_analysis a = fake_analysis();
    a.status = cases[i].status;
    a.status_message = cases[i].message;
    assert_string_equal(hh_trace_note(&a, buf, sizeof buf), cases[i].note);
    hh_profile p;
    assert_int_equal(hh_profile_build(&p, &a, fake_frames, NULL), 0);
    char *text = NULL, want[400];
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    assert_int_equal(hh_write_massif(out, &p, "prog", 0), 0);
    fflush(out);
    snprintf(want, sizeof want,
             "desc: heaphook trace (heap bytes requested; allocator overhead not recorded); %s\ncmd: prog\n",
             cases[i].note);
    assert_non_null(strstr(text, want));
    rewind(out);
    assert_int_equal(hh_write_speedscope(out, &p, "prog"), 0);
    fputc(0, out);
    fflush(out);
    snprintf(want, sizeof want, "\"name\":\"prog (%s)\",", cases[i].note);
    assert_non_null(strstr(text, want));
    rewind(out);
    assert_int_equal(hh_write_flame_svg(out, &p, HH_COST_PEAK, "prog"), 0);
    fputc(0, out);
    fflush(out);
    snprintf(want, sizeof want, "<text x=\"10\" y=\"40\" style=\"fill:#b00\">%s</text>", cases[i].note);
    assert_non_null(strstr(text, want));
    assert_non_null(strstr(text, "<text x=\"10\" y=\"54\">peak: ")); /* (below the note) */
    fclose(out);
    free(text);
    /* pprof: the command, then the note, as the profile's comments */
    uint8_t *data;
    size_t size;
    assert_int_equal(hh_pprof_encode(&p, NULL, 0, "prog", &data, &size), 0);
    const uint8_t *q = data, *end = data + size;
    field fl;
    uint64_t comments[4], ncomments = 0, nstrings = 0;
    const uint8_t *strings[64];
    size_t lens[64];
    while (next_field(&q, end, &fl)) {
      if (fl.num == 6 && nstrings < 64) {
        strings[nstrings] = fl.p;
        lens[nstrings++] = fl.len;
      }
      if (fl.num == 13 && ncomments < 4) comments[ncomments++] = fl.v;
    }
    assert_int_equal(ncomments, 2);
    assert_true(comments[0] < nstrings && comments[1] < nstrings);
    assert_int_equal(lens[comments[0]], 4);
    assert_memory_equal(strings[comments[0]], "prog", 4);
    assert_int_equal(lens[comments[1]], strlen(cases[i].note));
    assert_memory_equal(strings[comments[1]], cases[i].note, strlen(cases[i].note));
    free(data);
    hh_profile_free(&p);
  }
}

/* ---- memory: many sites with deep stacks ------------------------------------
 * The heap a profile and the writers take, counted (not timed): the
 * sanitizer's count of allocated bytes, else glibc's mallinfo2. A profile
 * held a pointer per frame of every site (8 bytes a frame: ~540 MB for
 * ~1M stacks of ~70 frames) and speedscope another index per frame; now
 * frames are asked for when a writer needs them. */
size_t __sanitizer_get_current_allocated_bytes(void) __attribute__((weak));

static size_t heap_in_use(void) {
  if (__sanitizer_get_current_allocated_bytes) return __sanitizer_get_current_allocated_bytes();
  struct mallinfo2 m = mallinfo2();
  return m.uordblks + m.hblkhd; /* (blocks from the arenas, and those mmap'd) */
}

enum { DEEP_SITES = 4000, DEEP_FRAMES = 250 };
static const hh_frame f_deep = {0x402000, "deep", "/src/deep.c", 5, MOD, 0x2000, false, false};
static const hh_frame f_leaf[4] = {
    {0x403000, "leaf0", "/src/deep.c", 9, MOD, 0x3000, false, false},
    {0x403100, "leaf1", "/src/deep.c", 10, MOD, 0x3100, false, false},
    {0x403200, "leaf2", "/src/deep.c", 11, MOD, 0x3200, false, false},
    {0x403300, "leaf3", "/src/deep.c", 12, MOD, 0x3300, false, false},
};

/* stack s: a leaf under DEEP_FRAMES - 1 frames of deep */
static size_t deep_frames(void *arg, uint64_t stack, const hh_frame **out, size_t max) {
  (void)arg;
  size_t n = DEEP_FRAMES < max ? DEEP_FRAMES : max;
  out[0] = &f_leaf[stack % 4];
  for (size_t i = 1; i < n; i++) out[i] = &f_deep;
  return n;
}

/* A stream that notes the most heap in use above `base` at each write. */
typedef struct watch {
  size_t base, most, written;
} watch;

static ssize_t watch_write(void *cookie, const char *buf, size_t size) {
  (void)buf;
  watch *w = cookie;
  size_t now = heap_in_use();
  if (now > w->base && now - w->base > w->most) w->most = now - w->base;
  w->written += size;
  return (ssize_t)size;
}

static void deep_stacks_take_no_memory_per_frame(void **state) {
  (void)state;
  hh_site *many = calloc(DEEP_SITES, sizeof *many);
  assert_non_null(many);
  for (size_t i = 0; i < DEEP_SITES; i++)
    many[i] = (hh_site){.stack = i + 1,
                        .allocations = 1,
                        .bytes = 100,
                        .peak_bytes = 100,
                        .peak_blocks = 1,
                        .leaked_bytes = 100,
                        .leaked_blocks = 1};
  hh_analysis a = fake_analysis();
  a.sites = many;
  a.nsites = DEEP_SITES;
  watch w = {0};
  FILE *out = fopencookie(&w, "w", (cookie_io_functions_t){.write = watch_write});
  assert_non_null(out);
  setvbuf(out, NULL, _IOFBF, 4096);
  fputc('\n', out);
  fflush(out); /* (the stream's buffer made) */
  w.base = heap_in_use();
  w.most = 0;
  hh_profile p;
  assert_int_equal(hh_profile_build(&p, &a, deep_frames, NULL), 0);
  /* 4000 sites of 250 frames: 8 MB of frame pointers before */
  size_t built = heap_in_use() - w.base;
  assert_true(built < 4096);
  /* speedscope's frame index per frame was another 8 MB; 3 x 1M indices
   * written, ~6 MB */
  assert_int_equal(hh_write_speedscope(out, &p, "prog"), 0);
  fflush(out);
  assert_true(w.written > 6000000);
  assert_true(w.most < 64 * 1024);
  w.most = 0;
  assert_int_equal(hh_write_massif(out, &p, "prog", 0), 0);
  fflush(out);
  assert_true(w.most < 64 * 1024);
  w.most = 0;
  assert_int_equal(hh_write_flame_svg(out, &p, HH_COST_PEAK, "prog"), 0);
  fflush(out);
  assert_true(w.most < 128 * 1024);
  hh_profile_free(&p);
  fclose(out);
  free(many);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(utf8_everywhere),
      cmocka_unit_test_setup_teardown(pprof_strings_are_utf8, setup, teardown),
      cmocka_unit_test_setup_teardown(chart_with_text_not_utf8, setup, teardown),
      cmocka_unit_test_setup_teardown(collapsed_merges_paths_and_drops_zero_costs, setup, teardown),
      cmocka_unit_test_setup_teardown(collapsed_peak_with_inlined_frame, setup, teardown),
      cmocka_unit_test_setup_teardown(collapsed_allocations_sanitizes_names, setup, teardown),
      cmocka_unit_test_setup_teardown(collapsed_temporary, setup, teardown),
      cmocka_unit_test(frame_names_without_function),
      cmocka_unit_test_setup_teardown(long_names_kept_whole_in_every_format, setup, teardown),
      cmocka_unit_test_setup_teardown(flame_svg_boxes_titles_and_escaping, setup, teardown),
      cmocka_unit_test_setup_teardown(flame_svg_empty_cost, setup, teardown),
      cmocka_unit_test_setup_teardown(massif_snapshots_and_trees, setup, teardown),
      cmocka_unit_test_setup_teardown(massif_threshold_gathers_small_sites, setup, teardown),
      cmocka_unit_test_setup_teardown(massif_end_point_once, setup, teardown),
      cmocka_unit_test_setup_teardown(massif_peak_level_again, setup, teardown),
      cmocka_unit_test_setup_teardown(hash_in_names_kept_but_in_massif, setup, teardown),
      cmocka_unit_test_setup_teardown(pprof_profile_decodes, setup, teardown),
      cmocka_unit_test_setup_teardown(pprof_location_keeps_its_module_when_another_reused_the_address, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(pprof_file_is_gzipped, setup, teardown),
      cmocka_unit_test_setup_teardown(speedscope_profiles_and_weights, setup, teardown),
      cmocka_unit_test(chart_formats_by_extension),
      cmocka_unit_test(json_strings_are_utf8),
      cmocka_unit_test_setup_teardown(chart_renders_three_formats, setup, teardown),
      cmocka_unit_test(chart_of_an_empty_trace),
      cmocka_unit_test(chart_time_in_the_runs_unit),
      cmocka_unit_test(writers_say_the_trace_is_not_whole),
      cmocka_unit_test(deep_stacks_take_no_memory_per_frame),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
