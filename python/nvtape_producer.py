# SPDX-License-Identifier: MIT
"""Feed `nvtape record --source shm:NAME` from Python: write straight into nvtape's ring.

The pure-Python side of include/nvtape/producer.h (standard library only, no compiled
extension; the protocol is docs/shm.md): connect to the nvtape listening on NAME, receive its
control page and ring (memfds) and two eventfds over the UNIX socket, map them, and then
acquire / commit / drop exactly like a C producer.

    import nvtape_producer
    with nvtape_producer.Producer("run1") as p:   # nvtape record --source shm:run1 ...
        view = p.acquire()                        # writable memoryview into the ring
        n = fill(view)                            # e.g. numpy.frombuffer(view, "<i2")[:] = x
        p.commit(n)
        p.drop(4096)                              # bytes lost upstream, indexed here
        p.write(b"...")                           # or copy bytes in (one copy)
    # leaving the block closes the stream: nvtape finalizes the recording and says how that
    # went; RecordingFailed (an OSError: ENOSPC...) when the recording failed

acquire() raises Stopped once nvtape stops (Ctrl-C, its --size or --duration, an error); with
nowait=True it returns None when the ring is full (count the loss with drop()). Views returned
by acquire() must not be kept past commit(). One producer thread.

Whom it talks to: before it sends or maps anything, Producer() checks who listens on the
socket (SO_PEERCRED): this user or root, else PermissionError. A name's socket lives in a
directory only its owner can write (socket_dir()).

Memory order: nvtape must see the data before the position that covers it. x86 keeps stores in
order; elsewhere (aarch64, riscv64) each commit issues a full barrier through the kernel: a
FUTEX_WAKE (Linux's futex_wake() always passes an smp_mb(), in futex_hb_waiters_pending())
on a word of the control page. The sleep handshake (store a flag, then read the other side's
state) takes that barrier on x86 too. 64-bit machines only: the fields are 64-bit.
"""

import ctypes
import errno
import mmap
import os
import platform
import select
import socket
import struct

MAGIC = 0x314D48535456564E
VERSION = 1
DROPS = 128
HELLO = b"nvtape-shm 1"
ATTACH = b"nvtape-producer 1\0"
END = b"nvtape-end"  # nvtape's verdict, when features has F_END
F_END = 1
_REFUSALS = {b"busy": errno.EBUSY, b"refused": errno.EACCES, b"error": errno.EPROTO}
RUN, STOP = 0, 1
CLOSED = 1
# byte offsets in struct nvt_shm_ctl (include/nvtape/producer.h, 4096 bytes)
_UNIT, _CHUNK, _NCHUNKS, _FEATURES, _RING, _MAP, _END = 12, 16, 24, 28, 32, 40, 48
_LIMIT, _STATE, _CONS_SLEEP = 64, 72, 76
_POS, _DROPPED, _ENDED, _PROD_SLEEP = 128, 136, 144, 148
_DROP_HEAD, _DROP_TAIL, _DROPS_AT = 192, 256, 320
_FENCE_WORD = 4092  # in the last padding: the futex word of the barrier
_SYS_FUTEX = {"x86_64": 202, "amd64": 202, "aarch64": 98, "arm64": 98, "riscv64": 98}
_TSO = ("x86_64", "amd64")


class Stopped(Exception):
    """nvtape is stopping (or gone): commit what you hold and close."""


class RecordingFailed(OSError):
    """nvtape's verdict at close(): the recording failed (errno and nvtape's reason)."""


def socket_dir():
    """The directory of the names' sockets, as nvt_shm_dir() makes it: /run/nvtape for root,
    else $XDG_RUNTIME_DIR, else /tmp/nvtape-UID (nvtape makes sure only its owner can write)."""
    xdg = os.environ.get("XDG_RUNTIME_DIR") or ""
    if os.geteuid() == 0:
        return "/run/nvtape"
    if xdg.startswith("/"):
        return xdg
    return "/tmp/nvtape-%d" % os.geteuid()


def address(name):
    """The socket path of a name, as nvt_shm_address() makes it."""
    if not name:
        raise ValueError("an empty shm name")
    if "/" in name:
        return name
    return "%s/nvtape-%s.sock" % (socket_dir(), name)


def _check_peer(sock, path):
    """Refuse a socket another user listens on: nothing has been sent yet."""
    pid, uid, _gid = struct.unpack("iII", sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED,
                                                          struct.calcsize("iII")))
    if uid not in (os.geteuid(), 0):
        raise PermissionError(
            errno.EACCES,
            "shm %s: answered by uid %d (pid %d), neither your user (uid %d) nor root: another "
            "user's program listens there; nothing sent. Use a name (its socket lives in a "
            "directory only its owner can write) or a path in a directory of yours, and remove "
            "that socket" % (path, uid, pid, os.geteuid()))


