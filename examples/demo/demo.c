/* The demo program: a small word-frequency counter that allocates the way
 * real programs do (strings, a growing array, a hash table, aligned buffers)
 * so that `make demo` has something to show. Its output does not depend on
 * the allocator. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct entry {
  char *word;
  unsigned count;
  struct entry *next;
} entry;

#define BUCKETS 256

static unsigned hash(const char *s) {
  unsigned h = 2166136261u;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 16777619u;
  return h % BUCKETS;
}

static void count_word(entry **table, const char *word) {
  entry **slot = &table[hash(word)];
  for (entry *e = *slot; e != NULL; e = e->next) {
    if (strcmp(e->word, word) == 0) {
      e->count++;
      return;
    }
  }
  entry *e = malloc(sizeof *e);
  e->word = strdup(word);
  e->count = 1;
  e->next = *slot;
  *slot = e;
}

static int by_count(const void *a, const void *b) {
  const entry *x = *(entry *const *)a, *y = *(entry *const *)b;
  if (x->count != y->count) return x->count < y->count ? 1 : -1;
  return strcmp(x->word, y->word);
}

int main(void) {
  static const char *const text =
      "the hook sees every allocation the program makes and the allocator underneath "
      "serves it while the recorders watch the hook and the allocator and the program";
  entry **table = calloc(BUCKETS, sizeof *table);
  for (int round = 0; round < 100; round++) {
    char *copy = strdup(text);
    for (char *w = strtok(copy, " "); w != NULL; w = strtok(NULL, " ")) count_word(table, w);
    free(copy);
  }
  size_t n = 0, cap = 4;
  entry **all = malloc(cap * sizeof *all);
  for (int b = 0; b < BUCKETS; b++) {
    for (entry *e = table[b]; e != NULL; e = e->next) {
      if (n == cap) all = realloc(all, (cap *= 2) * sizeof *all);
      all[n++] = e;
    }
  }
  qsort(all, n, sizeof *all, by_count);
  char *page = aligned_alloc(4096, 4096);
  char *line = NULL;
  if (page == NULL || posix_memalign((void **)&line, 64, 256) != 0) return 1;
  int len = snprintf(page, 4096, "%zu distinct words; the most frequent:\n", n);
  for (size_t i = 0; i < n && i < 5; i++) {
    snprintf(line, 256, "  %-10s %u\n", all[i]->word, all[i]->count);
    len += snprintf(page + len, 4096 - (size_t)len, "%s", line);
  }
  fputs(page, stdout);
  free(line);
  free(page);
  for (size_t i = 0; i < n; i++) {
    free(all[i]->word);
    free(all[i]);
  }
  free(all);
  free(table);
  return 0;
}
