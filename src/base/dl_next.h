/* The next definition of a symbol, past any other heaphook library.
 *
 * Two heaphook libraries may be preloaded together (libpreloaded_tlsf.so
 * with libpreloaded_heaptrack.so): the first serves every allocation and
 * the second does nothing (hook/entry.c). What comes after the first
 * (RTLD_NEXT) is then the second's malloc family and operator new, where
 * the first wants what comes after every heaphook library: the program's
 * own allocator, glibc's malloc, the C++ runtime's operators. */
#ifndef HH_BASE_DL_NEXT_H
#define HH_BASE_DL_NEXT_H

/* The definition of name that dlsym(RTLD_NEXT, name) finds from this
 * library, or, where that is in another heaphook library (one that
 * defines hh_allocator_of itself), the first definition in the objects
 * loaded after it (their load order is the global search order for the
 * objects loaded at start-up). NULL when there is none; no dlerror()
 * left behind. Calls dlopen: not from inside malloc, nor from a
 * dl_iterate_phdr callback. */
void *hh__dlsym_next(const char *name);

#endif
