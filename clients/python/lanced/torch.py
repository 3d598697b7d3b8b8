"""lanced.torch.LancedDataset: a map-style PyTorch dataset over a Lance file or dataset
served by lanced, fetching one batch per HTTP request."""
import collections
import itertools
import math
import mmap
import multiprocessing
import multiprocessing.context
import multiprocessing.queues
import multiprocessing.reduction
import os
import queue
import select
import struct
import threading
import time
import weakref

import numpy as np
import torch
import torch.utils.data

from .arrow import Ragged
from .client import Client

__all__ = ["LancedDataset", "BatchSampler", "LancedBatches", "loader_context"]

# What the dataset asks lanced for (bench/training.sh measures lanced-load in it): Arrow IPC,
# read into numpy by lanced/arrow.py (clients/python/README.md says why not protobuf).
WIRE_FORMAT = "arrow"


_TORCH_DTYPES = {np.dtype(k): v for k, v in (
    ("<i1", torch.int8), ("<i2", torch.int16), ("<i4", torch.int32), ("<i8", torch.int64),
    ("<u1", torch.uint8), ("<f2", torch.float16), ("<f4", torch.float32), ("<f8", torch.float64))}
# Unsigned types torch has no tensor of, widened exactly; uint64 stays a numpy array.
_TORCH_BY_STR = {k.str: v for k, v in _TORCH_DTYPES.items()}  # a layout's dtype names
_WIDER = {np.dtype("<u2"): np.int32, np.dtype("<u4"): np.int64}
_POPULATE = getattr(mmap, "MAP_POPULATE", 0)


class _SharedAnswer:
    """A DataLoader worker's batch on its way to the main process without a copy: the answer
    was read straight into shared memory (a slot of the worker's _Ring, or a memfd of its own
    when every slot is taken); pickled, this is where the bytes are and where each column lies
    in them; unpickled, it is the batch itself, {column: tensor views of the shared memory}.

    Why not torch's own sharing: a tensor sent from a worker is copied into a new shared
    segment (share_memory_), which took 45 ms for a 6 MB batch-256 answer on the bench
    machine. A fresh memfd per batch (the previous design) still cost a write fault per page
    in the worker, a mapping, page-table set-up and an unmapping (a TLB shootdown, a
    hypervisor exit in a VM) in the main process, and multiprocessing's descriptor passing
    over a Unix socket: 15 ms of CPU per 6 MB batch, against 2.2 ms for a C client reading
    the same answer. A ring slot's pages are faulted once and mapped once on each side, and
    its descriptor passed once (docs/performance.md has the figures)."""

    def __init__(self, buf, n, cols, slot=None, ring=None):
        base = np.frombuffer(buf, np.uint8, count=n)
        self.base, self.n = base.__array_interface__["data"][0], n
        # Where read_stream found each array in the answer (lanced.arrow.Columns), trusted once
        # one of them is seen to lie in buf where it says: cols were read from these bytes.
        places = getattr(cols, "places", None) or {}
        first = next(iter(places.values()), None)
        if first is not None and first[0].__array_interface__["data"][0] - self.base != first[1]:
            places = {}
        self.layout = {k: self.spec(v, places) for k, v in cols.items()}  # before the slot is reused
        self.ring, self.slot, self.sent, self._local = ring, slot, False, None
        if ring is None:  # no slot was free: a memfd of its own, the answer copied in
            self.fd = os.memfd_create("lanced-answer", os.MFD_CLOEXEC)
            view, done = memoryview(buf)[:n], 0
            while done < n:
                done += os.write(self.fd, view[done:])

    def spec(self, v, places):
        """How the main process rebuilds column value v: a view of the shared bytes where v is
        a numeric array over the answer, else a copy of v, converted and pickled as usual.
        places: {id(array): (array, offset in the answer)}, trusted (or empty)."""
        if v is None:
            return ("n",)
        if isinstance(v, Ragged):
            return ("r", v.kind, self.spec(v.values, places), self.spec(v.offsets, places),
                    self.spec(v.validity, places))
        if type(v) is np.ndarray and v.dtype in _TORCH_DTYPES and v.flags.c_contiguous and v.size:
            where = places.get(id(v))
            off = where[1] if where is not None and where[0] is v else \
                v.__array_interface__["data"][0] - self.base
            if 0 <= off and off + v.nbytes <= self.n and off % v.dtype.itemsize == 0:
                return ("t", off, v.dtype.str, v.shape)
        if isinstance(v, np.ndarray):  # it may be a view of bytes the next batch reuses
            v = v.copy()
        return ("o", _to_torch(v))

    def own(self):
        """The batch for this process itself, never handed over (batches() read without
        DataLoader workers): {column: tensor views of the slot}, the slot released once the
        last of them dies, as _rebuild_slot does in the main process (or of a memfd of its own,
        when no slot was free)."""
        self.sent = True  # from now on the tensors release the slot
        if self.ring is not None:
            base = self.ring.bytes(self.slot, self.n)
            weakref.finalize(base, _release_slot, self.ring.busy, self.slot)
            return _columns(base, self.layout)
        return _rebuild_fd(os.dup(self.fd), self.n, self.layout)

    def __reduce__(self):
        self.sent = True  # from now on the main process releases the slot
        if self.ring is not None:
            return (_rebuild_slot, self.ring.handle(self.slot) + (self.n, self.layout))
        return (_rebuild, (multiprocessing.reduction.DupFd(self.fd), self.n, self.layout))

    # Read where it was made (code of the caller's running in the worker), it is the batch
    # too: the columns are views of the worker's own mapping, valid until the batch is handed
    # to the main process (the slot is then the main process's to release). Not a
    # collections.abc.Mapping on purpose: DataLoader's default_convert would then rebuild it
    # in the worker and send plain tensors.
    def _batch(self):
        if self._local is None:
            if self.ring is not None:
                self._local = _columns(self.ring.bytes(self.slot, self.n), self.layout)
            else:
                self._local = _rebuild_fd(os.dup(self.fd), self.n, self.layout)
        return self._local

    def __getitem__(self, key):
        return self._batch()[key]

    def __iter__(self):
        return iter(self.layout)

    def __len__(self):
        return len(self.layout)

    def __contains__(self, key):
        return key in self.layout

    def keys(self):
        return self._batch().keys()

    def items(self):
        return self._batch().items()

    def values(self):
        return self._batch().values()

    def __del__(self):
        if getattr(self, "ring", None) is not None and not self.sent:
            self.ring.release(self.slot)  # never handed over: the slot is free again
        if getattr(self, "fd", None) is not None:
            os.close(self.fd)


