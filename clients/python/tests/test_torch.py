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
    calls = []
    real = ds.client.take
    monkeypatch.setattr(ds.client, "take", lambda *a, **k: calls.append(a) or real(*a, **k))
    rows = ds.__getitems__([3, 1, 2])
    assert len(calls) == 1 and [int(r["id"]) for r in rows] == [3, 1, 2]


def test_version_by_tag(daemon):
    # A tag resolved once, at the first use: the length and every batch come from the
    # version it named then (tags_v22: "first" names version 1, 200 rows).
    ds = LancedDataset(daemon, "datasets/tags_v22.lance", ["id"], version="first")
    assert len(ds) == 200 and ds.version == 1
    assert [int(x) for x in ds[[0, 199]]["id"]] == [0, 199]
