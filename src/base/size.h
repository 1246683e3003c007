/* Parsing sizes such as "1000000", "64K", "512M", "1G" (also "64KiB",
 * "64kb"). K, M, G, T are powers of 1024. Nothing here allocates. */
#ifndef HH_BASE_SIZE_H
#define HH_BASE_SIZE_H

#include <stddef.h>
#include <stdint.h>

/* Returns 0 and stores the size in *out, or -1 when text is not a size
 * (empty, junk, negative, or more than SIZE_MAX). */
int hh__parse_size(const char *text, size_t *out);

/* Formats a byte count for people ("1.5 MiB", "512 B") into buf. */
void hh__format_size(char *buf, size_t buf_size, uint64_t bytes);

#endif
