// SPDX-License-Identifier: GPL-2.0
/*
 * fdrec_emu: an emulation of the FPGA Drive Recorder's kernel driver (fdrec, FDREC_API_VERSION 1,
 * fdrec_core register map 1.1) for nvtape's guest tests. It registers /dev/fdrec0, a misc device
 * with one opener, and implements the driver's ioctl interface (fdrec_uapi.h, the driver's own
 * layout) with the semantics its docs/source/driver.md documents, on an emulated fabric:
 *
 * - record: a test pattern generator ({seq, ~seq} 16-byte beats at TPG_RATE_INC's rate) feeds an
 *   ingest FIFO that drops (and counts) beats when full; the packetizer drains it into the
 *   registered buffers in queue order, one buffer per packet, when the DMA owns one. A kernel
 *   thread advances the fabric about once a millisecond.
 * - play: the MM2S "DMA" copies submitted buffers into an egress FIFO of egr_depth beats; the
 *   checker takes beats out at CHK_RATE_INC's rate and counts errors, gaps, gap beats and
 *   underflows.
 *
 * Every check and error code follows the driver (sw/fdrec-driver/fdrec.c of the same repository,
 * read for behaviour the docs leave open). What the emulation had to guess is marked "Guess:".
 *
 * Buffers: as the driver, 2 MB aligned user addresses, sizes a multiple of 2 MB up to 62 MB, and
 * all buffers together at most 511 DMA descriptors (one per physically contiguous run of up to
 * max_sg_len bytes): 4 KiB pages that happen not to be contiguous are refused with -E2BIG as on
 * the hardware, so applications must use hugepages (the guest suite reserves them).
 *
 * WAIT_FILLED's drop_count is, as in the driver, the FIFO's cumulative drop counter when the
 * buffer completed: it may already count beats dropped after the buffer's last beat.
 *
 * sysfs (/sys/class/misc/fdrec0/): all of the driver's attributes, which it too puts on the
 * misc device (rate_bps, tpg_enable, drop_count, overflow, beats_in, beats_out, fifo_hwm,
 * fifo_depth, seq_next, src_clk_hz, dp_clk_hz, version, chk_enable, chk_rate_bps, chk_*, egr_*),
 * and four the driver does not have: the test hooks inject_dma_error (write 1: the buffer the
 * DMA is filling or reading completes with a DMA error and the channel halts) and inject_drops
 * (write N: the next N beats the generator offers are dropped at the ingest FIFO, as an
 * overflow would), and the views fifo_level (ingest FIFO) and dma_errors.
 * Module parameters: the driver's stop_drain_ms, and fifo_depth / egr_depth / src_clk_hz /
 * rate_bps for the emulated design.
 */
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/miscdevice.h>
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/vmalloc.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/poll.h>
#include <linux/kthread.h>
#include <linux/delay.h>
#include <linux/wait.h>
#include <linux/mutex.h>
#include <linux/ktime.h>
#include <linux/math64.h>
#include <linux/device.h>
#include <linux/string.h>

#include "fdrec_uapi.h"

static unsigned int fifo_depth = 4096;
module_param(fifo_depth, uint, 0444);
MODULE_PARM_DESC(fifo_depth, "ingest FIFO depth in beats (default 4096)");
static unsigned int egr_depth = 4096;
module_param(egr_depth, uint, 0444);
MODULE_PARM_DESC(egr_depth, "egress FIFO depth in beats (default 4096)");
static unsigned int src_clk_hz = 200000000;
module_param(src_clk_hz, uint, 0444);
MODULE_PARM_DESC(src_clk_hz, "source clock in Hz (default 200 MHz)");
static unsigned long rate_bps = 10000000;
module_param(rate_bps, ulong, 0444);
MODULE_PARM_DESC(rate_bps, "TPG rate programmed at load, bytes/s (default 10 MB/s)");
static unsigned int stop_drain_ms = 5000;
module_param(stop_drain_ms, uint, 0644);
MODULE_PARM_DESC(stop_drain_ms, "STOP: max time to let queued buffers fill before the DMA is "
				"terminated (ms)");

#define HW_VERSION   0x00010001u /* fdrec_core 1.1: checker and egress FIFO */
#define DP_CLK_HZ    250000000u  /* Guess: the reference design's datapath clock */
#define MAX_SG_LEN   67108863u   /* 2^26 - 1: the reference design's AXI DMA (probe log) */
#define XDMA_NUM_BDS 512
#define DMA_DEPTH    2 /* buffers in the DMA: one being filled, one pending */
#define RATE_FRAC    31
#define RATE_ONE     (1ull << RATE_FRAC)
#define MAX_RUNS     512

enum bstate { B_FREE, B_QUEUED, B_READY, B_USER };

struct ebuf {
	struct page **pages;
	unsigned long npages;
	void *va;
	enum bstate st;
	u64 len; /* play: bytes submitted */
	u64 bytes, seq, drop_count;
	u32 flags;
};

struct run {
	u64 seq, n;
};

static struct fdrec {
	struct mutex lock;
	wait_queue_head_t wq;  /* WAIT_FILLED, PLAY_WAIT_DONE, poll, STOP's drain */
	wait_queue_head_t kwq; /* the fabric thread */
	struct task_struct *thr;
	bool in_use;
	/* the registered set */
	struct ebuf *buf;
	u32 nbufs;
	u64 buf_size;
	u32 dir;
	/* session */
	bool running, accepting, started_tpg, started_chk, chk_pending, dma_error, dma_halted;
	u32 q[FDREC_MAX_BUFS], q_h, q_n; /* the DMA queue: the first DMA_DEPTH are in the DMA */
	u32 rdy[FDREC_MAX_BUFS], rdy_h, rdy_n;
	u64 cur_off; /* bytes of q's head filled (record) or read (play) */
	u64 fill_seq, bytes_filled;
	u32 dma_errors;
	/* fabric registers */
	u64 rate_inc, chk_rate_inc;
	bool tpg_enable, pkt_enable, chk_enable;
	u64 tpg_seq, drop_count, beats_in, beats_out;
	u32 fifo_level, fifo_hwm, overflow;
	u64 gen_t0, gen_done; /* beats the generator offered since gen_t0 */
	struct run runs[MAX_RUNS];
	u32 runs_h, runs_n;
	u64 inject_drops;
	bool inject_dma;
	/* checker and egress FIFO */
	u64 *egr; /* egr_depth beats, two u64 each */
	u32 egr_h, egr_level;
	u64 egr_beats_in, egr_discard;
	u64 chk_beats, chk_errors, chk_gaps, chk_gap_beats, chk_underflows, chk_last_seq;
	u64 chk_expect, chk_pending_uf, sink_t0, sink_done;
	bool chk_seen;
} S;

