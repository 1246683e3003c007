/* The symbolizer (symbolize.h): one libdwfl session per trace module,
 * opened on first use, and a cache from (address, module) to frames. */
#define _GNU_SOURCE
#include "symbolize/symbolize.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "trace/strset.h"
#include "trace/xalloc.h"

/* libstdc++'s demangler (extern "C" in <cxxabi.h>). */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

/* Interned strings: function and file names repeat across addresses. */
static const char *intern(hh_strset *set, const char *s) {
  return s ? hh_strset_intern(set, s, strlen(s)) : NULL;
}

typedef struct smodule {
  uint64_t base;
  char *path;
  char *build_id;
  uint32_t nsegments;
  hh_trace_segment *segments;
  uint32_t load_epoch, unload_epoch;
  bool heaphook; /* heaphook's own library: every frame in it is folded */
  /* (find_module) whether a segment overlaps one of another module, of
   * the modules before `checked` */
  bool overlaps;
  size_t checked;
  int state;     /* 0 not opened yet, 1 open, -1 unusable */
  char *problem; /* what opening it found (tell_problem), or NULL */
  bool told;     /* problem said (once) */
  Dwfl *dwfl;
  Dwfl_Module *mod;
  /* The symbol lookup's memo (module_addrinfo): the addresses where the
   * answer of dwfl_module_addrinfo can change, sorted; for each interval
   * between two, 0 or the index + 1 of its answer in hits. */
  bool bounds_made;
  uint64_t *bounds;
  size_t nbounds;
  uint32_t *interval_hit;
  /* (make_bounds) for each interval, the symbol table index + 1 of the
   * answer libdwfl would give, or NO_SYMBOL, where the table alone settles
   * it; 0 where libdwfl has to be asked */
  uint32_t *interval_sym;
  struct addr_hit *hits;
  size_t nhits, hits_cap;
} smodule;

/* dwfl_module_addrinfo's answer for an interval (module_addrinfo): the
 * symbol, at value, or none (name NULL). */
struct addr_hit {
  const char *name;
  GElf_Sym sym;
  uint64_t value;
};

typedef struct centry {
  uint64_t ip;
  uint32_t module; /* module index + 1; 0 none */
  uint32_t nframes;
  hh_frame *frames; /* NULL = empty slot */
} centry;

struct hh_symbolizer {
  hh_sym_warn_fn warn;
  void *warn_arg;
  bool holding; /* problems are kept, not told (hh_sym_hold_warnings) */
  smodule *modules;
  size_t nmodules, modules_cap;
  size_t synced; /* reader modules added by hh_sym_sync */
  size_t last;   /* index + 1 of the module find_module found last, when it overlaps none */
  centry *cache;
  size_t cache_cap, cache_n;
  hh_strset strings;
  char *debuginfo_path;
  Dwfl_Callbacks callbacks;
};

/* A module's problem (it cannot be read, it changed since the recording)
 * is kept with the module and told when an address in it is looked up,
 * once, unless the warnings are held (hh_sym_hold_warnings): so what is
 * told depends only on the addresses looked up since. */
