/* SPDX-License-Identifier: MIT */
/* SVG primitives for the HTML report: a chart with axes, grid and labels, lines, polylines of a
 * time series, drop marks, bars, colour swatches for legends, and HTML escaping. */
#ifndef NVT_QUALIFY_SVG_H
#define NVT_QUALIFY_SVG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "nvtape/bench.h"

#define SVG_W  760
#define SVG_H  300
#define SVG_ML 70
#define SVG_MR 20
#define SVG_MT 30
#define SVG_MB 50

struct svg_chart {
	FILE *f;
	double x0, x1, y0, y1;
};

/* Plot coordinates of data x and y. */
double svg_x(const struct svg_chart *c, double x);
double svg_y(const struct svg_chart *c, double y);
/* s with <, >, & and " escaped. */
void svg_esc(FILE *f, const char *s);
/* A round axis top at or above v. */
double svg_nice_top(double v);
/* <figure> with a caption and an <svg id=ID class="plot"> with frame, grid, ticks and labels
 * over [x0, x1] x [y0, y1]; integer y ticks when int_y. */
void svg_begin(struct svg_chart *c, FILE *f, const char *id, const char *title, const char *xlabel,
	       const char *ylabel, double x0, double x1, double y0, double y1, bool int_y);
/* Close the svg, the legend (HTML) below it, the figure. */
void svg_end(struct svg_chart *c, const char *legend_html);
void svg_vline(const struct svg_chart *c, const char *cls, double x);
void svg_hline(const struct svg_chart *c, const char *cls, double x0, double x1, double y);
/* A circle at (x, y) with a tooltip: text, then esc(detail). */
void svg_mark(const struct svg_chart *c, const char *cls, double x, double y, const char *text,
	      const char *detail);
/* A bar from 0 up to y, at plot x, bw wide, with a tooltip. */
void svg_bar(const struct svg_chart *c, const char *cls, double x, double bw, double y,
	     const char *title);
/* A label under the plot at plot x. */
void svg_xlabel(const struct svg_chart *c, double x, const char *text);
/* Per-interval MB/s of a series, as a polyline over seconds, or over GB moved (x_gb). */
void svg_rate_line(const struct svg_chart *c, const char *cls, const struct nvt_series *s,
		   bool x_gb);
/* Ring fill (% of the ring) over seconds. */
void svg_fill_line(const struct svg_chart *c, const char *cls, const struct nvt_series *s);
/* A red tick at every interval in which drops (underflows) grew; returns how many. */
unsigned svg_drop_marks(const struct svg_chart *c, const struct nvt_series *s);
double svg_series_max_rate(const struct nvt_series *s);
double svg_series_end_s(const struct nvt_series *s);
/* Append a coloured swatch and its text to the legend in buf. */
void svg_swatch(char *buf, size_t cap, const char *color, const char *text);

#endif
