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
    # libmicrohttpd 0.9.75 sent the 400 of a malformed Content-Length twice (status line and
    # headers), and cut a header value at a NUL (Content-Length: 11\0 99 read as 11)
    ("a Content-Length of +5", 400, b"POST /files/sample.lance/rows HTTP/1.1\r\nHost: x\r\nContent-Length: +5\r\n\r\nhello"),
    ("a Content-Length of 0x5", 400, b"POST /files/sample.lance/rows HTTP/1.1\r\nHost: x\r\nContent-Length: 0x5\r\n\r\nhello"),
    ("a Content-Length of 5, 5", 400, b"POST /files/sample.lance/rows HTTP/1.1\r\nHost: x\r\nContent-Length: 5, 5\r\n\r\nhello"),
    ("a Content-Length over 2^64", 400,
     b"POST /files/sample.lance/rows HTTP/1.1\r\nHost: x\r\nContent-Length: 18446744073709551616\r\n\r\nhello"),
    ("a NUL inside a header's value", 400,
     b"POST /files/sample.lance/rows HTTP/1.1\r\nHost: x\r\nContent-Length: 11\0 99\r\n\r\n{\"ids\":[1]}"),
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

# A chunk size never honoured (its bytes never come): the body deadline (client_header_timeout_ms,
# 1 s here) closes the connection instead of the 30 s request timeout. (A chunk size over
# max_body_bytes is a 413 at once: below.)
out, secs, closed = exchange(b"POST /files/sample.lance/rows HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                             b"fff\r\nhello", timeout=5)
check(closed and 0.8 < secs < 3, f"a chunk of 4095 bytes never sent: closed at the body deadline ({secs:.2f} s)")
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

# What libmicrohttpd used to refuse itself, with an HTML body (issue 38, points 3 and 16): each is
# now lanced's own answer, a JSON error body in the route's shape, and the connection closes (a
# request pipelined behind it is never read). Bare LFs end no line: in the head or a chunk line.
POST_CHUNKED = b"POST /files/sample.lance/rows HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
refusals = [
    ("a GET of 40 KiB (over the request buffer)", 414, "limit_exceeded",
     b"GET /files/sample.lance/rows?ids=" + b"1," * 20000 + b"1 HTTP/1.1\r\nHost: x\r\n\r\n"),
    ("headers of 40 KiB", 431, "limit_exceeded",
     b"GET /healthz HTTP/1.1\r\nHost: x\r\n" + b"".join(b"X-%d: %s\r\n" % (i, b"v" * 100) for i in range(400)) + b"\r\n"),
    ("101 header fields", 431, "limit_exceeded",
     b"GET /healthz HTTP/1.1\r\nHost: x\r\n" + b"".join(b"X-%d: v\r\n" % i for i in range(101)) + b"\r\n"),
    ("a header line without a colon", 400, "invalid_argument", b"GET /healthz HTTP/1.1\r\nHost: x\r\nNoColon\r\n\r\n"),
    ("a NUL in a header's name", 400, "invalid_argument", b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-\0: v\r\n\r\n"),
    ("a header line ending in a bare LF", 400, "invalid_argument", b"GET /healthz HTTP/1.1\r\nHost: x\nAccept: */*\r\n\r\n"),
    ("a request line ending in a bare LF", 400, "invalid_argument", b"GET /healthz HTTP/1.1\nHost: x\r\n\r\n"),
    ("a header folded onto the line before", 400, "invalid_argument", b"GET /healthz HTTP/1.1\r\nHost: x\r\nX: a\r\n b\r\n\r\n"),
    ("HTTP/3.0", 505, "unimplemented", b"GET /healthz HTTP/3.0\r\nHost: x\r\n\r\n"),
    ("a chunk-size line ending in a bare LF", 400, "invalid_argument", POST_CHUNKED + b"b\n{\"ids\":[1]}\r\n0\r\n\r\n"),
    ("a malformed chunk size", 400, "invalid_argument", POST_CHUNKED + b"zz\r\n{\"ids\":[1]}\r\n0\r\n\r\n"),
    ("a chunk size over 2^64", 400, "invalid_argument", POST_CHUNKED + b"10000000000000000\r\nhello\r\n0\r\n\r\n"),
    ("chunk data not followed by CRLF", 400, "invalid_argument", POST_CHUNKED + b"b\r\n{\"ids\":[1]}XX0\r\n\r\n"),
    ("a chunk over max_body_bytes", 413, "limit_exceeded", POST_CHUNKED + b"ffffffffffffffff\r\nhello"),
    ("a trailer line without a colon", 400, "invalid_argument", POST_CHUNKED + b"b\r\n{\"ids\":[1]}\r\n0\r\nbad trailer\r\n\r\n"),
]
for name, want, code, raw in refusals:
    out, secs, closed = exchange(raw + NEXT)
    head, _, body = out.partition(b"\r\n\r\n")
    statuses = re.findall(rb"HTTP/1\.1 (\d{3})", out)
    check(statuses == [str(want).encode()] and b"content-type: application/json" in head.lower() and
          body.startswith(b'{"error":{"code":"%s"' % code.encode()) and closed and secs < 2.5,
          f"{name}: {want} {code} with a JSON body, closed, nothing behind it answered "
          f"(statuses {[x.decode() for x in statuses]}, closed {closed}, body {body[:90]!r})")
# More query parameters than are kept (64): refused, not served with the rest dropped unseen
# (an ids behind them would be missed). libmicrohttpd closed 2,000 of them without an answer.
out, _, _ = exchange(b"GET /files/sample.lance/rows?" + b"".join(b"p%d=1&" % i for i in range(2000)) + b"ids=1 HTTP/1.1\r\nHost: x\r\n\r\n")
check(out.startswith(b"HTTP/1.1 400") and b"more than 64 parameters" in out, f"a query of 2,001 parameters: 400 ({out[:20]!r} {out[-90:]!r})")
out, _, _ = exchange(b"GET /files/sample.lance/rows?" + b"".join(b"p%d=1&" % i for i in range(63)) + b"ids=1 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
check(out.startswith(b"HTTP/1.1 200"), f"a query of 64 parameters: 200 ({out[:20]!r})")
# Binary garbage where a request line should be: a JSON 400, not a silent close.
out, _, closed = exchange(bytes(range(256)) * 4)
check(out.startswith(b"HTTP/1.1 400") and b'"invalid_argument"' in out and closed, f"binary garbage: 400 with a JSON body ({out[:40]!r})")

# The same refusal for a Connect path comes in Connect's error shape (and status: 429 for
# resource_exhausted, as its 413s are).
out, _, _ = exchange(b"POST /lanced.v1.RowService/Take HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n" +
                     b"".join(b"X-%d: %s\r\n" % (i, b"v" * 100) for i in range(400)) + b"\r\n")
check(out.startswith(b"HTTP/1.1 429") and b'{"code":"resource_exhausted"' in out,
      f"a Connect request with 40 KiB of headers: Connect's resource_exhausted (429) ({out[:14]!r} {out[-90:]!r})")
# Within the limits the same shapes are served: a long GET, a chunked body with extensions and
# trailers, empty lines before a request line (RFC 9112 2.2), absolute-form targets, HEAD.
ids = b",".join(b"%d" % (i % 100) for i in range(4000))
out, _, _ = exchange(b"GET /files/sample.lance/rows?columns=i64&ids=" + ids + b" HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
check(out.startswith(b"HTTP/1.1 200") and b'"num_rows":4000' in out, f"a GET of 4,000 ids ({len(ids)} bytes): 200 ({out[:20]!r})")
out, _, _ = exchange(POST_CHUNKED.replace(b"\r\n\r\n", b"\r\nConnection: close\r\n\r\n") +
                     b"5;ext=1\r\n{\"ids\r\n6\r\n\":[1]}\r\n0\r\nX-Trailer: t\r\n\r\n")
check(out.startswith(b"HTTP/1.1 200") and b'"num_rows":1' in out, f"a chunked body with extensions and a trailer: 200 ({out[:20]!r})")
out, _, _ = exchange(b"\r\n\r\nGET http://x/healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
check(out.startswith(b"HTTP/1.1 200"), f"empty lines, then an absolute-form target: 200 ({out[:20]!r})")
out, _, _ = exchange(b"HEAD /files/sample.lance/rows?ids=1 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
length = re.search(rb"Content-Length: (\d+)", out)
check(out.startswith(b"HTTP/1.1 200") and length and int(length.group(1)) > 0 and out.endswith(b"\r\n\r\n"),
      f"HEAD: the GET's Content-Length, no body ({out[-40:]!r})")
# Expect: 100-continue: the interim answer before the body is sent, then the answer.
s = socket.create_connection(("127.0.0.1", port))
s.settimeout(3)
body = b'{"ids":[1]}'
s.sendall(b"POST /files/sample.lance/rows HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nExpect: 100-continue\r\n"
          b"Content-Length: %d\r\nConnection: close\r\n\r\n" % len(body))
interim = s.recv(100)
s.sendall(body)
out, _ = read_to_close(s)
check(interim == b"HTTP/1.1 100 Continue\r\n\r\n" and out.startswith(b"HTTP/1.1 200"),
      f"Expect: 100-continue: 100, then 200 ({interim!r} {out[:16]!r})")
# HTTP/1.0 closes unless it asks to keep alive; HTTP/1.1 keeps alive unless it asks to close.
out, _, closed = exchange(b"GET /healthz HTTP/1.0\r\nConnection: keep-alive\r\n\r\nGET /healthz HTTP/1.0\r\n\r\n")
check(re.findall(rb"HTTP/1\.1 (\d{3})", out) == [b"200", b"200"] and b"Connection: keep-alive" in out and closed,
      f"HTTP/1.0 keep-alive, then a plain HTTP/1.0 request: both answered, then closed ({out.count(b'200 OK')} answers)")
p.kill()
T.finish()
