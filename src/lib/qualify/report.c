/* SPDX-License-Identifier: MIT */
/* The HTML report's sections: a header, the bench (rate table, the sweep, throughput and ring
 * fill over time with drops marked, the cache cliff, every run) and the speedtest (per target
 * table with the PCIe links, write and read bars), drawn with the SVG primitives of svg.c.
 * Every plot is an <svg> with an id, so that a test can find it in the rendered page. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "nvtape/report.h"
#include "qualify/svg.h"

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

static const struct nvt_bench_run *find_run(const struct nvt_bench_result *b, uint64_t rate,
					    bool pass)
{
	const struct nvt_bench_run *hit = NULL;
	for (size_t i = 0; i < b->nruns; i++)
		if (b->runs[i].rate_bps == rate && b->runs[i].pass == pass)
			hit = &b->runs[i]; /* the last one at that rate */
	return hit;
}

/* The runs a bench report draws beside the unthrottled one. */
struct bench_view {
	const struct nvt_bench_result *b;
	const struct nvt_bench_opts *o;
	bool play;
	const struct nvt_bench_run *bp, *bf; /* the highest pass, the lowest fail */
	double tmax;                         /* seconds of the longest of these runs */
};

static void bench_table(FILE *f, const struct bench_view *v)
{
	const struct nvt_bench_result *b = v->b;
	const struct nvt_cliff *cl = &b->cliff;
	unsigned runs = v->o ? v->o->runs : 0;

	fprintf(f, "<h2>%s rate</h2>\n<table>\n", v->play ? "Playback" : "Recording");
	fprintf(f, "<tr><th class=\"l\">highest %s rate that passed %u of %u runs</th><td>",
		v->play ? "playback" : "recording", runs, runs);
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
		svg_esc(f, cl->warning);
		fprintf(f, "</p>\n");
	}
}

static void sweep_chart(FILE *f, const struct bench_view *v)
{
	const struct nvt_bench_result *b = v->b;
	double top = b->max.mbps;
	struct svg_chart c;
	char legend[1024] = "";

	for (size_t i = 0; i < b->nruns; i++)
		if (b->runs[i].rate_bps / 1e6 > top)
			top = b->runs[i].rate_bps / 1e6;
	svg_begin(&c, f, "sweep", "Rate sweep: every run, pass or fail", "rate (MB/s)",
		  "run at that rate", 0, svg_nice_top(top * 1.05), 0, (v->o ? v->o->runs : 3) + 1,
		  true);
	for (size_t i = 0; i < b->nruns; i++) {
		const struct nvt_bench_run *run = &b->runs[i];
		char text[96];
		snprintf(text, sizeof(text), "%.0f MB/s run %u: %s", run->rate_bps / 1e6,
			 run->index, run->pass ? "pass" : "FAIL ");
		svg_mark(&c, run->pass ? "pass" : "fail", run->rate_bps / 1e6, run->index, text,
			 run->why);
	}
	if (b->best_bps)
		svg_vline(&c, "best", b->best_bps / 1e6);
	svg_vline(&c, "unthrottled", b->max.mbps);
	svg_swatch(legend, sizeof(legend), "#2a9d4b", "pass");
	svg_swatch(legend, sizeof(legend), "#d62828", "fail (drops, underflows or a bad check)");
	svg_swatch(legend, sizeof(legend), "#888", "unthrottled average");
	svg_end(&c, legend);
}

static void throughput_chart(FILE *f, const struct bench_view *v)
{
	const struct nvt_bench_result *b = v->b;
	double top = svg_series_max_rate(&b->max.series);
	struct svg_chart c;
	char legend[1024] = "", t[128];

	if (v->bp)
		top = fmax(top, svg_series_max_rate(&v->bp->series));
	if (v->bf)
		top = fmax(top, svg_series_max_rate(&v->bf->series));
	svg_begin(&c, f, "throughput", "Throughput over time", "time (s)",
		  v->play ? "read MB/s" : "written MB/s", 0, svg_nice_top(v->tmax), 0,
		  svg_nice_top(top * 1.1), false);
	svg_rate_line(&c, "rate-max", &b->max.series, false);
	if (v->bp)
		svg_rate_line(&c, "rate-pass", &v->bp->series, false);
	if (v->bf) {
		svg_rate_line(&c, "rate-fail", &v->bf->series, false);
		svg_drop_marks(&c, &v->bf->series);
	}
	svg_swatch(legend, sizeof(legend), "#888", "unthrottled");
	if (v->bp) {
		snprintf(t, sizeof(t), "%.0f MB/s (passed)", v->bp->rate_bps / 1e6);
		svg_swatch(legend, sizeof(legend), "#2a9d4b", t);
	}
	if (v->bf) {
		snprintf(t, sizeof(t), "%.0f MB/s (failed; red ticks: %s)", v->bf->rate_bps / 1e6,
			 v->play ? "underflows" : "drops");
		svg_swatch(legend, sizeof(legend), "#d62828", t);
	}
	svg_end(&c, legend);
}

