"""One rank of the DDP test (test_torch.py): torch.distributed over gloo, the rank's shard of
each epoch read through a DataLoader, every rank's row ids all-gathered and written by rank 0.
Environment: RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT (as torchrun sets them); argv: URL
PATH OUT_JSON HOW, HOW one of
  batches  README's way: ds.batches(..., rank=, world_size=).loader(), one DataLoader whose
           workers live through the epochs, set_epoch before each;
  sampler  a map-style DataLoader over ds.batch_sampler(..., rank=, world_size=), made anew
           each epoch, its workers started by a forkserver. Not forked from the rank: a rank
           has threads (gloo's in C++; in Python the last loader's queue feeders, ending as
           the next loader forks), and a fork while a Python thread holds CPython's
           thread-state lock leaves the child waiting for it for ever in
           PyOS_AfterFork_Child (seen here with Python 3.11, about one run in 30).

Every wait is bounded: a rank that hangs (a rendezvous or a peer that never comes, a DataLoader
worker stuck) prints every thread's stack and exits non-zero, so the test says where it stood
rather than timing out with nothing to show."""
import datetime
import faulthandler
import json
import os
import sys

import torch
import torch.distributed as dist
import torch.utils.data

sys.path.insert(0, os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")))
from lanced.torch import LancedDataset  # noqa: E402


def main():
    faulthandler.dump_traceback_later(120, exit=True)
    url, path, out, how = sys.argv[1:5]
    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=60))
    rank, world = dist.get_rank(), dist.get_world_size()
    ds = LancedDataset(url, path, ["id"])
    if how == "batches":
        sampler = ds.batches(7, shuffle=True, rank=rank, world_size=world, seed=11)
        loader = sampler.loader(num_workers=1, timeout=60)
    else:
        sampler = ds.batch_sampler(7, shuffle=True, rank=rank, world_size=world, seed=11)
    epochs = []
    for epoch in range(2):
        sampler.set_epoch(epoch)
        if how != "batches":
            loader = torch.utils.data.DataLoader(ds, batch_size=None, sampler=sampler, num_workers=1, timeout=60,
                                                 multiprocessing_context="forkserver")
        mine = [int(i) for batch in loader for i in batch["id"]]
        gathered = [None] * world
        dist.all_gather_object(gathered, mine)
        epochs.append(gathered)
    if rank == 0:
        with open(out, "w") as f:
            json.dump({"n": len(ds), "epochs": epochs}, f)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":  # a forkserver's worker imports this file too
    main()
