/* Runs late_dtor_lib.c's function, which keeps a block of 1000 bytes until
 * the library's destructor frees it (trace.late_destructors): every block
 * of the program is freed by the time the process ends. With an argument,
 * it ends with _exit instead, which runs no destructor: then that block is
 * still live when the trace ends. With LATE_DTOR_MODE=exit the program's
 * own destructor, which the loader runs before heaphook's and the
 * library's, ends the process with exit(3) (trace.exit_in_destructor):
 * glibc then runs the exit handlers not yet run and no other destructor. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void late_dtor_use(void);

__attribute__((destructor)) static void main_fini(void) {
  const char *mode = getenv("LATE_DTOR_MODE");
  if (mode != NULL && strcmp(mode, "exit") == 0) exit(3);
}

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
