"""A lanced client over the Connect API (binary protobuf, FORMAT_PROTO): rows come back as
numpy arrays, tensor columns through one frombuffer each."""
import collections
import decimal
import http.client
import json
import operator
import os
import re
import socket
import threading
import urllib.parse

import numpy as np

from ._pb import pb
from .arrow import ArrowError, read_stream

__all__ = ["Client", "LancedError"]


def _pin(version):
    """A TakeRequest's or GetFileRequest's version fields for version: None (the latest), a
    number, or a tag's name (any str, as Lance's checkout takes it)."""
    if isinstance(version, str):
        return {"tag": version}
    return {"version": int(version or 0)}


_U64_MAX = (1 << 64) - 1
_JUST_INT = {int}


def _check_ids(ids):
    """ids as a list of Python ints, checked before any request: each an integer (int, a numpy
    integer, an integer 0-d tensor: what operator.index takes) in [0, 2^64). A float (1.5 is
    not row 1), a bool or a negative number raises ValueError naming it and its position."""
    if type(ids) is list and (not ids or set(map(type, ids)) == _JUST_INT):
        # What samplers give (torch's tolist()), checked at C speed: a third of the time a
        # generator over the ids took, per batch of a DataLoader worker.
        if not ids or (min(ids) >= 0 and max(ids) <= _U64_MAX):
            return list(ids)
    out = []
    for pos, i in enumerate(ids):
        if isinstance(i, bool):
            raise ValueError("id %r at position %d is a bool, not a row id" % (i, pos))
        try:
            v = operator.index(i)
        except TypeError:
            raise ValueError("id %r at position %d is not an integer (row ids are whole numbers)"
                             % (i, pos)) from None
        if v < 0 or v > _U64_MAX:
            raise ValueError("id %d at position %d is out of range (row ids are 0 to 2^64-1)" % (v, pos))
        out.append(v)
    return out


class _RowIds(list):
    """Checked ids that are Lance row ids (row_ids=), not offsets: sent as row_ids."""


def _pick_ids(ids, row_ids):
    """Exactly one of ids (offsets) and row_ids (Lance row ids), checked (_check_ids)."""
    if (ids is None) == (row_ids is None):
        raise ValueError("give ids (offsets) or row_ids (Lance row ids), one of them")
    return _check_ids(ids) if row_ids is None else _RowIds(_check_ids(row_ids))


def _ids_key(ids):
    return "row_ids" if isinstance(ids, _RowIds) else "ids"


class LancedError(Exception):
    """An error answer from lanced: code is lanced's error code ("not_found",
    "invalid_argument", "out_of_range", "unavailable", ...), message its text, status the HTTP
    status (0 when the daemon could not be reached)."""

    def __init__(self, code, message, status=0):
        super().__init__("%s: %s" % (code, message))
        self.code, self.message, self.status = code, message, status


# Arrow type names (docs/api.md) -> numpy dtypes, for the scalar value lists and tensors.
_NUMERIC = {"int8": "<i1", "int16": "<i2", "int32": "<i4", "int64": "<i8",
            "uint8": "<u1", "uint16": "<u2", "uint32": "<u4", "uint64": "<u8",
            "float16": "<f2", "float32": "<f4", "float64": "<f8", "bool": "?"}
_UNIT = {"s": "s", "ms": "ms", "us": "us", "ns": "ns"}


def _temporal_dtype(t):
    """numpy dtype of a date/time/timestamp/duration Arrow type, None otherwise."""
    if t == "date32":
        return "datetime64[D]"
    if t == "date64":
        return "datetime64[ms]"
    m = re.match(r"(timestamp|duration|time32|time64)\[(s|ms|us|ns)", t)
    if not m:
        return None
    kind = "datetime64" if m.group(1) == "timestamp" else "timedelta64"
    return "%s[%s]" % (kind, _UNIT[m.group(2)])


def _mask(values, validity):
    if not len(validity):
        return values
    valid = np.array(validity, dtype=bool)
    if values.dtype == object:
        values[~valid] = None
        return values
    mask = ~valid.reshape((-1,) + (1,) * (values.ndim - 1))
    return np.ma.MaskedArray(values, mask=np.broadcast_to(mask, values.shape).copy())


def _objects(items):
    items = list(items)
    out = np.empty(len(items), dtype=object)
    for i, v in enumerate(items):  # element-wise: numpy would merge equal-shaped arrays
        out[i] = v
    return out


