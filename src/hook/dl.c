/* dlopen, dlclose and dl_iterate_phdr, exported by the preload libraries.
 *
 * dlopen: a library opened with RTLD_DEEPBIND is bound to heaphook's
 * malloc family as without the flag (below, "dlopen with RTLD_DEEPBIND").
 *
 * dlclose: so that the recorders hear at once of a library going away.
 * The tracer names stacks by their return addresses: a library the loader
 * then maps where the closed one was would have its calls taken for the
 * old one's until the tracer's next look at the modules, which a program
 * that allocates through cached call sites may never take
 * (trace.dl_reuse). The wrapper calls glibc's dlclose, then tells the
 * recorders; what dlclose returns and leaves in errno and dlerror() is the
 * program's. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "alloc/libc/libc_allocator.h"
#include "base/dl_quiet.h"
#include "base/handlers.h"
#include "guard.h"
#include "record/trace/trace.h"
#include "runtime.h"

#define EXPORT __attribute__((visibility("default")))

typedef int (*dlclose_fn)(void *);

EXPORT int dlclose(void *handle) {
  static dlclose_fn next;
  if (next == NULL) {
    next = (dlclose_fn)dlsym(RTLD_NEXT, "dlclose");
    if (next == NULL) return -1;
  }
  int r = next(handle);
  /* Not from a signal handler that interrupted the hook on this thread:
   * the tracer's locks may be held there. */
  if (!hh__guard_held((uintptr_t)__builtin_dwarf_cfa())) {
    int saved = errno;
    hh_guard guard = hh__guard_enter();
    hh__trace_after_dlclose();
    hh__guard_leave(guard);
    errno = saved;
  }
  return r;
}

/* dl_iterate_phdr: the program's callbacks run with glibc's loader lock
 * held, and one that allocates while another thread's stack is being
 * unwound deadlocked the two (libunwind holds its lock and waits for the
 * loader's; the callback's malloc held the loader's and waited for
 * libunwind's: trace.dl_callback). While a callback runs, the tracer takes
 * no stacks on its thread (hh__trace_in_dl_callback). The tracer's and
 * libunwind's own calls come through here too; their callbacks do not
 * allocate. */
typedef int (*phdr_cb)(struct dl_phdr_info *, size_t, void *);
typedef int (*iterate_fn)(phdr_cb, void *);

/* glibc's dl_iterate_phdr (the one after this library's). */
static iterate_fn next_iterate(void) {
  static iterate_fn next;
  if (next == NULL) next = (iterate_fn)dlsym(RTLD_NEXT, "dl_iterate_phdr");
  return next;
}

typedef struct wrapped {
  phdr_cb cb;
  void *data;
} wrapped;

static int call_wrapped(struct dl_phdr_info *info, size_t size, void *arg) {
  wrapped *w = arg;
  hh__trace_in_dl_callback++;
  int r = w->cb(info, size, w->data);
  hh__trace_in_dl_callback--;
  return r;
}

EXPORT int dl_iterate_phdr(phdr_cb cb, void *data) {
  iterate_fn next = next_iterate();
  if (next == NULL) return 0;
  wrapped w = {cb, data};
  return next(call_wrapped, &w);
}

/* ---- dlopen with RTLD_DEEPBIND ------------------------------------------
 *
 * A library opened with RTLD_DEEPBIND looks its symbols up in its own
 * dependencies before the global scope, so its malloc, free and the rest
 * bind to glibc's (libc.so.6 is among its dependencies), not to the
 * preloaded library's: its calls were not recorded, and a block it passed
 * to the program or took from it went to an allocator that had not made
 * it (TLSF, a plug-in, a prefix: glibc aborted or the heap was
 * corrupted). After such a dlopen the wrapper binds, in every object that
 * dlopen loaded, each reference to a name this library exports (the
 * malloc family, the C++ operators, dlopen itself, exec, close, ...) as
 * it would be bound without RTLD_DEEPBIND: to the global scope's
 * definition, heaphook's (docs/architecture.md, "dlopen with
 * RTLD_DEEPBIND").
 *
 * glibc's dlopen takes its caller from its return address: the caller's
 * DT_RUNPATH (and DT_RPATH) are searched for a name without a slash, and
 * $ORIGIN in the name is the caller's directory. A wrapper that called it
 * would make heaphook's library the caller: a program whose RUNPATH finds
 * its plug-ins would no longer find them. So the exported dlopen (below,
 * in assembly) jumps straight to glibc's, leaving the return address the
 * program's, unless the mode has RTLD_DEEPBIND. Then glibc's is called
 * with a return address in the caller's object: the `ret` that ends the
 * caller's _fini (crti.o's, its bytes known), which returns into the
 * wrapper (hh__dl_call_from). Where the caller's object has no such
 * _fini, or a shadow stack (CET) would refuse that return, glibc's is
 * called from here, and the name is looked for as if this library had
 * called dlopen. */