static void note_problem(smodule *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note_problem(smodule *m, const char *fmt, ...) {
  char buf[600], line[600 * 4];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  /* one line: the control characters of a path from the trace as \xHH (a
   * newline in a module's name split the warning in two) */
  size_t n = 0;
  for (const unsigned char *p = (const unsigned char *)buf; *p; p++)
    n += *p < 0x20 || *p == 0x7f ? (size_t)snprintf(line + n, sizeof line - n, "\\x%02x", *p)
                                 : (size_t)snprintf(line + n, sizeof line - n, "%c", *p);
  free(m->problem);
  m->problem = xstrdup(line);
}

static void tell_problem(hh_symbolizer *s, smodule *m) {
  if (m->told || s->holding) return;
  m->told = true;
  if (s->warn)
    s->warn(s->warn_arg, m->problem);
  else
    fprintf(stderr, "heaphook: warning: %s\n", m->problem);
}

hh_symbolizer *hh_sym_new(hh_sym_warn_fn warn_fn, void *arg) {
  hh_symbolizer *s = xcalloc(1, sizeof *s);
  s->warn = warn_fn;
  s->warn_arg = arg;
  s->callbacks.find_elf = dwfl_build_id_find_elf;
  s->callbacks.find_debuginfo = dwfl_standard_find_debuginfo;
  s->callbacks.section_address = dwfl_offline_section_address;
  s->callbacks.debuginfo_path = &s->debuginfo_path; /* NULL: the default path */
  return s;
}

void hh_sym_set_warn(hh_symbolizer *s, hh_sym_warn_fn warn_fn, void *arg) {
  s->warn = warn_fn;
  s->warn_arg = arg;
}

void hh_sym_hold_warnings(hh_symbolizer *s, bool hold) { s->holding = hold; }

void hh_sym_free(hh_symbolizer *s) {
  if (!s) return;
  for (size_t i = 0; i < s->nmodules; i++) {
    smodule *m = &s->modules[i];
    if (m->dwfl) dwfl_end(m->dwfl);
    free(m->path);
    free(m->problem);
    free(m->build_id);
    free(m->segments);
    free(m->bounds);
    free(m->interval_hit);
    free(m->interval_sym);
    free(m->hits);
  }
  free(s->modules);
  for (size_t i = 0; i < s->cache_cap; i++) free(s->cache[i].frames);
  free(s->cache);
  hh_strset_free(&s->strings);
  free(s);
}

static const char *base_name(const char *path) {
  const char *slash = strrchr(path, '/');
  return slash ? slash + 1 : path;
}

bool hh_sym_is_heaphook_module(const char *path) {
  if (!path) return false;
  const char *b = base_name(path);
  return strncmp(b, "libheaphook.so", 14) == 0 || strncmp(b, "libpreloaded_", 13) == 0;
}

bool hh_sym_is_allocator_function(const char *name) {
  if (!name) return false;
  static const char *const exact[] = {
      "malloc",
      "calloc",
      "realloc",
      "reallocarray",
      "free",
      "cfree",
      "posix_memalign",
      "aligned_alloc",
      "memalign",
      "valloc",
      "pvalloc",
      "free_sized",
      "free_aligned_sized",
      "malloc_usable_size",
      "__libc_malloc",
      "__libc_calloc",
      "__libc_realloc",
      "__libc_free",
      "__libc_memalign",
      "__libc_valloc",
      "__libc_pvalloc",
      "__posix_memalign",
  };
  for (size_t i = 0; i < sizeof exact / sizeof *exact; i++)
    if (strcmp(name, exact[i]) == 0) return true;
  return strncmp(name, "operator new", 12) == 0 || strncmp(name, "operator delete", 15) == 0 ||
         strncmp(name, "hh__", 4) == 0;
}

char *hh_sym_demangle(const char *name) {
  if (!name || strncmp(name, "_Z", 2) != 0) return NULL;
  int status = 0;
  char *d = __cxa_demangle(name, NULL, NULL, &status);
  if (status != 0) {
    free(d);
    return NULL;
  }
  return d;
}

static bool module_has(const smodule *m, uint64_t ip) {
  for (uint32_t i = 0; i < m->nsegments; i++)
    if (ip - m->segments[i].start < m->segments[i].size) return true;
  return false;
}

/* Whether a segment of a and one of b have an address in common (as
 * module_has sees addresses: one holds the other's start). */
static bool modules_overlap(const smodule *a, const smodule *b) {
  for (uint32_t i = 0; i < a->nsegments; i++)
    for (uint32_t j = 0; j < b->nsegments; j++) {
      const hh_trace_segment *x = &a->segments[i], *y = &b->segments[j];
      if (x->size && y->size && (y->start - x->start < x->size || x->start - y->start < y->size)) return true;
    }
  return false;
}

void hh_sym_add_module(hh_symbolizer *s, const hh_trace_module *tm) {
  if (s->nmodules == s->modules_cap) {
    s->modules_cap = s->modules_cap ? s->modules_cap * 2 : 32;
    s->modules = xrealloc(s->modules, s->modules_cap * sizeof *s->modules);
  }
  smodule *m = &s->modules[s->nmodules++];
  memset(m, 0, sizeof *m);
  m->base = tm->base;
  m->path = xstrdup(tm->path ? tm->path : "");
  m->build_id = xstrdup(tm->build_id ? tm->build_id : "");
  m->nsegments = tm->nsegments;
  m->segments = xmalloc(tm->nsegments * sizeof *m->segments);
  if (tm->nsegments) memcpy(m->segments, tm->segments, tm->nsegments * sizeof *m->segments);
  m->load_epoch = tm->load_epoch;
  m->unload_epoch = tm->unload_epoch;
  m->heaphook = hh_sym_is_heaphook_module(m->path);
}

void hh_sym_sync(hh_symbolizer *s, const hh_reader *r) {
  size_t n = hh_reader_module_count(r);
  for (; s->synced < n; s->synced++) hh_sym_add_module(s, hh_reader_module(r, s->synced));
  /* unloads seen since: epochs of modules already added */
  for (size_t i = 0; i < n && i < s->nmodules; i++)
    s->modules[i].unload_epoch = hh_reader_module(r, i)->unload_epoch;
}

static bool same_string(const char *a, const char *b) { return strcmp(a, b ? b : "") == 0; }

bool hh_sym_agrees(const hh_symbolizer *s, const hh_reader *r) {
  if (s->synced > hh_reader_module_count(r) || s->synced != s->nmodules) return false;
  for (size_t i = 0; i < s->synced; i++) {
    const smodule *m = &s->modules[i];
    const hh_trace_module *tm = hh_reader_module(r, i);
    if (m->base != tm->base || m->load_epoch != tm->load_epoch || m->nsegments != tm->nsegments ||
        !same_string(m->path, tm->path) || !same_string(m->build_id, tm->build_id))
      return false;
    for (uint32_t j = 0; j < m->nsegments; j++)
      if (m->segments[j].start != tm->segments[j].start || m->segments[j].size != tm->segments[j].size)
        return false;
  }
  return true;
}

/* Whether m shares an address with another module: checked against the
 * modules added since its last check. */
static bool overlaps_other(hh_symbolizer *s, smodule *m) {
  for (; !m->overlaps && m->checked < s->nmodules; m->checked++) {
    const smodule *o = &s->modules[m->checked];
    if (o != m && modules_overlap(m, o)) m->overlaps = true;
  }
  return m->overlaps;
}

/* The module mapped at ip when `epoch` module records had been read: the
 * latest such; failing that, the latest module ever mapped there. A module
 * whose addresses no other module shares is the answer for any address of
 * its own, whatever the epoch: the one found last is tried first (a stack's
 * frames are mostly in one module; the walk over every module's segments
 * was half the time of `diff` on deep stacks). A module is checked against
 * each other module once, after a walk over them all found it. */
static smodule *find_module(hh_symbolizer *s, uint64_t ip, uint32_t epoch) {
  if (s->last) {
    smodule *m = &s->modules[s->last - 1];
    if (module_has(m, ip) && !overlaps_other(s, m)) return m;
  }
  smodule *any = NULL;
  for (size_t i = s->nmodules; i-- > 0;) {
    smodule *m = &s->modules[i];
    if (!module_has(m, ip)) continue;
    if (m->load_epoch <= epoch && epoch < m->unload_epoch) {
      any = m;
      break;
    }
    if (!any) any = m;
  }
  if (any && !overlaps_other(s, any)) s->last = (size_t)(any - s->modules) + 1;
  return any;
}

static void to_hex(const unsigned char *bits, int n, char *out) {
  static const char hex[] = "0123456789abcdef";
  for (int i = 0; i < n; i++) {
    out[2 * i] = hex[bits[i] >> 4];
    out[2 * i + 1] = hex[bits[i] & 15];
  }
  out[2 * n] = 0;
}

static Dwfl_Module *report(hh_symbolizer *s, smodule *m, const char *file) {
  if (m->dwfl) dwfl_end(m->dwfl);
  m->dwfl = dwfl_begin(&s->callbacks);
  if (!m->dwfl) return NULL;
  dwfl_report_begin(m->dwfl);
  Dwfl_Module *mod = dwfl_report_elf(m->dwfl, base_name(m->path), file, -1, m->base, true);
  dwfl_report_end(m->dwfl, NULL, NULL);
  return mod;
}

/* Opens the module's file; checks its build-id against the recorded one. */
static bool open_module(hh_symbolizer *s, smodule *m) {
  if (m->state) return m->state > 0;
  m->state = -1;
  if (m->path[0] != '/') return false; /* the vDSO ("linux-vdso.so.1"), or no path recorded */
  if (access(m->path, R_OK) != 0) {
    note_problem(m, "cannot read %s (recorded in the trace): its addresses are not symbolized", m->path);
    return false;
  }
  /* (a FIFO there held every command in open() for good) */
  struct stat st;
  if (stat(m->path, &st) != 0 || !S_ISREG(st.st_mode)) {
    note_problem(m, "%s (recorded in the trace) is not a regular file: its addresses are not symbolized",
                 m->path);
    return false;
  }
  Dwfl_Module *mod = report(s, m, m->path);
  if (!mod) {
    note_problem(m, "cannot read %s: %s; its addresses are not symbolized", m->path, dwfl_errmsg(-1));
    return false;
  }
  if (m->build_id[0]) {
    const unsigned char *bits;
    GElf_Addr vaddr;
    int n = dwfl_module_build_id(mod, &bits, &vaddr);
    char have[2 * 64 + 1] = "";
    if (n > 0 && n <= 64) to_hex(bits, n, have);
    if (strcmp(have, m->build_id) != 0) {
      /* The recorded build's debug file, when installed, still has the right addresses. */
      char dbg[4200];
      size_t len = strlen(m->build_id);
      bool found = false;
      if (len > 2 && len < 4000) {
        snprintf(dbg, sizeof dbg, "/usr/lib/debug/.build-id/%.2s/%s.debug", m->build_id, m->build_id + 2);
        if (access(dbg, R_OK) == 0 && (mod = report(s, m, dbg)) != NULL) found = true;
      }
      if (found) {
        note_problem(m, "%s has changed since the recording (build-id differs); using %s", m->path, dbg);
      } else {
        note_problem(
            m, "%s has changed since the recording (build-id differs); its addresses are not symbolized",
            m->path);
        dwfl_end(m->dwfl);
        m->dwfl = NULL;
        return false;
      }
    }
  }
  m->mod = mod;
  m->state = 1;
  return true;
}

/* The name of a function DIE (subprogram or inlined instance), demangled. */
static const char *die_function_name(hh_symbolizer *s, Dwarf_Die *die) {
  Dwarf_Attribute attr;
  const char *name = NULL;
  if (dwarf_attr_integrate(die, DW_AT_linkage_name, &attr) ||
      dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr))
    name = dwarf_formstring(&attr);
  if (!name && dwarf_attr_integrate(die, DW_AT_name, &attr)) name = dwarf_formstring(&attr);
  if (!name) return NULL;
  char *d = hh_sym_demangle(name);
  const char *out = intern(&s->strings, d ? d : name);
  free(d);
  return out;
}