def _tensor(t, n):
    """A Tensor message -> (n, *shape) array, or an object array of (k, *shape) arrays for a
    list column; values that are null inside a row are masked."""
    values = np.frombuffer(t.data, dtype=_NUMERIC[t.dtype])
    item_shape = tuple(t.shape)
    if len(t.item_validity):
        iv = np.frombuffer(t.item_validity, dtype=np.uint8) == 0
        values = np.ma.MaskedArray(values, mask=iv)
    if not len(t.offsets):
        return values.reshape((n,) + item_shape)
    off = np.asarray(t.offsets, dtype=np.int64)
    items = values.reshape((-1,) + item_shape)
    return _objects(items[off[i]:off[i + 1]] for i in range(n))


def _column(c, n):
    kind = c.WhichOneof("values")
    if kind == "tensor":
        return _mask(_tensor(c.tensor, n), c.validity)
    if kind is None:  # a null-typed column
        return _mask(_objects([None] * n), c.validity or [False] * n)
    vals = getattr(c, kind).values
    if kind == "strings":
        if c.type.startswith("decimal"):
            # decimals as exact decimal.Decimal (the wire carries exact decimal strings)
            return _mask(_objects(decimal.Decimal(v) if v else None for v in vals), c.validity)
        return _mask(_objects(vals), c.validity)
    if kind == "binaries":
        return _mask(_objects(vals), c.validity)
    temporal = _temporal_dtype(c.type)
    if temporal:
        return _mask(np.array(vals, dtype=np.int64).view(temporal), c.validity)
    dtype = _NUMERIC.get(c.type.split("<")[-1].rstrip(">")) if c.type.startswith("dictionary") \
        else _NUMERIC.get(c.type)
    wide = {"bools": bool, "int64s": np.int64, "uint64s": np.uint64, "doubles": np.float64}[kind]
    arr = np.array(vals, dtype=wide)
    if dtype and np.dtype(dtype) != arr.dtype:
        arr = arr.astype(dtype)  # exact: the wire widened the column's own type
    return _mask(arr, c.validity)


def _proto_carries(t):
    """Whether the protobuf format carries an Arrow type: scalars, and numeric fixed-size
    lists (nested) or lists of them (docs/api.md, Tensor). The rest comes as JSON rows."""
    if t.startswith(("struct<", "map<")) or (t.startswith("decimal") and t.endswith(",256)")):
        return False
    if t.startswith(("list<", "large_list<")):
        t = t[t.index("<") + 1:-1]
    elif not t.startswith("fixed_size_list<"):
        return True
    while t.startswith("fixed_size_list<"):
        t = t[len("fixed_size_list<"):t.rindex(">")]
    return t in _NUMERIC and t != "bool"


def _fixed_leaf(t):
    """The leaf of nested fixed-size lists, "fixed_size_list<fixed_size_list<int16>[4]>[3]"
    -> "int16"; t itself when it is none."""
    while t.startswith("fixed_size_list<"):
        t = t[len("fixed_size_list<"):t.rindex(">")]
    return t


def _arrays_carry(t):
    """Whether take_arrays reads an Arrow type as arrays (lanced/arrow.py): numbers, bools,
    temporals, strings and binaries, fixed-size lists of numbers (nested), and lists of those
    numbers or fixed-size lists. The rest (structs, maps, decimals, dictionaries, lists of
    strings) comes as Client.take gives it."""
    if t in _NUMERIC or _temporal_dtype(t) or t in ("utf8", "large_utf8", "binary", "large_binary"):
        return True
    m = re.match(r"(large_)?list<(.*)>$", t)
    leaf = _fixed_leaf(m.group(2) if m else t) if m or t.startswith("fixed_size_list<") else None
    return leaf is not None and (leaf in _NUMERIC or bool(_temporal_dtype(leaf)))


def _read_body(resp, alloc=None):
    """The response's body; one with a Content-Length is read into one buffer allocated once
    (alloc(n) when given, else a bytearray; take_arrays' arrays are views of it), not joined
    from chunks."""
    n = resp.length
    if n is None:
        return resp.read()
    buf = alloc(n) if alloc and resp.status == 200 else bytearray(n)
    mv, got = memoryview(buf), 0
    while got < n:
        k = resp.readinto(mv[got:])
        if not k:
            raise http.client.IncompleteRead(bytes(buf[:got]), n - got)
        got += k
    return buf


def _rows_target(path, query=""):
    return "/files/%s/rows%s" % (urllib.parse.quote(path, safe="/"), query)


