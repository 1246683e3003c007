/* A library for small_stack to dlopen: nothing in it but a function, so
 * that loading it is the dynamic linker's work and the tracer's, no
 * constructor's. */
int hh_small_stack_lib(void);
int hh_small_stack_lib(void) { return 1; }