/* Whether a function DIE has a linkage (mangled) name: GCC leaves it out of
 * functions whose mangled name involves a lambda or another local type. */
static bool die_has_linkage_name(Dwarf_Die *die) {
  Dwarf_Attribute attr;
  return dwarf_attr_integrate(die, DW_AT_linkage_name, &attr) ||
         dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr);
}

static const char *symbol_name(hh_symbolizer *s, const char *name) {
  if (!name) return NULL;
  char *d = hh_sym_demangle(name);
  const char *out = intern(&s->strings, d ? d : name);
  free(d);
  return out;
}

#define MAX_INLINE 64

/* Whether pc (a return address - 1) lies in code that makes calls: the
 * call frame information of a function other than a signal trampoline
 * holds it (or the module has none to tell). */
static bool in_a_caller(smodule *m, uint64_t pc) {
  Dwarf_Addr bias = 0;
  Dwarf_CFI *cfi = dwfl_module_eh_cfi(m->mod, &bias);
  if (!cfi) return true;
  Dwarf_Frame *frame = NULL;
  if (dwarf_cfi_addrframe(cfi, pc - bias, &frame) != 0) return false;
  Dwarf_Addr start, end;
  bool signal = false;
  dwarf_frame_info(frame, &start, &end, &signal);
  free(frame);
  return !signal;
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* GELF_ST_BIND as libdwfl ranks it: global over weak over local. */
static int binding_rank(unsigned char info) {
  switch (GELF_ST_BIND(info)) {
    case STB_GLOBAL:
      return 3;
    case STB_WEAK:
      return 2;
    case STB_LOCAL:
      return 1;
    default:
      return 0;
  }
}

/* (interval_sym, make_interval_syms' passes) */
#define NO_SYMBOL UINT32_MAX
#define AMBIGUOUS (UINT32_MAX - 1)

/* The answer of dwfl_module_addrinfo for every interval between two
 * bounds (make_bounds) that the symbol table alone settles, found in one
 * walk over the table instead of one walk per interval (29,000 symbols
 * searched for each of ~20,000 intervals was 60% of `report --top 0` on
 * cc1's trace). libdwfl searches the global symbols (from the table's
 * first global, or all of it when it has none) for a symbol with a size
 * that holds the address; only when none does, the local ones; and only
 * when neither has one, the symbols without a size, which depends on the
 * sections. Where the symbols with a size that hold an interval in the
 * pass that finds one all have the same value and size, its answer is
 * the first of them with the strongest binding, whatever their order;
 * otherwise (symbols of different extents, or none) libdwfl is asked. The
 * symbols it considers: a name, defined, not a section, file or TLS
 * symbol. */
static void make_interval_syms(smodule *m, int nsyms) {
  int first_global = dwfl_module_getsymtab_first_global(m->mod);
  if (first_global < 0) return;
  size_t nint = m->nbounds - 1;
  uint32_t *pass[2] = {xcalloc(nint, sizeof(uint32_t)),
                       xcalloc(nint, sizeof(uint32_t))}; /* globals, locals */
  uint64_t *value = xcalloc((size_t)nsyms, sizeof *value), *size = xcalloc((size_t)nsyms, sizeof *size);
  unsigned char *rank = xcalloc((size_t)nsyms, 1);
  /* nested symbols span several intervals: past this much work libdwfl
   * answers alone */
  size_t budget = 16 * nint + 65536;
  bool ok = true;
  uint64_t lowest_sizeless = UINT64_MAX;
  for (int i = 1; i < nsyms && ok; i++) {
    GElf_Sym sym;
    GElf_Addr v;
    const char *name = dwfl_module_getsym_info(m->mod, i, &sym, &v, NULL, NULL, NULL);
    if (name == NULL || name[0] == 0 || sym.st_shndx == SHN_UNDEF ||
        GELF_ST_TYPE(sym.st_info) == STT_SECTION || GELF_ST_TYPE(sym.st_info) == STT_FILE ||
        GELF_ST_TYPE(sym.st_info) == STT_TLS)
      continue;
    if (sym.st_size == 0) {
      if (v < lowest_sizeless) lowest_sizeless = v;
      continue;
    }
    if (v + sym.st_size < v) {
      ok = false;
      break;
    }
    value[i] = v;
    size[i] = sym.st_size;
    rank[i] = (unsigned char)binding_rank(sym.st_info);
    uint32_t *win = pass[first_global == 0 || i >= first_global ? 0 : 1];
    /* the first interval the symbol holds: its value is a bound */
    size_t lo = 0, hi = m->nbounds;
    while (lo < hi) {
      size_t mid = lo + (hi - lo) / 2;
      if (m->bounds[mid] < v)
        lo = mid + 1;
      else
        hi = mid;
    }
    for (size_t j = lo; j < nint && m->bounds[j] < v + sym.st_size; j++) {
      if (budget-- == 0) {
        ok = false;
        break;
      }
      uint32_t w = win[j];
      if (w == 0)
        win[j] = (uint32_t)i;
      else if (w != AMBIGUOUS) {
        if (value[w] != v || size[w] != sym.st_size)
          win[j] = AMBIGUOUS;
        else if (rank[i] > rank[w])
          win[j] = (uint32_t)i;
      }
    }
  }
  if (ok) {
    /* the locals are searched only where no global holds the address */
    for (size_t j = 0; j < nint; j++) {
      uint32_t w = pass[0][j];
      if (w == 0 && first_global > 1) w = pass[1][j];
      /* no symbol with a size holds it and none without one is at or
       * below it: no symbol */
      if (w == 0 && m->bounds[j] < lowest_sizeless) w = NO_SYMBOL;
      pass[0][j] = w == AMBIGUOUS ? 0 : w;
    }
    m->interval_sym = pass[0];
    pass[0] = NULL;
  }
  free(pass[0]);
  free(pass[1]);
  free(value);
  free(size);
  free(rank);
}

static void make_bounds(smodule *m) {
  m->bounds_made = true;
  int n = dwfl_module_getsymtab(m->mod);
  if (n <= 1) return;
  /* the files the symbols come from (the binary, its debug file or
   * minidebuginfo), whose sections bound them too */
  Elf *elfs[4];
  GElf_Addr biases[4];
  size_t nelfs = 0, k = 0, cap = 2 * (size_t)n + 64;
  m->bounds = xmalloc(cap * sizeof *m->bounds);
  for (int i = 1; i < n; i++) {
    GElf_Sym sym;
    GElf_Addr value;
    Elf *elf = NULL;
    Dwarf_Addr bias = 0;
    if (dwfl_module_getsym_info(m->mod, i, &sym, &value, NULL, &elf, &bias) == NULL) continue;
    m->bounds[k++] = value;
    if (sym.st_size != 0) m->bounds[k++] = value + sym.st_size;
    size_t e = 0;
    while (e < nelfs && (elfs[e] != elf || biases[e] != bias)) e++;
    if (e == nelfs) {
      if (nelfs == sizeof elfs / sizeof *elfs || elf == NULL) { /* not expected: no memo */
        free(m->bounds);
        m->bounds = NULL;
        return;
      }
      elfs[nelfs] = elf;
      biases[nelfs++] = bias;
    }
  }
  /* libdwfl tells which section holds addr for a symbol without a size */
  for (size_t e = 0; e < nelfs; e++)
    for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elfs[e], scn)) != NULL;) {
      GElf_Shdr mem, *sh = gelf_getshdr(scn, &mem);
      if (sh == NULL) continue;
      if (k + 2 > cap) {
        cap *= 2;
        m->bounds = xrealloc(m->bounds, cap * sizeof *m->bounds);
      }
      m->bounds[k++] = sh->sh_addr + biases[e];
      m->bounds[k++] = sh->sh_addr + sh->sh_size + biases[e];
    }
  qsort(m->bounds, k, sizeof *m->bounds, cmp_u64);
  size_t u = 0;
  for (size_t i = 0; i < k; i++)
    if (u == 0 || m->bounds[i] != m->bounds[u - 1]) m->bounds[u++] = m->bounds[i];
  m->nbounds = u;
  m->interval_hit = u > 1 ? xcalloc(u - 1, sizeof *m->interval_hit) : NULL;
  if (u > 1) make_interval_syms(m, n);
}

