/* Writes an HTML report from a made-up analysis (no trace, no analyzer):
 *   html_fake OUT.html [SITE_CAP]
 * Its names are hostile: markup, "</script>", "<!--", quotes, invalid UTF-8,
 * U+2028; the browser test checks they show as text and break nothing. It
 * also has more sites than the cap given, for the "capped" note, a timeline,
 * RSS, markers, threads, a histogram and peak blocks in two regions. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "html_page.h"

#define EVIL "</script><script>window.pwned=1</script><!-- <b>&amp;'\"x"
#define NSITES 40

static hh_frame frames[] = {
    {.ip = 0x401000, .function = "main", .file = "/src/fake.c", .line = 10, .module = "/usr/bin/fake"},
    {.ip = 0x401100,
     .function = "leaky_function",
     .file = "/src/fake.c",
     .line = 20,
     .module = "/usr/bin/fake"},
    {.ip = 0x401200, .function = EVIL, .file = "/src/<evil>.c", .line = 30, .module = "/usr/bin/fake"},
    {.ip = 0x401300,
     .function = "caf\xc3\xa9_\xff\xfe_\xe2\x80\xa8_end",
     .file = NULL,
     .line = 0,
     .module = "/lib/x.so"},
    {.ip = 0x7f0000001234,
     .function = NULL,
     .file = NULL,
     .line = 0,
     .module = "/lib/libunknown.so",
     .module_offset = 0x1234},
    {.ip = 0xdead, .function = NULL, .file = NULL, .line = 0, .module = NULL},
    {.ip = 0x401400,
     .function = "std::vector<int, std::allocator<int> >::push_back(int&&)",
     .file = "/usr/include/c++/12/bits/stl_vector.h",
     .line = 1294,
     .module = "/usr/bin/fake",
     .inlined = true},
    {.ip = 0x401500, .function = "churner", .file = "/src/fake.c", .line = 40, .module = "/usr/bin/fake"},
};

static size_t fake_stack(void *arg, uint64_t stack, const hh_frame **out, size_t max) {
  (void)arg;
  const hh_frame *f[8];
  size_t n = 0;
  switch (stack % 6) {
    case 1:
      f[n++] = &frames[1];
      break; /* leaky_function <- main */
    case 2:
      f[n++] = &frames[2];
      f[n++] = &frames[6];
      break; /* EVIL <- push_back <- main */
    case 3:
      f[n++] = &frames[3];
      f[n++] = &frames[4];
      break;
    case 4:
      f[n++] = &frames[5];
      break;
    case 5:
      f[n++] = &frames[7];
      break;
    default:
      f[n++] = &frames[7];
      f[n++] = &frames[1];
      break;
  }
  f[n++] = &frames[0];
  for (size_t i = 0; i < n && i < max; i++) out[i] = f[i];
  return n < max ? n : max;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fputs("usage: html_fake OUT.html [SITE_CAP]\n", stderr);
    return 2;
  }
  static hh_site sites[NSITES];
  for (int i = 0; i < NSITES; i++) {
    uint64_t k = (uint64_t)i + 1;
    sites[i] = (hh_site){.stack = k,
                         .allocations = 10 * k,
                         .bytes = 1000 * k,
                         .temporary = k % 5 == 0 ? 4 * k : 0,
                         .peak_bytes = 100 * k,
                         .peak_blocks = k,
                         .leaked_bytes = k % 6 == 1 ? 333 * k : 0,
                         .leaked_blocks = k % 6 == 1 ? 1 : 0};
  }
  sites[NSITES - 1].stack = 0; /* no stack recorded */
  static hh_point timeline[] = {
      {1000000, 4096}, {2000000, 8192}, {3000000, 82000}, {4000000, 12000}, {5000000, 6000}};
  static hh_rss_point rss[] = {{0, 1 << 20}, {2500000, 2 << 20}, {5000000, 3 << 20}};
  static hh_marker_at markers[] = {{1500000, "phase <1>"}, {3500000, EVIL}};
  static hh_thread_stats threads[] = {
      {.index = 1,
       .tid = 4242,
       .name = "main",
       .allocations = 300,
       .frees = 200,
       .bytes = 50000,
       .peak_bytes = 60000,
       .temporary = 12,
       .leaked_bytes = 12000,
       .leaked_blocks = 5},
      {.index = 2,
       .tid = 4243,
       .name = EVIL,
       .allocations = 20,
       .frees = 20,
       .bytes = 2000,
       .peak_bytes = 22000,
       .leaked_bytes = 345,
       .leaked_blocks = 2},
  };
  static hh_live_block blocks[200];
  size_t nb = 0;
  for (int i = 0; i < 150; i++)
    blocks[nb++] = (hh_live_block){0x555555560000ull + (uint64_t)i * 96 * (1 + i % 3), 48 + i % 40};
  for (int i = 0; i < 3; i++)
    blocks[nb++] = (hh_live_block){0x7f1234000000ull + (uint64_t)i * 0x30000, 0x21000};
  hh_analysis a = {
      .status = HH_READ_CUT_SHORT,
      .status_message = "trace cut short after 3 chunks <b>",
      .duration_ns = 5000000,
      .allocations = 8200,
      .frees = 8000,
      .reallocs = 7,
      .bytes_allocated = 820000,
      .temporary = 4242,
      .temporary_known = true,
      .peak_bytes = 82000,
      .peak_blocks = 153,
      .peak_time_ns = 3000000,
      .leaked_bytes = 12345,
      .leaked_blocks = 7,
      .events = 16207,
      .unknown_frees = 3,
      .late_events = 2,
      .peak_rss_bytes = 3 << 20,
      .nsites = NSITES,
      .sites = sites,
      .nthreads = 2,
      .threads = threads,
      .nmarkers = 2,
      .markers = markers,
      .npoints = 5,
      .timeline = timeline,
      .nrss = 3,
      .rss = rss,
      .npeak_blocks = nb,
      .peak_block_list = blocks,
  };
  if (argc > 3 && strcmp(argv[3], "one") == 0) { /* html_fake OUT CAP one: counts of one */
    a.peak_bytes = a.leaked_bytes = a.leaked_blocks = 1;
  }
  for (int i = 0; i < HH_HISTOGRAM_BUCKETS; i++)
    if (i >= 3 && i <= 17) {
      a.histogram.count[i] = (uint64_t)(i * 37 % 101);
      a.histogram.bytes[i] = a.histogram.count[i] << i;
    }
  hh_html_input in = {.a = &a,
                      .trace_name = "fake <trace>.hhtrace",
                      .command = "./fake --name '</script>'",
                      .stack = fake_stack,
                      .site_cap = argc > 2 ? (size_t)atoi(argv[2]) : 0};
  FILE *out = fopen(argv[1], "w");
  if (!out) {
    perror(argv[1]);
    return 1;
  }
  if (hh_html_write(out, &in) != 0) {
    perror("hh_html_write");
    return 1;
  }
  return fclose(out) == 0 ? 0 : 1;
}
