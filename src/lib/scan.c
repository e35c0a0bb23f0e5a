/* Sequential O_DIRECT reading with several reads in flight through the file engine, delivering
 * chunks in order. Reading and checking overlap: while one chunk is checked, qd are read. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "nvtape/engine.h"
#include "nvtape/ring.h"
#include "scan.h"
#include "sysutil.h"

int nvt_scan(const struct nvt_scan_opts *o, struct nvt_scan_stats *st, struct nvt_err *err)
{
	struct nvt_ring mem;
	struct nvt_engine eng;
	struct nvt_engine_params ep = {0};
	uint64_t nchunks = (o->len + o->chunk_bytes - 1) / o->chunk_bytes;
	uint64_t issued = 0, delivered = 0, t0 = nvt_mono_ns(), c0 = nvt_thread_cpu_ns();
	uint8_t *done;
	int rc = 0;
	bool stop = false;

	memset(st, 0, sizeof(*st));
	if (nvt_ring_create(
		    &mem, (unsigned)(nchunks < o->chunks ? (nchunks < 2 ? 2 : nchunks) : o->chunks),
		    o->chunk_bytes, err))
		return -ENOMEM;
	if (mem.notice[0] && o->notice)
		o->notice(mem.notice, o->arg);
	ep.path = o->path;
	ep.qd = o->qd < mem.nchunks ? o->qd : mem.nchunks;
	ep.bufs = mem.mem;
	ep.buf_bytes = o->chunk_bytes;
	ep.nbufs = mem.nchunks;
	ep.wake_fd = -1;
	done = calloc(mem.nchunks, 1);
	if (!done || nvt_engine_open(&eng, "file", &ep, err)) {
		if (!done)
			nvt_err_set(err, ENOMEM, "out of memory");
		nvt_engine_close(&eng);
		nvt_ring_destroy(&mem);
		free(done);
		return -EIO;
	}
	while (delivered < nchunks && !rc) {
		while (!stop && issued < nchunks && issued - delivered < mem.nchunks &&
		       eng.inflight < ep.qd) {
			uint64_t pos = issued * o->chunk_bytes;
			uint64_t len =
				o->len - pos < o->chunk_bytes ? o->len - pos : o->chunk_bytes;
			struct nvt_io io = {.dir = NVT_IO_READ,
					    .buf = nvt_ring_chunk(&mem, issued),
					    .len = (len + 4095) / 4096 * 4096,
					    .offset = o->offset + pos,
					    .buf_index = (int)(issued % mem.nchunks),
					    .tag = issued};
			if (eng.ops->queue(&eng, &io))
				break;
			issued++;
			if (eng.inflight > st->max_inflight)
				st->max_inflight = eng.inflight;
		}
		if (stop && eng.inflight == 0)
			break;
		eng.ops->submit(&eng);
		/* deliver what is complete, in order */
		while (!stop && delivered < issued && done[delivered % mem.nchunks]) {
			uint64_t pos = delivered * o->chunk_bytes;
			uint64_t len =
				o->len - pos < o->chunk_bytes ? o->len - pos : o->chunk_bytes;
			done[delivered % mem.nchunks] = 0;
			if (o->on_chunk(o->arg, nvt_ring_chunk(&mem, delivered), len,
					o->offset + pos))
				stop = true;
			st->bytes += len;
			delivered++;
			if (o->progress)
				o->progress(st->bytes, o->len, o->arg);
		}
		if (stop && eng.inflight == 0)
			break;
		if (delivered == nchunks)
			break;
		struct nvt_io_done d[64];
		int n = eng.ops->reap(&eng, d, 64, 1000000000);
		if (n < 0) {
			nvt_err_set(err, -n, "waiting for reads: %s", strerror(-n));
			rc = n;
		}
		for (int i = 0; i < n && !rc; i++) {
			uint64_t k = d[i].tag, pos = k * o->chunk_bytes;
			uint64_t need =
				o->len - pos < o->chunk_bytes ? o->len - pos : o->chunk_bytes;
			if (d[i].res < (int64_t)need) {
				nvt_err_set(
					err, d[i].res < 0 ? (int)-d[i].res : EIO,
					"read of %llu bytes at offset %llu: %s",
					(unsigned long long)need,
					(unsigned long long)(o->offset + pos),
					d[i].res < 0
						? strerror((int)-d[i].res)
						: "short read (file shorter than its header says)");
				rc = -EIO;
				break;
			}
			done[k % mem.nchunks] = 1;
		}
	}
	/* let reads still in flight land before the memory goes away */
	while (eng.inflight) {
		struct nvt_io_done d[64];
		if (eng.ops->reap(&eng, d, 64, 1000000000) < 0)
			break;
	}
	st->seconds = (nvt_mono_ns() - t0) / 1e9;
	st->io_cpu_ns = nvt_thread_cpu_ns() - c0;
	nvt_engine_close(&eng);
	nvt_ring_destroy(&mem);
	free(done);
	return rc;
}
