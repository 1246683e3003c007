/* Formatting a time span for people: "1.250 s", "12.500 ms", "3.000 us".
 * Nothing here allocates. */
#ifndef HH_BASE_DURATION_H
#define HH_BASE_DURATION_H

#include <stddef.h>
#include <stdint.h>

/* Writes ns into buf in the largest unit that keeps it under 1000 as
 * printed (999999500 ns is "1.000 s", not "1000.000 ms"). */
void hh__format_duration(char *buf, size_t buf_size, uint64_t ns);

#endif