#if defined(__x86_64__)
#define HH_XSTR(x) #x
#define HH_STR(x) HH_XSTR(x)
#define HH_RTLD_DEEPBIND_BIT 0x8 /* RTLD_DEEPBIND, in the assembly below */
_Static_assert(RTLD_DEEPBIND == HH_RTLD_DEEPBIND_BIT, "RTLD_DEEPBIND");

typedef void *(*dlopen_fn)(const char *, int);

/* glibc's dlopen (the one after this library's); set once. */
__attribute__((visibility("hidden"))) void *hh__dl_next_open;

/* Looks up the dlopen after this library's; NULL when there is none. */
__attribute__((visibility("hidden"))) void *hh__dl_resolve_next(void) {
  void *next = __atomic_load_n(&hh__dl_next_open, __ATOMIC_ACQUIRE);
  if (next == NULL) {
    int saved = errno;
    next = hh__dlsym_quiet(RTLD_NEXT, "dlopen");
    errno = saved;
    if (next != NULL) __atomic_store_n(&hh__dl_next_open, next, __ATOMIC_RELEASE);
  }
  return next;
}

extern ElfW(Dyn) _DYNAMIC[];
extern void *__libc_malloc(size_t size);
void *hh__dlopen_deep(const char *file, int mode);
void *hh__dl_call_from(void *fn, const void *ret, const char *file, int mode);

#ifdef __CET__
#define HH_ENDBR "endbr64\n"
#else
#define HH_ENDBR ""
#endif
/* dlopen: without RTLD_DEEPBIND, a jump to glibc's (resolved first by a
 * call, the arguments kept); with it, a jump to hh__dlopen_deep, whose
 * return address is then the program's.
 *
 * hh__dl_call_from(fn, ret, file, mode): fn(file, mode) entered with ret
 * as its return address and, above it, the label 1, where the `ret` at
 * ret comes back to. The stack then reads, from fn's return address up:
 * ret, 1, 2, padding, rbx, rbp, the caller's return address; rbp points
 * at the slot of 1. An unwinder that finds no CFI for ret (crti.o has
 * none) takes rbp for a frame pointer, as libunwind does: [rbp + 8], the
 * label 2, is the next frame, whose CFI (that of the code before it) gives
 * the caller's frame and its rbx and rbp; one that finds CFI for ret (a
 * `ret` at the end of a function, the stack as at its entry) gets 1,
 * whose CFI gives the same. So the tracer's stacks taken inside a
 * DEEPBIND dlopen go on, past _fini, to the program's frames. */
