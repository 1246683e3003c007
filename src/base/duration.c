/* Time spans for people (see duration.h). */
#include "duration.h"

#include <stdio.h>

void hh__format_duration(char *buf, size_t buf_size, uint64_t ns) {
  /* seconds from what would print as "1000.000 ms"; a whole number of ns
   * is exact in us, which never rounds up */
  if (ns >= 999999500ull)
    snprintf(buf, buf_size, "%.3f s", (double)ns / 1e9);
  else if (ns >= 1000000ull)
    snprintf(buf, buf_size, "%.3f ms", (double)ns / 1e6);
  else
    snprintf(buf, buf_size, "%.3f us", (double)ns / 1e3);
}