static void ringfill_chart(FILE *f, const struct bench_view *v)
{
	struct svg_chart c;
	char legend[1024] = "";

	svg_begin(&c, f, "ringfill",
		  v->play ? "Ring fill over time (data read ahead of the sink)"
			  : "Ring fill over time (data waiting for the drive)",
		  "time (s)", "ring fill (%)", 0, svg_nice_top(v->tmax), 0, 100, false);
	if (v->bp)
		svg_fill_line(&c, "ring-pass", &v->bp->series);
	if (v->bf) {
		svg_fill_line(&c, "ring-fail", &v->bf->series);
		svg_drop_marks(&c, &v->bf->series);
	}
	if (v->bp)
		svg_swatch(legend, sizeof(legend), "#2a9d4b", "at the highest passing rate");
	if (v->bf)
		svg_swatch(legend, sizeof(legend), "#d62828", "at the lowest failing rate");
	svg_end(&c, legend);
}

static void cliff_chart(FILE *f, const struct bench_view *v)
{
	const struct nvt_bench_result *b = v->b;
	const struct nvt_cliff *cl = &b->cliff;
	struct svg_chart c;
	char legend[1024] = "";

	svg_begin(&c, f, "cliff", "The cache cliff: unthrottled rate against data written",
		  v->play ? "GB read" : "GB written", "MB/s", 0, svg_nice_top(b->max.bytes / 1e9),
		  0, svg_nice_top(svg_series_max_rate(&b->max.series) * 1.1), false);
	svg_rate_line(&c, "rate-max", &b->max.series, true);
	if (cl->found) {
		svg_hline(&c, "burst", 0, cl->cliff_bytes / 1e9, cl->burst_bps / 1e6);
		svg_hline(&c, "sustained", cl->cliff_bytes / 1e9, b->max.bytes / 1e9,
			  cl->sustained_bps / 1e6);
		svg_vline(&c, "cliff", cl->cliff_bytes / 1e9);
	} else {
		svg_hline(&c, "sustained", 0, b->max.bytes / 1e9, cl->sustained_bps / 1e6);
	}
	svg_swatch(legend, sizeof(legend), "#888", "rate per interval");
	if (cl->found) {
		svg_swatch(legend, sizeof(legend), "#1f77b4", "burst");
		svg_swatch(legend, sizeof(legend), "#ff7f0e",
			   "sustained; the vertical line: cliff");
	} else {
		svg_swatch(legend, sizeof(legend), "#ff7f0e", "rate in the last third (no cliff)");
	}
	svg_end(&c, legend);
}

static void runs_table(FILE *f, const struct bench_view *v)
{
	const struct nvt_bench_result *b = v->b;

	fprintf(f,
		"<h2>Runs</h2>\n<table><tr><th>rate MB/s</th><th>run</th><th>result</th>"
		"<th>MB/s</th><th>GB</th><th>%s</th><th class=\"l\">why</th></tr>\n",
		v->play ? "underflow beats" : "dropped beats");
	for (size_t i = 0; i < b->nruns; i++) {
		const struct nvt_bench_run *run = &b->runs[i];
		fprintf(f,
			"<tr><td>%.0f</td><td>%u</td><td class=\"%s\">%s</td><td>%.0f</td>"
			"<td>%.2f</td><td>%llu</td><td class=\"l\">",
			run->rate_bps / 1e6, run->index, run->pass ? "ok" : "bad",
			run->pass ? "pass" : "FAIL", run->mbps, run->bytes / 1e9,
			(unsigned long long)run->drops);
		svg_esc(f, run->why);
		fprintf(f, "</td></tr>\n");
	}
	fprintf(f, "</table>\n");
}

static void bench_section(FILE *f, const struct nvt_report *r)
{
	struct bench_view v = {.b = r->bench, .o = r->bench_opts};

	v.play = v.o && v.o->mode == NVT_BENCH_PLAY;
	v.bp = v.b->best_bps ? find_run(v.b, v.b->best_bps, true) : NULL;
	v.bf = v.b->fail_bps ? find_run(v.b, v.b->fail_bps, false) : NULL;
	v.tmax = svg_series_end_s(&v.b->max.series);
	if (v.bp)
		v.tmax = fmax(v.tmax, svg_series_end_s(&v.bp->series));
	if (v.bf)
		v.tmax = fmax(v.tmax, svg_series_end_s(&v.bf->series));
	bench_table(f, &v);
	sweep_chart(f, &v);
	throughput_chart(f, &v);
	ringfill_chart(f, &v);
	cliff_chart(f, &v);
	runs_table(f, &v);
}