__asm__(".text\n"
        ".globl dlopen\n"
        ".type dlopen, @function\n"
        "dlopen:\n"
        ".cfi_startproc\n" HH_ENDBR
        "testl $" HH_STR(HH_RTLD_DEEPBIND_BIT) ", %esi\n"
        "jnz hh__dlopen_deep\n"
        "movq hh__dl_next_open(%rip), %rax\n"
        "testq %rax, %rax\n"
        "jz 2f\n"
        "jmp *%rax\n"
        "2:\n"
        "pushq %rdi\n"
        ".cfi_adjust_cfa_offset 8\n"
        "pushq %rsi\n"
        ".cfi_adjust_cfa_offset 8\n"
        "subq $8, %rsp\n"
        ".cfi_adjust_cfa_offset 8\n"
        "call hh__dl_resolve_next\n"
        "addq $8, %rsp\n"
        ".cfi_adjust_cfa_offset -8\n"
        "popq %rsi\n"
        ".cfi_adjust_cfa_offset -8\n"
        "popq %rdi\n"
        ".cfi_adjust_cfa_offset -8\n"
        "testq %rax, %rax\n"
        "jz 3f\n"
        "jmp *%rax\n"
        "3:\n"
        "ret\n"
        ".cfi_endproc\n"
        ".size dlopen, .-dlopen\n"
        "\n"
        ".globl hh__dl_call_from\n"
        ".hidden hh__dl_call_from\n"
        ".type hh__dl_call_from, @function\n"
        "hh__dl_call_from:\n"
        ".cfi_startproc\n" HH_ENDBR
        "pushq %rbp\n"
        ".cfi_adjust_cfa_offset 8\n"
        ".cfi_offset %rbp, -16\n"
        "pushq %rbx\n"
        ".cfi_adjust_cfa_offset 8\n"
        ".cfi_offset %rbx, -24\n"
        "subq $8, %rsp\n"
        ".cfi_adjust_cfa_offset 8\n"
        ".cfi_remember_state\n"
        "movq %rdi, %r11\n"
        "leaq 2f(%rip), %rax\n"
        "pushq %rax\n"
        ".cfi_adjust_cfa_offset 8\n"
        "leaq 1f(%rip), %rax\n"
        "pushq %rax\n"
        "pushq %rsi\n"
        "leaq 8(%rsp), %rbp\n"
        "movq %rdx, %rdi\n"
        "movl %ecx, %esi\n"
        "jmp *%r11\n"
        "1:\n"
        "addq $16, %rsp\n"
        ".cfi_adjust_cfa_offset -16\n"
        "popq %rbx\n"
        ".cfi_adjust_cfa_offset -8\n"
        ".cfi_restore %rbx\n"
        "popq %rbp\n"
        ".cfi_adjust_cfa_offset -8\n"
        ".cfi_restore %rbp\n"
        "ret\n"
        ".cfi_restore_state\n"
        "nop\n"
        "2:\n"
        "ud2\n"
        ".cfi_endproc\n"
        ".size hh__dl_call_from, .-hh__dl_call_from\n");

/* Whether this thread runs on a shadow stack (CET): rdssp reads 0 where
 * there is none (it is a no-op there, on any x86-64). */
static bool shadow_stack(void) {
  unsigned long long ssp = 0;
  __asm__ volatile("rdsspq %0" : "+r"(ssp));
  return ssp != 0;
}

/* ---- finding the caller's `ret` ---------------------------------------- */

/* A pointer of an object's dynamic section: glibc adds the load bias in
 * place where the section is writable (x86-64's always is), not where it
 * is read-only; a value inside the object's mapping is taken as done. */
typedef struct object {
  uintptr_t bias, lo, hi; /* load bias; the PT_LOAD segments' span */
  const ElfW(Phdr) * phdr;
  size_t phnum;
  const ElfW(Dyn) * dyn;
} object;

static object object_of(const struct dl_phdr_info *info) {
  object o = {.bias = info->dlpi_addr, .lo = UINTPTR_MAX, .phdr = info->dlpi_phdr, .phnum = info->dlpi_phnum};
  for (size_t i = 0; i < o.phnum; i++) {
    const ElfW(Phdr) *p = &o.phdr[i];
    if (p->p_type == PT_LOAD) {
      uintptr_t start = o.bias + p->p_vaddr;
      if (start < o.lo) o.lo = start;
      if (start + p->p_memsz > o.hi) o.hi = start + p->p_memsz;
    } else if (p->p_type == PT_DYNAMIC) {
      o.dyn = (const ElfW(Dyn) *)(o.bias + p->p_vaddr);
    }
  }
  return o;
}

static uintptr_t dyn_ptr(const object *o, uintptr_t v) { return v >= o->lo && v < o->hi ? v : v + o->bias; }

/* The segment of o that holds [a, a + n), with its flags; NULL if none. */
static const ElfW(Phdr) * segment_of(const object *o, uintptr_t a, size_t n) {
  for (size_t i = 0; i < o->phnum; i++) {
    const ElfW(Phdr) *p = &o->phdr[i];
    if (p->p_type == PT_LOAD && a >= o->bias + p->p_vaddr && a + n <= o->bias + p->p_vaddr + p->p_memsz)
      return p;
  }
  return NULL;
}