/* ---- the fabric ---- */

/* bytes/s for a Q1.31 increment per source clock, as the driver converts it back */
static u64 inc_to_rate(u64 inc)
{
	return mul_u64_u64_div_u64(min(inc, RATE_ONE), (u64)src_clk_hz * FDREC_BEAT_BYTES,
				   RATE_ONE);
}

static u64 rate_to_inc(u64 rate)
{
	u64 max = (u64)src_clk_hz * FDREC_BEAT_BYTES;

	return min(mul_u64_u64_div_u64(min(rate, max), RATE_ONE, max), RATE_ONE);
}

/* beats a rate increment yields between t0 and now */
static u64 beats_since(u64 inc, u64 t0)
{
	return mul_u64_u64_div_u64(inc * src_clk_hz, ktime_get_ns() - t0, RATE_ONE * NSEC_PER_SEC);
}

static void fifo_push(u64 seq, u64 n)
{
	struct run *t;

	if (S.runs_n) {
		t = &S.runs[(S.runs_h + S.runs_n - 1) % MAX_RUNS];
		if (t->seq + t->n == seq) {
			t->n += n;
			return;
		}
	}
	t = &S.runs[(S.runs_h + S.runs_n) % MAX_RUNS];
	t->seq = seq;
	t->n = n;
	S.runs_n++;
}

/* the generator offers n beats to the ingest FIFO */
static void offer(u64 n)
{
	while (n) {
		u64 space = fifo_depth - S.fifo_level, k;

		if (S.inject_drops || !space || S.runs_n == MAX_RUNS) {
			/* dropped: injected, the FIFO full, or (never at these rates) more gaps in
			 * the FIFO than the emulation describes */
			k = S.inject_drops ? min(n, S.inject_drops) : n;
			if (S.inject_drops)
				S.inject_drops -= k;
			else if (space)
				k = min(n, space);
			S.drop_count += k;
			S.overflow = 1;
		} else {
			k = min(n, space);
			fifo_push(S.tpg_seq, k);
			S.fifo_level += k;
			S.fifo_hwm = max(S.fifo_hwm, S.fifo_level);
		}
		S.beats_in += k;
		S.tpg_seq += k;
		n -= k;
	}
}

static void generate(void)
{
	u64 due;

	if (!S.tpg_enable || !S.rate_inc)
		return;
	due = beats_since(S.rate_inc, S.gen_t0);
	if (due > S.gen_done) {
		offer(due - S.gen_done);
		S.gen_done = due;
	}
}

/* the generator's time base starts again (enable, rate change: the caller generated up to now
 * under the old settings) */
static void gen_rebase(void)
{
	S.gen_t0 = ktime_get_ns();
	S.gen_done = 0;
}

static void fill_pattern(u64 *p, u64 seq, u64 n)
{
	u64 i;

	for (i = 0; i < n; i++) {
		p[2 * i] = cpu_to_le64(seq + i);
		p[2 * i + 1] = cpu_to_le64(~(seq + i));
	}
}

static u64 fifo_pop(u64 *dst, u64 max)
{
	u64 done = 0;

	while (done < max && S.runs_n) {
		struct run *h = &S.runs[S.runs_h];
		u64 k = min(h->n, max - done);

		if (dst)
			fill_pattern(dst + 2 * done, h->seq, k);
		h->seq += k;
		h->n -= k;
		done += k;
		if (!h->n) {
			S.runs_h = (S.runs_h + 1) % MAX_RUNS;
			S.runs_n--;
		}
	}
	S.fifo_level -= done;
	return done;
}

static void q_push(u32 idx)
{
	S.buf[idx].st = B_QUEUED;
	S.q[(S.q_h + S.q_n) % FDREC_MAX_BUFS] = idx;
	S.q_n++;
}

static u32 q_pop(void)
{
	u32 idx = S.q[S.q_h];

	S.q_h = (S.q_h + 1) % FDREC_MAX_BUFS;
	S.q_n--;
	S.cur_off = 0;
	return idx;
}

/* the DMA completes q's head: ready for WAIT_FILLED / PLAY_WAIT_DONE */
static void complete_head(u64 bytes, u32 flags)
{
	u32 idx = q_pop();
	struct ebuf *b = &S.buf[idx];

	b->bytes = bytes;
	b->flags = flags;
	b->drop_count = S.dir == FDREC_DIR_RECORD ? S.drop_count : 0;
	b->seq = S.fill_seq++;
	S.bytes_filled += bytes;
	b->st = B_READY;
	S.rdy[(S.rdy_h + S.rdy_n) % FDREC_MAX_BUFS] = idx;
	S.rdy_n++;
	wake_up_all(&S.wq);
}

/* the DMA reports an error on the buffer at q's head and the channel halts. Guess: the driver
 * documents only the flag and -EIO; the emulation hands over what the buffer holds (record) or
 * what the DMA read (play) and completes nothing after it. */
static void dma_fail(void)
{
	S.inject_dma = false;
	S.dma_errors++;
	S.dma_error = true;
	S.dma_halted = true;
	if (S.q_n)
		complete_head(S.cur_off,
			      FDREC_FILLED_ERROR |
				      (S.dir == FDREC_DIR_RECORD && S.cur_off < S.buf_size
					       ? FDREC_FILLED_SHORT
					       : 0));
	wake_up_all(&S.wq);
}

/* the packetizer moves FIFO beats into the buffers the DMA owns */
static void packetize(void)
{
	while (S.pkt_enable && !S.dma_halted && S.fifo_level && S.q_n && S.accepting) {
		struct ebuf *b = &S.buf[S.q[S.q_h]];
		u64 got = fifo_pop((u64 *)((u8 *)b->va + S.cur_off),
				   (S.buf_size - S.cur_off) / FDREC_BEAT_BYTES);

		S.beats_out += got;
		S.cur_off += got * FDREC_BEAT_BYTES;
		if (S.cur_off == S.buf_size)
			complete_head(S.buf_size, 0);
	}
}

