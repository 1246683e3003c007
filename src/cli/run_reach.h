/* Programs the tracer cannot reach (run_reach.c): LD_PRELOAD works only in
 * dynamically linked programs that the loader does not run in secure mode,
 * so `heaphook run` says so before it runs one that would go untraced. */
#ifndef HH_CLI_RUN_REACH_H
#define HH_CLI_RUN_REACH_H

#include <stdbool.h>
#include <stddef.h>

/* True when prog (as execvp would find it; a script's interpreter too)
 * would run without the preloaded library, with why in why: "<path> is
 * statically linked", "<path> is set-user-ID", ... False when it would be
 * reached, or cannot be told (not found: exec will say so). */
bool hh_run_unreachable(const char *prog, char *why, size_t why_size);

/* True when prog (as execvp would find it) is a heaphook command, with its
 * path in path: it exports hh_untraced_process, so the library run
 * preloads leaves it untraced and no trace of it is written (`heaphook run
 * -- heaphook run -- prog` traces prog alone). */
bool hh_run_heaphook_command(const char *prog, char *path, size_t size);

#endif
