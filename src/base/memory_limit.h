/* How much memory this process may use: the machine's physical memory, or
 * less where its control group says so (a container's memory limit).
 *
 * Read from /proc/self/cgroup and the cgroup files with open and read:
 * nothing here allocates, and errno is kept. Not reentrant (static
 * buffers): call it where calls are serialized (an allocator's start-up). */
#ifndef HH_BASE_MEMORY_LIMIT_H
#define HH_BASE_MEMORY_LIMIT_H

#include <stddef.h>

/* The smaller of the physical memory (_SC_PHYS_PAGES; SIZE_MAX when
 * unknown) and the memory limits of the process's cgroup and its ancestors:
 * cgroup v2's memory.max, v1's memory.limit_in_bytes ("max" and v1's
 * "unlimited", a value near 2^63, are no limit). */
size_t hh__memory_limit(void);

/* The same, with every file read under root instead of / (tests). */
size_t hh__memory_limit_under(const char *root, size_t physical);

#endif
