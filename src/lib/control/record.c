/* SPDX-License-Identifier: MIT */
/* Recording with a registered source: the source runs on its own thread as an ordinary client
 * of the push API (recorder.h); the caller waits for it and closes the recording. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <pthread.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "control/export_int.h"
#include "nvtape/meta.h"
#include "nvtape/recorder.h"
#include "control/recorder_int.h"
#include "nvtape/source.h"
#include "util/opts.h"
#include "util/sysutil.h"

void nvt_record_opts_init(struct nvt_record_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->struct_size = sizeof(*o);
	o->engine = "file";
	o->source = "tpg";
	o->format = NVT_FMT_NVTAPE;
	o->chunk_bytes = 8u << 20;
	o->chunks = 32;
	o->qd = 8;
	o->timeout_ns = 10000000000ull;
	o->checkpoint_ns = 1000000000ull;
	o->stats_ns = 1000000000ull;
	o->input_fd = 0;
	o->unit_bytes = 1;
	o->source_kind = NVT_SRC_API;
	o->source_name = "api";
}

const char *nvt_stop_reason_name(enum nvt_stop_reason r)
{
	static const char *const names[] = {"limit",    "eof",   "signal",       "io-error",
					    "no-space", "stall", "source-error", "stopped"};
	return (unsigned)r < sizeof(names) / sizeof(names[0]) ? names[r] : "?";
}

struct source_run {
	const struct nvt_source_ops *ops;
	struct nvt_recorder *rec;
	struct nvt_source_args args;
	struct nvt_source_report rep;
	struct nvt_err err;
	int rc;
	uint64_t cpu_ns;
};

static void *source_thread(void *arg)
{
	struct source_run *s = arg;
	uint64_t c0;

	prctl(PR_SET_NAME, "nvt-source");
	prctl(PR_SET_TIMERSLACK, 1000UL); /* 1 us: pacing sleeps must be short and precise */
	c0 = nvt_thread_cpu_ns();
	s->rc = s->ops->run(s->rec, &s->args, &s->rep, &s->err);
	if (s->rc < 0 && !s->err.code)
		nvt_err_set(&s->err, -s->rc, "source %s failed: %s", s->ops->name,
			    strerror(-s->rc));
	s->cpu_ns = nvt_thread_cpu_ns() - c0;
	return NULL;
}

static int find_source(const struct nvt_record_opts *o, struct source_run *s, struct nvt_err *err)
{
	const char *colon;

	s->ops = nvt_source_find(o->source);
	if (!s->ops) {
		nvt_err_param(err, "unknown source \"%s\" (sources: %s)",
			      o->source ? o->source : "", nvt_source_names());
		return -EINVAL;
	}
	colon = strchr(o->source, ':');
	s->args.arg = colon ? colon + 1 : "";
	if ((s->ops->caps & NVT_SOURCE_NEEDS_ARG) && !*s->args.arg) {
		nvt_err_param(err, "the %s source is named %s:ARGUMENT (%s)", s->ops->name,
			      s->ops->name, s->ops->help);
		return -EINVAL;
	}
	s->args.rate_bps = (s->ops->caps & NVT_SOURCE_PACED) ? o->rate_bps : 0;
	s->args.duration_ns = o->duration_ns;
	s->args.fd = o->input_fd;
	s->args.ctx = o->source_ctx;
	s->args.drops_from = o->drops_from;
	s->args.notice = o->notice;
	s->args.notice_arg = o->arg;
	s->args.chunk_bytes = o->chunk_bytes;
	s->args.chunks = o->chunks;
	if (s->ops->caps & NVT_SOURCE_PACKETS) {
		s->args.size_bytes = o->size_bytes;
		s->args.check = o->check && o->check[0] ? o->check : NULL;
	}
	if (o->drops_from && !(s->ops->caps & NVT_SOURCE_DROPS_FROM)) {
		nvt_err_param(err,
			      "a loss counter (drops_from) is read by sources that take one "
			      "(dev), not by %s: record with the dev source or give no counter",
			      s->ops->name);
		return -EINVAL;
	}
	return s->ops->check ? s->ops->check(&s->args, err) : 0;
}

/* A source that failed before it gave a byte (a capture's header unreadable, a device gone):
 * the recording holds nothing, and its files go (a block device stays as it is). */
static void discard(const struct nvt_record_opts *o, struct nvt_record_result *res)
{
	struct nvt_layout L;
	struct stat st;
	unsigned gone = 0;

	nvt_layout_resolve(&o->layout, o->path, &L);
	for (unsigned m = 0; m < L.n; m++)
		if (!lstat(L.path[m], &st) && S_ISREG(st.st_mode) && !unlink(L.path[m]))
			gone++;
	const char *note = gone > 1 ? " (nothing recorded: the files were removed)"
				    : " (nothing recorded: the file was removed)";
	if (gone && strlen(res->err.msg) + strlen(note) < sizeof(res->err.msg))
		strcat(res->err.msg, note);
}