class _Ring:
    """A DataLoader worker's shared memory for answers, reused batch after batch: `slots`
    memfds (each grown to the largest answer it has held) and one page of slot states, 1 while
    a batch in the slot is in flight or alive in the main process, 0 once the main process
    has dropped its last tensor of it (a weakref finalizer there writes the 0; no message, no
    system call). The worker reads each answer into a free slot; when none is free (the
    trainer keeps many batches), the answer goes into a memfd of its own instead, so a slow
    consumer costs a copy, never a wait.

    Descriptors reach the main process through multiprocessing (DupFd) with the batches until
    the main process says, in the state page, that it has mapped that slot at that size: once
    per slot and growth, not per batch. One ring per worker process, made at its first batch."""

    _STATE_BYTES = 4096  # one page: a state byte and an 8-byte "mapped size" per slot
    _MAX_SLOTS = 256

    def __init__(self, slots):
        if not 1 <= slots <= self._MAX_SLOTS:
            raise ValueError("lanced: a ring of %d slots (1..%d)" % (slots, self._MAX_SLOTS))
        self.token = (os.getpid(), int.from_bytes(os.urandom(8), "little"))
        self.state_fd = os.memfd_create("lanced-ring-state", os.MFD_CLOEXEC)
        os.ftruncate(self.state_fd, self._STATE_BYTES)
        self.state_map = mmap.mmap(self.state_fd, self._STATE_BYTES, mmap.MAP_SHARED)
        self.busy = np.frombuffer(self.state_map, np.uint8, count=self._MAX_SLOTS)
        # What the main process has mapped of each slot (bytes), and in the last word whether
        # it has mapped this state page: written by the main process, read here.
        self.mapped = np.frombuffer(self.state_map, np.int64, count=self._MAX_SLOTS + 1,
                                    offset=self._MAX_SLOTS)
        self.fds, self.maps, self.caps = [], [], []
        self.lock = threading.Lock()  # a map-style dataset may be read by several threads
        for _ in range(slots):
            self.fds.append(os.memfd_create("lanced-ring-slot", os.MFD_CLOEXEC))
            self.maps.append(None)
            self.caps.append(0)

    def take(self, n):
        """A free slot grown to at least n bytes and its writable view of n bytes, or None."""
        with self.lock:
            i = self.busy[:len(self.fds)].tobytes().find(0)  # the first free slot
            if i < 0:
                return None
            self.busy[i] = 1
        if self.caps[i] < n:  # grown by powers of two past 1 MiB: a few growths, ever
            cap = max(1 << 20, 1 << (n - 1).bit_length())
            os.ftruncate(self.fds[i], cap)
            self.maps[i] = mmap.mmap(self.fds[i], cap, mmap.MAP_SHARED | _POPULATE)
            self.caps[i] = cap
        return i, memoryview(self.maps[i])[:n]

    def release(self, i):
        self.busy[i] = 0

    def bytes(self, i, n):
        return np.frombuffer(self.maps[i], np.uint8, count=n)

    def handle(self, i):
        """What the main process needs to find slot i: the ring's token, the state page's and
        the slot's descriptors where it has not mapped them yet (None where it has), the size."""
        state = None if self.mapped[self._MAX_SLOTS] else multiprocessing.reduction.DupFd(self.state_fd)
        slot = None if self.mapped[i] >= self.caps[i] else multiprocessing.reduction.DupFd(self.fds[i])
        return (self.token, state, i, slot, self.caps[i])


_tls = threading.local()
_rings = {}  # {pid: _Ring}: this process's own (a worker's, or one reading batches itself);
# {token: _RingView}: in a DataLoader's main process, its workers' rings
_rings_lock = threading.Lock()  # a map-style dataset may be read by several threads of a worker


def _process_ring(slots):
    """This process's ring: a DataLoader worker's, or a process's own that reads batches()
    itself (made at its first batch; a fork's child makes its own)."""
    with _rings_lock:
        r = _rings.get(os.getpid())
        if r is None:
            r = _rings[os.getpid()] = _Ring(slots)
        return r


def _answer_buffer(n):
    """This thread's answer buffer, grown to n bytes: reused, so its pages are faulted in once."""
    buf = getattr(_tls, "buf", None)
    if buf is None or len(buf) < n:
        buf = _tls.buf = bytearray(max(n, 1 << 20))
    return memoryview(buf)[:n]


class _RingView:
    """The main process's side of a worker's ring: the state page and each slot, mapped once
    (again when the slot has grown)."""

    def __init__(self, state_fd):
        self.state_map = mmap.mmap(state_fd, _Ring._STATE_BYTES, mmap.MAP_SHARED)
        os.close(state_fd)
        self.busy = np.frombuffer(self.state_map, np.uint8, count=_Ring._MAX_SLOTS)
        self.mapped = np.frombuffer(self.state_map, np.int64, count=_Ring._MAX_SLOTS + 1,
                                    offset=_Ring._MAX_SLOTS)
        self.mapped[_Ring._MAX_SLOTS] = 1
        self.slots = {}  # slot -> (mmap, size)

    def slot(self, i, fd, cap):
        have = self.slots.get(i)
        if fd is not None and (have is None or have[1] < cap):
            m = mmap.mmap(fd, cap, mmap.MAP_SHARED | _POPULATE)
            have = self.slots[i] = (m, cap)
            self.mapped[i] = cap
        if fd is not None:
            os.close(fd)
        if have is None or have[1] < cap:
            raise RuntimeError("lanced: slot %d of a DataLoader worker's ring came unmapped" % i)
        return have[0]


def _release_slot(busy, i):
    busy[i] = 0


def _forget_dead_rings():
    """Drops the views of rings whose worker has exited (the mappings live on while tensors
    of them do)."""
    for token in [t for t in _rings if isinstance(t, tuple)]:
        try:
            os.kill(token[0], 0)
        except ProcessLookupError:
            del _rings[token]
        except PermissionError:
            pass


