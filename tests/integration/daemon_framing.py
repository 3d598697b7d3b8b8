#!/usr/bin/env python3
"""HTTP framing and oversized bodies (issue 14, points 5 and 6), raw sockets against the real
daemon: conflicting Content-Length, Content-Length with Transfer-Encoding, an unsupported
Transfer-Encoding each get 400 at once and the connection closed, so a request pipelined behind
them is never answered; a chunk size never honoured is cut off at the body deadline; a 64 MiB POST
and a body of 2M ids written by a client that reads only after writing get 413 (the daemon
keeps reading and dropping the body instead of resetting the connection).
Usage: tests/integration/daemon_framing.py BIN ROOT"""
import re
import socket
import sys
import time

from lanced_it import Checks, read_to_close, start

BIN, ROOT = sys.argv[1], sys.argv[2]
T = Checks("framing")
check = T.check
p, port, _ = start(BIN, ROOT, "--workers", "1", "--client-header-timeout-ms", "1000")


def exchange(raw, timeout=3.0):
    """Sends raw, reads until the server closes (or timeout); returns (bytes, seconds, closed)."""
    s = socket.create_connection(("127.0.0.1", port))
    s.settimeout(timeout)
    t0 = time.time()
    s.sendall(raw)
    out, closed = read_to_close(s)
    return out, time.time() - t0, closed


NEXT = b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"  # pipelined behind each bad message
cases = [
    ("two different Content-Length headers", 400,
     b"POST /files/sample.lance/rows HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\nContent-Length: 12\r\n\r\n{\"ids\":[1]}"),
    ("Content-Length with Transfer-Encoding", 400,
     b"POST /files/sample.lance/rows HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"),
    ("Transfer-Encoding: gzip, chunked", 400,
     b"POST /files/sample.lance/rows HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n"),
    # RFC 9112 5.1: whitespace before the colon is a 400; libmicrohttpd keeps the name with its
    # space, so these were read by Content-Length while a proxy may honour the other header
    ("Transfer-Encoding with a space before the colon", 400,
     b"POST /files/sample.lance/rows HTTP/1.1\r\nHost: x\r\nContent-Length: 11\r\nTransfer-Encoding : chunked\r\n\r\n{\"ids\":[1]}"),
    ("Transfer-Encoding with a tab before the colon", 400,
     b"POST /files/sample.lance/rows HTTP/1.1\r\nHost: x\r\nContent-Length: 11\r\nTransfer-Encoding\t: chunked\r\n\r\n{\"ids\":[1]}"),
    ("a second Content-Length with a space before the colon", 400,
     b"POST /files/sample.lance/rows HTTP/1.1\r\nHost: x\r\nContent-Length: 11\r\nContent-Length : 99\r\n\r\n{\"ids\":[1]}"),
    # obs-fold (RFC 9112 5.2: reject or unfold): libmicrohttpd 0.9.75 appends the folded line to
    # the header's name, so these arrived as "Transfer-Encodingchunked" and "Content-Length11"
    # and were framed by the other header (or as bodiless), while a proxy unfolding them sees
    # Transfer-Encoding: chunked or Content-Length: 11
    ("Transfer-Encoding folded onto a second line", 400,
     b"POST /files/sample.lance/rows HTTP/1.1\r\nHost: x\r\nContent-Length: 11\r\nTransfer-Encoding:\r\n chunked\r\n\r\n{\"ids\":[1]}"),
    ("Content-Length folded onto a second line", 400,
     b"POST /files/sample.lance/rows HTTP/1.1\r\nHost: x\r\nContent-Length:\r\n\t11\r\n\r\n{\"ids\":[1]}"),
    # libmicrohttpd 0.9.75 alone serves these as /healthz and ...?ids=1 (the URL cut at the NUL)
    # RFC 9112 3.2: a proxy may route by one Host and the server read another
    ("two Host headers", 400, b"GET /healthz HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n"),
    ("an HTTP/1.1 request without a Host", 400, b"GET /healthz HTTP/1.1\r\nAccept: */*\r\n\r\n"),
    ("a raw NUL in the request line's path", 400, b"GET /healthz\0/x HTTP/1.1\r\nHost: x\r\n\r\n"),
    ("a raw NUL in the request line's query", 400,
     b"GET /files/sample.lance/rows?ids=1\0,2 HTTP/1.1\r\nHost: x\r\n\r\n"),
]
for name, want, raw in cases:
    out, secs, closed = exchange(raw + NEXT)
    statuses = re.findall(rb"HTTP/1\.1 (\d{3})", out)
    check(statuses[:1] == [str(want).encode()] and len(statuses) == 1 and closed and secs < 2.5,
          f"{name}: {want} at once and closed, the pipelined request not answered "
          f"(statuses {[x.decode() for x in statuses]}, closed {closed}, {secs:.2f} s)")

