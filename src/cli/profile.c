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
    if (*c == ';' || *c == '#' || (unsigned char)*c < 0x20 || *c == 0x7f) *c = '_';
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

const char *hh_trace_note(const hh_analysis *a, char *buf, size_t size) {
  if (a->status == HH_READ_OK) return NULL;
  snprintf(buf, size, "%s: %s", a->status == HH_READ_NO_END ? "warning" : "error",
           a->status_message ? a->status_message : "the trace is not whole");
  return buf;
}

const char *hh_sampled_note(const hh_analysis *a, char *buf, size_t size) {
  if (!a->sampled) return NULL;
  snprintf(buf, size,
           "sampled trace (one sample per %" PRIu64 " bytes on average): bytes and counts are estimates",
           a->sample_bytes);
  return buf;
}

int hh_profile_build(hh_profile *p, const hh_analysis *a, hh_stack_frames_fn frames, void *arg) {
  memset(p, 0, sizeof *p);
  p->analysis = a;
  p->no_stack = calloc(1, sizeof *p->no_stack);
  if (!p->no_stack) return -1;
  p->no_stack->function = "[no stack]";
  if (a->nsites == 0) return 0;
  p->samples = calloc(a->nsites, sizeof *p->samples);
  if (!p->samples) goto oom;
  size_t cap = 1024, used = 0;
  p->store = malloc(cap * sizeof *p->store);
  if (!p->store) goto oom;
  const hh_frame *tmp[HH_PROFILE_MAX_DEPTH];
  /* Offsets first (the store moves as it grows), pointers at the end. */
  size_t *offset = malloc(a->nsites * sizeof *offset);
  if (!offset) goto oom;
  for (size_t i = 0; i < a->nsites; i++) {
    const hh_site *s = &a->sites[i];
    size_t n = s->stack ? frames(arg, s->stack, tmp, HH_PROFILE_MAX_DEPTH) : 0;
    if (n == 0) {
      tmp[0] = p->no_stack;
      n = 1;
    }
    if (used + n > cap) {
      while (used + n > cap) cap *= 2;
      const hh_frame **grown = realloc(p->store, cap * sizeof *p->store);
      if (!grown) {
        free(offset);
        goto oom;
      }
      p->store = grown;
    }
    memcpy(p->store + used, tmp, n * sizeof *tmp);
    offset[i] = used;
    used += n;
    p->samples[i] = (hh_profile_sample){.site = s, .nframes = n};
  }
  for (size_t i = 0; i < a->nsites; i++) p->samples[i].frames = p->store + offset[i];
  free(offset);
  p->nsamples = a->nsites;
  return 0;
oom:
  hh_profile_free(p);
  return -1;
}

void hh_profile_free(hh_profile *p) {
  free(p->samples);
  free(p->store);
  free(p->no_stack);
  memset(p, 0, sizeof *p);
}
