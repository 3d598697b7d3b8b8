"""lanced.Client against a real lanced serving the fixtures: every value equal to Lance's own
answer (tests/fixtures/*/*.answers, written by the real Lance reader), request order and
duplicates, versions, errors."""
import base64
import decimal
import glob
import json
import os
import re

import numpy as np
import pytest

import lanced
from conftest import FIXTURES

NUMPY = {"int8": np.int8, "int16": np.int16, "int32": np.int32, "int64": np.int64,
         "uint8": np.uint8, "uint16": np.uint16, "uint32": np.uint32, "uint64": np.uint64,
         "float16": np.float16, "float32": np.float32, "float64": np.float64, "bool": np.bool_}


def _lance_differs():
    """Columns where Lance answers something else than the bytes (blob descriptors); the
    client asks for the bytes, so those are not compared (tests/fixtures/README.md)."""
    with open(os.path.join(FIXTURES, "index.json")) as f:
        return {x["name"]: set(x.get("lance_differs", [])) for x in json.load(f)["fixtures"]}


DIFFERS = _lance_differs()


def _cases():
    for f in sorted(glob.glob(os.path.join(FIXTURES, "data", "*.answers")) +
                    glob.glob(os.path.join(FIXTURES, "datasets", "*.answers"))):
        rel = os.path.relpath(f, FIXTURES)[:-len(".answers")]
        path = rel + ".lance" if rel.startswith("datasets") else rel
        with open(f) as fh:
            for n, line in enumerate(fh):
                ids, second, body = line.rstrip("\n").split("\t")
                # data/: the columns asked; datasets/: the version (0 = latest)
                sel = json.loads(second)
                cols, ver = (None, sel or None) if rel.startswith("datasets") else (sel, None)
                yield pytest.param(path, json.loads(ids), cols, ver, body, id="%s:%d" % (rel, n + 1))


def _expected_time(s, t):
    """A JSON-rows temporal value (docs/json-rows.md) -> the numpy value the client returns."""
    if t.startswith("duration"):
        return np.timedelta64(int(s), t[9:].split("]")[0])
    if t.startswith(("time32", "time64")):
        unit = re.search(r"\[(\w+)", t).group(1)
        h, m, sec = s.split(":")
        whole, _, frac = sec.partition(".")
        per = {"s": 1, "ms": 10**3, "us": 10**6, "ns": 10**9}[unit]
        count = ((int(h) * 60 + int(m)) * 60 + int(whole)) * per + (int(frac) if frac else 0)
        return np.timedelta64(count, unit)
    unit = "D" if t == "date32" else "ms" if t == "date64" else re.search(r"\[(\w+)", t).group(1)
    m = re.match(r"(.*)([+-])(\d\d):(\d\d)$", s)
    if m and "T" in s:  # a fixed offset: local time, then the offset
        shift = np.timedelta64(int(m.group(3)) * 60 + int(m.group(4)), "m")
        local = np.datetime64(m.group(1), unit)
        return local - shift if m.group(2) == "+" else local + shift
    return np.datetime64(s.rstrip("Z"), unit)


def _leaf(t):
    return re.sub(r"^(large_)?(list|fixed_size_list)<|>(\[\d+\])?$", "", t) if "list<" in t else t


def _same_float(got, exp, dtype):
    if exp == "NaN":
        return np.isnan(got)
    if exp in ("Infinity", "-Infinity"):
        return got == (np.inf if exp == "Infinity" else -np.inf)
    want = dtype(exp)
    return got == want and np.signbit(got) == np.signbit(want)


def _check_nested(got, exp, leaf, where):
    """A tensor row (k, *shape) against nested JSON lists; a null item is all masked."""
    if exp is None:
        assert np.ma.getmaskarray(got).all(), where
    elif isinstance(exp, list):
        assert got.ndim >= 1 and len(got) == len(exp), where
        for g, e in zip(got, exp):
            _check_nested(np.ma.asarray(g), e, leaf, where)
    else:
        _check(got[()], exp, leaf, where)


