/* SPDX-License-Identifier: MIT */
/* HTML report with inline SVG plots: the rate sweep (pass/fail per rate and run), throughput and
 * ring fill over time with drops marked, the cache cliff, read vs write per target. Every plot
 * is an <svg> with an id and classed elements, so that a test can find them in the rendered
 * page. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "nvtape/report.h"

#define W  760
#define H  300
#define ML 70
#define MR 20
#define MT 30
#define MB 50

struct chart {
	FILE *f;
	double x0, x1, y0, y1;
};

static double cx(const struct chart *c, double x)
{
	return ML + (x - c->x0) / (c->x1 - c->x0) * (W - ML - MR);
}

static double cy(const struct chart *c, double y)
{
	return H - MB - (y - c->y0) / (c->y1 - c->y0) * (H - MT - MB);
}

static void esc(FILE *f, const char *s)
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

static double nice_top(double v)
{
	double s = nice_step(v > 0 ? v : 1);
	return ceil((v > 0 ? v : 1) / s) * s;
}

static void chart_begin(struct chart *c, FILE *f, const char *id, const char *title,
			const char *xlabel, const char *ylabel, double x0, double x1, double y0,
			double y1)
{
	double sx, sy;

	c->f = f;
	c->x0 = x0;
	c->x1 = x1 > x0 ? x1 : x0 + 1;
	c->y0 = y0;
	c->y1 = y1 > y0 ? y1 : y0 + 1;
	fprintf(f, "<figure><figcaption>");
	esc(f, title);
	fprintf(f,
		"</figcaption>\n<svg id=\"%s\" class=\"plot\" xmlns=\"http://www.w3.org/2000/svg\" "
		"viewBox=\"0 0 %d %d\" width=\"%d\" height=\"%d\" role=\"img\">\n",
		id, W, H, W, H);
	fprintf(f, "<rect class=\"frame\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\"/>\n", ML, MT,
		W - ML - MR, H - MT - MB);
	sx = nice_step(c->x1 - c->x0);
	sy = nice_step(c->y1 - c->y0);
	if (!strcmp(id, "sweep") && sy < 1)
		sy = 1; /* run numbers */
	for (double x = ceil(c->x0 / sx) * sx; x <= c->x1 + sx * 1e-9; x += sx)
		fprintf(f,
			"<line class=\"grid\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\"/>"
			"<text class=\"tick\" x=\"%.1f\" y=\"%d\" "
			"text-anchor=\"middle\">%g</text>\n",
			cx(c, x), MT, cx(c, x), H - MB, cx(c, x), H - MB + 16, x);
	for (double y = ceil(c->y0 / sy) * sy; y <= c->y1 + sy * 1e-9; y += sy)
		fprintf(f,
			"<line class=\"grid\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"/>"
			"<text class=\"tick\" x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%g</text>\n",
			ML, cy(c, y), W - MR, cy(c, y), ML - 6, cy(c, y) + 4, y);
	fprintf(f, "<text class=\"label\" x=\"%d\" y=\"%d\" text-anchor=\"middle\">", (W + ML) / 2,
		H - 12);
	esc(f, xlabel);
	fprintf(f,
		"</text><text class=\"label\" x=\"16\" y=\"%d\" text-anchor=\"middle\" "
		"transform=\"rotate(-90 16 %d)\">",
		(H - MB + MT) / 2, (H - MB + MT) / 2);
	esc(f, ylabel);
	fprintf(f, "</text>\n");
}

static void chart_end(struct chart *c, const char *legend_html)
{
	fprintf(c->f, "</svg>\n<p class=\"legend\">%s</p></figure>\n", legend_html);
}

static void vline(const struct chart *c, const char *cls, double x)
{
	fprintf(c->f, "<line class=\"%s\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\"/>\n", cls,
		cx(c, x), MT, cx(c, x), H - MB);
}

static void hline(const struct chart *c, const char *cls, double x0, double x1, double y)
{
	fprintf(c->f, "<line class=\"%s\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", cls,
		cx(c, x0), cy(c, y), cx(c, x1), cy(c, y));
}

