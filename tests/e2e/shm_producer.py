# SPDX-License-Identifier: MIT
"""The shm e2e test's Python producer (python/nvtape_producer.py): {seq, ~seq} beats written in
place through acquire/commit, SKIP beats dropped every DROP_EVERY bytes of data.
Usage: shm_producer.py NAME BYTES [DROP_EVERY]
  | NAME --bad (publishes a position past its limit, as a broken producer would)
  | NAME --die-with-drop (dies holding a drop the log had no room for)
  | NAME --junk (sends bytes on the socket after its hello)
  | NAME --punch-after (tries to punch holes in the ring after its first commit)
  | NAME --punch-before (punches holes in the ring before its first commit)
  | NAME --hello TEXT (a raw connection: says TEXT, prints nvtape's answer)
  | NAME --silent N SECONDS (N raw connections that say nothing, held for SECONDS)
Prints RESULT bytes= dropped_bytes= (and the punch results); nvtape's verdict at the close,
when the recording failed, as "FAILED: errno=N message" on stderr with exit 1."""
import array
import ctypes
import errno
import fcntl
import mmap
import os
import socket
import sys
import time

import nvtape_producer

SKIP = 4096
F_SEAL_FUTURE_WRITE = 0x10


def beats(seq, n):
    b = array.array("Q", [0]) * (2 * n)
    b[0::2] = array.array("Q", range(seq, seq + n))
    b[1::2] = array.array("Q", ((~k) & 0xFFFFFFFFFFFFFFFF for k in range(seq, seq + n)))
    return b.tobytes()


def write_beats(p, seq, total):
    """total bytes of beats from seq through acquire/commit; the next seq"""
    done = 0
    while done < total:
        view = p.acquire()
        n = min(len(view), total - done) // 16
        view[:16 * n] = beats(seq, n)
        view.release()
        p.commit(16 * n)
        seq += n
        done += 16 * n
    return seq


def until(cond, seconds=10):
    """wait for cond() (nvtape has done something), at most seconds"""
    end = time.monotonic() + seconds
    while not cond() and time.monotonic() < end:
        time.sleep(0.01)


def punch(p, ring_fd, off, length):
    """madvise(MADV_REMOVE) on the mapping and fallocate(PUNCH_HOLE) on the memfd: each
    'ok' or the errno's name"""
    out = []
    try:
        p.ring.madvise(mmap.MADV_REMOVE, off, length)
        out.append("ok")
    except OSError as e:
        out.append(errno.errorcode[e.errno])
    libc = ctypes.CDLL(None, use_errno=True)
    rc = libc.fallocate(ring_fd, 3, ctypes.c_long(off), ctypes.c_long(length))  # PUNCH|KEEP
    out.append("ok" if rc == 0 else errno.errorcode[ctypes.get_errno()])
    return out


def raw(name, args):
    path = nvtape_producer.address(name)
    if args[0] == "--hello":
        s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        s.connect(path)
        s.send(args[1].encode())
        s.settimeout(10)
        t0 = time.monotonic()
        try:
            msg = s.recv(1024)
        except socket.timeout:
            msg = b"(no answer in 10 s)"
        print("ANSWER %.3f %s" % (time.monotonic() - t0, msg.replace(b"\0", b"|").decode()))
        return
    socks = []
    for _ in range(int(args[1])):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        s.connect(path)
        socks.append(s)
    print("SILENT %d" % len(socks), flush=True)
    time.sleep(float(args[2]))


def main():
    name = sys.argv[1]
    if sys.argv[2] in ("--hello", "--silent"):
        return raw(name, sys.argv[2:])
    kept = []
    if sys.argv[2].startswith("--punch"):  # keep the ring's memfd, as a hostile producer would
        real_close = nvtape_producer.os.close
        nvtape_producer.os.close = kept.append
    try:
        p = nvtape_producer.Producer(name)
    finally:
        if kept is not None and sys.argv[2].startswith("--punch"):
            nvtape_producer.os.close = real_close
    with p:
        if sys.argv[2] == "--die-with-drop":
            # 1 MiB of data, then a loss that found the log full (held back), then death
            p.write(bytes(1 << 20))
            p._pending_pos, p._pending = p.pos, 12345
            p._q[nvtape_producer._DROPPED // 8] += 12345
            os._exit(3)
        if sys.argv[2] == "--bad":
            p._q[nvtape_producer._POS // 8] = p._q[nvtape_producer._LIMIT // 8] + 4096
            p._signal(nvtape_producer._CONS_SLEEP)
            time.sleep(1)
            return
        if sys.argv[2] == "--junk":
            write_beats(p, 0, 1 << 20)
            p.sock.send(b"hello there\x01")
            until(lambda: p.stopping)  # nvtape has seen it
            return
        if sys.argv[2].startswith("--punch"):
            ring_fd = kept[1]
            before = sys.argv[2] == "--punch-before"
            if before:
                res = punch(p, ring_fd, 0, p.ring_bytes)
            seq = write_beats(p, 0, 1 << 20)
            if not before:  # once nvtape has seen the first commit (it seals then)
                until(lambda: fcntl.fcntl(ring_fd, fcntl.F_GET_SEALS) & F_SEAL_FUTURE_WRITE)
                res = punch(p, ring_fd, 0, 1 << 20)
            print("RESULT punch_madvise=%s punch_fallocate=%s" % tuple(res), flush=True)
            write_beats(p, seq, 3 << 20)
            return
        total = int(sys.argv[2]) // 16 * 16
        every = int(sys.argv[3]) if len(sys.argv) > 3 else 0
        seq = done = dropped = 0
        next_drop = every
        while done < total:
            if every and done >= next_drop:
                p.drop(SKIP * 16)
                seq += SKIP
                dropped += SKIP * 16
                next_drop += every
            view = p.acquire()
            n = min(len(view), total - done, (next_drop - done) if every else total) // 16
            view[:16 * n] = beats(seq, n)
            view.release()
            p.commit(16 * n)
            seq += n
            done += 16 * n
    print("RESULT bytes=%d dropped_bytes=%d" % (done, dropped))


try:
    main()
except getattr(nvtape_producer, "RecordingFailed", ()) as e:  # (an older client has none)
    print("FAILED: errno=%d %s" % (e.errno, e.strerror), file=sys.stderr)
    sys.exit(1)
except OSError as e:
    print("ERROR: errno=%s %s" % (e.errno, e.strerror), file=sys.stderr)
    sys.exit(2)