def _check(got, exp, t, where):
    """got: one row of a client column; exp: Lance's JSON-rows value; t: the Arrow type."""
    if exp is None:
        assert got is None or got is np.ma.masked or (
            isinstance(got, np.ma.MaskedArray) and got.mask.all()), where
        return
    assert got is not None and got is not np.ma.masked, where
    if "list<" in t and isinstance(got, np.ndarray):  # a tensor row
        leaf = NUMPY[re.sub(r"[^a-z0-9].*", "", t.split("<")[-1])]
        _check_nested(np.ma.asarray(got), exp, leaf.__name__, where)
        return
    if t.startswith(("struct<", "map<", "list<", "large_list<", "fixed_size_list<")):
        assert got == exp, where  # carried as JSON rows: the same JSON values
    elif t.startswith("decimal"):
        assert isinstance(got, decimal.Decimal) and str(got) == exp, where
    elif t.startswith(("date", "time", "duration")):
        assert got == _expected_time(exp, t), where
    elif "binary" in t:
        assert base64.b64encode(got).decode() == exp, where
    elif t.startswith("float"):
        assert _same_float(got, exp, NUMPY[t]), (where, got, exp)
    elif t in NUMPY:
        assert int(got) == exp, where
    else:
        assert got == exp, where


@pytest.fixture(scope="module")
def client(daemon):
    return lanced.Client(daemon)


@pytest.mark.parametrize("path,ids,columns,version,body", list(_cases()))
def test_values_equal_lance_answers(client, path, ids, columns, version, body):
    # "-0" is a float's negative zero; Python's json would read it as the integer 0
    want = json.loads(body, parse_int=lambda s: -0.0 if s == "-0" else int(s))
    got = client.take(path, ids, columns, version)
    assert list(got) == want["columns"]
    types = {f["name"]: f["type"] for f in client.describe(path, version)["fields"]}
    skip = DIFFERS.get(os.path.basename(path), set())
    for c in want["columns"]:
        if c in skip:
            continue
        assert len(got[c]) == len(ids)
        for i, row in enumerate(want["rows"]):
            _check(got[c][i], row[c], types[c], "%s[%d] (id %d)" % (c, i, ids[i]))


@pytest.mark.parametrize("path,ids,columns,version,body", list(_cases()))
def test_arrays_equal_lance_answers(client, path, ids, columns, version, body):
    """take_arrays (one Arrow answer read into numpy, lanced/arrow.py): every value equal to
    Lance's, nulls included; the columns it reads as arrays are arrays or Ragged, not object
    arrays."""
    want = json.loads(body, parse_int=lambda s: -0.0 if s == "-0" else int(s))
    got = client.take_arrays(path, ids, columns, version)
    assert list(got) == want["columns"]
    types = {f["name"]: f["type"] for f in client.describe(path, version)["fields"]}
    skip = DIFFERS.get(os.path.basename(path), set())
    for c in want["columns"]:
        if lanced.client._arrays_carry(types[c]):
            assert isinstance(got[c], lanced.Ragged) or got[c].dtype != object, (c, types[c])
        if c in skip:
            continue
        assert len(got[c]) == len(ids)
        for i, row in enumerate(want["rows"]):
            _check(got[c][i], row[c], types[c], "%s[%d] (id %d)" % (c, i, ids[i]))


def test_arrays_are_views_of_one_answer(client):
    r = client.take_arrays("data/emb21", [3, 1, 3], ["emb", "id"])
    assert r["emb"].shape[0] == 3 and r["emb"].base is not None  # no copy of the answer
    assert np.array_equal(r["emb"][0], r["emb"][2])


def test_tensor_is_one_array(client):
    r = client.take("data/emb21", [3, 1, 3], ["emb", "id"])
    emb = r["emb"]
    assert type(emb) is np.ndarray and emb.dtype == np.float32 and emb.shape == (3, 128)
    assert list(r["id"]) == [3, 1, 3]
    assert np.array_equal(emb[0], emb[2]) and not np.array_equal(emb[0], emb[1])


def test_nested_fixed_size_list_shape(client):
    # list<fixed_size_list<float32>[2]>: each row is a (k, 2) array
    r = client.take("data/nested21", [0], ["lfsl"])["lfsl"]
    assert r[0].shape == (2, 2) and r[0].dtype == np.float32


def test_unknown_column(client):
    with pytest.raises(lanced.LancedError) as ex:
        client.take("data/emb21", [0], ["nope"])
    assert ex.value.code in ("invalid_argument", "not_found") and "nope" in ex.value.message


def test_id_out_of_range(client):
    # take (Connect's error shape) and take_arrays (the REST route's) alike
    for take in (client.take, client.take_arrays):
        with pytest.raises(lanced.LancedError) as ex:
            take("data/emb21", [0, 500], ["id"])
        assert ex.value.code == "out_of_range" and ex.value.status == 400
        assert "500" in ex.value.message