typedef struct find_ret {
  uintptr_t pc;   /* the caller's return address */
  uintptr_t ret;  /* out: the `ret` at the end of its object's _fini */
  bool first_ret; /* out: the main program's, for a caller in no object */
  uintptr_t main_ret;
} find_ret;

/* crti.o's and crtn.o's _fini (glibc, x86-64), with and without CET's
 * endbr64: subq $8,%rsp; addq $8,%rsp; ret. */
static uintptr_t fini_ret(const object *o) {
  static const unsigned char plain[] = {0x48, 0x83, 0xec, 0x08, 0x48, 0x83, 0xc4, 0x08, 0xc3};
  static const unsigned char endbr[] = {0xf3, 0x0f, 0x1e, 0xfa};
  if (o->dyn == NULL) return 0;
  uintptr_t fini = 0;
  for (const ElfW(Dyn) *d = o->dyn; d->d_tag != DT_NULL; d++)
    if (d->d_tag == DT_FINI) fini = dyn_ptr(o, d->d_un.d_ptr);
  if (fini == 0) return 0;
  const ElfW(Phdr) *seg = segment_of(o, fini, sizeof plain);
  if (seg == NULL || (seg->p_flags & (PF_R | PF_X)) != (PF_R | PF_X)) return 0;
  const unsigned char *code = (const unsigned char *)fini;
  if (memcmp(code, endbr, sizeof endbr) == 0) code += sizeof endbr;
  if (segment_of(o, (uintptr_t)code, sizeof plain) != seg || memcmp(code, plain, sizeof plain) != 0) return 0;
  return (uintptr_t)code + sizeof plain - 1;
}

static int find_ret_cb(struct dl_phdr_info *info, size_t size, void *arg) {
  (void)size;
  find_ret *f = arg;
  object o = object_of(info);
  if (f->main_ret == 0 && !f->first_ret) {
    f->first_ret = true;
    f->main_ret = fini_ret(&o);
  }
  const ElfW(Phdr) *seg = segment_of(&o, f->pc, 1);
  if (seg == NULL) return 0;
  f->ret = fini_ret(&o);
  return 1;
}

/* The address glibc's dlopen must return to so that it takes the caller
 * to be the object pc lies in (the main program when none: glibc's own
 * choice then); 0 when there is none to use. */
static uintptr_t caller_ret(uintptr_t pc) {
  iterate_fn iterate = next_iterate();
  if (iterate == NULL || shadow_stack()) return 0;
  find_ret f = {.pc = pc};
  if (iterate(find_ret_cb, &f) == 0) return f.main_ret;
  return f.ret;
}

/* ---- binding the new objects as without RTLD_DEEPBIND ------------------- */

#define MAX_NAMES 128

/* The names this library exports, sorted (from its own dynamic symbol
 * table: exports.map's list, read once). */
static struct {
  size_t n;
  const char *name[MAX_NAMES];
  uint32_t gnu_hash[MAX_NAMES]; /* each name's DT_GNU_HASH hash */
} own;

static uint32_t gnu_hash(const char *name) {
  uint32_t h = 5381;
  for (const unsigned char *c = (const unsigned char *)name; *c != 0; c++) h = h * 33 + *c;
  return h;
}

