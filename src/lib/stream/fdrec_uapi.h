/* SPDX-License-Identifier: MIT */
/*
 * fdrec_uapi.h: the FPGA Drive Recorder driver's ioctl interface (/dev/fdrecN), as nvtape speaks
 * it. Written from the driver's published header, include/fdrec_uapi.h of
 * github.com/fpgadeveloper/fpga-drive-recorder (commit e52a387d, FDREC_API_VERSION 1), and its
 * docs/source/driver.md; the identifiers are the driver's own, so that the two read side by side.
 * Every ioctl number, size, offset and flag value is pinned below by a compile-time assertion;
 * docs/fdrec-abi.md lists them with where each came from. Shared by nvtape's fdrec source and
 * sink, tests/fdrec_abi.c and the emulation module tests/vm/fdrec_emu (tests/vm/run copies it).
 *
 * Layout: fixed-width types, natural alignment, explicit padding: the same for 32- and 64-bit
 * user space and the kernel. User pointers travel as __u64.
 */
#ifndef FDREC_UAPI_H
#define FDREC_UAPI_H

#ifdef __KERNEL__
#include <linux/types.h>
#include <linux/build_bug.h>
#include <linux/stddef.h>
#define FDREC_ASSERT(c, m) static_assert(c, m)
#else
#include <linux/types.h>
#include <stddef.h>
#define FDREC_ASSERT(c, m) _Static_assert(c, m)
#endif
#include <linux/ioctl.h>

/* The driver reports its value in fdrec_info.api_version; nvtape refuses any other. */
#define FDREC_API_VERSION 1
#define FDREC_DEV_NAME    "fdrec" /* /dev/fdrec0, /dev/fdrec1, ... */

/* Buffers: 2 MB aligned (hugepages), sizes a multiple of 2 MB up to 62 MB, 64 per opener. A
 * buffer is one AXI-Stream packet of buf_size / 16 beats; PKT_LEN holds at most 2^22 - 1. */
#define FDREC_BUF_ALIGN    (2u * 1024 * 1024)
#define FDREC_MAX_BUFS     64
#define FDREC_MAX_PKT_LEN  4194303u
#define FDREC_MAX_BUF_SIZE (62ull << 20)
#define FDREC_BEAT_BYTES   16 /* nvtape's name for fdrec_info.beat_bytes on every design */

/* fdrec_info.caps */
#define FDREC_CAP_TPG   (1u << 0) /* test pattern generator */
#define FDREC_CAP_S2MM  (1u << 1) /* record: fabric to memory */
#define FDREC_CAP_MM2S  (1u << 2) /* play: memory to fabric ("tx" DMA channel) */
#define FDREC_CAP_CHECK (1u << 3) /* the sink's checker registers (design 1.1 and later) */

/* FDREC_IOC_GET_INFO */
struct fdrec_info {
	__u32 api_version;
	__u32 hw_version; /* VERSION register: major in [31:16], minor in [15:0] */
	__u64 src_clk_hz;
	__u64 dp_clk_hz;
	__u32 beat_bytes; /* 16 */
	__u32 fifo_depth; /* ingest FIFO, beats */
	__u32 max_bufs;
	__u32 caps; /* FDREC_CAP_* */
	__u64 buf_align;
	__u64 max_buf_size;
	__u32 max_sg_len; /* the AXI DMA's largest segment, bytes */
	__u32 reserved0;
	__u64 reserved[4];
};

/* FDREC_IOC_REGISTER_BUFS, while stopped: pin and map count buffers of buf_size bytes each;
 * addrs points to __u64[count] user addresses. A new set replaces the old; count 0 unregisters.
 * flags gives the set's direction (FDREC_DIR_PLAY needs FDREC_CAP_MM2S, else -EOPNOTSUPP). */
#define FDREC_DIR_RECORD    0u
#define FDREC_DIR_PLAY      1u
#define FDREC_BUFS_DIR_MASK 1u

struct fdrec_bufs {
	__u64 addrs;
	__u64 buf_size;
	__u32 count;
	__u32 flags;
};

/* FDREC_IOC_START: soft reset (FIFO flushed, counters cleared), PKT_LEN = buf_size / 16, every
 * registered buffer queued, the packetizer enabled. FDREC_START_TPG resets the generator's
 * sequence and enables it; without it the generator's state is left as it was. */
#define FDREC_START_TPG (1u << 0)

