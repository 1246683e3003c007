/* The heap-over-time chart (render.h): one drawing with cairo, rendered to
 * an SVG, PDF or PNG surface. Heap in use (the analysis's timeline: the
 * largest value in each time bucket, so the peak shows) as a filled line,
 * RSS as a second line, markers as labelled vertical lines, the peak as a
 * dot with its value; bytes in IEC units against seconds. */
#include <cairo-pdf.h>
#include <cairo-svg.h>
#include <cairo.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/duration.h"
#include "base/size.h"
#include "escape.h"
#include "render.h"

enum { WIDTH = 1000, HEIGHT = 560 };
static const double LEFT = 90, RIGHT = 30, RIGHT_AXIS = 90, TOP = 80, BOTTOM = 56;

int hh_chart_format_of(const char *path, hh_chart_format *out) {
  const char *dot = strrchr(path, '.');
  if (!dot || strchr(dot, '/')) return -1;
  if (strcasecmp(dot, ".svg") == 0)
    *out = HH_CHART_SVG;
  else if (strcasecmp(dot, ".pdf") == 0)
    *out = HH_CHART_PDF;
  else if (strcasecmp(dot, ".png") == 0)
    *out = HH_CHART_PNG;
  else
    return -1;
  return 0;
}

/* The smallest of 1, 2, 5 times a power of ten that is >= x. */
static double nice_step(double x) {
  if (x <= 0) return 1;
  double p = pow(10, floor(log10(x)));
  double m = x / p;
  return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p;
}

/* "%g" without float noise */
static void fmt_number(char *buf, size_t size, double v) {
  snprintf(buf, size, "%.6g", fabs(v) < 1e-12 ? 0.0 : v);
}

typedef struct plot {
  cairo_t *cr;
  double x0, y0, w, h; /* the plot area, y0 its top */
  double tmax_s, ymax;
  double rss_max; /* > 0: RSS has its own axis on the right (it dwarfs the heap) */
} plot;

static double px(const plot *p, double t_s) { return p->x0 + t_s / p->tmax_s * p->w; }
static double py(const plot *p, double bytes) { return p->y0 + p->h - bytes / p->ymax * p->h; }
static double py_rss(const plot *p, double bytes) {
  return p->rss_max > 0 ? p->y0 + p->h - bytes / p->rss_max * p->h : py(p, bytes);
}

/* cairo takes UTF-8 only: other text put the chart in an error state, and
 * no chart was written (a program's Latin-1 argument in the title, or
 * marker). */
static void text_at(cairo_t *cr, double x, double y, const char *text, double align_x, double align_y) {
  char buf[512];
  const char *s = hh_utf8_safe(text, buf, sizeof buf);
  cairo_text_extents_t e;
  cairo_text_extents(cr, s, &e);
  cairo_move_to(cr, x - e.width * align_x - e.x_bearing, y + e.height * align_y - (e.height + e.y_bearing));
  cairo_show_text(cr, s);
}

/* Ticks and labels of a bytes axis from 0 to max: in the largest IEC unit
 * that keeps values >= 1. right: labels on the right side, no grid. */
static void bytes_axis(plot *p, double max, bool right) {
  cairo_t *cr = p->cr;
  static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int k = 0;
  while (k < 4 && max / pow(1024, k + 1) >= 1) k++;
  double unit = pow(1024, k);
  double step = nice_step(max / unit / 6) * unit;
  if (k == 0 && step < 1) step = 1;
  char label[64], num[32];
  for (double v = 0; v <= max * (1 + 1e-9); v += step) {
    double y = p->y0 + p->h - v / max * p->h;
    if (!right) {
      cairo_set_source_rgb(cr, 0.88, 0.88, 0.88);
      cairo_set_line_width(cr, 0.8);
      cairo_move_to(cr, p->x0, y);
      cairo_line_to(cr, p->x0 + p->w, y);
      cairo_stroke(cr);
    }
    fmt_number(num, sizeof num, v / unit);
    if (v == 0)
      snprintf(label, sizeof label, "0");
    else
      snprintf(label, sizeof label, "%s %s", num, units[k]);
    cairo_set_source_rgb(cr, 0.2, 0.2, 0.2);
    if (right) {
      cairo_set_source_rgb(cr, 0.70, 0.38, 0.02);
      text_at(cr, p->x0 + p->w + 6, y, label, 0, 0.5);
    } else {
      text_at(cr, p->x0 - 6, y, label, 1, 0.5);
    }
  }
}

