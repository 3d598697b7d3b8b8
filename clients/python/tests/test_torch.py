"""lanced.torch.LancedDataset through DataLoader with worker processes: every row of a
small dataset exactly once, values equal to the client's (which test_client checks against
Lance's answers)."""
import collections

import numpy as np
import pytest

try:
    import torch
    import torch.utils.data
except ImportError as ex:  # pragma: no cover - make deps installs python3-torch
    pytest.skip("torch is not installed (Debian python3-torch): %s" % ex, allow_module_level=True)

import lanced
import lanced.torch as lt
from lanced.torch import LancedDataset

PATH, COLS = "data/emb21", ["id", "emb"]


def _check_epoch(batches, client, n):
    seen = collections.Counter()
    for b in batches:
        ids = b["id"].tolist()
        seen.update(ids)
        want = client.take(PATH, ids, ["emb"])["emb"]
        assert b["emb"].dtype == torch.float32 and b["emb"].shape == (len(ids), 128)
        assert np.array_equal(b["emb"].numpy(), want)
    assert sorted(seen) == list(range(n)) and set(seen.values()) == {1}


def test_len_and_item(daemon):
    ds = LancedDataset(daemon, PATH, COLS)
    assert len(ds) == 500
    row = ds[7]
    assert int(row["id"]) == 7 and row["emb"].shape == (128,)


def test_dataloader_two_workers_batched(daemon):
    # torch's automatic batching: __getitems__ serves each batch with one request
    ds = LancedDataset(daemon, PATH, COLS)
    dl = torch.utils.data.DataLoader(ds, batch_size=64, shuffle=True, num_workers=2)
    _check_epoch(dl, lanced.Client(daemon), len(ds))


def test_dataloader_two_workers_batch_sampler(daemon):
    # the collation-free path: each sampler item is a list of indices, one request per batch
    ds = LancedDataset(daemon, PATH, COLS, transform=lambda b: {**b, "emb": b["emb"] * 1})
    dl = torch.utils.data.DataLoader(ds, batch_size=None, num_workers=2,
                                     sampler=ds.batch_sampler(100, shuffle=True))
    _check_epoch(dl, lanced.Client(daemon), len(ds))


def test_one_request_per_batch(daemon, monkeypatch):
    ds = LancedDataset(daemon, PATH, COLS)
    ds.__getitems__([0])  # the describes (length, column types), once per dataset
    calls = []
    real = ds.client._post
    monkeypatch.setattr(ds.client, "_post", lambda *a, **k: calls.append(a) or real(*a, **k))
    rows = ds.__getitems__([3, 1, 2])
    assert len(calls) == 1 and [int(r["id"]) for r in rows] == [3, 1, 2]


def _same_value(got, want, where):
    """A batch's row value (tensor, Ragged row, str, bytes, masked) against take_arrays'."""
    if isinstance(want, np.ma.MaskedArray) or want is np.ma.masked or want is None:
        if want is None or want is np.ma.masked or np.ma.getmaskarray(want).all():
            return  # a null: lanced.torch fills it (0), or keeps None in a Ragged
    if isinstance(got, torch.Tensor):
        got = got.numpy()
    if isinstance(want, np.ndarray):
        w = np.ma.filled(want, 0) if isinstance(want, np.ma.MaskedArray) else want
        assert np.array_equal(np.asarray(got), w, equal_nan=w.dtype.kind == "f"), where
    else:
        assert got == want or (got != got and want != want), where


@pytest.mark.parametrize("path,how", [("data/types21", "loader"), ("data/lists21", "loader"),
                                      ("data/types21", "torch"), ("data/lists21", "spawn")])
def test_batches_two_workers_prefetched_every_type(daemon, path, how):
    """ds.batches(): two DataLoader workers, three requests in flight each, the batches handed
    over in a memfd (lanced.torch._SharedAnswer). Every row once per epoch, in the sampler's
    order; every column (numbers, bools, temporals, strings, binaries, lists, with nulls, and
    the columns take_arrays leaves to take) equal to take_arrays in this process, which
    test_client checks against Lance's answers. how: batches.loader() (queues without feeder
    threads, forked workers), torch's DataLoader as it comes (multiprocessing's queues), or
    loader() with spawned workers."""
    client = lanced.Client(daemon)
    ds = LancedDataset(daemon, path, None)
    n = len(ds)
    batches = ds.batches(97, shuffle=True, prefetch=3, seed=11)
    if how == "torch":
        dl = torch.utils.data.DataLoader(batches, batch_size=None, num_workers=2)
    else:
        dl = batches.loader(num_workers=2, multiprocessing_context=lt.loader_context(
            "spawn" if how == "spawn" else None))
        assert isinstance(dl.multiprocessing_context.Queue(), lt._DirectQueue)
    order = [i for b in batches.sampler._batches() for i in b]
    seen = []
    for b in dl:
        ids = order[len(seen):len(seen) + len(next(iter(b.values())))]
        seen += ids
        want = client.take_arrays(path, ids)
        assert list(b) == list(want)
        for c, w in want.items():
            g = b[c]
            if isinstance(w, lanced.Ragged):
                assert isinstance(g, lanced.Ragged) and isinstance(g.values, torch.Tensor), c
                assert np.array_equal(g.offsets.numpy(), w.offsets)
            for i in range(len(ids)):
                _same_value(g[i], w[i], "%s %s[%d]" % (path, c, i))
    assert sorted(seen) == list(range(n)) and len(seen) == n


