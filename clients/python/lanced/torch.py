"""lanced.torch.LancedDataset: a map-style PyTorch dataset over a Lance file or dataset
served by lanced, fetching one batch per HTTP request."""
import numpy as np
import torch
import torch.utils.data

from .client import Client

__all__ = ["LancedDataset", "BatchSampler"]


def _to_torch(v):
    """numpy column -> tensor when it is numeric (masked values filled with 0; ask for a
    validity column if nulls matter), else left as it is (strings, lists: object arrays)."""
    if isinstance(v, np.ma.MaskedArray):
        v = v.filled(0)
    if isinstance(v, np.ndarray) and v.dtype.kind in "biuf":
        if not v.flags.writeable:  # a view of the response bytes; torch wants its own
            v = v.copy()
        return torch.from_numpy(np.ascontiguousarray(v))
    return v


class LancedDataset(torch.utils.data.Dataset):
    """LancedDataset(url, path, columns, transform=None, version=None, refresh_each_epoch=False).

    version: None (default) pins the dataset version counted by len(): every batch of the epoch
    reads that version, so a writer appending or deleting meanwhile changes neither the rows an
    index means nor the length. A number or a LanceDB tag's name pins that version (a tag is
    resolved once, at the first use). "latest" follows the newest version on every batch (an
    index may then name another row, or none, after a delete). refresh_each_epoch=True moves to
    the newest version at the start of each epoch (batch_sampler's samplers do it when their
    iteration starts, in the main process, before DataLoader forks its workers; with
    persistent_workers the workers keep the version they started with).

    dataset[i] is one row, {column: value}; dataset[[i, j, ...]] and __getitems__ fetch many
    rows with one request. __getitems__ (called by DataLoader's automatic batching where torch
    has it) returns a list of rows for the collate function; the fastest path skips collation:
    DataLoader(ds, batch_size=None, sampler=ds.batch_sampler(256, shuffle=True)), where each
    item is a whole batch {column: tensor of batch rows}. transform, if given, is applied to
    what is returned: a row, or a batch for a list of indices."""

    def __init__(self, url, path, columns, transform=None, version=None, refresh_each_epoch=False):
        self.client = url if isinstance(url, Client) else Client(url)
        self.path, self.columns = path, list(columns) if columns else None
        self.transform = transform
        self.follow = version == "latest"
        self.version = None if self.follow else version
        self._caller_pin = None if self.follow else version  # a number or tag the caller named
        self.refresh_each_epoch = refresh_each_epoch
        self._len = None

    def _describe(self, version):
        d = self.client.describe(self.path, version)
        self._len = d["num_rows"]
        # The version counted is the one read from then on (a dataset; a data file has none):
        # a tag moves, and the newest version changes under writers.
        if not self.follow and "dataset_version" in d:
            self.version = d["dataset_version"]

    def __len__(self):
        if self._len is None:
            self._describe(None if self.follow else self.version)
        return self._len

    def refresh(self):
        """Counts the dataset again and pins what it counted: the newest version, or what the
        caller's tag names now (a version number stays); returns the new length."""
        self._describe(None if self.follow else self._caller_pin)
        return self._len

    def _batch(self, indices):
        len(self)  # the version pinned first
        cols = self.client.take(self.path, indices, self.columns, None if self.follow else self.version)
        return {k: _to_torch(v) for k, v in cols.items()}

    def __getitem__(self, index):
        if isinstance(index, (list, tuple, np.ndarray, torch.Tensor)):
            batch = self._batch([int(i) for i in index])
            return self.transform(batch) if self.transform else batch
        batch = self._batch([int(index)])
        row = {k: v[0] for k, v in batch.items()}
        return self.transform(row) if self.transform else row

    def __getitems__(self, indices):
        batch = self._batch([int(i) for i in indices])
        rows = [{k: v[i] for k, v in batch.items()} for i in range(len(indices))]
        return [self.transform(r) for r in rows] if self.transform else rows

    def batch_sampler(self, batch_size, shuffle=False, drop_last=False, generator=None, rank=None,
                      world_size=None, seed=0):
        """A sampler of index lists, for DataLoader(ds, batch_size=None, sampler=...).

        Distributed (rank and world_size given, e.g. from torch.distributed): each epoch's order
        is one permutation drawn from seed + epoch (set_epoch(e) before each epoch, as with
        torch's DistributedSampler), the same on every rank, and rank r reads the r-th of
        world_size contiguous shards of it: across the ranks every row is read exactly once per
        epoch (shards differ by at most one row; drop_last drops each rank's short last batch)."""
        return BatchSampler(len(self), batch_size, shuffle, drop_last, generator, rank=rank,
                            world_size=world_size, seed=seed, dataset=self)


class BatchSampler(torch.utils.data.Sampler):
    """Lists of batch_size row indices covering 0..n-1 once per epoch (shuffled if asked); with
    rank and world_size, this rank's shard of them (see LancedDataset.batch_sampler)."""

    def __init__(self, n, batch_size, shuffle=False, drop_last=False, generator=None, rank=None,
                 world_size=None, seed=0, dataset=None):
        if (rank is None) != (world_size is None):
            raise ValueError("rank and world_size go together")
        if world_size is not None and not 0 <= rank < world_size:
            raise ValueError("rank %r is not in 0..world_size-1 (%r)" % (rank, world_size))
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        self.n, self.batch_size = n, batch_size
        self.shuffle, self.drop_last, self.generator = shuffle, drop_last, generator
        self.rank, self.world_size, self.seed, self.epoch = rank, world_size, seed, 0
        self.dataset = dataset

    def set_epoch(self, epoch):
        """The epoch the next iteration draws its order for (distributed: every rank the same)."""
        self.epoch = epoch

    def _order(self):
        if not self.shuffle:
            return list(range(self.n))
        g = self.generator
        if g is None or self.world_size is not None:  # distributed: the same order on every rank
            g = torch.Generator()
            g.manual_seed(self.seed + self.epoch)
        return torch.randperm(self.n, generator=g).tolist()

    def _shard(self, order):
        if self.world_size is None:
            return order
        lo, hi = self.rank * self.n // self.world_size, (self.rank + 1) * self.n // self.world_size
        return order[lo:hi]

    def __iter__(self):
        if self.dataset is not None and self.dataset.refresh_each_epoch:
            self.n = self.dataset.refresh()  # the newest version, counted, for this epoch
        mine = self._shard(self._order())
        for i in range(0, len(mine), self.batch_size):
            chunk = mine[i:i + self.batch_size]
            if len(chunk) == self.batch_size or not self.drop_last:
                yield chunk

    def __len__(self):
        m = len(self._shard(list(range(self.n)))) if self.world_size is not None else self.n
        return m // self.batch_size if self.drop_last else -(-m // self.batch_size)
