/* Symbolizer tests on this very program (built with -g): function names,
 * file:line, an inlined frame, a demangled C++ name, allocator frames
 * folded, an address in no module, a binary changed since the recording.
 * The module list is made as the tracer makes it: dl_iterate_phdr, the
 * GNU build-id note, the PT_LOAD segments. */
#define _GNU_SOURCE
#include <elf.h>
#include <link.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <dlfcn.h>
#include <elfutils/libdwfl.h>

#include "sym_target.h"
#include "symbolize/symbolize.h"
#include "trace_builder.h"

#define MAX_MODULES 64

typedef struct fake_module {
  char path[512];
  char build_id[129];
  uint64_t base;
  unsigned nseg;
  tb_segment segs[16];
} fake_module;

static fake_module modules[MAX_MODULES];
static unsigned nmodules;

static void hex(const uint8_t *p, size_t n, char *out) {
  for (size_t i = 0; i < n && i < 64; i++) sprintf(out + 2 * i, "%02x", p[i]);
}

static int collect(struct dl_phdr_info *info, size_t size, void *arg) {
  (void)size;
  (void)arg;
  if (nmodules == MAX_MODULES) return 0;
  fake_module *m = &modules[nmodules];
  memset(m, 0, sizeof *m);
  if (info->dlpi_name[0] == 0) {
    ssize_t n = readlink("/proc/self/exe", m->path, sizeof m->path - 1);
    if (n <= 0) return 0;
    m->path[n] = 0;
  } else if (info->dlpi_name[0] == '/') {
    snprintf(m->path, sizeof m->path, "%s", info->dlpi_name);
  } else {
    return 0; /* the vDSO */
  }
  m->base = info->dlpi_addr;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type == PT_LOAD && m->nseg < 16)
      m->segs[m->nseg++] = (tb_segment){info->dlpi_addr + ph->p_vaddr, ph->p_memsz, ph->p_offset};
    if (ph->p_type == PT_NOTE) {
      const uint8_t *p = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr), *end = p + ph->p_memsz;
      while (p + sizeof(ElfW(Nhdr)) <= end) {
        const ElfW(Nhdr) *nh = (const void *)p;
        const uint8_t *name = p + sizeof *nh, *desc = name + ((nh->n_namesz + 3) & ~3u);
        if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 && memcmp(name, "GNU", 4) == 0)
          hex(desc, nh->n_descsz, m->build_id);
        p = desc + ((nh->n_descsz + 3) & ~3u);
      }
    }
  }
  nmodules++;
  return 0;
}

static void add_all(hh_symbolizer *s, const char *main_build_id) {
  for (unsigned i = 0; i < nmodules; i++) {
    hh_trace_segment segs[16];
    for (unsigned j = 0; j < modules[i].nseg; j++)
      segs[j] =
          (hh_trace_segment){modules[i].segs[j].start, modules[i].segs[j].size, modules[i].segs[j].offset};
    hh_trace_module m = {.index = i,
                         .base = modules[i].base,
                         .path = modules[i].path,
                         .build_id = i == 0 && main_build_id ? main_build_id : modules[i].build_id,
                         .nsegments = modules[i].nseg,
                         .segments = segs,
                         .load_epoch = 1,
                         .unload_epoch = UINT32_MAX};
    hh_sym_add_module(s, &m);
  }
}

static int setup(void **state) {
  (void)state;
  nmodules = 0;
  dl_iterate_phdr(collect, NULL);
  return nmodules > 0 ? 0 : -1;
}

static char warnings[4096];
static int nwarnings;
static void on_warn(void *arg, const char *msg) {
  (void)arg;
  nwarnings++;
  strncat(warnings, msg, sizeof warnings - strlen(warnings) - 2);
  strcat(warnings, "\n");
}

static void expect_frame(const hh_frame *f, const char *function, const char *file_suffix, int line) {
  if (!f->function || strcmp(f->function, function) != 0)
    fail_msg("function \"%s\", want \"%s\"", f->function ? f->function : "(null)", function);
  size_t n = f->file ? strlen(f->file) : 0, k = strlen(file_suffix);
  if (n < k || strcmp(f->file + n - k, file_suffix) != 0)
    fail_msg("file \"%s\", want ...%s", f->file ? f->file : "(null)", file_suffix);
  assert_int_equal(f->line, line);
}