static int by_name(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The number of symbols in o's table, from its DT_HASH or DT_GNU_HASH. */
static size_t symbol_count(const object *o) {
  for (const ElfW(Dyn) *d = o->dyn; d->d_tag != DT_NULL; d++)
    if (d->d_tag == DT_HASH) return ((const uint32_t *)dyn_ptr(o, d->d_un.d_ptr))[1];
  for (const ElfW(Dyn) *d = o->dyn; d->d_tag != DT_NULL; d++) {
    if (d->d_tag != DT_GNU_HASH) continue;
    const uint32_t *h = (const uint32_t *)dyn_ptr(o, d->d_un.d_ptr);
    uint32_t nbuckets = h[0], symoffset = h[1], bloom = h[2];
    const uint32_t *buckets = (const uint32_t *)((const ElfW(Addr) *)(h + 4) + bloom);
    const uint32_t *chain = buckets + nbuckets;
    uint32_t last = 0;
    for (uint32_t i = 0; i < nbuckets; i++)
      if (buckets[i] > last) last = buckets[i];
    if (last < symoffset) return symoffset;
    while ((chain[last - symoffset] & 1) == 0) last++;
    return last + 1;
  }
  return 0;
}

typedef struct tables {
  const ElfW(Sym) * sym;
  const char *str;
  size_t strsz;
  const ElfW(Rela) * rela[2];
  size_t relasz[2];
} tables;

static tables tables_of(const object *o) {
  tables t = {0};
  bool plt_rela = true;
  for (const ElfW(Dyn) *d = o->dyn; d->d_tag != DT_NULL; d++) {
    switch (d->d_tag) {
      case DT_SYMTAB:
        t.sym = (const ElfW(Sym) *)dyn_ptr(o, d->d_un.d_ptr);
        break;
      case DT_STRTAB:
        t.str = (const char *)dyn_ptr(o, d->d_un.d_ptr);
        break;
      case DT_STRSZ:
        t.strsz = d->d_un.d_val;
        break;
      case DT_RELA:
        t.rela[0] = (const ElfW(Rela) *)dyn_ptr(o, d->d_un.d_ptr);
        break;
      case DT_RELASZ:
        t.relasz[0] = d->d_un.d_val;
        break;
      case DT_JMPREL:
        t.rela[1] = (const ElfW(Rela) *)dyn_ptr(o, d->d_un.d_ptr);
        break;
      case DT_PLTRELSZ:
        t.relasz[1] = d->d_un.d_val;
        break;
      case DT_PLTREL:
        plt_rela = d->d_un.d_val == DT_RELA;
        break;
      default:
        break;
    }
  }
  if (!plt_rela) t.rela[1] = NULL;
  return t;
}

static int own_names_cb(struct dl_phdr_info *info, size_t size, void *arg) {
  (void)size, (void)arg;
  object o = object_of(info);
  if (o.dyn != _DYNAMIC) return 0;
  tables t = tables_of(&o);
  size_t n = symbol_count(&o);
  for (size_t i = 1; i < n && own.n < MAX_NAMES; i++) {
    const ElfW(Sym) *s = &t.sym[i];
    if (s->st_shndx == SHN_UNDEF || ELF64_ST_BIND(s->st_info) == STB_LOCAL || s->st_name >= t.strsz) continue;
    if (ELF64_ST_TYPE(s->st_info) != STT_FUNC) continue;
    own.name[own.n++] = t.str + s->st_name;
  }
  return 1;
}

/* What one dlopen rebinds: for each of own's names, the deep scope's
 * definition (the handle's, which every object the dlopen loaded looks at
 * first) and the global scope's; deep 0 where nothing is to be done. */
typedef struct rebind {
  const struct link_map *root;
  const void *skip[3];
  uintptr_t deep[MAX_NAMES], global[MAX_NAMES];
  bool defined_new[MAX_NAMES]; /* defined by one of the new objects */
} rebind;

/* Whether info is root or an object after it in root's namespace: the
 * objects the dlopen loaded (and maybe others loaded since, whose
 * references are bound as in the global scope already). */
static bool loaded_since(const rebind *r, const object *o) {
  for (const struct link_map *l = r->root; l != NULL; l = l->l_next)
    if ((const ElfW(Dyn) *)l->l_ld == o->dyn) return true;
  return false;
}

static long find_name(const char *name);

/* Whether s is a definition of name that other objects can bind to. */
static bool defines(const tables *t, const ElfW(Sym) * s, const char *name) {
  return s->st_shndx != SHN_UNDEF && ELF64_ST_BIND(s->st_info) != STB_LOCAL && s->st_name < t->strsz &&
         strcmp(t->str + s->st_name, name) == 0;
}

/* Notes in r->defined_new the names o defines: looked up in its
 * DT_GNU_HASH table (a few dozen lookups, where a library has thousands
 * of symbols), else found by reading its whole symbol table. */
static void note_defined(rebind *r, const object *o) {
  tables t = tables_of(o);
  if (t.sym == NULL || t.str == NULL) return;
  const uint32_t *h = NULL;
  for (const ElfW(Dyn) *d = o->dyn; d->d_tag != DT_NULL; d++)
    if (d->d_tag == DT_GNU_HASH) h = (const uint32_t *)dyn_ptr(o, d->d_un.d_ptr);
  if (h == NULL) {
    size_t n = symbol_count(o);
    for (size_t i = 1; i < n; i++) {
      const ElfW(Sym) *s = &t.sym[i];
      if (s->st_name >= t.strsz) continue;
      long at = find_name(t.str + s->st_name);
      if (at >= 0 && defines(&t, s, own.name[at])) r->defined_new[at] = true;
    }
    return;
  }
  uint32_t nbuckets = h[0], symoffset = h[1], bloom_size = h[2], shift = h[3];
  const ElfW(Addr) *bloom = (const ElfW(Addr) *)(h + 4);
  const uint32_t *buckets = (const uint32_t *)(bloom + bloom_size);
  const uint32_t *chain = buckets + nbuckets;
  const unsigned bits = sizeof(ElfW(Addr)) * 8;
  if (nbuckets == 0 || bloom_size == 0) return;
  for (size_t i = 0; i < own.n; i++) {
    uint32_t hash = own.gnu_hash[i];
    ElfW(Addr) word = bloom[(hash / bits) % bloom_size];
    ElfW(Addr) mask = ((ElfW(Addr))1 << (hash % bits)) | ((ElfW(Addr))1 << ((hash >> shift) % bits));
    if ((word & mask) != mask) continue;
    uint32_t at = buckets[hash % nbuckets];
    if (at < symoffset) continue;
    for (;; at++) {
      uint32_t c = chain[at - symoffset];
      if ((c | 1) == (hash | 1) && defines(&t, &t.sym[at], own.name[i])) {
        r->defined_new[i] = true;
        break;
      }
      if (c & 1) break;
    }
  }
}

/* A definition in one of the new objects is the library's own choice (an
 * allocator it brings along, which it opened with RTLD_DEEPBIND to keep):
 * left as it is. The names the new objects define are noted too: an
 * object that a constructor opened inside this dlopen, with the flag, has
 * a deep scope of its own, where such a definition may be the one its
 * lazy PLT slots are still to be bound to. */
static int keep_own_cb(struct dl_phdr_info *info, size_t size, void *arg) {
  (void)size;
  rebind *r = arg;
  object o = object_of(info);
  if (o.dyn == NULL || !loaded_since(r, &o)) return 0;
  for (size_t i = 0; i < own.n; i++)
    if (r->deep[i] != 0 && segment_of(&o, r->deep[i], 1) != NULL) r->deep[i] = 0;
  note_defined(r, &o);
  return 0;
}

static long find_name(const char *name) {
  size_t lo = 0, hi = own.n;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    int c = strcmp(name, own.name[mid]);
    if (c == 0) return (long)mid;
    if (c < 0)
      hi = mid;
    else
      lo = mid + 1;
  }
  return -1;
}

