/* Fork and quick_exit handlers that stay registered until the process ends.
 *
 * pthread_atfork and at_quick_exit tie a handler to the library that
 * registers it (its __dso_handle): at exit glibc's __cxa_finalize for that
 * library removes them, right after the library's destructors. heaphook's
 * recorders run on past its own destructor, through those of the libraries
 * the program links (src/hook/entry.c); a fork or a quick_exit there found
 * their handlers gone (a forked child wrote into its parent's trace; a
 * quick_exit left the trace with no end: trace.late_destructors). These
 * register with no library: only for code in a library that is never
 * unloaded (one the process's malloc is in: preloaded, or linked at start-
 * up), or in a program. */
#ifndef HH_BASE_HANDLERS_H
#define HH_BASE_HANDLERS_H

/* pthread_atfork's arguments and result. */
int hh__atfork(void (*prepare)(void), void (*parent)(void), void (*child)(void));

/* at_quick_exit's arguments and result. */
int hh__at_quick_exit(void (*fn)(void));

#endif
