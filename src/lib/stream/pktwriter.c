/* SPDX-License-Identifier: MIT */
/* The packet sources' pcapng writer over the push API. A block never straddles a ring chunk,
 * so every chunk (and the data up to any chunk boundary) is a run of whole blocks. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "format/pcapng.h"
#include "stream/pktwriter.h"
#include "util/sysutil.h"

/* The current chunk's room in whole 4-byte words (the recording's size limit may end it at
 * any byte; pcapng blocks are words). */
static size_t words(const struct nvt_pktw *w)
{
	return w->p ? w->room - w->room % 4 : 0;
}

/* need bytes fit the room left: exactly, or with a padding block's worth after them (a block
 * never leaves 4 or 8 bytes behind it: a padding block is 12 at least). */
static bool fits(size_t room, size_t need)
{
	return room == need || room >= need + PCAPNG_MIN;
}

/* The padding that need bytes would cost first: the rest of the current chunk when they do
 * not fit there. */
static size_t pad_before(const struct nvt_pktw *w, size_t need)
{
	size_t room = words(w);
	return !w->p || fits(room, need) ? 0 : room;
}

/* Room for need bytes in one chunk, padding the rest of the current chunk first when they do
 * not fit there. */
static enum nvt_pktw_status room_for(struct nvt_pktw *w, size_t need, unsigned flags)
{
	for (bool padded = false;; padded = true) {
		if (!w->p || !w->room) {
			w->p = nvt_recorder_acquire(w->r, &w->room, flags);
			if (!w->p)
				return errno == EAGAIN ? NVT_PKTW_FULL : NVT_PKTW_STOP;
		}
		size_t room = words(w);
		if (fits(room, need))
			return NVT_PKTW_OK;
		if (room < PCAPNG_MIN) /* the size limit's last bytes: never a whole block */
			return NVT_PKTW_STOP;
		if (padded) { /* a whole chunk is too small for it */
			w->too_big_bytes = need;
			return NVT_PKTW_STOP;
		}
		nvt_pcapng_pad(w->p, room);
		nvt_recorder_commit(w->r, room);
		w->bytes += room;
		w->p += room;
		w->room -= room;
		if (!w->room)
			w->p = NULL;
	}
}

static void put(struct nvt_pktw *w, size_t len)
{
	nvt_recorder_commit(w->r, len);
	w->bytes += len;
	w->p += len;
	w->room -= len;
}

void nvt_pktw_init(struct nvt_pktw *w, struct nvt_recorder *r, const struct nvt_source_args *a,
		   bool live)
{
	memset(w, 0, sizeof(*w));
	w->r = r;
	w->flags = live ? NVT_ACQUIRE_NOWAIT : 0;
	w->size_limit = a->size_bytes - a->size_bytes % 4; /* pcapng blocks are 4-byte words */
	w->duration_ns = a->duration_ns;
	w->t0_mono = nvt_mono_ns();
}

int nvt_pktw_start(struct nvt_pktw *w, uint16_t linktype, uint32_t snaplen, const char *ifname,
		   const char *desc)
{
	char appl[48];
	size_t need;

	snprintf(appl, sizeof(appl), "nvtape %s", nvt_version());
	need = 256 + nvt_pcapng_idb_bytes(ifname, desc); /* the SHB is at most 256 bytes */
	if (w->size_limit && w->size_limit < need + PCAPNG_ISB_BYTES) {
		w->at_limit = w->size_limit_hit = true; /* not even the headers fit */
		return NVT_PKTW_STOP;
	}
	/* also after a stop (a capture stopped before its first frame): the stream begins */
	if (room_for(w, need, NVT_ACQUIRE_DRAIN) != NVT_PKTW_OK)
		return NVT_PKTW_STOP;
	size_t n = nvt_pcapng_shb(w->p, appl, "Linux");
	n += nvt_pcapng_idb(w->p + n, linktype, snaplen, ifname, desc);
	put(w, n);
	w->begun = true;
	return 0;
}

