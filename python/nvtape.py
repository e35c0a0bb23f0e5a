# SPDX-License-Identifier: MIT
"""Read nvtape recordings in pure Python (standard library + numpy; python3-crc32c when present).

The on-disk format is docs/file-format.md: a 4096-byte header block (version 2: two 2048-byte
slots, each with a CRC32C and a generation; version 1: one copy), the data from byte 4096, the
drop index after the data; FPGA Drive Recorder v1 files (fdrec); recordings striped over
several members in the md RAID0 layout.

    import nvtape
    rec = nvtape.Recording("run1.nvt")              # or ["m0.nvt", "m1.nvt"] for a stripe
    rec.header["data_bytes"], rec.complete, rec.valid_bytes, rec.header_torn
    beats = rec.data(dtype="<u8").reshape(-1, 2)    # single file: numpy memmap of valid data
    chunk = rec.read(0, 1 << 20)                    # any recording, stripes too: bytes
    rec.drop_events()                               # [DropEvent(data_offset, beats, time_ns)]
    rec.chunk_crcs()                                # [ChunkCrc(data_offset, length, crc32c, chunks)]
    rec.verify_checksums()                          # [(ChunkCrc, crc read)] that do not match
    rec.meta()                                      # {"core:sample_rate": "2400000", ...}
    rec.chunk_times()                               # [(data_offset, CLOCK_REALTIME ns)]
    rec.data()                                      # dtype from core:datatype when it has one

Command line:
    python3 -m nvtape info [--members] [--stripe B] [--member-offset B] FILE...
    python3 nvtape.py check [--crc auto|crc32c|numpy|python] [--stripe B] [--member-offset B]
                            FILE...
info prints a short summary of every FILE (with --members, --stripe or --member-offset the
FILEs are the members of one striped recording); check reads one recording (several FILEs: its
striped members), checks the header, the index CRC and, for a test-pattern recording, every
{seq, ~seq} beat and the gaps against the drop index, and every chunk against the CRC32C the
index holds for it, like `nvtape verify`, reading the data once, with progress on stderr
when it is a terminal. CRC32C is computed with the crc32c module (Debian: python3-crc32c) when
it can be imported, else with numpy, else in pure Python (--crc picks one; all agree).
Exit codes: 0 clean, 2 data problem, 1 error, 64 usage.
"""

import collections
import os
import stat
import struct
import sys
import time

try:
    import numpy as np
except ImportError:  # header and index reading work without it; data() and check need it
    np = None
try:
    import crc32c as _crc32c_mod  # python3-crc32c: a compiled CRC32C, the fastest way here
except ImportError:
    _crc32c_mod = None

__all__ = ["Recording", "DropEvent", "ChunkCrc", "crc32c", "crc_engines", "sigmf_dtype", "writer_pid",
           "main"]

HEADER_SIZE = 4096
SLOT = 2048
MAGIC = b"NVTAPE\0\0"
FDREC_MAGIC = b"FDREC\0\0\0"
INDEX_MAGIC = b"NVTINDEX"
FLAG_COMPLETE, FLAG_RECOVERED, FLAG_STOP_ERROR = 1, 2, 4
SRC_TPG = 1
SOURCE_NAMES = {1: "tpg", 2: "stdin", 3: "api", 4: "dev", 6: "fdrec", 7: "shm", 8: "udp", 9: "packet",
                10: "pcap"}
MAX_DRIVES = 16
MAX_INDEX_BYTES = 1 << 32

DropEvent = collections.namedtuple("DropEvent", "data_offset beats time_ns")
ChunkCrc = collections.namedtuple("ChunkCrc", "data_offset length crc32c chunks")


def _crc_table():
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


_CRC_TABLE = _crc_table()


