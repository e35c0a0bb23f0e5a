/* SPDX-License-Identifier: MIT */
/* Verification: O_DIRECT reads with several in flight (scan.c), every beat through the
 * pattern checker, every gap matched against the drop index, every chunk against its CRC32C. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nvtape/verify.h"
#include "storage/layout_io.h"
#include "control/counter_pick.h"
#include "control/scan.h"
#include "format/index.h"
#include "format/netpkt.h"
#include "format/pcapng.h"
#include "format/sums.h"
#include "nvtape/meta.h"
#include "stream/pktcheck.h"
#include "util/mul.h"
#include "util/sysutil.h"

struct vstate {
	const struct nvt_verify_opts *o;
	struct nvt_verify_result *res;
	struct nvt_drop_event *ev;
	uint64_t nev, next_ev;
	struct nvt_counter_check cc; /* when res->counter_checked */
	uint64_t gap_unit;           /* bytes per beat or record missing */
	bool content;                /* the pattern or a counter is checked */
	struct nvt_index ix;
	struct nvt_sums_check sums; /* when res->sums_checked */
	/* packet recordings: the pcapng stream walked block by block, the packet check */
	struct nvt_pcapng_reader rd;
	struct nvt_pktcheck pc;
	uint64_t pkt_end; /* data offset where the last packet's block ends */
	int pkt_rc;       /* the stream's first error (the walk stops there) */
};

void nvt_verify_opts_default(struct nvt_verify_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->chunk_bytes = 8u << 20;
	o->chunks = 16;
	o->qd = 8;
}

static void on_check(void *arg, const struct nvt_check_event *e)
{
	struct vstate *v = arg;
	struct nvt_verify_result *res = v->res;

	if (e->kind == NVT_CHK_GAP) {
		uint64_t doff = e->offset - res->rec.data_offset;
		while (v->next_ev < v->nev && v->ev[v->next_ev].data_offset < doff) {
			res->events_unmatched++;
			v->next_ev++;
		}
		if (v->next_ev < v->nev && v->ev[v->next_ev].data_offset == doff &&
		    nvt_mul_cmp(v->ev[v->next_ev].beats, res->rec.beat_bytes, e->missing,
				v->gap_unit) == 0) {
			res->gaps_matched++;
			v->next_ev++;
		} else {
			res->gaps_unmatched++;
		}
	}
	if (v->o->on_event)
		v->o->on_event(e, v->o->arg);
}

/* A gap before a packet whose block starts at data offset at: the drop events between the last
 * packet's block and this one are its drops (a padding block may lie between). */
static void packet_gap(struct vstate *v, uint64_t at, uint64_t missing)
{
	struct nvt_verify_result *res = v->res;
	uint64_t sum = 0;

	while (v->next_ev < v->nev && v->ev[v->next_ev].data_offset < v->pkt_end) {
		res->events_unmatched++;
		v->next_ev++;
	}
	while (v->next_ev < v->nev && v->ev[v->next_ev].data_offset <= at)
		sum += v->ev[v->next_ev++].beats;
	if (sum == missing)
		res->gaps_matched++;
	else
		res->gaps_unmatched++;
}

static int on_packet_block(const struct nvt_pcapng_block *b, void *arg)
{
	struct vstate *v = arg;
	struct nvt_udp_view u;
	uint64_t at = v->rd.pos, before;

	if (b->type == PCAPNG_ISB && (b->isb_have & NVT_PCAPNG_ISB_DROP)) {
		/* the recorder's own count of what it could not keep (the kernel, the ring) */
		v->res->isb_seen = true;
		v->res->isb_drop = b->isb_drop > UINT64_MAX - v->res->isb_drop
					   ? UINT64_MAX
					   : v->res->isb_drop + b->isb_drop;
		return 0;
	}
	if (b->type != PCAPNG_EPB && b->type != PCAPNG_SPB)
		return 0;
	v->res->packets++;
	if (v->res->packet_checked && nvt_udp_find(b->linktype, b->data, b->caplen, &u)) {
		before = v->pc.cc.counts.gaps;
		uint64_t missing = nvt_pktcheck_packet(&v->pc, u.payload, u.len);
		if (v->pc.cc.counts.gaps != before)
			packet_gap(v, at, missing);
	}
	v->pkt_end = at + b->len;
	return 0;
}

