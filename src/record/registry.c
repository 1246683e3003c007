/* The table of built-in recorders and the HEAPHOOK_RECORD parser. */
#include <stdbool.h>
#include <string.h>

#include "base/log.h"
#include "recorder.h"

static const hh_recorder *const builtin[] = {
    &hh__counts_recorder,
    &hh__usage_recorder,
    &hh__trace_recorder,
};

__thread void *hh__call_cfa __attribute__((tls_model("initial-exec")));

static const char *const fn_names[HH_FN_COUNT] = {
    [HH_FN_MALLOC] = "malloc",
    [HH_FN_CALLOC] = "calloc",
    [HH_FN_REALLOC] = "realloc",
    [HH_FN_REALLOCARRAY] = "reallocarray",
    [HH_FN_POSIX_MEMALIGN] = "posix_memalign",
    [HH_FN_ALIGNED_ALLOC] = "aligned_alloc",
    [HH_FN_MEMALIGN] = "memalign",
    [HH_FN_VALLOC] = "valloc",
    [HH_FN_PVALLOC] = "pvalloc",
    [HH_FN_FREE] = "free",
    [HH_FN_FREE_SIZED] = "free_sized",
    [HH_FN_FREE_ALIGNED_SIZED] = "free_aligned_sized",
    [HH_FN_MALLOC_USABLE_SIZE] = "malloc_usable_size",
};

const char *hh__fn_name(hh_fn fn) { return (unsigned)fn < HH_FN_COUNT ? fn_names[fn] : "?"; }

static const hh_recorder *find(const char *name, size_t len) {
  for (size_t i = 0; i < sizeof builtin / sizeof builtin[0]; i++) {
    if (strlen(builtin[i]->name) == len && memcmp(builtin[i]->name, name, len) == 0) return builtin[i];
  }
  return NULL;
}

int hh__recorders_parse(const char *spec, const hh_recorder **out, int max) {
  int n = 0;
  if (spec == NULL) return 0;
  const char *p = spec;
  while (*p != '\0') {
    const char *end = strchr(p, ',');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    if (len > 0) {
      const hh_recorder *r = find(p, len);
      if (r == NULL) {
        hh__log("HEAPHOOK_RECORD=%s: unknown recorder '%.*s' (known: counts, usage, trace)", spec, (int)len,
                p);
        return -1;
      }
      bool dup = false;
      for (int i = 0; i < n; i++) dup = dup || out[i] == r;
      if (!dup) {
        if (n == max) {
          hh__log("HEAPHOOK_RECORD=%s: more than %d recorders", spec, max);
          return -1;
        }
        out[n++] = r;
      }
    }
    if (end == NULL) break;
    p = end + 1;
  }
  return n;
}
