# SPDX-License-Identifier: MIT
"""The shm e2e test's Python producer (python/nvtape_producer.py): {seq, ~seq} beats written in
place through acquire/commit, SKIP beats dropped every DROP_EVERY bytes of data.
Usage: shm_producer.py NAME BYTES [DROP_EVERY] | NAME --bad (publishes a position past its
limit, as a broken producer would) | NAME --die-with-drop (dies holding a drop the log had no
room for). Prints RESULT bytes= dropped_bytes=."""
import array
import sys

import nvtape_producer

SKIP = 4096


def main():
    name = sys.argv[1]
    with nvtape_producer.Producer(name) as p:
        if sys.argv[2] == "--die-with-drop":
            # 1 MiB of data, then a loss that found the log full (held back), then death
            p.write(bytes(1 << 20))
            p._pending_pos, p._pending = p.pos, 12345
            p._q[nvtape_producer._DROPPED // 8] += 12345
            import os
            os._exit(3)
        if sys.argv[2] == "--bad":
            p._q[nvtape_producer._POS // 8] = p._q[nvtape_producer._LIMIT // 8] + 4096
            p._signal(nvtape_producer._CONS_SLEEP)
            import time
            time.sleep(1)
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
            beats = array.array("Q", [0]) * (2 * n)
            beats[0::2] = array.array("Q", range(seq, seq + n))
            beats[1::2] = array.array("Q", ((~k) & 0xFFFFFFFFFFFFFFFF for k in range(seq, seq + n)))
            view[:16 * n] = beats.tobytes()
            view.release()
            p.commit(16 * n)
            seq += n
            done += 16 * n
    print("RESULT bytes=%d dropped_bytes=%d" % (done, dropped))


main()