@pytest.mark.parametrize("bad", [-1, 1.5, 2.0, True, "3", 2 ** 64])
def test_bad_id_refused_before_any_request(client, bad):
    """A negative id raised protobuf's own ValueError, a float 1.5 was read as row 1: each is
    the client's ValueError naming the id and where it is, and nothing is sent."""
    before = client.describe("data/emb21")  # the connection exists; no request follows below
    with pytest.raises(ValueError) as ex:
        client.take("data/emb21", [0, bad], ["id"])
    assert repr(bad) in str(ex.value) or str(bad) in str(ex.value)
    assert "position 1" in str(ex.value)
    assert before["num_rows"] == client.describe("data/emb21")["num_rows"]


def test_numpy_and_tensor_ids_accepted(client):
    want = client.take("data/emb21", [3, 1], ["id"])["id"]
    assert (client.take("data/emb21", np.array([3, 1], dtype=np.int64), ["id"])["id"] == want).all()
    assert (client.take("data/emb21", [np.uint32(3), np.int8(1)], ["id"])["id"] == want).all()


def test_limit_error_code_is_documented(client):
    """The code a request over max_ids_per_request gets is the one the README names."""
    with pytest.raises(lanced.LancedError) as ex:
        client.take("data/emb21", [0] * 200000, ["id"])
    assert ex.value.code == "resource_exhausted"
    readme = open(os.path.join(os.path.dirname(__file__), "..", "README.md")).read()
    assert "`resource_exhausted`" in readme and "limit_exceeded" not in readme


def test_describe_dataset_version_documented(client):
    d = client.describe("datasets/tags_v22.lance")
    assert isinstance(d["dataset_version"], int)
    readme = open(os.path.join(os.path.dirname(__file__), "..", "README.md")).read()
    assert '"dataset_version"' in readme


def test_version_by_tag(client):
    """A LanceDB tag's name pins the version it names, as Lance's checkout(tag) does: the same
    rows and description as that version's number (tags_v22.tags is Lance's own list)."""
    path = "datasets/tags_v22.lance"
    with open(os.path.join(FIXTURES, "datasets", "tags_v22.tags")) as f:
        tags = [line.rstrip("\n").split("\t") for line in f if line.strip()]
    assert len(tags) >= 3
    for tag, version in tags:
        ids = [0, 1, 150]
        by_tag, by_number = client.take(path, ids, ["id", "s"], tag), client.take(path, ids, ["id", "s"], int(version))
        assert all((by_tag[c] == by_number[c]).all() for c in ("id", "s")), tag
        assert client.describe(path, tag)["num_rows"] == client.describe(path, int(version))["num_rows"]
    with pytest.raises(lanced.LancedError) as ex:
        client.take(path, [0], ["id"], "no-such-tag")
    assert ex.value.code == "not_found" and "no-such-tag" in ex.value.message


def test_unknown_path(client):
    with pytest.raises(lanced.LancedError) as ex:
        client.describe("data/none")
    assert ex.value.code == "not_found" and ex.value.status == 404


def test_daemon_down():
    import socket
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nobody listens there now
    with pytest.raises(lanced.LancedError) as ex:
        lanced.Client("http://127.0.0.1:%d" % port).take("data/emb21", [0])
    assert ex.value.code == "unavailable"


def test_connection_reused(client):
    client.take("data/emb21", [0], ["id"])
    conn = client._local.conn
    client.take("data/emb21", [1], ["id"])
    assert client._local.conn is conn and conn.sock is not None


def test_fork_gets_own_connection(client):
    client.take("data/emb21", [0], ["id"])
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child must not share the parent's socket
        try:
            ok = client.take("data/emb21", [7], ["id"])["id"][0] == 7 and \
                client._local.pid == os.getpid()
        except Exception:
            ok = False
        os.write(w, b"1" if ok else b"0")
        os._exit(0)
    os.waitpid(pid, 0)
    assert os.read(r, 1) == b"1"
    assert client.take("data/emb21", [9], ["id"])["id"][0] == 9