/* The range of o's PT_GNU_RELRO that the loader made read-only (whole
 * pages: its end rounded down, as glibc's _dl_protect_relro). */
static void relro_of(const object *o, uintptr_t *lo, uintptr_t *hi) {
  uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
  *lo = *hi = 0;
  for (size_t i = 0; i < o->phnum; i++) {
    const ElfW(Phdr) *p = &o->phdr[i];
    if (p->p_type != PT_GNU_RELRO) continue;
    *lo = (o->bias + p->p_vaddr) & ~(page - 1);
    *hi = (o->bias + p->p_vaddr + p->p_memsz) & ~(page - 1);
  }
}

/* Rebinds o's references: a GOT slot (R_X86_64_GLOB_DAT, JUMP_SLOT) or a
 * pointer in writable or RELRO data (R_X86_64_64; not one in read-only
 * data or code, a text relocation) to an undefined symbol named as one of
 * own's, that holds the deep definition (or, a PLT slot, still the way to
 * the lazy resolver in o's own code, for a name no new object defines),
 * gets the global one. One aligned 8-byte store: a thread calling through
 * the slot meanwhile goes to one or the other. The RELRO pages are made
 * writable for it and read-only again. */
static void rebind_object(const rebind *r, const object *o) {
  tables t = tables_of(o);
  if (t.sym == NULL || t.str == NULL) return;
  uintptr_t relro_lo, relro_hi;
  relro_of(o, &relro_lo, &relro_hi);
  bool opened = false;
  for (int k = 0; k < 2; k++) {
    if (t.rela[k] == NULL) continue;
    size_t n = t.relasz[k] / sizeof(ElfW(Rela));
    for (size_t i = 0; i < n; i++) {
      const ElfW(Rela) *rel = &t.rela[k][i];
      unsigned type = ELF64_R_TYPE(rel->r_info);
      size_t symi = ELF64_R_SYM(rel->r_info);
      if (symi == 0 || (type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT && type != R_X86_64_64))
        continue;
      const ElfW(Sym) *s = &t.sym[symi];
      if (s->st_shndx != SHN_UNDEF || s->st_name >= t.strsz) continue;
      long at = find_name(t.str + s->st_name);
      if (at < 0 || r->deep[at] == 0) continue;
      uintptr_t *slot = (uintptr_t *)(o->bias + rel->r_offset);
      const ElfW(Phdr) *seg = segment_of(o, (uintptr_t)slot, sizeof *slot);
      bool in_relro = (uintptr_t)slot >= relro_lo && (uintptr_t)slot < relro_hi;
      /* (a text relocation's word, in a segment the loader made read-only
       * again after writing it: left as it is) */
      if (seg == NULL || (!in_relro && (seg->p_flags & PF_W) == 0)) continue;
      uintptr_t now;
      memcpy(&now, slot, sizeof now);
      uintptr_t want = r->global[at] + (uintptr_t)rel->r_addend;
      bool lazy = type == R_X86_64_JUMP_SLOT && now >= o->lo && now < o->hi && !r->defined_new[at];
      if (now == want || (now != r->deep[at] + (uintptr_t)rel->r_addend && !lazy)) continue;
      if (in_relro && !opened) {
        if (mprotect((void *)relro_lo, relro_hi - relro_lo, PROT_READ | PROT_WRITE) != 0) return;
        opened = true;
      }
      if (((uintptr_t)slot & (sizeof *slot - 1)) == 0)
        __atomic_store_n(slot, want, __ATOMIC_RELAXED);
      else
        memcpy(slot, &want, sizeof want);
    }
  }
  if (opened) mprotect((void *)relro_lo, relro_hi - relro_lo, PROT_READ);
}

