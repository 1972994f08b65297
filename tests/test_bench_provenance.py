"""Bench results tied to the code that made them: bench/_common.py's provenance, its run
cache and the result files; bench/robustness.py's cache uses it."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"


@pytest.fixture
def common(monkeypatch, tmp_path):
    monkeypatch.syspath_prepend(str(BENCH))
    import _common

    monkeypatch.setattr(_common, "RESULTS", tmp_path / "results")
    return _common


def test_provenance_names_the_commit_the_src_hash_the_settings_and_the_machine(common):
    info = common.provenance({"seeds": (0, 1), "max_items": 100})
    assert len(info["commit"]) == 40 and len(info["src_sha256"]) == 64
    assert info["settings"] == {"max_items": 100, "seeds": [0, 1]}
    assert info["machine"]["cpus"] and info["machine"]["torch"]
    # the numeric stack's versions: the same code gave other numbers under other versions
    assert set(info["packages"]) == set(common.NUMERIC_PACKAGES) and info["packages"]["transformers"]
    assert info["packages"]["torch"] == info["machine"]["torch"]
    # the src/ hash is of the files' content: any change to any file under src/ changes it
    assert common.src_sha256() == common.code_version()["src_sha256"]


def test_a_cached_run_is_reused_only_when_commit_src_hash_and_settings_all_match(common, tmp_path):
    cache = common.RunCache(tmp_path / "runs")
    settings = {"config": "npo", "seed": 1}
    cache.put("npo__s1", settings, {"metric": 0.5})
    assert cache.get("npo__s1", settings) == {"metric": 0.5}
    assert cache.get("npo__s1", {"config": "npo", "seed": 2}) is None  # other settings
    stored = json.loads(cache.path("npo__s1").read_text())
    newer = {**stored["provenance"]["packages"], "transformers": "99.0"}
    for key, other in (
        ("commit", "0" * 40),
        ("src_sha256", "f" * 64),
        ("packages", newer),
        ("packages", None),
    ):
        changed = {**stored, "provenance": {**stored["provenance"], key: other}}
        cache.path("npo__s1").write_text(json.dumps(changed))
        assert cache.get("npo__s1", settings) is None, key  # other code, other packages, or unrecorded
    cache.path("npo__s1").write_text(json.dumps({"metric": 0.5}))  # a file from before provenance
    assert cache.get("npo__s1", settings) is None


def test_result_files_carry_provenance_and_say_what_they_are_under_the_title(common):
    settings = {"seeds": [0, 1, 2], "max_items": 100}
    common.write_result("demo", "## Demo\n\nSome text.\n", {"row": 1}, "python bench/demo.py", settings)
    md = (common.RESULTS / "demo.md").read_text()
    lines = md.splitlines()
    assert lines[1] == "## Demo" and lines[3].startswith("_Produced by `python bench/demo.py`")
    assert "seeds 0, 1, 2" in lines[3] and "max items 100" in lines[3] and "commit " in lines[3]
    assert "-CPU" in lines[3] and "torch" in lines[3]
    from importlib import metadata

    assert f"transformers {metadata.version('transformers')}" in lines[3]
    data = json.loads((common.RESULTS / "demo.json").read_text())
    assert data["row"] == 1 and data["provenance"]["settings"] == settings
    assert common.previous("demo", settings) == {"row": 1}  # kept rows come back without provenance
    assert common.previous("demo", {**settings, "max_items": 50}) == {}  # ... only for these settings
    data["provenance"]["src_sha256"] = "0" * 64
    (common.RESULTS / "demo.json").write_text(json.dumps(data))
    assert common.previous("demo", settings) == {}  # ... and this code


def test_robustness_reuses_a_run_only_for_its_settings(common, monkeypatch, tmp_path):
    monkeypatch.setattr(sys, "argv", ["robustness.py"])
    import robustness

    monkeypatch.setattr(robustness, "WORK", tmp_path / "work")
    cfg, key = "npo+undo-base1", "tofu__npo+undo-base1__s0"
    robustness._cache().put(key, robustness.run_settings("tofu", cfg, 0), {"config": cfg, "seed": 0})
    assert robustness._cache().get(key, robustness.run_settings("tofu", cfg, 0)) == {
        "config": cfg,
        "seed": 0,
    }
    assert robustness._cache().get(key, robustness.run_settings("tofu", cfg, 1)) is None  # other seed
    recipe = robustness.DISTILL[("tofu", "base")]
    monkeypatch.setitem(robustness.DISTILL, ("tofu", "base"), {**recipe, "lr": 1e-3})  # another recipe
    assert robustness._cache().get(key, robustness.run_settings("tofu", cfg, 0)) is None
    monkeypatch.setitem(robustness.DISTILL, ("tofu", "base"), recipe)
    monkeypatch.setattr(robustness, "EVAL", {**robustness.EVAL, "max_items": 50})  # other evaluation
    assert robustness._cache().get(key, robustness.run_settings("tofu", cfg, 0)) is None


def test_the_best_sam_rho_is_read_at_equal_utility_only(common, monkeypatch):
    monkeypatch.setattr(sys, "argv", ["robustness.py"])
    import robustness

    def row(utility: float, gap: float, sd: float = 0.01) -> dict:
        return {"utility": (utility, 0.0, 3), "gap_fact_recall": (gap, sd, 3)}

    plain = row(0.52, 0.15)
    table = {
        "npo": plain,
        "npo+sam0.05": row(0.50, 0.20),
        "npo+sam0.5": row(0.535, 0.05),
        "npo+sam2": row(0.60, 0.0),
    }
    sam = ["npo+sam0.05", "npo+sam0.5", "npo+sam2"]
    line = robustness.best_rho_line("tofu", table, sam, plain)
    assert "rho 0.5, gap +0.050 vs plain's +0.150: SAM helps" in line  # rho 2 forgets more but is not equal
    table["npo+sam0.5"] = row(0.535, 0.05, sd=0.14)  # lower on the mean, inside the seeds' spread
    line = robustness.best_rho_line("tofu", table, sam, plain)
    assert "within the seeds' spread (sd 0.140): not shown to help" in line
    table["npo+sam0.5"] = row(0.53, 0.16)
    assert robustness.best_rho_line("tofu", table, sam, plain).endswith("no better than plain.")
    table = {"npo": plain, "npo+sam2": row(0.40, 0.0)}
    assert "none of the rhos" in robustness.best_rho_line("tofu", table, ["npo+sam2"], plain)


def test_noise_targets_are_compared_at_the_checkpoint_of_equal_compute(common, monkeypatch):
    monkeypatch.setattr(sys, "argv", ["robustness.py"])
    import robustness

    init = {"curve0_compute": (0.2, 0.0, 3), "curve0_utility": (0.30, 0.0, 3)}
    init |= {"curve1_compute": (0.45, 0.0, 3), "curve1_utility": (0.36, 0.0, 3)}
    init |= {"curve2_compute": (0.9, 0.0, 3), "curve2_utility": (0.41, 0.0, 3)}
    assert robustness.equal_compute(init, 0.49).endswith(
        "checkpoint at 0.45x) the fresh init's utility is 0.360"
    )
    assert robustness.equal_compute({}, 0.49) == ""
