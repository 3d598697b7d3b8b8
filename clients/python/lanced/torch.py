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
    """LancedDataset(url, path, columns, transform=None, version=None); version: a dataset
    version number or a LanceDB tag's name (resolved once, at the first use).

    dataset[i] is one row, {column: value}; dataset[[i, j, ...]] and __getitems__ fetch many
    rows with one request. __getitems__ (called by DataLoader's automatic batching where torch
    has it) returns a list of rows for the collate function; the fastest path skips collation:
    DataLoader(ds, batch_size=None, sampler=ds.batch_sampler(256, shuffle=True)), where each
    item is a whole batch {column: tensor of batch rows}. transform, if given, is applied to
    what is returned: a row, or a batch for a list of indices."""

    def __init__(self, url, path, columns, transform=None, version=None):
        self.client = url if isinstance(url, Client) else Client(url)
        self.path, self.columns = path, list(columns) if columns else None
        self.transform, self.version = transform, version
        self._len = None

    def __len__(self):
        if self._len is None:
            d = self.client.describe(self.path, self.version)
            self._len = d["num_rows"]
            # A tag moves: the version it named when first asked is the one read from then
            # on, so every batch comes from the version the length was counted in.
            if isinstance(self.version, str):
                self.version = d["dataset_version"]
        return self._len

    def _batch(self, indices):
        len(self)  # a tag resolved first
        cols = self.client.take(self.path, indices, self.columns, self.version)
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

    def batch_sampler(self, batch_size, shuffle=False, drop_last=False, generator=None):
        """A sampler of index lists, for DataLoader(ds, batch_size=None, sampler=...)."""
        return BatchSampler(len(self), batch_size, shuffle, drop_last, generator)


class BatchSampler(torch.utils.data.Sampler):
    """Lists of batch_size row indices covering 0..n-1 once per epoch (shuffled if asked)."""

    def __init__(self, n, batch_size, shuffle=False, drop_last=False, generator=None):
        self.n, self.batch_size = n, batch_size
        self.shuffle, self.drop_last, self.generator = shuffle, drop_last, generator

    def __iter__(self):
        order = torch.randperm(self.n, generator=self.generator).tolist() if self.shuffle \
            else list(range(self.n))
        for i in range(0, self.n, self.batch_size):
            chunk = order[i:i + self.batch_size]
            if len(chunk) == self.batch_size or not self.drop_last:
                yield chunk

    def __len__(self):
        return self.n // self.batch_size if self.drop_last else -(-self.n // self.batch_size)