/* the MM2S: submitted beats into the egress FIFO while it has room */
static void mm2s(void)
{
	if (S.dir != FDREC_DIR_PLAY || !S.running)
		return;
	while (!S.dma_halted && S.q_n && S.egr_level < egr_depth) {
		struct ebuf *b = &S.buf[S.q[S.q_h]];
		u64 left = (b->len - S.cur_off) / FDREC_BEAT_BYTES;
		u32 tail = (S.egr_h + S.egr_level) % egr_depth;
		u64 k = min3(left, (u64)(egr_depth - S.egr_level), (u64)(egr_depth - tail));

		memcpy(S.egr + 2 * tail, (u8 *)b->va + S.cur_off, k * FDREC_BEAT_BYTES);
		S.egr_level += k;
		S.egr_beats_in += k;
		S.cur_off += k * FDREC_BEAT_BYTES;
		if (S.cur_off == b->len)
			complete_head(b->len, 0);
	}
}

static void check_beat(u64 s, u64 c)
{
	S.chk_beats++;
	S.chk_underflows += S.chk_pending_uf; /* the sink went without data, and more came */
	S.chk_pending_uf = 0;
	/* Guess: a corrupt beat counts as an error, advances the expected sequence by one and is
	 * not the "last good beat" */
	if (c != ~s) {
		S.chk_errors++;
		S.chk_expect++;
		return;
	}
	/* the first beat after a reset sets the expected sequence */
	if (S.chk_seen && s != S.chk_expect) {
		if (s > S.chk_expect) {
			S.chk_gaps++;
			S.chk_gap_beats += s - S.chk_expect;
		} else {
			S.chk_errors++; /* backwards (sysfs chk_errors: "going backwards") */
		}
	}
	S.chk_seen = true;
	S.chk_expect = s + 1;
	S.chk_last_seq = s;
}

/* the checker takes beats at its rate while enabled (disabled, it holds TREADY low) */
static void sink(void)
{
	u64 due, want;

	if (!S.chk_enable)
		return;
	due = beats_since(S.chk_rate_inc, S.sink_t0);
	if (due <= S.sink_done)
		return;
	want = due - S.sink_done;
	S.sink_done = due;
	while (want) {
		if (!S.egr_level)
			mm2s();
		if (!S.egr_level)
			break;
		check_beat(le64_to_cpu(S.egr[2 * S.egr_h]), le64_to_cpu(S.egr[2 * S.egr_h + 1]));
		S.egr_h = (S.egr_h + 1) % egr_depth;
		S.egr_level--;
		want--;
	}
	/* ticks without data count once more data follows */
	if (want && S.chk_seen)
		S.chk_pending_uf += want;
	mm2s();
}

static void tick(void)
{
	if (S.inject_dma && S.running && S.q_n && !S.dma_halted)
		dma_fail();
	generate();
	if (S.running && S.dir == FDREC_DIR_RECORD)
		packetize();
	if (S.dir == FDREC_DIR_PLAY && S.running)
		mm2s();
	sink();
}

static bool fabric_busy(void)
{
	return S.running || (S.tpg_enable && S.rate_inc) || S.chk_enable;
}

static int fdrec_thread(void *arg)
{
	while (!kthread_should_stop()) {
		wait_event_interruptible(S.kwq, READ_ONCE(S.running) || READ_ONCE(S.tpg_enable) ||
							READ_ONCE(S.chk_enable) ||
							kthread_should_stop());
		if (kthread_should_stop())
			break;
		mutex_lock(&S.lock);
		if (fabric_busy())
			tick();
		mutex_unlock(&S.lock);
		usleep_range(500, 1000);
	}
	return 0;
}

/* GLOBAL_CTRL.SOFT_RST: FIFOs flushed, every counter cleared, packetizer, TPG and checker off.
 * The rate registers are kept. Guess: the sticky overflow and the high-water mark are counters
 * here (the docs: "counters cleared"). */
static void soft_reset(void)
{
	S.tpg_enable = S.pkt_enable = S.chk_enable = false;
	S.tpg_seq = S.drop_count = S.beats_in = S.beats_out = 0;
	S.fifo_level = S.fifo_hwm = S.overflow = 0;
	S.runs_h = S.runs_n = 0;
	S.egr_h = S.egr_level = 0;
	S.egr_beats_in = S.egr_discard = 0;
	S.chk_beats = S.chk_errors = S.chk_gaps = S.chk_gap_beats = S.chk_underflows = 0;
	S.chk_last_seq = S.chk_expect = S.chk_pending_uf = 0;
	S.chk_seen = false;
}

/* CHK_CTRL.RESET: counters cleared, expected sequence := the next first beat */
static void chk_reset(void)
{
	S.chk_beats = S.chk_errors = S.chk_gaps = S.chk_gap_beats = S.chk_underflows = 0;
	S.chk_last_seq = S.chk_expect = S.chk_pending_uf = 0;
	S.chk_seen = false;
}

static void chk_set_enable(bool on)
{
	if (on && !S.chk_enable) {
		S.sink_t0 = ktime_get_ns();
		S.sink_done = 0;
	}
	S.chk_enable = on;
	wake_up_interruptible(&S.kwq);
}

/* ---- buffers ---- */

static void free_bufs(void)
{
	u32 i;

	for (i = 0; i < S.nbufs; i++) {
		struct ebuf *b = &S.buf[i];

		if (b->va)
			vunmap(b->va);
		if (b->npages)
			unpin_user_pages_dirty_lock(b->pages, b->npages, S.dir == FDREC_DIR_RECORD);
		kvfree(b->pages);
	}
	kfree(S.buf);
	S.buf = NULL;
	S.nbufs = 0;
	S.buf_size = 0;
	S.q_n = S.rdy_n = 0;
}

/* DMA descriptors a buffer needs: one per physically contiguous run, split at max_sg_len */
static u32 buf_bds(const struct ebuf *b)
{
	u64 run = PAGE_SIZE;
	u32 n = 0;
	unsigned long i;

	for (i = 1; i <= b->npages; i++) {
		if (i < b->npages && page_to_pfn(b->pages[i]) == page_to_pfn(b->pages[i - 1]) + 1) {
			run += PAGE_SIZE;
			continue;
		}
		n += DIV_ROUND_UP(run, MAX_SG_LEN);
		run = PAGE_SIZE;
	}
	return n;
}

