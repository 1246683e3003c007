/* `heaphook dump`: every record of a trace, one line each, as key=value
 * fields (for tests, debugging and scripts). Allocation lines end with the
 * innermost call site outside the allocator ("at=function (file:line)"). */
#define _GNU_SOURCE
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "escape.h"
#include "symbolize/symbolize.h"

static const char usage[] =
    "usage: heaphook dump [--no-symbols] [--ordered] [--stacks] TRACE\n"
    "\n"
    "Prints every record of TRACE on its own line: the header, then in file order\n"
    "  command, thread, module, unload, stack, alloc, realloc, free, rss, marker, end, exec\n"
    "with times in seconds since the start. Exits 1 when the trace is damaged or cut\n"
    "short (after printing what could be read).\n"
    "\n"
    "options:\n"
    "  --no-symbols   do not symbolize addresses (faster)\n"
    "  --ordered      events in time order across threads, as the merge gives them (the analyses\n"
    "                 also reorder a clock tick's events the heap says came otherwise)\n"
    "  --stacks       the whole call stack after each allocation, one frame per line\n"
    "  -h, --help     this help\n";

static void put_string(FILE *out, const char *s) {
  fputc('"', out);
  for (; *s; s++) {
    unsigned char ch = (unsigned char)*s;
    if (ch == '"' || ch == '\\')
      fprintf(out, "\\%c", ch);
    else if (ch < 0x20 || ch == 0x7f)
      fprintf(out, "\\x%02x", ch);
    else
      fputc(ch, out);
  }
  fputc('"', out);
}

static void put_time(FILE *out, uint64_t ns) {
  fprintf(out, "%" PRIu64 ".%09" PRIu64, ns / 1000000000u, ns % 1000000000u);
}

/* (names from a trace's modules and their debug information, with control
 * characters shown as escapes: a newline in one split a record's line) */
static void put_frame(FILE *out, const hh_frame *f) {
  char buf[1024];
  if (f->function)
    fputs(hh_text_safe(f->function, buf, sizeof buf), out);
  else
    fprintf(out, "0x%" PRIx64, f->ip);
  if (f->file) {
    const char *slash = strrchr(f->file, '/');
    fprintf(out, " (%s:%" PRIu32 ")", hh_text_safe(slash ? slash + 1 : f->file, buf, sizeof buf), f->line);
  } else if (f->module) {
    const char *slash = strrchr(f->module, '/');
    fprintf(out, " (%s+0x%" PRIx64 ")", hh_text_safe(slash ? slash + 1 : f->module, buf, sizeof buf),
            f->module_offset);
  }
  if (f->inlined) fputs(" [inlined]", out);
}