def _rebuild_slot(token, state, i, slot, cap, n, layout):
    """The batch in slot i of the worker ring token: {column: tensor views of the slot}; the
    slot is released when the last of them dies."""
    view = _rings.get(token)
    if view is None:
        if state is None:
            raise RuntimeError("lanced: a batch from a DataLoader worker ring this process never saw")
        _forget_dead_rings()
        view = _rings[token] = _RingView(state.detach())
    elif state is not None:
        os.close(state.detach())  # sent again before the worker saw our mapping
    m = view.slot(i, None if slot is None else slot.detach(), cap)
    base = np.frombuffer(m, np.uint8, count=n)
    weakref.finalize(base, _release_slot, view.busy, i)
    return _columns(base, layout)


def _rebuild(dupfd, n, layout):
    return _rebuild_fd(dupfd.detach(), n, layout)


def _rebuild_fd(fd, n, layout):
    """The batch {column: tensor views of memfd fd's mapping} (fd is closed here)."""
    try:
        base = np.frombuffer(mmap.mmap(fd, n, mmap.MAP_SHARED | _POPULATE), np.uint8) \
            if n else np.empty(0, np.uint8)
    finally:
        os.close(fd)
    return _columns(base, layout)


def _columns(base, layout):
    """{column: value} from a layout (_SharedAnswer.spec's) over the answer's bytes base (a
    numpy uint8 array: every tensor made here holds it, so a finalizer on it runs once the
    last of them is gone)."""
    return {k: _build(base, sp) for k, sp in layout.items()}


# Module level, not a closure in _columns: a recursive closure is a reference cycle holding
# base, and a ring slot would then stay taken until the garbage collector ran.
# One torch.frombuffer per column buffer: the main process builds every batch's tensors, and
# slicing a uint8 tensor, viewing it as the type, then as the shape (with numpy sizing it)
# cost 10 us a buffer against 1 here (docs/performance.md, "The DataLoader, closer").
def _build(base, sp):
    if sp[0] == "n":
        return None
    if sp[0] == "o":
        return sp[1]
    if sp[0] == "r":
        return Ragged(_build(base, sp[2]), _build(base, sp[3]), _build(base, sp[4]), sp[1])
    _, off, dt, shape = sp
    t = torch.frombuffer(base, dtype=_TORCH_BY_STR[dt], count=math.prod(shape), offset=off)
    return t if len(shape) == 1 else t.view(shape)