static int on_chunk(void *arg, const void *buf, uint64_t bytes, uint64_t off)
{
	struct vstate *v = arg;

	if (v->res->sums_checked)
		nvt_sums_check_feed(&v->sums, buf, bytes, off - v->res->rec.data_offset);
	if (v->res->packets_walked) {
		if (!v->pkt_rc)
			v->pkt_rc = nvt_pcapng_feed(&v->rd, buf, bytes, on_packet_block, v,
						    &v->res->err);
	} else if (v->res->counter_checked)
		nvt_counter_check_feed(&v->cc, buf, bytes, off);
	else if (v->res->pattern_checked)
		nvt_checker_feed(&v->res->chk, buf, bytes - bytes % 16, off);
	v->res->checked_bytes += bytes;
	return 0;
}

static void on_bad_span(void *arg, const struct nvt_chunk_crc *span, uint32_t found)
{
	struct vstate *v = arg;

	if (v->o->on_bad_chunk)
		v->o->on_bad_chunk(span, found, v->o->arg);
}

/* What the chunk checksums found. */
static void sums_result(struct vstate *v)
{
	struct nvt_verify_result *res = v->res;
	const struct nvt_sums_check *c = &v->sums;

	res->sums_good = c->good;
	res->sums_bad = c->bad;
	res->sums_bad_bytes = c->bad_bytes;
	res->sums_damaged = c->broken || !nvt_sums_check_complete(c);
	res->sums_unchecked_bytes = res->rec.valid_bytes - c->checked_bytes;
	if (c->bad || res->sums_damaged)
		res->problems |= NVT_VP_CHECKSUM;
}

/* The first 4 KiB of the data are the test pattern: 250 of their 255 beats continue it. */
static bool begins_with_pattern(const struct nvt_layout *L, const struct nvt_recording *rec)
{
	uint64_t w[512];
	int fd[NVT_MAX_MEMBERS];
	struct nvt_err err = {0};
	unsigned good = 0;

	if (rec->valid_bytes < sizeof(w) || nvt_layout_open(L, O_RDONLY, fd, &err))
		return false;
	if (nvt_layout_pread(L, fd, w, sizeof(w), rec->data_offset) == 0)
		for (unsigned i = 0; i + 1 < 256; i++)
			good += w[2 * i + 1] == ~w[2 * i] && w[2 * i + 2] == w[2 * i] + 1;
	nvt_layout_close(L, fd);
	return good >= 250;
}

/* A recording whose header says its data is not the test pattern gets no beat checks; if its
 * first 4 KiB are the test pattern all the same, the header may have been altered, or a test
 * pattern recorded as plain bytes, and a reader is told. */
static void pattern_hint(const struct nvt_verify_opts *o, const struct nvt_layout *L,
			 const struct nvt_recording *rec)
{
	if (o->notice && begins_with_pattern(L, rec)) {
		char msg[512];
		snprintf(msg, sizeof(msg),
			 "the data begins with the test pattern but the header does not say so: "
			 "its beats were not checked (a header altered, or a test pattern "
			 "recorded as plain bytes?)");
		o->notice(msg, o->arg);
	}
}

/* A packet recording: its pcapng blocks walked, and its packets checked with --check or the
 * check it was recorded with (metadata nvtape:packet_check). 0 or -EINVAL. */
static int packets_setup(const struct nvt_verify_opts *o, struct vstate *v)
{
	struct nvt_verify_result *res = v->res;
	char spec[NVT_CHECK_SPEC_MAX];
	const char *check = o->check;

	res->packets_walked = true;
	nvt_pcapng_reader_init(&v->rd);
	if ((!check || !*check) && v->ix.meta &&
	    nvt_meta_get(v->ix.meta, "nvtape:packet_check", spec, sizeof(spec)) > 0)
		check = spec;
	if (!check || !*check)
		return 0;
	if (nvt_pktcheck_parse(check, &v->pc, &res->err))
		return -EINVAL;
	res->packet_checked = true;
	return 0;
}