int hh_cmd_dump(int argc, char **argv) {
  static const struct option opts[] = {
      {"no-symbols", no_argument, NULL, 'S'},
      {"ordered", no_argument, NULL, 'O'},
      {"stacks", no_argument, NULL, 'T'},
      {"help", no_argument, NULL, 'h'},
      {NULL, 0, NULL, 0},
  };
  bool symbols = true, ordered = false, stacks = false;
  hh_cli_args args = HH_CLI_ARGS("dump", usage, argc, argv);
  int c;
  while ((c = hh_cli_getopt(&args, ":h", opts)) != -1) {
    switch (c) {
      case HH_CLI_STOP:
        return args.status;
      case 'S':
        symbols = false;
        break;
      case 'O':
        ordered = true;
        break;
      case 'T':
        stacks = true;
        break;
    }
  }
  const char *path = hh_cli_one_trace(&args);
  if (!path) return args.status;
  hh_reader *r = hh_cli_open_trace("dump", path);
  if (!r) return HH_EXIT_FAIL;
  hh_symbolizer *sym = symbols ? hh_sym_new(NULL, NULL) : NULL;
  FILE *out = stdout;

  const hh_trace_header *h = hh_reader_header(r);
  fprintf(out,
          "header version=%" PRIu32 " pid=%" PRIu32 " ppid=%" PRIu32 " clock=%" PRIu64 " start=", h->version,
          h->pid, h->ppid, h->ticks_per_second);
  put_time(out, h->start_wall_ns);
  fprintf(out, " sample=%" PRIu64 " flags=%s%s%s\n", h->sample_bytes,
          h->flags & HH_TRACE_FLAG_STACKS ? "stacks," : "",
          h->flags & HH_TRACE_FLAG_SAMPLED ? "sampled," : "", h->flags & HH_TRACE_FLAG_ZSTD ? "zstd" : "");

  hh_merge *m = ordered ? hh_merge_new(r, 0) : NULL;
  hh_event ev;
  const hh_frame *frames[128];
  while (m ? hh_merge_next(m, &ev) : hh_reader_next(r, &ev)) {
    switch (ev.kind) {
      case HH_EV_ALLOC:
      case HH_EV_REALLOC:
      case HH_EV_FREE:
        fprintf(out, "%s t=", hh_ev_kind_name(ev.kind));
        put_time(out, ev.time);
        fprintf(out, " thread=%" PRIu32 " fn=%s", ev.thread, hh_fn_name(ev.fn));
        if (ev.kind == HH_EV_REALLOC) fprintf(out, " old=0x%" PRIx64, ev.old_addr);
        fprintf(out, " addr=0x%" PRIx64, ev.addr);
        if (ev.kind == HH_EV_FREE) {
          fputc('\n', out);
          break;
        }
        fprintf(out, " size=%" PRIu64, ev.size);
        if (ev.align) fprintf(out, " align=%" PRIu64, ev.align);
        if (ev.weight != ev.size) fprintf(out, " weight=%" PRIu64, ev.weight);
        fprintf(out, " stack=%" PRIu64, ev.stack);
        if (sym && ev.stack) {
          size_t n = hh_sym_stack(sym, r, ev.stack, HH_SYM_FOLD, frames, stacks ? 128 : 1);
          if (n) {
            fputs(" at=", out);
            put_frame(out, frames[0]);
          }
          fputc('\n', out);
          for (size_t i = 1; i < n; i++) {
            fputs("    ", out);
            put_frame(out, frames[i]);
            fputc('\n', out);
          }
        } else {
          fputc('\n', out);
        }
        break;
      case HH_EV_STACK:
        fprintf(out, "stack id=%" PRIu64 " parent=%" PRIu64 " ip=0x%" PRIx64, ev.u.stack.id,
                ev.u.stack.parent, ev.u.stack.ip);
        if (sym) {
          hh_sym_sync(sym, r);
          const hh_frame *f;
          size_t n = hh_sym_ip(sym, ev.u.stack.ip, hh_reader_stack(r, ev.u.stack.id)->epoch, &f);
          fputs(" at=", out);
          put_frame(out, &f[n - 1]);
        }
        fputc('\n', out);
        break;
      case HH_EV_THREAD:
        fprintf(out, "thread index=%" PRIu32 " tid=%" PRIu64 " name=", ev.u.thread->index, ev.u.thread->tid);
        put_string(out, ev.u.thread->name);
        fputc('\n', out);
        break;
      case HH_EV_MODULE_LOAD: {
        const hh_trace_module *mod = ev.u.module;
        char id[300];
        fprintf(out, "module base=0x%" PRIx64 " build-id=%s path=", mod->base,
                mod->build_id[0] ? hh_text_safe(mod->build_id, id, sizeof id) : "-");
        put_string(out, mod->path);
        fputs(" segments=", out);
        for (uint32_t i = 0; i < mod->nsegments; i++)
          fprintf(out, "%s0x%" PRIx64 "+0x%" PRIx64 "@0x%" PRIx64, i ? "," : "", mod->segments[i].start,
                  mod->segments[i].size, mod->segments[i].offset);
        fputc('\n', out);
        break;
      }
      case HH_EV_MODULE_UNLOAD:
        if (ev.u.module) {
          fprintf(out, "unload base=0x%" PRIx64 " path=", ev.u.module->base);
          put_string(out, ev.u.module->path);
          fputc('\n', out);
        } else {
          fputs("unload base=? (no module loaded there)\n", out);
        }
        break;
      case HH_EV_RSS:
        fputs("rss t=", out);
        put_time(out, ev.time);
        fprintf(out, " thread=%" PRIu32 " bytes=%" PRIu64 "\n", ev.thread, ev.u.rss);
        break;
      case HH_EV_MARKER:
        fputs("marker t=", out);
        put_time(out, ev.time);
        fprintf(out, " thread=%" PRIu32 " name=", ev.thread);
        put_string(out, ev.u.marker);
        fputc('\n', out);
        break;
      case HH_EV_COMMAND: {
        const char *const *av;
        const char *exe;
        int ac = hh_reader_command(r, &av, &exe);
        fputs("command exe=", out);
        put_string(out, exe);
        fputs(" argv=", out);
        for (int i = 0; i < ac; i++) {
          if (i) fputc(' ', out);
          put_string(out, av[i]);
        }
        fputc('\n', out);
        break;
      }
      case HH_EV_END:
        fputs("end t=", out);
        put_time(out, ev.time);
        fprintf(out, " events=%" PRIu64 "\n", ev.u.end_events);
        break;
      case HH_EV_EXEC:
        fputs("exec t=", out);
        put_time(out, ev.time);
        fprintf(out, " events=%" PRIu64 " path=", ev.u.exec.events);
        put_string(out, ev.u.exec.path);
        fputc('\n', out);
        break;
    }
  }
  fflush(out);
  int rc = hh_cli_report_status_of("dump", path, r);
  if (m && hh_merge_late(m))
    hh_cli_error("dump", "warning: %" PRIu64 " event%s came too late to be put in time order",
                 hh_merge_late(m), hh_cli_s(hh_merge_late(m)));
  hh_merge_free(m);
  hh_sym_free(sym);
  hh_reader_close(r);
  return rc;
}
