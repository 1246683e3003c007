/* Runs late_dtor_lib.c's function, which keeps a block of 1000 bytes until
 * the library's destructor frees it (trace.late_destructors): every block
 * of the program is freed by the time the process ends. With an argument,
 * it ends with _exit instead, which runs no destructor: then that block is
 * still live when the trace ends. */
#include <stdlib.h>
#include <unistd.h>

void late_dtor_use(void);

int main(int argc, char **argv) {
  (void)argv;
  char *p = malloc(5);
  if (p == NULL) return 1;
  p[0] = 0;
  free(p);
  late_dtor_use();
  if (write(1, "used\n", 5) != 5) return 1;
  if (argc > 1) _exit(0);
  return 0;
}