def test_connect_json_flavour_carries_the_same_tensor(client, daemon):
    """The Connect API's JSON flavour: the same Tensor message, bytes as base64."""
    import urllib.request
    body = json.dumps({"path": "data/nested21", "ids": ["3", "0", "3"],
                       "columns": ["fsln", "lfsl"], "format": "FORMAT_PROTO"}).encode()
    req = urllib.request.Request(daemon + "/lanced.v1.RowService/Take", body,
                                 {"Content-Type": "application/json"})
    res = json.loads(urllib.request.urlopen(req).read())
    got = client.take("data/nested21", [3, 0, 3], ["fsln", "lfsl"])
    fsln, lfsl = (c["tensor"] for c in res["columns"])
    assert fsln["dtype"] == "int32" and fsln["shape"] == ["3"]
    values = np.frombuffer(base64.b64decode(fsln["data"]), "<i4").reshape(3, 3)
    valid = np.frombuffer(base64.b64decode(fsln.get("itemValidity", "")), np.uint8)
    assert np.array_equal(values[valid.reshape(3, 3) == 1] if len(valid) else values,
                          np.ma.asarray(got["fsln"]).compressed() if len(valid) else got["fsln"])
    offs = [int(x) for x in lfsl["offsets"]]
    assert len(offs) == 4 and lfsl["shape"] == ["2"]
    flat = np.frombuffer(base64.b64decode(lfsl["data"]), "<f4").reshape(-1, 2)
    for r in range(3):
        assert np.array_equal(flat[offs[r]:offs[r + 1]], np.ma.asarray(got["lfsl"][r]))


def test_threads_share_a_client(client):
    import concurrent.futures
    ids = list(range(0, 500, 7))

    def one(i):
        return i, client.take("data/emb21", [i, 499 - i], ["id"])["id"].tolist()
    with concurrent.futures.ThreadPoolExecutor(4) as ex:
        for i, got in ex.map(one, ids):
            assert got == [i, 499 - i]


def test_arrow_reader_refuses_damaged_answers(daemon):
    """lanced/arrow.py on every truncation and on seeded byte flips of real answers (numbers,
    strings, lists, nulls): a value or ArrowError, never another exception or a read past
    the bytes (numpy would raise on one)."""
    import random
    import urllib.request
    from lanced.arrow import ArrowError, read_stream
    for path, cols in (("data/core21", "i32_n,s_n,bin_n,l_n,f64"), ("data/emb21", "emb,id")):
        req = urllib.request.Request("%s/files/%s/rows?ids=3,1,4&columns=%s" % (daemon, path, cols),
                                     headers={"Accept": "application/vnd.apache.arrow.stream"})
        data = urllib.request.urlopen(req).read()
        assert set(read_stream(data)) == set(cols.split(","))
        rng = random.Random(7)
        cases = [data[:k] for k in range(0, len(data), 3)]
        for _ in range(400):
            b = bytearray(data)
            for _ in range(rng.randint(1, 4)):
                b[rng.randrange(len(b))] = rng.randrange(256)
            cases.append(bytes(b))
        for c in cases:
            try:
                out = read_stream(c)
            except ArrowError:
                continue
            for v in out.values():  # what it returned is readable
                for i in range(len(v)):
                    try:
                        v[i]
                    except UnicodeDecodeError:  # a flipped byte inside a string's bytes
                        pass


def test_row_ids(client):
    """take and take_arrays by Lance row id (the fixture's .rowaddr: Lance's _rowid of each live
    offset) give the rows of those offsets; _rowid / _rowaddr come back; a deleted row's id is
    not_found; ids and row_ids together, or neither, is refused before any request."""
    path = "datasets/deletions_v22.lance"
    with open(os.path.join(FIXTURES, "datasets", "deletions_v22.rowaddr")) as f:
        addrs = json.loads(f.readline().split("\t")[2])
    offs = [5, 0, 1000, 5]
    rids = [addrs[o] for o in offs]
    for take in (client.take, client.take_arrays):
        by_off = take(path, offs, ["id", "s"])
        by_rid = take(path, row_ids=rids, columns=["id", "_rowid", "s", "_rowaddr"])
        assert list(by_rid) == ["id", "_rowid", "s", "_rowaddr"]
        assert list(by_rid["id"]) == list(by_off["id"])
        assert [by_rid["s"][i] for i in range(4)] == [by_off["s"][i] for i in range(4)]
        assert [int(x) for x in by_rid["_rowid"]] == rids == [int(x) for x in by_rid["_rowaddr"]]
    with pytest.raises(lanced.LancedError) as ex:
        client.take(path, row_ids=[3])
    assert ex.value.code == "not_found" and "deleted" in ex.value.message
    for bad in ({"ids": [1], "row_ids": [1]}, {}):
        with pytest.raises(ValueError):
            client.take(path, **bad)