struct fdrec_start {
	__u32 flags;         /* in */
	__u32 pkt_len;       /* out: beats per buffer */
	__u64 first_seq;     /* out: the generator's first sequence number (0 after the reset) */
	__u64 start_time_ns; /* out: CLOCK_REALTIME when the packetizer was enabled */
	__u64 reserved[3];
};

/* FDREC_IOC_WAIT_FILLED: the next filled buffer, in fill order; 0, -ETIMEDOUT, -EINTR,
 * -ENODATA (stopped, none left), -EIO (DMA error). The buffer is then the application's. */
#define FDREC_FILLED_ERROR (1u << 0) /* the DMA reported an error */
#define FDREC_FILLED_SHORT (1u << 1) /* bytes < buf_size: TLAST came early */

struct fdrec_filled {
	__s32 timeout_ms; /* in: < 0 waits for ever, 0 polls */
	__u32 index;      /* out */
	__u64 bytes;      /* out */
	__u64 seq;        /* out: 0, 1, 2... since START */
	__u64 drop_count; /* out: the ingest FIFO's drop counter when the buffer completed */
	__u32 flags;      /* out: FDREC_FILLED_* */
	__u32 reserved0;
	__u64 reserved[2];
};

/* FDREC_IOC_RELEASE: buffer index back to the driver, which queues it again while running. */
struct fdrec_release {
	__u32 index;
	__u32 flags; /* 0 */
};

/* FDREC_IOC_GET_STATS, and FDREC_IOC_STOP (the final values). */
struct fdrec_stats {
	__u64 drop_count; /* beats dropped at the ingest FIFO */
	__u64 beats_in;   /* beats the source offered */
	__u64 beats_out;  /* beats delivered to the DMA */
	__u64 seq_next;   /* the generator's next sequence number */
	__u32 fifo_hwm;
	__u32 fifo_depth;
	__u32 overflow; /* sticky */
	__u32 running;  /* 1 between START and STOP */
	__u64 bufs_filled;
	__u64 bytes_filled;
	__u32 bufs_dma;   /* owned by the DMA */
	__u32 bufs_ready; /* filled, waiting for WAIT_FILLED */
	__u32 bufs_user;  /* the application's */
	__u32 dma_errors;
	__u64 reserved[4];
};

/* FDREC_IOC_SET_RATE (the generator) and FDREC_IOC_SET_SINK_RATE (the checker's throttle):
 * bytes/s in, the rate programmed (rounded) out. SET_RATE 0 stops the generator emitting;
 * SET_SINK_RATE refuses 0 (-EINVAL). */
struct fdrec_rate {
	__u64 rate_bps;
};

/* FDREC_IOC_PLAY_START, on a FDREC_DIR_PLAY set: arms the MM2S channel; every buffer is the
 * application's. FDREC_PLAY_CHECK soft-resets the fabric and the checker, which the first
 * PLAY_SUBMIT enables once the egress FIFO is primed; PLAY_STOP disables it again. */
#define FDREC_PLAY_CHECK (1u << 0)

struct fdrec_play_start {
	__u32 flags; /* in */
	__u32 reserved0;
	__u64 start_time_ns; /* out */
	__u64 reserved[4];
};

/* FDREC_IOC_PLAY_SUBMIT: buffer index holds bytes bytes of beats (a multiple of 16,
 * 1..buf_size); played in submission order, each as one packet. */
struct fdrec_play_submit {
	__u32 index;
	__u32 flags; /* 0 */
	__u64 bytes;
};

/* FDREC_IOC_PLAY_WAIT_DONE: the next buffer the DMA has read, in submission order; errors as
 * WAIT_FILLED. Its last beats may still be in the egress FIFO. */
#define FDREC_DONE_ERROR (1u << 0)

struct fdrec_play_done {
	__s32 timeout_ms; /* in */
	__u32 index;      /* out */
	__u64 bytes;      /* out */
	__u64 seq;        /* out: 0, 1... since PLAY_START */
	__u32 flags;      /* out: FDREC_DONE_* */
	__u32 reserved0;
	__u64 reserved[2];
};

/* The checker's counters (FDREC_CAP_CHECK; all 0 without it). */
struct fdrec_chk_stats {
	__u64 beats;
	__u64 errors;     /* beats whose upper half is not ~lower */
	__u64 gaps;       /* sequence discontinuities */
	__u64 gap_beats;  /* sequence numbers missing in all */
	__u64 underflows; /* sink ticks without data after the first beat */
	__u64 last_seq;
	__u64 rate_bps; /* the sink's throttle */
	__u32 enabled;
	__u32 reserved0;
	__u64 reserved[2];
};