# A NUL inside a string of a protobuf body: protobuf-c hands the string on as a C string, cut at
# the NUL, so these were served as sample.lance and column i64 while a proxy reading the
# message saw other names. 400, as for a NUL in the URL or a JSON body's \u0000.
def pb(num, data):
    return bytes([num << 3 | 2, len(data)]) + data


for name, path, ctype, body in [
    ("a Connect Take's path", "/lanced.v1.RowService/Take", "application/proto",
     pb(1, b"sample.lance\0/../x") + pb(2, b"\x01\x02")),
    ("a Connect Take's column", "/lanced.v1.RowService/Take", "application/proto",
     pb(1, b"sample.lance") + pb(2, b"\x01") + pb(3, b"i64") + pb(3, b"i64\0x")),
    ("a Connect GetFile's tag", "/lanced.v1.RowService/GetFile", "application/proto",
     pb(1, b"train.lance") + pb(3, b"v1\0")),
    ("a /rows protobuf body's column", "/files/sample.lance/rows", "application/x-protobuf",
     pb(2, b"\x01") + pb(3, b"i64\0junk")),
]:
    out, _, _ = exchange(b"POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: %s\r\nContent-Length: %d\r\n"
                         b"Connection: close\r\n\r\n%s" % (path.encode(), ctype.encode(), len(body), body))
    check(out.startswith(b"HTTP/1.1 400") and b"NUL" in out,
          f"a NUL byte in {name} (protobuf): 400 ({out.split(chr(13).encode())[0]!r})")
body = pb(2, b"\x01") + pb(3, b"i64") + b"\x28\x00"  # and a varint field (version 0)
out, _, _ = exchange(b"POST /files/sample.lance/rows HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-protobuf\r\n"
                     b"Content-Length: %d\r\nConnection: close\r\n\r\n%s" % (len(body), body))
check(out.startswith(b"HTTP/1.1 200"), f"a protobuf body without a NUL in its strings is served ({out[:20]!r})")