/* Per-interval MB/s of a series, as a polyline over seconds (x) or GB moved (x_gb). */
static void rate_line(const struct chart *c, const char *cls, const struct nvt_series *s, bool x_gb)
{
	if (s->n < 2)
		return;
	fprintf(c->f, "<polyline class=\"%s\" points=\"", cls);
	for (size_t i = 1; i < s->n; i++) {
		double dt = (s->s[i].t_ns - s->s[i - 1].t_ns) / 1e9;
		double r = dt > 0 ? (s->s[i].bytes - s->s[i - 1].bytes) / dt / 1e6 : 0;
		double x = x_gb ? s->s[i].bytes / 1e9 : s->s[i].t_ns / 1e9;
		fprintf(c->f, "%.1f,%.1f ", cx(c, x), cy(c, r > c->y1 ? c->y1 : r));
	}
	fprintf(c->f, "\"/>\n");
}

static void fill_line(const struct chart *c, const char *cls, const struct nvt_series *s)
{
	if (s->n < 2 || !s->ring_chunks)
		return;
	fprintf(c->f, "<polyline class=\"%s\" points=\"", cls);
	for (size_t i = 0; i < s->n; i++)
		fprintf(c->f, "%.1f,%.1f ", cx(c, s->s[i].t_ns / 1e9),
			cy(c, 100.0 * s->s[i].ring_fill / s->ring_chunks));
	fprintf(c->f, "\"/>\n");
}

