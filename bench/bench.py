#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""nvtape benchmark: nvtape against fio on the same file, same block size and queue depth,
alternating in one run, and the null engine against memset bandwidth. Prints medians, ratios
and CPU core-seconds per GB, and writes a markdown table.

Usage: bench.py --nvtape build/nvtape --memset build/memset_bw [--rounds 5] [--size 4G]
                 [--chunk 8M] [--qd 8] [--out FILE] NAME=DIR [NAME=DIR ...]
"""
import argparse, json, os, re, statistics, subprocess, sys, time

def run(cmd):
    """Run cmd; return (stdout, wall seconds, child CPU core-seconds)."""
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _, status, ru = os.wait4(p.pid, 0)
    out, err = p.stdout.read(), p.stderr.read()
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        sys.exit(f"bench: {' '.join(cmd)} failed ({p.returncode}):\n{out}\n{err}")
    return out, time.monotonic() - t0, ru.ru_utime + ru.ru_stime

def result(out):
    line = [l for l in out.splitlines() if l.startswith("RESULT ")][-1]
    return dict(kv.split("=", 1) for kv in line.split()[1:])

def size_bytes(s):
    m = re.fullmatch(r"(\d+)([KMG]?)", s)
    return int(m.group(1)) * {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}[m.group(2)]

def fio(rw, path, a, offset=0):
    cmd = ["fio", "--name=ref", f"--filename={path}", f"--rw={rw}", f"--bs={a.chunk}",
           f"--iodepth={a.qd}", "--ioengine=io_uring", "--direct=1", f"--size={a.size}",
           f"--offset={offset}", "--fixedbufs", "--registerfiles", "--output-format=json"]
    if rw == "read":
        cmd.append("--readonly")
    out, wall, cpu = run(cmd)
    j = json.loads(out[out.index("{"):])["jobs"][0][rw]
    return j["bw_bytes"] / 1e6, cpu

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nvtape", required=True)
    ap.add_argument("--memset", required=True)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--size", default="4G")
    ap.add_argument("--chunk", default="8M")
    ap.add_argument("--qd", type=int, default=8)
    ap.add_argument("--out")
    ap.add_argument("targets", nargs="+")
    a = ap.parse_args()
    gb = size_bytes(a.size) / 1e9
    rows = []
    for t in a.targets:
        name, d = t.split("=", 1)
        ff, nf = os.path.join(d, "bench-fio.dat"), os.path.join(d, "bench-nvtape.nvt")
        m = {k: [] for k in ("fw", "nw", "fr", "nr", "fwc", "nwc", "nwio", "frc", "nrc",
                             "np", "npc", "npio")}
        for r in range(a.rounds):
            def fio_write():
                bw, cpu = fio("write", ff, a)
                m["fw"].append(bw); m["fwc"].append(cpu / gb)
                os.unlink(ff)
                os.sync()  # let the filesystem free it before the next writer reserves space
            def nvt_record():
                if os.path.exists(nf):
                    os.unlink(nf)
                out, _, cpu = run([a.nvtape, "record", "-q", "--rate", "max", "--size", a.size,
                                   "--chunk", a.chunk, "--qd", str(a.qd), nf])
                res = result(out)
                assert res["drops"] == "0"
                m["nw"].append(float(res["mbps"])); m["nwc"].append(cpu / gb)
                m["nwio"].append(float(res["io_cpu_s_per_gb"]))
            def fio_read():
                bw, cpu = fio("read", nf, a, offset=4096)
                m["fr"].append(bw); m["frc"].append(cpu / gb)
            def nvt_verify():
                out, _, cpu = run([a.nvtape, "verify", "-q", "--chunk", a.chunk, "--qd",
                                   str(a.qd), nf])
                res = result(out)
                assert res["result"] == "pass"
                m["nr"].append(float(res["mbps"])); m["nrc"].append(cpu / gb)
            def nvt_play():
                out, _, cpu = run([a.nvtape, "play", "-q", "--sink", "null", "--rate", "max",
                                   "--chunk", a.chunk, "--qd", str(a.qd), nf])
                res = result(out)
                assert res["result"] == "pass" and res["underflows"] == "0"
                # the drive's read rate: first read issued to last read completed
                m["np"].append(float(res["read_mbps"])); m["npc"].append(cpu / gb)
                m["npio"].append(float(res["read_cpu_s"]) / gb)
            # alternate who goes first, so neither side always meets a warmer or colder disk
            order = [fio_write, nvt_record, fio_read, nvt_verify, nvt_play] if r % 2 == 0 else \
                    [nvt_record, fio_write, nvt_play, nvt_verify, fio_read]
            for f in order:
                f()
            print(f"bench: {name} round {r + 1}: write fio {m['fw'][-1]:.0f} nvtape "
                  f"{m['nw'][-1]:.0f} MB/s, read fio {m['fr'][-1]:.0f} nvtape "
                  f"{m['nr'][-1]:.0f} play {m['np'][-1]:.0f} MB/s", file=sys.stderr)
        os.unlink(nf)
        med = {k: statistics.median(v) for k, v in m.items()}
        rows.append((name, "write: fio vs `record --rate max`", med["fw"], med["nw"],
                     med["fwc"], med["nwc"], f"{med['nwio']:.4f}"))
        rows.append((name, "read: fio vs `verify`", med["fr"], med["nr"], med["frc"],
                     med["nrc"], "-"))
        rows.append((name, "read: fio vs `play --sink null --rate max`", med["fr"], med["np"],
                     med["frc"], med["npc"], f"{med['npio']:.4f}"))
    # in-memory ceiling: memset bandwidth against the null engine, alternating
    ms, nl = [], []
    for r in range(a.rounds):
        out, _, _ = run([a.memset, "2"])
        ms.append(float(out.split("=")[1]))
        out, _, cpu = run([a.nvtape, "record", "-q", "--engine", "null", "--rate", "max",
                           "--size", "32G", "--chunk", a.chunk, "-"])
        nl.append(float(result(out)["mbps"]))
    rows.append(("memory", "memset (1 core) vs `record --engine null`",
                 statistics.median(ms), statistics.median(nl), None, None, "-"))
    lines = [f"| target | comparison | reference MB/s | nvtape MB/s | nvtape / reference | "
             f"reference CPU s/GB | nvtape CPU s/GB (process) | nvtape I/O (write/read) thread CPU s/GB |",
             "|---|---|---:|---:|---:|---:|---:|---:|"]
    for name, what, ref, nv, rc, nc, io in rows:
        rcs = "-" if rc is None else f"{rc:.3f}"
        ncs = "-" if nc is None else f"{nc:.3f}"
        lines.append(f"| {name} | {what} | {ref:.0f} | {nv:.0f} | {nv / ref:.3f} | {rcs} | "
                     f"{ncs} | {io} |")
    table = "\n".join(lines)
    print(table)
    if a.out:
        with open(a.out, "w") as f:
            f.write(table + "\n")

if __name__ == "__main__":
    main()
