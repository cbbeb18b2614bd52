"""Build of the tlcompare Python package (`pip install --no-build-isolation .`).

The extension tlcompare._core is compiled from the C library's sources (src/, the
programs' main()s left out) and python/tlcompare/_core.c, against the stable ABI (one
build serves every CPython from 3.10) and without numpy.  It links the Debian packages
the library needs (libzip, expat, zlib, ISA-L: `make deps`); no network is used.
"""
import glob
import os
import re
import shutil
import subprocess

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

TOP = os.path.dirname(os.path.abspath(__file__))
PKGS = ["libzip", "expat", "zlib", "libisal"]


def version():
    with open(os.path.join(TOP, "Makefile")) as f:
        return re.search(r"^VERSION\s*:=\s*(\S+)", f.read(), re.M).group(1)


def pkg_config(flag):
    if not shutil.which("pkg-config"):
        return None
    r = subprocess.run(["pkg-config", flag, *PKGS], capture_output=True, text=True)
    return r.stdout.split() if r.returncode == 0 else None


class BuildExt(build_ext):
    """Compiles the library's many sources on every core (setuptools does one at a time)."""

    def build_extensions(self):
        self.parallel = self.parallel or os.cpu_count() or 1
        super().build_extensions()


libs = pkg_config("--libs")
cflags = pkg_config("--cflags") or []
sources = sorted(glob.glob("src/*/*.c"))
sources = [s for s in sources if not s.startswith("src/cli/")] + ["python/tlcompare/_core.c"]
ext = Extension(
    "tlcompare._core",
    sources=sources,
    include_dirs=["src"],
    define_macros=[("Py_LIMITED_API", "0x030A0000"), ("TL_VERSION", '"%s"' % version()),
                   ("_POSIX_C_SOURCE", "200809L"), ("_DEFAULT_SOURCE", None)],
    extra_compile_args=["-std=c11", "-O2", "-fvisibility=hidden", "-Wno-unused-parameter", *cflags],
    extra_link_args=[*(libs or ["-lzip", "-lexpat", "-lz", "-lisal"]), "-lm", "-lpthread"],
    py_limited_api=True,
)

setup(
    name="tlcompare",
    version=version(),
    description="TraceLens performance reports and their comparison, fast, as pandas DataFrames",
    package_dir={"": "python"},
    packages=["tlcompare"],
    ext_modules=[ext],
    cmdclass={"build_ext": BuildExt},
    python_requires=">=3.10",
    install_requires=[],  # pandas is imported when frames are made (Debian: python3-pandas)
    options={"bdist_wheel": {"py_limited_api": "cp310"}},
)