static int pin_buf(struct ebuf *b, u64 uaddr)
{
	unsigned long n = S.buf_size >> PAGE_SHIFT;
	long got;

	b->pages = kvcalloc(n, sizeof(*b->pages), GFP_KERNEL);
	if (!b->pages)
		return -ENOMEM;
	while (b->npages < n) {
		got = pin_user_pages_fast(uaddr + (b->npages << PAGE_SHIFT),
					  min_t(unsigned long, n - b->npages, INT_MAX),
					  FOLL_WRITE | FOLL_LONGTERM, b->pages + b->npages);
		if (got <= 0)
			return got ? got : -EFAULT;
		b->npages += got;
	}
	b->va = vmap(b->pages, n, VM_MAP, PAGE_KERNEL);
	return b->va ? 0 : -ENOMEM;
}

static int register_bufs(struct fdrec_bufs __user *ua)
{
	struct fdrec_bufs a;
	u64 *addrs;
	u32 i, bds = 0;
	int rc = 0;

	if (copy_from_user(&a, ua, sizeof(a)))
		return -EFAULT;
	if (a.flags & ~FDREC_BUFS_DIR_MASK)
		return -EINVAL;
	if (S.running)
		return -EBUSY;
	if (S.dir == FDREC_DIR_RECORD)
		for (i = 0; i < S.nbufs; i++)
			if (S.buf[i].st == B_USER)
				return -EBUSY; /* maybe still in an O_DIRECT write */
	/* as the driver: the old set goes first, also when the new one is refused */
	free_bufs();
	if (!a.count)
		return 0;
	S.dir = a.flags & FDREC_BUFS_DIR_MASK;
	if (a.count > FDREC_MAX_BUFS || a.count < 2)
		return -EINVAL;
	if (!a.buf_size || a.buf_size % FDREC_BUF_ALIGN || a.buf_size > FDREC_MAX_BUF_SIZE ||
	    a.buf_size / FDREC_BEAT_BYTES > FDREC_MAX_PKT_LEN)
		return -EINVAL;
	addrs = memdup_user(u64_to_user_ptr(a.addrs), a.count * sizeof(u64));
	if (IS_ERR(addrs))
		return PTR_ERR(addrs);
	S.buf = kcalloc(a.count, sizeof(*S.buf), GFP_KERNEL);
	if (!S.buf) {
		rc = -ENOMEM;
		goto out;
	}
	S.buf_size = a.buf_size;
	for (i = 0; i < a.count; i++) {
		struct ebuf *b = &S.buf[i];

		if (addrs[i] % FDREC_BUF_ALIGN) {
			rc = -EINVAL;
			break;
		}
		S.nbufs = i + 1;
		rc = pin_buf(b, addrs[i]);
		if (rc)
			break;
		bds += buf_bds(b);
	}
	if (!rc && bds >= XDMA_NUM_BDS) {
		pr_err("fdrec_emu: %u buffers need %u DMA BDs, the channel has %u\n", a.count, bds,
		       XDMA_NUM_BDS);
		rc = -E2BIG;
	}
	if (rc)
		free_bufs();
out:
	kfree(addrs);
	return rc;
}

/* ---- record ---- */

static void fill_stats(struct fdrec_stats *st)
{
	u32 i;

	memset(st, 0, sizeof(*st));
	st->drop_count = S.drop_count;
	st->beats_in = S.beats_in;
	st->beats_out = S.beats_out;
	st->seq_next = S.tpg_seq;
	st->fifo_hwm = S.fifo_hwm;
	st->fifo_depth = fifo_depth;
	st->overflow = S.overflow;
	st->running = S.running;
	st->bufs_filled = S.fill_seq;
	st->bytes_filled = S.bytes_filled;
	st->dma_errors = S.dma_errors;
	for (i = 0; i < S.nbufs; i++) {
		if (S.buf[i].st == B_QUEUED)
			st->bufs_dma++;
		else if (S.buf[i].st == B_READY)
			st->bufs_ready++;
		else if (S.buf[i].st == B_USER)
			st->bufs_user++;
	}
}

static void session_reset(void)
{
	S.q_h = S.q_n = S.rdy_h = S.rdy_n = 0;
	S.cur_off = 0;
	S.fill_seq = S.bytes_filled = 0;
	S.dma_errors = 0;
	S.dma_error = S.dma_halted = false;
}

static int start_record(struct fdrec_start __user *ua)
{
	struct fdrec_start a;
	bool tpg_was_on = S.tpg_enable;
	u32 i;

	if (copy_from_user(&a, ua, sizeof(a)))
		return -EFAULT;
	if (a.flags & ~FDREC_START_TPG)
		return -EINVAL;
	if (S.running)
		return -EBUSY;
	if (S.nbufs < 2)
		return -ENOBUFS;
	if (S.dir != FDREC_DIR_RECORD)
		return -EINVAL;
	for (i = 0; i < S.nbufs; i++)
		if (S.buf[i].st != B_FREE)
			return -EBUSY;
	generate();
	soft_reset();
	session_reset();
	for (i = 0; i < S.nbufs; i++)
		q_push(i);
	S.accepting = true;
	S.running = true;
	S.pkt_enable = true;
	a.start_time_ns = ktime_get_real_ns();
	a.first_seq = 0; /* SOFT_RST cleared the sequence: the first beat recorded is 0 */
	S.started_tpg = a.flags & FDREC_START_TPG;
	if (S.started_tpg || tpg_was_on) {
		S.tpg_enable = true;
		gen_rebase();
	}
	a.pkt_len = S.buf_size / FDREC_BEAT_BYTES;
	memset(a.reserved, 0, sizeof(a.reserved));
	wake_up_interruptible(&S.kwq);
	return copy_to_user(ua, &a, sizeof(a)) ? -EFAULT : 0;
}

static u32 bufs_in_dma(void)
{
	return min_t(u32, S.q_n, DMA_DEPTH);
}

/* STOP: the buffers the DMA owns (at most two) fill up before the channel stops, the generator
 * at full rate meanwhile; their data and everything queued or not collected is discarded. */