# The body's Content-Encoding on POST /rows, as on Connect: gzip is inflated (bounded by
# max_body_bytes), another coding is 415 naming the supported ones. It was ignored: gzip bytes
# parsed as JSON (400), and a proxy decoding the body saw another request than the daemon.
import gzip  # noqa: E402
plain = b'{"ids":[1,2],"columns":["i64"]}'
for name, enc, body, want in [("gzip", b"gzip", gzip.compress(plain), 200), ("identity", b"identity", plain, 200),
                              ("br", b"br", plain, 415), ("gzip, gzip", b"gzip, gzip", plain, 415)]:
    out, _, _ = exchange(b"POST /files/sample.lance/rows HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                         b"Content-Encoding: %s\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s" % (enc, len(body), body))
    head = out.split(b"\r\n\r\n")[0].lower()
    check(out.startswith(b"HTTP/1.1 %d" % want) and (want == 200 and b'"num_rows":2' in out or
                                                      want == 415 and b"accept-encoding: gzip, identity" in head),
          f"POST /rows with Content-Encoding {name}: {want} ({out.split(chr(13).encode())[0]!r})")

# A chunk size never honoured: libmicrohttpd waits for its bytes; the body deadline
# (client_header_timeout_ms, 1 s here) closes the connection instead of the 30 s idle timeout.
out, secs, closed = exchange(b"POST /files/sample.lance/rows HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                             b"ffffffffffffffff\r\nhello", timeout=5)
check(closed and secs < 3, f"a chunk size of ffffffffffffffff: closed at the body deadline ({secs:.2f} s)")
ok_chunked, _, _ = exchange(b"POST /files/sample.lance/rows HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
                            b"Content-Type: application/json\r\nConnection: close\r\n\r\n"
                            b"b\r\n{\"ids\":[1]}\r\n0\r\n\r\n")
check(ok_chunked.startswith(b"HTTP/1.1 200"), f"a well-formed chunked body is served ({ok_chunked[:20]!r})")

out, _, _ = exchange(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
check(out.startswith(b"HTTP/1.1 200"), "a well-framed request is still answered")
# The NUL check measures the raw URI: escapes, queries, extra spaces and pipelining are unaffected.
out, _, _ = exchange(b"GET /files/sample.lance/rows?ids=1%2C2&columns=i64 HTTP/1.1\r\nHost: x\r\n\r\n"
                     b"GET /files/%73ample.lance/rows?ids=3 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
got = re.findall(rb"HTTP/1\.1 (\d{3})", out)
check(got == [b"200", b"200"], f"escaped and pipelined requests are still served ({got})")


def write_then_read(head, body_iter):
    s = socket.create_connection(("127.0.0.1", port))
    s.settimeout(15)
    s.sendall(head)
    err = None
    try:
        for chunk in body_iter:
            s.sendall(chunk)
    except OSError as e:
        err = e
    out = b""
    try:
        while True:
            d = s.recv(65536)
            if not d:
                break
            out += d
    except OSError as e:
        err = err or e
    s.close()
    return out, err


size = 64 << 20
chunk = b"1," * 32768
head = b"POST /files/sample.lance/rows HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % size
out, err = write_then_read(head, (chunk for _ in range(size // len(chunk))))
check(out.startswith(b"HTTP/1.1 413") and err is None,
      f"a 64 MiB POST written in full, then read: 413 (got {out[:30]!r}, error {err})")
# The same for Connect, whose answer to it is 429 resource_exhausted (the Connect spec's status):
# refused before its body is read, the connection lingers as for the 413.
head = (b"POST /lanced.v1.RowService/Take HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        b"Content-Length: %d\r\n\r\n" % size)
out, err = write_then_read(head, (chunk for _ in range(size // len(chunk))))
check(out.startswith(b"HTTP/1.1 429") and b'"resource_exhausted"' in out and err is None,
      f"a 64 MiB Connect request written in full, then read: 429 (got {out[:30]!r}, error {err})")
body = b'{"ids":[' + b",".join(b"%d" % (i % 1000) for i in range(2_000_000)) + b"]}"
head = b"POST /files/sample.lance/rows HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body)
out, err = write_then_read(head, [body])
check(out.startswith(b"HTTP/1.1 413") and err is None, f"a body of 2M ids: 413 (got {out[:30]!r}, error {err})")


def connect_call(method, timeout_ms, body, delay):
    """A Connect JSON call whose body follows its headers after `delay` seconds."""
    s = socket.create_connection(("127.0.0.1", port))
    s.settimeout(10)
    t = b"Connect-Timeout-Ms: %s\r\n" % timeout_ms if timeout_ms is not None else b""
    s.sendall(b"POST /lanced.v1.RowService/%s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
              b"Connection: close\r\n%sContent-Length: %d\r\n\r\n" % (method.encode(), t, len(body)))
    time.sleep(delay)
    s.sendall(body)
    out, _ = read_to_close(s)
    return out


# Connect-Timeout-Ms counts from the headers: a deadline spent before the call begins (here on a
# slow body) is answered 504 deadline_exceeded without doing the work, for Take and GetFile alike;
# one not spent is served; a malformed one is 400.
take_body, file_body = b'{"path":"sample.lance","ids":[1]}', b'{"path":"sample.lance"}'
for method, body in (("Take", take_body), ("GetFile", file_body)):
    out = connect_call(method, b"50", body, 0.3)
    check(out.startswith(b"HTTP/1.1 504") and b'"deadline_exceeded"' in out and b"before the call began" in out,
          f"Connect {method}, its 50 ms spent on the body: 504 deadline_exceeded ({out[:12]!r} {out[-120:]!r})")
    out = connect_call(method, b"60000", body, 0.05)
    check(out.startswith(b"HTTP/1.1 200"), f"Connect {method} within its deadline: 200 ({out[:60]!r})")
out = connect_call("Take", b"soon", take_body, 0)
check(out.startswith(b"HTTP/1.1 400") and b"Connect-Timeout-Ms" in out, f"Connect-Timeout-Ms: soon is 400 ({out[:60]!r})")
# HTTP/1.0 needs no Host: still served.
out, _, _ = exchange(b"GET /healthz HTTP/1.0\r\n\r\n")
check(out.startswith(b"HTTP/1.1 200") or out.startswith(b"HTTP/1.0 200"), f"HTTP/1.0 without a Host is served ({out[:20]!r})")
# A query parameter given twice: libmicrohttpd hands out the first, a proxy may use the last.
out, _, _ = exchange(b"GET /files/sample.lance/rows?ids=1&ids=2 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
check(out.startswith(b"HTTP/1.1 400") and b"'ids' given more than once" in out, f"?ids=1&ids=2: 400 naming ids ({out[:60]!r})")
# Connect JSON with a key twice: refused as the REST body's JSON is (a proxy may read the other).
body = b'{"path":"sample.lance","path":"embeddings.lance","ids":["1"]}'
out, _, _ = exchange(b"POST /lanced.v1.RowService/Take HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
                     b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
check(out.startswith(b"HTTP/1.1 400") and b"duplicate" in out, f"Connect JSON with path twice: 400 ({out[:80]!r} ... {out[-120:]!r})")
p.kill()
T.finish()
