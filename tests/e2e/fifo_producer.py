#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# A producer for the dev source's tests: writes the FIFO (argument 1) and the loss counter
# file (argument 2)
# by a plan of words:
#   wN  write N bytes of a fixed random stream (all of it also to argument 3, the
#       expected data)
#   cV  set the counter to the text V (replaced atomically: a new file renamed over it),
#       with ~ for a space and / for a newline
#   iV  rewrite the counter in place (no new file): V padded with spaces to 20 bytes, one write
#   d   wait until the FIFO is drained (nvtape read everything), then 0.5 s more
#   p   pause 1 s (nvtape, the device silent, reads the counter after 100 ms; the rest is
#       margin for a loaded machine)
#   sS  pause S seconds
#   tN  write N MiB of the stream, a MiB every 10 ms
import fcntl, os, random, struct, sys, termios, time
fifo, counter, expect = sys.argv[1:4]
rnd = random.Random(13)
fd = os.open(fifo, os.O_WRONLY)
out = open(expect, "wb")
def drained():
    while struct.unpack("i", fcntl.ioctl(fd, termios.FIONREAD, b"\0\0\0\0"))[0]:
        time.sleep(0.01)
    time.sleep(0.5)
for w in sys.argv[4:]:
    if w[0] == "w":
        data = rnd.randbytes(int(w[1:]))
        out.write(data)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    elif w[0] == "c":
        with open(counter + ".new", "w") as f:
            f.write(w[1:].replace("~", " ").replace("/", "\n"))
        os.replace(counter + ".new", counter)
    elif w[0] == "i":
        with open(counter, "r+b") as f:
            f.write(w[1:].ljust(20).encode())
    elif w == "d":
        drained()
    elif w == "p":
        time.sleep(1)
    elif w[0] == "s":
        time.sleep(float(w[1:]))
    elif w[0] == "t":
        for _ in range(int(w[1:])):
            data = rnd.randbytes(1 << 20)
            out.write(data)
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            time.sleep(0.01)
out.close()
os.close(fd)