def test_version_by_tag(daemon):
    # A tag resolved once, at the first use: the length and every batch come from the
    # version it named then (tags_v22: "first" names version 1, 200 rows).
    ds = LancedDataset(daemon, "datasets/tags_v22.lance", ["id"], version="first")
    assert len(ds) == 200 and ds.version == 1
    assert [int(x) for x in ds[[0, 199]]["id"]] == [0, 199]


# ---- epochs pinned to a version, and distributed shards ------------------------------------
import json  # noqa: E402
import os  # noqa: E402
import shutil  # noqa: E402
import socket  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

from conftest import REPO, _start  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def _write(*args):
    """The real writer (LanceDB from npm) on a table; returns the version it made."""
    out = subprocess.run(["node", os.path.join(HERE, "writer.mjs"), *map(str, args)], cwd=REPO,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return int(out.stdout.strip().splitlines()[-1])


@pytest.fixture()
def live_table():
    """A table of 200 rows (id = 0..199) a LanceDB writer changes while lanced serves it."""
    root = tempfile.mkdtemp(prefix="lanced-live.")
    _write("create", root, "live", 200)
    proc, url = _start(root)
    yield url, root
    proc.terminate()
    proc.wait()
    shutil.rmtree(root, ignore_errors=True)


def test_epoch_stays_on_its_version_while_a_writer_changes_it(live_table):
    """len() counted version 1; a writer then deletes 100 rows and appends 50. Every batch of
    the epoch still reads version 1: index i is id i, all 200 once. (Before, each batch read
    the latest: index 0 became id 100 mid-epoch and the epoch died with out_of_range.)"""
    url, root = live_table
    ds = LancedDataset(url, "live.lance", ["id"])
    sampler = ds.batch_sampler(16, shuffle=True, generator=torch.Generator().manual_seed(5))
    batches = iter(torch.utils.data.DataLoader(ds, batch_size=None, sampler=sampler, num_workers=2))
    first = next(batches)
    _write("delete", root, "live", "id < 100")
    _write("append", root, "live", 1000, 50)
    seen = [int(i) for i in first["id"]] + [int(i) for b in batches for i in b["id"]]
    assert sorted(seen) == list(range(200)) and ds.version == 1
    # "latest" follows the writer: 150 rows now, index 0 is id 100.
    latest = LancedDataset(url, "live.lance", ["id"], version="latest")
    assert len(latest) == 150 and int(latest[0]["id"]) == 100


def test_refresh_each_epoch_moves_to_the_newest_version(live_table):
    url, root = live_table
    ds = LancedDataset(url, "live.lance", ["id"], refresh_each_epoch=True)
    sampler = ds.batch_sampler(64)
    epoch0 = [int(i) for b in torch.utils.data.DataLoader(ds, batch_size=None, sampler=sampler) for i in b["id"]]
    _write("delete", root, "live", "id >= 150")
    epoch1 = [int(i) for b in torch.utils.data.DataLoader(ds, batch_size=None, sampler=sampler) for i in b["id"]]
    assert epoch0 == list(range(200)) and epoch1 == list(range(150)) and len(ds) == 150 and ds.version == 2


def _free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


@pytest.mark.parametrize("how", ["batches", "sampler"])
def test_ddp_two_ranks_read_every_row_once_per_epoch(daemon, how):
    """Real torch.distributed (gloo, 2 processes, as torchrun starts them): each rank reads its
    shard through a DataLoader (README's batches().loader(), or a map-style one over
    batch_sampler; ddp_worker.py); all-gathered, the ranks' ids cover every row exactly once
    per epoch, the shards are disjoint, and the next epoch draws another order."""
    out = os.path.join(tempfile.mkdtemp(prefix="lanced-ddp."), "ranks.json")
    port = _free_port()
    procs, logs = [], []
    # GLOO_SOCKET_IFNAME: the ranks meet on loopback, as MASTER_ADDR says, whatever address
    # the host name resolves to (gloo advertises that one otherwise).
    for rank in range(2):
        env = dict(os.environ, RANK=str(rank), WORLD_SIZE="2", MASTER_ADDR="127.0.0.1",
                   MASTER_PORT=str(port), GLOO_SOCKET_IFNAME="lo")
        logs.append(tempfile.TemporaryFile())  # not a pipe: a rank never blocks on its output
        procs.append(subprocess.Popen([sys.executable, os.path.join(HERE, "ddp_worker.py"), daemon, PATH, out, how],
                                      env=env, stdout=logs[-1], stderr=subprocess.STDOUT))
    try:
        for p in procs:  # each rank bounds its own waits (ddp_worker.py: stacks dumped at 120 s)
            p.wait(timeout=180)
    finally:
        for p in procs:
            p.kill()
            p.wait()
    said = []
    for f in logs:
        f.seek(0)
        said.append(f.read().decode(errors="replace"))
    codes = [p.returncode for p in procs]
    assert codes == [0, 0], "".join("rank %d exited %d:\n%s\n" % (r, c, t[-12000:])
                                    for r, (c, t) in enumerate(zip(codes, said)))
    got = json.load(open(out))
    n = got["n"]
    assert n > 0 and len(got["epochs"]) == 2
    orders = []
    for ranks in got["epochs"]:
        assert len(ranks) == 2 and not set(ranks[0]) & set(ranks[1])
        both = ranks[0] + ranks[1]
        assert sorted(both) == list(range(n))  # every row once, across the ranks
        assert abs(len(ranks[0]) - len(ranks[1])) <= 1
        orders.append(both)
    assert orders[0] != orders[1]


class _InWorker(torch.utils.data.Dataset):
    """User code running in a DataLoader worker that reads a lanced batch itself."""

    def __init__(self, ds):
        self.ds = ds

    def __len__(self):
        return 4

    def __getitem__(self, i):
        b = self.ds[[i, i + 1]]
        return {"sum": int(b["id"].sum()), "keys": sorted(b.keys()), "n": len(b), "emb0": float(b["emb"][0][0])}


def test_batch_read_inside_a_worker(daemon):
    """A batch read by code running in the worker is a batch there too (its columns readable
    by name, keys, len), not only once it reaches the main process."""
    ds = LancedDataset(daemon, PATH, COLS)
    want = lanced.Client(daemon).take(PATH, [0, 1], ["emb"])["emb"][0][0]
    got = list(torch.utils.data.DataLoader(_InWorker(ds), batch_size=None, num_workers=2))
    assert [g["sum"] for g in got] == [2 * i + 1 for i in range(4)]
    assert all(g["keys"] == ["emb", "id"] and g["n"] == 2 for g in got)
    assert got[0]["emb0"] == float(want)


# ---- the workers' shared-memory rings ------------------------------------------------------
import gc  # noqa: E402


def _count_rebuilds(monkeypatch):
    """How batches reached this process: from a ring slot, or copied into a memfd of their own."""
    seen = collections.Counter()
    slot, copied = lt._rebuild_slot, lt._rebuild

    def from_slot(*a):
        seen["slot"] += 1
        return slot(*a)

    def from_copy(*a):
        seen["copy"] += 1
        return copied(*a)
    # Pickled by name in the workers (forked with these in place), so named as what they replace.
    for f, name in ((from_slot, "_rebuild_slot"), (from_copy, "_rebuild")):
        f.__module__, f.__qualname__ = "lanced.torch", name
        monkeypatch.setattr(lt, name, f)
    return seen


def _leaf_specs(specs):
    for sp in specs:
        if sp[0] == "r":  # a Ragged's values, offsets, validity
            yield from _leaf_specs(sp[2:])
        else:
            yield sp


@pytest.mark.parametrize("path", ["data/types21", "data/lists21"])
def test_shared_layout_from_where_arrays_were_read(daemon, path):
    """_SharedAnswer lays a batch out from read_stream's places (where each array lies in the
    answer) and the main process rebuilds it from that layout: every column equal to the
    arrays read. places of other bytes (the same answer read from a copy) are not trusted:
    the layout is then what the arrays' own addresses say, and still equal."""
    raw = []

    def keep(n):
        raw.append(bytearray(n))
        return raw[-1]
    client = lanced.Client(daemon)
    ids = list(range(0, 60, 3))
    want = client.take_arrays(path, ids, buffer=keep)
    answer = raw[-1]
    cols = lanced.arrow.read_stream(answer)
    assert cols.places and set(cols) <= set(want) and cols  # the columns Arrow carries
    for buf, trusted in ((answer, True), (bytearray(answer), False)):
        shared = lt._SharedAnswer(memoryview(buf), len(buf), cols)
        got = lt._columns(np.frombuffer(buf, np.uint8), shared.layout)
        views = [sp for sp in _leaf_specs(shared.layout.values()) if sp[0] == "t"]
        assert bool(views) == trusted, path  # copies ("o") where the arrays lie elsewhere
        for c in cols:
            for i in range(len(ids)):
                _same_value(got[c][i], want[c][i], "%s %s[%d]" % (path, c, i))
        del shared


def test_ring_slots_come_back_when_batches_die(daemon, monkeypatch):
    """A batch's slot is free again as soon as the main process drops its last tensor of it,
    without the garbage collector (off here): three epochs of a consumer that keeps nothing
    never run out of slots (no batch is copied), and afterwards every slot is free."""
    seen = _count_rebuilds(monkeypatch)
    ds = LancedDataset(daemon, "data/lists21", None)
    batches = ds.batches(16, shuffle=True, prefetch=3, seed=5)
    dl = torch.utils.data.DataLoader(batches, batch_size=None, num_workers=2, persistent_workers=True)
    gc.disable()
    try:
        n = 0
        for epoch in range(3):
            batches.set_epoch(epoch)
            for b in dl:
                n += len(next(iter(b.values())))
                del b
        views = [v for t, v in lt._rings.items() if isinstance(t, tuple)]
        assert views and all(not v.busy.any() for v in views)
    finally:
        gc.enable()
        del dl
    assert n == 3 * len(ds)
    assert seen["slot"] == 3 * len(batches) and seen["copy"] == 0


def test_held_batches_are_never_overwritten(daemon, monkeypatch):
    """A trainer that keeps every batch of an epoch (more than a ring has slots): the later
    batches are copied into memfds of their own, and no kept batch changes under it."""
    seen = _count_rebuilds(monkeypatch)
    path = "data/types21"
    client = lanced.Client(daemon)
    ds = LancedDataset(daemon, path, ["i64", "f64", "s"])
    batches = ds.batches(7, shuffle=True, prefetch=2, seed=3)
    order = [i for b in batches.sampler._batches() for i in b]
    kept = list(torch.utils.data.DataLoader(batches, batch_size=None, num_workers=2))
    assert seen["copy"] > 0 and seen["slot"] > 0 and seen["slot"] + seen["copy"] == len(kept)
    want = client.take_arrays(path, order, ["i64", "f64", "s"])
    at = 0
    for b in kept:
        k = len(b["i64"])
        for i in range(k):
            _same_value(b["i64"][i], want["i64"][at + i], "i64[%d]" % (at + i))
            _same_value(b["f64"][i], want["f64"][at + i], "f64[%d]" % (at + i))
            _same_value(b["s"][i], want["s"][at + i], "s[%d]" % (at + i))
        at += k
    assert at == len(order)


@pytest.mark.parametrize("how", ["batches", "sampler"])
def test_batches_read_here_reuse_slots_and_keep_what_is_held(daemon, how):
    """Whole batches read in this process (no DataLoader workers: batches() iterated, or
    ds[indices] for batch_sampler's lists) go into a slot of this process's ring, which is then
    the batch's memory: a consumer that keeps nothing leaves every slot free again as each
    batch's last tensor dies (gc off), one that keeps every batch (more than the ring has
    slots: the rest are copied into memfds of their own) never sees a kept batch change, and
    every value equals take_arrays'."""
    path, cols = "data/types21", ["i64", "f64", "s"]
    client = lanced.Client(daemon)
    ds = LancedDataset(daemon, path, cols)
    batches = ds.batches(7, shuffle=True, prefetch=2, seed=3)
    order = [i for b in batches.sampler._batches() for i in b]

    def read():  # the epoch's batches, in order
        return iter(batches) if how == "batches" else (ds[b] for b in batches.sampler._batches())
    gc.collect()  # batches other tests left for the collector
    gc.disable()
    try:
        n = 0
        for b in read():
            n += len(b["i64"])
            del b
        ring = lt._rings[os.getpid()]
        assert n == len(ds) and not ring.busy[:len(ring.fds)].any()
    finally:
        gc.enable()
    kept = list(read())  # the same epoch again: the same order
    assert len(kept) > len(ring.fds) and ring.busy[:len(ring.fds)].all()
    want = client.take_arrays(path, order, cols)
    at = 0
    for b in kept:
        assert list(b) == cols and isinstance(b["i64"], torch.Tensor)
        k = len(b["i64"])
        for i in range(k):
            for c in cols:
                _same_value(b[c][i], want[c][at + i], "%s[%d]" % (c, at + i))
        at += k
    assert at == len(order) == len(ds)
    del kept, b
    gc.collect()
    assert not ring.busy[:len(ring.fds)].any()


def _epoch_order(batches, epoch):
    """The order batches' sampler draws for epoch (in this process, on a copy)."""
    s = batches.sampler
    twin = lt.BatchSampler(s.n, s.batch_size, s.shuffle, s.drop_last, seed=s.seed)
    twin.set_epoch(epoch)
    return [i for b in twin._batches() for i in b]


def _loader(batches, how):
    """batches through two persistent workers: batches.loader() (loader_context's queues, which
    read the next epoch's first answer while the epoch is handed over), or torch's DataLoader
    as it comes."""
    if how == "loader":
        return batches.loader(num_workers=2)
    return torch.utils.data.DataLoader(batches, batch_size=None, num_workers=2, persistent_workers=True)


@pytest.mark.parametrize("how", ["loader", "torch"])
def test_persistent_workers_follow_set_epoch(daemon, how):
    """With persistent_workers, set_epoch in the main process reaches the workers (shared
    memory): each epoch is the sampler's order for that epoch, a new one each time, every row
    once. (Before, persistent workers kept the epoch they started with: every epoch drew the
    same order.)"""
    ds = LancedDataset(daemon, "data/types21", ["i64"])
    batches = ds.batches(13, shuffle=True, prefetch=2, seed=9)
    dl = _loader(batches, how)
    ids = lanced.Client(daemon).take_arrays("data/types21", list(range(len(ds))), ["i64"])["i64"]
    orders = []
    for epoch in range(3):
        batches.set_epoch(epoch)
        got = [int(v) for b in dl for v in b["i64"]]
        assert got == [int(ids[i]) for i in _epoch_order(batches, epoch)], epoch
        orders.append(got)
    assert sorted(orders[0]) == sorted(int(v) for v in ids)
    assert orders[0] != orders[1] != orders[2]
    # Pickled other than to start a worker, it carries a copy of what was published.
    import pickle
    assert pickle.loads(pickle.dumps(batches)).sampler.epoch == 2


def _rows_answered(url):
    """Take requests the daemon has answered so far (its /metrics)."""
    import urllib.request
    text = urllib.request.urlopen(url + "/metrics").read().decode()
    return sum(int(line.rsplit(" ", 1)[1]) for line in text.splitlines()
               if line.startswith('lanced_requests_total{route="rows"'))


def _settles_at(url, want, seconds=5.0):
    """The answered count once it reaches want (speculative answers arrive on their own
    time), or whatever it is after seconds."""
    deadline = time.monotonic() + seconds
    while True:
        got = _rows_answered(url)
        if got >= want or time.monotonic() > deadline:
            time.sleep(0.2)  # and nothing more comes after it
            return _rows_answered(url)
        time.sleep(0.02)


def _quiet(url, seconds=5.0):
    """The answered count once nothing more is being answered (what an earlier test's workers
    asked ahead may still be answered after that test ends): two reads 0.3 s apart agree."""
    deadline, last = time.monotonic() + seconds, _rows_answered(url)
    while True:
        time.sleep(0.3)
        got = _rows_answered(url)
        if got == last or time.monotonic() > deadline:
            return got
        last = got


def test_next_epoch_asked_ahead_used_only_when_foreseen(daemon):
    """Persistent workers of torch's own DataLoader over batches() (an epoch at a time) that
    have seen an epoch follow another ask for the next epoch's first batches behind this
    one's last (prefetch - 1 per worker stay in flight) and use them only if the epoch that
    starts is the one foreseen: set_epoch(e + 1) each time foresees e + 2, a jump foresees
    nothing (and drops what was asked), an epoch repeated foresees itself. Every epoch is the
    sampler's order all the same, and no batch is asked twice. (loader()'s epochs are one
    stream: test_loader_reads_epochs_as_one_stream.)"""
    ds = LancedDataset(daemon, "data/types21", ["i64"])
    batches = ds.batches(13, shuffle=True, prefetch=3, seed=4)
    dl = _loader(batches, "torch")
    ids = lanced.Client(daemon).take_arrays("data/types21", list(range(len(ds))), ["i64"])["i64"]
    per = len(batches)
    ahead = sum(min(2, len(range(w, per, 2))) for w in range(2))  # each worker's share, up to 2
    start = _quiet(daemon)
    # epoch: requests answered by its end, counted from the first (ahead: asked for the next)
    plan = [(0, per), (1, 2 * per + ahead), (2, 3 * per + ahead), (7, 4 * per + ahead),
            (7, 5 * per + 2 * ahead), (7, 6 * per + 2 * ahead)]
    for epoch, answered in plan:
        batches.set_epoch(epoch)
        got = [int(v) for b in dl for v in b["i64"]]
        assert got == [int(ids[i]) for i in _epoch_order(batches, epoch)], epoch
        assert _settles_at(daemon, start + answered) - start == answered, (epoch, answered)


def _epoch_ids(dl, limit=None):
    got = []
    for k, b in enumerate(dl):
        if limit is not None and k == limit:
            break
        got.extend(int(v) for v in b["i64"])
    return got


def test_loader_reads_epochs_as_one_stream(daemon):
    """loader()'s workers read epoch after epoch as one stream, the next epoch's batches asked
    for behind this one's: an epoch foreseen (set_epoch(e + 1) each time, or the same epoch
    again once two epochs showed it) costs the daemon exactly its own batches, none asked
    twice, and no hand-over between epochs. Every epoch is the sampler's order for it (with
    an odd number of batches an epoch, the two workers' turns cross epoch edges), also after
    what the stream did not foresee: a jump, an epoch left after a few batches, a new epoch
    count."""
    ds = LancedDataset(daemon, "data/types21", ["i64"])
    batches = ds.batches(13, shuffle=True, prefetch=3, seed=4)
    dl = batches.loader(num_workers=2)
    ids = lanced.Client(daemon).take_arrays("data/types21", list(range(len(ds))), ["i64"])["i64"]
    per = len(batches)
    assert per % 2 == 1
    # (epoch, batches read of it or None for all, whether the stream foresaw it)
    plan = [(0, None, False), (1, None, True), (2, None, True), (7, None, False), (7, None, False),
            (7, None, True), (7, 3, True), (7, None, False), (8, None, False), (9, None, True)]
    resets = []
    for epoch, limit, foreseen in plan:
        batches.set_epoch(epoch)
        before = _quiet(daemon)
        got = _epoch_ids(dl, limit)
        want = [int(ids[i]) for i in _epoch_order(batches, epoch)]
        assert got == (want if limit is None else want[:13 * limit]), epoch
        if foreseen and limit is None:
            assert _quiet(daemon) - before == per, epoch
        if epoch == 0:  # from now on, count DataLoader's epoch hand-overs (resume round trips)
            it = dl._iterator
            reset = it._reset
            it._reset = lambda *a, **k: (resets.append(epoch), reset(*a, **k))[1]
    # Only the epochs not foreseen were handed over DataLoader's way.
    assert len(resets) == sum(1 for _, _, foreseen in plan[1:] if not foreseen)
    assert len(dl) == per


def test_loader_stream_without_set_epoch(daemon):
    """Never told an epoch, loader() reads epoch 0's order every time (as the sampler
    draws it), the repeats foreseen by the stream: each costs the daemon its batches once."""
    ds = LancedDataset(daemon, "data/types21", ["i64"])
    batches = ds.batches(13, shuffle=True, prefetch=3, seed=5)
    dl = batches.loader(num_workers=2)
    ids = lanced.Client(daemon).take_arrays("data/types21", list(range(len(ds))), ["i64"])["i64"]
    want = [int(ids[i]) for i in _epoch_order(batches, 0)]
    assert _epoch_ids(dl) == want
    for _ in range(2):
        before = _quiet(daemon)
        assert _epoch_ids(dl) == want
        assert _quiet(daemon) - before == len(batches)


def test_loader_stream_recovers_after_an_error(daemon):
    """An error in the stream (here rows past the table's end, asked for because the sampler
    was told of more rows than there are) reaches the training loop with the daemon's words; the
    next epoch restarts the workers' stream and reads the sampler's order as before."""
    ds = LancedDataset(daemon, "data/types21", ["i64"])
    batches = ds.batches(13, shuffle=True, prefetch=3, seed=6)
    dl = batches.loader(num_workers=2)
    ids = lanced.Client(daemon).take_arrays("data/types21", list(range(len(ds))), ["i64"])["i64"]
    batches.set_epoch(0)
    assert _epoch_ids(dl) == [int(ids[i]) for i in _epoch_order(batches, 0)]
    rows = batches.sampler.n
    batches.sampler.n = rows + 200
    batches.set_epoch(1)
    # torch re-raises it as RuntimeError with its text (no `as` kept: a traceback held in this
    # frame would keep the loader and its workers alive until the collector runs)
    with pytest.raises(Exception, match="out_of_range"):
        _epoch_ids(dl)
    batches.sampler.n = rows
    for epoch in (1, 2):
        batches.set_epoch(epoch)
        assert _epoch_ids(dl) == [int(ids[i]) for i in _epoch_order(batches, epoch)], epoch


def _shut_down_in_child(it, out):
    it._shutdown_workers()
    os.write(out, b"done")
    os._exit(0)


def test_loader_copy_in_a_forked_child_shuts_nothing_down(daemon):
    """A forked child's copy of loader()'s iteration (a child forked while the loader lived,
    whose garbage collector finalizes the copy) shuts none of the loader's workers down: the
    loader reads on, its workers alive, and its own shutdown still stops them."""
    ds = LancedDataset(daemon, "data/types21", ["i64"])
    dl = ds.batches(50, shuffle=True, prefetch=2).loader(num_workers=2)
    first = _epoch_ids(dl)
    it = dl._iterator
    workers = list(it._workers)
    rd, wr = os.pipe()
    pid = os.fork()
    if pid == 0:
        _shut_down_in_child(it, wr)
    os.close(wr)
    assert os.waitpid(pid, 0)[1] == 0 and os.read(rd, 16) == b"done"
    os.close(rd)
    assert not it._workers_done_event.is_set() and all(w.is_alive() for w in workers)
    assert _epoch_ids(dl) == first  # never told an epoch: epoch 0's order again
    it._shutdown_workers()
    for w in workers:
        w.join(timeout=30)
    assert [w.exitcode for w in workers] == [0, 0]


@pytest.mark.parametrize("how", ["loader", "torch"])
def test_persistent_workers_follow_refresh_each_epoch(live_table, how):
    """refresh_each_epoch with persistent workers: the version and row count set_epoch moved to
    reach the workers, which read the new version from the next epoch on."""
    url, root = live_table
    ds = LancedDataset(url, "live.lance", ["id"], refresh_each_epoch=True)
    batches = ds.batches(64, prefetch=2)
    dl = _loader(batches, how)
    batches.set_epoch(0)
    epoch0 = sorted(int(i) for b in dl for i in b["id"])
    _write("delete", root, "live", "id >= 150")
    batches.set_epoch(1)
    epoch1 = sorted(int(i) for b in dl for i in b["id"])
    assert epoch0 == list(range(200)) and epoch1 == list(range(150)) and ds.version == 2


# ---- DataLoader's queues without feeder threads (lanced.torch.loader_context) ---------------
def _put_many(q, writer, sizes):
    for k, size in enumerate(sizes):
        q.put((writer, k, bytes([(writer * 31 + k) % 251]) * size))


def test_direct_queue_frames_whole_from_concurrent_writers():
    """Three processes put messages of 1 byte to 300 KiB (past the pipe's 64 KiB, so writes
    are partial and wait for this reader) into one queue: each arrives whole, in its writer's
    order, none interleaved with another's."""
    ctx = lt.loader_context()
    q = ctx.Queue()
    sizes = [1, 70000, 5, 300000, 4090, 4096, 20000, 0, 131072, 17]
    procs = [ctx.Process(target=_put_many, args=(q, w, sizes)) for w in range(3)]
    for p in procs:
        p.start()
    got = collections.defaultdict(list)
    for _ in range(3 * len(sizes)):
        writer, k, data = q.get(timeout=60)
        assert len(data) == sizes[k] and data == bytes([(writer * 31 + k) % 251]) * sizes[k]
        got[writer].append(k)
    for p in procs:
        p.join(timeout=60)
        assert p.exitcode == 0
    assert dict(got) == {w: list(range(len(sizes))) for w in range(3)}
    assert q.empty()


_ORPHAN = r"""
import os, sys, time
sys.path.insert(0, sys.argv[1])
import lanced.torch as lt

def writer(q, out):
    with open(out + ".pid", "w") as f:
        f.write(str(os.getpid()))
    try:
        q.put(b"x" * (4 << 20))  # never read: the pipe fills, and its reader goes away
        said = "sent"
    except BrokenPipeError as ex:
        said = "broken: %s" % ex
    with open(out, "w") as f:
        f.write(said)

if __name__ == "__main__":
    ctx = lt.loader_context()
    q = ctx.Queue()
    ctx.Process(target=writer, args=(q, sys.argv[2])).start()
    time.sleep(0.5)
    os._exit(0)  # the queue's maker, its reader, gone without a word
"""


def test_direct_queue_writer_whose_reader_is_gone_stops():
    """A worker blocked putting into a full queue whose reader (the process that made it, as
    DataLoader's main process makes its result queue) has died raises BrokenPipeError rather
    than waiting forever, as a DataLoader worker would after its trainer was killed."""
    d = tempfile.mkdtemp(prefix="lanced-orphan.")
    out = os.path.join(d, "said")
    subprocess.run([sys.executable, "-c", _ORPHAN, os.path.join(HERE, ".."), out], timeout=60, check=True)
    for _ in range(300):
        if os.path.exists(out) and os.path.getsize(out):
            break
        time.sleep(0.1)
    said = open(out).read() if os.path.exists(out) else "nothing (the writer still waits)"
    try:  # a writer that still waits would wait forever: not left behind
        os.kill(int(open(out + ".pid").read()), 9)
    except (OSError, ValueError):
        pass
    shutil.rmtree(d, ignore_errors=True)
    assert said.startswith("broken: ") and "is gone" in said, said


def test_loader_workers_exit_when_the_loader_goes(daemon):
    """batches.loader() left after one batch of its first epoch: its persistent workers are
    told to stop through the queues and are gone once the loader is, none left waiting."""
    ds = LancedDataset(daemon, PATH, COLS)
    dl = ds.batches(50, shuffle=True, prefetch=3).loader(num_workers=2)
    it = iter(dl)
    assert len(next(it)["id"]) == 50
    workers = list(dl._iterator._workers)
    assert len(workers) == 2 and all(w.is_alive() for w in workers)
    del it, dl
    gc.collect()
    for w in workers:
        w.join(timeout=30)
    assert [w.exitcode for w in workers] == [0, 0]


def _put_big(q, out):
    try:
        q.put(b"y" * (4 << 20))
        said = "sent"
    except BaseException as ex:  # said to the test, whatever it is
        said = "%s: %s" % (type(ex).__name__, ex)
    with open(out, "w") as f:
        f.write(said)


@pytest.mark.parametrize("method", ["fork", "forkserver"])
def test_direct_queue_writer_waits_for_a_slow_reader(method):
    """A worker's put into a full queue waits, polling, while the reader (the process that made
    the queue) lives, however long it takes to read: 4 MiB put, read 2.5 s later, whole. With
    forkserver the writer is not the maker's child, so the maker's pid, not the writer's
    parent, says whether it lives."""
    ctx = lt.loader_context(method)
    q = ctx.Queue()
    d = tempfile.mkdtemp(prefix="lanced-slow.")
    out = os.path.join(d, "said")
    p = ctx.Process(target=_put_big, args=(q, out))
    p.start()
    time.sleep(2.5)  # past two of the writer's checks on its reader
    # Still waiting (a writer that gave up left half a frame, which no get() would finish).
    early = open(out).read() if os.path.exists(out) else None
    if early is not None:
        p.join(timeout=60)
        shutil.rmtree(d, ignore_errors=True)
    assert early is None, early
    data = q.get(timeout=60)
    p.join(timeout=60)
    said = open(out).read() if os.path.exists(out) else "nothing"
    shutil.rmtree(d, ignore_errors=True)
    assert said == "sent" and data == b"y" * (4 << 20) and p.exitcode == 0


# Epoch orders without a Python int per row. The old definition (a list of every row, cut into
# lists, a worker keeping batches k with k % workers == its id) is the oracle for the batches.
def _old_batches(n, bs, shuffle, drop_last, rank, world_size, seed, epoch):
    if shuffle:
        g = torch.Generator()
        g.manual_seed(seed + epoch)
        order = torch.randperm(n, generator=g).tolist()
    else:
        order = list(range(n))
    if world_size is not None:
        order = order[rank * n // world_size:(rank + 1) * n // world_size]
    out = [order[i:i + bs] for i in range(0, len(order), bs)]
    return [b for b in out if len(b) == bs or not drop_last]


def _share(sampler, epoch, wid, nw):
    holder = lt.LancedBatches.__new__(lt.LancedBatches)  # _mine reads only the sampler
    holder.sampler = sampler
    return holder._mine(epoch, wid, nw)


@pytest.mark.parametrize("n,bs,drop_last,world", [(1, 4, False, None), (10, 4, False, None),
                                                  (10, 4, True, None), (12, 4, False, None),
                                                  (1003, 32, False, 3), (1003, 32, True, 3),
                                                  (5, 8, True, None), (0, 4, False, None)])
@pytest.mark.parametrize("shuffle", [False, True])
def test_sampler_and_worker_shares_match_the_list_definition(n, bs, drop_last, world, shuffle):
    for rank in range(world or 1):
        kw = dict(rank=rank, world_size=world) if world else {}
        s = lt.BatchSampler(n, bs, shuffle=shuffle, drop_last=drop_last, seed=5, **kw)
        for epoch in (0, 3):
            s.set_epoch(epoch)
            want = _old_batches(n, bs, shuffle, drop_last, rank if world else None, world, 5, epoch)
            got = list(s)
            assert got == want and len(s) == len(want)
            assert all(type(b) is list and all(type(i) is int for i in b) for b in got)
            for nw in (1, 2, 3):
                for wid in range(nw):
                    share = _share(s, epoch, wid, nw)
                    assert list(share) == want[wid::nw] and len(share) == len(want[wid::nw])
                    assert list(share) == list(share)  # iterated again: the same batches


def test_sampler_sizes_and_unshuffled_batches_hold_no_row_list():
    # 10**12 rows: a list of them cannot be made (the old __len__ and iteration made one)
    n = 10 ** 12
    s = lt.BatchSampler(n, 256, rank=1, world_size=3)
    lo, hi = n // 3, 2 * n // 3
    assert len(s) == -(-(hi - lo) // 256)
    assert next(iter(s)) == list(range(lo, lo + 256))
    share = _share(s, 0, 1, 2)
    assert len(share) == len(range(1, len(s), 2))
    assert next(iter(share)) == list(range(lo + 256, lo + 512))


def test_shuffled_worker_share_keeps_ids_off_the_python_heap():
    import tracemalloc
    n = 2_000_000  # as Python ints (the old lists): 88 MB on the Python heap
    s = lt.BatchSampler(n, 256, shuffle=True, seed=1)
    tracemalloc.start()
    try:
        share = _share(s, 0, 0, 2)
        first = next(iter(share))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(first) == 256 and len(share) == len(range(0, len(s), 2))
    assert peak < 1 << 20, peak
