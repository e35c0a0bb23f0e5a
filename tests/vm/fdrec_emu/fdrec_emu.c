// SPDX-License-Identifier: GPL-2.0
/*
 * fdrec_emu: an emulation of the FPGA Drive Recorder's driver for nvtape's guest tests. It
 * registers /dev/fdrec0 (misc device, one opener) with the driver's ioctl interface
 * (fdrec_uapi.h): the application's own buffers are pinned and filled by a kernel thread with
 * the {seq, ~seq} 16-byte test pattern at a programmed rate, behind a bounded FIFO of beats
 * that overflows, counting every dropped beat, when the application does not hand buffers
 * back in time (as the hardware does). A play side checks submitted buffers against the
 * pattern at a programmed sink rate and counts underflows. Without registered buffers, read()
 * delivers the same stream (the read() mode of a DMA character device). sysfs counters under
 * /sys/class/misc/fdrec0/; writing 1 to inject_dma_error sets the DMA error flag.
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

#include "fdrec_uapi.h"

static unsigned int fifo_depth = 4096;
module_param(fifo_depth, uint, 0444);
MODULE_PARM_DESC(fifo_depth, "ingress FIFO depth in beats (default 4096)");
static unsigned long rate_bps = 10000000;
module_param(rate_bps, ulong, 0444);
MODULE_PARM_DESC(rate_bps, "initial generator rate in bytes/s (default 10 MB/s)");

#define SRC_CLK_HZ   200000000ull
#define MAX_RUNS     512
#define MAX_BUF_SIZE (62ull << 20)
#define READ_BOUNCE  (64u << 10)

enum bstate { B_NONE, B_DMA, B_READY, B_USER };
enum mode { M_IDLE, M_RECORD, M_READ, M_PLAY };

struct ebuf {
	struct page **pages;
	unsigned long npages;
	void *va;
	enum bstate st;
	u64 bytes, seq, drops, first_beat;
	u32 flags;
};

struct run {
	u64 seq, n;
};

static struct fdrec {
	struct mutex lock;
	wait_queue_head_t wq;  /* user side: filled/done buffers, read data, stop */
	wait_queue_head_t kwq; /* the thread: something to do */
	struct task_struct *thr;
	bool open;
	enum mode mode;
	bool running, stopped, dma_error;
	u32 dir;
	/* buffers */
	struct ebuf buf[FDREC_MAX_BUFS];
	u32 nbufs;
	u64 buf_size;
	u32 dmaq[FDREC_MAX_BUFS], dmaq_h, dmaq_n; /* free buffers in release order */
	u32 rdyq[FDREC_MAX_BUFS], rdyq_h, rdyq_n; /* filled/done buffers in order */
	int cur;
	u64 cur_off;
	/* generator and FIFO */
	u64 rate, t0, beats_gen, drop_count, beats_in, beats_out, bufs_filled, bytes_filled;
	u64 fill_seq, seq_base;
	u32 fifo_level, fifo_hwm, overflow, dma_errors;
	struct run runs[MAX_RUNS];
	u32 runs_h, runs_n;
	bool inject;
	/* play */
	u64 sink_rate, p_t0, p_credit_used, chk_beats, chk_errors, chk_gaps, chk_gap_beats;
	u64 chk_underflows, chk_pending_uf, chk_expect, chk_last_seq, egr_beats_in;
	bool chk_enable, chk_seen;
	u64 play_seq, done_seq;
	u32 pq[FDREC_MAX_BUFS], pq_h, pq_n; /* submitted, in order */
	u64 p_off;
	u64 pbytes[FDREC_MAX_BUFS];
	u8 *bounce;
} S;

static u64 now_ns(void)
{
	return ktime_get_ns();
}

/* ---- record generator ---- */

static void fifo_push(u64 seq, u64 n)
{
	struct run *t;

	if (!n)
		return;
	if (S.runs_n) {
		t = &S.runs[(S.runs_h + S.runs_n - 1) % MAX_RUNS];
		if (t->seq + t->n == seq) {
			t->n += n;
			return;
		}
	}
	if (S.runs_n == MAX_RUNS) { /* cannot describe more gaps: drop these beats too */
		S.drop_count += n;
		S.fifo_level -= n;
		S.beats_in -= n;
		return;
	}
	t = &S.runs[(S.runs_h + S.runs_n) % MAX_RUNS];
	t->seq = seq;
	t->n = n;
	S.runs_n++;
}

