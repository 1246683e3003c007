/* report_common.h: stack text and JSON for `heaphook report` and `diff`. */
#define _GNU_SOURCE
#include "report_common.h"

#include "escape.h"
#include "trace/xalloc.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const char *base_name(const char *path) {
  const char *slash = strrchr(path, '/');
  return slash ? slash + 1 : path;
}

/* A count for --top, --frames and html's --sites: digits only (strtoull
 * also took " 5" and "+5", and a count past 2^64 as 2^64 - 1). */
int hh_cli_parse_count(const char *s, size_t *out) {
  if (!*s || strspn(s, "0123456789") != strlen(s)) return -1;
  errno = 0;
  unsigned long long v = strtoull(s, NULL, 10);
  if (errno == ERANGE || v > SIZE_MAX) return -1;
  *out = (size_t)v;
  return 0;
}

bool hh_report_options(hh_cli_args *a, bool *json, size_t *top, size_t *frames) {
  static const struct option opts[] = {
      {"json", no_argument, NULL, 'j'},
      {"top", required_argument, NULL, 't'},
      {"frames", required_argument, NULL, 'f'},
      {"help", no_argument, NULL, 'h'},
      {NULL, 0, NULL, 0},
  };
  int ch;
  while ((ch = hh_cli_getopt(a, ":h", opts)) != -1) {
    switch (ch) {
      case HH_CLI_STOP:
        return false;
      case 'j':
        *json = true;
        break;
      case 't':
        if (hh_cli_parse_count(optarg, top)) {
          a->status = hh_cli_usage_error(a->cmd, a->usage, "--top wants a number, not \"%s\"", optarg);
          return false;
        }
        break;
      case 'f':
        if (hh_cli_parse_count(optarg, frames)) {
          a->status = hh_cli_usage_error(a->cmd, a->usage, "--frames wants a number, not \"%s\"", optarg);
          return false;
        }
        break;
    }
  }
  return true;
}

size_t hh_report_frames(hh_symbolizer *sym, const hh_reader *r, uint64_t stack, const hh_frame **out,
                        size_t max) {
  if (!stack || !sym) return 0;
  return hh_sym_stack(sym, r, stack, HH_SYM_FOLD, out, max);
}

void hh_report_put_frame(FILE *out, const hh_frame *f) {
  char safe[1024]; /* names from the program's files, for the terminal (escape.h) */
  if (f->function)
    fputs(hh_text_safe(f->function, safe, sizeof safe), out);
  else
    fprintf(out, "0x%" PRIx64, f->ip);
  if (f->file)
    fprintf(out, " (%s:%" PRIu32 ")", hh_text_safe(base_name(f->file), safe, sizeof safe), f->line);
  else if (f->module)
    fprintf(out, " (%s+0x%" PRIx64 ")", hh_text_safe(base_name(f->module), safe, sizeof safe),
            f->module_offset);
  if (f->inlined) fputs(" [inlined]", out);
}

void hh_report_text_stack(FILE *out, hh_symbolizer *sym, const hh_reader *r, uint64_t stack, size_t frames) {
  const hh_frame *f[HH_REPORT_MAX_FRAMES];
  size_t n = hh_report_frames(sym, r, stack, f, HH_REPORT_MAX_FRAMES);
  if (n == 0) {
    fputs("        [no stack recorded]\n", out);
    return;
  }
  size_t show = frames && n > frames ? frames : n;
  for (size_t i = 0; i < show; i++) {
    fputs("        ", out);
    hh_report_put_frame(out, f[i]);
    fputc('\n', out);
  }
  if (show < n) fprintf(out, "        ... %zu more frame%s\n", n - show, n - show == 1 ? "" : "s");
}

/* s[0..n) at the end of the key in *buf (room for a NUL after it). */
static void key_put(char **buf, size_t *cap, size_t *len, const char *s, size_t n) {
  if (*len + n + 1 > *cap) {
    size_t c = *cap ? *cap : 256;
    while (*len + n + 1 > c) c *= 2;
    *buf = xrealloc(*buf, c);
    *cap = c;
  }
  memcpy(*buf + *len, s, n);
  *len += n;
  (*buf)[*len] = 0;
}

size_t hh_report_site_key_into(hh_symbolizer *sym, const hh_reader *r, uint64_t stack, char **buf,
                               size_t *cap) {
  const hh_frame *frames[HH_REPORT_MAX_FRAMES];
  size_t n = hh_report_frames(sym, r, stack, frames, HH_REPORT_MAX_FRAMES), len = 0;
  if (n == 0) {
    key_put(buf, cap, &len, "[no stack]", strlen("[no stack]"));
    return len;
  }
  for (size_t i = n; i-- > 0;) {
    const hh_frame *fr = frames[i];
    char tmp[64];
    if (fr->function) {
      key_put(buf, cap, &len, fr->function, strlen(fr->function));
    } else if (fr->module) {
      const char *base = base_name(fr->module);
      key_put(buf, cap, &len, base, strlen(base));
      key_put(buf, cap, &len, tmp, (size_t)snprintf(tmp, sizeof tmp, "+0x%" PRIx64, fr->module_offset));
    } else {
      key_put(buf, cap, &len, tmp, (size_t)snprintf(tmp, sizeof tmp, "0x%" PRIx64, fr->ip));
    }
    if (i) key_put(buf, cap, &len, ";", 1);
  }
  return len;
}

char *hh_report_site_key(hh_symbolizer *sym, const hh_reader *r, uint64_t stack) {
  char *buf = NULL;
  size_t cap = 0;
  hh_report_site_key_into(sym, r, stack, &buf, &cap);
  return buf;
}

void hh_report_json_frames(FILE *out, const hh_frame *const *frames, size_t n) {
  fputc('[', out);
  for (size_t i = 0; i < n; i++) {
    const hh_frame *f = frames[i];
    fputs(i ? ", {" : "{", out);
    fputs("\"function\": ", out);
    hh_json_put_string(out, f->function, 0);
    fputs(", \"file\": ", out);
    hh_json_put_string(out, f->file, 0);
    fprintf(out, ", \"line\": %" PRIu32 ", \"module\": ", f->line);
    hh_json_put_string(out, f->module, 0);
    fprintf(out, ", \"module_offset\": %" PRIu64 ", \"ip\": %" PRIu64 ", \"inlined\": %s}", f->module_offset,
            f->ip, f->inlined ? "true" : "false");
  }
  fputc(']', out);
}

const char *hh_report_status_word(hh_read_status st) {
  switch (st) {
    case HH_READ_OK:
      return "ok";
    case HH_READ_NO_END:
      return "no_end";
    case HH_READ_CUT_SHORT:
      return "cut_short";
    case HH_READ_DAMAGED:
      return "damaged";
    case HH_READ_IO_ERROR:
      return "io_error";
    case HH_READ_LIMIT:
      return "memory_limit";
  }
  return "?";
}
