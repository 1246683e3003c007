/* The analysis's call sites with their symbolized stacks (render.h), and
 * the small text helpers the writers share. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render.h"

const char *hh_basename(const char *path) {
  const char *slash = strrchr(path, '/');
  return slash ? slash + 1 : path;
}

const char *hh_frame_name(const hh_frame *f, char *buf, size_t size) {
  if (f->function)
    snprintf(buf, size, "%s", f->function);
  else if (f->module)
    snprintf(buf, size, "%s+0x%" PRIx64, hh_basename(f->module), f->module_offset);
  else
    snprintf(buf, size, "0x%" PRIx64, f->ip);
  for (char *c = buf; *c; c++)
    if (*c == ';' || (unsigned char)*c < 0x20 || *c == 0x7f) *c = '_';
  return buf;
}

char *hh_frame_name_dup(const hh_frame *f) {
  size_t size;
  if (f->function)
    size = strlen(f->function) + 1;
  else if (f->module)
    size = strlen(hh_basename(f->module)) + sizeof "+0x" + 16;
  else
    size = sizeof "0x" + 16;
  char *buf = malloc(size);
  return buf ? (char *)hh_frame_name(f, buf, size) : NULL;
}

uint64_t hh_profile_memory_left(const hh_profile *p) {
  const hh_reader *r = p->analysis ? p->analysis->reader : NULL;
  if (!r || hh_reader_memory_limit(r) == UINT64_MAX) return UINT64_MAX;
  uint64_t limit = hh_reader_memory_limit(r), held = hh_reader_table_bytes(r);
  return held < limit ? limit - held : 0;
}

void hh_cli_memory_limit_error(const char *cmd, const char *path, const char *what, const hh_profile *p) {
  char left[32];
  hh_reader_format_bytes(left, sizeof left, hh_profile_memory_left(p));
  fprintf(
      stderr,
      "heaphook %s: %s: %s would take more than the %s the memory limit leaves beside the reader's tables "
      "(HEAPHOOK_MEMORY_LIMIT raises it)\n",
      cmd, path, what, left);
}

const char *hh_trace_note(const hh_analysis *a, char *buf, size_t size) {
  if (a->status == HH_READ_OK) return NULL;
  snprintf(buf, size, "%s: %s", a->status == HH_READ_NO_END ? "warning" : "error",
           a->status_message ? a->status_message : "the trace is not whole");
  return buf;
}

const char *hh_sampled_note(const hh_analysis *a, char *buf, size_t size) {
  if (!a->sampled) return NULL;
  snprintf(buf, size,
           "sampled trace (one sample per %" PRIu64 " byte%s on average): bytes and counts are estimates",
           a->sample_bytes, a->sample_bytes == 1 ? "" : "s");
  return buf;
}

int hh_profile_build(hh_profile *p, const hh_analysis *a, hh_stack_frames_fn frames, void *arg) {
  memset(p, 0, sizeof *p);
  p->analysis = a;
  p->frames = frames;
  p->arg = arg;
  p->no_stack = calloc(1, sizeof *p->no_stack);
  if (!p->no_stack) return -1;
  p->no_stack->function = "[no stack]";
  p->nsamples = a->nsites;
  return 0;
}

size_t hh_profile_frames(const hh_profile *p, size_t i, const hh_frame **out) {
  const hh_site *s = hh_profile_site(p, i);
  size_t n = s->stack ? p->frames(p->arg, s->stack, out, HH_PROFILE_MAX_DEPTH) : 0;
  if (n == 0) {
    out[0] = p->no_stack;
    n = 1;
  }
  return n;
}

void hh_profile_free(hh_profile *p) {
  free(p->no_stack);
  memset(p, 0, sizeof *p);
}