/* dwfl_module_addrinfo (the symbol that holds addr, *off bytes in, or
 * the nearest one without a size in addr's section), remembered per
 * interval between two bounds: libdwfl searches the whole symbol table
 * for each address, and the analyses look up every address of every
 * stack, so a trace of cc1 (29,000 symbols, 65,000 addresses) spent
 * seconds there. Its answer depends only on the symbols whose value is at
 * most addr, those that hold addr, and addr's section, all the same
 * across an interval between two of: every symbol's value, value + size,
 * every section's start and end. At a bound itself (where a symbol
 * without a size may lie exactly, which changes the search) libdwfl is
 * asked each time. */
static const char *module_addrinfo(smodule *m, uint64_t addr, GElf_Off *off, GElf_Sym *sym) {
  if (!m->bounds_made) make_bounds(m);
  size_t i = 0;
  bool memo = m->nbounds > 1 && addr > m->bounds[0] && addr < m->bounds[m->nbounds - 1];
  if (memo) {
    size_t lo = 0, hi = m->nbounds - 1; /* bounds[lo] <= addr < bounds[hi] */
    while (hi - lo > 1) {
      size_t mid = lo + (hi - lo) / 2;
      if (m->bounds[mid] <= addr)
        lo = mid;
      else
        hi = mid;
    }
    i = lo;
    memo = m->bounds[i] != addr;
  }
  if (memo && m->interval_hit[i] != 0) {
    const struct addr_hit *h = &m->hits[m->interval_hit[i] - 1];
    if (h->name != NULL) {
      *sym = h->sym;
      *off = addr - h->value;
    }
    return h->name;
  }
  const char *name;
  GElf_Addr value;
  uint32_t known = memo && m->interval_sym ? m->interval_sym[i] : 0;
  if (known == NO_SYMBOL)
    name = NULL;
  else if (known != 0 &&
           (name = dwfl_module_getsym_info(m->mod, (int)known, sym, &value, NULL, NULL, NULL)) != NULL)
    *off = addr - value;
  else
    name = dwfl_module_addrinfo(m->mod, addr, off, sym, NULL, NULL, NULL);
  if (memo && m->nhits < UINT32_MAX) {
    if (m->nhits == m->hits_cap) {
      m->hits_cap = m->hits_cap ? m->hits_cap * 2 : 64;
      m->hits = xrealloc(m->hits, m->hits_cap * sizeof *m->hits);
    }
    struct addr_hit h = {.name = name};
    if (name != NULL) {
      h.sym = *sym;
      h.value = addr - *off;
    }
    m->hits[m->nhits++] = h;
    m->interval_hit[i] = (uint32_t)m->nhits;
  }
  return name;
}

