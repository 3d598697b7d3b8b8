"""Samples/s through torch's DataLoader(num_workers=2, batch_size=256) over a dataset served
by lanced: lanced.torch.LancedDataset.batches (Arrow answers read into numpy, prefetched;
through LancedBatches.loader()'s queues, or --queues feeder: multiprocessing's) against the
same loop fed by JSON rows. Prints one JSON result line per run. Run by bench/run.sh and
bench/training.sh (make bench); by hand:
  /usr/bin/python3 bench/torch_loader.py --url http://127.0.0.1:8080 --path vectors.lance \\
      --columns v --feed arrow --seconds 10"""
import argparse
import json
import os
import sys
import time

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


def run(args):
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
    samples, t0 = 0, time.monotonic()
    deadline = t0 + args.seconds
    first = None
    while time.monotonic() < deadline:
        for b in dl:
            if first is None:  # the workers' start-up is not a sample rate
                first, samples, t0 = True, 0, time.monotonic()
                continue
            samples += len(next(iter(b.values())))
            if time.monotonic() >= deadline:
                break
    secs = time.monotonic() - t0
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
    p.add_argument("--queues", choices=["direct", "feeder"], default="direct",
                   help="DataLoader's queues: lanced.torch.loader_context's, or multiprocessing's")
    p.add_argument("--batch", type=int, default=256)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--seconds", type=float, default=10)
    print(json.dumps(run(p.parse_args())))


if __name__ == "__main__":
    main()