static void fill_pattern(u64 *p, u64 seq, u64 n)
{
	u64 i;

	for (i = 0; i < n; i++) {
		p[2 * i] = cpu_to_le64(seq + i);
		p[2 * i + 1] = cpu_to_le64(~(seq + i));
	}
}

/* take up to max beats off the FIFO into dst (pattern); returns beats and first seq */
static u64 fifo_pop(u64 *dst, u64 max, u64 *first)
{
	u64 done = 0;

	while (done < max && S.runs_n) {
		struct run *h = &S.runs[S.runs_h];
		u64 k = min(h->n, max - done);

		if (!done && first)
			*first = h->seq;
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
	S.beats_out += done;
	return done;
}

static void generate(void)
{
	u64 due = mul_u64_u64_div_u64(S.rate, now_ns() - S.t0, FDREC_BEAT_BYTES * NSEC_PER_SEC);
	u64 n, acc, space;

	if (due <= S.beats_gen)
		return;
	n = due - S.beats_gen;
	space = fifo_depth - S.fifo_level;
	acc = min(n, space);
	S.fifo_level += acc;
	S.beats_in += acc;
	fifo_push(S.seq_base + S.beats_gen, acc);
	if (acc < n) {
		S.drop_count += n - acc;
		S.overflow = 1;
	}
	S.beats_gen = due;
	if (S.fifo_level > S.fifo_hwm)
		S.fifo_hwm = S.fifo_level;
}

static void complete_cur(u32 flags)
{
	struct ebuf *b = &S.buf[S.cur];

	b->bytes = S.cur_off;
	b->seq = S.fill_seq++;
	/* every beat before the buffer's last one is either in a buffer or dropped */
	b->drops = S.drop_count;
	if (S.runs_n)
		b->drops = S.runs[S.runs_h].seq - S.seq_base - S.beats_out;
	b->flags = flags;
	b->st = B_READY;
	S.rdyq[(S.rdyq_h + S.rdyq_n) % FDREC_MAX_BUFS] = S.cur;
	S.rdyq_n++;
	S.bufs_filled++;
	S.bytes_filled += S.cur_off;
	S.cur = -1;
	wake_up_interruptible(&S.wq);
}

static void drain_to_bufs(void)
{
	while (S.fifo_level) {
		u64 room, got, first = 0;
		struct ebuf *b;

		if (S.cur < 0) {
			if (!S.dmaq_n)
				return;
			S.cur = S.dmaq[S.dmaq_h];
			S.dmaq_h = (S.dmaq_h + 1) % FDREC_MAX_BUFS;
			S.dmaq_n--;
			S.cur_off = 0;
		}
		b = &S.buf[S.cur];
		room = (S.buf_size - S.cur_off) / FDREC_BEAT_BYTES;
		got = fifo_pop((u64 *)((u8 *)b->va + S.cur_off), room, &first);
		if (!S.cur_off)
			b->first_beat = first;
		S.cur_off += got * FDREC_BEAT_BYTES;
		if (S.cur_off == S.buf_size)
			complete_cur(0);
	}
}

/* ---- play checker ---- */

static void check_beats(const u64 *p, u64 n)
{
	u64 i;

	for (i = 0; i < n; i++) {
		u64 s = le64_to_cpu(p[2 * i]), c = le64_to_cpu(p[2 * i + 1]);

		S.chk_beats++;
		if (c != ~s) {
			S.chk_errors++;
			S.chk_expect++;
			continue;
		}
		if (S.chk_seen && s != S.chk_expect) {
			S.chk_gaps++;
			if (s > S.chk_expect)
				S.chk_gap_beats += s - S.chk_expect;
		}
		S.chk_seen = true;
		S.chk_expect = s + 1;
		S.chk_last_seq = s;
	}
}

static void play_tick(void)
{
	u64 due = mul_u64_u64_div_u64(S.sink_rate, now_ns() - S.p_t0,
				      FDREC_BEAT_BYTES * NSEC_PER_SEC);
	u64 want;

	if (due <= S.p_credit_used)
		return;
	want = due - S.p_credit_used;
	S.p_credit_used = due;
	while (want && S.pq_n) {
		u32 idx = S.pq[S.pq_h];
		struct ebuf *b = &S.buf[idx];
		u64 left = (S.pbytes[idx] - S.p_off) / FDREC_BEAT_BYTES;
		u64 k = min(left, want);

		if (S.chk_enable)
			check_beats((const u64 *)((const u8 *)b->va + S.p_off), k);
		S.egr_beats_in += k;
		S.p_off += k * FDREC_BEAT_BYTES;
		want -= k;
		if (S.p_off == S.pbytes[idx]) {
			b->bytes = S.pbytes[idx];
			b->seq = S.done_seq++;
			b->flags = 0;
			b->st = B_READY;
			S.pq_h = (S.pq_h + 1) % FDREC_MAX_BUFS;
			S.pq_n--;
			S.p_off = 0;
			S.rdyq[(S.rdyq_h + S.rdyq_n) % FDREC_MAX_BUFS] = idx;
			S.rdyq_n++;
			wake_up_interruptible(&S.wq);
		}
	}
	/* the sink was ready and had nothing: counted once more data follows (ticks after the
	 * last beat are not underflows) */
	if (want && S.chk_seen)
		S.chk_pending_uf += want;
}

static int fdrec_thread(void *arg)
{
	while (!kthread_should_stop()) {
		wait_event_interruptible(S.kwq, S.running || kthread_should_stop());
		if (kthread_should_stop())
			break;
		mutex_lock(&S.lock);
		if (S.running && S.inject && S.mode == M_RECORD) {
			S.inject = false;
			S.dma_error = true;
			S.dma_errors++;
			S.running = false;
			S.stopped = true;
			if (S.cur >= 0)
				complete_cur(FDREC_FILLED_ERROR);
			wake_up_interruptible(&S.wq);
		} else if (S.running && (S.mode == M_RECORD || S.mode == M_READ)) {
			generate();
			if (S.mode == M_RECORD)
				drain_to_bufs();
			else if (S.fifo_level)
				wake_up_interruptible(&S.wq);
		} else if (S.running && S.mode == M_PLAY) {
			play_tick();
		}
		mutex_unlock(&S.lock);
		usleep_range(500, 1000);
	}
	return 0;
}

/* ---- buffers ---- */

static void unregister_bufs(void)
{
	u32 i;

	for (i = 0; i < S.nbufs; i++) {
		struct ebuf *b = &S.buf[i];

		if (b->va)
			vunmap(b->va);
		if (b->pages) {
			unpin_user_pages(b->pages, b->npages);
			kvfree(b->pages);
		}
		memset(b, 0, sizeof(*b));
	}
	S.nbufs = 0;
	S.dmaq_n = S.rdyq_n = S.pq_n = 0;
	S.cur = -1;
}

static int register_bufs(struct fdrec_bufs __user *ua)
{
	struct fdrec_bufs *a;
	u32 i;
	int rc = 0;

	if (S.running || S.nbufs)
		return -EBUSY;
	a = memdup_user(ua, sizeof(*a));
	if (IS_ERR(a))
		return PTR_ERR(a);
	if (a->count < 2 || a->count > FDREC_MAX_BUFS || !a->buf_size ||
	    a->buf_size > MAX_BUF_SIZE || a->buf_size % PAGE_SIZE || a->flags > FDREC_DIR_PLAY) {
		rc = -EINVAL;
		goto out;
	}
	for (i = 0; i < a->count; i++) {
		struct ebuf *b = &S.buf[i];
		unsigned long n = a->buf_size >> PAGE_SHIFT;
		long got;

		if (a->addrs[i] % PAGE_SIZE) {
			rc = -EINVAL;
			break;
		}
		b->pages = kvcalloc(n, sizeof(*b->pages), GFP_KERNEL);
		if (!b->pages) {
			rc = -ENOMEM;
			break;
		}
		S.nbufs = i + 1;
		got = pin_user_pages_fast(
			a->addrs[i], n,
			FOLL_LONGTERM | (a->flags == FDREC_DIR_RECORD ? FOLL_WRITE : 0), b->pages);
		if (got > 0)
			b->npages = got;
		if (got != n) {
			rc = got < 0 ? got : -EFAULT;
			break;
		}
		b->va = vmap(b->pages, n, VM_MAP, PAGE_KERNEL);
		if (!b->va) {
			rc = -ENOMEM;
			break;
		}
		b->st = B_USER;
	}
	if (rc) {
		unregister_bufs();
		goto out;
	}
	S.buf_size = a->buf_size;
	S.dir = a->flags;
out:
	kfree(a);
	return rc;
}

static void reset_counters(void)
{
	S.beats_gen = S.drop_count = S.beats_in = S.beats_out = 0;
	S.bufs_filled = S.bytes_filled = S.fill_seq = 0;
	S.fifo_level = S.fifo_hwm = S.overflow = 0;
	S.runs_h = S.runs_n = 0;
	S.seq_base = 0;
	S.dma_error = false;
}

static void reset_checker(void)
{
	S.chk_beats = S.chk_errors = S.chk_gaps = S.chk_gap_beats = 0;
	S.chk_underflows = S.chk_pending_uf = S.chk_expect = S.chk_last_seq = 0;
	S.egr_beats_in = 0;
	S.chk_seen = false;
}

static void fill_stats(struct fdrec_stats *st)
{
	u32 i;

	memset(st, 0, sizeof(*st));
	st->drop_count = S.drop_count;
	st->beats_in = S.beats_in;
	st->beats_out = S.beats_out;
	st->seq_next = S.seq_base + S.beats_gen;
	st->fifo_hwm = S.fifo_hwm;
	st->fifo_depth = fifo_depth;
	st->overflow = S.overflow;
	st->running = S.running;
	st->bufs_filled = S.bufs_filled;
	st->bytes_filled = S.bytes_filled;
	st->dma_errors = S.dma_errors;
	for (i = 0; i < S.nbufs; i++) {
		if (S.buf[i].st == B_DMA)
			st->bufs_dma++;
		else if (S.buf[i].st == B_READY)
			st->bufs_ready++;
		else if (S.buf[i].st == B_USER)
			st->bufs_user++;
	}
}

static void fill_play_stats(struct fdrec_play_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->beats = S.chk_beats;
	st->errors = S.chk_errors;
	st->gaps = S.chk_gaps;
	st->gap_beats = S.chk_gap_beats;
	st->underflows = S.chk_underflows;
	st->last_seq = S.chk_last_seq;
	st->rate_bps = S.sink_rate;
	st->enabled = S.chk_enable;
	st->egr_beats_in = S.egr_beats_in;
	st->egr_depth = fifo_depth;
}

static void stop_all(void)
{
	S.running = false;
	S.stopped = true;
	wake_up_interruptible(&S.wq);
}

static int start_record(struct fdrec_start __user *ua)
{
	struct fdrec_start st;
	u32 i;

	if (copy_from_user(&st, ua, sizeof(st)))
		return -EFAULT;
	if (!S.nbufs || S.dir != FDREC_DIR_RECORD || S.running)
		return -EINVAL;
	reset_counters();
	/* the hardware's generator starts at 0; the emulation takes the application's first
	 * seq (nvtape stamps every run with its own) */
	S.seq_base = st.first_seq;
	S.dmaq_h = S.rdyq_h = S.dmaq_n = S.rdyq_n = 0;
	S.cur = -1;
	/* every buffer not held by the application goes to the DMA */
	for (i = 0; i < S.nbufs; i++) {
		S.buf[i].st = B_DMA;
		S.dmaq[S.dmaq_n++] = i;
	}
	S.mode = M_RECORD;
	S.stopped = false;
	S.t0 = now_ns();
	S.running = true;
	st.pkt_len = S.buf_size / FDREC_BEAT_BYTES;
	st.start_time_ns = ktime_get_real_ns();
	wake_up_interruptible(&S.kwq);
	return copy_to_user(ua, &st, sizeof(st)) ? -EFAULT : 0;
}

static bool have_ready(void)
{
	return S.rdyq_n || S.stopped;
}

static int wait_ready(u32 timeout_ms)
{
	long t;

	if (!timeout_ms)
		return 0;
	mutex_unlock(&S.lock);
	t = wait_event_interruptible_timeout(S.wq, READ_ONCE(S.rdyq_n) || READ_ONCE(S.stopped),
					     msecs_to_jiffies(timeout_ms));
	mutex_lock(&S.lock);
	return t < 0 ? -EINTR : 0;
}

/* WAIT_FILLED (record) and PLAY_WAIT_DONE (play, a struct of its own) */
static int wait_filled(void __user *ua, bool play)
{
	struct fdrec_filled f;
	struct fdrec_play_done d;
	struct ebuf *b;
	u32 idx;
	int rc;

	if (play) {
		if (copy_from_user(&d, ua, sizeof(d)))
			return -EFAULT;
		f.timeout_ms = d.timeout_ms;
	} else if (copy_from_user(&f, ua, sizeof(f))) {
		return -EFAULT;
	}
	if (S.mode != (play ? M_PLAY : M_RECORD) && !(S.stopped && S.nbufs))
		return -EINVAL;
	if (!have_ready()) {
		rc = wait_ready(f.timeout_ms);
		if (rc)
			return rc;
	}
	if (!S.rdyq_n) {
		if (S.dma_error && !play)
			return -EIO;
		return S.stopped ? -ENODATA : -ETIMEDOUT;
	}
	idx = S.rdyq[S.rdyq_h];
	S.rdyq_h = (S.rdyq_h + 1) % FDREC_MAX_BUFS;
	S.rdyq_n--;
	b = &S.buf[idx];
	b->st = B_USER;
	if (play) {
		memset(&d, 0, sizeof(d));
		d.timeout_ms = f.timeout_ms;
		d.index = idx;
		d.bytes = b->bytes;
		d.seq = b->seq;
		d.flags = b->flags;
		return copy_to_user(ua, &d, sizeof(d)) ? -EFAULT : 0;
	}
	f.index = idx;
	f.bytes = b->bytes;
	f.seq = b->seq;
	f.drop_count = b->drops;
	f.first_beat = b->first_beat;
	f.flags = b->flags;
	return copy_to_user(ua, &f, sizeof(f)) ? -EFAULT : 0;
}

static int release_buf(u32 __user *ua)
{
	u32 idx;

	if (get_user(idx, ua))
		return -EFAULT;
	if (idx >= S.nbufs || S.dir != FDREC_DIR_RECORD)
		return -EINVAL;
	if (S.buf[idx].st != B_USER)
		return -EBUSY;
	S.buf[idx].st = B_DMA;
	S.dmaq[(S.dmaq_h + S.dmaq_n) % FDREC_MAX_BUFS] = idx;
	S.dmaq_n++;
	return 0;
}

static int stop_record(struct fdrec_stats __user *ua)
{
	struct fdrec_stats st;

	if (S.mode == M_RECORD && S.running) {
		generate();
		drain_to_bufs();
		/* the buffer being filled ends here: handed over with what it holds */
		if (S.cur >= 0 && S.cur_off)
			complete_cur(FDREC_FILLED_SHORT);
		/* beats still in the FIFO are discarded at the stop (not overflow drops) */
		S.fifo_level = 0;
		S.runs_n = 0;
		stop_all();
	}
	fill_stats(&st);
	return copy_to_user(ua, &st, sizeof(st)) ? -EFAULT : 0;
}

static int play_start(u32 __user *ua)
{
	u32 flags;
	u32 i;

	if (get_user(flags, ua))
		return -EFAULT;
	if (!S.nbufs || S.dir != FDREC_DIR_PLAY || S.running)
		return -EINVAL;
	reset_checker();
	S.dma_error = false; /* a record run's DMA error does not outlive it */
	S.chk_enable = flags & FDREC_PLAY_CHECK;
	S.pq_h = S.pq_n = S.rdyq_h = S.rdyq_n = 0;
	S.p_off = 0;
	S.play_seq = S.done_seq = 0;
	for (i = 0; i < S.nbufs; i++)
		S.buf[i].st = B_USER;
	if (!S.sink_rate)
		S.sink_rate = S.rate;
	S.mode = M_PLAY;
	S.stopped = false;
	S.p_t0 = now_ns();
	S.p_credit_used = 0;
	S.running = true;
	wake_up_interruptible(&S.kwq);
	return 0;
}

static int play_submit(struct fdrec_play_submit __user *ua)
{
	struct fdrec_play_submit p;

	if (copy_from_user(&p, ua, sizeof(p)))
		return -EFAULT;
	if (S.mode != M_PLAY || !S.running)
		return -EPIPE;
	if (p.index >= S.nbufs || !p.bytes || p.bytes % FDREC_BEAT_BYTES || p.bytes > S.buf_size)
		return -EINVAL;
	if (S.buf[p.index].st != B_USER)
		return -EBUSY;
	if (!S.pq_n) {
		/* the sink starves from here on: credit it has not used is underflow only if more
		 * data follows, which this submission is */
		S.chk_underflows += S.chk_pending_uf;
		S.chk_pending_uf = 0;
		/* catch up the sink's clock so ticks while idle before this are not lost again */
	}
	S.buf[p.index].st = B_DMA;
	S.pbytes[p.index] = p.bytes;
	S.pq[(S.pq_h + S.pq_n) % FDREC_MAX_BUFS] = p.index;
	S.pq_n++;
	return 0;
}

static int play_stop(struct fdrec_play_stats __user *ua)
{
	struct fdrec_play_stats st;

	if (S.mode == M_PLAY && S.running) {
		stop_all();
		S.pq_n = 0; /* flushed into the discard path */
	}
	fill_play_stats(&st);
	return copy_to_user(ua, &st, sizeof(st)) ? -EFAULT : 0;
}

static long fdrec_ioctl(struct file *f, unsigned int cmd, unsigned long arg)
{
	void __user *ua = (void __user *)arg;
	long rc = 0;

	mutex_lock(&S.lock);
	switch (cmd) {
	case FDREC_GET_INFO: {
		struct fdrec_info in = {
			.api_version = FDREC_API_VERSION,
			.caps = FDREC_CAP_S2MM | FDREC_CAP_MM2S | FDREC_CAP_CHECK | FDREC_CAP_TPG,
			.fifo_depth = fifo_depth,
			.max_bufs = FDREC_MAX_BUFS,
			.src_clk_hz = SRC_CLK_HZ,
			.rate_bps = S.rate,
		};
		rc = copy_to_user(ua, &in, sizeof(in)) ? -EFAULT : 0;
		break;
	}
	case FDREC_REGISTER_BUFS:
		rc = S.mode == M_READ ? -EBUSY : register_bufs(ua);
		break;
	case FDREC_START:
		rc = start_record(ua);
		break;
	case FDREC_WAIT_FILLED:
		rc = wait_filled(ua, false);
		break;
	case FDREC_RELEASE:
		rc = release_buf(ua);
		break;
	case FDREC_STOP:
		rc = stop_record(ua);
		break;
	case FDREC_GET_STATS: {
		struct fdrec_stats st;

		fill_stats(&st);
		rc = copy_to_user(ua, &st, sizeof(st)) ? -EFAULT : 0;
		break;
	}
	case FDREC_SET_RATE:
	case FDREC_SET_SINK_RATE: {
		u64 r;

		if (get_user(r, (u64 __user *)ua)) {
			rc = -EFAULT;
			break;
		}
		if (!r || r > SRC_CLK_HZ * FDREC_BEAT_BYTES || S.running) {
			rc = -EINVAL;
			break;
		}
		if (cmd == FDREC_SET_RATE)
			S.rate = r;
		else
			S.sink_rate = r;
		break;
	}
	case FDREC_PLAY_START:
		rc = play_start(ua);
		break;
	case FDREC_PLAY_SUBMIT:
		rc = play_submit(ua);
		break;
	case FDREC_PLAY_WAIT_DONE:
		rc = wait_filled(ua, true);
		break;
	case FDREC_PLAY_STOP:
		rc = play_stop(ua);
		break;
	case FDREC_GET_PLAY_STATS: {
		struct fdrec_play_stats st;

		fill_play_stats(&st);
		rc = copy_to_user(ua, &st, sizeof(st)) ? -EFAULT : 0;
		break;
	}
	default:
		rc = -ENOTTY;
	}
	mutex_unlock(&S.lock);
	return rc;
}

/* read() mode: the generator starts at the first read() or poll() of an opener that has
 * registered no buffers */
static void start_read_mode(void)
{
	if (S.mode != M_IDLE || S.nbufs)
		return;
	reset_counters();
	S.mode = M_READ;
	S.stopped = false;
	S.t0 = now_ns();
	S.running = true;
	wake_up_interruptible(&S.kwq);
}

static __poll_t fdrec_poll(struct file *f, poll_table *pt)
{
	__poll_t m = 0;

	poll_wait(f, &S.wq, pt);
	mutex_lock(&S.lock);
	if (f->f_mode & FMODE_READ)
		start_read_mode();
	if (S.rdyq_n || (S.mode == M_READ && S.fifo_level))
		m |= EPOLLIN | EPOLLRDNORM;
	else if (S.dma_error)
		m |= EPOLLERR;
	else if (S.stopped)
		m |= EPOLLHUP;
	mutex_unlock(&S.lock);
	return m;
}

/* read() mode: the generator starts at the first read; each read takes what the FIFO holds */
static ssize_t fdrec_read(struct file *f, char __user *ub, size_t len, loff_t *off)
{
	u64 beats, got;
	int rc;

	if (len < FDREC_BEAT_BYTES)
		return -EINVAL;
	mutex_lock(&S.lock);
	if (S.nbufs || (S.mode != M_IDLE && S.mode != M_READ)) {
		mutex_unlock(&S.lock);
		return -EBUSY;
	}
	start_read_mode();
	while (!S.fifo_level) {
		mutex_unlock(&S.lock);
		if (f->f_flags & O_NONBLOCK)
			return -EAGAIN;
		rc = wait_event_interruptible(S.wq, READ_ONCE(S.fifo_level));
		if (rc)
			return rc;
		mutex_lock(&S.lock);
	}
	beats = min_t(u64, len / FDREC_BEAT_BYTES, READ_BOUNCE / FDREC_BEAT_BYTES);
	got = fifo_pop((u64 *)S.bounce, beats, NULL);
	S.bytes_filled += got * FDREC_BEAT_BYTES;
	/* copy under the lock: the bounce buffer is shared (one opener anyway) */
	rc = copy_to_user(ub, S.bounce, got * FDREC_BEAT_BYTES) ? -EFAULT : 0;
	mutex_unlock(&S.lock);
	return rc ? rc : (ssize_t)(got * FDREC_BEAT_BYTES);
}

static int fdrec_open(struct inode *ino, struct file *f)
{
	mutex_lock(&S.lock);
	if (S.open) {
		mutex_unlock(&S.lock);
		return -EBUSY;
	}
	S.open = true;
	S.mode = M_IDLE;
	S.stopped = false;
	mutex_unlock(&S.lock);
	return nonseekable_open(ino, f);
}

static int fdrec_release(struct inode *ino, struct file *f)
{
	mutex_lock(&S.lock);
	S.running = false;
	unregister_bufs();
	S.mode = M_IDLE;
	S.open = false;
	/* counters stay readable in sysfs until the next start */
	mutex_unlock(&S.lock);
	return 0;
}

static const struct file_operations fdrec_fops = {
	.owner = THIS_MODULE,
	.open = fdrec_open,
	.release = fdrec_release,
	.read = fdrec_read,
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
		v = (expr);                                                                        \
		mutex_unlock(&S.lock);                                                             \
		return sysfs_emit(buf, "%llu\n", (unsigned long long)v);                           \
	}

RO_U64(drop_count, S.drop_count)
RO_U64(drop_bytes, S.drop_count *FDREC_BEAT_BYTES)
RO_U64(beats_in, S.beats_in)
RO_U64(beats_out, S.beats_out)
RO_U64(seq_next, S.seq_base + S.beats_gen)
RO_U64(fifo_depth, fifo_depth)
RO_U64(fifo_level, S.fifo_level)
RO_U64(src_clk_hz, SRC_CLK_HZ)
RO_U64(version, FDREC_API_VERSION)
RO_U64(dma_errors, S.dma_errors)
RO_U64(bufs_filled, S.bufs_filled)
RO_U64(chk_beats, S.chk_beats)
RO_U64(chk_errors, S.chk_errors)
RO_U64(chk_gaps, S.chk_gaps)
RO_U64(chk_gap_beats, S.chk_gap_beats)
RO_U64(chk_underflows, S.chk_underflows)
RO_U64(chk_last_seq, S.chk_last_seq)
RO_U64(chk_enable, S.chk_enable)
RO_U64(egr_beats_in, S.egr_beats_in)
RO_U64(overflow, S.overflow)
RO_U64(fifo_hwm, S.fifo_hwm)
RO_U64(rate_bps, S.rate)
RO_U64(chk_rate_bps, S.sink_rate)
RO_U64(inject_dma_error, S.inject)

static ssize_t overflow_store(struct device *d, struct device_attribute *a, const char *buf,
			      size_t n)
{
	mutex_lock(&S.lock);
	S.overflow = 0;
	mutex_unlock(&S.lock);
	return n;
}

static ssize_t fifo_hwm_store(struct device *d, struct device_attribute *a, const char *buf,
			      size_t n)
{
	mutex_lock(&S.lock);
	S.fifo_hwm = S.fifo_level;
	mutex_unlock(&S.lock);
	return n;
}

static ssize_t set_rate(const char *buf, size_t n, u64 *dst)
{
	u64 v;
	int rc = kstrtou64(buf, 0, &v);

	if (rc)
		return rc;
	if (!v || v > SRC_CLK_HZ * FDREC_BEAT_BYTES)
		return -EINVAL;
	mutex_lock(&S.lock);
	if (S.running)
		rc = -EBUSY;
	else
		*dst = v;
	mutex_unlock(&S.lock);
	return rc ? rc : n;
}

static ssize_t rate_bps_store(struct device *d, struct device_attribute *a, const char *buf,
			      size_t n)
{
	return set_rate(buf, n, &S.rate);
}

static ssize_t chk_rate_bps_store(struct device *d, struct device_attribute *a, const char *buf,
				  size_t n)
{
	return set_rate(buf, n, &S.sink_rate);
}

static ssize_t inject_dma_error_store(struct device *d, struct device_attribute *a, const char *buf,
				      size_t n)
{
	bool v;
	int rc = kstrtobool(buf, &v);

	if (rc)
		return rc;
	mutex_lock(&S.lock);
	S.inject = v;
	mutex_unlock(&S.lock);
	return n;
}

static DEVICE_ATTR_RO(drop_count);
static DEVICE_ATTR_RO(drop_bytes);
static DEVICE_ATTR_RO(beats_in);
static DEVICE_ATTR_RO(beats_out);
static DEVICE_ATTR_RO(seq_next);
static DEVICE_ATTR_RO(fifo_depth);
static DEVICE_ATTR_RO(fifo_level);
static DEVICE_ATTR_RO(src_clk_hz);
static DEVICE_ATTR_RO(version);
static DEVICE_ATTR_RO(dma_errors);
static DEVICE_ATTR_RO(bufs_filled);
static DEVICE_ATTR_RO(chk_beats);
static DEVICE_ATTR_RO(chk_errors);
static DEVICE_ATTR_RO(chk_gaps);
static DEVICE_ATTR_RO(chk_gap_beats);
static DEVICE_ATTR_RO(chk_underflows);
static DEVICE_ATTR_RO(chk_last_seq);
static DEVICE_ATTR_RO(chk_enable);
static DEVICE_ATTR_RO(egr_beats_in);
static DEVICE_ATTR_RW(overflow);
static DEVICE_ATTR_RW(fifo_hwm);
static DEVICE_ATTR_RW(rate_bps);
static DEVICE_ATTR_RW(chk_rate_bps);
static DEVICE_ATTR_RW(inject_dma_error);

static struct attribute *fdrec_attrs[] = {
	&dev_attr_drop_count.attr,
	&dev_attr_drop_bytes.attr,
	&dev_attr_beats_in.attr,
	&dev_attr_beats_out.attr,
	&dev_attr_seq_next.attr,
	&dev_attr_fifo_depth.attr,
	&dev_attr_fifo_level.attr,
	&dev_attr_src_clk_hz.attr,
	&dev_attr_version.attr,
	&dev_attr_dma_errors.attr,
	&dev_attr_bufs_filled.attr,
	&dev_attr_chk_beats.attr,
	&dev_attr_chk_errors.attr,
	&dev_attr_chk_gaps.attr,
	&dev_attr_chk_gap_beats.attr,
	&dev_attr_chk_underflows.attr,
	&dev_attr_chk_last_seq.attr,
	&dev_attr_chk_enable.attr,
	&dev_attr_egr_beats_in.attr,
	&dev_attr_overflow.attr,
	&dev_attr_fifo_hwm.attr,
	&dev_attr_rate_bps.attr,
	&dev_attr_chk_rate_bps.attr,
	&dev_attr_inject_dma_error.attr,
	NULL,
};
ATTRIBUTE_GROUPS(fdrec);

static struct miscdevice fdrec_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "fdrec0",
	.fops = &fdrec_fops,
	.groups = fdrec_groups,
	.mode = 0600,
};

static int __init fdrec_init(void)
{
	int rc;

	if (fifo_depth < 16 || fifo_depth > (1u << 24) || !rate_bps)
		return -EINVAL;
	mutex_init(&S.lock);
	init_waitqueue_head(&S.wq);
	init_waitqueue_head(&S.kwq);
	S.cur = -1;
	S.rate = rate_bps;
	S.sink_rate = rate_bps;
	S.bounce = vmalloc(READ_BOUNCE);
	if (!S.bounce)
		return -ENOMEM;
	S.thr = kthread_run(fdrec_thread, NULL, "fdrec_emu");
	if (IS_ERR(S.thr)) {
		vfree(S.bounce);
		return PTR_ERR(S.thr);
	}
	rc = misc_register(&fdrec_misc);
	if (rc) {
		kthread_stop(S.thr);
		vfree(S.bounce);
	}
	return rc;
}

static void __exit fdrec_exit(void)
{
	misc_deregister(&fdrec_misc);
	kthread_stop(S.thr);
	vfree(S.bounce);
}

module_init(fdrec_init);
module_exit(fdrec_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("nvtape test emulation of the FPGA Drive Recorder driver");
