/* Environment scanning without getenv (see env.h). */
#include "env.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

extern char **environ;

bool hh__env_ready(void) { return environ != NULL; }

const char *hh__env_get(const char *name) {
  char **env = environ;
  if (env == NULL) return NULL;
  size_t len = strlen(name);
  for (; *env != NULL; env++) {
    /* an empty value is as if the variable were unset, for every variable
     * alike (HEAPHOOK_STATS= was refused, HEAPHOOK_TRACE_STACKS= taken) */
    if (strncmp(*env, name, len) == 0 && (*env)[len] == '=') return (*env)[len + 1] ? *env + len + 1 : NULL;
  }
  return NULL;
}

static bool word_is(const char *value, const char *word) {
  for (; *word != '\0'; value++, word++) {
    char c = *value;
    if (c >= 'A' && c <= 'Z') c = (char)(c - 'A' + 'a');
    if (c != *word) return false;
  }
  return *value == '\0';
}

int hh__parse_bool(const char *value, bool *out) {
  static const char *const yes[] = {"1", "true", "yes", "on"};
  static const char *const no[] = {"0", "false", "no", "off"};
  for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++) {
    if (word_is(value, yes[i])) {
      *out = true;
      return 0;
    }
    if (word_is(value, no[i])) {
      *out = false;
      return 0;
    }
  }
  return -1;
}

int hh__expand_pid(const char *pattern, char *out, size_t out_size) {
  size_t n = 0;
  for (const char *p = pattern; *p != '\0'; p++) {
    char pid[24];
    const char *piece = p;
    size_t len = 1;
    if (p[0] == '%' && p[1] == 'p') {
      len = (size_t)snprintf(pid, sizeof pid, "%d", (int)getpid());
      piece = pid;
      p++;
    } else if (p[0] == '%' && p[1] == '%') {
      p++;
    }
    if (n + len >= out_size) return -1;
    memcpy(out + n, piece, len);
    n += len;
  }
  out[n] = '\0';
  return 0;
}