static void test_function_file_line(void **state) {
  (void)state;
  hh_symbolizer *s = hh_sym_new(on_warn, NULL);
  add_all(s, NULL);
  void *ip = sym_plain_caller();
  const hh_frame *f;
  size_t n = hh_sym_ip(s, (uint64_t)(uintptr_t)ip, UINT32_MAX, &f);
  assert_int_equal(n, 1);
  expect_frame(&f[0], "sym_plain_caller", "sym_target.c", sym_plain_line);
  assert_false(f[0].inlined);
  assert_false(f[0].allocator);
  assert_non_null(strstr(f[0].module, "test_symbolize"));
  /* cached: the same array */
  const hh_frame *again;
  assert_int_equal(hh_sym_ip(s, (uint64_t)(uintptr_t)ip, UINT32_MAX, &again), 1);
  assert_ptr_equal(again, f);
  hh_sym_free(s);
}

static void test_inlined_frame(void **state) {
  (void)state;
  hh_symbolizer *s = hh_sym_new(on_warn, NULL);
  add_all(s, NULL);
  void *ip = sym_outer_with_inline();
  const hh_frame *f;
  size_t n = hh_sym_ip(s, (uint64_t)(uintptr_t)ip, UINT32_MAX, &f);
  assert_int_equal(n, 2);
  expect_frame(&f[0], "sym_inlined_helper", "sym_target.c", sym_inline_line);
  assert_true(f[0].inlined);
  expect_frame(&f[1], "sym_outer_with_inline", "sym_target.c", sym_outer_line);
  assert_false(f[1].inlined);
  hh_sym_free(s);
}

static void test_cxx_name_demangled(void **state) {
  (void)state;
  hh_symbolizer *s = hh_sym_new(on_warn, NULL);
  add_all(s, NULL);
  void *ip = sym_cxx_caller();
  const hh_frame *f;
  size_t n = hh_sym_ip(s, (uint64_t)(uintptr_t)ip, UINT32_MAX, &f);
  assert_int_equal(n, 1);
  expect_frame(&f[0], "hhtest::Widget::make(int)", "sym_target_cxx.cpp", sym_cxx_line);
  char *d = hh_sym_demangle("_ZN6hhtest6Widget4makeEi");
  assert_string_equal(d, "hhtest::Widget::make(int)");
  free(d);
  assert_null(hh_sym_demangle("main"));
  assert_null(hh_sym_demangle("_Zgarbage"));
  hh_sym_free(s);
}

/* A function whose DWARF has no linkage name (its type involves a lambda):
 * its whole name from the symbol table, not DWARF's short one. */
static void test_cxx_name_of_a_lambdas_function(void **state) {
  (void)state;
  hh_symbolizer *s = hh_sym_new(on_warn, NULL);
  add_all(s, NULL);
  void *ip = sym_cxx_lambda_caller();
  const hh_frame *f;
  size_t n = hh_sym_ip(s, (uint64_t)(uintptr_t)ip, UINT32_MAX, &f);
  assert_int_equal(n, 1);
  expect_frame(
      &f[0], "void* hhtest::run_it<sym_cxx_lambda_caller::{lambda()#1}>(sym_cxx_lambda_caller::{lambda()#1})",
      "sym_target_cxx.cpp", sym_lambda_line);
  hh_sym_free(s);
}

/* libdwfl's symbol lookup, counted: the symbolizer (built into this
 * program) calls this one, which calls libdw's. */
static int addrinfo_calls;
const char *dwfl_module_addrinfo(Dwfl_Module *mod, GElf_Addr address, GElf_Off *offset, GElf_Sym *sym,
                                 GElf_Word *shndxp, Elf **elfp, Dwarf_Addr *bias) {
  static const char *(*real)(Dwfl_Module *, GElf_Addr, GElf_Off *, GElf_Sym *, GElf_Word *, Elf **,
                             Dwarf_Addr *);
  if (!real) *(void **)&real = dlsym(RTLD_NEXT, "dwfl_module_addrinfo");
  addrinfo_calls++;
  return real(mod, address, offset, sym, shndxp, elfp, bias);
}