/* glibc's _dl_find_object (2.35 on; NULL before), which knows an object
 * only once the loader has relocated it and made its RELRO read-only:
 * result's layout is struct dl_find_object's, with room to spare. */
typedef struct find_result {
  unsigned long long flags;
  void *map_start, *map_end;
  struct link_map *map;
  void *eh_frame;
  unsigned long long reserved[16];
} find_result;
static int (*find_object)(void *pc, find_result *result);

/* Whether the loader is done relocating o. Another thread's dlopen may
 * still be relocating an object after root (dl_iterate_phdr lists it once
 * it is mapped): a rebinding there would make its RELRO read-only under
 * the loader, whose next write into it faulted. */
static bool relocated(const object *o) {
  if (find_object == NULL) return true;
  find_result f;
  return find_object((void *)o->dyn, &f) == 0 && f.map != NULL && (const ElfW(Dyn) *)f.map->l_ld == o->dyn;
}

static int rebind_cb(struct dl_phdr_info *info, size_t size, void *arg) {
  (void)size;
  rebind *r = arg;
  object o = object_of(info);
  if (o.dyn == NULL || !loaded_since(r, &o)) return 0;
  for (int i = 0; i < 3; i++)
    if ((const void *)o.dyn == r->skip[i]) return 0;
  if (relocated(&o)) rebind_object(r, &o);
  return 0;
}

/* One rebinding at a time; a forked child may find it held by a thread
 * that the fork left behind, and starts afresh. */
static pthread_mutex_t rebind_lock = PTHREAD_MUTEX_INITIALIZER;

static void rebind_lock_child(void) { pthread_mutex_init(&rebind_lock, NULL); }

static void own_names_once(void) {
  hh__atfork(NULL, NULL, rebind_lock_child);
  iterate_fn iterate = next_iterate();
  if (iterate == NULL) return;
  find_object = (int (*)(void *, find_result *))hh__dlsym_quiet(RTLD_DEFAULT, "_dl_find_object");
  iterate(own_names_cb, NULL);
  qsort(own.name, own.n, sizeof own.name[0], by_name);
  for (size_t i = 0; i < own.n; i++) own.gnu_hash[i] = gnu_hash(own.name[i]);
}

