"""The generated protobuf module (lanced/v1/lanced_pb2), never committed.

An installed package carries it (setup.py runs protoc at build time). Used straight from the
source tree, it is generated from the repository's proto/ on first import into a cache
directory keyed by the .proto's hash, so an edited .proto is never served stale code."""
import hashlib
import importlib.util
import os
import subprocess
import tempfile

_HERE = os.path.dirname(os.path.abspath(__file__))
# clients/python/lanced -> the repository root, where proto/ lives
_PROTO_ROOT = os.path.normpath(os.path.join(_HERE, "..", "..", "..", "proto"))
_PROTO = os.path.join("lanced", "v1", "lanced.proto")


def _generate(out_dir):
    os.makedirs(out_dir, exist_ok=True)
    subprocess.run(["protoc", "-I" + _PROTO_ROOT, "--python_out=" + out_dir, _PROTO],
                   check=True)


def _from_file(path):
    # Loaded by path under a private name: the generated module's own package name
    # (lanced.v1) would collide with this package.
    spec = importlib.util.spec_from_file_location("lanced._lanced_pb2", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _load():
    built = os.path.join(_HERE, "_gen", "lanced", "v1", "lanced_pb2.py")
    if os.path.exists(built):
        return _from_file(built)
    src = os.path.join(_PROTO_ROOT, _PROTO)
    if not os.path.exists(src):
        raise ImportError("lanced: no generated protobuf code and no %s to generate it from; "
                          "install the package with pip" % src)
    with open(src, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()[:16]
    base = os.environ.get("LANCED_PB_DIR") or os.path.join(
        tempfile.gettempdir(), "lanced-pb-%d-%s" % (os.getuid(), digest))
    if not os.path.exists(os.path.join(base, "lanced", "v1", "lanced_pb2.py")):
        tmp = tempfile.mkdtemp(prefix="lanced-pb-")
        _generate(tmp)
        try:
            os.rename(tmp, base)  # atomic: concurrent importers see all or nothing
        except OSError:
            pass  # another process won the race; its copy is identical
    return _from_file(os.path.join(base, "lanced", "v1", "lanced_pb2.py"))


pb = _load()