/* A red tick at every interval in which drops (underflows) grew. */
static unsigned drop_marks(const struct chart *c, const struct nvt_series *s)
{
	unsigned n = 0;
	for (size_t i = 1; i < s->n; i++) {
		if (s->s[i].drops > s->s[i - 1].drops) {
			double x = cx(c, s->s[i].t_ns / 1e9);
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

static double series_max_rate(const struct nvt_series *s)
{
	double m = 0;
	for (size_t i = 1; i < s->n; i++) {
		double dt = (s->s[i].t_ns - s->s[i - 1].t_ns) / 1e9;
		double r = dt > 0 ? (s->s[i].bytes - s->s[i - 1].bytes) / dt / 1e6 : 0;
		if (r > m)
			m = r;
	}
	return m;
}

static double series_end_s(const struct nvt_series *s)
{
	return s->n ? s->s[s->n - 1].t_ns / 1e9 : 0;
}

static const char *css =
	"body{font-family:system-ui,sans-serif;margin:24px;color:#222;max-width:820px}"
	"h1{font-size:22px}h2{font-size:18px;margin-top:28px}"
	"table{border-collapse:collapse;font-size:13px;margin:8px 0}"
	"td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}"
	"th{background:#f2f2f2}td.l,th.l{text-align:left}"
	"figure{margin:16px 0}figcaption{font-weight:600;margin-bottom:4px}"
	".legend{font-size:12px;color:#555;margin:2px 0}"
	".warn{background:#fff3cd;border:1px solid #e0c36c;padding:6px 10px}"
	".ok{color:#1e7b34}.bad{color:#c0392b}"
	"svg .frame{fill:#fff;stroke:#999}svg .grid{stroke:#eee}"
	"svg .tick{font-size:11px;fill:#555}svg .label{font-size:12px;fill:#333}"
	"svg .pass{fill:#2a9d4b}svg .fail{fill:#d62828}"
	"svg .best{stroke:#2a9d4b;stroke-width:2}svg .unthrottled{stroke:#888;stroke-dasharray:5 4}"
	"svg .rate-max{stroke:#888;fill:none;stroke-width:1.5}"
	"svg .rate-pass{stroke:#2a9d4b;fill:none;stroke-width:1.5}"
	"svg .rate-fail{stroke:#d62828;fill:none;stroke-width:1.5}"
	"svg .ring-pass{stroke:#2a9d4b;fill:none;stroke-width:1.5}"
	"svg .ring-fail{stroke:#d62828;fill:none;stroke-width:1.5}"
	"svg .drop{stroke:#d62828;stroke-width:2}"
	"svg .burst{stroke:#1f77b4;stroke-dasharray:6 3;stroke-width:2}"
	"svg .sustained{stroke:#ff7f0e;stroke-dasharray:6 3;stroke-width:2}"
	"svg .cliff{stroke:#ff7f0e;stroke-width:2}"
	"svg .bar-write{fill:#1f77b4}svg .bar-read{fill:#ff7f0e}"
	"svg .barlabel{font-size:11px;fill:#222}"
	".sw{display:inline-block;width:12px;height:10px;margin:0 4px 0 10px}";

static void swatch(char *buf, size_t cap, const char *color, const char *text)
{
	size_t n = strlen(buf);
	snprintf(buf + n, cap - n, "<span class=\"sw\" style=\"background:%s\"></span>%s", color,
		 text);
}

static const struct nvt_bench_run *find_run(const struct nvt_bench_result *b, uint64_t rate,
					    bool pass)
{
	const struct nvt_bench_run *hit = NULL;
	for (size_t i = 0; i < b->nruns; i++)
		if (b->runs[i].rate_bps == rate && b->runs[i].pass == pass)
			hit = &b->runs[i]; /* the last one at that rate */
	return hit;
}

static void bench_section(FILE *f, const struct nvt_report *r)
{
	const struct nvt_bench_result *b = r->bench;
	const struct nvt_bench_opts *o = r->bench_opts;
	const bool play = o && o->mode == NVT_BENCH_PLAY;
	const char *what = play ? "playback" : "recording";
	const struct nvt_bench_run *bp = b->best_bps ? find_run(b, b->best_bps, true) : NULL;
	const struct nvt_bench_run *bf = b->fail_bps ? find_run(b, b->fail_bps, false) : NULL;
	const struct nvt_cliff *cl = &b->cliff;
	char legend[1024];
	struct chart c;
	double top = b->max.mbps, tmax;

	fprintf(f, "<h2>%s rate</h2>\n<table>\n", play ? "Playback" : "Recording");
	fprintf(f, "<tr><th class=\"l\">highest %s rate that passed %u of %u runs</th><td>", what,
		o ? o->runs : 0, o ? o->runs : 0);
	if (b->best_bps)
		fprintf(f, "<b class=\"ok\">%.0f MB/s</b>%s", b->best_bps / 1e6,
			b->limited_by_to ? " (the top of the range: the drive may do more)" : "");
	else
		fprintf(f, "<b class=\"bad\">none</b>");
	fprintf(f, "</td></tr>\n");
	if (b->fail_bps)
		fprintf(f,
			"<tr><th class=\"l\">lowest rate that failed</th><td>%.0f MB/s</td></tr>\n",
			b->fail_bps / 1e6);
	fprintf(f,
		"<tr><th class=\"l\">unthrottled run</th><td>%.0f MB/s average over %.2f "
		"GB</td></tr>\n",
		b->max.mbps, b->max.bytes / 1e9);
	if (cl->found)
		fprintf(f,
			"<tr><th class=\"l\">burst rate, cache</th><td>%.0f MB/s for the first "
			"%.2f "
			"GB (%.1f s)</td></tr>\n<tr><th class=\"l\">sustained rate after the "
			"cache</th><td>%.0f MB/s</td></tr>\n",
			cl->burst_bps / 1e6, cl->cliff_bytes / 1e9, cl->cliff_s,
			cl->sustained_bps / 1e6);
	else
		fprintf(f,
			"<tr><th class=\"l\">cache cliff</th><td>none within %.2f GB (rate in the "
			"last third %.0f MB/s)</td></tr>\n",
			b->max.bytes / 1e9, cl->sustained_bps / 1e6);
	fprintf(f, "<tr><th class=\"l\">ring</th><td>%.0f MB: absorbs a slower moment</td></tr>\n",
		b->ring_bytes / 1e6);
	fprintf(f, "</table>\n");
	if (cl->warning[0]) {
		fprintf(f, "<p class=\"warn\">");
		esc(f, cl->warning);
		fprintf(f, "</p>\n");
	}
	/* sweep */
	for (size_t i = 0; i < b->nruns; i++)
		if (b->runs[i].rate_bps / 1e6 > top)
			top = b->runs[i].rate_bps / 1e6;
	chart_begin(&c, f, "sweep", "Rate sweep: every run, pass or fail", "rate (MB/s)",
		    "run at that rate", 0, nice_top(top * 1.05), 0, (o ? o->runs : 3) + 1);
	for (size_t i = 0; i < b->nruns; i++) {
		const struct nvt_bench_run *run = &b->runs[i];
		fprintf(f,
			"<circle class=\"%s\" cx=\"%.1f\" cy=\"%.1f\" r=\"6\"><title>%.0f MB/s run "
			"%u: %s",
			run->pass ? "pass" : "fail", cx(&c, run->rate_bps / 1e6),
			cy(&c, run->index), run->rate_bps / 1e6, run->index,
			run->pass ? "pass" : "FAIL ");
		esc(f, run->why);
		fprintf(f, "</title></circle>\n");
	}
	if (b->best_bps)
		vline(&c, "best", b->best_bps / 1e6);
	vline(&c, "unthrottled", b->max.mbps);
	legend[0] = 0;
	swatch(legend, sizeof(legend), "#2a9d4b", "pass");
	swatch(legend, sizeof(legend), "#d62828", "fail (drops, underflows or a bad check)");
	swatch(legend, sizeof(legend), "#888", "unthrottled average");
	chart_end(&c, legend);
	/* throughput over time */
	tmax = series_end_s(&b->max.series);
	top = series_max_rate(&b->max.series);
	if (bp) {
		tmax = fmax(tmax, series_end_s(&bp->series));
		top = fmax(top, series_max_rate(&bp->series));
	}
	if (bf) {
		tmax = fmax(tmax, series_end_s(&bf->series));
		top = fmax(top, series_max_rate(&bf->series));
	}
	chart_begin(&c, f, "throughput", "Throughput over time", "time (s)",
		    play ? "read MB/s" : "written MB/s", 0, nice_top(tmax), 0, nice_top(top * 1.1));
	rate_line(&c, "rate-max", &b->max.series, false);
	if (bp)
		rate_line(&c, "rate-pass", &bp->series, false);
	if (bf) {
		rate_line(&c, "rate-fail", &bf->series, false);
		drop_marks(&c, &bf->series);
	}
	legend[0] = 0;
	swatch(legend, sizeof(legend), "#888", "unthrottled");
	if (bp) {
		char t[96];
		snprintf(t, sizeof(t), "%.0f MB/s (passed)", bp->rate_bps / 1e6);
		swatch(legend, sizeof(legend), "#2a9d4b", t);
	}
	if (bf) {
		char t[128];
		snprintf(t, sizeof(t), "%.0f MB/s (failed; red ticks: %s)", bf->rate_bps / 1e6,
			 play ? "underflows" : "drops");
		swatch(legend, sizeof(legend), "#d62828", t);
	}
	chart_end(&c, legend);
	/* ring fill */
	chart_begin(&c, f, "ringfill",
		    play ? "Ring fill over time (data read ahead of the sink)"
			 : "Ring fill over time (data waiting for the drive)",
		    "time (s)", "ring fill (%)", 0, nice_top(tmax), 0, 100);
	if (bp)
		fill_line(&c, "ring-pass", &bp->series);
	if (bf) {
		fill_line(&c, "ring-fail", &bf->series);
		drop_marks(&c, &bf->series);
	}
	legend[0] = 0;
	if (bp)
		swatch(legend, sizeof(legend), "#2a9d4b", "at the highest passing rate");
	if (bf)
		swatch(legend, sizeof(legend), "#d62828", "at the lowest failing rate");
	chart_end(&c, legend);
	/* cache cliff */
	chart_begin(&c, f, "cliff", "The cache cliff: unthrottled rate against data written",
		    play ? "GB read" : "GB written", "MB/s", 0, nice_top(b->max.bytes / 1e9), 0,
		    nice_top(series_max_rate(&b->max.series) * 1.1));
	rate_line(&c, "rate-max", &b->max.series, true);
	if (cl->found) {
		hline(&c, "burst", 0, cl->cliff_bytes / 1e9, cl->burst_bps / 1e6);
		hline(&c, "sustained", cl->cliff_bytes / 1e9, b->max.bytes / 1e9,
		      cl->sustained_bps / 1e6);
		vline(&c, "cliff", cl->cliff_bytes / 1e9);
	} else {
		hline(&c, "sustained", 0, b->max.bytes / 1e9, cl->sustained_bps / 1e6);
	}
	legend[0] = 0;
	swatch(legend, sizeof(legend), "#888", "rate per interval");
	if (cl->found) {
		swatch(legend, sizeof(legend), "#1f77b4", "burst");
		swatch(legend, sizeof(legend), "#ff7f0e", "sustained; the vertical line: cliff");
	} else {
		swatch(legend, sizeof(legend), "#ff7f0e", "rate in the last third (no cliff)");
	}
	chart_end(&c, legend);
	/* every run */
	fprintf(f,
		"<h2>Runs</h2>\n<table><tr><th>rate MB/s</th><th>run</th><th>result</th>"
		"<th>MB/s</th><th>GB</th><th>%s</th><th class=\"l\">why</th></tr>\n",
		play ? "underflow beats" : "dropped beats");
	for (size_t i = 0; i < b->nruns; i++) {
		const struct nvt_bench_run *run = &b->runs[i];
		fprintf(f,
			"<tr><td>%.0f</td><td>%u</td><td class=\"%s\">%s</td><td>%.0f</td>"
			"<td>%.2f</td><td>%llu</td><td class=\"l\">",
			run->rate_bps / 1e6, run->index, run->pass ? "ok" : "bad",
			run->pass ? "pass" : "FAIL", run->mbps, run->bytes / 1e9,
			(unsigned long long)run->drops);
		esc(f, run->why);
		fprintf(f, "</td></tr>\n");
	}
	fprintf(f, "</table>\n");
}

static void speed_section(FILE *f, const struct nvt_speedtest_result *s)
{
	struct chart c;
	char legend[512] = "";
	double top = fmax(s->agg_write_mbps, s->agg_read_mbps);
	unsigned groups = s->n + (s->n > 1);
	double gw;

	fprintf(f, "<h2>Speedtest</h2>\n<table><tr><th class=\"l\">target</th><th class=\"l\">on"
		   "</th><th>write MB/s</th><th>read MB/s</th><th>checked</th><th class=\"l\">"
		   "PCIe link</th></tr>\n");
	for (unsigned i = 0; i < s->n; i++) {
		const struct nvt_speed_target *t = &s->t[i];
		fprintf(f, "<tr><td class=\"l\">");
		esc(f, t->path);
		fprintf(f, "</td><td class=\"l\">");
		esc(f, t->on);
		fprintf(f, "</td><td>%.0f</td><td>%.0f</td><td class=\"%s\">", t->write_mbps,
			t->read_mbps, t->corrupt || t->gaps || t->error[0] ? "bad" : "ok");
		if (t->read_exit < 0)
			fprintf(f, "not read");
		else if (t->corrupt || t->gaps)
			fprintf(f, "%llu corrupt beats, %llu gaps (first at byte %llu)",
				(unsigned long long)t->corrupt, (unsigned long long)t->gaps,
				(unsigned long long)t->first_bad_offset);
		else
			fprintf(f, "every beat");
		fprintf(f, "</td><td class=\"l\">");
		if (!t->nlinks)
			fprintf(f, "not NVMe");
		for (unsigned k = 0; k < t->nlinks; k++) {
			const struct nvt_link *l = &t->link[k];
			fprintf(f, "%s", k ? "<br>" : "");
			esc(f, l->ctrl);
			fprintf(f, " ");
			esc(f, l->model);
			if (l->cur_width)
				fprintf(f, ": %s x%u (max %s x%u)", l->cur_speed, l->cur_width,
					l->max_speed, l->max_width);
			else
				fprintf(f, ": link not reported");
		}
		fprintf(f, "</td></tr>\n");
		top = fmax(top, fmax(t->write_mbps, t->read_mbps));
	}
	if (s->n > 1)
		fprintf(f,
			"<tr><td class=\"l\"><b>all at once</b></td><td></td><td><b>%.0f</b></td>"
			"<td><b>%.0f</b></td><td></td><td></td></tr>\n",
			s->agg_write_mbps, s->agg_read_mbps);
	fprintf(f, "</table>\n");
	chart_begin(&c, f, "readwrite", "Write and read per target", "", "MB/s", 0, groups, 0,
		    nice_top(top * 1.1));
	gw = (double)(W - ML - MR) / groups;
	for (unsigned g = 0; g < groups; g++) {
		bool agg = g == s->n;
		double wv = agg ? s->agg_write_mbps : s->t[g].write_mbps;
		double rv = agg ? s->agg_read_mbps : s->t[g].read_mbps;
		double x = ML + g * gw + gw * 0.15, bw = gw * 0.33;
		const char *name = agg ? "all at once" : s->t[g].path;
		const char *base = strrchr(name, '/') ? strrchr(name, '/') + 1 : name;
		fprintf(f,
			"<rect class=\"bar-write\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
			"height=\"%.1f\"><title>write %.0f MB/s</title></rect>\n",
			x, cy(&c, wv), bw, cy(&c, 0) - cy(&c, wv), wv);
		fprintf(f,
			"<rect class=\"bar-read\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
			"height=\"%.1f\"><title>read %.0f MB/s</title></rect>\n",
			x + bw, cy(&c, rv), bw, cy(&c, 0) - cy(&c, rv), rv);
		fprintf(f, "<text class=\"barlabel\" x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">",
			x + bw, H - MB + 32);
		esc(f, base);
		fprintf(f, "</text>\n");
	}
	swatch(legend, sizeof(legend), "#1f77b4", "write");
	swatch(legend, sizeof(legend), "#ff7f0e", "read (every beat checked)");
	chart_end(&c, legend);
}

int nvt_report_html(FILE *f, const struct nvt_report *r)
{
	char when[64];
	time_t now = time(NULL);
	struct tm tm;

	strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S UTC", gmtime_r(&now, &tm));
	fprintf(f, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>");
	esc(f, r->title);
	fprintf(f, "</title><style>%s</style></head><body>\n<h1>", css);
	esc(f, r->title);
	fprintf(f, "</h1>\n<p>%s, nvtape %s", when, NVT_VERSION);
	if (r->command) {
		fprintf(f, "<br><code>");
		esc(f, r->command);
		fprintf(f, "</code>");
	}
	if (r->bench && r->bench->engine_desc[0]) {
		fprintf(f, "<br>");
		esc(f, r->bench->engine_desc);
	}
	fprintf(f, "</p>\n");
	if (r->bench)
		bench_section(f, r);
	if (r->speed)
		speed_section(f, r->speed);
	fprintf(f, "</body></html>\n");
	return ferror(f) ? -EIO : 0;
}

int nvt_report_write(const char *path, const struct nvt_report *r, struct nvt_err *err)
{
	char tmp[4096];
	FILE *f;
	int rc;

	snprintf(tmp, sizeof(tmp), "%s.tmp%d", path, (int)getpid());
	f = fopen(tmp, "we");
	if (!f) {
		nvt_err_set(err, errno, "cannot write the report %s: %s", tmp, strerror(errno));
		return -errno;
	}
	rc = nvt_report_html(f, r);
	if (fclose(f) || rc) {
		nvt_err_set(err, EIO, "writing the report %s failed", tmp);
		unlink(tmp);
		return -EIO;
	}
	if (rename(tmp, path)) {
		nvt_err_set(err, errno, "cannot rename %s to %s: %s", tmp, path, strerror(errno));
		unlink(tmp);
		return -errno;
	}
	return 0;
}