static void link_cell(FILE *f, const struct nvt_speed_target *t)
{
	if (!t->nlinks)
		fprintf(f, "not NVMe");
	for (unsigned k = 0; k < t->nlinks; k++) {
		const struct nvt_link *l = &t->link[k];
		fprintf(f, "%s", k ? "<br>" : "");
		svg_esc(f, l->ctrl);
		fprintf(f, " ");
		svg_esc(f, l->model);
		if (l->cur_width)
			fprintf(f, ": %s x%u (max %s x%u)", l->cur_speed, l->cur_width,
				l->max_speed, l->max_width);
		else
			fprintf(f, ": link not reported");
	}
}

static void speed_table(FILE *f, const struct nvt_speedtest_result *s)
{
	fprintf(f, "<h2>Speedtest</h2>\n<table><tr><th class=\"l\">target</th><th class=\"l\">on"
		   "</th><th>write MB/s</th><th>read MB/s</th><th>checked</th><th class=\"l\">"
		   "PCIe link</th></tr>\n");
	for (unsigned i = 0; i < s->n; i++) {
		const struct nvt_speed_target *t = &s->t[i];
		fprintf(f, "<tr><td class=\"l\">");
		svg_esc(f, t->path);
		fprintf(f, "</td><td class=\"l\">");
		svg_esc(f, t->on);
		fprintf(f, "</td><td>%.0f</td><td>%.0f</td><td class=\"%s\">", t->write_mbps,
			t->read_mbps, t->corrupt || t->gaps || t->error[0] ? "bad" : "ok");
		if (!t->read)
			fprintf(f, "not read");
		else if (t->corrupt || t->gaps)
			fprintf(f, "%llu corrupt beats, %llu gaps (first at byte %llu)",
				(unsigned long long)t->corrupt, (unsigned long long)t->gaps,
				(unsigned long long)t->first_bad_offset);
		else
			fprintf(f, "every beat");
		fprintf(f, "</td><td class=\"l\">");
		link_cell(f, t);
		fprintf(f, "</td></tr>\n");
	}
	if (s->n > 1)
		fprintf(f,
			"<tr><td class=\"l\"><b>all at once</b></td><td></td><td><b>%.0f</b></td>"
			"<td><b>%.0f</b></td><td></td><td></td></tr>\n",
			s->agg_write_mbps, s->agg_read_mbps);
	fprintf(f, "</table>\n");
}

static void speed_chart(FILE *f, const struct nvt_speedtest_result *s)
{
	struct svg_chart c;
	char legend[512] = "", title[64];
	double top = fmax(s->agg_write_mbps, s->agg_read_mbps), gw;
	unsigned groups = s->n + (s->n > 1);

	for (unsigned i = 0; i < s->n; i++)
		top = fmax(top, fmax(s->t[i].write_mbps, s->t[i].read_mbps));
	svg_begin(&c, f, "readwrite", "Write and read per target", "", "MB/s", 0, groups, 0,
		  svg_nice_top(top * 1.1), false);
	gw = (double)(SVG_W - SVG_ML - SVG_MR) / groups;
	for (unsigned g = 0; g < groups; g++) {
		bool agg = g == s->n;
		double wv = agg ? s->agg_write_mbps : s->t[g].write_mbps;
		double rv = agg ? s->agg_read_mbps : s->t[g].read_mbps;
		double x = SVG_ML + g * gw + gw * 0.15, bw = gw * 0.33;
		const char *name = agg ? "all at once" : s->t[g].path;
		snprintf(title, sizeof(title), "write %.0f MB/s", wv);
		svg_bar(&c, "bar-write", x, bw, wv, title);
		snprintf(title, sizeof(title), "read %.0f MB/s", rv);
		svg_bar(&c, "bar-read", x + bw, bw, rv, title);
		svg_xlabel(&c, x + bw, strrchr(name, '/') ? strrchr(name, '/') + 1 : name);
	}
	svg_swatch(legend, sizeof(legend), "#1f77b4", "write");
	svg_swatch(legend, sizeof(legend), "#ff7f0e", "read (every beat checked)");
	svg_end(&c, legend);
}

static void speed_section(FILE *f, const struct nvt_speedtest_result *s)
{
	speed_table(f, s);
	speed_chart(f, s);
}

int nvt_report_html(FILE *f, const struct nvt_report *r)
{
	char when[64];
	time_t now = time(NULL);
	struct tm tm;

	strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S UTC", gmtime_r(&now, &tm));
	fprintf(f, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>");
	svg_esc(f, r->title);
	fprintf(f, "</title><style>%s</style></head><body>\n<h1>", css);
	svg_esc(f, r->title);
	fprintf(f, "</h1>\n<p>%s, nvtape %s", when, NVT_VERSION);
	if (r->command) {
		fprintf(f, "<br><code>");
		svg_esc(f, r->command);
		fprintf(f, "</code>");
	}
	if (r->bench && r->bench->engine_desc[0]) {
		fprintf(f, "<br>");
		svg_esc(f, r->bench->engine_desc);
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
