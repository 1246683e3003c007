/* libFuzzer target for what the commands do after reading: any bytes, read
 * and analysed (src/analyze), then written by the writers that need no
 * symbolizer (collapsed stacks, the SVG flame graph, massif, speedscope,
 * pprof's encoding) into memory. Frames are made up from the stack nodes'
 * addresses: names shared by several addresses (merged frames), names with
 * characters the formats escape, and the trace's own module paths. Built
 * like fuzz_reader.c. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "analyze/analysis.h"
#include "render.h"

/* One frame per distinct ip, the same pointer each time (as the
 * symbolizer's cache gives them). */
typedef struct fake_syms {
  const hh_reader *r;
  size_t cap, n;
  hh_frame **slot;
} fake_syms;

static const char *const names[] = {"main", "f;g", "a<b>&\"c\"", "\x01\x7f", "main", "operator new"};

static const hh_frame *frame_of(fake_syms *s, uint64_t ip) {
  if (s->n * 2 >= s->cap) {
    size_t cap = s->cap ? s->cap * 2 : 64;
    hh_frame **slot = calloc(cap, sizeof *slot);
    if (!slot) abort();
    for (size_t i = 0; i < s->cap; i++)
      if (s->slot[i])
        for (size_t j = (s->slot[i]->ip * 0x9e3779b97f4a7c15u) & (cap - 1);; j = (j + 1) & (cap - 1))
          if (!slot[j]) {
            slot[j] = s->slot[i];
            break;
          }
    free(s->slot);
    s->slot = slot;
    s->cap = cap;
  }
  size_t j = (ip * 0x9e3779b97f4a7c15u) & (s->cap - 1);
  for (; s->slot[j]; j = (j + 1) & (s->cap - 1))
    if (s->slot[j]->ip == ip) return s->slot[j];
  hh_frame *f = calloc(1, sizeof *f);
  if (!f) abort();
  f->ip = ip;
  if (ip % 7 != 0) f->function = names[ip % (sizeof names / sizeof *names)];
  size_t nm = hh_reader_module_count(s->r);
  if (nm && ip % 3 != 0) {
    f->module = hh_reader_module(s->r, ip % nm)->path;
    f->module_offset = ip / 2;
  }
  if (ip % 5 == 0) f->file = "x.c", f->line = (uint32_t)ip;
  f->inlined = ip % 11 == 0;
  s->slot[j] = f;
  s->n++;
  return f;
}

static size_t frames(void *arg, uint64_t stack, const hh_frame **out, size_t max) {
  fake_syms *s = arg;
  size_t n = 0;
  for (const hh_stack_node *node = hh_reader_stack(s->r, stack); node && n < max;
       node = hh_reader_stack(s->r, node->parent))
    out[n++] = frame_of(s, node->ip);
  return n;
}

static void to_memory(int (*write)(FILE *, const hh_profile *, hh_cost), const hh_profile *p, hh_cost cost) {
  char *buf = NULL;
  size_t size = 0;
  FILE *f = open_memstream(&buf, &size);
  if (!f) abort();
  (void)write(f, p, cost);
  fclose(f);
  free(buf);
}

static int flame_svg(FILE *f, const hh_profile *p, hh_cost cost) {
  return hh_write_flame_svg(f, p, cost, "t");
}
static int massif(FILE *f, const hh_profile *p, hh_cost cost) {
  return hh_write_massif(f, p, "cmd", cost == HH_COST_PEAK ? 0 : 3);
}
static int speedscope(FILE *f, const hh_profile *p, hh_cost cost) {
  (void)cost;
  return hh_write_speedscope(f, p, "t");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char err[256];
  hh_reader *r = hh_reader_open_mem(data, size, err, sizeof err);
  if (!r) return 0;
  hh_reader_set_memory_limit(r, 256 << 20); /* (as fuzz_reader.c) */
  hh_analyze_options opt = {.max_points = 50, .peak_blocks = true};
  hh_analysis *a = hh_analyze(r, &opt);
  char note[512];
  (void)hh_trace_note(a, note, sizeof note);
  (void)hh_sampled_note(a, note, sizeof note);
  hh_site **sorted = NULL;
  (void)hh_sites_by(a, HH_COST_TEMPORARY, &sorted);
  free(sorted);
  fake_syms s = {.r = r};
  hh_profile p;
  if (hh_profile_build(&p, a, frames, &s) == 0) {
    to_memory(hh_write_collapsed, &p, HH_COST_PEAK);
    to_memory(hh_write_collapsed, &p, HH_COST_LEAKED);
    to_memory(flame_svg, &p, HH_COST_ALLOCATIONS);
    to_memory(massif, &p, HH_COST_PEAK);
    to_memory(speedscope, &p, HH_COST_PEAK);
    const hh_trace_module *mods[4];
    size_t nm = hh_reader_module_count(r) < 4 ? hh_reader_module_count(r) : 4;
    for (size_t i = 0; i < nm; i++) mods[i] = hh_reader_module(r, i);
    uint8_t *pb = NULL;
    size_t pbsize = 0;
    if (hh_pprof_encode(&p, mods, nm, "c", &pb, &pbsize) == 0) free(pb);
    hh_profile_free(&p);
  }
  for (size_t i = 0; i < s.cap; i++) free(s.slot[i]);
  free(s.slot);
  hh_analysis_free(a);
  hh_reader_close(r);
  return 0;
}
