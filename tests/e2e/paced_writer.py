#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Write a stream of little-endian u64 counters (0, 1, 2, ...) to stdout at RATE bytes/s (0 = as
fast as the reader takes it), in blocks of BLOCK bytes on absolute deadlines, until the reader
goes away; then write to COUNTFILE how many bytes the pipe accepted (the slow-stream crash test
compares what a killed recorder kept with it). COUNTFILE.log gets "TIME BYTES" lines as the
bytes are handed over (CLOCK_REALTIME, at most every 20 ms): when each byte left.

    paced_writer.py RATE BLOCK COUNTFILE
"""
import os
import sys
import time

import numpy as np

rate, block, countfile = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
assert block % 8 == 0 and block > 0
words = block // 8
sent = 0
t0 = time.monotonic()
fd = sys.stdout.fileno()
log = open(countfile + ".log", "w", buffering=1)
logged = 0.0
try:
    while True:
        buf = np.arange(sent // 8, sent // 8 + words, dtype="<u8").tobytes()
        view = memoryview(buf)
        while view:
            n = os.write(fd, view)
            sent += n
            view = view[n:]
        now = time.time()
        if now - logged >= 0.02:
            log.write(f"{now:.6f} {sent}\n")
            logged = now
        if rate:
            due = t0 + sent / rate
            now = time.monotonic()
            if due > now:
                time.sleep(due - now)
except (BrokenPipeError, OSError):
    pass
with open(countfile + ".tmp", "w") as f:
    f.write(f"{sent}\n")
os.rename(countfile + ".tmp", countfile)
