/* JSON string literals and XML text (escape.h). */
#include "escape.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REPLACEMENT "\xef\xbf\xbd" /* U+FFFD */

/* Length of the valid UTF-8 sequence at s (1..4), or 0 when invalid. */
static size_t utf8_len(const unsigned char *s) {
  unsigned c = s[0];
  if (c < 0x80) return 1;
  size_t n;
  uint32_t cp;
  if (c >= 0xc2 && c <= 0xdf) {
    n = 2;
    cp = c & 0x1f;
  } else if (c >= 0xe0 && c <= 0xef) {
    n = 3;
    cp = c & 0x0f;
  } else if (c >= 0xf0 && c <= 0xf4) {
    n = 4;
    cp = c & 0x07;
  } else {
    return 0;
  }
  for (size_t i = 1; i < n; i++) {
    if ((s[i] & 0xc0) != 0x80) return 0;
    cp = cp << 6 | (s[i] & 0x3f);
  }
  if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) || (cp >= 0xd800 && cp <= 0xdfff))
    return 0;
  return n;
}

void hh_json_put_string(FILE *out, const char *str, unsigned flags) {
  if (!str) {
    fputs("null", out);
    return;
  }
  const bool script = flags & HH_JSON_SCRIPT;
  const unsigned char *s = (const unsigned char *)str;
  fputc('"', out);
  while (*s) {
    unsigned c = *s;
    if (c == '"' || c == '\\') {
      fputc('\\', out);
      fputc((int)c, out);
      s++;
    } else if (!script && (c == '\n' || c == '\t' || c == '\r')) {
      fputs(c == '\n' ? "\\n" : c == '\t' ? "\\t" : "\\r", out);
      s++;
    } else if (c < 0x20 || c == 0x7f || (script && (c == '<' || c == '>' || c == '&' || c == '\''))) {
      fprintf(out, "\\u%04x", c);
      s++;
    } else if (c < 0x80) {
      fputc((int)c, out);
      s++;
    } else {
      size_t n = utf8_len(s);
      if (n == 0) { /* JSON is UTF-8: a program's bytes that are not */
        fputs("\\ufffd", out);
        s++;
      } else if (script && n == 3 && s[0] == 0xe2 && s[1] == 0x80 && (s[2] == 0xa8 || s[2] == 0xa9)) {
        fprintf(out, "\\u%04x", s[2] == 0xa8 ? 0x2028 : 0x2029);
        s += 3;
      } else {
        fwrite(s, 1, n, out);
        s += n;
      }
    }
  }
  fputc('"', out);
}

void hh_xml_put_text(FILE *out, const char *s, unsigned flags) {
  const bool html = flags & HH_XML_HTML;
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    switch (c) {
      case '<':
        fputs("&lt;", out);
        break;
      case '>':
        fputs("&gt;", out);
        break;
      case '&':
        fputs("&amp;", out);
        break;
      case '"':
        fputs("&quot;", out);
        break;
      case '\'':
        fputs(html ? "&#39;" : "'", out);
        break;
      default:
        if (c >= 0x80) {
          size_t n = utf8_len((const unsigned char *)s);
          if (n == 0) {
            fputs(REPLACEMENT, out);
          } else {
            fwrite(s, 1, n, out);
            s += n - 1;
          }
          break;
        }
        fputc(!html && c < 0x20 && c != '\t' && c != '\n' ? '?' : c, out);
    }
  }
}

/* Writes s's valid UTF-8 form into out (cap bytes, cap >= 1), cut at a
 * character's end; returns its length, or SIZE_MAX when s is valid and
 * fits as it is (nothing written). */
static size_t utf8_fix(const char *str, char *out, size_t cap, bool always) {
  const unsigned char *s = (const unsigned char *)str;
  size_t n = 0;
  bool valid = true;
  for (size_t i = 0; s[i];) {
    size_t k = s[i] < 0x80 ? 1 : utf8_len(s + i);
    const char *piece = k ? (const char *)s + i : REPLACEMENT;
    size_t len = k ? k : sizeof REPLACEMENT - 1;
    valid = valid && k != 0;
    if (n + len >= cap) {
      valid = false;
      break;
    }
    if (out) memcpy(out + n, piece, len);
    n += len;
    i += k ? k : 1;
  }
  if (valid && !always) return SIZE_MAX;
  if (out) out[n] = '\0';
  return n;
}

const char *hh_utf8_safe(const char *s, char *buf, size_t size) {
  if (size == 0 || utf8_fix(s, NULL, size, false) == SIZE_MAX) return s;
  utf8_fix(s, buf, size, true);
  return buf;
}

char *hh_utf8_dup(const char *s) {
  size_t n = strlen(s), cap = 3 * n + 1; /* each byte at most U+FFFD */
  char *out = malloc(cap);
  if (out) utf8_fix(s, out, cap, true);
  return out;
}

size_t hh_utf8_cut(const char *s, size_t n) {
  while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80) n--;
  return n;
}

static const char *text_safe(const char *s, char *buf, size_t size, bool quoted) {
  const unsigned char *p = (const unsigned char *)s;
  bool clean = true;
  for (const unsigned char *q = p; *q && clean; q++)
    clean = *q >= 0x20 && *q != 0x7f && *q != '\\' && !(quoted && *q == '"');
  if (clean || size == 0) return s;
  size_t n = 0;
  for (; *p && n + 5 < size; p++) {
    unsigned c = *p;
    if (c == '\\' || (quoted && c == '"')) {
      buf[n++] = '\\';
      buf[n++] = (char)c;
    } else if (c >= 0x20 && c != 0x7f) {
      buf[n++] = (char)c;
    } else if (c == '\n' || c == '\t' || c == '\r') {
      buf[n++] = '\\';
      buf[n++] = c == '\n' ? 'n' : c == '\t' ? 't' : 'r';
    } else {
      n += (size_t)snprintf(buf + n, size - n, "\\x%02x", c);
    }
  }
  buf[n] = '\0';
  return buf;
}

const char *hh_text_safe(const char *s, char *buf, size_t size) { return text_safe(s, buf, size, false); }

const char *hh_text_safe_quoted(const char *s, char *buf, size_t size) {
  return text_safe(s, buf, size, true);
}