/* FDREC_IOC_GET_PLAY_STATS, and FDREC_IOC_PLAY_STOP (values read after the stop). */
struct fdrec_play_stats {
	__u64 bufs_done;
	__u64 bytes_done;
	__u32 bufs_dma;
	__u32 bufs_ready;
	__u32 running;
	__u32 dma_errors;
	struct fdrec_chk_stats chk;
	__u64 egr_beats_in;
	__u64 egr_discard; /* beats flushed by PLAY_STOP */
	__u32 egr_level;
	__u32 egr_depth;
	__u64 reserved[4];
};

#define FDREC_IOC_MAGIC 0xBD

#define FDREC_IOC_GET_INFO       _IOR(FDREC_IOC_MAGIC, 0x00, struct fdrec_info)
#define FDREC_IOC_REGISTER_BUFS  _IOW(FDREC_IOC_MAGIC, 0x01, struct fdrec_bufs)
#define FDREC_IOC_START          _IOWR(FDREC_IOC_MAGIC, 0x02, struct fdrec_start)
#define FDREC_IOC_WAIT_FILLED    _IOWR(FDREC_IOC_MAGIC, 0x03, struct fdrec_filled)
#define FDREC_IOC_RELEASE        _IOW(FDREC_IOC_MAGIC, 0x04, struct fdrec_release)
#define FDREC_IOC_STOP           _IOR(FDREC_IOC_MAGIC, 0x05, struct fdrec_stats)
#define FDREC_IOC_GET_STATS      _IOR(FDREC_IOC_MAGIC, 0x06, struct fdrec_stats)
#define FDREC_IOC_SET_RATE       _IOWR(FDREC_IOC_MAGIC, 0x07, struct fdrec_rate)
#define FDREC_IOC_PLAY_START     _IOWR(FDREC_IOC_MAGIC, 0x08, struct fdrec_play_start)
#define FDREC_IOC_PLAY_SUBMIT    _IOW(FDREC_IOC_MAGIC, 0x09, struct fdrec_play_submit)
#define FDREC_IOC_PLAY_WAIT_DONE _IOWR(FDREC_IOC_MAGIC, 0x0A, struct fdrec_play_done)
#define FDREC_IOC_PLAY_STOP      _IOR(FDREC_IOC_MAGIC, 0x0B, struct fdrec_play_stats)
#define FDREC_IOC_GET_PLAY_STATS _IOR(FDREC_IOC_MAGIC, 0x0C, struct fdrec_play_stats)
#define FDREC_IOC_SET_SINK_RATE  _IOWR(FDREC_IOC_MAGIC, 0x0D, struct fdrec_rate)