# ---- take_arrays_iter: requests pipelined on one connection ---------------------------------
import socket  # noqa: E402
import threading  # noqa: E402
import urllib.parse  # noqa: E402


def _same_arrays(got, want, where):
    assert list(got) == list(want), where
    for c, w in want.items():
        g = got[c]
        if isinstance(w, lanced.Ragged):
            assert isinstance(g, lanced.Ragged), (where, c)
            assert np.array_equal(g.offsets, w.offsets), (where, c)
            assert all(np.array_equal(a, b) if isinstance(b, np.ndarray) else a == b
                       for a, b in zip(g.rows(), w.rows())), (where, c)
        elif isinstance(w, np.ma.MaskedArray):
            assert np.array_equal(np.ma.getmaskarray(g), np.ma.getmaskarray(w)), (where, c)
            assert np.array_equal(np.ma.filled(g, 0), np.ma.filled(w, 0),
                                  equal_nan=w.dtype.kind == "f"), (where, c)
        elif isinstance(w, np.ndarray) and w.dtype != object:
            assert np.array_equal(g, w, equal_nan=w.dtype.kind == "f"), (where, c)
        else:
            assert [repr(x) for x in g] == [repr(x) for x in w], (where, c)


@pytest.mark.parametrize("path", ["data/types21", "data/lists21", "data/emb21", "datasets/deletions_v22.lance"])
@pytest.mark.parametrize("depth", [1, 3, 8])
def test_pipelined_batches_equal_take_arrays(client, path, depth):
    """Every batch of a pipelined run equals take_arrays of the same ids, in order, whatever
    the depth (more batches than the depth, batches of different sizes, a repeated id)."""
    n = client.describe(path)["num_rows"]
    rng = np.random.default_rng(depth)
    batches = [rng.integers(0, n, size).tolist() for size in (1, 7, 40, 3, 97, 1, 12, 5, 64, 2)]
    batches[3] = [batches[3][0]] * 3
    got = list(client.take_arrays_iter(path, batches, depth=depth))
    assert len(got) == len(batches)
    for k, (b, g) in enumerate(zip(batches, got)):
        _same_arrays(g, client.take_arrays(path, b), "%s batch %d" % (path, k))


def test_pipelined_row_ids_and_buffer(client):
    """row_ids=True sends Lance row ids; buffer= is called once per answer with its size."""
    path = "datasets/deletions_v22.lance"
    with open(os.path.join(FIXTURES, "datasets", "deletions_v22.rowaddr")) as f:
        addrs = json.loads(f.readline().split("\t")[2])
    sizes = []

    def alloc(n):
        sizes.append(n)
        return bytearray(n)
    offs = [[5, 0], [1000], [3, 4, 5]]
    got = list(client.take_arrays_iter(path, [[addrs[o] for o in b] for b in offs], ["id"],
                                       buffer=alloc, depth=2, row_ids=True))
    assert [list(g["id"]) for g in got] == [list(client.take_arrays(path, b, ["id"])["id"]) for b in offs]
    assert len(sizes) == 3 and all(s > 0 for s in sizes)


def test_pipelined_error_ends_at_its_batch(client):
    """An error answer raises LancedError for its batch, after the batches before it; the
    connection is dropped with the pipeline, and the next run answers normally."""
    path = "data/types21"
    n = client.describe(path)["num_rows"]
    batches = [[0, 1], [2], [n + 5], [3]]
    it = client.take_arrays_iter(path, batches, ["i64"], depth=4)
    assert list(next(it)["i64"]) == list(client.take_arrays(path, [0, 1], ["i64"])["i64"])
    next(it)
    with pytest.raises(lanced.LancedError) as ex:
        next(it)
    assert ex.value.code == "out_of_range" and ex.value.status == 400
    again = list(client.take_arrays_iter(path, [[3], [4]], ["i64"], depth=2))
    assert [list(g["i64"]) for g in again] == [list(client.take_arrays(path, [i], ["i64"])["i64"]) for i in (3, 4)]


