/* What `heaphook plot`, `heaphook flame` and `heaphook export` draw and
 * write, apart from option parsing: the chart (chart.c, cairo), collapsed
 * stacks and the SVG flame graph (flame.c), massif (massif.c), pprof
 * (pprof.c) and speedscope (speedscope.c).
 *
 * Every writer reads an hh_analysis (src/analyze/analysis.h) and, for call
 * stacks, an hh_profile: the analysis's call sites with their symbolized,
 * folded stacks. The profile gets its frames through a callback, so tests
 * can hand it made-up stacks (and a made-up analysis) without a trace. */
#ifndef HH_CLI_RENDER_H
#define HH_CLI_RENDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "analyze/analysis.h"
#include "symbolize/symbolize.h"

/* The frames of stack `stack`, innermost first, allocator frames already
 * folded out, into out[0..max); returns how many. Frames must stay valid as
 * long as the profile, and be the same pointers each time a stack is asked
 * for (the writers ask again, and pprof and speedscope know a frame by its
 * pointer): the symbolizer's cache gives them so. */
typedef size_t (*hh_stack_frames_fn)(void *arg, uint64_t stack, const hh_frame **out, size_t max);

/* The frames kept per stack; deeper stacks lose their outermost frames. */
#define HH_PROFILE_MAX_DEPTH 256

/* A profile holds no frames: a writer asks for a site's frames when it
 * needs them (hh_profile_frames), from the symbolizer's cache. Holding a
 * pointer per frame of every site took 8 bytes a frame: ~540 MB for ~1M
 * stacks of ~70 frames, more than the whole analysis. */
typedef struct hh_profile {
  const hh_analysis *analysis;
  size_t nsamples; /* one per site of the analysis, in the analysis's order */
  hh_stack_frames_fn frames;
  void *arg;
  hh_frame *no_stack; /* the frame of sites without a recorded stack */
} hh_profile;

/* A profile of every site of a. Returns 0, or -1 when out of memory. */
int hh_profile_build(hh_profile *p, const hh_analysis *a, hh_stack_frames_fn frames, void *arg);
void hh_profile_free(hh_profile *p);
/* Sample i's site (the analysis's site i). */
static inline const hh_site *hh_profile_site(const hh_profile *p, size_t i) { return &p->analysis->sites[i]; }
/* Sample i's frames, innermost first, into out[0..HH_PROFILE_MAX_DEPTH);
 * returns how many, at least 1 (the no_stack frame for a site without a
 * stack). The same frame pointers for a sample each time. */
size_t hh_profile_frames(const hh_profile *p, size_t i, const hh_frame **out);

/* What a writer puts in its output when the analysis is of a trace that is
 * not whole, in buf: "error: MESSAGE" (cut short, damaged) or "warning:
 * MESSAGE" (no END: killed between chunks, or still being written), with
 * the reader's message; NULL when the trace is whole. The command prints
 * the same on standard error, which whoever opens the file later has not
 * seen. */
const char *hh_trace_note(const hh_analysis *a, char *buf, size_t size);

/* What a writer puts in its output when the trace is sampled, in buf:
 * "sampled trace (one sample per N bytes on average): bytes and counts are
 * estimates"; NULL for a full trace (the report says it; the files plot,
 * flame --svg and export write showed estimates as exact numbers). */
const char *hh_sampled_note(const hh_analysis *a, char *buf, size_t size);

/* The name shown for a frame: the function, else "module+0xOFFSET" (the
 * module's file name), else "0xADDRESS". Characters that would break the
 * formats (';', control characters) are replaced by '_'; a '#' (a C++
 * lambda's "{lambda()#1}") is kept, as the report shows it, but in massif's
 * tree, where ms_print takes it for a comment (massif.c). */
const char *hh_frame_name(const hh_frame *f, char *buf, size_t size);
/* The same name whole, however long, in a string of its own (malloc'd; NULL
 * when out of memory). What names a frame in a file, or tells two frames
 * apart, takes this one: a C++ template's demangled name runs to thousands
 * of bytes, its member's own name at the end, and two names cut at 1023
 * bytes (where hh_frame_name's callers cut them) were one function. */
