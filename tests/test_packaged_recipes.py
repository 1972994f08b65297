"""The tuned tiny recipes ship in the wheel: an installed unlearnkit (no source tree on the path) runs the
quickstart with the same recipes as a checkout."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RECIPES = ROOT / "src" / "unlearnkit" / "resources" / "recipes" / "tiny"


def test_the_checkout_reads_the_packaged_recipes():
    from unlearnkit.pipelines.quickstart import tuned_overrides

    assert sorted(p.stem for p in RECIPES.glob("*.yaml"))
    for path in RECIPES.glob("*.yaml"):
        assert tuned_overrides(path.stem), path


def test_an_installed_wheel_carries_the_tuned_recipes(tmp_path):
    pytest.importorskip("setuptools")
    wheels = tmp_path / "wheels"
    build = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(wheels),
            str(ROOT),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert build.returncode == 0, build.stderr[-2000:]
    (wheel,) = wheels.glob("unlearnkit-*.whl")
    site = tmp_path / "site"
    install = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--no-deps",
            "--no-index",
            "-q",
            "--target",
            str(site),
            str(wheel),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert install.returncode == 0, install.stderr[-2000:]
    probe = (
        "import json, unlearnkit\n"
        "from unlearnkit.pipelines.quickstart import tuned_overrides, DEFAULT_METHODS\n"
        "print(json.dumps({'file': unlearnkit.__file__, 'recipes': {m: tuned_overrides(m) for m in DEFAULT_METHODS}}))\n"
    )
    # The installed copy first on the path, run from a folder outside the source tree.
    env = {**os.environ, "PYTHONPATH": str(site)}
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300
    )
    assert out.returncode == 0, out.stderr[-2000:]
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert Path(got["file"]).resolve().is_relative_to(site.resolve())  # not the checkout
    stub = site / "unlearnkit" / "methods.pyi"  # the config classes' signatures, for IDEs
    assert stub.read_text() == (ROOT / "src" / "unlearnkit" / "methods.pyi").read_text()
    from unlearnkit.pipelines.quickstart import DEFAULT_METHODS, tuned_overrides

    expected = {m: tuned_overrides(m) for m in DEFAULT_METHODS}
    assert any(expected.values())
    assert got["recipes"] == json.loads(json.dumps(expected))