static void axes(plot *p) {
  cairo_t *cr = p->cr;
  cairo_set_font_size(cr, 11);
  bytes_axis(p, p->ymax, false);
  if (p->rss_max > 0) bytes_axis(p, p->rss_max, true);
  char label[64];
  /* x: time in the unit that keeps the run's length at 1 or more (in
   * seconds a short run's ticks read "5e-05", "0.00015") */
  double scale = p->tmax_s >= 1 ? 1 : p->tmax_s >= 1e-3 ? 1e3 : 1e6;
  const char *title = scale == 1     ? "time (seconds)"
                      : scale == 1e3 ? "time (milliseconds)"
                                     : "time (microseconds)";
  double tstep = nice_step(p->tmax_s / 8);
  for (double t = 0; t <= p->tmax_s * (1 + 1e-9); t += tstep) {
    double x = px(p, t);
    cairo_set_source_rgb(cr, 0.88, 0.88, 0.88);
    cairo_move_to(cr, x, p->y0);
    cairo_line_to(cr, x, p->y0 + p->h);
    cairo_stroke(cr);
    fmt_number(label, sizeof label, t * scale);
    cairo_set_source_rgb(cr, 0.2, 0.2, 0.2);
    text_at(cr, x, p->y0 + p->h + 6, label, 0.5, 0);
  }
  cairo_set_source_rgb(cr, 0.3, 0.3, 0.3);
  cairo_set_line_width(cr, 1);
  cairo_rectangle(cr, p->x0, p->y0, p->w, p->h);
  cairo_stroke(cr);
  cairo_set_font_size(cr, 12);
  text_at(cr, p->x0 + p->w / 2, p->y0 + p->h + 26, title, 0.5, 0);
  cairo_save(cr);
  cairo_translate(cr, 18, p->y0 + p->h / 2);
  cairo_rotate(cr, -M_PI / 2);
  text_at(cr, 0, 0, p->rss_max > 0 ? "heap in use (bytes)" : "bytes", 0.5, 0.5);
  cairo_restore(cr);
  if (p->rss_max > 0) {
    cairo_save(cr);
    cairo_translate(cr, WIDTH - 14, p->y0 + p->h / 2);
    cairo_rotate(cr, M_PI / 2);
    cairo_set_source_rgb(cr, 0.70, 0.38, 0.02);
    text_at(cr, 0, 0, "RSS (bytes)", 0.5, 0.5);
    cairo_restore(cr);
  }
}

/* One row above the plot area, centred: a swatch and a name per series. */
static void legend(plot *p, const hh_analysis *a) {
  cairo_t *cr = p->cr;
  struct item {
    const char *name;
    double r, g, b;
    bool dashed, dot;
  } items[4];
  int n = 0;
  items[n++] = (struct item){"heap in use", 0.12, 0.40, 0.75, false, false};
  if (a->nrss)
    items[n++] = (struct item){p->rss_max > 0 ? "RSS (right axis)" : "RSS", 0.90, 0.50, 0.05, false, false};
  if (a->nmarkers) items[n++] = (struct item){"markers", 0.45, 0.45, 0.45, true, false};
  items[n++] = (struct item){"peak", 0.80, 0.10, 0.10, false, true};
  cairo_set_font_size(cr, 11);
  double widths[4], total = 0;
  for (int i = 0; i < n; i++) {
    cairo_text_extents_t e;
    cairo_text_extents(cr, items[i].name, &e);
    widths[i] = 30 + e.x_advance + 18;
    total += widths[i];
  }
  double x = (WIDTH - total) / 2, yy = p->y0 - 14;
  for (int i = 0; i < n; i++) {
    cairo_set_source_rgb(cr, items[i].r, items[i].g, items[i].b);
    if (items[i].dot) {
      cairo_arc(cr, x + 12, yy, 3.5, 0, 2 * M_PI);
      cairo_fill(cr);
    } else {
      double dash[] = {4, 3};
      cairo_set_dash(cr, dash, items[i].dashed ? 2 : 0, 0);
      cairo_set_line_width(cr, 2);
      cairo_move_to(cr, x, yy);
      cairo_line_to(cr, x + 24, yy);
      cairo_stroke(cr);
      cairo_set_dash(cr, NULL, 0, 0);
    }
    cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
    text_at(cr, x + 30, yy, items[i].name, 0, 0.5);
    x += widths[i];
  }
}