/* libdwfl searches the whole symbol table for each address: the
 * symbolizer asks it once per interval between two symbol or section
 * bounds, where its answer cannot change (before, once per address: a
 * trace of cc1, 29,000 symbols and 65,000 addresses, took seconds). */
static void test_symbol_looked_up_once_per_interval(void **state) {
  (void)state;
  hh_symbolizer *s = hh_sym_new(on_warn, NULL);
  add_all(s, NULL);
  uint64_t ip = (uint64_t)(uintptr_t)sym_plain_caller();
  addrinfo_calls = 0;
  /* four addresses in the call instruction before the return address */
  for (uint64_t d = 0; d < 4; d++) {
    const hh_frame *f;
    assert_int_equal(hh_sym_ip(s, ip - d, UINT32_MAX, &f), 1);
    expect_frame(&f[0], "sym_plain_caller", "sym_target.c", sym_plain_line);
  }
  assert_int_equal(addrinfo_calls, 0);
  hh_sym_free(s);
}

/* The symbolizer answers most intervals from one walk over the symbol
 * table (make_interval_syms) instead of asking libdwfl, which searches the
 * table each time: its answers must be libdwfl's. Addresses every 96 bytes
 * (odd ones) over 256 KiB of the first executable segment of this program
 * (its .symtab's local and sizeless symbols), libc and libstdc++ (aliased
 * constructors, weak symbols), in a shuffled order, against libdwfl's
 * answer on a session of the test's own. */
static void test_symbol_table_answers_are_libdwfl(void **state) {
  (void)state;
  unsigned checked = 0, named = 0;
  for (unsigned i = 0; i < nmodules; i++) {
    if (i != 0 && !strstr(modules[i].path, "/libc.so") && !strstr(modules[i].path, "/libstdc++.so")) continue;
    const tb_segment *text = NULL;
    for (unsigned j = 0; j < modules[i].nseg && !text; j++)
      if (modules[i].segs[j].offset != 0) text = &modules[i].segs[j];
    assert_non_null(text);
    Dwfl_Callbacks cb = {.find_elf = dwfl_build_id_find_elf,
                         .find_debuginfo = dwfl_standard_find_debuginfo,
                         .section_address = dwfl_offline_section_address};
    Dwfl *dwfl = dwfl_begin(&cb);
    assert_non_null(dwfl);
    dwfl_report_begin(dwfl);
    Dwfl_Module *mod = dwfl_report_elf(dwfl, "m", modules[i].path, -1, modules[i].base, true);
    dwfl_report_end(dwfl, NULL, NULL);
    assert_non_null(mod);
    uint64_t n = (text->size < 256 * 1024 ? text->size : 256 * 1024) / 96;
    uint64_t *order = malloc(n * sizeof *order);
    for (uint64_t k = 0; k < n; k++) order[k] = text->start + 96 * k + 1 + 2 * (k % 11);
    uint64_t seed = 12345 + i;
    for (uint64_t k = n; k > 1; k--) { /* Fisher-Yates, a fixed LCG */
      seed = seed * 6364136223846793005ull + 1442695040888963407ull;
      uint64_t j = (seed >> 33) % k, t = order[k - 1];
      order[k - 1] = order[j];
      order[j] = t;
    }
    hh_symbolizer *s = hh_sym_new(on_warn, NULL);
    add_all(s, NULL);
    for (uint64_t k = 0; k < n; k++) {
      uint64_t off = 0;
      GElf_Off want_off = 0;
      GElf_Sym sym;
      const char *got = hh_sym_symbol(s, order[k], UINT32_MAX, &off);
      const char *want = dwfl_module_addrinfo(mod, order[k], &want_off, &sym, NULL, NULL, NULL);
      if ((got == NULL) != (want == NULL) || (got && (strcmp(got, want) != 0 || off != want_off)))
        fail_msg("%s+0x%llx: %s+%llu from the symbolizer, %s+%llu from libdwfl", modules[i].path,
                 (unsigned long long)(order[k] - modules[i].base), got ? got : "(null)",
                 (unsigned long long)off, want ? want : "(null)", (unsigned long long)want_off);
      checked++;
      named += want != NULL;
    }
    hh_sym_free(s);
    dwfl_end(dwfl);
    free(order);
  }
  assert_true(checked > 4000 && named > checked / 2);
}