def _crc32c_py(data, crc=0):
    """CRC32C (Castagnoli, as iSCSI/ext4; nvt_crc32c), table driven."""
    t = _CRC_TABLE
    crc ^= 0xFFFFFFFF
    for b in bytes(data):
        crc = t[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def crc32c(data, crc=0):
    """CRC32C of data (bytes or any buffer), continuing from crc, the CRC32C of what came
    before: crc32c(b, crc32c(a)) == crc32c(a + b). The crc32c module's when it is there."""
    if _crc32c_mod is not None:
        return _crc32c_mod.crc32c(data, crc)
    return _crc32c_py(data, crc)


def crc_engines():
    """The ways this Python can compute chunk checksums, fastest first: "crc32c" (the module
    python3-crc32c), "numpy" (vectorised here), "python" (a table, slow)."""
    return [e for e, ok in (("crc32c", _crc32c_mod is not None), ("numpy", np is not None),
                            ("python", True)) if ok]


_POLY = 0x82F63B78


def _multmodp(a, b):
    """a * b modulo the CRC32C polynomial, both reflected (bit 31 is x^0)."""
    m, p = 1 << 31, 0
    while True:
        if a & m:
            p ^= b
            if a & (m - 1) == 0:
                return p
        m >>= 1
        b = (b >> 1) ^ _POLY if b & 1 else b >> 1


def _x8n(nbytes):
    """x^(8 * nbytes) modulo the polynomial: what appending nbytes zero bytes multiplies by."""
    result, sq, n = 1 << 31, 1 << 30, 8 * nbytes  # x^0, x^1
    while n:
        if n & 1:
            result = _multmodp(sq, result)
        sq = _multmodp(sq, sq)
        n >>= 1
    return result


class _VecCrc:
    """CRC32C of many equal blocks at once with numpy (slicing-by-8 across the blocks), joined
    into the CRC of a span by the polynomial arithmetic of CRC combination: about as fast as
    numpy moves data, without a compiled extension."""
    BLOCK = 4096

    def __init__(self):
        t = np.zeros((8, 256), dtype=np.uint32)
        t[0] = np.array(_CRC_TABLE, dtype=np.uint32)
        for k in range(1, 8):
            t[k] = (t[k - 1] >> 8) ^ t[0][t[k - 1] & 0xFF]
        self.t = t
        self.shift_block = self._mul_tables(_x8n(self.BLOCK))

    @staticmethod
    def _mul_tables(a):
        """x -> a * x as four 256-entry tables, one per byte of x (it is linear in x)."""
        return [np.array([_multmodp(a, v << (8 * i)) for v in range(256)], dtype=np.uint32)
                for i in range(4)]

    @staticmethod
    def _mul(tabs, x):
        return tabs[0][x & 0xFF] ^ tabs[1][(x >> 8) & 0xFF] ^ tabs[2][(x >> 16) & 0xFF] ^ \
            tabs[3][x >> 24]

    def blocks(self, buf):
        """The CRC registers (from 0, no inversion) of each BLOCK-byte row of buf (n, BLOCK)."""
        t = self.t
        w = np.ascontiguousarray(buf).view("<u4")
        reg = np.zeros(w.shape[0], dtype=np.uint32)
        for i in range(0, w.shape[1], 2):
            lo = reg ^ w[:, i]
            hi = w[:, i + 1]
            reg = (t[7][lo & 0xFF] ^ t[6][(lo >> 8) & 0xFF] ^ t[5][(lo >> 16) & 0xFF] ^
                   t[4][lo >> 24] ^ t[3][hi & 0xFF] ^ t[2][(hi >> 8) & 0xFF] ^
                   t[1][(hi >> 16) & 0xFF] ^ t[0][hi >> 24])
        return reg

    def spans(self, data, length):
        """CRC32C of each length-byte row of data (n, length), length a multiple of BLOCK."""
        n, k = data.shape[0], length // self.BLOCK
        regs = self.blocks(data.reshape(n * k, self.BLOCK)).reshape(n, k)
        acc = regs[:, 0].copy()
        for j in range(1, k):  # Horner: shift by a block, add the next block's register
            acc = self._mul(self.shift_block, acc) ^ regs[:, j]
        init = _multmodp(_x8n(length), 0xFFFFFFFF)  # the initial ~0 carried through
        return acc ^ np.uint32(init) ^ np.uint32(0xFFFFFFFF)


def sigmf_dtype(name):
    """The numpy dtype of a SigMF datatype name (cf32_le, ci16_le, ru8, ...); None when it is
    not one. Complex integers, which numpy has no type for, are (re, im) records."""
    if np is None or len(name) < 3 or name[0] not in "rc":
        return None
    base, _, endian = name[1:].partition("_")
    kinds = {"f32": "f4", "f64": "f8", "i32": "i4", "i16": "i2", "u32": "u4", "u16": "u2",
             "i8": "i1", "u8": "u1"}
    if base not in kinds or (base[1:] != "8" and endian not in ("le", "be")) or \
            (base[1:] == "8" and endian):
        return None
    t = ("<" if endian == "le" else ">" if endian == "be" else "|") + kinds[base]
    if name[0] == "r":
        return np.dtype(t)
    if base[0] == "f":
        return np.dtype(t[0] + "c" + str(2 * int(kinds[base][1])))
    return np.dtype([("re", t), ("im", t)])


def _crc_reg(data, reg=0):
    """The CRC register after data, from reg (no inversion), table driven."""
    t = _CRC_TABLE
    for b in bytes(data):
        reg = t[(reg ^ b) & 0xFF] ^ (reg >> 8)
    return reg


def _str(raw):
    """A NUL-padded char[] field as nvtape reads it (up to the first NUL)."""
    return raw.split(b"\0", 1)[0].decode("utf-8", "replace")


def _u32(b, off):
    return struct.unpack_from("<I", b, off)[0]


def _u64(b, off):
    return struct.unpack_from("<Q", b, off)[0]


# struct nvt_header (include/nvtape/format.h): name, offset, struct format
_NVT_FIELDS = [
    ("version", 8, "I"), ("header_size", 12, "I"), ("beat_bytes", 16, "I"), ("flags", 20, "I"),
    ("source_kind", 24, "I"), ("chunk_bytes", 28, "I"), ("chunk_count", 32, "I"),
    ("checkpoints", 36, "I"), ("rate_bps", 40, "Q"), ("start_ns", 48, "Q"), ("stop_ns", 56, "Q"),
    ("data_offset", 64, "Q"), ("data_bytes", 72, "Q"), ("durable_bytes", 80, "Q"),
    ("drop_count", 88, "Q"), ("drop_events", 96, "Q"), ("first_seq", 104, "Q"),
    ("index_offset", 112, "Q"), ("index_bytes", 120, "Q"), ("index_crc", 128, "I"),
    ("members", 132, "I"), ("duration_ns", 136, "Q"), ("stripe_bytes", 240, "Q"),
    ("member_offset", 248, "Q"), ("drive_count", 256, "I"), ("io_path", 260, "I"),
    ("generation", 1560, "Q"),
]


def _valid_slot(s):
    return (s[:8] == MAGIC and _u32(s, 8) == 2 and crc32c(s[:2044]) == _u32(s, 2044))


def _decode_nvtape(blk):
    """The header fields of an nvtape header block (version 2 or 1): (fields, torn)."""
    s0, s1 = blk[:SLOT], blk[SLOT:HEADER_SIZE]
    a, b = _valid_slot(s0), _valid_slot(s1)
    torn = a != b
    if a and b:
        h = s1 if _u64(s1, 1560) > _u64(s0, 1560) else s0
    elif a or b:
        h = s0 if a else s1
    elif _u32(s0, 8) == 1:
        stored, computed = _u32(blk, 4092), crc32c(blk[:4092])
        if stored != computed:
            raise ValueError("header CRC mismatch (version 1: stored 0x%08x, computed 0x%08x): "
                             "the header is damaged; nothing in it can be trusted"
                             % (stored, computed))
        h = blk  # the same fields at the same offsets; reserved zeros after
    elif _u32(s0, 8) != 2 and _u32(s1, 8) != 2:
        raise ValueError("unsupported nvtape header version %d: this reader knows versions 1 "
                         "and 2" % _u32(s0, 8))
    else:
        raise ValueError("both copies of the header are damaged (CRC mismatch in the slots at 0 "
                         "and 2048): nothing in them can be trusted")
    f = {name: struct.unpack_from("<" + fmt, h, off)[0] for name, off, fmt in _NVT_FIELDS}
    if f["header_size"] != HEADER_SIZE or f["data_offset"] != HEADER_SIZE or \
            not 1 <= f["beat_bytes"] <= 4096:
        raise ValueError("unsupported nvtape header (version %d, header %d bytes, data at %d, "
                         "beat %d bytes): this reader knows 4096-byte headers, data at 4096, "
                         "beats of 1 to 4096 bytes" % (f["version"], f["header_size"],
                                                       f["data_offset"], f["beat_bytes"]))
    if f["version"] == 1:
        f["generation"] = 0
    f["format"] = "nvtape"
    f["hostname"] = _str(h[144:208])
    f["writer"] = _str(h[208:240])
    f["source_name"] = _str(h[1544:1560])
    f["check"] = _str(h[1568:1616])
    drives = []
    for i in range(min(f["drive_count"], MAX_DRIVES)):
        d = h[264 + 80 * i:264 + 80 * (i + 1)]
        trim = lambda raw: _str(raw).rstrip(" ")
        drives.append({"model": trim(d[0:40]), "serial": trim(d[40:60]),
                       "firmware": trim(d[60:68]), "nsid": _u32(d, 68),
                       "lba_bytes": _u32(d, 72), "max_cmd_kib": _u32(d, 76)})
    f["drives"] = drives
    return f, torn


def _decode_fdrec(h):
    version, size, beat, flags = struct.unpack_from("<IIII", h, 8)
    if version != 1 or size != HEADER_SIZE or beat != 16:
        raise ValueError("unsupported FPGA Drive Recorder header (version %d, size %d, beat %d; "
                         "this reader knows version 1, 4096 bytes, 16-byte beats)"
                         % (version, size, beat))
    rate, start, stop, data, drops, first = struct.unpack_from("<6Q", h, 36)
    f = {name: 0 for name, _, _ in _NVT_FIELDS}
    f.update(format="fdrec", version=1, header_size=HEADER_SIZE, beat_bytes=16,
             flags=FLAG_COMPLETE if flags & 2 else 0, source_kind=SRC_TPG if flags & 1 else 0,
             rate_bps=rate, start_ns=start, stop_ns=stop, data_offset=HEADER_SIZE,
             data_bytes=data, drop_count=drops, first_seq=first, writer=_str(h[84:116]),
             hostname=_str(h[116:180]), source_name="", check="", drives=[])
    return f, False


def _share(size, m, n, stripe):
    """Bytes of the logical range [0, size) that lie on member m (nvt_layout_share)."""
    if n <= 1:
        return size
    row = stripe * n
    full, rem = divmod(size, row)
    start = m * stripe
    part = min(rem - start, stripe) if rem > start else 0
    return full * stripe + part


class Recording:
    """An nvtape (version 1 or 2) or FPGA Drive Recorder v1 recording, opened read-only.

    path: a file or device, or a list of the members of a striped recording in order.
    stripe, member_offset: the stripe's chunk size and where it starts on every member; by
    default what the header (on member 0) says. A header that does not describe the files
    given, or that claims bytes the files do not hold, raises ValueError.

    Header fields are in .header, named as in `nvtape info --json`'s "header" object, and
    readable as attributes (rec.data_bytes, rec.complete, rec.valid_bytes, rec.header_torn,
    rec.check, ...), except drop_events, which is the method returning the events (the count
    is rec.header["drop_events"]). .fields holds every raw header field (source_kind,
    index_crc, members, stripe_bytes, member_offset too).
    """

    def __init__(self, path, stripe=None, member_offset=None):
        if isinstance(path, (str, bytes, os.PathLike)):
            paths = [os.fspath(path)]
        else:
            paths = [os.fspath(p) for p in path]
        if not paths:
            raise ValueError("no file given")
        if len(paths) > 16:
            raise ValueError("%d members: 1 to 16 are supported" % len(paths))
        if member_offset is not None and (member_offset < 0 or member_offset % 4096):
            raise ValueError("the member offset must be a multiple of 4 KiB")
        if stripe is not None and len(paths) > 1 and \
                (stripe < 4096 or stripe % 4096 or stripe > 1 << 30):
            raise ValueError("the stripe chunk must be a multiple of 4 KiB from 4K to 1G")
        self.paths = paths
        self.name = "+".join(paths)
        self._fds = []
        try:
            for p in paths:
                self._fds.append(os.open(p, os.O_RDONLY | os.O_NONBLOCK))
            self._open(stripe, member_offset)
        except BaseException:
            self.close()
            raise

    # ---- opening
    def _member_size(self, m):
        st = os.fstat(self._fds[m])
        if stat.S_ISBLK(st.st_mode):
            return os.lseek(self._fds[m], 0, os.SEEK_END), True
        if not stat.S_ISREG(st.st_mode):
            raise ValueError("%s is neither a file nor a block device" % self.paths[m])
        return st.st_size, False

    def _open(self, stripe, member_offset):
        n = len(self.paths)
        off0 = member_offset or 0
        size0, _ = self._member_size(0)
        hl = max(0, min(HEADER_SIZE, size0 - off0))
        blk = os.pread(self._fds[0], hl, off0) if hl else b""
        if len(blk) < 8 or blk[:8] not in (MAGIC, FDREC_MAGIC):
            raise ValueError("%s: not a recording: bad magic (expected \"NVTAPE\" or an FPGA "
                             "Drive Recorder \"FDREC\" header at offset %d)%s"
                             % (self.name, off0, "; members written with --member-offset: give "
                                "member_offset=" if n > 1 and member_offset is None else ""))
        if len(blk) < HEADER_SIZE:
            raise ValueError("%s: truncated header: %d of 4096 bytes (file cut short?)"
                             % (self.name, len(blk)))
        try:
            f, torn = _decode_fdrec(blk) if blk[:8] == FDREC_MAGIC else _decode_nvtape(blk)
        except ValueError as e:
            raise ValueError("%s: %s" % (self.name, e)) from None
        self.fields = f
        self.format = f["format"]
        self.complete = bool(f["flags"] & FLAG_COMPLETE)

        # the layout: the members given against the stripe the header describes
        if n > 1:
            if f["members"] <= 1:
                raise ValueError("%s: %s is a single-file recording, not a stripe: give it "
                                 "alone" % (self.name, self.paths[0]))
            self.stripe = f["stripe_bytes"] if stripe is None else stripe
            self.member_offset = f["member_offset"] if member_offset is None else member_offset
            if (f["members"], f["stripe_bytes"], f["member_offset"]) != \
                    (n, self.stripe, self.member_offset) or \
                    not 4096 <= self.stripe <= 1 << 30 or self.stripe % 4096:
                raise ValueError(
                    "%s: the recording is striped over %d members with %d KiB chunks, %d "
                    "bytes into each (give them all, in order, with stripe=%d, "
                    "member_offset=%d)" % (self.name, f["members"], f["stripe_bytes"] >> 10,
                                           f["member_offset"], f["stripe_bytes"],
                                           f["member_offset"]))
        else:
            self.stripe = 0
            self.member_offset = off0
        sizes, blockdev = [], False
        for m in range(n):
            s, bd = self._member_size(m)
            blockdev |= bd
            sizes.append(max(0, s - self.member_offset))
        self._sizes = sizes
        if n == 1:
            file_bytes = sizes[0]
        elif blockdev:
            file_bytes = min(sizes) // self.stripe * self.stripe * n
        else:
            file_bytes = sum(sizes)
        self.file_bytes = file_bytes
        if n == 1 and f["members"] > 1:
            # one member alone is too short for what its header describes; an md array or
            # image holding the whole logical space is read as an ordinary recording
            need = f["data_bytes"] if self.complete else f["durable_bytes"]
            if file_bytes < HEADER_SIZE + need:
                raise ValueError(
                    "%s: the recording is striped over %d members with %d KiB chunks, %d bytes "
                    "into each: give all the members (Recording([m0, m1, ...]))"
                    % (self.name, f["members"], f["stripe_bytes"] >> 10, f["member_offset"]))
        self._check_lengths(blockdev)
        h = {
            "format": f["format"], "version": f["version"], "beat_bytes": f["beat_bytes"],
            "flags": f["flags"], "complete": self.complete,
            "recovered": bool(f["flags"] & FLAG_RECOVERED),
            "stop_error": bool(f["flags"] & FLAG_STOP_ERROR),
            "source": SOURCE_NAMES.get(f["source_kind"], "unknown"),
        }
        for k in ("rate_bps", "start_ns", "stop_ns", "duration_ns", "data_offset", "data_bytes",
                  "durable_bytes"):
            h[k] = f[k]
        h["valid_bytes"] = self.valid_bytes
        for k in ("drop_count", "drop_events", "first_seq", "index_offset", "index_bytes",
                  "chunk_bytes", "chunk_count", "checkpoints", "generation"):
            h[k] = f[k]
        h["header_torn"] = torn
        h["file_bytes"] = file_bytes
        for k in ("hostname", "writer", "source_name", "check"):
            h[k] = f[k]
        h["io_path"] = "nvme" if f["io_path"] == 1 else "block"
        h["drives"] = f["drives"]
        self.header = h
        self.header_torn = torn

    def _check_lengths(self, blockdev):
        """valid_bytes derived, and every length the header gives checked against what the
        files hold (nvt_recording_open)."""
        f, size, name = self.fields, self.file_bytes, self.name
        data_end = f["data_offset"] + f["data_bytes"]
        if f["index_bytes"] and f["index_bytes"] > MAX_INDEX_BYTES:
            raise ValueError("%s: index of %d bytes is implausible: the header is damaged"
                             % (name, f["index_bytes"]))
        if max(data_end, f["data_offset"] + f["durable_bytes"],
               f["index_offset"] + f["index_bytes"]) >= 1 << 64:
            raise ValueError("%s: the header's lengths overflow (data %d, durable %d, index %d at "
                             "%d): the header is damaged" % (name, f["data_bytes"],
                                                            f["durable_bytes"], f["index_bytes"],
                                                            f["index_offset"]))
        if self.complete:
            end = data_end
            if f["index_bytes"] and f["index_offset"] < end:
                raise ValueError("%s: the header places the index (%d) inside the data (ends "
                                 "%d): the header is damaged" % (name, f["index_offset"], end))
            if f["index_bytes"]:
                end = f["index_offset"] + f["index_bytes"]
            n = len(self.paths)
            for m in range(n):
                want = _share(end, m, n, self.stripe)
                have = self._sizes[m]
                if have < want:
                    raise ValueError("%s: %s holds %d bytes but the header says %d: the file was "
                                     "truncated or copied incompletely, or the header is "
                                     "damaged" % (name, self.paths[m], have + self.member_offset,
                                                  want + self.member_offset))
                if have > want and self.format == "nvtape" and not blockdev:
                    raise ValueError("%s: %s holds %d bytes, the header accounts for %d: the "
                                     "file was appended to or the header is stale"
                                     % (name, self.paths[m], have + self.member_offset,
                                        want + self.member_offset))
            if f["durable_bytes"] > f["data_bytes"]:
                raise ValueError("%s: complete recording of %d data bytes whose checkpoint "
                                 "claims %d: the header is damaged"
                                 % (name, f["data_bytes"], f["durable_bytes"]))
            self.valid_bytes = f["data_bytes"]
        elif self.format == "nvtape":
            self.valid_bytes = f["durable_bytes"]
            if size < f["data_offset"] + f["durable_bytes"]:
                raise ValueError("%s: incomplete recording whose checkpoint (%d data bytes) lies "
                                 "beyond the end of the file (%d bytes): the header is damaged"
                                 % (name, f["durable_bytes"], size))
            if f["index_bytes"] and f["index_offset"] < f["data_offset"] + f["durable_bytes"]:
                raise ValueError("%s: the header places the index (%d bytes at %d) inside the "
                                 "data: the header is damaged"
                                 % (name, f["index_bytes"], f["index_offset"]))
            if f["index_bytes"] and f["index_offset"] + f["index_bytes"] > size:
                # the checkpoint's index beyond a file cut after it: not used (as nvtape)
                f["index_offset"] = f["index_bytes"] = f["index_crc"] = 0
        else:
            # fdrec never checkpoints: everything after the header is candidate data
            v = max(0, size - HEADER_SIZE)
            self.valid_bytes = v - v % 16

    def __getattr__(self, key):
        h = self.__dict__.get("header")
        if h is not None and key in h:
            return h[key]
        raise AttributeError(key)

    def close(self):
        for fd in self._fds:
            os.close(fd)
        self._fds = []

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        return "<nvtape.Recording %s: %s v%d, %d valid bytes%s>" % (
            self.name, self.format, self.header["version"], self.valid_bytes,
            "" if self.complete else ", incomplete")

    # ---- reading
    def _readinto(self, buf, off):
        """Fill buf (a writable buffer) with the logical space (header at 0) from off, across
        the members, without a copy in between."""
        mv = memoryview(buf).cast("B")
        n, at = len(self.paths), 0
        while at < len(mv):
            if n <= 1:
                m, moff, run = 0, self.member_offset + off, len(mv) - at
            else:
                row, within = divmod(off, self.stripe * n)
                m = within // self.stripe
                moff = self.member_offset + row * self.stripe + within % self.stripe
                run = self.stripe - within % self.stripe
            k = min(run, len(mv) - at)
            got = os.preadv(self._fds[m], [mv[at:at + k]], moff)
            if got == 0:
                raise ValueError("%s: %s ends at %d: %d bytes at %d cannot be read (the file "
                                 "was truncated?)" % (self.name, self.paths[m], moff, k, moff))
            off += got
            at += got

    def _pread(self, length, off):
        """length bytes of the logical space (header at 0) from off, across the members."""
        if len(self.paths) <= 1:
            b = os.pread(self._fds[0], length, self.member_offset + off)
            if len(b) == length:
                return b
        out = bytearray(length)
        self._readinto(out, off)
        return bytes(out)

    def _read_array(self, offset, length):
        """length bytes of the valid data from offset as a new uint8 numpy array."""
        a = np.empty(length, dtype=np.uint8)
        self._readinto(a, HEADER_SIZE + offset)
        return a

    def read(self, offset=0, length=None):
        """length bytes of the valid data from data offset offset (default: up to valid_bytes),
        as bytes; works for every layout. Reading past valid_bytes raises ValueError."""
        if length is None:
            length = self.valid_bytes - offset
        if offset < 0 or length < 0 or offset + length > self.valid_bytes:
            raise ValueError("%s: read of %d bytes at %d is outside the valid data (%d bytes)"
                             % (self.name, length, offset, self.valid_bytes))
        return self._pread(length, HEADER_SIZE + offset)

    def data(self, dtype=None):
        """The valid data of a single-file recording as a read-only numpy memmap of dtype
        (default: the one core:datatype names, complex integers as (re, im) records; else
        uint8; "<u8" and .reshape(-1, 2) gives test-pattern beats)."""
        if np is None:
            raise RuntimeError("data() needs numpy (python3-numpy)")
        if dtype is None:
            dtype = sigmf_dtype(self.meta().get("core:datatype", "")) or "u1"
        if len(self.paths) > 1:
            raise ValueError("%s is striped over %d members: its data is not contiguous in any "
                             "file; use read(offset, length) (or an md array assembled from "
                             "the members)" % (self.name, len(self.paths)))
        dt = np.dtype(dtype)
        if self.valid_bytes % dt.itemsize:
            raise ValueError("%s: %d valid bytes are not a whole number of %d-byte %s items"
                             % (self.name, self.valid_bytes, dt.itemsize, dt))
        count = self.valid_bytes // dt.itemsize
        if count == 0:
            return np.zeros(0, dtype=dt)
        return np.memmap(self.paths[0], dtype=dt, mode="r",
                         offset=self.member_offset + HEADER_SIZE, shape=(count,))

    def _index_records(self):
        """The index's records as (type, entry_bytes, payload bytes); the CRC is checked."""
        f = self.fields
        if not f["index_bytes"]:
            return []
        buf = self._pread(f["index_bytes"], f["index_offset"])
        if crc32c(buf) != f["index_crc"]:
            raise ValueError("%s: index CRC mismatch: the index is damaged" % self.name)
        if len(buf) < 16 or buf[:8] != INDEX_MAGIC:
            raise ValueError("%s: index has a bad magic: the index area is damaged" % self.name)
        count = _u32(buf, 12)
        pos, out = 16, []
        for i in range(count):
            if len(buf) - pos < 16:
                raise ValueError("%s: index record %d runs past the index end" % (self.name, i))
            rtype, entry, payload = struct.unpack_from("<IIQ", buf, pos)
            pos += 16
            if payload > len(buf) - pos:
                raise ValueError("%s: index record %d (%d bytes) runs past the index"
                                 % (self.name, i, payload))
            out.append((rtype, entry, buf[pos:pos + payload]))
            pos += payload
        return out

    def chunk_crcs(self):
        """The chunk checksums: a list of ChunkCrc(data_offset, length, crc32c, chunks), the
        CRC32C of each span of data as it was written (empty when the recording has none)."""
        for rtype, entry, p in self._index_records():
            if rtype == 2 and entry >= 24:
                return [ChunkCrc(*struct.unpack_from("<QQII", p, k * entry))
                        for k in range(len(p) // entry)]
        return []

    def _checked_spans(self):
        """The chunk checksums within valid_bytes, checked to follow each other from 0."""
        spans = [c for c in self.chunk_crcs() if c.data_offset + c.length <= self.valid_bytes]
        at = 0
        for c in spans:
            if c.data_offset != at or c.length == 0:
                raise ValueError("%s: the chunk checksums do not follow each other at %d: the "
                                 "index is damaged" % (self.name, at))
            at += c.length
        return spans

    def verify_checksums(self, batch=64 << 20, engine=None, on_data=None):
        """Read the valid data against the chunk checksums: a list of (ChunkCrc, crc read) for
        each span that does not match. Spans past valid_bytes are not read.
        engine: "crc32c", "numpy" or "python" (crc_engines()); None: the fastest there is.
        on_data(offset, data): called with every piece of data read (a uint8 numpy array, or
        bytes without numpy), in order, from offset 0 to the end of the last span checked; the
        array is reused once on_data returns."""
        engine = engine or crc_engines()[0]
        if engine not in crc_engines():
            why = {"crc32c": "the crc32c module is not installed (python3-crc32c)",
                   "numpy": "numpy is not installed (python3-numpy)"}.get(engine, "no such engine")
            raise RuntimeError("CRC32C engine %s is not available here: %s; these are: %s"
                               % (engine, why, ", ".join(crc_engines())))
        spans = self._checked_spans()
        bad, i = [], 0
        vec = _VecCrc() if engine == "numpy" else None
        scratch = None
        while i < len(spans):  # runs of spans, at most batch bytes, read at once
            j, size = i + 1, spans[i].length
            while j < len(spans) and size + spans[j].length <= batch and \
                    (vec is None or (spans[j].length == spans[i].length and
                                     spans[i].length % _VecCrc.BLOCK == 0)):
                size += spans[j].length
                j += 1
            base = spans[i].data_offset
            if np is None:
                buf = self.read(base, size)
            else:  # one buffer for every batch: no fresh pages to fault in each time
                if scratch is None or len(scratch) < size:
                    scratch = np.empty(size, dtype=np.uint8)
                buf = scratch[:size]
                self._readinto(buf, HEADER_SIZE + base)
            if on_data is not None:
                on_data(base, buf)
            if vec is not None and spans[i].length % _VecCrc.BLOCK == 0:
                n = spans[i].length
                got = vec.spans(buf.reshape(j - i, n), n)
                for k in np.nonzero(got != np.array([c.crc32c for c in spans[i:j]],
                                                    dtype=np.uint32))[0]:
                    bad.append((spans[i + k], int(got[k])))
            else:
                mv = memoryview(buf).cast("B")
                for c in spans[i:j]:
                    part = mv[c.data_offset - base:c.data_offset - base + c.length]
                    if engine == "crc32c":
                        found = _crc32c_mod.crc32c(part)
                    elif engine == "python":
                        found = _crc32c_py(part)
                    else:  # numpy, a span that is not whole blocks: the blocks, then the rest
                        head = c.length - c.length % _VecCrc.BLOCK
                        reg = 0xFFFFFFFF
                        if head:
                            raw = np.frombuffer(part[:head], dtype=np.uint8)
                            reg = int(vec.spans(raw.reshape(1, head), head)[0]) ^ 0xFFFFFFFF
                        found = _crc_reg(part[head:], reg) ^ 0xFFFFFFFF
                    if found != c.crc32c:
                        bad.append((c, found))
            i = j
        return bad

    def meta(self):
        """The metadata (what the data is: SigMF keys such as core:sample_rate and
        core:datatype, and any other), as a dict of strings; empty when there is none."""
        out = {}
        for rtype, entry, p in self._index_records():
            if rtype == 3 and entry == 1:
                for line in p.split(b"\0", 1)[0].decode("utf-8").split("\n"):
                    k, eq, v = line.partition("=")
                    if eq:
                        out[k] = v
        return out

    def chunk_times(self):
        """When each chunk's first byte was captured: a list of (data_offset, time_ns) in
        CLOCK_REALTIME ns (time maps to offset and back); empty when the recording has none."""
        for rtype, entry, p in self._index_records():
            if rtype == 4 and entry >= 16:
                return [struct.unpack_from("<QQ", p, k * entry) for k in range(len(p) // entry)]
        return []

    def drop_events(self):
        """The drop index: a list of DropEvent(data_offset, beats, time_ns), as the index holds
        them (beats in units of beat_bytes). Empty without an index. The index CRC is checked."""
        events = []
        for rtype, entry, p in self._index_records():
            if rtype == 1 and entry >= 24:
                events = [DropEvent(*struct.unpack_from("<3Q", p, k * entry))
                          for k in range(len(p) // entry)]
        return events


# ---- the test-pattern check (nvtape verify's rules)
_ALL_ONES = np.uint64(0xFFFFFFFFFFFFFFFF) if np is not None else None


class _BeatCheck:
    """Every {seq, ~seq} beat of a test-pattern recording, fed in order in pieces of any
    length (a piece need not end on a beat)."""
    STEP = 256 << 10

    def __init__(self, first_seq):
        self.prev = np.uint64((first_seq - 1) % (1 << 64))
        self.beats = self.corrupt = self.backward = 0
        self.gaps = []
        self.first = None
        self.carry = b""  # the start of a beat a piece ended in
        self.at = 0       # data offset of the next byte

    def feed(self, data):
        if self.carry:
            need = 16 - len(self.carry)
            head, data = bytes(memoryview(data)[:need]), memoryview(data)[need:]
            self.carry += head
            self.at += len(head)
            if len(self.carry) < 16:
                return
            self._beats(np.frombuffer(self.carry, dtype="<u8"), self.at - 16)
            self.carry = b""
        n = len(data) - len(data) % 16
        w = np.frombuffer(data, dtype="<u8", count=n // 8)
        for k in range(0, n // 8, self.STEP // 8):  # small steps: numpy's temporaries stay
            self._beats(w[k:k + self.STEP // 8], self.at + 8 * k)  # in the cache
        if n < len(data):
            self.carry = bytes(memoryview(data)[n:])
        self.at += len(data)

    def _beats(self, w, off):
        a = w.reshape(-1, 2)
        lo, hi = a[:, 0], a[:, 1]
        self.beats += len(a)
        x = lo ^ hi
        if x.min() == _ALL_ONES:  # every beat intact: only the sequence to follow
            d = lo[1:] - lo[:-1]
            if (int(lo[0]) - int(self.prev)) % (1 << 64) == 1 and \
                    (len(d) == 0 or (d.min() == 1 and d.max() == 1)):
                if self.first is None:
                    self.first = int(lo[0])
                self.prev = lo[-1]
                return
        good = x == _ALL_ONES
        self.corrupt += int(np.count_nonzero(~good))
        idx = np.flatnonzero(good)
        seq = lo[idx]
        if not len(seq):
            return
        if self.first is None:
            self.first = int(seq[0])
        seq_all = np.concatenate((np.array([self.prev], dtype=np.uint64), seq))
        pos = np.concatenate((np.array([-1]), idx))
        d = seq_all[1:] - seq_all[:-1]  # uint64: wraps
        back = (d == 0) | (d >= np.uint64(1 << 63))
        self.backward += int(np.count_nonzero(back))
        for j in np.flatnonzero(~back & (d > 1)):
            self.gaps.append((off + int(pos[j + 1]) * 16, int(d[j]) - 1))
        self.prev = seq[-1]

    def result(self):
        return {"beats": self.beats, "gaps": self.gaps, "corrupt": self.corrupt,
                "backward": self.backward, "first_seen": self.first, "tail": len(self.carry)}


def check_pattern(rec, block=64 << 20):
    """Check every {seq, ~seq} beat of a test-pattern recording. Returns a dict: beats, gaps
    (list of (data_offset, beats); beats missing before the first one, after the header's
    first_seq, are a gap at 0), corrupt, backward, first_seen."""
    if np is None:
        raise RuntimeError("the beat check needs numpy (python3-numpy)")
    b = _BeatCheck(rec.header["first_seq"])
    off = 0
    while off < rec.valid_bytes:
        k = min(block, rec.valid_bytes - off)
        b.feed(rec._read_array(off, k))
        off += k
    return b.result()


class _Progress:
    """"checked X of Y MiB (P %), R MB/s" on stderr, rewritten in place, when it is a terminal."""

    def __init__(self, what, total, stream=None):
        self.stream = stream or sys.stderr
        self.on = total > 0 and hasattr(self.stream, "isatty") and self.stream.isatty()
        self.what, self.total, self.done_bytes = what, total, 0
        self.t0 = self.last = time.monotonic()

    def add(self, n):
        self.done_bytes += n
        now = time.monotonic()
        if self.on and (now - self.last >= 0.25 or self.done_bytes >= self.total):
            self.last = now
            rate = self.done_bytes / max(now - self.t0, 1e-9) / 1e6
            self.stream.write("\r%s: %d of %d MiB (%d %%), %.0f MB/s " % (
                self.what, self.done_bytes >> 20, self.total >> 20,
                100 * self.done_bytes // self.total, rate))
            self.stream.flush()

    def end(self):
        if self.on:
            self.stream.write("\r\033[K")
            self.stream.flush()


def _read_once(rec, tpg, engine, progress):
    """One pass over the valid data: the chunk checksums (verify_checksums) and, for the test
    pattern, every beat. Returns (the beat check's result or None, the bad chunks)."""
    if tpg and np is None:
        raise RuntimeError("the beat check needs numpy (python3-numpy)")
    beats = _BeatCheck(rec.header["first_seq"]) if tpg else None
    spans = rec._checked_spans()
    crc_end = spans[-1].data_offset + spans[-1].length if spans else 0
    prog = _Progress("checking %s" % rec.name, rec.valid_bytes if tpg else crc_end, progress)

    def on_data(off, buf):
        if beats is not None:
            beats.feed(buf)
        prog.add(len(buf))
    try:
        bad = rec.verify_checksums(engine=engine, on_data=on_data) if spans else []
        off = crc_end
        while beats is not None and off < rec.valid_bytes:  # past the last checksum
            k = min(64 << 20, rec.valid_bytes - off)
            on_data(off, rec._read_array(off, k))
            off += k
    finally:
        prog.end()
    return (beats.result() if beats is not None else None), bad


def writer_pid(paths):
    """The PID of the process recording into these files (the flock nvtape record, recover and
    meta hold on every member, as /proc/locks lists it), or 0 when none holds it."""
    ids = set()
    for p in paths:
        try:
            st = os.stat(p)
        except OSError:
            continue
        ids.add((os.major(st.st_dev), os.minor(st.st_dev), st.st_ino))
    try:
        with open("/proc/locks") as f:
            lines = f.readlines()
    except OSError:
        return 0
    for line in lines:
        w = line.split()
        if "->" in line or len(w) < 6 or w[1] != "FLOCK":
            continue
        try:
            maj, mnr, ino = w[5].split(":")
            if (int(maj, 16), int(mnr, 16), int(ino)) in ids and int(w[4]) > 0:
                return int(w[4])
        except ValueError:
            continue
    return 0


def _state(rec):
    """How an incomplete recording stands: being written (by a live process) or not."""
    pid = writer_pid(rec.paths)
    if pid:
        return "LIVE: being written by PID %d" % pid
    return "INCOMPLETE (the writer died; run nvtape recover)"


def check(rec, out=sys.stdout, engine=None, progress=None):
    """Check a recording like `nvtape verify`: returns (exit code, list of problems).
    engine: the CRC32C engine (crc_engines(); None: the fastest); progress: where to show
    progress when it is a terminal (default sys.stderr)."""
    problems = []
    h = rec.header
    events = rec.drop_events()
    if h["format"] == "nvtape" and rec.complete and \
            sum(e.beats for e in events) != h["drop_count"]:
        problems.append("the drop index holds %d beats, the header's drop count is %d"
                        % (sum(e.beats for e in events), h["drop_count"]))
    live = not rec.complete and writer_pid(rec.paths)
    if live:
        print("LIVE: being written by PID %d: its %d checkpointed bytes checked"
              % (live, rec.valid_bytes), file=out)
    elif not rec.complete:
        problems.append("recording not finalized (the writer died): %d checkpointed bytes "
                        "checked; run nvtape recover" % rec.valid_bytes)
    tpg = h["source"] in ("tpg", "fdrec") and h["beat_bytes"] == 16  # the test pattern
    r, bad = _read_once(rec, tpg, engine, progress)
    if tpg:
        print("beats %d, gaps %d (%d beats), corrupt %d, backward %d"
              % (r["beats"], len(r["gaps"]), sum(g[1] for g in r["gaps"]), r["corrupt"],
                 r["backward"]), file=out)
        if r["corrupt"]:
            problems.append("%d corrupt beats" % r["corrupt"])
        if r["backward"]:
            problems.append("%d backward jumps" % r["backward"])
        if r["tail"]:
            problems.append("data length %d is not a whole number of 16-byte beats"
                            % rec.valid_bytes)
        if not r["beats"]:
            problems.append("no data")
        if r["first_seen"] is not None and r["first_seen"] != h["first_seq"] and \
                (h["format"] == "fdrec" or not any(e.data_offset == 0 for e in events)):
            problems.append("first beat %d != header first_seq %d"
                            % (r["first_seen"], h["first_seq"]))
        gap_beats = sum(g[1] for g in r["gaps"])
        if h["format"] == "fdrec":
            if gap_beats > h["drop_count"]:
                problems.append("gap beats %d exceed the header's drop count %d"
                                % (gap_beats, h["drop_count"]))
        else:
            inside = collections.Counter()
            after = 0
            for e in events:
                if e.data_offset >= rec.valid_bytes:
                    after += e.beats
                else:
                    inside[e.data_offset] += e.beats
            gs = collections.Counter()
            for o, k in r["gaps"]:
                gs[o] += k
            unmatched_g = sum(1 for o in gs if inside.get(o) != gs[o])
            unmatched_e = sum(1 for o in inside if gs.get(o) != inside[o])
            if rec.complete and (unmatched_g or unmatched_e or
                                 sum(gs.values()) + after != h["drop_count"]):
                problems.append("gap beats %d (+%d dropped after the last beat) do not match the "
                                "header's drop count %d (%d gaps without a drop event, %d drop "
                                "events without a gap)" % (sum(gs.values()), after,
                                                           h["drop_count"], unmatched_g,
                                                           unmatched_e))
            elif not rec.complete and unmatched_g:
                problems.append("%d gaps in the checkpointed data (the index of an interrupted "
                                "recording is rebuilt by nvtape recover)" % unmatched_g)
    elif not rec.chunk_crcs():
        print("not a test-pattern recording: header and index checked", file=out)
    if rec.chunk_crcs():
        print("chunk CRC32C: %d chunks checked, %d bad (computed with %s)"
              % (len(rec._checked_spans()), len(bad), engine or crc_engines()[0]), file=out)
        for c, found in bad[:10]:
            print("BAD CHUNK at data offset %d, %d bytes: CRC32C %08x recorded, %08x read"
                  % (c.data_offset, c.length, c.crc32c, found), file=out)
        if bad:
            problems.append("%d chunks (%d bytes) do not match their CRC32C"
                            % (len(bad), sum(c.length for c, _ in bad)))
    if h["drop_count"]:
        unit = "beats" if h["beat_bytes"] == 16 else \
            "packets" if h["source"] in ("udp", "packet", "pcap") else "bytes"
        problems.append("%d %s missing in %d events (the drop index says where): not a valid "
                        "recording" % (h["drop_count"], unit, h["drop_events"]))
    return (2 if problems else 0), problems


def _size_arg(s):
    mult = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}
    s = s.strip().lower()
    if s.endswith("ib"):
        s = s[:-2]
    elif s.endswith("b"):
        s = s[:-1]
    if s and s[-1] in mult:
        return int(s[:-1]) * mult[s[-1]]
    return int(s)


def _summary(rec):
    h = rec.header
    lines = ["%s: %s version %d, source %s, %d-byte beats" % (rec.name, h["format"],
                                                              h["version"], h["source"],
                                                              h["beat_bytes"])]
    state = "complete" if rec.complete else _state(rec)
    if h["recovered"]:
        state += ", recovered"
    if h["stop_error"]:
        state += ", ended on an error"
    lines.append("  %s; %d valid data bytes (data_bytes %d, durable_bytes %d)"
                 % (state, rec.valid_bytes, h["data_bytes"], h["durable_bytes"]))
    lines.append("  drops %d in %d events; generation %d%s%s"
                 % (h["drop_count"], h["drop_events"], h["generation"],
                    "; one header copy is damaged (the other was read)" if h["header_torn"] else "",
                    "; check " + h["check"] if h["check"] else ""))
    if len(rec.paths) > 1:
        lines.append("  striped over %d members, %d KiB chunks, %d bytes into each"
                     % (len(rec.paths), rec.stripe >> 10, rec.member_offset))
    return "\n".join(lines)


USAGE = ("usage: python3 -m nvtape info [--members] [--stripe B] [--member-offset B] FILE...\n"
         "       python3 -m nvtape check [--crc auto|crc32c|numpy|python] [--stripe B] "
         "[--member-offset B] FILE...\n"
         "info: a short summary of each FILE (--members, --stripe or --member-offset: the FILEs "
         "are the members of one striped recording)\n"
         "check: header, index CRC and, for the test pattern, every beat and the gaps against "
         "the drop index (several FILEs: the members of one stripe), every chunk against its "
         "CRC32C; progress on stderr when it is a terminal\n"
         "--crc: how CRC32C is computed (auto: the fastest here, now %s)\n"
         "exit: 0 clean, 2 data problem, 1 error, 64 usage") % crc_engines()[0]


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv and argv[0] in ("-h", "--help"):
        print(USAGE)
        return 0
    if not argv or argv[0] not in ("info", "check"):
        print(USAGE, file=sys.stderr)
        return 64
    cmd, args = argv[0], argv[1:]
    stripe = member_offset = engine = None
    members = cmd == "check"
    files = []
    try:
        while args:
            a = args.pop(0)
            if a == "--members":
                members = True
            elif a in ("--stripe", "--member-offset"):
                if not args:
                    raise ValueError("%s needs a value" % a)
                v = _size_arg(args.pop(0))
                members = True
                if a == "--stripe":
                    stripe = v
                else:
                    member_offset = v
            elif a == "--crc" and cmd == "check":
                if not args or args[0] not in ("auto", "crc32c", "numpy", "python"):
                    raise ValueError("--crc takes auto, crc32c, numpy or python")
                engine = args.pop(0)
                engine = None if engine == "auto" else engine
            elif a in ("-h", "--help"):
                print(USAGE)
                return 0
            elif a.startswith("-") and a != "-":
                raise ValueError("unknown option %s" % a)
            else:
                files.append(a)
        if not files:
            raise ValueError("no FILE given")
    except ValueError as e:
        print("nvtape.py: %s\n%s" % (e, USAGE), file=sys.stderr)
        return 64
    groups = [files] if members else [[f] for f in files]
    rc = 0
    for g in groups:
        try:
            with Recording(g if len(g) > 1 else g[0], stripe=stripe,
                           member_offset=member_offset) as rec:
                if cmd == "info":
                    print(_summary(rec))
                    ev = rec.drop_events()
                    for e in ev[:20]:
                        print("    drop at %14d  %12d beats  %10.6f s"
                              % (e.data_offset, e.beats, e.time_ns / 1e9))
                    if len(ev) > 20:
                        print("    ... %d more drop events" % (len(ev) - 20))
                    continue
                print(_summary(rec))
                code, problems = check(rec, engine=engine)
                for p in problems:
                    print("PROBLEM: %s" % p)
                print("RESULT %s exit=%d" % ("pass" if code == 0 else "problem", code))
                rc = max(rc, code)
        except (ValueError, OSError, RuntimeError) as e:
            print("nvtape.py: %s" % e, file=sys.stderr)
            if cmd == "check":
                print("RESULT error exit=1")
            rc = 1
    return rc


if __name__ == "__main__":
    sys.exit(main())
