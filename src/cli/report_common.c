/* report_common.h: stack text and JSON for `heaphook report` and `diff`. */
#define _GNU_SOURCE
#include "report_common.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static const char *base_name(const char *path) {
  const char *slash = strrchr(path, '/');
  return slash ? slash + 1 : path;
}

size_t hh_report_frames(hh_symbolizer *sym, const hh_reader *r, uint64_t stack, const hh_frame **out, size_t max) {
  if (!stack || !sym) return 0;
  return hh_sym_stack(sym, r, stack, HH_SYM_FOLD, out, max);
}

void hh_report_put_frame(FILE *out, const hh_frame *f) {
  if (f->function)
    fputs(f->function, out);
  else
    fprintf(out, "0x%" PRIx64, f->ip);
  if (f->file)
    fprintf(out, " (%s:%" PRIu32 ")", base_name(f->file), f->line);
  else if (f->module)
    fprintf(out, " (%s+0x%" PRIx64 ")", base_name(f->module), f->module_offset);
  if (f->inlined) fputs(" [inlined]", out);
}

char *hh_report_site_key(hh_symbolizer *sym, const hh_reader *r, uint64_t stack) {
  const hh_frame *frames[HH_REPORT_MAX_FRAMES];
  size_t n = hh_report_frames(sym, r, stack, frames, HH_REPORT_MAX_FRAMES);
  if (n == 0) return strdup("[no stack]");
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (!f) abort();
  for (size_t i = n; i-- > 0;) {
    const hh_frame *fr = frames[i];
    if (fr->function)
      fputs(fr->function, f);
    else if (fr->module)
      fprintf(f, "%s+0x%" PRIx64, base_name(fr->module), fr->module_offset);
    else
      fprintf(f, "0x%" PRIx64, fr->ip);
    if (i) fputc(';', f);
  }
  fclose(f);
  return buf;
}

void hh_report_json_string(FILE *out, const char *s) {
  if (!s) {
    fputs("null", out);
    return;
  }
  fputc('"', out);
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    switch (c) {
      case '"':
        fputs("\\\"", out);
        break;
      case '\\':
        fputs("\\\\", out);
        break;
      case '\n':
        fputs("\\n", out);
        break;
      case '\t':
        fputs("\\t", out);
        break;
      case '\r':
        fputs("\\r", out);
        break;
      default:
        if (c < 0x20 || c == 0x7f)
          fprintf(out, "\\u%04x", c);
        else
          fputc(c, out);
    }
  }
  fputc('"', out);
}

void hh_report_json_frames(FILE *out, const hh_frame *const *frames, size_t n) {
  fputc('[', out);
  for (size_t i = 0; i < n; i++) {
    const hh_frame *f = frames[i];
    fputs(i ? ", {" : "{", out);
    fputs("\"function\": ", out);
    hh_report_json_string(out, f->function);
    fputs(", \"file\": ", out);
    hh_report_json_string(out, f->file);
    fprintf(out, ", \"line\": %" PRIu32 ", \"module\": ", f->line);
    hh_report_json_string(out, f->module);
    fprintf(out, ", \"module_offset\": %" PRIu64 ", \"ip\": %" PRIu64 ", \"inlined\": %s}", f->module_offset, f->ip,
            f->inlined ? "true" : "false");
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
  }
  return "?";
}
