/* SPDX-License-Identifier: MIT */
/*
 * fdrec_uapi.h: nvtape's description of the FPGA Drive Recorder driver's ioctl interface
 * (magic 0xBD, API version 1), written from the interface notes: shared by nvtape's fdrec
 * source and sink and the emulation module tests/vm/fdrec_emu (tests/vm/run copies it there).
 * Fixed-layout structs, the same for 32- and 64-bit user space.
 */
#ifndef FDREC_UAPI_H
#define FDREC_UAPI_H

#ifdef __KERNEL__
#include <linux/types.h>
#else
#include <stdint.h>
typedef uint32_t __u32;
typedef uint64_t __u64;
#endif
#include <linux/ioctl.h>

#define FDREC_API_VERSION 1
#define FDREC_MAX_BUFS    64
#define FDREC_BEAT_BYTES  16

#define FDREC_CAP_S2MM  0x1u /* record */
#define FDREC_CAP_MM2S  0x2u /* play */
#define FDREC_CAP_CHECK 0x4u /* pattern checker at the sink */
#define FDREC_CAP_TPG   0x8u /* test pattern generator */

#define FDREC_DIR_RECORD 0u
#define FDREC_DIR_PLAY   1u

#define FDREC_START_TPG  0x1u
#define FDREC_PLAY_CHECK 0x1u

#define FDREC_FILLED_SHORT 0x1u
#define FDREC_FILLED_ERROR 0x2u

struct fdrec_info {
	__u32 api_version;
	__u32 caps;
	__u32 fifo_depth; /* beats */
	__u32 max_bufs;
	__u64 src_clk_hz;
	__u64 rate_bps;
};

struct fdrec_bufs {
	__u64 addrs[FDREC_MAX_BUFS]; /* user addresses, each 2 MB aligned on hardware */
	__u64 buf_size;              /* bytes, a multiple of 2 MB on hardware (4 KiB here) */
	__u32 count;
	__u32 flags; /* FDREC_DIR_* */
};

struct fdrec_start {
	__u32 flags;     /* in: FDREC_START_TPG */
	__u32 pkt_len;   /* out: beats per buffer */
	__u64 first_seq; /* in (emulation: the first beat's seq; hardware: 0) / out */
	__u64 start_time_ns;
};

struct fdrec_filled {
	__u32 timeout_ms; /* in */
	__u32 index;      /* out: buffer index */
	__u64 bytes;      /* bytes filled */
	__u64 seq;        /* fill sequence number (0, 1, ...) */
	__u64 drop_count; /* beats dropped before the end of this buffer's data */
	__u64 first_beat; /* TPG seq of the first beat in the buffer */
	__u32 flags;      /* FDREC_FILLED_* */
	__u32 pad;
};

struct fdrec_stats {
	__u64 drop_count, beats_in, beats_out, seq_next;
	__u32 fifo_hwm, fifo_depth;
	__u32 overflow, running;
	__u64 bufs_filled, bytes_filled;
	__u32 bufs_dma, bufs_ready, bufs_user, dma_errors;
};

struct fdrec_play_submit {
	__u32 index;
	__u32 pad;
	__u64 bytes; /* multiple of 16 */
};

struct fdrec_play_done {
	__u32 timeout_ms;
	__u32 index;
	__u64 bytes;
	__u64 seq;
	__u32 flags;
	__u32 pad;
};

struct fdrec_play_stats {
	__u64 beats, errors, gaps, gap_beats, underflows, last_seq, rate_bps;
	__u32 enabled, pad;
	__u64 egr_beats_in, egr_discard;
	__u32 egr_level, egr_depth;
};

#define FDREC_IOC_MAGIC      0xBD
#define FDREC_GET_INFO       _IOR(FDREC_IOC_MAGIC, 0, struct fdrec_info)
#define FDREC_REGISTER_BUFS  _IOW(FDREC_IOC_MAGIC, 1, struct fdrec_bufs)
#define FDREC_START          _IOWR(FDREC_IOC_MAGIC, 2, struct fdrec_start)
#define FDREC_WAIT_FILLED    _IOWR(FDREC_IOC_MAGIC, 3, struct fdrec_filled)
#define FDREC_RELEASE        _IOW(FDREC_IOC_MAGIC, 4, __u32)
#define FDREC_STOP           _IOR(FDREC_IOC_MAGIC, 5, struct fdrec_stats)
#define FDREC_GET_STATS      _IOR(FDREC_IOC_MAGIC, 6, struct fdrec_stats)
#define FDREC_SET_RATE       _IOW(FDREC_IOC_MAGIC, 7, __u64)
#define FDREC_PLAY_START     _IOW(FDREC_IOC_MAGIC, 8, __u32)
#define FDREC_PLAY_SUBMIT    _IOW(FDREC_IOC_MAGIC, 9, struct fdrec_play_submit)
#define FDREC_PLAY_WAIT_DONE _IOWR(FDREC_IOC_MAGIC, 10, struct fdrec_play_done)
#define FDREC_PLAY_STOP      _IOR(FDREC_IOC_MAGIC, 11, struct fdrec_play_stats)
#define FDREC_GET_PLAY_STATS _IOR(FDREC_IOC_MAGIC, 12, struct fdrec_play_stats)
#define FDREC_SET_SINK_RATE  _IOW(FDREC_IOC_MAGIC, 13, __u64)

#endif
