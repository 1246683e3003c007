/* The symbolizer: a return address recorded in a trace -> module, function
 * (C++ names demangled), file:line, and the functions inlined there.
 *
 * It works from the trace's module list (MODULE_LOAD records: path, load
 * bias, segments, build-id), with elfutils libdwfl: each module is opened
 * from its recorded path when first needed, separate debug information is
 * found the standard way (.gnu_debuglink, /usr/lib/debug/.build-id/), and a
 * file whose build-id is not the recorded one is reported once (its debug
 * file for the recorded build-id is used when installed; otherwise its
 * addresses get the module name only). Demangling is libstdc++'s
 * __cxa_demangle (libdw does not demangle; libstdc++ is on every system
 * that has C++ programs to profile, libiberty's cplus_demangle is not).
 *
 * Results are cached per address, and the frames returned stay valid for
 * the symbolizer's life, so consumers may keep pointers to them. Memory
 * grows with the distinct addresses asked for and the modules opened. */
#ifndef HH_SYMBOLIZE_H
#define HH_SYMBOLIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "trace/reader.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hh_symbolizer hh_symbolizer;

typedef struct hh_frame {
  uint64_t ip;            /* the address looked up (a return address) */
  const char *function;   /* demangled; NULL when unknown */
  const char *file;       /* source file as recorded in the debug info; NULL when unknown */
  uint32_t line;          /* 0 when unknown */
  const char *module;     /* the module's path; NULL when the address is in no known module */
  uint64_t module_offset; /* ip minus the module's load bias */
  bool inlined;           /* inlined into the next (outer) frame of the same address */
  bool allocator;         /* malloc family, operator new/delete, heaphook itself */
} hh_frame;

/* Called once per problem (a module that cannot be read, a binary changed
 * since the recording) with a one-line message, when an address in that
 * module is first looked up; NULL prints "heaphook: warning: <message>" to
 * stderr. */
typedef void (*hh_sym_warn_fn)(void *arg, const char *message);

hh_symbolizer *hh_sym_new(hh_sym_warn_fn warn, void *arg);
/* Where the warnings go from now on. */
void hh_sym_set_warn(hh_symbolizer *s, hh_sym_warn_fn warn, void *arg);
/* While held, problems are kept and not told; an address in a module
 * with a problem looked up after that tells it (a symbolizer warmed up on
 * addresses a report may never show, src/cli/load.c). */
void hh_sym_hold_warnings(hh_symbolizer *s, bool hold);
void hh_sym_free(hh_symbolizer *s);

/* Adds a module (the symbolizer copies what it keeps). */
void hh_sym_add_module(hh_symbolizer *s, const hh_trace_module *m);
/* Adds the reader's modules not added yet (call it after reading, or as
 * reading goes). */
void hh_sym_sync(hh_symbolizer *s, const hh_reader *r);

/* Whether the modules s has taken from a reader are, in order, the first
 * modules of r: a symbolizer warmed up with another reader of the same
 * trace (hh_load) may then go on with r. */
bool hh_sym_agrees(const hh_symbolizer *s, const hh_reader *r);

/* The frames at return address ip, innermost first: the functions inlined
 * there, then the function that contains it; always at least one frame.
 * epoch picks the module among several mapped at ip over the run
 * (hh_stack_node.epoch; UINT32_MAX: the latest). Returns the count and sets
 * *frames to a cached array. */
size_t hh_sym_ip(hh_symbolizer *s, uint64_t ip, uint32_t epoch, const hh_frame **frames);

/* The symbol table's answer for address addr (not a return address: no
 * 1 taken off), as the symbolizer finds it: dwfl_module_addrinfo's, the
 * symbol's name (not demangled) and *offset bytes into it, or NULL. For
 * the tests. */
const char *hh_sym_symbol(hh_symbolizer *s, uint64_t addr, uint32_t epoch, uint64_t *offset);

enum {
  HH_SYM_FOLD = 1u << 0, /* drop allocator and heaphook frames at the inner end */
};

/* The frames of stack `id` in reader r, innermost first, into out[0..max);
 * returns how many were stored. With HH_SYM_FOLD, the allocator frames at
 * the inner end are left out (all kept if nothing else remains). */
size_t hh_sym_stack(hh_symbolizer *s, const hh_reader *r, uint64_t id, unsigned flags, const hh_frame **out,
                    size_t max);

/* Whether a function name (demangled) or module path is an allocator's or
 * heaphook's own. */
bool hh_sym_is_allocator_function(const char *name);
bool hh_sym_is_heaphook_module(const char *path);

/* Demangles a C++ symbol; returns a malloc'd string, or NULL when name is
 * not a mangled C++ name. */
char *hh_sym_demangle(const char *name);

#ifdef __cplusplus
}
#endif

#endif