/* The answers do not depend on the order of the lookups: four addresses
 * every 1 KiB over 256 KiB of the first executable segments of this
 * program and of libc, looked up upwards by one symbolizer and downwards
 * by another (a remembered answer taken for an address it does not hold
 * would differ). */
static void test_symbol_lookups_in_any_order(void **state) {
  (void)state;
  static const uint64_t near[] = {1, 6, 12, 19};
  enum { NEAR = sizeof near / sizeof *near };
  for (unsigned i = 0; i < nmodules; i++) {
    if (i != 0 && !strstr(modules[i].path, "/libc.so")) continue;
    const tb_segment *text = NULL;
    for (unsigned j = 0; j < modules[i].nseg && !text; j++)
      if (modules[i].segs[j].offset != 0) text = &modules[i].segs[j];
    assert_non_null(text);
    uint64_t n = (text->size < 256 * 1024 ? text->size : 256 * 1024) / 1024 * NEAR;
    const char **up = calloc(n, sizeof *up);
    uint32_t *up_line = calloc(n, sizeof *up_line);
    hh_symbolizer *a = hh_sym_new(on_warn, NULL), *b = hh_sym_new(on_warn, NULL);
    add_all(a, NULL);
    add_all(b, NULL);
    for (uint64_t k = 0; k < n; k++) {
      const hh_frame *f;
      hh_sym_ip(a, text->start + k / NEAR * 1024 + near[k % NEAR], UINT32_MAX, &f);
      up[k] = f[0].function;
      up_line[k] = f[0].line;
    }
    for (uint64_t k = n; k-- > 0;) {
      const hh_frame *f;
      uint64_t ip = text->start + k / NEAR * 1024 + near[k % NEAR];
      hh_sym_ip(b, ip, UINT32_MAX, &f);
      if ((up[k] == NULL) != (f[0].function == NULL) || (up[k] && strcmp(up[k], f[0].function) != 0) ||
          up_line[k] != f[0].line)
        fail_msg("%s+0x%llx: \"%s\" line %u upwards, \"%s\" line %u downwards", modules[i].path,
                 (unsigned long long)(ip - modules[i].base), up[k] ? up[k] : "(null)", up_line[k],
                 f[0].function ? f[0].function : "(null)", f[0].line);
    }
    hh_sym_free(a);
    hh_sym_free(b);
    free(up);
    free(up_line);
  }
}

static void test_unknown_address(void **state) {
  (void)state;
  hh_symbolizer *s = hh_sym_new(on_warn, NULL);
  add_all(s, NULL);
  const hh_frame *f;
  assert_int_equal(hh_sym_ip(s, 0x10, UINT32_MAX, &f), 1);
  assert_null(f[0].function);
  assert_null(f[0].module);
  assert_int_equal(f[0].ip, 0x10);
  hh_sym_free(s);
}

