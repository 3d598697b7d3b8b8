#!/usr/bin/env python3
"""HTTP/2's limits and protections (issue 37), against the real daemon on loopback, each
bounded in time and size, with /healthz (HTTP/1.1) and a gRPC health check (HTTP/2) still
answering after every attack. Frames are written by hand (HPACK by Debian's python3-hpack),
so the attacks are exactly what they say:
1. rapid reset (CVE-2023-44487): streams opened and reset at once, thousands in a burst: the
   connection is ended (GOAWAY) and the requests' work stays bounded;
2. CONTINUATION flood: a HEADERS frame without END_HEADERS followed by endless CONTINUATION
   frames: the connection is ended after a few, the flood not read on;
3. a window-starved stream: a client that never opens its window for one answer gets the
   other streams of the same connection answered in full, and the starved one is reset at
   request_timeout_ms (its memory given back);
4. a slowloris preface: part of the 24-byte preface then nothing: the connection is closed at
   client_header_timeout_ms, like slow HTTP/1.1 headers;
5. oversized headers: a header list over 32 KiB is answered 431 on its stream, the connection
   serving on;
6. more streams than SETTINGS_MAX_CONCURRENT_STREAMS announces: the excess is refused
   (RST_STREAM REFUSED_STREAM), the rest answered;
7. REST and Connect over HTTP/2: the same answers as over HTTP/1.1;
8. an idle connection: GOAWAY (NO_ERROR) at client_header_timeout_ms, as HTTP/1.1's
   keep-alive connections are closed then;
9. bodies over max_body_bytes (declared by content-length, or sent): 413 on their stream;
10. SIGTERM's drain: GOAWAY at once, the stream at work still answered, later streams not
   served, the connection closed and a clean exit.
Usage: tests/integration/daemon_h2.py BIN_DIR [ROOT]"""
import os
import socket
import struct
import sys
import time
import urllib.request

import hpack

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lanced_it import Checks, start  # noqa: E402

ROOT_DIR = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
BIN = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT_DIR, "bin"))
FIX = os.path.join(ROOT_DIR, "tests", "fixtures")
t = Checks("h2")

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
DATA, HEADERS, RST_STREAM, SETTINGS, PING, GOAWAY, WINDOW_UPDATE, CONTINUATION = 0, 1, 3, 4, 6, 7, 8, 9
END_STREAM, END_HEADERS, ACK = 0x1, 0x4, 0x1
REFUSED_STREAM = 7


def frame(kind, flags, stream, payload=b""):
    return struct.pack(">I", len(payload))[1:] + bytes([kind, flags]) + struct.pack(">I", stream) + payload


def settings(**kv):
    ids = {"initial_window": 4, "max_frame": 5}
    return frame(SETTINGS, 0, 0, b"".join(struct.pack(">HI", ids[k], v) for k, v in kv.items()))


class Conn:
    """One HTTP/2 connection: frames out, frames in (with the server's headers decoded)."""

    def __init__(self, port, initial_window=None, timeout=5.0):
        self.s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.enc, self.dec = hpack.Encoder(), hpack.Decoder()
        self.dec.max_allowed_table_size = 65536
        self.buf = b""
        self.s.sendall(PREFACE + (settings(initial_window=initial_window) if initial_window is not None
                                  else frame(SETTINGS, 0, 0)))

    def send(self, data):
        self.s.sendall(data)

    def request(self, sid, method, path, headers=(), body=None, end=True):
        h = [(":method", method), (":scheme", "http"), (":authority", "lanced"), (":path", path)] + list(headers)
        block = self.enc.encode(h)
        # A block over the 16 KiB frame size goes on in CONTINUATION frames (RFC 9113 §6.10).
        parts = [block[i:i + 16384] for i in range(0, len(block), 16384)] or [b""]
        flags = (END_HEADERS if len(parts) == 1 else 0) | (END_STREAM if body is None and end else 0)
        out = frame(HEADERS, flags, sid, parts[0])
        for i, part in enumerate(parts[1:], 2):
            out += frame(CONTINUATION, END_HEADERS if i == len(parts) else 0, sid, part)
        if body is not None:
            out += frame(DATA, END_STREAM if end else 0, sid, body)
        self.send(out)

    def frames(self, until, limit_s=5.0):
        """Reads frames until until(kind, flags, sid, payload) says so, the connection ends or
        limit_s passes; returns the list of (kind, flags, sid, payload) and whether it ended."""
        got, deadline = [], time.time() + limit_s
        while time.time() < deadline:
            while len(self.buf) >= 9:
                n = struct.unpack(">I", b"\0" + self.buf[:3])[0]
                if len(self.buf) < 9 + n:
                    break
                kind, flags, sid = self.buf[3], self.buf[4], struct.unpack(">I", self.buf[5:9])[0] & 0x7FFFFFFF
                payload, self.buf = self.buf[9:9 + n], self.buf[9 + n:]
                if kind == SETTINGS and not flags & ACK:
                    try:
                        self.send(frame(SETTINGS, ACK, 0))
                    except OSError:  # an attack's connection, already ended
                        pass
                if kind == HEADERS:
                    payload = dict(self.dec.decode(payload))
                got.append((kind, flags, sid, payload))
                if until(kind, flags, sid, payload):
                    return got, False
            try:
                self.s.settimeout(max(0.05, deadline - time.time()))
                d = self.s.recv(1 << 16)
            except socket.timeout:
                break
            except OSError:
                return got, True
            if not d:
                return got, True
            self.buf += d
        return got, False

    def close(self):
        self.s.close()