def test_pipelines_interleaved_on_one_thread(client):
    """A run left suspended with requests in flight keeps its connection: a second run on the
    same thread meanwhile gets one of its own, and each reads its own answers (before, both
    shared the thread's connection and read each other's)."""
    path = "data/types21"
    want = {i: list(client.take_arrays(path, [i], ["i64"])["i64"]) for i in range(8)}
    first = client.take_arrays_iter(path, [[0], [1], [2], [3]], ["i64"], depth=4)
    assert list(next(first)["i64"]) == want[0]  # three more in flight on its connection
    second = [list(g["i64"]) for g in client.take_arrays_iter(path, [[4], [5], [6]], ["i64"], depth=2)]
    assert second == [want[4], want[5], want[6]]
    assert [list(g["i64"]) for g in first] == [want[1], want[2], want[3]]


def test_pipelined_ids_checked_before_sending(client):
    with pytest.raises(ValueError):
        list(client.take_arrays_iter("data/types21", [[1], [-1]], ["i64"]))


class _CuttingProxy:
    """A TCP proxy in front of lanced that closes its first `cuts` client connections after
    relaying `after` bytes of answers (mid-answer, or at an answer's end when `after` is
    that many whole answers' bytes): a daemon restart or a keep-alive close, as a pipelined
    client sees it."""

    def __init__(self, upstream, after, cuts=1):
        u = urllib.parse.urlsplit(upstream)
        self.up, self.after, self.cuts = (u.hostname, u.port), after, cuts
        self.srv = socket.create_server(("127.0.0.1", 0))
        self.url = "http://127.0.0.1:%d" % self.srv.getsockname()[1]
        self.connections = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                c, _ = self.srv.accept()
            except OSError:
                return
            self.connections += 1
            limit = self.after if self.connections <= self.cuts else None
            threading.Thread(target=self._serve, args=(c, limit), daemon=True).start()

    def _serve(self, c, limit):
        u = socket.create_connection(self.up)
        threading.Thread(target=self._pump, args=(c, u, None), daemon=True).start()
        self._pump(u, c, limit)
        c.close()
        u.close()

    @staticmethod
    def _pump(src, dst, limit):
        relayed = 0
        try:
            while limit is None or relayed < limit:
                b = src.recv(65536 if limit is None else min(65536, limit - relayed))
                if not b:
                    break
                dst.sendall(b)
                relayed += len(b)
            if limit is not None:
                dst.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def close(self):
        self.srv.close()


def _answer_bytes(client, path, ids, columns):
    """The whole HTTP answer (head and body) lanced gives a pipelined client for ids."""
    body = json.dumps({"ids": ids, "columns": columns}).encode()
    u = urllib.parse.urlsplit(client.url)
    with socket.create_connection((u.hostname, u.port)) as s:
        s.sendall(b"POST /files/%s/rows HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                  b"Accept: application/vnd.apache.arrow.stream\r\nConnection: close\r\n"
                  b"Content-Length: %d\r\n\r\n%s" % (path.encode(), len(body), body))
        out = b""
        while True:
            b = s.recv(65536)
            if not b:
                return out
            out += b


@pytest.mark.parametrize("where", ["mid-answer", "between answers"])
def test_pipelined_connection_dropped_is_resent(daemon, where):
    """The daemon's connection closing under a pipeline (mid-answer, or after whole answers)
    loses nothing: a new connection is opened and the unanswered requests sent again, so every
    batch comes once, in order, equal to take_arrays."""
    client = lanced.Client(daemon)
    path, cols = "data/emb21", ["id", "emb"]
    batches = [[i, i + 1, i + 2] for i in range(0, 30, 3)]
    one = len(_answer_bytes(client, path, batches[0], cols)) - len(b"Connection: close\r\n")
    after = one * 2 + (one // 2 if where == "mid-answer" else 0)
    proxy = _CuttingProxy(daemon, after)
    try:
        pc = lanced.Client(proxy.url)
        pc._types = client._types  # described already (describe's own request is not cut)
        client.describe(path)
        pc._types = dict(client._types)
        got = list(pc.take_arrays_iter(path, batches, cols, depth=4))
        assert proxy.connections == 2
    finally:
        proxy.close()
    assert len(got) == len(batches)
    for k, (b, g) in enumerate(zip(batches, got)):
        _same_arrays(g, client.take_arrays(path, b, cols), "batch %d" % k)


def test_pipelined_daemon_gone_is_unavailable():
    s = socket.create_server(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    c = lanced.Client("http://127.0.0.1:%d" % port)
    c._types[("data/emb21", 0)] = {"id": "int32"}
    with pytest.raises(lanced.LancedError) as ex:
        list(c.take_arrays_iter("data/emb21", [[1]], ["id"]))
    assert ex.value.code == "unavailable"