class Producer:
    def __init__(self, name):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.ctl = self.ring = None
        self._fds = []
        path = address(name)
        try:
            try:
                self.sock.connect(path)
            except (FileNotFoundError, ConnectionRefusedError) as e:
                raise type(e)(e.errno, "shm %s: nobody listens there (%s): start `nvtape record "
                              "--source shm:%s` first, as your user or root"
                              % (path, e.strerror, name)) from None
            except PermissionError as e:
                raise PermissionError(e.errno, "shm %s: permission denied: the recording runs "
                                      "as another user; run the producer as that user or root"
                                      % path) from None
            _check_peer(self.sock, path)
            try:
                self.sock.send(ATTACH)
            except BrokenPipeError:
                pass  # refused before it was read: the answer says why
            msg, fds, _flags, _addr = socket.recv_fds(self.sock, 512, 4)
            self._fds = fds
            word, _, why = msg.partition(b"\0")
            why = why.rstrip(b"\0").decode(errors="replace")
            if word in _REFUSALS:
                raise OSError(_REFUSALS[word], why or "shm %s: nvtape said %r" % (path, word))
            if not msg:
                raise OSError(errno.EPROTO, "shm %s: closed without an answer: not an nvtape of "
                              "this version (protocol %d)?" % (path, VERSION))
            if word != HELLO or why or len(fds) != 4:
                raise OSError(errno.EPROTO, "shm %s: not an nvtape of protocol %d (its answer: "
                              "%r)" % (path, VERSION, msg[:40]))
            self.ctl = mmap.mmap(fds[0], 4096)
            (magic, version, unit, chunk, nchunks, features, ring, map_bytes,
             end) = struct.unpack_from("<QIIQIIQQQ", self.ctl, 0)
            if (magic != MAGIC or version != VERSION or not unit or not chunk or chunk % unit
                    or ring != chunk * nchunks or map_bytes < ring):
                raise OSError(errno.EPROTO, "not an nvtape shm control page of version %d" % VERSION)
            self.unit_bytes, self.chunk_bytes, self.ring_bytes, self.end_bytes = unit, chunk, ring, end
            self._features = features
            self.ring = mmap.mmap(fds[1], map_bytes)
            self._wake_me, self._wake_nvtape = fds[2], fds[3]
            os.close(fds[0])
            os.close(fds[1])
            self._fds = fds[2:]
        except BaseException:
            self._release()
            raise
        self._q = memoryview(self.ctl).cast("Q")
        self._i = memoryview(self.ctl).cast("I")
        self._view = memoryview(self.ring)
        self.pos = self._q[_POS // 8]
        self._room = 0
        self._pending_pos = self._pending = 0
        self._full = 0
        self._fence, self._full_fence = self._make_fences()

    # -- memory order ---------------------------------------------------------------------
    def _make_fences(self):
        """(publish, full): publish orders earlier stores before a later one (nothing to do
        on x86); full also orders a store before a later load (the sleep handshake)."""
        m = platform.machine().lower()
        nr = _SYS_FUTEX.get(m)
        if nr is None:  # 32-bit machines cannot store the 64-bit fields in one piece
            raise OSError(errno.ENOSYS, "nvtape_producer: not for %s (64-bit x86, arm, riscv)" % m)
        libc = ctypes.CDLL(None, use_errno=True)
        word = ctypes.c_uint32.from_buffer(self.ctl, _FENCE_WORD)
        addr = ctypes.addressof(word)
        self._fence_word = word  # keeps the buffer export alive with the mapping
        full = lambda: libc.syscall(ctypes.c_long(nr), ctypes.c_void_p(addr), 1, 1, None, None, 0)
        return (lambda: None) if m in _TSO else full, full

    def _signal(self, sleep_off):
        # the state was stored before; a sleeper stores its flag, then reads the state
        self._full_fence()
        if self._i[sleep_off // 4]:
            os.eventfd_write(self._wake_nvtape, 1)

    # -- the producer's calls -------------------------------------------------------------
    @property
    def stopping(self):
        return self._i[_STATE // 4] != RUN

    def acquire(self, nowait=False):
        """A writable memoryview of the room in the current chunk (whole units); None when
        nowait and the ring is full; raises Stopped when nvtape stops or went away."""
        while True:
            limit = self._q[_LIMIT // 8]
            if self.stopping or (self.end_bytes and self.pos >= self.end_bytes):
                raise Stopped()
            left = self.chunk_bytes - self.pos % self.chunk_bytes
            if limit > self.pos:
                left = min(left, limit - self.pos)
                left -= left % self.unit_bytes
                if left:
                    self._room = left
                    at = self.pos % self.ring_bytes
                    return self._view[at:at + left]
            if nowait:
                self._full += 1  # now and then: did nvtape go away?
                if self._full % 64 == 0 and select.select([self.sock], [], [], 0)[0]:
                    raise Stopped("nvtape ended the recording or went away")
                return None
            self._i[_PROD_SLEEP // 4] = 1
            self._full_fence()
            if self._q[_LIMIT // 8] == limit and not self.stopping:
                r, _, _ = select.select([self._wake_me, self.sock], [], [], 0.1)
                if self.sock in r:
                    self._i[_PROD_SLEEP // 4] = 0
                    raise Stopped("nvtape ended the recording or went away")
                if self._wake_me in r:
                    try:
                        os.eventfd_read(self._wake_me)
                    except BlockingIOError:
                        pass
            self._i[_PROD_SLEEP // 4] = 0

    def commit(self, nbytes):
        """nbytes (<= the room acquired, whole units) were written: nvtape takes them."""
        if nbytes > self._room or nbytes % self.unit_bytes:
            raise ValueError("commit of %d bytes: the room is %d, units of %d"
                             % (nbytes, self._room, self.unit_bytes))
        if not nbytes:
            return
        before = self.pos
        self._room -= nbytes
        self.pos += nbytes
        self._fence()  # the data before the position
        self._q[_POS // 8] = self.pos
        self._flush_drop()
        if before % self.chunk_bytes == 0 or self.pos % self.chunk_bytes == 0:
            self._signal(_CONS_SLEEP)

    def drop(self, units):
        """units (of unit_bytes) were lost upstream: counted, indexed at the current position."""
        if units <= 0:
            return
        if self._pending and self._pending_pos != self.pos:
            self._flush_drop()
        if not self._pending:
            self._pending_pos = self.pos
        self._pending += units
        self._q[_DROPPED // 8] += units
        self._flush_drop()

    def _flush_drop(self):
        head = self._q[_DROP_HEAD // 8]
        if not self._pending or head - self._q[_DROP_TAIL // 8] >= DROPS:
            return
        at = (_DROPS_AT + (head % DROPS) * 16) // 8
        self._q[at] = self._pending_pos
        self._q[at + 1] = self._pending
        self._fence()  # the entry before the head
        self._q[_DROP_HEAD // 8] = head + 1
        self._pending = 0
        self._signal(_CONS_SLEEP)

    def write(self, data):
        """Copy data (bytes-like, whole units) into the ring, waiting for room; raises Stopped."""
        data = memoryview(data).cast("B")
        done = 0
        while done < len(data):
            view = self.acquire()
            n = min(len(view), len(data) - done)
            view[:n] = data[done:done + n]
            view.release()
            self.commit(n)
            done += n
        return done

    def close(self):
        """The end of the stream: nvtape writes what was committed and finalizes, then says how
        that went: RecordingFailed (errno, nvtape's reason) when the recording failed."""
        if self.ctl is None:
            return
        for _ in range(100):
            self._flush_drop()
            if not self._pending:
                break
            select.select([], [], [], 0.01)
        self._fence()  # the last position before the end
        self._i[_ENDED // 4] = CLOSED
        self._signal(_CONS_SLEEP)
        try:
            if self._features & F_END:
                self._verdict()
        finally:
            self._release()

    def _verdict(self):
        msg = self.sock.recv(1024)
        if not msg:
            raise RecordingFailed(errno.EPIPE, "nvtape went away before saying whether the "
                                  "recording is complete (killed?): check the recording with "
                                  "nvtape verify")
        head, _, why = msg.partition(b"\0")
        parts = head.split()
        if len(parts) != 3 or parts[0] != END or not parts[1].isdigit():
            raise RecordingFailed(errno.EPROTO, "nvtape ended with a message this producer "
                                  "does not know (%r): check the recording with nvtape verify"
                                  % msg[:40])
        code = int(parts[1])
        if code:
            why = why.rstrip(b"\0").decode(errors="replace")
            raise RecordingFailed(code, "the recording failed: %s" % (
                why or "%s; it holds %s bytes" % (os.strerror(code), parts[2].decode())))

    def _release(self):
        for v in ("_q", "_i", "_view"):
            view = self.__dict__.pop(v, None)
            if view is not None:
                view.release()
        self.__dict__.pop("_fence_word", None)
        for m in (self.ring, self.ctl):
            try:
                if m is not None:
                    m.close()
            except BufferError:
                pass  # a view the caller still holds: unmapped when it goes
        self.ring = self.ctl = None
        for fd in self._fds:
            os.close(fd)
        self._fds = []
        self.sock.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False