bool nvt_pktw_at_limit(struct nvt_pktw *w)
{
	if (!w->at_limit && w->duration_ns && nvt_mono_ns() - w->t0_mono >= w->duration_ns)
		w->at_limit = true;
	return w->at_limit;
}

enum nvt_pktw_status nvt_pktw_reserve(struct nvt_pktw *w, uint32_t caplen, uint8_t **data)
{
	uint32_t need = nvt_pcapng_epb_bytes(caplen);
	enum nvt_pktw_status st;

	if (!w->begun)
		return NVT_PKTW_STOP;
	/* the padding it costs counts: a packet that fits the limit fits the chunk it goes to */
	if (w->size_limit &&
	    w->bytes + pad_before(w, need) + need + PCAPNG_ISB_BYTES > w->size_limit)
		w->at_limit = w->size_limit_hit = true;
	if (nvt_pktw_at_limit(w))
		return NVT_PKTW_STOP;
	st = room_for(w, need, w->flags);
	if (st == NVT_PKTW_OK)
		*data = w->p + PCAPNG_EPB_HDR;
	return st;
}

void nvt_pktw_commit(struct nvt_pktw *w, uint64_t ts_ns, uint32_t caplen, uint32_t origlen)
{
	nvt_pcapng_epb_start(w->p, ts_ns, caplen, origlen);
	put(w, nvt_pcapng_epb_end(w->p, caplen));
	if (!w->packets)
		w->first_ns = ts_ns;
	w->last_ns = ts_ns;
	w->packets++;
	nvt_recorder_source_records(w->r, w->packets); /* the live stats' packets received */
}

void nvt_pktw_dropped(struct nvt_pktw *w, uint64_t packets)
{
	if (packets)
		nvt_recorder_drop(w->r, packets);
}

void nvt_pktw_finish(struct nvt_pktw *w, uint64_t recv, uint64_t drop)
{
	if (!w->begun ||
	    (w->size_limit &&
	     w->bytes + pad_before(w, PCAPNG_ISB_BYTES) + PCAPNG_ISB_BYTES > w->size_limit))
		return;
	if (room_for(w, PCAPNG_ISB_BYTES, NVT_ACQUIRE_DRAIN) != NVT_PKTW_OK)
		return;
	put(w, nvt_pcapng_isb(w->p, w->last_ns ? w->last_ns : nvt_real_ns(), recv, drop,
			      w->first_ns, w->last_ns));
}

int nvt_pktw_check_chunk(const struct nvt_source_args *a, const char *what, const char *unit,
			 uint32_t hdr, uint32_t snaplen, struct nvt_err *err)
{
	uint64_t need = nvt_pcapng_epb_bytes(hdr + snaplen);

	if (a->chunk_bytes < 4096 || need <= a->chunk_bytes)
		return 0; /* none given, or one the recorder refuses */
	nvt_err_param(err,
		      "%s: a ring chunk of %llu KiB cannot hold the largest %s (%u bytes, a "
		      "%llu-byte pcapng block with its headers; a block never straddles two "
		      "chunks): record with --chunk %lluK or more, or keep at most %llu bytes of "
		      "each (snaplen=%llu)",
		      what, (unsigned long long)(a->chunk_bytes >> 10), unit, snaplen,
		      (unsigned long long)need, (unsigned long long)((need + 4095) / 4096 * 4),
		      (unsigned long long)(a->chunk_bytes - PCAPNG_EPB_HDR - 4 - hdr),
		      (unsigned long long)(a->chunk_bytes - PCAPNG_EPB_HDR - 4 - hdr));
	return -EINVAL;
}

int nvt_pktw_fit_error(const struct nvt_pktw *w, const char *what, const char *unit,
		       uint32_t snaplen, struct nvt_err *err)
{
	if (!w->too_big_bytes)
		return 0;
	nvt_err_set(err, EMSGSIZE,
		    "%s: a block of %zu bytes (a %s of up to %u) does not fit a ring chunk: record "
		    "with larger chunks (--chunk) or a smaller snaplen=",
		    what, w->too_big_bytes, unit, snaplen);
	return -EMSGSIZE;
}
