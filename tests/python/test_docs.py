"""The maintainer's docs against the tree: the README's source tour names every folder of
src/ once, in the layers' order of tools/check_layers.sh, and the man pages render without
a groff warning."""
import os
import re
import shutil
import subprocess

import pytest

from conftest import TOP


def layer_order():
    """The layers in the order tools/check_layers.sh lists them (its `case` table)."""
    with open(os.path.join(TOP, "tools", "check_layers.sh"), encoding="utf-8") as f:
        text = f.read()
    table = text.split("allowed() {", 1)[1].split("esac", 1)[0]
    return re.findall(r"^\s+([a-z]+)\) echo", table, re.M)


def readme_tour():
    with open(os.path.join(TOP, "README.md"), encoding="utf-8") as f:
        text = f.read()
    return re.findall(r"^\| `src/([a-z]+)/` \|", text, re.M)


def test_the_tour_is_ls_src_in_layer_order():
    folders = sorted(d for d in os.listdir(os.path.join(TOP, "src"))
                     if os.path.isdir(os.path.join(TOP, "src", d)))
    tour = readme_tour()
    assert sorted(tour) == folders, "README.md's source tour and ls src/ differ"
    assert tour == layer_order(), "README.md's source tour is not in tools/check_layers.sh's order"


@pytest.mark.parametrize("page", ["tlcompare.1", "tlreport.1"])
def test_man_page_renders_without_warnings(page):
    if not shutil.which("groff"):
        pytest.skip("groff not installed")
    # groff is no part of the library: run it without the sanitizer runtime the sanitizer
    # build of these tests preloads (troff itself trips AddressSanitizer)
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
    r = subprocess.run(["groff", "-man", "-Tutf8", "-ww", "-z", os.path.join(TOP, "man", page)],
                       capture_output=True, text=True, env=env)
    assert r.returncode == 0 and r.stderr == "", r.stderr