static void test_changed_binary_reported_once(void **state) {
  (void)state;
  warnings[0] = 0;
  nwarnings = 0;
  hh_symbolizer *s = hh_sym_new(on_warn, NULL);
  add_all(s, "00112233445566778899aabbccddeeff00112233");
  const hh_frame *f;
  assert_int_equal(hh_sym_ip(s, (uint64_t)(uintptr_t)sym_plain_caller(), UINT32_MAX, &f), 1);
  assert_null(f[0].function);
  assert_non_null(f[0].module);
  hh_sym_ip(s, (uint64_t)(uintptr_t)sym_outer_with_inline(), UINT32_MAX, &f);
  assert_int_equal(nwarnings, 1);
  assert_non_null(strstr(warnings, "has changed since the recording (build-id differs)"));
  hh_sym_free(s);

  /* a module file that is gone */
  warnings[0] = 0;
  nwarnings = 0;
  s = hh_sym_new(on_warn, NULL);
  hh_trace_segment seg = {0x100000, 0x1000, 0};
  hh_trace_module m = {.path = "/nonexistent/libgone.so",
                       .build_id = "",
                       .base = 0x100000,
                       .nsegments = 1,
                       .segments = &seg,
                       .load_epoch = 1,
                       .unload_epoch = UINT32_MAX};
  hh_sym_add_module(s, &m);
  hh_sym_ip(s, 0x100010, UINT32_MAX, &f);
  hh_sym_ip(s, 0x100020, UINT32_MAX, &f);
  assert_int_equal(nwarnings, 1);
  assert_non_null(strstr(warnings, "cannot read /nonexistent/libgone.so"));
  assert_string_equal(f[0].module, "/nonexistent/libgone.so");
  assert_int_equal(f[0].module_offset, 0x20);
  hh_sym_free(s);

  /* held warnings (a report's warm-up, src/cli/load.c): the problem is
   * found, but told only when an address in the module is looked up once
   * they are no longer held, the cached one included; and then once */
  warnings[0] = 0;
  nwarnings = 0;
  s = hh_sym_new(on_warn, NULL);
  hh_sym_hold_warnings(s, true);
  hh_sym_add_module(s, &m);
  hh_sym_ip(s, 0x100010, UINT32_MAX, &f);
  hh_sym_ip(s, 0x100020, UINT32_MAX, &f);
  hh_sym_ip(s, 0x7000, UINT32_MAX, &f); /* in no module */
  assert_int_equal(nwarnings, 0);
  hh_sym_hold_warnings(s, false);
  hh_sym_ip(s, 0x7000, UINT32_MAX, &f);
  assert_int_equal(nwarnings, 0);
  hh_sym_ip(s, 0x100010, UINT32_MAX, &f); /* cached */
  assert_int_equal(nwarnings, 1);
  assert_non_null(strstr(warnings, "cannot read /nonexistent/libgone.so"));
  hh_sym_ip(s, 0x100030, UINT32_MAX, &f);
  hh_sym_ip(s, 0x100020, UINT32_MAX, &f);
  assert_int_equal(nwarnings, 1);
  hh_sym_free(s);

  /* a FIFO (or a directory) at the module's path: said, not opened (a
   * FIFO held the command in open() for good) */
  char fifo[64];
  snprintf(fifo, sizeof fifo, "/tmp/hh_sym_fifo_%d", (int)getpid());
  assert_int_equal(mkfifo(fifo, 0600), 0);
  warnings[0] = 0;
  nwarnings = 0;
  s = hh_sym_new(on_warn, NULL);
  m.path = fifo;
  hh_sym_add_module(s, &m);
  hh_sym_ip(s, 0x100010, UINT32_MAX, &f);
  unlink(fifo);
  assert_int_equal(nwarnings, 1);
  assert_non_null(strstr(warnings, "is not a regular file: its addresses are not symbolized"));
  hh_sym_free(s);
}

/* A trace whose stack is [hh__test_fake_alloc <- sym_plain_caller]: folding
 * drops the first; the module list comes from the reader. */
static void test_stack_folding_through_reader(void **state) {
  (void)state;
  tb b;
  tb_init(&b, HH_TRACE_FLAG_STACKS, 1000000000u);
  tb_chunk_begin(&b, 0, 0);
  for (unsigned i = 0; i < nmodules; i++)
    tb_module(&b, modules[i].base, modules[i].path, modules[i].build_id, modules[i].nseg, modules[i].segs);
  uint64_t outer = (uint64_t)(uintptr_t)sym_plain_caller();
  uint64_t inner = (uint64_t)(uintptr_t)hh__test_fake_alloc();
  tb_stack(&b, 1, 0, outer);
  tb_stack(&b, 2, 1, inner);
  tb_stack(&b, 3, 0, inner);
  tb_end(&b, 1, 0);
  tb_chunk_end(&b, HH_CHUNK_ZSTD);
  hh_reader *r = hh_reader_open_mem(b.buf, b.len, NULL, 0);
  hh_event ev;
  while (hh_reader_next(r, &ev)) {
  }
  assert_int_equal(hh_reader_status(r), HH_READ_OK);
  hh_symbolizer *s = hh_sym_new(on_warn, NULL);
  const hh_frame *out[8];
  size_t n = hh_sym_stack(s, r, 2, 0, out, 8);
  assert_int_equal(n, 2);
  expect_frame(out[0], "hh__test_fake_alloc", "sym_target.c", sym_alloc_line);
  assert_true(out[0]->allocator);
  n = hh_sym_stack(s, r, 2, HH_SYM_FOLD, out, 8);
  assert_int_equal(n, 1);
  expect_frame(out[0], "sym_plain_caller", "sym_target.c", sym_plain_line);
  /* nothing but allocator frames: kept */
  assert_int_equal(hh_sym_stack(s, r, 3, HH_SYM_FOLD, out, 8), 1);
  assert_int_equal(hh_sym_stack(s, r, 99, HH_SYM_FOLD, out, 8), 0);
  assert_int_equal(hh_sym_stack(s, r, 2, 0, out, 1), 1);
  assert_int_equal(hh_sym_stack(s, r, 2, HH_SYM_FOLD, out, 1), 1);
  expect_frame(out[0], "sym_plain_caller", "sym_target.c", sym_plain_line);
  hh_sym_free(s);
  hh_reader_close(r);
  tb_free_all(&b);
}