static void stop_record(struct fdrec_stats *st)
{
	u32 i;

	if (!S.running) {
		if (st)
			fill_stats(st);
		return;
	}
	tick();
	if (st)
		fill_stats(st);
	S.accepting = false;
	if (!S.dma_halted && bufs_in_dma()) {
		u64 need = (u64)bufs_in_dma() * S.buf_size / FDREC_BEAT_BYTES -
			   S.cur_off / FDREC_BEAT_BYTES;

		if (S.tpg_enable) {
			/* the driver runs a generator START enabled at full rate for the drain.
			 * Guess: so does the emulation for one enabled by hand (sysfs tpg_enable),
			 * and the drain drops no beat (the DMA empties the FIFO far faster than the
			 * emulated rates fill it) */
			u64 k = min_t(u64, S.fifo_level, need);

			fifo_pop(NULL, k);
			S.tpg_seq += need - k;
			S.beats_in += need - k;
			S.beats_out += need;
			S.fill_seq += bufs_in_dma();
			S.bytes_filled += (u64)bufs_in_dma() * S.buf_size;
		} else {
			/* no source: the driver waits stop_drain_ms, then terminates anyway */
			mutex_unlock(&S.lock);
			msleep_interruptible(stop_drain_ms);
			mutex_lock(&S.lock);
			pr_info("fdrec_emu: STOP: source stalled, the DMA still owns buffers after "
				"%u ms\n",
				stop_drain_ms);
		}
	}
	S.pkt_enable = false;
	if (S.started_tpg)
		S.tpg_enable = false;
	S.started_tpg = false;
	S.running = false;
	for (i = 0; i < S.nbufs; i++)
		if (S.buf[i].st == B_QUEUED || S.buf[i].st == B_READY)
			S.buf[i].st = B_FREE;
	S.q_n = S.rdy_n = 0;
	S.cur_off = 0;
	if (st)
		st->running = 0;
	wake_up_all(&S.wq);
}

/* WAIT_FILLED and PLAY_WAIT_DONE: the next buffer of the ready list, in completion order */
static int wait_ready(u32 dir, s32 timeout_ms, struct ebuf **out, u32 *index)
{
	long tmo = timeout_ms < 0 ? MAX_SCHEDULE_TIMEOUT : msecs_to_jiffies(timeout_ms);

	for (;;) {
		if (mutex_lock_interruptible(&S.lock))
			return -EINTR;
		if (S.dir != dir) {
			mutex_unlock(&S.lock);
			return -EINVAL;
		}
		if (S.rdy_n) {
			*index = S.rdy[S.rdy_h];
			S.rdy_h = (S.rdy_h + 1) % FDREC_MAX_BUFS;
			S.rdy_n--;
			*out = &S.buf[*index];
			(*out)->st = B_USER;
			return 0; /* locked */
		}
		if (!S.running) {
			mutex_unlock(&S.lock);
			return -ENODATA;
		}
		mutex_unlock(&S.lock);
		if (!tmo)
			return -ETIMEDOUT;
		tmo = wait_event_interruptible_timeout(
			S.wq, READ_ONCE(S.rdy_n) || !READ_ONCE(S.running), tmo);
		if (tmo < 0)
			return -EINTR;
		if (!tmo && !READ_ONCE(S.rdy_n))
			return -ETIMEDOUT;
	}
}

static int wait_filled(struct fdrec_filled __user *ua)
{
	struct fdrec_filled a;
	struct ebuf *b;
	int rc;

	if (copy_from_user(&a, ua, sizeof(a)))
		return -EFAULT;
	rc = wait_ready(FDREC_DIR_RECORD, a.timeout_ms, &b, &a.index);
	if (rc)
		return rc;
	a.bytes = b->bytes;
	a.seq = b->seq;
	a.drop_count = b->drop_count;
	a.flags = b->flags;
	mutex_unlock(&S.lock);
	a.reserved0 = 0;
	memset(a.reserved, 0, sizeof(a.reserved));
	if (copy_to_user(ua, &a, sizeof(a)))
		return -EFAULT;
	return a.flags & FDREC_FILLED_ERROR ? -EIO : 0;
}

static int release_buf(struct fdrec_release __user *ua)
{
	struct fdrec_release a;

	if (copy_from_user(&a, ua, sizeof(a)))
		return -EFAULT;
	if (a.flags || a.index >= S.nbufs || S.dir != FDREC_DIR_RECORD)
		return -EINVAL;
	if (S.buf[a.index].st != B_USER)
		return -EINVAL; /* the driver owns it */
	if (S.accepting) {
		q_push(a.index);
		packetize();
	} else {
		S.buf[a.index].st = B_FREE;
	}
	return 0;
}

/* ---- play ---- */

static void fill_play_stats(struct fdrec_play_stats *st)
{
	u32 i;

	memset(st, 0, sizeof(*st));
	st->chk.beats = S.chk_beats;
	st->chk.errors = S.chk_errors;
	st->chk.gaps = S.chk_gaps;
	st->chk.gap_beats = S.chk_gap_beats;
	st->chk.underflows = S.chk_underflows;
	st->chk.last_seq = S.chk_last_seq;
	st->chk.rate_bps = inc_to_rate(S.chk_rate_inc);
	st->chk.enabled = S.chk_enable;
	st->egr_beats_in = S.egr_beats_in;
	st->egr_discard = S.egr_discard;
	st->egr_level = S.egr_level;
	st->egr_depth = egr_depth;
	st->running = S.running && S.dir == FDREC_DIR_PLAY;
	if (S.dir != FDREC_DIR_PLAY)
		return;
	st->bufs_done = S.fill_seq;
	st->bytes_done = S.bytes_filled;
	st->dma_errors = S.dma_errors;
	for (i = 0; i < S.nbufs; i++) {
		if (S.buf[i].st == B_QUEUED)
			st->bufs_dma++;
		else if (S.buf[i].st == B_READY)
			st->bufs_ready++;
	}
}

static int play_start(struct fdrec_play_start __user *ua)
{
	struct fdrec_play_start a;
	u32 i;

	if (copy_from_user(&a, ua, sizeof(a)))
		return -EFAULT;
	if (a.flags & ~FDREC_PLAY_CHECK)
		return -EINVAL;
	if (S.running)
		return -EBUSY;
	if (S.nbufs < 2)
		return -ENOBUFS;
	if (S.dir != FDREC_DIR_PLAY)
		return -EINVAL;
	S.started_chk = a.flags & FDREC_PLAY_CHECK;
	S.chk_pending = S.started_chk;
	if (S.started_chk) {
		generate();
		soft_reset(); /* the checker reset too, ENABLE = 0 until the first submit */
	}
	session_reset();
	for (i = 0; i < S.nbufs; i++)
		S.buf[i].st = B_FREE;
	S.accepting = true;
	S.running = true;
	a.start_time_ns = ktime_get_real_ns();
	a.reserved0 = 0;
	memset(a.reserved, 0, sizeof(a.reserved));
	wake_up_interruptible(&S.kwq);
	return copy_to_user(ua, &a, sizeof(a)) ? -EFAULT : 0;
}