/* Fills frames for pc in module m; returns the count (>= 1). */
static size_t resolve(hh_symbolizer *s, smodule *m, uint64_t ip, hh_frame *out) {
  uint64_t pc = ip ? ip - 1 : 0; /* inside the call instruction */
  hh_frame base = {.ip = ip,
                   .module = m ? intern(&s->strings, m->path) : NULL,
                   .module_offset = m ? ip - m->base : ip,
                   .allocator = m && m->heaphook};
  out[0] = base;
  if (!m || !open_module(s, m)) return 1;

  GElf_Off off;
  GElf_Sym sym;
  const char *symname = module_addrinfo(m, pc, &off, &sym);
  if (!symname && ip && !in_a_caller(m, pc)) {
    /* A frame no call made, whose return address is its function's first
     * byte (the signal trampoline __restore_rt under a handler, whose call
     * frame information says so, __start_context under a makecontext
     * coroutine, with no function's before it) was named by no one:
     * "0x7f... (libc.so.6+0x3c050)" (trace.signal_frames). */
    const char *at = module_addrinfo(m, ip, &off, &sym);
    if (at && off == 0) {
      pc = ip;
      symname = at;
    }
  }
  const char *file = NULL;
  int line = 0;
  Dwfl_Line *dl = dwfl_module_getsrc(m->mod, pc);
  if (dl) file = dwfl_lineinfo(dl, NULL, &line, NULL, NULL, NULL);

  size_t n = 0;
  Dwarf_Addr bias = 0;
  Dwarf_Die *cu = dwfl_module_addrdie(m->mod, pc, &bias);
  /* Split DWARF (-gsplit-dwarf): the program's unit is a skeleton, whose
   * functions and inlined calls are in its .dwo unit; without it a frame
   * had no inlined frames, and took the innermost one's file and line for
   * its function's (trace.split_dwarf). */
  Dwarf_Die split;
  uint8_t unit_type = 0;
  if (cu && dwarf_cu_info(cu->cu, NULL, &unit_type, NULL, &split, NULL, NULL, NULL) == 0 &&
      unit_type == DW_UT_skeleton && dwarf_tag(&split) == DW_TAG_compile_unit)
    cu = &split;
  Dwarf_Die *scopes = NULL;
  int nscopes = cu ? dwarf_getscopes(cu, pc - bias, &scopes) : 0;
  if (nscopes > 0) {
    /* dwarf_getscopes goes from an inlined instance up through its abstract
     * definition's parents; the concrete chain (inlined instance, the
     * function it was inlined into, ...) is that DIE's own parents. */
    Dwarf_Die inner = scopes[0];
    free(scopes);
    scopes = NULL;
    nscopes = dwarf_getscopes_die(&inner, &scopes);
  }
  if (nscopes > 0) {
    Dwarf_Files *files = NULL;
    size_t nfiles = 0;
    if (dwarf_getsrcfiles(cu, &files, &nfiles) != 0) files = NULL;
    const char *cur_file = file;
    int cur_line = line;
    for (int i = 0; i < nscopes && n < MAX_INLINE; i++) {
      int tag = dwarf_tag(&scopes[i]);
      if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_subprogram) continue;
      hh_frame *f = &out[n++];
      *f = base;
      f->function = die_function_name(s, &scopes[i]);
      f->file = intern(&s->strings, cur_file);
      f->line = cur_line > 0 ? (uint32_t)cur_line : 0;
      if (tag == DW_TAG_subprogram) {
        /* DWARF's name is right for split (.cold) parts; the symbol table
         * is the fallback, and the better name where DWARF has only the
         * short one (no linkage name): a C++ function of a lambda's type
         * was "_M_invoke" for std::_Function_handler<void (int),
         * main::{lambda(int)#2}>::_M_invoke(std::_Any_data const&, int&&),
         * so the handlers of all std::functions were one function. (A
         * mangled name with no '.': not a clone's, which DWARF names; a
         * symbol that holds the address, not the nearest before it.) */
        if (!f->function || (symname && off < sym.st_size && strncmp(symname, "_Z", 2) == 0 &&
                             !strchr(symname, '.') && !die_has_linkage_name(&scopes[i])))
          f->function = symbol_name(s, symname);
        break;
      }
      /* inlined: the next frame's location is where this one was called */
      f->inlined = true;
      Dwarf_Attribute attr;
      Dwarf_Word w;
      cur_file = NULL;
      cur_line = 0;
      if (files && dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_file, &attr), &w) == 0 && w < nfiles)
        cur_file = dwarf_filesrc(files, w, NULL, NULL);
      if (dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_line, &attr), &w) == 0) cur_line = (int)w;
    }
    free(scopes);
  }
  if (n == 0) {
    out[0].function = symbol_name(s, symname);
    out[0].file = intern(&s->strings, file);
    out[0].line = line > 0 ? (uint32_t)line : 0;
    n = 1;
  }
  /* the outermost frame is the real function; inlined ones end before it */
  out[n - 1].inlined = false;
  for (size_t i = 0; i < n; i++)
    out[i].allocator = m->heaphook || hh_sym_is_allocator_function(out[i].function);
  return n;
}

