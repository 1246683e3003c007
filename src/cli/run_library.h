/* The tracer library `heaphook run` preloads (run_library.c): which file,
 * and a path to it that LD_PRELOAD can carry. */
#ifndef HH_CLI_RUN_LIBRARY_H
#define HH_CLI_RUN_LIBRARY_H

#include <stdbool.h>
#include <stddef.h>

/* The heaphook library that LD_PRELOAD already has serve the program's
 * malloc (libpreloaded_tlsf.so exported for a node, libheaphook.so, a
 * plug-in's library), as this process has it: the loader preloaded the
 * same list here, with the same search path, so the malloc this process
 * finds first is the one the program will. true with its path in out;
 * false when LD_PRELOAD has none, or has another malloc ahead of it
 * (jemalloc: the program's own allocator, which libheaphook.so put ahead
 * of it finds). */
bool hh_run_preloaded_heaphook(char *out, size_t size);

/* The library's real path: $HEAPHOOK_LIBRARY, else ../libheaphook.so next
 * to this executable. 0, or -1 with the reason in why (missing,
 * unreadable, not a shared library). */
int hh_run_find_library(char *out, size_t size, char *why, size_t why_size);

/* A path to lib that LD_PRELOAD does not split. The loader splits it at
 * spaces and colons, with no way to quote them; a library under such a
 * path gets a symbolic link in a private directory of the user's
 * ($XDG_RUNTIME_DIR/heaphook, else /tmp/heaphook-<uid>), named after a
 * hash of lib's path, kept for the next runs (the program's children
 * preload it too, as long as they run). 0, or -1 with the reason in why. */
int hh_run_preload_path(const char *lib, char *out, size_t size, char *why, size_t why_size);

#endif