static int play_submit(struct fdrec_play_submit __user *ua)
{
	struct fdrec_play_submit a;
	struct ebuf *b;

	if (copy_from_user(&a, ua, sizeof(a)))
		return -EFAULT;
	if (S.dir != FDREC_DIR_PLAY || a.flags || a.index >= S.nbufs)
		return -EINVAL;
	if (!a.bytes || a.bytes > S.buf_size || a.bytes % FDREC_BEAT_BYTES)
		return -EINVAL;
	if (!S.running || !S.accepting)
		return -EPIPE;
	b = &S.buf[a.index];
	if (b->st != B_FREE && b->st != B_USER)
		return -EBUSY; /* the driver still owns it */
	b->len = a.bytes;
	q_push(a.index);
	mm2s();
	if (S.dma_error)
		return -EIO;
	/* the driver enables the checker PLAY_START reset once the egress FIFO has primed (31/32
	 * full or the whole first buffer); the emulated MM2S fills it at once */
	if (S.chk_pending) {
		S.chk_pending = false;
		chk_set_enable(true);
	}
	return 0;
}

static int play_wait_done(struct fdrec_play_done __user *ua)
{
	struct fdrec_play_done a;
	struct ebuf *b;
	int rc;

	if (copy_from_user(&a, ua, sizeof(a)))
		return -EFAULT;
	rc = wait_ready(FDREC_DIR_PLAY, a.timeout_ms, &b, &a.index);
	if (rc)
		return rc;
	a.bytes = b->bytes;
	a.seq = b->seq;
	a.flags = b->flags & FDREC_DONE_ERROR;
	mutex_unlock(&S.lock);
	a.reserved0 = 0;
	memset(a.reserved, 0, sizeof(a.reserved));
	if (copy_to_user(ua, &a, sizeof(a)))
		return -EFAULT;
	return a.flags & FDREC_DONE_ERROR ? -EIO : 0;
}

/* PLAY_STOP: the (at most two) buffers in the DMA drain into the egress FIFO's discard path
 * (EGR_CTRL.FLUSH); beats already in the FIFO stay for the sink; a checker PLAY_START enabled is
 * frozen; every buffer is the application's again; the counters are read after all that. */
static void play_stop(struct fdrec_play_stats *st)
{
	u32 i, n;

	if (!S.running || S.dir != FDREC_DIR_PLAY) {
		if (st)
			fill_play_stats(st);
		return;
	}
	tick();
	S.accepting = false;
	S.chk_pending = false;
	n = S.dma_halted ? 0 : bufs_in_dma();
	for (i = 0; i < n; i++) {
		struct ebuf *b = &S.buf[S.q[(S.q_h + i) % FDREC_MAX_BUFS]];

		S.egr_discard += (b->len - (i ? 0 : S.cur_off)) / FDREC_BEAT_BYTES;
	}
	if (S.started_chk)
		S.chk_enable = false;
	S.started_chk = false;
	S.running = false;
	for (i = 0; i < S.nbufs; i++)
		S.buf[i].st = B_FREE;
	S.q_n = S.rdy_n = 0;
	S.cur_off = 0;
	if (st)
		fill_play_stats(st);
	wake_up_all(&S.wq);
}

/* ---- file operations ---- */

static long fdrec_ioctl(struct file *f, unsigned int cmd, unsigned long arg)
{
	void __user *ua = (void __user *)arg;
	struct fdrec_stats st;
	struct fdrec_play_stats pst;
	struct fdrec_rate r;
	long rc = 0;

	if (cmd == FDREC_IOC_WAIT_FILLED)
		return wait_filled(ua);
	if (cmd == FDREC_IOC_PLAY_WAIT_DONE)
		return play_wait_done(ua);
	if (mutex_lock_interruptible(&S.lock))
		return -ERESTARTSYS;
	switch (cmd) {
	case FDREC_IOC_GET_INFO: {
		struct fdrec_info in = {
			.api_version = FDREC_API_VERSION,
			.hw_version = HW_VERSION,
			.src_clk_hz = src_clk_hz,
			.dp_clk_hz = DP_CLK_HZ,
			.beat_bytes = FDREC_BEAT_BYTES,
			.fifo_depth = fifo_depth,
			.max_bufs = FDREC_MAX_BUFS,
			.caps = FDREC_CAP_TPG | FDREC_CAP_S2MM | FDREC_CAP_MM2S | FDREC_CAP_CHECK,
			.buf_align = FDREC_BUF_ALIGN,
			.max_buf_size = FDREC_MAX_BUF_SIZE,
			.max_sg_len = MAX_SG_LEN,
		};

		rc = copy_to_user(ua, &in, sizeof(in)) ? -EFAULT : 0;
		break;
	}
	case FDREC_IOC_REGISTER_BUFS:
		rc = register_bufs(ua);
		break;
	case FDREC_IOC_START:
		rc = start_record(ua);
		break;
	case FDREC_IOC_RELEASE:
		rc = release_buf(ua);
		break;
	case FDREC_IOC_STOP:
		if (S.dir != FDREC_DIR_RECORD && S.running) {
			rc = -EINVAL;
			break;
		}
		stop_record(&st);
		rc = copy_to_user(ua, &st, sizeof(st)) ? -EFAULT : 0;
		break;
	case FDREC_IOC_GET_STATS:
		tick();
		fill_stats(&st);
		rc = copy_to_user(ua, &st, sizeof(st)) ? -EFAULT : 0;
		break;
	case FDREC_IOC_SET_RATE:
		if (copy_from_user(&r, ua, sizeof(r))) {
			rc = -EFAULT;
			break;
		}
		generate();
		S.rate_inc = rate_to_inc(r.rate_bps);
		gen_rebase();
		wake_up_interruptible(&S.kwq);
		r.rate_bps = inc_to_rate(S.rate_inc);
		rc = copy_to_user(ua, &r, sizeof(r)) ? -EFAULT : 0;
		break;
	case FDREC_IOC_PLAY_START:
		rc = play_start(ua);
		break;
	case FDREC_IOC_PLAY_SUBMIT:
		rc = play_submit(ua);
		break;
	case FDREC_IOC_PLAY_STOP:
		if (S.dir != FDREC_DIR_PLAY && S.running) {
			rc = -EINVAL;
			break;
		}
		play_stop(&pst);
		rc = copy_to_user(ua, &pst, sizeof(pst)) ? -EFAULT : 0;
		break;
	case FDREC_IOC_GET_PLAY_STATS:
		tick();
		fill_play_stats(&pst);
		rc = copy_to_user(ua, &pst, sizeof(pst)) ? -EFAULT : 0;
		break;
	case FDREC_IOC_SET_SINK_RATE:
		if (copy_from_user(&r, ua, sizeof(r))) {
			rc = -EFAULT;
			break;
		}
		if (!r.rate_bps) {
			rc = -EINVAL; /* a sink never ready would wedge the MM2S */
			break;
		}
		sink();
		S.chk_rate_inc = max(rate_to_inc(r.rate_bps), 1ull);
		S.sink_t0 = ktime_get_ns();
		S.sink_done = 0;
		r.rate_bps = inc_to_rate(S.chk_rate_inc);
		rc = copy_to_user(ua, &r, sizeof(r)) ? -EFAULT : 0;
		break;
	default:
		rc = -ENOTTY;
	}
	mutex_unlock(&S.lock);
	return rc;
}

