/* An allocator with no word of its own in front of its blocks, for
 * preload.bare_allocator: as tcmalloc and jemalloc, it keeps small blocks
 * of one size class to a page, hands a page that empties to any class
 * without clearing it, and maps a large block by itself (jemalloc's
 * extents and tcmalloc's spans can start a mapping: the page in front of
 * such a block may be unmapped). Its own entry point, bare_alloc_direct
 * (as jemalloc's mallocx), serves blocks that the program may pass to free.
 * Single lock, bump-allocated pages: enough for a test. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#define EXPORT __attribute__((visibility("default")))
#define PAGE 4096u
#define PAGES 16384u /* 64 MiB of small blocks */
#define MAX_SMALL 2048u
#define MAX_LARGE 1024

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static char *region;
static unsigned next_page;
static void *free_pages[PAGES];
static unsigned n_free_pages;
static struct page {
  unsigned class_size; /* 0: not in use */
  unsigned live;
  void *free_list;
  unsigned bumped;
} pages[PAGES];
static struct large {
  void *ptr;
  size_t size;
} larges[MAX_LARGE];

static unsigned class_of(size_t size) {
  unsigned c = 16;
  while (c < size) c *= 2;
  return c;
}

static void *small(size_t size) {
  unsigned c = class_of(size);
  if (region == NULL) {
    region = mmap(NULL, (size_t)PAGES * PAGE, PROT_READ | PROT_WRITE,
                  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (region == MAP_FAILED) return region = NULL;
  }
  for (unsigned i = 0; i < next_page; i++) {
    struct page *p = &pages[i];
    if (p->class_size != c) continue;
    if (p->free_list != NULL) {
      void *b = p->free_list;
      p->free_list = *(void **)b; /* (the first 8 bytes, as tcmalloc's list) */
      p->live++;
      return b;
    }
    if (p->bumped + c <= PAGE) {
      p->live++;
      p->bumped += c;
      return region + (size_t)i * PAGE + p->bumped - c;
    }
  }
  unsigned i;
  if (n_free_pages > 0)
    i = (unsigned)(((char *)free_pages[--n_free_pages] - region) / PAGE);
  else if (next_page < PAGES)
    i = next_page++;
  else
    return NULL;
  pages[i] = (struct page){.class_size = c, .live = 1, .bumped = c};
  return region + (size_t)i * PAGE;
}

static void *large(size_t size) {
  size_t len = (size + PAGE - 1) & ~(size_t)(PAGE - 1);
  /* a page more, unmapped again: nothing is mapped in front of the block */
  char *m = mmap(NULL, len + PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) return NULL;
  munmap(m, PAGE);
  for (int i = 0; i < MAX_LARGE; i++) {
    if (larges[i].ptr == NULL) {
      larges[i] = (struct large){m + PAGE, len};
      return m + PAGE;
    }
  }
  munmap(m + PAGE, len);
  return NULL;
}

static void *alloc(size_t size, size_t align) {
  if (size == 0) size = 1;
  if (align > PAGE) return NULL;
  if (align > size) size = align;
  pthread_mutex_lock(&lock);
  void *b = size <= MAX_SMALL ? small(size) : large(size);
  pthread_mutex_unlock(&lock);
  if (b == NULL) errno = ENOMEM;
  return b;
}

static size_t usable(void *b) {
  if (b == NULL) return 0;
  if (region != NULL && (char *)b >= region && (char *)b < region + (size_t)PAGES * PAGE)
    return pages[((char *)b - region) / PAGE].class_size;
  for (int i = 0; i < MAX_LARGE; i++)
    if (larges[i].ptr == b) return larges[i].size;
  return 0;
}

static void release(void *b) {
  if (b == NULL) return;
  pthread_mutex_lock(&lock);
  if (region != NULL && (char *)b >= region && (char *)b < region + (size_t)PAGES * PAGE) {
    unsigned i = (unsigned)(((char *)b - region) / PAGE);
    struct page *p = &pages[i];
    *(void **)b = p->free_list;
    p->free_list = b;
    if (--p->live == 0) { /* to any class, as it is */
      p->class_size = 0;
      free_pages[n_free_pages++] = region + (size_t)i * PAGE;
    }
  } else {
    for (int i = 0; i < MAX_LARGE; i++) {
      if (larges[i].ptr == b) {
        munmap(b, larges[i].size);
        larges[i].ptr = NULL;
        break;
      }
    }
  }
  pthread_mutex_unlock(&lock);
}

EXPORT void *bare_alloc_direct(size_t size) { return alloc(size, 16); }
EXPORT void *malloc(size_t size) { return alloc(size, 16); }
EXPORT void free(void *b) { release(b); }
EXPORT void *calloc(size_t n, size_t size) {
  size_t total;
  if (__builtin_mul_overflow(n, size, &total)) {
    errno = ENOMEM;
    return NULL;
  }
  void *b = alloc(total, 16);
  if (b != NULL) memset(b, 0, total);
  return b;
}
EXPORT void *realloc(void *b, size_t size) {
  if (b == NULL) return alloc(size, 16);
  size_t old = usable(b);
  if (size <= old) return b;
  void *n = alloc(size, 16);
  if (n == NULL) return NULL;
  memcpy(n, b, old);
  release(b);
  return n;
}
EXPORT int posix_memalign(void **out, size_t align, size_t size) {
  void *b = alloc(size, align);
  if (b == NULL) return ENOMEM;
  *out = b;
  return 0;
}
EXPORT void *aligned_alloc(size_t align, size_t size) { return alloc(size, align); }
EXPORT void *memalign(size_t align, size_t size) { return alloc(size, align); }
EXPORT size_t malloc_usable_size(void *b) { return usable(b); }