/* The object that holds a (its dynamic section), NULL if none. */
static const void *dynamic_of(const void *a) {
  Dl_info info;
  struct link_map *l = NULL;
  if (dladdr1(a, &info, (void **)&l, RTLD_DL_LINKMAP) == 0 || l == NULL) return NULL;
  return l->l_ld;
}

/* Whether a glibc block handed to free is known for one: the blocks those
 * objects' constructors made (they run inside dlopen, before the
 * rebinding) reach heaphook's free later. glibc's allocator takes it as
 * its own; TLSF or a plug-in with owns() says it is not theirs; a prefix
 * lacks heaphook's header (api.c, owner_of). Not a plug-in without owns(),
 * which allocator.h promises only its own blocks; nor a program with an
 * allocator of its own, to which foreign blocks go (and without heaphook
 * such a library keeps glibc's anyway). */
static bool glibc_blocks_known(void) {
  if (hh__rt.foreign_bare) return false;
  return hh__rt.prefix != 0 || hh__rt.alloc->owns != NULL || hh__rt.alloc == hh__libc_allocator_get();
}

/* The objects a dlopen with RTLD_DEEPBIND (handle) loaded bound as
 * without it, where glibc's blocks are known. */
static void deepbind_as_global(void *handle) {
  if (atomic_load_explicit(&hh__state, memory_order_acquire) != HH_READY || !glibc_blocks_known()) return;
  iterate_fn iterate = next_iterate();
  if (iterate == NULL) return;
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  pthread_once(&once, own_names_once);
  static rebind r; /* (under the lock: 2 KiB kept off the program's stack) */
  pthread_mutex_lock(&rebind_lock);
  memset(&r, 0, sizeof r);
  struct link_map *root = NULL;
  if (hh__dl_quiet(dlinfo(handle, RTLD_DI_LINKMAP, &root) == 0 ? root : NULL) == NULL) goto out;
  r.root = root;
  for (size_t i = 0; i < own.n; i++) {
    void *deep = hh__dlsym_quiet(handle, own.name[i]);
    void *global = hh__dlsym_quiet(RTLD_DEFAULT, own.name[i]);
    if (deep == NULL || global == NULL || deep == global) continue;
    r.deep[i] = (uintptr_t)deep;
    r.global[i] = (uintptr_t)global;
  }
  /* (heaphook's own object, the loader's and libc's are never rebound) */
  r.skip[0] = _DYNAMIC;
  r.skip[1] = dynamic_of(&_r_debug);
  r.skip[2] = dynamic_of((const void *)&__libc_malloc);
  iterate(keep_own_cb, &r);
  iterate(rebind_cb, &r);
out:
  pthread_mutex_unlock(&rebind_lock);
}

/* Sum of the loader's objects ever added (dl_iterate_phdr's dlpi_adds). */
static int adds_cb(struct dl_phdr_info *info, size_t size, void *arg) {
  if (size >= offsetof(struct dl_phdr_info, dlpi_adds) + sizeof info->dlpi_adds)
    *(unsigned long long *)arg = info->dlpi_adds;
  return 1;
}

static unsigned long long loader_adds(void) {
  unsigned long long adds = 0;
  iterate_fn iterate = next_iterate();
  if (iterate != NULL) iterate(adds_cb, &adds);
  return adds;
}

/* dlopen with RTLD_DEEPBIND, entered by a jump from dlopen: the return
 * address is the program's. */
__attribute__((used, noinline)) void *hh__dlopen_deep(const char *file, int mode) {
  uintptr_t pc = (uintptr_t)__builtin_return_address(0);
  dlopen_fn next = (dlopen_fn)hh__dl_resolve_next();
  if (next == NULL) return NULL;
  int saved = errno;
  uintptr_t ret = caller_ret(pc);
  unsigned long long adds = loader_adds();
  errno = saved;
  void *handle = ret != 0 ? hh__dl_call_from((void *)next, (const void *)ret, file, mode) : next(file, mode);
  /* (not from a signal handler that interrupted the hook on this thread) */
  if (handle != NULL && !hh__guard_held((uintptr_t)__builtin_dwarf_cfa()) && loader_adds() != adds) {
    saved = errno;
    hh_guard guard = hh__guard_enter();
    deepbind_as_global(handle);
    hh__guard_leave(guard);
    errno = saved;
  }
  return handle;
}
#endif