def _rows_body(ids, columns, version):
    """A rows POST body (checked ids: offsets, or _RowIds), as JSON bytes. Checked ids are a
    list of Python ints, whose repr is their JSON array: half the time of json.dumps, which
    a DataLoader worker paid on every batch."""
    rest = {"columns": columns}
    if version:
        rest["version"] = version
    return b'{"%s":%s,%s' % (_ids_key(ids).encode(), list.__repr__(ids).encode(),
                             json.dumps(rest).encode()[1:])  # rest's members after the ids


def _error_answer(status, data):
    """The LancedError of an error answer's body: Connect's shape {"code", "message"}, or the
    REST routes' {"error": {"code", "message"}} (docs/api.md)."""
    try:
        err = json.loads(bytes(data))
        if isinstance(err.get("error"), dict):
            err = err["error"]
        return LancedError(str(err.get("code", "unknown")), str(err.get("message", "")), status)
    except (ValueError, AttributeError):
        return LancedError("unknown", bytes(data[:200]).decode("utf-8", "replace"), status)


class _Pipeline:
    """HTTP/1.1 requests pipelined on one connection: requests go out up to depth ahead of the
    answers, answers are read in order, each body straight into the buffer it is handed
    (alloc), with nothing copied but the few bytes read past a head. The requests not yet
    answered are kept, to send again on a new connection if the daemon closes this one (a
    keep-alive timeout, a drain, "Connection: close"); Take is a read, safe to repeat."""

    _HEAD_MAX = 64 << 10  # lanced's answer heads are a few hundred bytes
    _SNDBUF = 1 << 20  # every unanswered request fits: sending never waits on the daemon reading
    # A large body is read in pieces of at least this much (SO_RCVLOWAT: the kernel wakes the
    # reader only once that many bytes wait, and grows the receive buffer to hold them), not
    # in whatever arrived since the last wake-up: about 30 wake-ups and reads per 6 MB answer
    # otherwise, each a context switch (and in a VM a hypervisor exit) here and a send
    # resumed in the daemon.
    _LOWAT_MIN, _LOWAT_MAX = 256 << 10, 1 << 20

    def __init__(self, host, port, timeout, url):
        self.host, self.port, self.timeout, self.url = host, port, timeout, url
        self.sock, self.left = None, bytearray()
        self.busy = False  # a run is under way (perhaps suspended, its requests in flight)

    def close(self):
        if self.sock is not None:
            self.sock.close()
            self.sock = None

    def _open(self):
        self.close()
        try:
            self.sock = socket.create_connection((self.host, self.port), self.timeout)
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, self._SNDBUF)
            self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except OSError as ex:
            raise LancedError("unavailable", "cannot reach lanced at %s: %s" % (self.url, ex)) from ex
        self.left = bytearray()

    def run(self, requests, depth, alloc):
        """Yields each request's answer body (the buffer alloc gave, or a bytearray). Left
        before its end (an error, a generator closed early), it closes the connection, whose
        unanswered requests would otherwise answer the next run."""
        inflight = collections.deque()
        done = False
        self.busy = True
        try:
            yield from self._run(iter(requests), depth, alloc, inflight)
            done = True
        finally:
            self.busy = False
            if not done or inflight:
                self.close()

    def _run(self, requests, depth, alloc, inflight):
        sent = 0  # bytes of the requests sent and not answered (inflight)
        more, retried = True, False
        if self.sock is None:
            self._open()
        while True:
            # At depth 4 or more, topped up two requests at a time: one send, and one wake-up
            # of the daemon's thread, per two answers, and still two or more queued behind
            # the answer being read. Shallower pipelines are topped up at once.
            out = []
            if not inflight or depth - len(inflight) >= (2 if depth >= 4 else 1):
                while more and len(inflight) < depth and sent < self._SNDBUF // 2:
                    req = next(requests, None)
                    if req is None:
                        more = False
                        break
                    out.append(req)
                    inflight.append(req)
                    sent += len(req)
            if out:
                self._send(out[0] if len(out) == 1 else b"".join(out))
            if not inflight:
                return
            try:
                status, close, body = self._answer(alloc)
            except _Dropped as ex:
                if retried:  # dropped twice for the same answer: the daemon is not serving
                    raise LancedError("unavailable", "lanced at %s closed the connection: %s"
                                      % (self.url, ex)) from None
                retried = True
                self._resend(inflight)
                continue
            retried = False
            sent -= len(inflight.popleft())
            if status != 200:
                self.close()  # the rest of the pipeline is dropped with the error
                raise _error_answer(status, body)
            if close:  # the daemon closes after this answer: the rest go on a new connection
                self._resend(inflight)
            yield body

    def _resend(self, inflight):
        """A new connection, and the unanswered requests sent on it again."""
        self._open()
        for req in inflight:
            self._send(req)

    def _send(self, req):
        try:
            self.sock.sendall(req)
        except OSError:
            pass  # the connection is gone: the answer's read says so, and the request is resent

    def _read(self, op, arg, where=""):
        """op(arg) (the socket's recv or recv_into), its failures said as the pipeline's: no
        answer within the timeout is unavailable; a reset or the end of the stream drops the
        connection (run sends the unanswered requests again)."""
        try:
            got = op(arg)
        except socket.timeout:
            self.close()
            raise LancedError("unavailable", "lanced at %s sent no answer within %g s"
                              % (self.url, self.timeout)) from None
        except ConnectionError as ex:
            raise _Dropped(str(ex) or type(ex).__name__) from None
        if not got:
            raise _Dropped("closed by the daemon" + where)
        return got

    def _answer(self, alloc):
        """(status, whether the daemon closes after it, body) of the next answer."""
        left = self.left
        end = left.find(b"\r\n\r\n")
        while end < 0:
            if len(left) > self._HEAD_MAX:
                raise LancedError("bad_answer", "an answer head over %d bytes" % self._HEAD_MAX)
            left += self._read(self.sock.recv, 16 << 10)
            end = left.find(b"\r\n\r\n")
        lines = bytes(left[:end]).decode("latin-1").split("\r\n")
        del left[:end + 4]
        parts = lines[0].split(" ", 2)
        if len(parts) < 2 or not parts[0].startswith("HTTP/1.") or not parts[1].isdigit():
            raise LancedError("bad_answer", "not an HTTP answer: %r" % lines[0][:100])
        status, fields = int(parts[1]), {}
        for line in lines[1:]:
            k, _, v = line.partition(":")
            fields[k.strip().lower()] = v.strip()
        close = fields.get("connection", "").lower() == "close" or parts[0] == "HTTP/1.0"
        if "content-length" not in fields or not fields["content-length"].isdigit():
            # lanced sends every answer with its length; anything else ends the pipeline
            raise LancedError("bad_answer", "an answer without a Content-Length (status %d)" % status)
        n = int(fields["content-length"])
        body = alloc(n) if alloc and status == 200 else bytearray(n)
        mv = memoryview(body)
        got = min(n, len(left))
        mv[:got] = left[:got]
        del left[:got]
        lowat = 1
        while got < n:
            want = min(n - got, self._LOWAT_MAX) if n - got >= self._LOWAT_MIN else 1
            if want != lowat:
                self._lowat(want)
                lowat = want
            got += self._read(self.sock.recv_into, mv[got:], " within an answer")
        if lowat != 1:
            self._lowat(1)  # the next answer's head: whatever arrives
        return status, close, body

    def _lowat(self, n):
        try:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVLOWAT, n)
        except OSError:
            pass  # the connection is gone: the next read says so