/* text (valid UTF-8, with room for 3 more bytes) cut to fit the chart's
 * width in the current font, "..." at its end when cut (cut at characters'
 * ends: a cut through one made the text invalid). */
static void fit_text(cairo_t *cr, char *text) {
  cairo_text_extents_t e;
  size_t keep = strlen(text);
  cairo_text_extents(cr, text, &e);
  while (e.width > WIDTH - 40 && keep > 4) {
    keep = hh_utf8_cut(text, keep - 1);
    memcpy(text + keep, "...", 4);
    cairo_text_extents(cr, text, &e);
  }
}

static void draw(cairo_t *cr, const hh_analysis *a, const char *title) {
  cairo_set_source_rgb(cr, 1, 1, 1);
  cairo_paint(cr);
  cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);

  plot p = {.cr = cr, .x0 = LEFT, .y0 = TOP, .w = WIDTH - LEFT - RIGHT, .h = HEIGHT - TOP - BOTTOM};
  uint64_t tmax = a->duration_ns, ymax = a->peak_bytes, rss_max = 0;
  for (size_t i = 0; i < a->npoints; i++) {
    if (a->timeline[i].time_ns > tmax) tmax = a->timeline[i].time_ns;
    if (a->timeline[i].heap_bytes > ymax) ymax = a->timeline[i].heap_bytes;
  }
  for (size_t i = 0; i < a->nrss; i++) {
    if (a->rss[i].time_ns > tmax) tmax = a->rss[i].time_ns;
    if (a->rss[i].rss_bytes > rss_max) rss_max = a->rss[i].rss_bytes;
  }
  /* RSS on the heap's axis unless it would flatten the heap's line */
  if (rss_max > 3 * ymax) {
    p.rss_max = (double)rss_max * 1.12;
    p.w = WIDTH - LEFT - RIGHT_AXIS;
  } else if (rss_max > ymax) {
    ymax = rss_max;
  }
  for (size_t i = 0; i < a->nmarkers; i++)
    if (a->markers[i].time_ns > tmax) tmax = a->markers[i].time_ns;
  p.tmax_s = tmax ? (double)tmax / 1e9 : 1e-6;
  p.ymax = ymax ? (double)ymax * 1.12 : 1024;

  /* title: the program's command line, cut to fit */
  cairo_set_source_rgb(cr, 0, 0, 0);
  cairo_set_font_size(cr, 15);
  char head[200];
  char safe_title[180]; /* (valid UTF-8 that fits in head whole) */
  snprintf(head, sizeof head, "heap in use: %s", hh_utf8_safe(title, safe_title, sizeof safe_title));
  fit_text(cr, head);
  cairo_text_extents_t e;
  text_at(cr, WIDTH / 2.0, 22, head, 0.5, 0.5);
  char peak[64], leaked[64], when[32], sub[240];
  hh__format_size(peak, sizeof peak, a->peak_bytes);
  hh__format_size(leaked, sizeof leaked, a->leaked_bytes);
  /* as the report and the HTML page write a time (it was "0.000664234 s") */
  hh__format_duration(when, sizeof when, a->peak_time_ns);
  bool whole = a->status == HH_READ_OK;
  /* (a process that exec'd another program did not exit either: as run
   * says it) */
  bool exec = a->reader && hh_reader_exec(a->reader);
  snprintf(sub, sizeof sub, "peak %s at %s; %s %s%s", peak, when, leaked,
           !whole ? "still in use where the trace ends"
           : exec ? "still allocated at the exec"
                  : "leaked at exit",
           a->sampled ? " (estimates: a sampled trace)" : "");
  cairo_set_font_size(cr, 11);
  cairo_set_source_rgb(cr, 0.3, 0.3, 0.3);
  text_at(cr, WIDTH / 2.0, 44, sub, 0.5, 0.5);
  /* A trace cut short or damaged (or with no end yet) says so on the chart
   * itself, which is shown without the command's message. */
  if (!whole) {
    char msg[300], safe[300], note[304]; /* (room for fit_text's "...") */
    snprintf(note, sizeof note, "%s", hh_utf8_safe(hh_trace_note(a, msg, sizeof msg), safe, sizeof safe));
    cairo_set_source_rgb(cr, 0.75, 0.05, 0.05);
    fit_text(cr, note);
    text_at(cr, WIDTH / 2.0, HEIGHT - 10, note, 0.5, 0.5);
  }

  axes(&p);
  cairo_save(cr);
  cairo_rectangle(cr, p.x0, p.y0, p.w, p.h);
  cairo_clip(cr);

  /* heap in use: filled, as steps from 0 at the start */
  if (a->npoints) {
    cairo_move_to(cr, px(&p, 0), py(&p, 0));
    double last = 0;
    for (size_t i = 0; i < a->npoints; i++) {
      double x = px(&p, (double)a->timeline[i].time_ns / 1e9);
      cairo_line_to(cr, x, py(&p, last));
      last = (double)a->timeline[i].heap_bytes;
      cairo_line_to(cr, x, py(&p, last));
    }
    cairo_line_to(cr, px(&p, p.tmax_s), py(&p, last));
    cairo_path_t *line = cairo_copy_path(cr);
    cairo_line_to(cr, px(&p, p.tmax_s), py(&p, 0));
    cairo_close_path(cr);
    cairo_set_source_rgba(cr, 0.12, 0.40, 0.75, 0.18);
    cairo_fill(cr);
    cairo_append_path(cr, line);
    cairo_path_destroy(line);
    cairo_set_source_rgb(cr, 0.12, 0.40, 0.75);
    cairo_set_line_width(cr, 1.6);
    cairo_set_line_join(cr, CAIRO_LINE_JOIN_ROUND);
    cairo_stroke(cr);
  }
  /* RSS */
  if (a->nrss) {
    for (size_t i = 0; i < a->nrss; i++) {
      double x = px(&p, (double)a->rss[i].time_ns / 1e9), y = py_rss(&p, (double)a->rss[i].rss_bytes);
      if (i == 0)
        cairo_move_to(cr, x, y);
      else
        cairo_line_to(cr, x, y);
    }
    cairo_set_source_rgb(cr, 0.90, 0.50, 0.05);
    cairo_set_line_width(cr, 1.4);
    cairo_stroke(cr);
  }
  /* markers: one per pixel column, the first in it (the analysis has them
   * in time order). Those within a pixel of the one drawn covered it, their
   * labels on top of its; a trace of millions of markers (a small crafted
   * file has 4M per 16 MiB chunk) drew each, and cairo held them all:
   * gigabytes, then "cannot draw the chart: out of memory". */
  cairo_set_font_size(cr, 10);
  double drawn = -1;
  for (size_t i = 0; i < a->nmarkers; i++) {
    double x = px(&p, (double)a->markers[i].time_ns / 1e9);
    if (drawn >= 0 && fabs(x - drawn) < 1) continue;
    drawn = x;
    double dash[] = {4, 3};
    cairo_set_dash(cr, dash, 2, 0);
    cairo_set_source_rgb(cr, 0.45, 0.45, 0.45);
    cairo_set_line_width(cr, 1);
    cairo_move_to(cr, x, p.y0);
    cairo_line_to(cr, x, p.y0 + p.h);
    cairo_stroke(cr);
    cairo_set_dash(cr, NULL, 0, 0);
    cairo_save(cr);
    cairo_translate(cr, x + 3, p.y0 + 4);
    cairo_rotate(cr, M_PI / 2);
    cairo_set_source_rgb(cr, 0.25, 0.25, 0.25);
    text_at(cr, 0, 0, a->markers[i].name ? a->markers[i].name : "?", 0, 0);
    cairo_restore(cr);
  }
  cairo_restore(cr);

  /* the peak */
  double x = px(&p, (double)a->peak_time_ns / 1e9), y = py(&p, (double)a->peak_bytes);
  cairo_set_source_rgb(cr, 0.80, 0.10, 0.10);
  cairo_arc(cr, x, y, 4, 0, 2 * M_PI);
  cairo_fill(cr);
  snprintf(sub, sizeof sub, "peak %s (%llu byte%s)", peak, (unsigned long long)a->peak_bytes,
           a->peak_bytes == 1 ? "" : "s");
  cairo_set_font_size(cr, 11);
  cairo_text_extents(cr, sub, &e);
  bool left = x + 8 + e.width > p.x0 + p.w;
  text_at(cr, left ? x - 8 : x + 8, y - 8, sub, left ? 1 : 0, 0.5);

  legend(&p, a);
}