/* The driver's layout, pinned: a change here is a different driver. */
#define FDREC_AT(s, f, o) FDREC_ASSERT(offsetof(struct s, f) == (o), #s "." #f " at " #o)
FDREC_ASSERT(sizeof(struct fdrec_info) == 96, "fdrec_info is 96 bytes");
FDREC_AT(fdrec_info, hw_version, 4);
FDREC_AT(fdrec_info, src_clk_hz, 8);
FDREC_AT(fdrec_info, dp_clk_hz, 16);
FDREC_AT(fdrec_info, beat_bytes, 24);
FDREC_AT(fdrec_info, fifo_depth, 28);
FDREC_AT(fdrec_info, max_bufs, 32);
FDREC_AT(fdrec_info, caps, 36);
FDREC_AT(fdrec_info, buf_align, 40);
FDREC_AT(fdrec_info, max_buf_size, 48);
FDREC_AT(fdrec_info, max_sg_len, 56);
FDREC_AT(fdrec_info, reserved, 64);
FDREC_ASSERT(sizeof(struct fdrec_bufs) == 24, "fdrec_bufs is 24 bytes");
FDREC_AT(fdrec_bufs, buf_size, 8);
FDREC_AT(fdrec_bufs, count, 16);
FDREC_AT(fdrec_bufs, flags, 20);
FDREC_ASSERT(sizeof(struct fdrec_start) == 48, "fdrec_start is 48 bytes");
FDREC_AT(fdrec_start, pkt_len, 4);
FDREC_AT(fdrec_start, first_seq, 8);
FDREC_AT(fdrec_start, start_time_ns, 16);
FDREC_ASSERT(sizeof(struct fdrec_filled) == 56, "fdrec_filled is 56 bytes");
FDREC_AT(fdrec_filled, index, 4);
FDREC_AT(fdrec_filled, bytes, 8);
FDREC_AT(fdrec_filled, seq, 16);
FDREC_AT(fdrec_filled, drop_count, 24);
FDREC_AT(fdrec_filled, flags, 32);
FDREC_ASSERT(sizeof(struct fdrec_release) == 8, "fdrec_release is 8 bytes");
FDREC_ASSERT(sizeof(struct fdrec_stats) == 112, "fdrec_stats is 112 bytes");
FDREC_AT(fdrec_stats, seq_next, 24);
FDREC_AT(fdrec_stats, fifo_hwm, 32);
FDREC_AT(fdrec_stats, running, 44);
FDREC_AT(fdrec_stats, bufs_filled, 48);
FDREC_AT(fdrec_stats, bytes_filled, 56);
FDREC_AT(fdrec_stats, bufs_dma, 64);
FDREC_AT(fdrec_stats, dma_errors, 76);
FDREC_ASSERT(sizeof(struct fdrec_rate) == 8, "fdrec_rate is 8 bytes");
FDREC_ASSERT(sizeof(struct fdrec_play_start) == 48, "fdrec_play_start is 48 bytes");
FDREC_AT(fdrec_play_start, start_time_ns, 8);
FDREC_ASSERT(sizeof(struct fdrec_play_submit) == 16, "fdrec_play_submit is 16 bytes");
FDREC_AT(fdrec_play_submit, bytes, 8);
FDREC_ASSERT(sizeof(struct fdrec_play_done) == 48, "fdrec_play_done is 48 bytes");
FDREC_AT(fdrec_play_done, bytes, 8);
FDREC_AT(fdrec_play_done, seq, 16);
FDREC_AT(fdrec_play_done, flags, 24);
FDREC_ASSERT(sizeof(struct fdrec_chk_stats) == 80, "fdrec_chk_stats is 80 bytes");
FDREC_AT(fdrec_chk_stats, underflows, 32);
FDREC_AT(fdrec_chk_stats, rate_bps, 48);
FDREC_AT(fdrec_chk_stats, enabled, 56);
FDREC_ASSERT(sizeof(struct fdrec_play_stats) == 168, "fdrec_play_stats is 168 bytes");
FDREC_AT(fdrec_play_stats, running, 24);
FDREC_AT(fdrec_play_stats, chk, 32);
FDREC_AT(fdrec_play_stats, egr_beats_in, 112);
FDREC_AT(fdrec_play_stats, egr_discard, 120);
FDREC_AT(fdrec_play_stats, egr_level, 128);
FDREC_AT(fdrec_play_stats, egr_depth, 132);
FDREC_AT(fdrec_play_stats, reserved, 136);

/* The numbers the driver switches on, as literals (the generic _IOC encoding of x86, arm and
 * arm64, where nvtape runs). */
#if defined(__x86_64__) || defined(__i386__) || defined(__aarch64__) || defined(__arm__)
FDREC_ASSERT(FDREC_IOC_GET_INFO == 0x8060bd00u, "GET_INFO");
FDREC_ASSERT(FDREC_IOC_REGISTER_BUFS == 0x4018bd01u, "REGISTER_BUFS");
FDREC_ASSERT(FDREC_IOC_START == 0xc030bd02u, "START");
FDREC_ASSERT(FDREC_IOC_WAIT_FILLED == 0xc038bd03u, "WAIT_FILLED");
FDREC_ASSERT(FDREC_IOC_RELEASE == 0x4008bd04u, "RELEASE");
FDREC_ASSERT(FDREC_IOC_STOP == 0x8070bd05u, "STOP");
FDREC_ASSERT(FDREC_IOC_GET_STATS == 0x8070bd06u, "GET_STATS");
FDREC_ASSERT(FDREC_IOC_SET_RATE == 0xc008bd07u, "SET_RATE");
FDREC_ASSERT(FDREC_IOC_PLAY_START == 0xc030bd08u, "PLAY_START");
FDREC_ASSERT(FDREC_IOC_PLAY_SUBMIT == 0x4010bd09u, "PLAY_SUBMIT");
FDREC_ASSERT(FDREC_IOC_PLAY_WAIT_DONE == 0xc030bd0au, "PLAY_WAIT_DONE");
FDREC_ASSERT(FDREC_IOC_PLAY_STOP == 0x80a8bd0bu, "PLAY_STOP");
FDREC_ASSERT(FDREC_IOC_GET_PLAY_STATS == 0x80a8bd0cu, "GET_PLAY_STATS");
FDREC_ASSERT(FDREC_IOC_SET_SINK_RATE == 0xc008bd0du, "SET_SINK_RATE");
#endif
#undef FDREC_AT

#endif