/* A trace of this program's modules, the first two swapped when asked. */
static void build_modules_trace(tb *b, bool swap) {
  tb_init(b, HH_TRACE_FLAG_STACKS, 1000000000u);
  tb_chunk_begin(b, 0, 0);
  for (unsigned k = 0; k < nmodules; k++) {
    unsigned i = swap && k < 2 && nmodules > 1 ? 1 - k : k;
    tb_module(b, modules[i].base, modules[i].path, modules[i].build_id, modules[i].nseg, modules[i].segs);
  }
  tb_stack(b, 1, 0, (uint64_t)(uintptr_t)sym_plain_caller());
  tb_end(b, 1, 0);
  tb_chunk_end(b, HH_CHUNK_ZSTD);
}

static hh_reader *read_whole(const tb *b) {
  hh_reader *r = hh_reader_open_mem(b->buf, b->len, NULL, 0);
  hh_event ev;
  while (hh_reader_next(r, &ev)) {
  }
  assert_int_equal(hh_reader_status(r), HH_READ_OK);
  return r;
}

/* hh_load warms a symbolizer up with a reader of its own, then goes on with
 * the analysis's reader only when the modules agree, in order. */
static void test_symbolizer_agrees_with_reader(void **state) {
  (void)state;
  assert_true(nmodules > 1);
  tb same, swapped;
  build_modules_trace(&same, false);
  build_modules_trace(&swapped, true);
  hh_reader *r1 = read_whole(&same), *r2 = read_whole(&same), *r3 = read_whole(&swapped);
  hh_symbolizer *s = hh_sym_new(on_warn, NULL);
  assert_true(hh_sym_agrees(s, r3)); /* nothing taken yet */
  hh_sym_sync(s, r1);
  const hh_frame *f;
  hh_sym_ip(s, (uint64_t)(uintptr_t)sym_plain_caller(), UINT32_MAX, &f);
  assert_true(hh_sym_agrees(s, r2));
  assert_false(hh_sym_agrees(s, r3));
  /* ... and the symbols it cached are those a fresh one finds */
  hh_symbolizer *fresh = hh_sym_new(on_warn, NULL);
  const hh_frame *a[8], *b[8];
  assert_int_equal(hh_sym_stack(s, r2, 1, HH_SYM_FOLD, a, 8), hh_sym_stack(fresh, r2, 1, HH_SYM_FOLD, b, 8));
  assert_string_equal(a[0]->function, b[0]->function);
  assert_int_equal(a[0]->line, b[0]->line);
  expect_frame(a[0], "sym_plain_caller", "sym_target.c", sym_plain_line);
  /* modules added by hand, not from a reader: no agreement claimed */
  hh_symbolizer *by_hand = hh_sym_new(on_warn, NULL);
  add_all(by_hand, NULL);
  assert_false(hh_sym_agrees(by_hand, r2));
  hh_sym_free(by_hand);
  hh_sym_free(fresh);
  hh_sym_free(s);
  hh_reader_close(r1);
  hh_reader_close(r2);
  hh_reader_close(r3);
  tb_free_all(&same);
  tb_free_all(&swapped);
}