const char *hh_sym_symbol(hh_symbolizer *s, uint64_t addr, uint32_t epoch, uint64_t *offset) {
  smodule *m = find_module(s, addr, epoch);
  if (!m || !open_module(s, m)) return NULL;
  GElf_Off off = 0;
  GElf_Sym sym;
  const char *name = module_addrinfo(m, addr, &off, &sym);
  *offset = name ? off : 0;
  return name;
}

static void cache_grow(hh_symbolizer *s) {
  centry *old = s->cache;
  size_t oldcap = s->cache_cap;
  s->cache_cap = oldcap ? oldcap * 2 : 1024;
  s->cache = xcalloc(s->cache_cap, sizeof *s->cache);
  for (size_t i = 0; i < oldcap; i++) {
    if (!old[i].frames) continue;
    size_t j = hh_mix64(old[i].ip ^ ((uint64_t)old[i].module << 48)) & (s->cache_cap - 1);
    while (s->cache[j].frames) j = (j + 1) & (s->cache_cap - 1);
    s->cache[j] = old[i];
  }
  free(old);
}

size_t hh_sym_ip(hh_symbolizer *s, uint64_t ip, uint32_t epoch, const hh_frame **frames) {
  smodule *m = find_module(s, ip, epoch);
  uint32_t mi = m ? (uint32_t)(m - s->modules) + 1 : 0;
  if ((s->cache_n + 1) * 2 > s->cache_cap) cache_grow(s);
  size_t j = hh_mix64(ip ^ ((uint64_t)mi << 48)) & (s->cache_cap - 1);
  for (; s->cache[j].frames; j = (j + 1) & (s->cache_cap - 1)) {
    if (s->cache[j].ip == ip && s->cache[j].module == mi) {
      if (m && m->problem) tell_problem(s, m);
      *frames = s->cache[j].frames;
      return s->cache[j].nframes;
    }
  }
  hh_frame tmp[MAX_INLINE];
  size_t n = resolve(s, m, ip, tmp);
  if (m && m->problem) tell_problem(s, m);
  hh_frame *f = xmalloc(n * sizeof *f);
  memcpy(f, tmp, n * sizeof *f);
  s->cache[j] = (centry){.ip = ip, .module = mi, .nframes = (uint32_t)n, .frames = f};
  s->cache_n++;
  *frames = f;
  return n;
}

size_t hh_sym_stack(hh_symbolizer *s, const hh_reader *r, uint64_t id, unsigned flags, const hh_frame **out,
                    size_t max) {
  hh_sym_sync(s, r);
  size_t n = 0;
  bool folding = flags & HH_SYM_FOLD;
  for (const hh_stack_node *node = hh_reader_stack(r, id); node && n < max;
       node = hh_reader_stack(r, node->parent)) {
    const hh_frame *f;
    size_t nf = hh_sym_ip(s, node->ip, node->epoch, &f);
    for (size_t i = 0; i < nf && n < max; i++) {
      if (folding && f[i].allocator) continue;
      folding = false;
      out[n++] = &f[i];
    }
  }
  if (folding && hh_reader_stack(r, id)) /* nothing but allocator frames: keep them */
    return hh_sym_stack(s, r, id, flags & ~(unsigned)HH_SYM_FOLD, out, max);
  return n;
}