/* Where cairo's surfaces write: the file, with the first write error. */
typedef struct sink {
  FILE *f;
  int err;
} sink;

static cairo_status_t put(void *closure, const unsigned char *data, unsigned int length) {
  sink *k = closure;
  if (k->err == 0 && fwrite(data, 1, length, k->f) != length) k->err = errno ? errno : EIO;
  return k->err ? CAIRO_STATUS_WRITE_ERROR : CAIRO_STATUS_SUCCESS;
}

int hh_chart_write(const char *path, hh_chart_format format, const hh_analysis *a, const char *title,
                   char *err, size_t err_size) {
  /* Through a stream of ours, not cairo's file surfaces: the PDF one
   * reported success on a full disk, and their messages said "error while
   * writing to output stream" for any reason. */
  sink k = {fopen(path, "wb"), 0};
  if (!k.f) {
    snprintf(err, err_size, "cannot write %s: %s", path, strerror(errno));
    return -1;
  }
  cairo_surface_t *s;
  switch (format) {
    case HH_CHART_SVG:
      s = cairo_svg_surface_create_for_stream(put, &k, WIDTH, HEIGHT);
      break;
    case HH_CHART_PDF:
      s = cairo_pdf_surface_create_for_stream(put, &k, WIDTH, HEIGHT);
      break;
    default:
      s = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, WIDTH, HEIGHT);
      break;
  }
  cairo_status_t st = cairo_surface_status(s);
  if (st == CAIRO_STATUS_SUCCESS) {
    cairo_t *cr = cairo_create(s);
    draw(cr, a, title);
    st = cairo_status(cr);
    cairo_destroy(cr);
  }
  if (st == CAIRO_STATUS_SUCCESS && format == HH_CHART_PNG)
    st = cairo_surface_write_to_png_stream(s, put, &k);
  cairo_surface_finish(s);
  if (st == CAIRO_STATUS_SUCCESS) st = cairo_surface_status(s);
  cairo_surface_destroy(s);
  if (fflush(k.f) != 0 && k.err == 0) k.err = errno;
  if (fclose(k.f) != 0 && k.err == 0) k.err = errno;
  if (k.err == 0 && st == CAIRO_STATUS_SUCCESS) return 0;
  if (k.err)
    snprintf(err, err_size, "cannot write %s: %s", path, strerror(k.err));
  else
    snprintf(err, err_size, "cannot draw the chart in %s: %s", path, cairo_status_to_string(st));
  /* no half-written chart left; never a device or pipe (-o /dev/full) */
  struct stat st_path;
  if (stat(path, &st_path) == 0 && S_ISREG(st_path.st_mode)) unlink(path);
  return -1;
}