def stream_done(sid):
    return lambda k, f, s, p: s == sid and k in (DATA, HEADERS) and f & END_STREAM or (s == sid and k == RST_STREAM)


def all_done(sids):
    """A frames() predicate: true once every stream of sids has ended."""
    left = set(sids)

    def until(k, f, s, p):
        if s in left and ((k in (DATA, HEADERS) and f & END_STREAM) or k == RST_STREAM):
            left.discard(s)
        return not left
    return until


def healthy(port):
    try:
        with urllib.request.urlopen("http://127.0.0.1:%d/healthz" % port, timeout=3) as r:
            h1 = r.status == 200
    except Exception:
        h1 = False
    c = Conn(port)
    c.request(1, "POST", "/grpc.health.v1.Health/Check", [("content-type", "application/grpc"), ("te", "trailers")],
              body=b"\0\0\0\0\0")
    got, _ = c.frames(stream_done(1))
    c.close()
    data = b"".join(p for k, f, s, p in got if k == DATA and s == 1)
    trailers = [p for k, f, s, p in got if k == HEADERS and s == 1 and f & END_STREAM]
    h2 = data == b"\0\0\0\0\x02\x08\x01" and trailers and trailers[-1].get("grpc-status") == "0"
    return h1 and bool(h2)


def body_of(got, sid):
    return b"".join(p for k, f, s, p in got if k == DATA and s == sid)


def status_of(got, sid):
    hs = [p for k, f, s, p in got if k == HEADERS and s == sid]
    return hs[0].get(":status") if hs else None


