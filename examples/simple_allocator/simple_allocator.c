/* A complete, small heaphook allocator: segregated free lists.
 * Power-of-two classes from 32 B to 1 MiB are carved from 4 MiB mmap chunks;
 * a freed block goes on its class's list for reuse. Larger requests get their
 * own mapping. One mutex guards the lists. A 16-byte header just before each
 * user pointer says where the block starts and its class, which also serves
 * aligned requests: the class is big enough for the alignment padding. */
#include <pthread.h>
#include <stdint.h>
#include <sys/mman.h>
#include "heaphook/allocator.h"

#define MIN_SHIFT 5 /* classes 32 B .. 1 MiB */
#define MAX_SHIFT 20
#define CHUNK_BYTES ((size_t)4 << 20) /* carved into class blocks */

typedef struct header {
  void *start;                         /* what the class list or munmap gets back */
  size_t klass;                        /* MIN_SHIFT..MAX_SHIFT, or the length of its own mapping */
} header;                              /* 16 bytes: keeps user pointers 16-aligned */
static void *free_list[MAX_SHIFT + 1]; /* singly linked through the blocks */
static char *chunk_next, *chunk_end;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void *map(size_t bytes) {
  void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? NULL : p;
}
/* A block of class k, from its free list or the current chunk. Locked. */
static void *take(size_t k) {
  void *p = free_list[k];
  if (p != NULL) {
    free_list[k] = *(void **)p;
    return p;
  }
  size_t bytes = (size_t)1 << k;
  if (chunk_next == NULL || (size_t)(chunk_end - chunk_next) < bytes) {
    chunk_next = map(CHUNK_BYTES);
    if (chunk_next == NULL) return NULL;
    chunk_end = chunk_next + CHUNK_BYTES;
  }
  p = chunk_next;
  chunk_next += bytes;
  return p;
}

static void *simple_alloc(size_t size, size_t align) {
  if (align < HH_MIN_ALIGN) align = HH_MIN_ALIGN;
  size_t need = size + sizeof(header) + align - HH_MIN_ALIGN;
  if (need < size) return NULL; /* overflow */
  size_t k = MIN_SHIFT;
  while (k <= MAX_SHIFT && ((size_t)1 << k) < need) k++;
  void *start;
  if (k > MAX_SHIFT) {
    k = need; /* a mapping of its own: klass holds its length */
    if ((start = map(need)) == NULL) return NULL;
  } else {
    pthread_mutex_lock(&lock);
    start = take(k);
    pthread_mutex_unlock(&lock);
    if (start == NULL) return NULL;
  }
  /* start is 16-aligned, so the padding is at most align - 16: in need. */
  uintptr_t user = ((uintptr_t)start + sizeof(header) + align - 1) & ~(uintptr_t)(align - 1);
  header *h = (header *)user - 1;
  h->start = start;
  h->klass = k;
  return (void *)user;
}

static void simple_dealloc(void *ptr) {
  header *h = (header *)ptr - 1;
  if (h->klass > MAX_SHIFT) {
    munmap(h->start, h->klass);
    return;
  }
  pthread_mutex_lock(&lock);
  *(void **)h->start = free_list[h->klass];
  free_list[h->klass] = h->start;
  pthread_mutex_unlock(&lock);
}
static size_t simple_block_size(void *ptr) {
  header *h = (header *)ptr - 1;
  size_t bytes = h->klass > MAX_SHIFT ? h->klass : (size_t)1 << h->klass;
  return (size_t)((char *)h->start + bytes - (char *)ptr);
}

static const hh_allocator simple_allocator = {
    .abi = HH_ALLOCATOR_ABI,
    .name = "simple",
    .alloc = simple_alloc,
    .dealloc = simple_dealloc,
    .block_size = simple_block_size,
    /* alloc_zeroed and realloc: heaphook's defaults. */
};

HH_EXPORT_ALLOCATOR(simple_allocator)
