/* Size parsing and formatting (see size.h). */
#include "size.h"

#include <stdio.h>

int hh__parse_size(const char *text, size_t *out) {
  if (text == NULL || *text < '0' || *text > '9') return -1;
  size_t value = 0;
  const char *p = text;
  for (; *p >= '0' && *p <= '9'; p++) {
    size_t digit = (size_t)(*p - '0');
    if (value > (SIZE_MAX - digit) / 10) return -1;
    value = value * 10 + digit;
  }
  unsigned shift = 0;
  switch (*p) {
    case '\0':
      break;
    case 'k':
    case 'K':
      shift = 10;
      p++;
      break;
    case 'm':
    case 'M':
      shift = 20;
      p++;
      break;
    case 'g':
    case 'G':
      shift = 30;
      p++;
      break;
    case 't':
    case 'T':
      shift = 40;
      p++;
      break;
    case 'b':
    case 'B':
      break;
    default:
      return -1;
  }
  /* Optional unit tail: "B", "iB", "ib", "b". */
  if (shift != 0 && (*p == 'i' || *p == 'I')) p++;
  if (*p == 'b' || *p == 'B') p++;
  if (*p != '\0') return -1;
  if (shift != 0 && value > (SIZE_MAX >> shift)) return -1;
  *out = value << shift;
  return 0;
}

void hh__format_size(char *buf, size_t buf_size, uint64_t bytes) {
  static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  if (bytes < 1024) {
    snprintf(buf, buf_size, "%llu B", (unsigned long long)bytes);
    return;
  }
  double v = (double)bytes;
  unsigned u = 0;
  /* the next unit from what would print as 1024.0 ("1024.0 KiB" for
   * 1048525-1048575 bytes) */
  while (v >= 1023.95 && u + 1 < sizeof units / sizeof units[0]) {
    v /= 1024.0;
    u++;
  }
  snprintf(buf, buf_size, "%.1f %s", v, units[u]);
}