int nvt_record(const struct nvt_record_opts *o, struct nvt_record_result *res)
{
	struct nvt_record_opts ro;
	struct source_run s;
	pthread_t th;
	uint64_t proc_c0 = nvt_process_cpu_ns();
	int rc;

	memset(res, 0, sizeof(*res));
	memset(&s, 0, sizeof(s));
	nvt_record_opts_init(&ro);
	rc = nvt_opts_merge(&ro, sizeof(ro), o, "nvt_record_opts_init", &res->err);
	if (rc)
		return rc;
	rc = find_source(&ro, &s, &res->err);
	if (rc)
		return rc;
	ro.unit_bytes = s.ops->unit_bytes;
	ro.source_kind = s.ops->kind;
	ro.source_name = s.ops->name;
	ro.producer_times_duration = s.args.rate_bps != 0;
	if (s.ops->caps & NVT_SOURCE_PACKETS) {
		/* the source checks packet by packet and keeps the limits (its last block) */
		ro.check = NULL;
		ro.producer_times_duration = true;
	}
	if (s.ops->caps & NVT_SOURCE_SHARED_RING)
		ro.shared_ring = true;
	if ((s.ops->caps & NVT_SOURCE_PATTERN) && s.ops->kind != NVT_SRC_FDREC) {
		/* (the fdrec device's generator starts where its START says, 0: the source
		 * stamps the header with it) a stamp per run: an earlier run's blocks on the same
		 * device do not continue this run's sequence, so recover can never take them for
		 * new data */
		if (getrandom(&s.args.first_seq, sizeof(s.args.first_seq), 0) !=
		    sizeof(s.args.first_seq))
			s.args.first_seq = nvt_real_ns() ^ (uint64_t)getpid() << 40;
		s.args.first_seq &= (1ull << 62) - 1; /* room for 2^62 beats before a wrap */
		ro.first_seq = s.args.first_seq;
	}
	/* what the test pattern is, unless the caller said otherwise: bytes (SigMF has no type
	 * for a 16-byte beat), at a rate counted in the samples the datatype names */
	char *meta = NULL;
	if (s.ops->caps & NVT_SOURCE_PATTERN) {
		char v[32], dt[32], ch[16];
		meta = nvt_meta_set(ro.meta, "nvtape:beat", "u64le seq, u64le ~seq");
		if (meta && nvt_meta_get(meta, "core:datatype", dt, sizeof(dt)) <= 0) {
			char *m = nvt_meta_set(meta, "core:datatype", "ru8");
			free(meta);
			meta = m;
		}
		if (meta && s.args.rate_bps &&
		    nvt_meta_get(meta, "core:sample_rate", v, 2) == -ENOENT &&
		    nvt_meta_get(meta, "core:datatype", dt, sizeof(dt)) > 0) {
			uint64_t chans = nvt_meta_get(meta, "core:num_channels", ch, sizeof(ch)) > 0
						 ? strtoull(ch, NULL, 10)
						 : 1;
			if (chans >= 1 && chans <= 65535) {
				char *m;
				snprintf(v, sizeof(v), "%.17g",
					 (double)s.args.rate_bps /
						 (double)nvt_sigmf_sample_bytes(dt, chans));
				m = nvt_meta_set(meta, "core:sample_rate", v);
				free(meta);
				meta = m;
			}
		}
		if (meta)
			ro.meta = meta;
	}
	if (s.ops->describe) {
		char *m = s.ops->describe(&s.args, ro.meta ? ro.meta : "");
		if (m) {
			free(meta);
			meta = m;
			ro.meta = meta;
		}
	}
	rc = nvt_recorder_open(&ro, &s.rec, &res->err);
	free(meta); /* the recorder keeps its own copy */
	if (rc)
		return rc;
	if (ro.opened)
		ro.opened(ro.arg);
	rc = -pthread_create(&th, NULL, source_thread, &s);
	if (rc) {
		nvt_err_set(&s.err, -rc, "cannot start the source thread: %s", strerror(-rc));
		s.rc = rc;
		nvt_recorder_stop(s.rec);
	} else {
		pthread_join(th, NULL);
	}
	if (s.rc == NVT_SOURCE_AT_LIMIT)
		nvt_rec_limit_reached(s.rec);
	else if (s.rc)
		nvt_recorder_fail(s.rec, &s.err);
	rc = nvt_recorder_close(s.rec, res);
	if (s.rc < 0 && !res->source_bytes)
		discard(&ro, res);
	res->src_cpu_ns = s.cpu_ns;
	res->pace_steps = s.rep.pace_steps;
	res->pace_steps_long = s.rep.pace_steps_long;
	res->pace_max_step_bytes = s.rep.pace_max_step_bytes;
	res->packets = s.rep.packets;
	res->kernel_drops = s.rep.kernel_drops;
	res->proc_cpu_ns = nvt_process_cpu_ns() - proc_c0;
	return rc;
}