static void test_allocator_names(void **state) {
  (void)state;
  assert_true(hh_sym_is_allocator_function("malloc"));
  assert_true(hh_sym_is_allocator_function("operator new(unsigned long)"));
  assert_true(hh_sym_is_allocator_function("operator new[](unsigned long, std::align_val_t)"));
  assert_true(hh_sym_is_allocator_function("operator delete(void*, unsigned long)"));
  assert_true(hh_sym_is_allocator_function("hh__malloc"));
  assert_false(hh_sym_is_allocator_function("mallocator"));
  assert_false(hh_sym_is_allocator_function("main"));
  assert_false(hh_sym_is_allocator_function(NULL));
  assert_true(hh_sym_is_heaphook_module("/x/build/src/libheaphook.so"));
  assert_true(hh_sym_is_heaphook_module("libpreloaded_heaptrack.so"));
  assert_false(hh_sym_is_heaphook_module("/usr/lib/libc.so.6"));
}

/* Modules that share addresses (a library unloaded, another loaded where it
 * was) are told apart by epoch, also after a lookup found another module
 * (find_module tries the module it found last first) and when the sharer
 * comes after that lookup. */
static void add_fake(hh_symbolizer *s, const char *path, uint64_t base, uint32_t load, uint32_t unload) {
  hh_trace_segment seg = {base, 0x1000, 0};
  hh_trace_module m = {.base = base,
                       .path = path,
                       .build_id = "",
                       .nsegments = 1,
                       .segments = &seg,
                       .load_epoch = load,
                       .unload_epoch = unload};
  hh_sym_add_module(s, &m);
}

static const char *module_at(hh_symbolizer *s, uint64_t ip, uint32_t epoch) {
  const hh_frame *f;
  assert_int_equal(hh_sym_ip(s, ip, epoch, &f), 1);
  return f[0].module ? f[0].module : "(none)";
}

static void test_modules_sharing_addresses(void **state) {
  (void)state;
  hh_symbolizer *s = hh_sym_new(on_warn, NULL);
  add_fake(s, "/nonexistent/x.so", 0x10000000, 1, 3);
  add_fake(s, "/nonexistent/y.so", 0x10000000, 3, UINT32_MAX);
  add_fake(s, "/nonexistent/z.so", 0x20000000, 1, 5);
  assert_string_equal(module_at(s, 0x20000010, 2), "/nonexistent/z.so");
  assert_string_equal(module_at(s, 0x10000010, 2), "/nonexistent/x.so");
  assert_string_equal(module_at(s, 0x20000020, 2), "/nonexistent/z.so");
  assert_string_equal(module_at(s, 0x10000010, 4), "/nonexistent/y.so");
  assert_string_equal(module_at(s, 0x10000020, 1), "/nonexistent/x.so");
  assert_string_equal(module_at(s, 0x20000030, 4), "/nonexistent/z.so");
  /* z unloaded, w loaded where it was: z's addresses are w's from then on */
  add_fake(s, "/nonexistent/w.so", 0x20000000, 5, UINT32_MAX);
  assert_string_equal(module_at(s, 0x20000040, 6), "/nonexistent/w.so");
  assert_string_equal(module_at(s, 0x20000050, 4), "/nonexistent/z.so");
  assert_string_equal(module_at(s, 0x30000000, 6), "(none)");
  hh_sym_free(s);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_function_file_line),
      cmocka_unit_test(test_inlined_frame),
      cmocka_unit_test(test_cxx_name_demangled),
      cmocka_unit_test(test_cxx_name_of_a_lambdas_function),
      cmocka_unit_test(test_symbol_looked_up_once_per_interval),
      cmocka_unit_test(test_symbol_lookups_in_any_order),
      cmocka_unit_test(test_symbol_table_answers_are_libdwfl),
      cmocka_unit_test(test_unknown_address),
      cmocka_unit_test(test_changed_binary_reported_once),
      cmocka_unit_test(test_stack_folding_through_reader),
      cmocka_unit_test(test_symbolizer_agrees_with_reader),
      cmocka_unit_test(test_allocator_names),
      cmocka_unit_test(test_modules_sharing_addresses),
  };
  return cmocka_run_group_tests(tests, setup, NULL);
}
