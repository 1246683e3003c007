/* A program whose heap use is known, from named functions, for the render
 * tests (render_test.sh). No stdio (its buffers would be allocations).
 *   leaky:        3 x malloc(1000), never freed       -> leaked 3000 B
 *   peak_holder:  4 x malloc(2048), freed after the peak
 *   temporaries:  5 x (malloc(100), free) in a row    -> 5 temporary
 * The peak, 3000 + 8192 = 11192 B, is reached at peak_holder's last
 * allocation; markers "start" and "end" frame the work. */
#include <stdlib.h>

#include <heaphook/heaphook.h>

void *volatile keep[8];

__attribute__((noinline)) void leaky(void) {
  for (int i = 0; i < 3; i++) keep[i] = malloc(1000);
}

__attribute__((noinline)) void peak_holder(void) {
  for (int i = 0; i < 4; i++) keep[3 + i] = malloc(2048);
}

__attribute__((noinline)) void release(void) {
  for (int i = 0; i < 4; i++) free(keep[3 + i]);
}

__attribute__((noinline)) void temporaries(void) {
  for (int i = 0; i < 5; i++) {
    void *volatile p = malloc(100);
    free(p);
  }
}

int main(void) {
  HH_MARKER("start");
  leaky();
  peak_holder();
  release();
  temporaries();
  HH_MARKER("end");
  return 0;
}
