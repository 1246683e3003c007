/* A library that a program opens with RTLD_DEEPBIND (deepbind_prog.c): it
 * allocates in one function and frees in another, blocks go both ways
 * between it and the program, and some calls go through function
 * pointers taken at load (R_X86_64_64 relocations: one in RELRO, one in
 * writable data). Its constructor allocates, inside dlopen. It opens
 * another copy of itself with RTLD_DEEPBIND, found through its own
 * RUNPATH ($ORIGIN/inner), through its dlopen reference. Built with
 * HH_DEEP_TEXTREL, it also holds a pointer to malloc in read-only data
 * (a text relocation: the loader writes it with the page made writable,
 * then makes it read-only again), which heaphook must leave alone. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>

void *(*const deep_malloc_const)(size_t) = malloc;
void (*deep_free_data)(void *) = free;

static void *made_at_load;

__attribute__((constructor)) static void at_load(void) { made_at_load = malloc(100); }

void *deep_alloc(size_t n) { return malloc(n); }
void deep_free(void *p) { free(p); }
void *deep_realloc(void *p, size_t n) { return realloc(p, n); }
void *deep_alloc_by_pointer(size_t n) { return deep_malloc_const(n); }
void deep_free_by_pointer(void *p) { deep_free_data(p); }
#ifdef HH_DEEP_TEXTREL
__asm__(
    ".section .rodata\n"
    ".p2align 3\n"
    "deep_textrel_ptr: .quad malloc\n"
    ".text\n");
extern void *(*const deep_textrel_ptr)(size_t);
void *deep_alloc_by_textrel(size_t n) { return deep_textrel_ptr(n); }
#endif
void *deep_made_at_load(void) { return made_at_load; }
void deep_free_made_at_load(void) { free(made_at_load); }
/* (not a tail call: glibc must see this library as the caller) */
void *deep_open_inner(void) {
  void *h = dlopen("libhh_deep_inner.so", RTLD_LAZY | RTLD_DEEPBIND);
  __asm__ volatile("" ::: "memory");
  return h;
}
