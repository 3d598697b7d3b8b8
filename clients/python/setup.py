"""Builds the lanced client: the protobuf module is generated from proto/ with protoc at build
time (never committed). `pip install --no-build-isolation clients/python` uses Debian's
python3-setuptools; no package index is needed."""
import os
import subprocess

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
PROTO_ROOT = os.path.normpath(os.path.join(HERE, "..", "..", "proto"))


class BuildWithProto(build_py):
    def run(self):
        super().run()
        out = os.path.join(self.build_lib, "lanced", "_gen")
        os.makedirs(out, exist_ok=True)
        subprocess.run(["protoc", "-I" + PROTO_ROOT, "--python_out=" + out,
                        os.path.join("lanced", "v1", "lanced.proto")], check=True)


setup(
    name="lanced",
    version="0.1.0",
    description="Client for lanced (Lance row lookups over HTTP) and a PyTorch dataset",
    packages=["lanced"],
    python_requires=">=3.9",
    install_requires=["numpy", "protobuf"],
    cmdclass={"build_py": BuildWithProto},
)