int nvt_verify(const struct nvt_verify_opts *o, struct nvt_verify_result *res)
{
	struct vstate v = {.o = o, .res = res};
	struct nvt_recording *rec = &res->rec;
	uint64_t t0 = nvt_mono_ns(), c0 = nvt_thread_cpu_ns();
	struct nvt_layout L;
	int rc;

	memset(res, 0, sizeof(*res));
	nvt_layout_resolve(&o->layout, o->path, &L);
	if (nvt_recording_open(&L, rec, &res->err))
		return -(res->err.code ? res->err.code : EIO);
	if (rec->format == NVT_FMT_NVTAPE &&
	    nvt_recording_read_index_all(&L, rec, &v.ix, &res->err)) {
		/* a damaged index is a finding, not the end: the data is checked all the same;
		 * an interrupted recording's (a live one moves it on) is only noted */
		if (rec->complete && res->err.code != EPROTO)
			return -(res->err.code ? res->err.code : EIO);
		if (rec->complete)
			res->problems |= NVT_VP_INDEX;
		if (o->notice) {
			char msg[700];
			snprintf(msg, sizeof(msg),
				 "the %sindex could not be read (%s): the data is checked without "
				 "its drop positions and chunk checksums",
				 rec->complete ? "" : "checkpoint's ", res->err.msg);
			o->notice(msg, o->arg);
		}
		memset(&res->err, 0, sizeof(res->err));
	}
	if (rec->index_dropped && o->notice)
		o->notice("the header of this interrupted recording places its checkpoint's index "
			  "beyond the end of the file (the drive lost writes made after it): the "
			  "data up to the checkpoint is checked without it",
			  o->arg);
	v.ev = v.ix.ev;
	v.nev = v.ix.nev;
	if (!rec->complete)
		res->problems |= NVT_VP_INCOMPLETE;
	if (rec->drop_count)
		res->problems |= NVT_VP_DROPS;
	if (rec->valid_bytes == 0)
		res->problems |= NVT_VP_NO_DATA;
	if (rec->valid_bytes % rec->beat_bytes)
		res->problems |= NVT_VP_TAIL;

	if (nvt_source_kind_is_packets(rec->source_kind)) {
		rc = packets_setup(o, &v);
		if (rc < 0)
			goto fail;
	} else {
		rc = nvt_counter_pick(o->check, rec, o->notice, o->arg, &res->counter, &res->err);
		if (rc < 0)
			goto fail;
		res->counter_checked = rc > 0;
	}
	res->pattern_checked = nvt_source_kind_is_pattern(rec->source_kind);
	if (!res->pattern_checked && !res->counter_checked && rec->format == NVT_FMT_FDREC &&
	    begins_with_pattern(&L, rec)) {
		/* an fdrec file has no checksums: with its TPG flag cleared its beats went
		 * unchecked and any damage passed; what is the pattern is checked as the pattern */
		res->pattern_checked = true;
		res->problems |= NVT_VP_KIND;
	}
	v.gap_unit = res->counter_checked ? res->counter.stride : rec->beat_bytes;
	v.content = res->pattern_checked || res->counter_checked || res->packet_checked;
	res->sums_checked = v.ix.ncrc > 0;
	if (res->sums_checked) {
		nvt_sums_check_init(&v.sums, v.ix.crc, v.ix.ncrc, rec->valid_bytes);
		v.sums.on_bad = on_bad_span;
		v.sums.arg = &v;
	}
	if ((v.content || res->sums_checked || res->packets_walked) && rec->valid_bytes) {
		struct nvt_scan_opts so = {.layout = &L,
					   .offset = rec->data_offset,
					   .len = rec->valid_bytes,
					   .chunk_bytes = o->chunk_bytes,
					   .chunks = o->chunks,
					   .qd = o->qd,
					   .engine = o->engine,
					   .on_chunk = on_chunk,
					   .progress = o->progress,
					   .notice = o->notice,
					   .user_arg = o->arg,
					   .arg = &v,
					   .interrupt = o->interrupt};
		struct nvt_scan_stats ss;
		res->chk.on_event = v.cc.counts.on_event = on_check;
		res->chk.arg = v.cc.counts.arg = &v;
		nvt_checker_init(&res->chk, rec->first_seq);
		nvt_counter_check_init(&v.cc, &res->counter);
		if (nvt_scan(&so, &ss, &res->err))
			goto fail;
		if (res->sums_checked)
			sums_result(&v);
		if (res->packets_walked && (v.pkt_rc || !nvt_pcapng_reader_clean(&v.rd))) {
			/* a stream that breaks off: what came before it was checked */
			res->problems |= NVT_VP_CORRUPT;
			res->chk.corrupt++;
			if (o->notice) {
				char msg[640];
				snprintf(msg, sizeof(msg), "%s",
					 v.pkt_rc ? res->err.msg
						  : "the data ends inside a pcapng block");
				o->notice(msg, o->arg);
			}
			memset(&res->err, 0, sizeof(res->err));
		}
	}
	if (v.content && rec->valid_bytes) {
		if (res->counter_checked)
			res->chk = v.cc.counts;
		if (res->packet_checked) {
			uint64_t corrupt = res->chk.corrupt;
			res->chk = v.pc.cc.counts;
			res->chk.corrupt += corrupt;
		}
		/* drops after the last packet (or the last counter) have no gap to show them */
		uint64_t end = res->packet_checked ? v.pkt_end : rec->valid_bytes;
		for (uint64_t i = v.next_ev; i < v.nev; i++) {
			if (v.ev[i].data_offset >= end)
				res->drops_after_end =
					v.ev[i].beats > UINT64_MAX - res->drops_after_end
						? UINT64_MAX
						: res->drops_after_end + v.ev[i].beats;
			else
				res->events_unmatched++;
		}
		if (res->chk.gaps)
			res->problems |= NVT_VP_GAPS;
		if (res->chk.corrupt)
			res->problems |= NVT_VP_CORRUPT;
		if (res->chk.backward)
			res->problems |= NVT_VP_BACKWARD;
		if (res->pattern_checked && res->chk.seen_good &&
		    res->chk.first_seen != rec->first_seq && !res->chk.corrupt)
			res->problems |= NVT_VP_FIRST_SEQ;
		/* in bytes: what the gaps miss against what the recorder dropped */
		int cmp = nvt_mul_cmp(res->chk.gap_beats, v.gap_unit, rec->drop_count,
				      rec->beat_bytes);
		if (!rec->complete) /* the checkpoint's count covers at least the durable data */
			res->drops_match = rec->format == NVT_FMT_FDREC || cmp <= 0;
		else if (rec->format == NVT_FMT_NVTAPE)
			res->drops_match = res->drops_after_end <= rec->drop_count &&
					   nvt_mul_cmp(res->chk.gap_beats, v.gap_unit,
						       rec->drop_count - res->drops_after_end,
						       rec->beat_bytes) == 0 &&
					   !res->gaps_unmatched && !res->events_unmatched;
		else /* fdrec counts drops after the last beat too, without telling them apart */
			res->drops_match = cmp <= 0;
		if (!res->drops_match)
			res->problems |= NVT_VP_MISMATCH;
	} else {
		res->drops_match = true;
		if (!v.content)
			pattern_hint(o, &L, rec);
	}
	nvt_index_clear(&v.ix);
	nvt_pcapng_reader_free(&v.rd);
	res->seconds = (nvt_mono_ns() - t0) / 1e9;
	res->cpu_ns = nvt_thread_cpu_ns() - c0;
	return 0;
fail:
	nvt_index_clear(&v.ix);
	nvt_pcapng_reader_free(&v.rd);
	return -(res->err.code ? res->err.code : EIO);
}