def _to_torch(v):
    """numpy column -> tensor when it is numeric (masked values filled with 0; ask for a
    validity column if nulls matter; uint16 and uint32 widened to int32 and int64, uint64
    left a numpy array: torch has no unsigned types but uint8); a Ragged's values and offsets (and validity) become
    tensors; anything else (object arrays of take's other columns) is left as it is."""
    if isinstance(v, Ragged):
        values = v.values if isinstance(v.values, Ragged) else _to_torch(v.values)
        return Ragged(values, _to_torch(v.offsets), None if v.validity is None else _to_torch(v.validity), v.kind)
    if isinstance(v, np.ma.MaskedArray):
        v = v.filled(0)
    if isinstance(v, np.ndarray) and v.dtype in _WIDER:  # torch 1.13 has no uint16/32/64
        v = v.astype(_WIDER[v.dtype])
    if isinstance(v, np.ndarray) and v.dtype.kind in "biuf" and v.dtype != np.uint64:
        if not v.flags.writeable:  # a view of read-only bytes; torch wants writable memory
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
    persistent_workers a map-style DataLoader's workers keep the version they started with,
    batches()'s follow: its set_epoch publishes the version to them).

    dataset[i] is one row, {column: value}; dataset[[i, j, ...]] and __getitems__ fetch many
    rows with one request. __getitems__ (called by DataLoader's automatic batching where torch
    has it) returns a list of rows for the collate function. Without collation:
    DataLoader(ds, batch_size=None, sampler=ds.batch_sampler(256, shuffle=True)), where each
    item is a whole batch {column: tensor of batch rows}; the fastest path is ds.batches(),
    which keeps several requests in flight per worker. transform, if given, is applied to what
    is returned: a row, or a batch for a list of indices."""

    def __init__(self, url, path, columns, transform=None, version=None, refresh_each_epoch=False):
        self.client = url if isinstance(url, Client) else Client(url)
        self.path, self.columns = path, list(columns) if columns else None
        self.transform = transform
        self.follow = version == "latest"
        self.version = None if self.follow else version
        self._caller_pin = None if self.follow else version  # a number or tag the caller named
        self.refresh_each_epoch = refresh_each_epoch
        self._len = None
        # Shared-memory slots per DataLoader worker (_Ring): batches in flight in the worker,
        # queued in DataLoader (prefetch_factor, 2 by default) and held by the training loop.
        self._ring_slots = 8

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

    def _batch(self, indices, whole=False):
        """{column: tensor or Ragged} of rows indices; whole: the batch goes out as it is (no
        transform, no split into rows), so in a DataLoader worker it may be a _SharedAnswer."""
        len(self)  # the version pinned first
        version = None if self.follow else self.version
        if not whole:
            cols = self.client.take_arrays(self.path, indices, self.columns, version)
            return {k: _to_torch(v) for k, v in cols.items()}
        # A whole batch is read straight into a free slot of this process's ring, else into
        # this thread's buffer (then copied into a memfd of its own). In a DataLoader worker it
        # goes to the main process in it (_SharedAnswer); read here, it is the batch's memory
        # (_SharedAnswer.own), as for batches().
        alloc = _SlotAlloc(_process_ring(self._ring_slots))
        try:
            cols = self.client.take_arrays(self.path, indices, self.columns, version, buffer=alloc)
        except BaseException:
            alloc.drop()
            raise
        shared = alloc.answer(cols)
        if shared is None:  # no Arrow answer (every column came another way)
            return {k: _to_torch(v) for k, v in cols.items()}
        return shared if torch.utils.data.get_worker_info() is not None else shared.own()

    def __getitem__(self, index):
        if isinstance(index, (list, tuple, np.ndarray, torch.Tensor)):
            batch = self._batch([int(i) for i in index], whole=self.transform is None)
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


    def batches(self, batch_size, shuffle=False, drop_last=False, prefetch=4, rank=None,
                world_size=None, seed=0):
        """The fastest way to feed a training loop: an iterable of whole batches
        {column: tensor or Ragged} for DataLoader(..., batch_size=None, num_workers=W).
        DataLoader worker w reads batches w, w + W, w + 2W, ... of batch_sampler's order (same
        arguments; set_epoch(e) on what this returns before each epoch when distributed or
        shuffled with a seed), keeping up to prefetch requests in flight, pipelined on one
        connection, so it never waits a round trip between batches; batches come in order."""
        return LancedBatches(self, self.batch_sampler(batch_size, shuffle, drop_last, rank=rank,
                                                      world_size=world_size, seed=seed), prefetch)


class LancedBatches(torch.utils.data.IterableDataset):
    """Batches of a LancedDataset in a BatchSampler's order, prefetched (see
    LancedDataset.batches)."""

    def __init__(self, dataset, sampler, prefetch=4):
        if prefetch < 1:
            raise ValueError("prefetch must be at least 1")
        self.dataset, self.sampler, self.prefetch = dataset, sampler, prefetch
        dataset._ring_slots = min(prefetch + 6, _Ring._MAX_SLOTS)
        # What set_epoch decides, in shared memory: DataLoader's persistent workers keep the
        # copy of this object they started with, and read the epoch (and with
        # refresh_each_epoch the version and its row count) here as each epoch starts.
        # Before, set_epoch never reached them: every epoch drew epoch 0's order.
        self._shared = multiprocessing.RawArray("q", 3)  # epoch, rows, version (-1: none)
        self._publish()
        # (pid, the epoch foreseen, its pipeline, its buffer, its batches, _ReadAhead): _predict
        self._carry = None
        self._last = None  # (pid, the last epoch's key)
        self._epochs_set = False  # set_epoch was called: loader()'s stream foresees e + 1

    def _publish(self):
        v = self.dataset.version
        self._shared[:] = [self.sampler.epoch, self.sampler.n, v if type(v) is int else -1]

    def __getstate__(self):
        state = dict(self.__dict__)
        if multiprocessing.context.get_spawning_popen() is None:
            # Pickled other than to start a worker: shared memory cannot go along, a copy does.
            state["_shared"] = list(self._shared)
        state["_carry"] = state["_last"] = None  # a pipeline in flight is this process's own
        return state

    def _follow_main(self):
        """In a worker: the epoch, rows and version the main process last published."""
        self._adopt(*self._shared[:])

    def _adopt(self, epoch, n, version):
        """The epoch, rows and version (-1: none) the main process published, taken here."""
        self.sampler.epoch, self.sampler.n = epoch, n
        if version >= 0 and not self.dataset.follow:
            self.dataset.version, self.dataset._len = version, n

    def set_epoch(self, epoch):
        """The epoch to draw the next order for; with refresh_each_epoch, also moves to the
        newest version here, in the main process, so the workers all read the same one
        (persistent workers too: they read both from shared memory as the epoch starts)."""
        self.sampler.set_epoch(epoch)
        self._epochs_set = True
        if self.dataset.refresh_each_epoch:
            self.sampler.n = self.dataset.refresh()
        self._publish()

    def __len__(self):
        return len(self.sampler)

    def _stream_key(self):
        """What an epoch read as part of loader()'s stream is: (epoch, rows, version), or None
        where the next epoch cannot be foreseen (a version that follows the newest, a count
        redone each epoch, an order drawn from the caller's generator, no batches at all)."""
        ds, s = self.dataset, self.sampler
        if ds.follow or ds.refresh_each_epoch or not len(self):
            return None
        if s.shuffle and s.generator is not None and s.world_size is None:
            return None
        len(ds)  # the version pinned first
        v = ds.version
        if v is not None and type(v) is not int:
            return None
        return (s.epoch, s.n, -1 if v is None else v)

    def loader(self, num_workers=2, **kwargs):
        """A torch DataLoader over these batches as they are meant to be read: whole batches
        (batch_size=None), num_workers worker processes kept from epoch to epoch, which read
        the epochs as one stream (the next epoch's batches asked for behind this one's, with
        no hand-over between them; set_epoch reaches them: _EpochLoader), queues without
        feeder threads (loader_context). len() is the batches of an epoch. kwargs go to
        DataLoader and override these."""
        if num_workers > 0:
            kwargs.setdefault("persistent_workers", True)
            kwargs.setdefault("multiprocessing_context", loader_context())
        return _EpochLoader(self, num_workers, **kwargs)

    def __iter__(self):
        info = torch.utils.data.get_worker_info()
        wid, nw = (info.id, info.num_workers) if info else (0, 1)
        if info is not None:
            self._follow_main()
        ds = self.dataset
        len(ds)  # the version pinned first
        version = None if ds.follow else ds.version
        # Each answer is read straight into a slot of this process's ring. In a worker (without
        # a transform, which runs there) the batch goes to the main process in its slot. Read
        # here, the slot is the batch's memory, reused once its last tensor dies: a fresh
        # bytearray per answer (zeroed, then faulted in page by page, then unmapped) cost a
        # process reading 6 MB batches itself a quarter of its rate (docs/performance.md, "The
        # DataLoader's reads without DataLoader").
        handover = info is not None and ds.transform is None
        shared = handover or info is None
        key = (self.sampler.epoch, self.sampler.n, version, wid, nw, shared)
        answers, alloc, mine, first = self._carried(key)
        if mine is None:
            mine = self._mine(self.sampler.epoch, wid, nw)
        if answers is None:
            # One connection, prefetch requests pipelined on it (Client.take_arrays_iter): the
            # daemon works on the next batches while this worker reads the last, with no
            # thread pool (threads contend for the GIL on every read, and a wake-up is a
            # hypervisor exit here).
            alloc = _SlotAlloc(_process_ring(ds._ring_slots)) if shared else None
            feed = _Feed()
            feed.add(mine)
            answers = (feed, ds.client.take_arrays_iter(ds.path, feed, ds.columns, version, alloc,
                                                        self.prefetch))
        nxt = self._predict(key)
        if nxt is not None:  # the next epoch's first batches go out as this one's last come in
            nxt_mine = self._mine(nxt[0], wid, nw)
            answers[0].add(nxt_mine)
        kept = False
        try:
            for _ in range(len(mine)):
                if first is not None:  # read while DataLoader handed the epoch over
                    (cols, answer), first = first, None
                else:
                    cols = next(answers[1])
                    answer = alloc.answer(cols) if shared else None
                yield _item(ds, cols, answer, handover)
            if nxt is not None:
                ahead = _ReadAhead(answers, alloc, shared) if nxt_mine else None
                self._carry, kept = (os.getpid(), nxt, answers, alloc, nxt_mine, ahead), True
            else:
                next(answers[1], None)  # the pipeline ends with every request answered
        finally:
            if not kept:
                answers[1].close()
                if alloc is not None:
                    alloc.drop()

    def _stream(self, wid, nw, epoch, step):
        """A DataLoader worker's batches of epochs epoch, epoch + step, epoch + 2 step, ...
        without end (loader()'s stream, _EpochLoader): the epochs' batches numbered on, one
        after another, and this worker's those numbered wid, wid + nw, ... (the order in which
        DataLoader hands out its tasks, so the main process gets them in order, each epoch's
        after the last one's). One pipeline for all of them: no epoch edge to wait at."""
        ds = self.dataset
        per = len(self.sampler)
        assert per > 0  # _stream_key: no stream without batches (it would spin yielding nothing)

        def shares():
            q = 0
            while True:
                yield _Share(self.sampler, epoch + q * step, (wid - q * per) % nw, nw)
                q += 1
        handover = ds.transform is None
        alloc = _SlotAlloc(_process_ring(ds._ring_slots))
        answers = ds.client.take_arrays_iter(ds.path, itertools.chain.from_iterable(shares()), ds.columns,
                                             ds.version, alloc, self.prefetch)
        try:
            for cols in answers:
                yield _item(ds, cols, alloc.answer(cols), handover)
        finally:
            answers.close()
            alloc.drop()

    def _mine(self, epoch, wid, nw):
        """This worker's batches of epoch's order. Every worker draws the same order (the
        sampler's, from its seed and epoch; an unseeded shuffle would differ per worker, so
        batches() seeds it) and keeps its share."""
        return _Share(self.sampler, epoch, wid, nw)

    # Epochs back to back. A training loop over a small table runs many short epochs (20
    # batches of 256 for 5,000 rows), and each began with an empty pipeline: a round trip
    # and the daemon's work on the first batches waited for. On the bench table the gaps at
    # epoch edges were 12 % of the DataLoader's time, 8 % with this (what is left is
    # DataLoader's own hand-over between epochs). So a worker that has seen an epoch follow
    # another (persistent workers, or the main process iterating again) asks for the next
    # epoch's first batches behind this epoch's last, as the epochs have moved so far
    # (set_epoch(e + 1) each time, or never), and keeps them in flight. The next epoch uses
    # them only if it is the one foreseen (epoch, rows, version, this worker's share): then
    # its requests are the same, and so are the answers of a pinned version. Otherwise the
    # connection is closed and the answers dropped: up to prefetch - 1 batches of the
    # daemon's work lost, as after the last epoch. A version that follows the newest
    # ("latest") is never foreseen, nor is an order drawn from a caller's generator.
    def _predict(self, key):
        last, self._last = self._last, (os.getpid(), key)
        if self.dataset.follow or (self.sampler.shuffle and self.sampler.generator is not None
                                   and self.sampler.world_size is None):
            return None
        if last is None or last[0] != os.getpid() or last[1][1:] != key[1:]:
            return None
        step = key[0] - last[1][0]
        return (key[0] + step,) + key[1:] if step in (0, 1) else None

    def _carried(self, key):
        """The pipeline kept from the last epoch, (feed, answers), its buffer, this worker's
        batches of the epoch (drawn when they were foreseen: not drawn twice) and the first
        of them as _ReadAhead read it ((columns, shared answer or None), or None), if it was
        foreseen for key; four Nones otherwise (a pipeline foreseen wrongly is closed, and
        the answer read ahead dropped)."""
        carry, self._carry = self._carry, None
        if carry is None or carry[0] != os.getpid():  # a fork's child: the parent's to close
            return None, None, None, None
        _, foreseen, answers, alloc, mine, ahead = carry
        if foreseen == key:
            try:
                return answers, alloc, mine, ahead.take() if ahead is not None else None
            except BaseException:
                answers[1].close()
                if alloc is not None:
                    alloc.drop()
                raise
        if ahead is not None:
            ahead.cancel()
        answers[1].close()
        if alloc is not None:
            alloc.drop()
        return None, None, None, None


_owned_iters = {}


def _owned_iter(base):
    """DataLoader's multiprocessing iteration, shut down only by the process that made it.

    Why: a loader left unreachable in a reference cycle (an exception's traceback holding it,
    say) lives on until the garbage collector runs, and every process forked meanwhile (the
    next loader's workers) holds a copy of it. Collected there, torch's finalizer shut the
    loader's workers down from that child: it set their shared done event and wrote each a
    stop message through this module's queues, which write in the caller (_DirectQueue), so
    the child held the queue's shared write lock while it waited on a pipe nobody read, and
    the loader's own process then waited for that lock for ever when it collected the loader
    (seen once in the test suite: a full run hung in gc.collect())."""
    cls = _owned_iters.get(base)
    if cls is None:
        def __init__(self, loader):
            self._owner = os.getpid()
            base.__init__(self, loader)

        def _shutdown_workers(self):
            if getattr(self, "_owner", None) == os.getpid():
                base._shutdown_workers(self)
        cls = _owned_iters.setdefault(base, type("Owned" + base.__name__, (base,), {
            "__init__": __init__, "_shutdown_workers": _shutdown_workers, "__module__": __name__}))
    return cls


def _item(ds, cols, answer, handover):
    """What a batch read by a LancedBatches' iteration becomes: its shared answer as it is when
    it goes to the main process (handover), else the batch here, the slot's tensors (or the
    columns converted, when no Arrow answer came), transformed if ds says so."""
    if answer is not None and handover:
        return answer
    batch = answer.own() if answer is not None else {k: _to_torch(v) for k, v in cols.items()}
    return ds.transform(batch) if ds.transform else batch


class _EpochStream(torch.utils.data.IterableDataset):
    """What _EpochLoader's workers iterate: a LancedBatches' epochs as one stream (its
    _stream), from the epoch, rows, version and step the main process published here before
    it (re)started the workers' iteration; or, with step -1 published, the LancedBatches
    itself, an epoch at a time (what DataLoader does with it)."""

    def __init__(self, batches):
        self.batches = batches
        self._shared = multiprocessing.RawArray("q", 4)  # epoch, rows, version, step
        self._shared[3] = -1

    def publish(self, key, step):
        self._shared[:] = list(key) + [step] if key is not None else [0, 0, -1, -1]

    def __getstate__(self):
        state = dict(self.__dict__)
        if multiprocessing.context.get_spawning_popen() is None:
            state["_shared"] = list(self._shared)  # as LancedBatches.__getstate__
        return state

    def __iter__(self):
        info = torch.utils.data.get_worker_info()
        epoch, n, version, step = self._shared[:]
        if info is None or step < 0:
            return iter(self.batches)
        self.batches._adopt(epoch, n, version)
        return self.batches._stream(info.id, info.num_workers, epoch, step)


class _EpochLoader(torch.utils.data.DataLoader):
    """LancedBatches.loader()'s DataLoader: with persistent workers, the epochs are one stream.

    Why: DataLoader ends an epoch of an IterableDataset when every worker has run out, and
    starts the next with a round trip to each worker (resume, acknowledge) before it hands
    out the first task; meanwhile the workers read nothing and the daemon, their pipelines
    answered, waits too. On the bench's 5,000-row table (20 batches of 256 an epoch) epochs
    five times as long gave the DataLoader 4-15 % more rows a second at the same CPU per
    batch (docs/performance.md, "Epochs as one stream"). So the workers read epoch after epoch
    without an end (LancedBatches._stream), asking for the next epoch's batches behind this
    one's, and each iteration of this loader takes len(batches) batches from that stream.

    The stream reads ahead the epoch it foresees: the same (epoch, rows, version) with
    set_epoch(e + 1) before each epoch (once set_epoch has been called) or the same epoch
    again (never called), or what the last two epochs showed. An epoch that is not the one
    foreseen (set_epoch jumped, an epoch left before its end, an error) restarts the workers'
    iteration as DataLoader does each epoch (what they read ahead is dropped): its batches
    are the sampler's order for that epoch all the same. Without a foreseeable next epoch
    (version="latest", refresh_each_epoch, a caller's generator) or without persistent
    workers, it is DataLoader as it comes, an epoch at a time."""

    def __init__(self, batches, num_workers, **kwargs):
        self._stream_ds = _EpochStream(batches)
        super().__init__(self._stream_ds, batch_size=None, num_workers=num_workers, **kwargs)
        self._batches = batches
        self._live = None  # the DataLoader iteration the stream is read from
        self._next = None  # the key of the epoch the stream holds next; None: restart it
        self._last = None  # the key of the epoch read last
        self._step = None
        self._turn = 0  # iterations begun: only the latest one's end says what comes next

    def __len__(self):
        return len(self._batches)

    def _get_iterator(self):
        base = getattr(torch.utils.data.dataloader, "_MultiProcessingDataLoaderIter", None)
        if self.num_workers == 0 or base is None:
            return super()._get_iterator()
        self.check_worker_number_rationality()
        return _owned_iter(base)(self)

    def __iter__(self):
        b = self._batches
        key = b._stream_key() if self.num_workers > 0 and self.persistent_workers else None
        foreseen, self._next = self._next, None
        self._turn += 1
        if key is None:
            self._live = None
            self._stream_ds.publish(None, -1)
            return super().__iter__()
        if self._live is None or key != foreseen:
            last = self._last
            # The step the epochs move by: what the last two showed, else 1 once set_epoch
            # has been called (a training loop sets each epoch), else 0 (the same order).
            if last is not None and last[1:] == key[1:] and key[0] - last[0] in (0, 1):
                self._step = key[0] - last[0]
            elif self._step is None:
                self._step = 1 if b._epochs_set else 0
            self._stream_ds.publish(key, self._step)
            self._live = super().__iter__()  # the workers' iteration (re)started
        self._last = key
        return self._epoch(self._live, len(b), key, self._turn)

    def _epoch(self, live, n, key, turn):
        # The batches straight from the iteration's _next_data where torch has it: its
        # __next__ adds a profiler scope (record_function, a tensor made and two operator
        # calls) around each batch, 65 us of the main process's 430 per batch in place.
        take = getattr(live, "_next_data", None) or live.__next__
        got = 0
        while got < n:
            try:
                item = take()
            except StopIteration:
                raise RuntimeError("lanced: the DataLoader workers' stream of batches ended") from None
            got += 1
            yield item
        if turn == self._turn:  # read to its end, and no iteration since: the next epoch is next
            self._next = (key[0] + self._step,) + key[1:]


class _ReadAhead:
    """The next epoch's first answer, read while the worker waits for DataLoader to start that
    epoch. Between two epochs a worker sends DataLoader its end-of-epoch mark and waits for
    the main process to start the next epoch (a round trip through both queues), then for an
    index, and only then asked its pipeline for an answer: the answer the daemon had ready
    waited in the socket meanwhile, and as both workers start an epoch at the same moment,
    the main process waited a whole worker's read of 6 MB for the epoch's first batch. On the
    bench table (20 batches an epoch) the epoch edges were 12 % of the loader's time.

    So the read is queued as idle work (_idle_work), which a worker's DataLoader queue
    (_DirectQueue, loader_context's) starts when the worker is about to wait for its next
    message, once the end-of-epoch mark is out; the read runs in a thread, once per epoch,
    so that the worker's own thread answers the main process meanwhile. Started as the epoch
    ended, the thread delayed the end-of-epoch mark by a millisecond (a thread start, the
    GIL); run in the worker's own thread at the idle moment, the read delayed its answer to
    the next epoch's start by two milliseconds. With other queues (torch's own) nothing
    starts it, and take() reads the answer when it is needed, as before."""

    def __init__(self, answers, alloc, shared):
        self.answers, self.alloc, self.shared = answers, alloc, shared
        self.item, self.error, self.thread, self.taken = None, None, None, False
        _idle_work.append((os.getpid(), self))

    def run(self):
        """Starts the read, in a thread of its own, unless it was started or done already."""
        if self.thread is None and not self.taken:
            self.thread = threading.Thread(target=self._read, name="lanced-read-ahead", daemon=True)
            self.thread.start()

    def _read(self):
        try:
            cols = next(self.answers[1])
            self.item = (cols, self.alloc.answer(cols) if self.shared else None)
        except BaseException as ex:  # said by take(), in the generator that needs the answer
            self.error = ex

    def take(self):
        """(columns, shared answer or None) of the answer, read now if it was not yet; the
        reading's error, raised here."""
        if self.thread is None:
            self._read()
        else:
            self.thread.join()
        self.taken = True  # the pipeline is the generator's again: run() must not start it
        if self.error is not None:
            raise self.error
        return self.item

    def cancel(self):
        """The epoch foreseen did not come: a read under way is waited for and its answer
        dropped (its slot freed with it); one not started never starts."""
        self.taken = True
        if self.thread is not None:
            self.thread.join()
        self.item = self.error = None


_idle_work = []  # (pid, task): what a worker does when it would otherwise wait (_run_idle_work)


def _run_idle_work():
    """Runs this process's idle work (a fork's child drops what its parent queued)."""
    while _idle_work:
        pid, task = _idle_work.pop(0)
        if pid == os.getpid():
            task.run()


class _Feed:
    """The id lists a worker's pipeline sends, which a new epoch's may be appended to while it
    runs (LancedBatches._predict): iterables of lists (_Share), each list made as it is sent."""

    def __init__(self):
        self.parts = collections.deque()

    def add(self, batches):
        self.parts.append(iter(batches))

    def __iter__(self):
        return self

    def __next__(self):
        while self.parts:
            got = next(self.parts[0], None)
            if got is not None:
                return got
            self.parts.popleft()
        raise StopIteration


class _SlotAlloc:
    """A take_arrays buffer callable for one answer at a time: a free slot of ring, else this
    thread's buffer; answer(cols) hands it over to a _SharedAnswer (a slot as it is, the buffer
    copied into a memfd of its own), None when nothing was asked for. Asked again before that
    (the answer is read again after a dropped connection), it frees what it gave."""

    def __init__(self, ring):
        self.ring, self.slot, self.buf = ring, None, None

    def __call__(self, n):
        self.drop()
        taken = self.ring.take(n)
        if taken is None:
            self.buf = _answer_buffer(n)
            return self.buf
        self.slot, self.buf = taken
        return self.buf

    def answer(self, cols):
        if self.buf is None:
            return None
        a = _SharedAnswer(self.buf, len(self.buf), cols, self.slot,
                          self.ring if self.slot is not None else None)
        self.slot, self.buf = None, None
        return a

    def drop(self):
        if self.slot is not None:
            self.ring.release(self.slot)
        self.slot, self.buf = None, None


class _DirectQueue(multiprocessing.queues.Queue):
    """A multiprocessing.Queue whose put() pickles the object and writes it to the pipe itself,
    under the queue's write lock, where Queue's hands it to a feeder thread that does both.

    Why: DataLoader passes every batch through two queues, its index to a worker and the batch
    back, and each put woke the putting process's feeder thread: two thread wake-ups per batch
    (each a context switch, and across the two vCPUs of the bench machine an interrupt between
    processors, a hypervisor exit), on CPUs the workers share with the daemon. Written directly,
    the loader's processes spent 0.2-0.3 ms less CPU per batch of 256 rows, and in paired
    runs the DataLoader answered 3-8 % more batches a second (docs/performance.md, "The
    DataLoader's queues and epoch edges").

    What changes: put() returns once the message is in the pipe, so it waits while the pipe is
    full (64 KiB), as SimpleQueue's does, where Queue's returned at once. In DataLoader the
    messages are small (an index; a batch handed over by _SharedAnswer or torch's shared
    memory is a few hundred bytes of handles) and at most prefetch_factor per worker are
    outstanding, so the pipe does not fill. The writing end is non-blocking, so a writer that
    does wait polls, and every _WAIT_CHECK_S asks whether the reader can still come: a worker
    whose main process has exited (_maker_gone) raises BrokenPipeError instead of waiting
    forever. Messages are framed as multiprocessing.connection frames them (a big-endian
    length, then the pickle), so get() is Queue's own."""

    _WAIT_CHECK_S = 1.0
    _SMALL = 1 << 14  # frames up to this size are joined into one write (Connection's rule)

    def __init__(self, maxsize=0, *, ctx):
        super().__init__(maxsize, ctx=ctx)
        # Every process holding the writing end shares this flag (one open file description):
        # only _DirectQueue.put writes to it, and it never blocks.
        os.set_blocking(self._writer.fileno(), False)

    def put(self, obj, block=True, timeout=None):
        if self._closed:
            raise ValueError("Queue %r is closed" % self)
        if not self._sem.acquire(block, timeout):
            raise queue.Full
        data = multiprocessing.reduction.ForkingPickler.dumps(obj)
        n = len(data)
        head = struct.pack("!i", n) if n <= 0x7fffffff else struct.pack("!iQ", -1, n)
        parts = (head + data,) if n <= self._SMALL else (head, data)
        if self._wlock is None:
            self._write(parts)
        else:
            with self._wlock:  # a frame is written whole before another writer's begins
                self._write(parts)

    def get(self, block=True, timeout=None):
        # About to wait for a message and none is here yet: first the work queued for such a
        # moment (_ReadAhead: the next epoch's first answer, while DataLoader starts it).
        if block and _idle_work and not self._poll():
            _run_idle_work()
        if self._closed or not block or timeout is None:
            return super().get(block, timeout)
        # Queue.get's timed wait, on a poll object kept for the queue: Queue's asks
        # multiprocessing.connection.wait, which builds, fills and closes a selector on
        # every call, and DataLoader waits so twice per batch (the main process for the
        # batch, the worker for its next task). Otherwise as Queue.get.
        deadline = time.monotonic() + timeout
        if not self._rlock.acquire(True, timeout):
            raise queue.Empty
        try:
            if not self._readable(deadline - time.monotonic()):
                raise queue.Empty
            res = self._recv_bytes()
            self._sem.release()
        finally:
            self._rlock.release()
        return multiprocessing.reduction.ForkingPickler.loads(res)

    def _readable(self, timeout):
        """Whether the reading end has a message (or an end) within timeout seconds."""
        poller = getattr(self, "_poller", None)
        if poller is None or poller[0] != os.getpid():  # made in each process that reads
            p = select.poll()
            p.register(self._reader.fileno(), select.POLLIN)
            poller = self._poller = (os.getpid(), p)
        return bool(poller[1].poll(max(0, math.ceil(timeout * 1000))))

    def _write(self, parts):
        fd = self._writer.fileno()
        for part in parts:
            view = memoryview(part)
            while view:
                try:
                    view = view[os.write(fd, view):]
                except BlockingIOError:
                    self._wait_writable(fd)

    def _wait_writable(self, fd):
        while not select.select((), (fd,), (), self._WAIT_CHECK_S)[1]:
            if self._maker_gone():
                raise BrokenPipeError("lanced: the process reading this queue (pid %d) is gone"
                                      % self._opid)

    def _maker_gone(self):
        """Whether the process that made the queue, its reader when another process writes
        (DataLoader's main process, for its result queue), has exited. The maker itself writes
        to a worker's index queue and waits as a blocking write would."""
        if os.getpid() == self._opid or os.getppid() == self._opid:
            return False  # the maker, or its child while it lives (fork, spawn)
        try:  # reparented, or started by a forkserver: the maker's pid says
            os.kill(self._opid, 0)
        except ProcessLookupError:
            return True
        except PermissionError:
            pass
        return False


def _direct_queue(self, maxsize=0):
    return _DirectQueue(maxsize, ctx=self.get_context())


_direct_contexts = {}


def loader_context(method=None):
    """A multiprocessing context for DataLoader(multiprocessing_context=...): the start method
    `method` ("fork", "spawn", "forkserver"; None: the default one), with queues that write
    each message to their pipe directly instead of through a feeder thread (_DirectQueue).
    LancedBatches.loader() uses it."""
    base = type(multiprocessing.get_context(method))
    cls = _direct_contexts.get(base)
    if cls is None:  # setdefault: two threads here keep one class
        cls = _direct_contexts.setdefault(base, type("Direct" + base.__name__, (base,),
                                                     {"Queue": _direct_queue, "__module__": __name__}))
    return cls()


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

    # An epoch's order is range(n) unshuffled and a tensor of 4-byte indices (8 past 2**31 rows)
    # shuffled, sharded and cut into batches by slicing: only the batch being handed out is a
    # list. It was a list of Python ints, 36 bytes a row, made whole in every DataLoader worker
    # at each epoch (and by len()): 0.8 s and about 460 MB for 10 million rows, per worker.
    def _order(self, epoch=None):
        if not self.shuffle:
            return range(self.n)
        g = self.generator
        if g is None or self.world_size is not None:  # distributed: the same order on every rank
            g = torch.Generator()
            g.manual_seed(self.seed + (self.epoch if epoch is None else epoch))
        # int32 draws the same permutation as int64 from the same generator state
        return torch.randperm(self.n, generator=g, dtype=torch.int32 if self.n < 1 << 31 else torch.int64)

    def _span(self):
        """This rank's rows [lo, hi) of each epoch's order."""
        if self.world_size is None:
            return 0, self.n
        return self.rank * self.n // self.world_size, (self.rank + 1) * self.n // self.world_size

    def _shard(self, order):
        lo, hi = self._span()
        return order if (lo, hi) == (0, self.n) else order[lo:hi]

    def __iter__(self):
        if self.dataset is not None and self.dataset.refresh_each_epoch:
            self.n = self.dataset.refresh()  # the newest version, counted, for this epoch
        return self._batches()

    def _batches(self, epoch=None):
        yield from _Share(self, epoch, 0, 1)  # the order drawn at the first batch, as before

    def _count(self, rows):
        """Batches in rows rows (the last one short unless drop_last)."""
        return rows // self.batch_size if self.drop_last else -(-rows // self.batch_size)

    def __len__(self):
        lo, hi = self._span()
        return self._count(hi - lo)


def _id_list(rows):
    """A batch's ids as a list of Python ints, from a slice of an order (range or tensor)."""
    return list(rows) if isinstance(rows, range) else rows.tolist()


class _Share:
    """A DataLoader worker's batches of one epoch: batches wid, wid + nw, wid + 2 nw, ... of the
    sampler's (all of them for wid 0 of 1: the sampler's own iteration), each made a list as it
    is asked for. Shuffled, one of several workers keeps a copy of its own batches' ids (4 bytes
    a row), not the epoch's whole order."""

    def __init__(self, sampler, epoch, wid, nw):
        rows = sampler._shard(sampler._order(epoch))
        self.bs, m = sampler.batch_size, len(rows)
        full, total = m // self.bs, sampler._count(m)
        self.picks = range(wid, total, nw)  # which of the epoch's batches are this worker's
        self.rows = self.grid = self.tail = None
        if isinstance(rows, range):
            self.rows = rows  # unshuffled: sliced as asked, nothing held
        else:  # one of several workers copies its batches out, so the whole order can go
            self.grid = rows[:full * self.bs].view(full, self.bs)[wid::nw]
            if total > full and (total - 1) % nw == wid:  # the short last batch is this worker's
                self.tail = rows[full * self.bs:]
            if nw > 1:
                self.grid = self.grid.clone()
                self.tail = None if self.tail is None else self.tail.clone()

    def __len__(self):
        return len(self.picks)

    def __iter__(self):
        if self.rows is not None:
            for k in self.picks:
                yield _id_list(self.rows[k * self.bs:(k + 1) * self.bs])
            return
        for row in self.grid:
            yield row.tolist()
        if self.tail is not None:
            yield self.tail.tolist()