static __poll_t fdrec_poll(struct file *f, poll_table *pt)
{
	__poll_t m = 0;

	poll_wait(f, &S.wq, pt);
	if (READ_ONCE(S.rdy_n))
		m |= EPOLLIN | EPOLLRDNORM;
	else if (!READ_ONCE(S.running))
		m |= EPOLLHUP;
	if (READ_ONCE(S.dma_error))
		m |= EPOLLERR;
	return m;
}

static int fdrec_open(struct inode *ino, struct file *f)
{
	int rc = 0;

	mutex_lock(&S.lock);
	if (S.in_use)
		rc = -EBUSY; /* one recorder at a time */
	else
		S.in_use = true;
	mutex_unlock(&S.lock);
	return rc ? rc : nonseekable_open(ino, f);
}

/* close: stop whatever runs; after a record set the hardware is reset (counters cleared), after
 * a play set the sink is left alone, as the driver does */
static int fdrec_close(struct inode *ino, struct file *f)
{
	mutex_lock(&S.lock);
	if (S.dir == FDREC_DIR_PLAY) {
		play_stop(NULL);
	} else {
		stop_record(NULL);
		soft_reset();
	}
	free_bufs();
	session_reset();
	S.in_use = false;
	mutex_unlock(&S.lock);
	return 0;
}

static const struct file_operations fdrec_fops = {
	.owner = THIS_MODULE,
	.open = fdrec_open,
	.release = fdrec_close,
	.poll = fdrec_poll,
	.unlocked_ioctl = fdrec_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.llseek = no_llseek,
};

/* ---- sysfs ---- */

#define RO_U64(name, expr)                                                                         \
	static ssize_t name##_show(struct device *d, struct device_attribute *a, char *buf)        \
	{                                                                                          \
		u64 v;                                                                             \
		mutex_lock(&S.lock);                                                               \
		tick();                                                                            \
		v = (expr);                                                                        \
		mutex_unlock(&S.lock);                                                             \
		return sysfs_emit(buf, "%llu\n", (unsigned long long)v);                           \
	}                                                                                          \
	static DEVICE_ATTR_RO(name)

RO_U64(drop_count, S.drop_count);
RO_U64(beats_in, S.beats_in);
RO_U64(beats_out, S.beats_out);
RO_U64(seq_next, S.tpg_seq);
RO_U64(src_clk_hz, src_clk_hz);
RO_U64(dp_clk_hz, DP_CLK_HZ);
RO_U64(fifo_depth, fifo_depth);
RO_U64(chk_beats, S.chk_beats);
RO_U64(chk_errors, S.chk_errors);
RO_U64(chk_gaps, S.chk_gaps);
RO_U64(chk_gap_beats, S.chk_gap_beats);
RO_U64(chk_underflows, S.chk_underflows);
RO_U64(chk_last_seq, S.chk_last_seq);
RO_U64(egr_beats_in, S.egr_beats_in);
RO_U64(egr_discard, S.egr_discard);
RO_U64(egr_fifo_level, S.egr_level);
RO_U64(egr_fifo_depth, egr_depth);
RO_U64(fifo_level, S.fifo_level);
RO_U64(dma_errors, S.dma_errors);

static ssize_t version_show(struct device *d, struct device_attribute *a, char *buf)
{
	return sysfs_emit(buf, "%u.%u\n", HW_VERSION >> 16, HW_VERSION & 0xffff);
}
static DEVICE_ATTR_RO(version);

static ssize_t rate_bps_show(struct device *d, struct device_attribute *a, char *buf)
{
	return sysfs_emit(buf, "%llu\n", inc_to_rate(READ_ONCE(S.rate_inc)));
}

static ssize_t rate_bps_store(struct device *d, struct device_attribute *a, const char *buf,
			      size_t n)
{
	u64 v;
	int rc = kstrtou64(buf, 0, &v);

	if (rc)
		return rc;
	mutex_lock(&S.lock);
	generate();
	S.rate_inc = rate_to_inc(v);
	gen_rebase();
	wake_up_interruptible(&S.kwq);
	mutex_unlock(&S.lock);
	return n;
}
static DEVICE_ATTR_RW(rate_bps);

static ssize_t tpg_enable_show(struct device *d, struct device_attribute *a, char *buf)
{
	return sysfs_emit(buf, "%u\n", READ_ONCE(S.tpg_enable));
}

static ssize_t tpg_enable_store(struct device *d, struct device_attribute *a, const char *buf,
				size_t n)
{
	bool v;
	int rc = kstrtobool(buf, &v);

	if (rc)
		return rc;
	mutex_lock(&S.lock);
	generate();
	S.tpg_enable = v;
	gen_rebase();
	wake_up_interruptible(&S.kwq);
	mutex_unlock(&S.lock);
	return n;
}
static DEVICE_ATTR_RW(tpg_enable);

static ssize_t overflow_show(struct device *d, struct device_attribute *a, char *buf)
{
	return sysfs_emit(buf, "%u\n", READ_ONCE(S.overflow));
}

static ssize_t overflow_store(struct device *d, struct device_attribute *a, const char *buf,
			      size_t n)
{
	u32 v;
	int rc = kstrtou32(buf, 0, &v);

	if (rc)
		return rc;
	if (v & 1) {
		mutex_lock(&S.lock);
		S.overflow = 0; /* write 1 to clear */
		mutex_unlock(&S.lock);
	}
	return n;
}
static DEVICE_ATTR_RW(overflow);