char *hh_frame_name_dup(const hh_frame *f);
/* The file name of a path (after the last '/'). */
const char *hh_basename(const char *path);

/* What a writer may still hold of its own under the reader's memory limit
 * (docs/trace-format.md, "The reader's memory"): the limit less what the
 * reader's tables hold; UINT64_MAX without a limit or a reader. Writers
 * whose memory grows with the sites times their depth (collapsed stacks,
 * massif's inverted tree: a few MB of crafted stacks under one deep
 * prefix made GBs of them) return HH_WRITE_LIMIT past it. */
uint64_t hh_profile_memory_left(const hh_profile *p);
#define HH_WRITE_LIMIT (-2)
/* The line for HH_WRITE_LIMIT: "heaphook CMD: PATH: WHAT would take more
 * than the N MiB the memory limit leaves beside the reader's tables
 * (HEAPHOOK_MEMORY_LIMIT raises it)". */
void hh_cli_memory_limit_error(const char *cmd, const char *path, const char *what, const hh_profile *p);

/* ---- flame.c ---------------------------------------------------------------
 * Collapsed stacks: "outer;...;inner N" lines, outermost frame first,
 * frames as function names, one line per distinct path (sites with the same
 * path are added up), sorted by path; sites with cost 0 left out. Returns
 * 0, -1 when out of memory, HH_WRITE_LIMIT when the lines would take more
 * than hh_profile_memory_left (nothing written then). */
int hh_write_collapsed(FILE *out, const hh_profile *p, hh_cost cost);
/* An SVG flame graph: widths proportional to cost, roots at the bottom,
 * each box with a <title> "function (N unit, P%)" shown on hover. */
int hh_write_flame_svg(FILE *out, const hh_profile *p, hh_cost cost, const char *title);

/* ---- massif.c --------------------------------------------------------------
 * valgrind massif's massif.out format (ms_print, massif-visualizer): one
 * snapshot per timeline point (at most max_snapshots, 0: 100), times in
 * milliseconds; the peak snapshot ("heap_tree=peak") and the last one
 * (what is live at the end) carry the allocation tree. Returns 0, -1 when
 * out of memory, HH_WRITE_LIMIT when a tree would take more than
 * hh_profile_memory_left. */
int hh_write_massif(FILE *out, const hh_profile *p, const char *cmd, size_t max_snapshots);

/* ---- pprof.c ---------------------------------------------------------------
 * pprof's profile.proto, gzipped, to path. Sample types alloc_objects/count,
 * alloc_space/bytes, inuse_objects/count, inuse_space/bytes, where "inuse"
 * is what was live at the heap's peak (the question a heap profile of a
 * finished program answers; what was live at the end is `flame --cost
 * leaked`). Mappings from the modules given. Returns 0, or -1 with a
 * message in err. */
int hh_write_pprof(const char *path, const hh_profile *p, const hh_trace_module *const *modules,
                   size_t nmodules, const char *comment, char *err, size_t err_size);
/* The uncompressed profile.proto bytes (for tests); *out is malloc'd. */
int hh_pprof_encode(const hh_profile *p, const hh_trace_module *const *modules, size_t nmodules,
                    const char *comment, uint8_t **out, size_t *size);

/* ---- speedscope.c ----------------------------------------------------------
 * speedscope's JSON file format: shared frames, and one "sampled" profile
 * per cost: "peak" (bytes), "allocations" (none), "leaked" (bytes). */
int hh_write_speedscope(FILE *out, const hh_profile *p, const char *name);

/* ---- chart.c ---------------------------------------------------------------
 * Heap in use over time (and RSS, and markers) as a chart drawn with cairo,
 * to an SVG, PDF or PNG file chosen by path's extension. */
typedef enum hh_chart_format { HH_CHART_SVG, HH_CHART_PDF, HH_CHART_PNG } hh_chart_format;
/* The format for a path's extension (case-insensitive); -1 when unknown. */
int hh_chart_format_of(const char *path, hh_chart_format *out);
/* Returns 0, or -1 with a one-line message in err. */
int hh_chart_write(const char *path, hh_chart_format format, const hh_analysis *a, const char *title,
                   char *err, size_t err_size);

#endif
