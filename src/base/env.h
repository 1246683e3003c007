/* Reading the environment from inside malloc.
 *
 * getenv() is not safe to call from an allocator hook (it may run before libc
 * has finished starting up, and some implementations lock), so heaphook scans
 * environ itself. Nothing here allocates. */
#ifndef HH_BASE_ENV_H
#define HH_BASE_ENV_H

#include <stdbool.h>
#include <stddef.h>

/* The value of variable name, or NULL when it is unset, set to the empty
 * string (as if unset), or environ is not set up yet. The pointer stays
 * valid while the environment is unchanged. */
const char *hh__env_get(const char *name);

/* True when the process environment is readable (environ != NULL). */
bool hh__env_ready(void);

/* Parses a boolean: 1/true/yes/on and 0/false/no/off (case-insensitive).
 * Returns 0 and sets *out, or -1 when value is not one of those. */
int hh__parse_bool(const char *value, bool *out);

/* Copies pattern into out, replacing each "%p" by the process id and "%%"
 * by "%". Returns 0, or -1 when out is too small. */
int hh__expand_pid(const char *pattern, char *out, size_t out_size);

#endif
