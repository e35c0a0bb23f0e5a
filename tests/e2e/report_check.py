# SPDX-License-Identifier: MIT
"""Checks a rendered nvtape report: the DOM Chromium built holds every plot with its elements,
and the screenshot shows them (pixels of the pass, fail, write and read colours).
Usage: report_check.py BENCH.dom BENCH.png SPEED.dom SPEED.png"""
import re
import struct
import sys
import zlib


def png_pixels(path):
    """(width, height, rows of RGB tuples) of an 8-bit RGB/RGBA PNG, standard library only."""
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{path}: not a PNG"
    pos, idat, w = 8, b"", 0
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and ctype in (2, 6), f"{path}: colour type {ctype}, depth {depth}"
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw = zlib.decompress(idat)
    stride = w * bpp
    prev = bytearray(stride)
    rows = []
    for y in range(h):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b = prev[x]
            c = prev[x - bpp] if x >= bpp else 0
            if f == 1:
                line[x] = (line[x] + a) & 255
            elif f == 2:
                line[x] = (line[x] + b) & 255
            elif f == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pr = a if pa <= pb and pa <= pc else b if pb <= pc else c
                line[x] = (line[x] + pr) & 255
        rows.append(line)
        prev = line
    return w, h, rows, bpp


def count_colour(img, rgb, tol=12):
    w, h, rows, bpp = img
    n = 0
    for line in rows:
        for x in range(0, w * bpp, bpp):
            if all(abs(line[x + i] - rgb[i]) <= tol for i in range(3)):
                n += 1
    return n


def hexrgb(s):
    return tuple(int(s[i:i + 2], 16) for i in (1, 3, 5))


def svg(dom, id_):
    m = re.search(r'<svg id="%s".*?</svg>' % id_, dom, re.S)
    assert m, f"plot #{id_} missing"
    return m.group(0)


bench = open(sys.argv[1]).read()
sweep = svg(bench, "sweep")
npass, nfail = len(re.findall(r'<circle class="pass"', sweep)), len(re.findall(r'<circle class="fail"', sweep))
assert npass >= 1 and nfail >= 1, f"sweep: {npass} pass, {nfail} fail markers"
thr = svg(bench, "throughput")
assert thr.count("<polyline") >= 3, "throughput: unthrottled, passing and failing runs"
assert re.search(r'<line class="drop"', thr), "throughput: drops marked"
ring = svg(bench, "ringfill")
assert re.search(r'<polyline class="ring-pass"', ring) and re.search(r'<polyline class="ring-fail"', ring)
cliff = svg(bench, "cliff")
assert re.search(r'<polyline class="rate-max"', cliff) and re.search(r'class="sustained"', cliff)
speed = open(sys.argv[3]).read()
rw = svg(speed, "readwrite")
assert len(re.findall(r'<rect class="bar-write"', rw)) == 3 and len(re.findall(r'<rect class="bar-read"', rw)) == 3, "bars: 2 targets + all"

img = png_pixels(sys.argv[2])
green, red = count_colour(img, hexrgb("#2a9d4b")), count_colour(img, hexrgb("#d62828"))
assert green > 200 and red > 100, f"bench screenshot: {green} pass-green and {red} fail-red pixels"
img = png_pixels(sys.argv[4])
blue, orange = count_colour(img, hexrgb("#1f77b4")), count_colour(img, hexrgb("#ff7f0e"))
assert blue > 300 and orange > 2000, f"speedtest screenshot: {blue} write-blue, {orange} read-orange pixels"
print(f"report: sweep {npass} pass / {nfail} fail markers; screenshot pixels: {green} green, {red} red, {blue} blue, {orange} orange")
