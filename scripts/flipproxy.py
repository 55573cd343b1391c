#!/usr/bin/env python3
"""A bit-flipping proxy for one worker's data port (scripts/soak.sh).

Usage: flipproxy.py LISTEN TARGET LOG SEED

Listens on LISTEN (HOST:PORT; port 0 picks one, written to LOG first as
"listening HOST:PORT") and forwards every connection, both ways, to TARGET
(the worker's --listen; the worker gives --advertise the proxy's address).
It reads the frames of both directions (distributor/doc.go: the 16-byte
protocol string, then type uint8 | header bytes uint32 | payload bytes
uint32 | header | payload, and after the two frames of the handshake a
4-byte CRC-32C trailer: the soak runs without a cluster key).
SIGUSR1 arms a flip of deltas (worker to main node), SIGUSR2 of batches
(main node to worker): the first frame of that kind with a payload that
starts past the first 4 KiB of its connection gets one bit of its payload
flipped (byte and bit drawn from SEED), logged as "flipped KIND conn N
offset O byte B bit K". The frame's check fails and its reader drops the
connection; the main node dials the worker again, through the proxy.
"""
import random
import signal
import socket
import struct
import sys
import threading

VERSION = 16          # len("sketchcc-batch/5")
BATCHES, DELTAS = 4, 5
TRAILER = 4           # CRC-32C
PAST = 4096           # bytes of a connection before a flip

listen, target, logpath, seed = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
rng = random.Random(seed)
lock = threading.Lock()
armed = set()         # frame types to flip once each
log = open(logpath, 'a', buffering=1)


def arm(kind):
    with lock:
        armed.add(kind)
        log.write(f"armed {'deltas' if kind == DELTAS else 'batches'}\n")


def read(f, n):
    b = f.read(n)
    if len(b) != n:
        raise EOFError
    return b


def pump(src, dst, conn):
    """Copies src to dst frame by frame, flipping an armed kind once."""
    f = src.makefile('rb')
    try:
        dst.sendall(read(f, VERSION))
        off, i = VERSION, 0
        while True:
            prefix = read(f, 9)
            t, h, n = struct.unpack('<BII', prefix)
            body = bytearray(read(f, h + n + (TRAILER if i >= 2 else 0)))
            with lock:
                flip = i >= 2 and n > 0 and off >= PAST and t in armed
                if flip:
                    armed.discard(t)
                    b, k = h + rng.randrange(n), rng.randrange(8)
                    body[b] ^= 1 << k
                    log.write(f"flipped {'deltas' if t == DELTAS else 'batches'} conn {conn} "
                              f"offset {off} byte {9 + b} bit {k}\n")
            dst.sendall(prefix + body)
            off, i = off + 9 + len(body), i + 1
    except (EOFError, OSError, struct.error):
        pass
    finally:
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def serve(c, conn):
    host, port = target.rsplit(':', 1)
    try:
        w = socket.create_connection((host, int(port)))
    except OSError:
        c.close()
        return
    ts = [threading.Thread(target=pump, args=(c, w, conn), daemon=True),
          threading.Thread(target=pump, args=(w, c, conn), daemon=True)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    c.close()
    w.close()


signal.signal(signal.SIGUSR1, lambda *_: arm(DELTAS))
signal.signal(signal.SIGUSR2, lambda *_: arm(BATCHES))
host, port = listen.rsplit(':', 1)
ln = socket.create_server((host, int(port)))
log.write("listening %s:%d\n" % ln.getsockname()[:2])
conn = 0
while True:
    c, _ = ln.accept()
    threading.Thread(target=serve, args=(c, conn), daemon=True).start()
    conn += 1
