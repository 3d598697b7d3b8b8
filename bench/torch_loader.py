"""Samples/s through torch's DataLoader(num_workers=2, batch_size=256) over a dataset served
by lanced: lanced.torch.LancedDataset.batches (Arrow answers read into numpy, prefetched;
through LancedBatches.loader()'s queues, or --queues feeder: multiprocessing's) against the
same loop fed by JSON rows. --queues none reads the same batches without DataLoader: --workers
processes, each iterating its rank's shard of every epoch itself (what a worker does, less the
hand-over to a main process). Prints one JSON result line per run. Run by bench/run.sh and
bench/training.sh (make bench); by hand:
  /usr/bin/python3 bench/torch_loader.py --url http://127.0.0.1:8080 --path vectors.lance \\
      --columns v --feed arrow --seconds 10"""
import argparse
import json
import os
import sys
import time
import traceback

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "clients", "python"))
import torch  # noqa: E402
import torch.utils.data  # noqa: E402

from lanced.torch import LancedDataset, _to_torch  # noqa: E402


class JsonFedDataset(LancedDataset):
    """The same dataset, fed by JSON rows (POST /files/<path>/rows, format=json): what a
    client without the protobuf tensors does, numbers parsed from text."""

    def _batch(self, indices, whole=False):
        cols = self.client._take_json(self.path, indices, self.columns, self.version)
        out = {}
        for k, v in cols.items():
            first = v[0] if len(v) else None
            if isinstance(first, (int, float, list)):
                out[k] = _to_torch(np.array(v.tolist()))
            else:
                out[k] = v
        return out


def _samples_until(deadline, epoch_batches):
    """Samples in the batches of epoch_batches(0), epoch_batches(1), ... until deadline, counted
    from the first batch on (connections, workers' start-up and the first answer are not a
    sample rate): (samples, seconds)."""
    samples, t0, first, epoch = 0, time.monotonic(), True, 0
    while time.monotonic() < deadline:
        for b in epoch_batches(epoch):
            if first:
                first, t0 = False, time.monotonic()
                continue
            samples += len(next(iter(b.values())))
            if time.monotonic() >= deadline:
                break
        epoch += 1
    return samples, time.monotonic() - t0


def _bare_process(args, rank, deadline, out):
    """One of --queues none's processes: its shard of each epoch, epoch after epoch, until
    deadline; writes "samples seconds" of what it read after its first batch to out."""
    ds = LancedDataset(args.url, args.path, args.columns.split(","))
    batches = ds.batches(args.batch, shuffle=True, prefetch=args.prefetch, rank=rank,
                         world_size=args.workers)

    def epoch(e):
        batches.set_epoch(e)
        return batches
    os.write(out, b"%d %f\n" % _samples_until(deadline, epoch))


def run_bare(args):
    """The DataLoader's reads without DataLoader: --workers forked processes, one rank each."""
    deadline = time.monotonic() + args.seconds
    rd, wr = os.pipe()
    pids = []
    for rank in range(args.workers):
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                os.close(rd)
                _bare_process(args, rank, deadline, wr)
                code = 0
            except BaseException:
                traceback.print_exc()
            finally:
                os._exit(code)  # a forked child: not the parent's exit handlers
        pids.append(pid)
    os.close(wr)
    failed = [p for p in pids if os.waitpid(p, 0)[1] != 0]
    with os.fdopen(rd) as f:
        got = [line.split() for line in f.read().splitlines()]
    if failed or len(got) != args.workers:
        sys.exit("torch_loader: %d of %d reading processes failed" % (len(failed) or args.workers - len(got),
                                                                      args.workers))
    samples = sum(int(n) for n, _ in got)
    secs = max(float(t) for _, t in got)
    return {"system": "lanced-python", "feed": "arrow", "dataset": args.name or args.path,
            "batch": args.batch, "workers": args.workers, "prefetch": args.prefetch,
            "columns": args.columns, "queues": "none", "samples": samples, "seconds": round(secs, 3),
            "samples_per_s": sum(int(n) / float(t) for n, t in got if float(t) > 0)}


def run(args):
    if args.queues == "none":
        return run_bare(args)
    if args.feed == "arrow":
        ds = LancedDataset(args.url, args.path, args.columns.split(","))
        batches = ds.batches(args.batch, shuffle=True, prefetch=args.prefetch)
        if args.queues == "direct":  # what lanced.torch recommends (LancedBatches.loader)
            dl = batches.loader(num_workers=args.workers)
        else:  # multiprocessing's own queues, a feeder thread each
            dl = torch.utils.data.DataLoader(batches, batch_size=None, num_workers=args.workers,
                                             persistent_workers=True)
    else:
        ds = JsonFedDataset(args.url, args.path, args.columns.split(","))
        dl = torch.utils.data.DataLoader(ds, batch_size=None, num_workers=args.workers,
                                         sampler=ds.batch_sampler(args.batch, shuffle=True),
                                         persistent_workers=True)
    samples, secs = _samples_until(time.monotonic() + args.seconds, lambda e: dl)
    return {"system": "lanced-torch", "feed": args.feed, "dataset": args.name or args.path,
            "batch": args.batch, "workers": args.workers, "prefetch": args.prefetch, "columns": args.columns,
            "queues": args.queues if args.feed == "arrow" else "feeder",
            "samples": samples, "seconds": round(secs, 3),
            "samples_per_s": samples / secs if secs > 0 else 0}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--url", required=True)
    p.add_argument("--path", required=True)
    p.add_argument("--name")
    p.add_argument("--columns", required=True)
    p.add_argument("--feed", choices=["arrow", "json"], default="arrow")
    p.add_argument("--prefetch", type=int, default=4)
    p.add_argument("--queues", choices=["direct", "feeder", "none"], default="direct",
                   help="DataLoader's queues: lanced.torch.loader_context's, or multiprocessing's; "
                        "none: no DataLoader, --workers processes reading for themselves (arrow)")
    p.add_argument("--batch", type=int, default=256)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--seconds", type=float, default=10)
    args = p.parse_args()
    if args.queues == "none" and args.feed != "arrow":
        p.error("--queues none reads Arrow answers (--feed arrow)")
    print(json.dumps(run(args)))


if __name__ == "__main__":
    main()