static ssize_t fifo_hwm_show(struct device *d, struct device_attribute *a, char *buf)
{
	return sysfs_emit(buf, "%u\n", READ_ONCE(S.fifo_hwm));
}

static ssize_t fifo_hwm_store(struct device *d, struct device_attribute *a, const char *buf,
			      size_t n)
{
	mutex_lock(&S.lock);
	S.fifo_hwm = 0; /* any write clears */
	mutex_unlock(&S.lock);
	return n;
}
static DEVICE_ATTR_RW(fifo_hwm);

static ssize_t chk_enable_show(struct device *d, struct device_attribute *a, char *buf)
{
	return sysfs_emit(buf, "%u\n", READ_ONCE(S.chk_enable));
}

static ssize_t chk_enable_store(struct device *d, struct device_attribute *a, const char *buf,
				size_t n)
{
	bool v;
	int rc = 0;

	mutex_lock(&S.lock);
	if (sysfs_streq(buf, "reset")) {
		chk_reset();
	} else {
		rc = kstrtobool(buf, &v);
		if (!rc) {
			sink();
			chk_set_enable(v);
		}
	}
	mutex_unlock(&S.lock);
	return rc ? rc : n;
}
static DEVICE_ATTR_RW(chk_enable);

static ssize_t chk_rate_bps_show(struct device *d, struct device_attribute *a, char *buf)
{
	return sysfs_emit(buf, "%llu\n", inc_to_rate(READ_ONCE(S.chk_rate_inc)));
}

static ssize_t chk_rate_bps_store(struct device *d, struct device_attribute *a, const char *buf,
				  size_t n)
{
	u64 v;
	int rc = kstrtou64(buf, 0, &v);

	if (rc)
		return rc;
	if (!v)
		return -EINVAL;
	mutex_lock(&S.lock);
	sink();
	S.chk_rate_inc = max(rate_to_inc(v), 1ull);
	S.sink_t0 = ktime_get_ns();
	S.sink_done = 0;
	mutex_unlock(&S.lock);
	return n;
}
static DEVICE_ATTR_RW(chk_rate_bps);

/* test hooks (not in the driver) */
static ssize_t inject_dma_error_show(struct device *d, struct device_attribute *a, char *buf)
{
	return sysfs_emit(buf, "%u\n", READ_ONCE(S.inject_dma));
}

static ssize_t inject_dma_error_store(struct device *d, struct device_attribute *a, const char *buf,
				      size_t n)
{
	bool v;
	int rc = kstrtobool(buf, &v);

	if (rc)
		return rc;
	mutex_lock(&S.lock);
	S.inject_dma = v;
	mutex_unlock(&S.lock);
	return n;
}
static DEVICE_ATTR_RW(inject_dma_error);

static ssize_t inject_drops_show(struct device *d, struct device_attribute *a, char *buf)
{
	return sysfs_emit(buf, "%llu\n", READ_ONCE(S.inject_drops));
}

static ssize_t inject_drops_store(struct device *d, struct device_attribute *a, const char *buf,
				  size_t n)
{
	u64 v;
	int rc = kstrtou64(buf, 0, &v);

	if (rc)
		return rc;
	mutex_lock(&S.lock);
	generate();
	S.inject_drops = v;
	mutex_unlock(&S.lock);
	return n;
}
static DEVICE_ATTR_RW(inject_drops);

static struct attribute *fdrec_attrs[] = {
	&dev_attr_rate_bps.attr,
	&dev_attr_tpg_enable.attr,
	&dev_attr_drop_count.attr,
	&dev_attr_overflow.attr,
	&dev_attr_beats_in.attr,
	&dev_attr_beats_out.attr,
	&dev_attr_fifo_hwm.attr,
	&dev_attr_fifo_depth.attr,
	&dev_attr_seq_next.attr,
	&dev_attr_src_clk_hz.attr,
	&dev_attr_dp_clk_hz.attr,
	&dev_attr_version.attr,
	&dev_attr_chk_enable.attr,
	&dev_attr_chk_rate_bps.attr,
	&dev_attr_chk_beats.attr,
	&dev_attr_chk_errors.attr,
	&dev_attr_chk_gaps.attr,
	&dev_attr_chk_gap_beats.attr,
	&dev_attr_chk_underflows.attr,
	&dev_attr_chk_last_seq.attr,
	&dev_attr_egr_beats_in.attr,
	&dev_attr_egr_discard.attr,
	&dev_attr_egr_fifo_level.attr,
	&dev_attr_egr_fifo_depth.attr,
	/* test hooks and views the driver does not have */
	&dev_attr_inject_dma_error.attr,
	&dev_attr_inject_drops.attr,
	&dev_attr_fifo_level.attr,
	&dev_attr_dma_errors.attr,
	NULL,
};
ATTRIBUTE_GROUPS(fdrec);

static struct miscdevice fdrec_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = FDREC_DEV_NAME "0",
	.fops = &fdrec_fops,
	.groups = fdrec_groups,
	.mode = 0600,
};

static int __init fdrec_init(void)
{
	int rc;

	if (fifo_depth < 16 || fifo_depth > (1u << 24) || egr_depth < 16 ||
	    egr_depth > (1u << 20) || !src_clk_hz)
		return -EINVAL;
	mutex_init(&S.lock);
	init_waitqueue_head(&S.wq);
	init_waitqueue_head(&S.kwq);
	S.rate_inc = rate_to_inc(rate_bps);
	S.chk_rate_inc = RATE_ONE; /* the checker's default: every clock */
	S.egr = vmalloc(array_size(egr_depth, FDREC_BEAT_BYTES));
	if (!S.egr)
		return -ENOMEM;
	S.thr = kthread_run(fdrec_thread, NULL, "fdrec_emu");
	if (IS_ERR(S.thr)) {
		vfree(S.egr);
		return PTR_ERR(S.thr);
	}
	rc = misc_register(&fdrec_misc);
	if (rc) {
		kthread_stop(S.thr);
		vfree(S.egr);
	}
	return rc;
}

static void __exit fdrec_exit(void)
{
	misc_deregister(&fdrec_misc);
	kthread_stop(S.thr);
	vfree(S.egr);
}

module_init(fdrec_init);
module_exit(fdrec_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("nvtape test emulation of the FPGA Drive Recorder driver (API 1)");