class _Dropped(Exception):
    """The connection ended before an answer was whole."""


class Client:
    """Client(url): a lanced daemon at url ("http://127.0.0.1:8080"). One keep-alive
    connection per thread and per process: after fork (a DataLoader worker) the child opens
    its own, so a Client may be shared by threads, forked workers and pickled to spawned ones."""

    def __init__(self, url, timeout=60.0):
        u = urllib.parse.urlsplit(url)
        if u.scheme != "http" or not u.hostname:
            raise ValueError("lanced: want a URL like http://127.0.0.1:8080, got %r" % url)
        self.url, self.timeout = url, timeout
        self._host, self._port = u.hostname, u.port or 80
        self._local = threading.local()
        self._types = {}  # (path, version) -> {column: Arrow type}, from describe

    def __getstate__(self):
        return {"url": self.url, "timeout": self.timeout}

    def __setstate__(self, state):
        self.__init__(state["url"], state["timeout"])

    def _conn(self):
        loc = self._local
        if getattr(loc, "pid", None) != os.getpid():  # new thread, or the child of a fork
            loc.pid = os.getpid()
            loc.conn = http.client.HTTPConnection(self._host, self._port, timeout=self.timeout)
        return loc.conn

    def _call(self, method, msg, reply):
        headers = {"Content-Type": "application/proto", "Connect-Protocol-Version": "1"}
        data = self._post("/lanced.v1.RowService/" + method, msg.SerializeToString(), headers)
        out = reply()
        out.ParseFromString(data)
        return out

    def _post(self, target, body, headers, alloc=None):
        for attempt in (0, 1):
            conn = self._conn()
            try:
                conn.request("POST", target, body, headers)
                resp = conn.getresponse()
                data = _read_body(resp, alloc)
                break
            except (http.client.HTTPException, ConnectionError, OSError) as ex:
                conn.close()
                # A keep-alive connection the daemon closed meanwhile: retry once on a new
                # one (Take and GetFile are reads, safe to repeat).
                if attempt or isinstance(ex, (ConnectionRefusedError, TimeoutError)):
                    raise LancedError("unavailable", "cannot reach lanced at %s: %s"
                                      % (self.url, ex)) from ex
        if resp.status != 200:
            raise _error_answer(resp.status, data)
        return data

    def take_arrays(self, path, ids=None, columns=None, version=None, buffer=None, row_ids=None):
        """Rows ids of the file or dataset at path -> {column name: array}, as take does, but
        every column an array over the answer's bytes (one Arrow IPC answer, no Python object
        per value; docs in clients/python/README.md): numbers, bools and temporals a numpy
        array (masked where null), fixed-size lists an (n, k, ...) array, strings, binaries
        and lists of numbers a lanced.Ragged (values + offsets, per-row views on demand).
        Columns of other types (structs, maps, decimals, dictionaries) come as take gives
        them. buffer: a callable n -> a writable buffer of n bytes to read the answer into
        (lanced.torch passes shared memory there, so a DataLoader worker's batch reaches the
        main process without a copy). row_ids instead of ids: Lance row ids, as in take."""
        ids = _pick_ids(ids, row_ids)
        types = self._column_types(path, version)
        names = list(columns) if columns else list(types)
        other = [c for c in names if c in types and not _arrays_carry(types[c])]
        mine = [c for c in names if c not in other]
        out = self._take_arrow(path, ids, mine, version, buffer) if mine else {}
        if other:
            out.update(self.take(path, ids, other, version))
        return {c: out[c] for c in names}

    def take_arrays_iter(self, path, batches, columns=None, version=None, buffer=None, depth=4,
                         row_ids=False):
        """take_arrays for each id list of the iterable batches, yielded in order, with up to
        depth requests in flight on one keep-alive connection (HTTP/1.1 pipelining): the
        daemon works on the next batch while this thread reads the last, and no thread pool or
        lock is involved. buffer: as for take_arrays, called once per answer as its head
        arrives (again for the same answer if a dropped connection made it ask again).
        row_ids=True: the lists are Lance row ids. An error answer raises LancedError for its
        batch (the batches before it have been yielded); a connection the daemon closed is
        reopened and the unanswered requests sent again, once."""
        if depth < 1:
            raise ValueError("depth must be at least 1")
        types = self._column_types(path, version)
        names = list(columns) if columns else list(types)
        if any(c in types and not _arrays_carry(types[c]) for c in names):
            # Some columns only take carries: one request (or two) per batch, in turn.
            for ids in batches:
                yield self.take_arrays(path, None if row_ids else ids, names, version, buffer,
                                       ids if row_ids else None)
            return
        head = ("POST %s HTTP/1.1\r\nHost: %s:%d\r\nContent-Type: application/json\r\n"
                "Accept: application/vnd.apache.arrow.stream\r\nContent-Length: "
                % (_rows_target(path), self._host, self._port)).encode()
        # This thread's pipeline connection, kept between calls (a DataLoader worker's epochs)
        # when the last one ended with every request answered.
        loc = self._local
        # A run left suspended with requests in flight (an iteration not finished, or
        # lanced.torch's next epoch asked ahead) keeps that connection: this one gets its own.
        pipe = getattr(loc, "pipe", None)
        if pipe is None or loc.pipe_pid != os.getpid():
            pipe = loc.pipe = _Pipeline(self._host, self._port, self.timeout, self.url)
            loc.pipe_pid = os.getpid()
        elif pipe.busy:
            pipe = _Pipeline(self._host, self._port, self.timeout, self.url)
        for data in pipe.run(self._request_bodies(batches, names, version, row_ids, head),
                             depth, buffer):
            try:
                cols = read_stream(data)
            except ArrowError as ex:
                pipe.close()
                raise LancedError("bad_answer", str(ex)) from ex
            yield cols

    @staticmethod
    def _request_bodies(batches, columns, version, row_ids, head):
        """Each batch's whole request (ids checked first, as take_arrays checks them)."""
        for ids in batches:
            ids = _pick_ids(None, ids) if row_ids else _pick_ids(ids, None)
            body = _rows_body(ids, columns, version)
            yield head + b"%d\r\n\r\n" % len(body) + body

    def _take_arrow(self, path, ids, columns, version, alloc=None):
        data = self._post(_rows_target(path), _rows_body(ids, columns, version), {
            "Content-Type": "application/json", "Accept": "application/vnd.apache.arrow.stream"}, alloc)
        try:
            return read_stream(data)
        except ArrowError as ex:
            raise LancedError("bad_answer", str(ex)) from ex

    def take(self, path, ids=None, columns=None, version=None, row_ids=None):
        """Rows ids (any order, duplicates allowed) of the file or dataset at path (relative to
        the daemon's root) -> {column name: numpy array with one entry per id}. version pins a
        dataset version: a number, or a tag's name (LanceDB tags), as Lance's checkout takes
        it. Nulls: numeric,
        bool, temporal and tensor columns come back as numpy masked arrays; strings, binaries,
        decimals (decimal.Decimal) and lists are object arrays with None for a null.
        row_ids instead of ids: Lance row ids (what LanceDB's withRowId() returns; a dataset's
        row addresses, a data file's offsets); columns may name "_rowid" and "_rowaddr"."""
        ids = _pick_ids(ids, row_ids)
        types = self._column_types(path, version)
        names = list(columns) if columns else list(types)
        nested = [c for c in names if c in types and not _proto_carries(types[c])]
        out = {}
        if len(nested) < len(names):
            try:
                out = self._take_proto(path, ids, [c for c in names if c not in nested], version)
            except LancedError as ex:
                # Strings holding U+0000 are refused by the protobuf format (the daemon packs
                # strings as C strings): the string columns then come as JSON rows.
                strs = [c for c in names if c not in nested and types.get(c) in ("utf8", "large_utf8")]
                if ex.code != "unimplemented" or not strs:
                    raise
                nested += strs
                rest = [c for c in names if c not in nested]
                out = self._take_proto(path, ids, rest, version) if rest else {}
        if nested:
            out.update(self._take_json(path, ids, nested, version))
        return {c: out[c] for c in names}

    def _take_proto(self, path, ids, columns, version):
        req = pb.TakeRequest(path=path, format=pb.FORMAT_PROTO, columns=columns, **{_ids_key(ids): ids},
                             **_pin(version))
        res = self._call("Take", req, pb.TakeResponse)
        return {c.name: _column(c, res.num_rows) for c in res.columns}

    def _column_types(self, path, version):
        key = (path, version or 0)
        if key not in self._types:
            self._types[key] = {f["name"]: f["type"] for f in self.describe(path, version)["fields"]}
        return self._types[key]

    def _take_json(self, path, ids, columns, version):
        """Structs, maps and lists of non-numbers, which only JSON rows carry: object arrays
        of the JSON-rows values (docs/json-rows.md: dicts, lists, strings for dates...)."""
        data = self._post(_rows_target(path, "?format=json"), _rows_body(ids, columns, version),
                          {"Content-Type": "application/json"})
        rows = json.loads(data)["rows"]
        types = self._column_types(path, version)
        return {c: _objects(decimal.Decimal(r[c]) if r[c] is not None and
                            types[c].startswith("decimal") else r[c] for r in rows)
                for c in columns}

    def describe(self, path, version=None):
        """Version, row count and schema of the file or dataset at path, as a dict:
        {"path", "version", "num_rows", "fields": [{"name", "type", "nullable", "children"}]},
        and for a dataset "dataset_version", the version described ("version" is the file
        format)."""
        res = self._call("GetFile", pb.GetFileRequest(path=path, **_pin(version)), pb.FileInfo)

        def field(f):
            return {"name": f.name, "type": f.type, "nullable": f.nullable,
                    "children": [field(c) for c in f.children]}
        out = {"path": res.path, "version": res.version, "num_rows": res.num_rows,
               "fields": [field(f) for f in res.fields]}
        # A dataset's description says which version was read (a tag resolved, the latest).
        described = json.loads(res.describe_json) if res.describe_json else {}
        if isinstance(described.get("version"), int):
            out["dataset_version"] = described["version"]
        return out