def main():
    p, port, _ = start(BIN, FIX, "--request-timeout-ms", "2000", "--client-header-timeout-ms", "1000",
                       "--max-body-bytes", "4096")
    try:
        # ---- 7. REST and Connect over HTTP/2 --------------------------------------------------
        c = Conn(port)
        c.request(1, "GET", "/files/data/core21/rows?ids=1,2,3&columns=i64,s")
        c.request(3, "POST", "/lanced.v1.RowService/Take", [("content-type", "application/json")],
                  body=b'{"path":"data/core21","ids":[1,2,3],"columns":["i64"],"format":"FORMAT_PROTO"}')
        c.request(5, "GET", "/files/data/core21/rows?ids=1&ids=2")
        c.request(7, "POST", "/lanced.v1.RowService/Take", [("content-type", "text/plain")], body=b"x")
        got, _ = c.frames(all_done({1, 3, 5, 7}), 5.0)
        c.close()
        with urllib.request.urlopen("http://127.0.0.1:%d/files/data/core21/rows?ids=1,2,3&columns=i64,s" % port) as r:
            rest1 = r.read()
        t.check(status_of(got, 1) == "200" and body_of(got, 1) == rest1, "REST rows over HTTP/2 equal HTTP/1.1's")
        t.check(status_of(got, 3) == "200" and b'"i64"' in body_of(got, 3), "Connect JSON Take over HTTP/2: 200")
        t.check(status_of(got, 5) == "400" and b"more than once" in body_of(got, 5),
                "a repeated query parameter is refused over HTTP/2 too (400)")
        h7 = [p for k, f, s, p in got if k == HEADERS and s == 7]
        t.check(status_of(got, 7) == "415" and h7 and h7[0].get("accept-post") and
                all(name == name.lower() for name in h7[0]),
                "a Connect 415 names what it takes in accept-post, every field name lowercase (RFC 9113)")

        # ---- 9. body bounds: max_body_bytes, declared or sent ------------------------------------------
        c = Conn(port)
        # declared: answered at its headers, before any of the body comes
        c.request(1, "POST", "/files/data/core21/rows", [("content-type", "application/json"), ("content-length", "100000")],
                  end=False)
        big = b'{"ids":[' + b",".join(b"1" for _ in range(4000)) + b"]}"
        c.request(3, "POST", "/files/data/core21/rows", [("content-type", "application/json")], body=big)
        c.request(5, "POST", "/files/data/core21/rows?columns=i64", [("content-type", "application/json")], body=b'{"ids":[1,2]}')
        got, _ = c.frames(all_done({3, 5}), 5.0)
        c.close()
        t.check(status_of(got, 1) == "413" and status_of(got, 3) == "413" and b"max_body_bytes" in body_of(got, 3),
                "a body over max_body_bytes over HTTP/2, declared (content-length) or sent: 413 (%s, %s)"
                % (status_of(got, 1), status_of(got, 3)))
        t.check(status_of(got, 5) == "200", "and a small body on the same connection: 200")

        # ---- 1. rapid reset -----------------------------------------------------------------------
        c = Conn(port)
        burst = b""
        for i in range(3000):
            sid = 1 + 2 * i
            burst += frame(HEADERS, END_HEADERS | END_STREAM, sid,
                           c.enc.encode([(":method", "GET"), (":scheme", "http"), (":authority", "x"),
                                         (":path", "/files/data/core21/rows?ids=%d" % (i % 1000))]))
            burst += frame(RST_STREAM, 0, sid, struct.pack(">I", 8))  # CANCEL
        try:
            c.send(burst)
        except OSError:
            pass
        got, ended = c.frames(lambda k, f, s, p: k == GOAWAY, 5.0)
        c.close()
        goaways = [p for k, f, s, p in got if k == GOAWAY]
        t.check(goaways or ended, "rapid reset: 3,000 streams opened and reset end the connection (GOAWAY %s)"
                % (struct.unpack(">I", goaways[0][4:8])[0] if goaways else "none; closed"))
        time.sleep(0.5)
        t.check(healthy(port), "health answers after the rapid reset (HTTP/1.1 and gRPC)")

        # ---- 2. CONTINUATION flood ------------------------------------------------------------------
        c = Conn(port)
        block = c.enc.encode([(":method", "GET"), (":scheme", "http"), (":authority", "x"), (":path", "/healthz")])
        c.send(frame(HEADERS, 0, 1, block[:4]))
        sent, ended = 0, False
        t0 = time.time()
        try:
            for _ in range(20000):
                c.send(frame(CONTINUATION, 0, 1, b"\x40\x01a\x01b"))  # a literal field, again and again
                sent += 1
        except OSError:
            ended = True
        got, closed = c.frames(lambda k, f, s, p: k == GOAWAY, 3.0)
        c.close()
        t.check(ended or closed or any(k == GOAWAY for k, *_ in got),
                "CONTINUATION flood: the connection is ended (%d frames sent before, %.2f s)" % (sent, time.time() - t0))
        t.check(healthy(port), "health answers after the CONTINUATION flood")

        # ---- 3. a window-starved stream ----------------------------------------------------------------
        c = Conn(port, initial_window=0)
        c.request(1, "GET", "/files/data/core21/rows?ids=" + ",".join(map(str, range(200))))  # starved
        c.request(3, "GET", "/files/data/core21/rows?ids=1,2&columns=i64")
        c.send(frame(WINDOW_UPDATE, 0, 3, struct.pack(">I", 1 << 20)))
        got, _ = c.frames(stream_done(3), 5.0)
        with urllib.request.urlopen("http://127.0.0.1:%d/files/data/core21/rows?ids=1,2&columns=i64" % port) as r:
            want = r.read()
        t.check(body_of(got, 3) == want and not body_of(got, 1),
                "a stream whose window is never opened does not hold the others: stream 3 answered in full, "
                "stream 1 sent nothing")
        t0 = time.time()
        got, _ = c.frames(lambda k, f, s, p: k == RST_STREAM and s == 1, 6.0)
        rst = [p for k, f, s, p in got if k == RST_STREAM and s == 1]
        t.check(rst and time.time() - t0 < 4.5,
                "the starved stream is reset at request_timeout_ms (%.1f s, code %s)"
                % (time.time() - t0, struct.unpack(">I", rst[0])[0] if rst else None))
        c.close()
        t.check(healthy(port), "health answers beside the starved stream")

        # ---- 4. slowloris preface --------------------------------------------------------------------------
        socks = []
        for _ in range(20):
            s = socket.create_connection(("127.0.0.1", port), timeout=5)
            s.sendall(PREFACE[:10])
            socks.append(s)
        t0 = time.time()
        closed = 0
        for s in socks:
            try:
                s.settimeout(max(0.1, 4 - (time.time() - t0)))
                closed += s.recv(1) == b""
            except (socket.timeout, ConnectionResetError):
                closed += 0
            s.close()
        t.check(closed == 20 and time.time() - t0 < 3.5,
                "a preface trickled and stopped: 20 of 20 connections closed at client_header_timeout_ms (%.1f s)"
                % (time.time() - t0))
        t.check(healthy(port), "health answers after the slowloris preface")

        # ---- 5. oversized headers ----------------------------------------------------------------------------
        c = Conn(port)
        c.request(1, "GET", "/healthz", [("x-big-%d" % i, "v" * 1000) for i in range(40)])
        c.request(3, "GET", "/healthz")
        got, _ = c.frames(lambda k, f, s, p: False, 1.5)
        c.close()
        t.check(status_of(got, 1) == "431" and b"limit_exceeded" in body_of(got, 1),
                "a 40 KiB header list: 431 limit_exceeded on its stream")
        t.check(status_of(got, 3) == "200", "and the connection serves on (the next stream: 200)")

        # ---- 6. streams over the announced maximum ------------------------------------------------------------
        c = Conn(port, initial_window=0)  # answers wait on the window: all stay open
        for i in range(200):
            c.request(1 + 2 * i, "GET", "/files/data/core21/rows?ids=%d&columns=i64" % i)
        got, _ = c.frames(lambda k, f, s, p: False, 1.5)
        refused = {s for k, f, s, p in got if k == RST_STREAM and struct.unpack(">I", p)[0] == REFUSED_STREAM}
        c.close()
        t.check(len(refused) == 72, "200 streams at once: the 72 past SETTINGS_MAX_CONCURRENT_STREAMS (128) refused (%d)"
                % len(refused))
        t.check(healthy(port), "health answers after the stream flood")
        # The connection closes once its 128 streams at work are done (a request at work keeps
        # it): a sanitizer build takes a while over them, so its count is polled.
        deadline = time.time() + 10
        while True:
            with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port) as r:
                metrics = dict(l.rsplit(" ", 1) for l in r.read().decode().splitlines() if l and not l.startswith("#"))
            if metrics["lanced_http2_connections"] == "0" or time.time() > deadline:
                break
            time.sleep(0.1)
        t.check(int(metrics["lanced_http2_protocol_errors_total"]) >= 2 and
                int(metrics["lanced_http2_streams_refused_total"]) >= 72 and
                int(metrics["lanced_http2_streams_stalled_total"]) >= 1 and
                metrics["lanced_http2_connections"] == "0",
                "/metrics counted the attacks: protocol errors %s, refused streams %s, stalled streams %s; %s open"
                % (metrics["lanced_http2_protocol_errors_total"], metrics["lanced_http2_streams_refused_total"],
                   metrics["lanced_http2_streams_stalled_total"], metrics["lanced_http2_connections"]))

        # ---- 8. an idle connection is told to go -------------------------------------------------------------
        c = Conn(port)
        t0 = time.time()
        got, ended = c.frames(lambda k, f, s, p: k == GOAWAY, 4.0)
        c.close()
        goaway = [p for k, f, s, p in got if k == GOAWAY]
        t.check(goaway and struct.unpack(">I", goaway[0][4:8])[0] == 0 and time.time() - t0 < 2.5,
                "an idle HTTP/2 connection gets GOAWAY (NO_ERROR) at client_header_timeout_ms (%.1f s)" % (time.time() - t0))
    finally:
        p.terminate()
        p.wait(10)

    # ---- 10. SIGTERM's drain: GOAWAY, the stream at work answered, a clean exit ---------------------
    env = dict(os.environ, LANCED_TEST_STALL_PATH="core21", LANCED_TEST_STALL_MS="800")
    p, port, _ = start(BIN, FIX, "--io-mode", "buffered", env=env)
    try:
        c = Conn(port)
        c.request(1, "GET", "/files/data/core21/rows?ids=1&columns=i64")
        c.frames(lambda k, f, s, p: k == SETTINGS and f & ACK, 1.0)
        time.sleep(0.2)  # at work on a take thread
        p.send_signal(15)
        got, ended = c.frames(all_done({1}), 5.0)
        kinds = [k for k, *_ in got]
        goaway = GOAWAY in kinds and kinds.index(GOAWAY) < max(i for i, k in enumerate(kinds) if k == DATA)
        t.check(goaway and status_of(got, 1) == "200" and b'"i64"' in body_of(got, 1),
                "SIGTERM: GOAWAY first, then the stream at work is answered (200)")
        c.request(3, "GET", "/healthz")
        got, ended = c.frames(lambda k, f, s, p: False, 3.0)
        t.check(status_of(got, 3) is None and ended, "a stream opened after the GOAWAY is not served; the connection closes")
        c.close()
        rc = p.wait(10)
        t.check(rc == 0, "and lanced exits 0 (%s)" % rc)
    finally:
        if p.poll() is None:
            p.kill()
    t.finish()


main()
