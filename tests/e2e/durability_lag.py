#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""durability_lag.py NVTAPE FILE COUNTLOG SECONDS: watch a live recording's header (nvtape info
--json every 20 ms) for SECONDS and print the worst lag between a byte leaving the sender
(paced_writer.py's COUNTLOG, "TIME BYTES" lines) and a header vouching for it: what a kill -9 at
the worst moment would lose, in seconds of the stream."""
import bisect
import json
import subprocess
import sys
import time

nvt, path, countlog, seconds = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
seen = []
end = time.time() + seconds
while time.time() < end:
    out = subprocess.run([nvt, "info", "--json", path], capture_output=True, text=True).stdout
    try:
        seen.append((time.time(), json.loads(out)["header"]["durable_bytes"]))
    except (ValueError, KeyError):
        pass  # no header yet
    time.sleep(0.02)
log = [tuple(map(float, line.split())) for line in open(countlog)]
sent = [n for _, n in log]
worst = 0.0
for t, durable in seen:
    i = bisect.bisect_right(sent, durable)  # the first log line past what the header vouches for
    if i < len(log) and log[i][0] < t:
        worst = max(worst, t - log[i][0])
print(f"{worst:.2f} {len(seen)}")
