/* SPDX-License-Identifier: MIT */
/* SVG primitives for the HTML report: charts with axes, grid and labels, lines, polylines of a
 * time series, drop marks, bars and legend swatches. Every element carries a class, so that a
 * test can find it in the rendered page. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "qualify/svg.h"

#define W  SVG_W
#define H  SVG_H
#define ML SVG_ML
#define MR SVG_MR
#define MT SVG_MT
#define MB SVG_MB

double svg_x(const struct svg_chart *c, double x)
{
	return ML + (x - c->x0) / (c->x1 - c->x0) * (W - ML - MR);
}

double svg_y(const struct svg_chart *c, double y)
{
	return H - MB - (y - c->y0) / (c->y1 - c->y0) * (H - MT - MB);
}

void svg_esc(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '<':
			fputs("&lt;", f);
			break;
		case '>':
			fputs("&gt;", f);
			break;
		case '&':
			fputs("&amp;", f);
			break;
		case '"':
			fputs("&quot;", f);
			break;
		default:
			fputc(*s, f);
		}
	}
}

static double nice_step(double range)
{
	double raw = range / 5, p = pow(10, floor(log10(raw > 0 ? raw : 1)));
	double m = raw / p;
	return (m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10) * p;
}

double svg_nice_top(double v)
{
	double s = nice_step(v > 0 ? v : 1);
	return ceil((v > 0 ? v : 1) / s) * s;
}

static void grid(const struct svg_chart *c, bool int_y)
{
	double sx = nice_step(c->x1 - c->x0), sy = nice_step(c->y1 - c->y0);

	if (int_y && sy < 1)
		sy = 1;
	for (double x = ceil(c->x0 / sx) * sx; x <= c->x1 + sx * 1e-9; x += sx)
		fprintf(c->f,
			"<line class=\"grid\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\"/>"
			"<text class=\"tick\" x=\"%.1f\" y=\"%d\" "
			"text-anchor=\"middle\">%g</text>\n",
			svg_x(c, x), MT, svg_x(c, x), H - MB, svg_x(c, x), H - MB + 16, x);
	for (double y = ceil(c->y0 / sy) * sy; y <= c->y1 + sy * 1e-9; y += sy)
		fprintf(c->f,
			"<line class=\"grid\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"/>"
			"<text class=\"tick\" x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%g</text>\n",
			ML, svg_y(c, y), W - MR, svg_y(c, y), ML - 6, svg_y(c, y) + 4, y);
}

void svg_begin(struct svg_chart *c, FILE *f, const char *id, const char *title, const char *xlabel,
	       const char *ylabel, double x0, double x1, double y0, double y1, bool int_y)
{
	c->f = f;
	c->x0 = x0;
	c->x1 = x1 > x0 ? x1 : x0 + 1;
	c->y0 = y0;
	c->y1 = y1 > y0 ? y1 : y0 + 1;
	fprintf(f, "<figure><figcaption>");
	svg_esc(f, title);
	fprintf(f,
		"</figcaption>\n<svg id=\"%s\" class=\"plot\" xmlns=\"http://www.w3.org/2000/svg\" "
		"viewBox=\"0 0 %d %d\" width=\"%d\" height=\"%d\" role=\"img\">\n",
		id, W, H, W, H);
	fprintf(f, "<rect class=\"frame\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\"/>\n", ML, MT,
		W - ML - MR, H - MT - MB);
	grid(c, int_y);
	fprintf(f, "<text class=\"label\" x=\"%d\" y=\"%d\" text-anchor=\"middle\">", (W + ML) / 2,
		H - 12);
	svg_esc(f, xlabel);
	fprintf(f,
		"</text><text class=\"label\" x=\"16\" y=\"%d\" text-anchor=\"middle\" "
		"transform=\"rotate(-90 16 %d)\">",
		(H - MB + MT) / 2, (H - MB + MT) / 2);
	svg_esc(f, ylabel);
	fprintf(f, "</text>\n");
}

void svg_end(struct svg_chart *c, const char *legend_html)
{
	fprintf(c->f, "</svg>\n<p class=\"legend\">%s</p></figure>\n", legend_html);
}

void svg_vline(const struct svg_chart *c, const char *cls, double x)
{
	fprintf(c->f, "<line class=\"%s\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\"/>\n", cls,
		svg_x(c, x), MT, svg_x(c, x), H - MB);
}

void svg_hline(const struct svg_chart *c, const char *cls, double x0, double x1, double y)
{
	fprintf(c->f, "<line class=\"%s\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", cls,
		svg_x(c, x0), svg_y(c, y), svg_x(c, x1), svg_y(c, y));
}

void svg_mark(const struct svg_chart *c, const char *cls, double x, double y, const char *text,
	      const char *detail)
{
	fprintf(c->f, "<circle class=\"%s\" cx=\"%.1f\" cy=\"%.1f\" r=\"6\"><title>%s", cls,
		svg_x(c, x), svg_y(c, y), text);
	svg_esc(c->f, detail);
	fprintf(c->f, "</title></circle>\n");
}

void svg_bar(const struct svg_chart *c, const char *cls, double x, double bw, double y,
	     const char *title)
{
	fprintf(c->f,
		"<rect class=\"%s\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\">"
		"<title>%s</title></rect>\n",
		cls, x, svg_y(c, y), bw, svg_y(c, 0) - svg_y(c, y), title);
}

void svg_xlabel(const struct svg_chart *c, double x, const char *text)
{
	fprintf(c->f, "<text class=\"barlabel\" x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">", x,
		H - MB + 32);
	svg_esc(c->f, text);
	fprintf(c->f, "</text>\n");
}

static double interval_mbps(const struct nvt_series *s, size_t i)
{
	double dt = (s->s[i].t_ns - s->s[i - 1].t_ns) / 1e9;
	return dt > 0 ? (s->s[i].bytes - s->s[i - 1].bytes) / dt / 1e6 : 0;
}

void svg_rate_line(const struct svg_chart *c, const char *cls, const struct nvt_series *s,
		   bool x_gb)
{
	if (s->n < 2)
		return;
	fprintf(c->f, "<polyline class=\"%s\" points=\"", cls);
	for (size_t i = 1; i < s->n; i++) {
		double r = interval_mbps(s, i);
		double x = x_gb ? s->s[i].bytes / 1e9 : s->s[i].t_ns / 1e9;
		fprintf(c->f, "%.1f,%.1f ", svg_x(c, x), svg_y(c, r > c->y1 ? c->y1 : r));
	}
	fprintf(c->f, "\"/>\n");
}

void svg_fill_line(const struct svg_chart *c, const char *cls, const struct nvt_series *s)
{
	if (s->n < 2 || !s->ring_chunks)
		return;
	fprintf(c->f, "<polyline class=\"%s\" points=\"", cls);
	for (size_t i = 0; i < s->n; i++)
		fprintf(c->f, "%.1f,%.1f ", svg_x(c, s->s[i].t_ns / 1e9),
			svg_y(c, 100.0 * s->s[i].ring_fill / s->ring_chunks));
	fprintf(c->f, "\"/>\n");
}

unsigned svg_drop_marks(const struct svg_chart *c, const struct nvt_series *s)
{
	unsigned n = 0;

	for (size_t i = 1; i < s->n; i++) {
		if (s->s[i].drops > s->s[i - 1].drops) {
			double x = svg_x(c, s->s[i].t_ns / 1e9);
			fprintf(c->f,
				"<line class=\"drop\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\">"
				"<title>%llu beats dropped by %.2f s</title></line>\n",
				x, MT, x, MT + 14, (unsigned long long)s->s[i].drops,
				s->s[i].t_ns / 1e9);
			n++;
		}
	}
	return n;
}

double svg_series_max_rate(const struct nvt_series *s)
{
	double m = 0;

	for (size_t i = 1; i < s->n; i++)
		if (interval_mbps(s, i) > m)
			m = interval_mbps(s, i);
	return m;
}

double svg_series_end_s(const struct nvt_series *s)
{
	return s->n ? s->s[s->n - 1].t_ns / 1e9 : 0;
}

void svg_swatch(char *buf, size_t cap, const char *color, const char *text)
{
	size_t n = strlen(buf);
	snprintf(buf + n, cap - n, "<span class=\"sw\" style=\"background:%s\"></span>%s", color,
		 text);
}
