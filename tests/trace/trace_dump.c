/* trace_dump: prints a trace as text, one line per record in file order,
 * for the tracer's tests (which grep and count the lines). Uses the trace
 * reader and the symbolizer.
 *
 *   trace_dump [-a] [-s] [-t] [-n] TRACE
 *
 *   header pid=P ppid=Q flags=F tps=T sample=S
 *   thread INDEX TID NAME
 *   module PATH BUILDID NSEG
 *   unload PATH
 *   alloc FN T=THREAD size=N align=A weight=W stack=FRAME;FRAME;...
 *   realloc FN T=THREAD size=N weight=W moved=0|1 stack=...
 *   free FN T=THREAD
 *   marker NAME | rss BYTES | command ARGV0 ... | end EVENTS
 *   status OK|NO_END|CUT_SHORT|DAMAGED|IO_ERROR chunks=N MESSAGE
 *
 * A FRAME is function@module-basename (innermost first, "?" unknown). With
 * -a, alloc, realloc and free lines also give the addresses, before the
 * stack: ptr=ADDR (realloc: old=ADDR ptr=ADDR). With -s, every record is
 * read (and decoded) but only the header and status lines are printed,
 * with "events N" (allocations, reallocs and frees) before the status: for
 * the stress tests' large traces, whose events nobody greps. With -t,
 * alloc, realloc and free lines give the event's time in ns since the
 * start, before the stack: time=NS; marker lines too, after the name.
 * With -n, stacks are not symbolized: stack=#ID (the trace's stack id, 0
 * for none), for tests that look at everything but the frames of many
 * traces (symbolizing opens the modules' debug information: ~0.1 s a
 * trace, 0.2 s on a loaded machine).
 * Exit status 0 when the trace could be opened. */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "symbolize/symbolize.h"
#include "trace/reader.h"

static const char *base(const char *path) {
  if (path == NULL) return "?";
  const char *s = strrchr(path, '/');
  return s ? s + 1 : path;
}

static bool no_symbols;

static void print_stack(hh_symbolizer *sym, hh_reader *r, uint64_t id) {
  printf(" stack=");
  if (no_symbols) {
    printf("#%" PRIu64 "\n", id);
    return;
  }
  const hh_frame *frames[64];
  size_t n = id ? hh_sym_stack(sym, r, id, 0, frames, 64) : 0;
  for (size_t i = 0; i < n; i++) {
    printf("%s%s@%s", i ? ";" : "", frames[i]->function ? frames[i]->function : "?", base(frames[i]->module));
  }
  printf("\n");
}

static void quiet(void *arg, const char *msg) {
  (void)arg;
  (void)msg;
}

int main(int argc, char **argv) {
  bool addrs = false, status_only = false, times = false;
  for (int i = 1; i < argc - 1; i++) {
    if (strcmp(argv[i], "-a") == 0) {
      addrs = true;
    } else if (strcmp(argv[i], "-s") == 0) {
      status_only = true;
    } else if (strcmp(argv[i], "-t") == 0) {
      times = true;
    } else if (strcmp(argv[i], "-n") == 0) {
      no_symbols = true;
    } else {
      argc = 0; /* the usage below */
      break;
    }
  }
  if (argc < 2) {
    fprintf(stderr, "usage: trace_dump [-a] [-s] [-t] [-n] TRACE\n");
    return 2;
  }
  char err[256];
  hh_reader *r = hh_reader_open(argv[argc - 1], err, sizeof err);
  if (r == NULL) {
    printf("open-error %s\n", err);
    return 1;
  }
  hh_symbolizer *sym = no_symbols ? NULL : hh_sym_new(quiet, NULL);
  const hh_trace_header *h = hh_reader_header(r);
  printf("header pid=%u ppid=%u flags=%u tps=%" PRIu64 " sample=%" PRIu64 "\n", h->pid, h->ppid, h->flags,
         h->ticks_per_second, h->sample_bytes);
  hh_event ev;
  uint64_t events = 0;
  while (status_only && hh_reader_next(r, &ev))
    events += ev.kind == HH_EV_ALLOC || ev.kind == HH_EV_REALLOC || ev.kind == HH_EV_FREE;
  if (status_only) printf("events %" PRIu64 "\nend %" PRIu64 "\n", events, hh_reader_end_events(r));
  while (!status_only && hh_reader_next(r, &ev)) {
    switch (ev.kind) {
      case HH_EV_ALLOC:
        if (sym != NULL) hh_sym_sync(sym, r);
        printf("alloc %s T=%u size=%" PRIu64 " align=%" PRIu64 " weight=%" PRIu64, hh_fn_name(ev.fn),
               ev.thread, ev.size, ev.align, ev.weight);
        if (addrs) printf(" ptr=%#" PRIx64, (uint64_t)ev.addr);
        if (times) printf(" time=%" PRIu64, ev.time);
        print_stack(sym, r, ev.stack);
        break;
      case HH_EV_REALLOC:
        if (sym != NULL) hh_sym_sync(sym, r);
        printf("realloc %s T=%u size=%" PRIu64 " weight=%" PRIu64 " moved=%d", hh_fn_name(ev.fn), ev.thread,
               ev.size, ev.weight, ev.addr != ev.old_addr);
        if (addrs) printf(" old=%#" PRIx64 " ptr=%#" PRIx64, (uint64_t)ev.old_addr, (uint64_t)ev.addr);
        if (times) printf(" time=%" PRIu64, ev.time);
        print_stack(sym, r, ev.stack);
        break;
      case HH_EV_FREE:
        printf("free %s T=%u", hh_fn_name(ev.fn), ev.thread);
        if (addrs) printf(" ptr=%#" PRIx64, (uint64_t)ev.addr);
        if (times) printf(" time=%" PRIu64, ev.time);
        printf("\n");
        break;
      case HH_EV_THREAD:
        printf("thread %u %" PRIu64 " %s\n", ev.u.thread->index, ev.u.thread->tid, ev.u.thread->name);
        break;
      case HH_EV_MODULE_LOAD:
        printf("module %s %s %u\n", ev.u.module->path, ev.u.module->build_id[0] ? ev.u.module->build_id : "-",
               ev.u.module->nsegments);
        break;
      case HH_EV_MODULE_UNLOAD:
        printf("unload %s\n", ev.u.module ? ev.u.module->path : "?");
        break;
      case HH_EV_RSS:
        printf("rss %" PRIu64 "\n", ev.u.rss);
        break;
      case HH_EV_MARKER:
        printf("marker %s", ev.u.marker);
        if (times) printf(" time=%" PRIu64, ev.time);
        printf("\n");
        break;
      case HH_EV_COMMAND: {
        const char *const *av;
        const char *exe;
        int ac = hh_reader_command(r, &av, &exe);
        printf("command");
        for (int i = 0; i < ac; i++) printf(" %s", av[i]);
        printf(" exe=%s\n", exe);
        break;
      }
      case HH_EV_END:
        printf("end %" PRIu64 "\n", ev.u.end_events);
        break;
      case HH_EV_EXEC:
        printf("exec %" PRIu64 " %s\n", ev.u.exec.events, ev.u.exec.path);
        break;
      case HH_EV_STACK:
        break;
    }
  }
  static const char *const names[] = {"OK", "NO_END", "CUT_SHORT", "DAMAGED", "IO_ERROR"};
  hh_read_status st = hh_reader_status(r);
  printf("status %s chunks=%" PRIu64 " %s\n", names[st], hh_reader_chunks(r), hh_reader_message(r));
  if (sym != NULL) hh_sym_free(sym);
  hh_reader_close(r);
  return 0;
}
