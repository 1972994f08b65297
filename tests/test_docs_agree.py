"""The documents agree with each other and with the code."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from unlearnkit.errors import UserError

REPO = Path(__file__).resolve().parent.parent
ARXIV = re.compile(r"\d{4}\.\d{4,5}")


def _ids(text: str) -> set[str]:
    return set(ARXIV.findall(text))


def test_scaling_and_benchmarks_show_the_same_speed_and_memory_figures():
    sys.path.insert(0, str(REPO / "bench"))
    try:
        import sync_docs
    finally:
        sys.path.remove(str(REPO / "bench"))
    speed = (REPO / "bench" / "results" / "speed.md").read_text(encoding="utf-8")
    scaling = (REPO / "docs" / "SCALING.md").read_text(encoding="utf-8")
    assert sync_docs.synced(scaling, speed) == scaling, "run python bench/sync_docs.py"
    assert "_Produced by" not in scaling, "docs/SCALING.md carries the speed section's provenance line"
    benchmarks = (REPO / "BENCHMARKS.md").read_text(encoding="utf-8")
    missing = [line for line in sync_docs.speed_body(speed).splitlines() if line not in benchmarks]
    assert not missing, (
        f"BENCHMARKS.md lacks speed.md's lines {missing[:3]}: run python bench/make_benchmarks.py"
    )


def readme_method_table(readme: str) -> str:
    """The README's method table: the lines between its markers."""
    head, sep, rest = readme.partition(METHODS_BEGIN)
    table, sep2, _ = rest.partition(METHODS_END)
    assert sep and sep2, f"README.md: the markers {METHODS_BEGIN!r} ... {METHODS_END!r} are missing"
    return table.strip()


METHODS_BEGIN = "<!-- begin: method table (unlearnkit.catalog.markdown_table; do not edit by hand) -->"
METHODS_END = "<!-- end: method table -->"


def test_readme_method_table_is_the_one_the_declarations_render():
    """The table is generated from :mod:`unlearnkit.catalog`; edited by hand (or a method added without
    it), it fails here. Regenerate: python -c "from unlearnkit.catalog import markdown_table as t; print(t())"."""
    from unlearnkit.catalog import markdown_table

    table = readme_method_table((REPO / "README.md").read_text(encoding="utf-8"))
    assert table == markdown_table(), (
        "README.md's method table differs from unlearnkit.catalog: paste the output of "
        'python -c "from unlearnkit.catalog import markdown_table as t; print(t())" between its markers'
    )


def _sync_docs():
    sys.path.insert(0, str(REPO / "bench"))
    try:
        import sync_docs
    finally:
        sys.path.remove(str(REPO / "bench"))
    return sync_docs


@pytest.mark.parametrize("page", ["docs/cli.md", "docs/methods.md", "README.md"])
def test_every_generated_part_is_what_its_source_renders(page):
    """docs/cli.md's synopsis (from the parser), docs/methods.md's sections (from unlearnkit.catalog and
    unlearnkit.objectives) and README's method table: regenerate with python bench/sync_docs.py."""
    sync_docs = _sync_docs()
    text = (REPO / page).read_text(encoding="utf-8")
    assert sync_docs.rendered(REPO / page, text) == text, f"{page} is stale: run python bench/sync_docs.py"


def test_the_synopsis_wraps_without_breaking_a_required_argument():
    import argparse

    parser = argparse.ArgumentParser()
    parser.add_argument("--model", required=True, metavar="MODEL")
    parser.add_argument("--set", nargs="+", metavar="KEY=VALUE")
    parser.add_argument("--mode", choices=["a", "b"])
    parser.add_argument("--flag", action="store_true")
    parser.add_argument("name", nargs="?", metavar="NAME")
    lines = _sync_docs().synopsis_lines("cmd", parser, width=40)
    assert lines[0].startswith("unlearnkit cmd --model MODEL")
    assert all(line.startswith("               [") for line in lines[1:]), lines
    text = " ".join(lines)
    for token in ("[--set KEY=VALUE ...]", "[--mode a|b]", "[--flag]", "[NAME]"):
        assert token in text, (token, lines)


def test_each_method_section_names_its_paper_loss_and_own_settings():
    from unlearnkit import catalog

    page = (REPO / "docs" / "methods.md").read_text(encoding="utf-8")
    for spec in catalog.SPECS:
        section = page.split(f"## `{spec.name}`\n", 1)[1].split("\n## ", 1)[0]
        assert spec.paper in section and "unlearnkit.objectives." in section, spec.name
    npo = page.split("## `npo`\n", 1)[1].split("\n## ", 1)[0]
    assert "npo_loss(logps, ref_logps, weights, beta)" in npo and "| `beta` | `0.1` |" in npo


def test_the_methods_page_example_computes_a_loss_from_your_own_trainer(world_tokenizer):
    """docs/methods.md "Calling a loss from your own trainer": its function runs on a tiny model and a batch
    with the prompt masked, and equals NPO's loss computed by hand."""
    import math

    import torch
    from tiny_models import random_llama

    text = (REPO / "docs" / "methods.md").read_text(encoding="utf-8")
    [block] = re.findall(r"^```python\n(.*?)^```", text, re.S | re.M)
    namespace: dict = {}
    exec(compile(block, "<docs/methods.md>", "exec"), namespace)  # noqa: S102 - the docs' own code
    model = random_llama(world_tokenizer, seed=0)
    ids = torch.tensor([[5, 6, 7, 8, 9, 10]])
    batch = {"input_ids": ids, "attention_mask": torch.ones_like(ids), "labels": ids.clone()}
    batch["labels"][0, :3] = -100
    loss = namespace["npo_forget_loss"](model, model, batch, beta=0.1)
    assert loss.ndim == 0 and math.isclose(loss.item(), -(2 / 0.1) * math.log(0.5), rel_tol=1e-5)


def test_the_method_table_names_every_method_with_its_papers():
    """What the rendered table says, read back: every method once, with the arXiv ids it declares."""
    from unlearnkit import catalog

    listed = {}
    for line in catalog.markdown_table().splitlines()[2:]:
        names_cell, _, paper_cell = [c.strip() for c in line.strip().strip("|").split("|")]
        for name in re.findall(r"`([^`]+)`", names_cell):
            cited = _ids(paper_cell)
            if "base method" in paper_cell:  # T-/S- variants: TokenUnlearn + the base method's paper
                cited |= _ids(catalog.METHODS[name.split("-", 1)[1]].paper)
            listed[name] = cited
    assert set(listed) == set(catalog.METHODS)
    for name, cited in listed.items():
        assert cited == _ids(catalog.METHODS[name].paper), name


def test_contributing_shows_the_code_as_it_is():
    """Every ``python`` block of docs/CONTRIBUTING.md that starts with ``# src/...`` is in that file, line
    for line (indentation aside): the worked example cannot drift from the method it describes."""
    text = (REPO / "docs" / "CONTRIBUTING.md").read_text(encoding="utf-8")
    blocks = re.findall(r"^```python\n(.*?)^```", text, re.S | re.M)
    checked = 0
    for block in blocks:
        first, _, body = block.partition("\n")
        if not first.startswith("# src/"):
            continue
        source = [
            line.strip() for line in (REPO / first[2:].strip()).read_text(encoding="utf-8").splitlines()
        ]
        wanted = [line.strip() for line in body.splitlines()]
        assert any(source[i : i + len(wanted)] == wanted for i in range(len(source))), (
            f"docs/CONTRIBUTING.md: this block is no longer in {first[2:]}:\n{body}"
        )
        checked += 1
    assert checked >= 3, "docs/CONTRIBUTING.md lost its worked example"


def test_missing_local_file_hint_lists_the_documented_layout(tmp_path):
    from unlearnkit.data.sources import load_rows

    documented = [
        line.split("#")[0].strip()
        for line in (REPO / "docs" / "BENCHMARKS_REAL.md").read_text(encoding="utf-8").splitlines()
        if line.startswith("<root>/")
    ]
    assert len(documented) == 3
    with pytest.raises(UserError) as err:
        load_rows("locuslab/TOFU", "forget10", "train", tmp_path)
    message = str(err.value)
    for pattern in documented:
        concrete = (
            pattern.replace("<root>", str(tmp_path))
            .replace("<hub_id>", "locuslab/TOFU")
            .replace("<config>", "forget10")
            .replace("<split>", "train")
        )
        assert concrete in message, (concrete, message)


def test_an_error_in_a_hub_layout_row_names_the_file_it_came_from(tmp_path, monkeypatch, capsys):
    from unlearnkit.cli import main

    monkeypatch.setenv("UNLEARNKIT_DATA_ROOT", str(REPO / "tests" / "fixtures" / "hub"))
    argv = ["finetune", "--data", "tofu:forget01", "--output", str(tmp_path / "m"), "--set", "max_length=16"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "locuslab/TOFU/forget01.json:1: question + answer is" in err, err
    assert "forget.jsonl" not in err


def test_benchmarks_md_is_exactly_what_make_benchmarks_renders(monkeypatch):
    """BENCHMARKS.md is only ever the output of bench/make_benchmarks.py: edited by hand, it fails here."""
    monkeypatch.syspath_prepend(str(REPO / "bench"))
    import make_benchmarks

    assert (REPO / "BENCHMARKS.md").read_text(encoding="utf-8") == make_benchmarks.render(), (
        "BENCHMARKS.md differs from its sections: run python bench/make_benchmarks.py"
    )


def test_a_lab_section_of_another_lab_version_is_marked(monkeypatch):
    monkeypatch.syspath_prepend(str(REPO / "bench"))
    import make_benchmarks

    monkeypatch.setattr(make_benchmarks, "lab_version_of", lambda name: 1)
    assert "earlier lab" in make_benchmarks.stale_line("quality", "python bench/quality.py", 3)
    assert make_benchmarks.stale_line("speed", "python bench/speed.py", 3) is None  # not a lab section
    monkeypatch.setattr(make_benchmarks, "lab_version_of", lambda name: 3)
    assert make_benchmarks.stale_line("quality", "python bench/quality.py", 3) is None


def test_a_stale_section_says_what_changed_since_its_lab_version(monkeypatch):
    monkeypatch.syspath_prepend(str(REPO / "bench"))
    import make_benchmarks

    monkeypatch.setattr(make_benchmarks, "lab_version_of", lambda name: 3)
    line = make_benchmarks.stale_line("quality", "python bench/quality.py", 4)
    assert "surface cue" in line and "world format 5" not in line
    monkeypatch.setattr(make_benchmarks, "lab_version_of", lambda name: 2)
    line = make_benchmarks.stale_line("quality", "python bench/quality.py", 4)
    assert "surface cue" in line and "world format 5" in line
    monkeypatch.setattr(make_benchmarks, "lab_version_of", lambda name: 4)
    line = make_benchmarks.stale_line("quality", "python bench/quality.py", 5)
    assert "pen names" in line and "surface cue" not in line


def test_a_lab_change_marks_only_the_sections_it_changes(monkeypatch):
    """Lab 10 changed the TOFU-like fine-tuning recipe only: a TOFU-like section measured on lab 9 is
    marked, the MUSE/WMDP-like and user-folder sections of lab 9 are not; of lab 8, all are."""
    monkeypatch.syspath_prepend(str(REPO / "bench"))
    import make_benchmarks

    monkeypatch.setattr(make_benchmarks, "lab_version_of", lambda name: 9)
    assert "anchor_decay" in make_benchmarks.stale_line("quality", "python bench/quality.py", 10)
    assert "anchor_decay" in make_benchmarks.stale_line("sweep", "python bench/sweep.py", 10)
    for name in ("quality_rawtext", "user_folder"):
        assert make_benchmarks.stale_line(name, "python bench/x.py", 10) is None
    monkeypatch.setattr(make_benchmarks, "lab_version_of", lambda name: 8)
    line = make_benchmarks.stale_line("user_folder", "python bench/user_folder.py", 10)
    assert "lab version 9" in line and "anchor_decay" not in line
    monkeypatch.setattr(make_benchmarks, "lab_version_of", lambda name: None)  # unrecorded: always marked
    assert "earlier lab" in make_benchmarks.stale_line("user_folder", "python bench/user_folder.py", 10)


def test_a_robust_section_measured_with_another_attack_is_marked(monkeypatch):
    """robustness.md records the attack it was measured with; when bench/robustness.py attacks otherwise
    now, BENCHMARKS.md says so under its title, and not when they agree."""
    monkeypatch.syspath_prepend(str(REPO / "bench"))
    import make_benchmarks
    import robustness

    item = {"relearn_lr": 2e-5, "relearn_split": "item", "relearn_data": "auto"}
    monkeypatch.setattr(
        make_benchmarks, "provenance_of", lambda name: {"settings": {"relearn": {"tofu": item}}}
    )
    line = make_benchmarks.attack_line("robustness", "python bench/robustness.py --benchmarks tofu")
    assert line.startswith("> **Measured with another relearning attack** (lr 2e-05, trained on the forget")
    assert "halved at random" in line and "half the authors (`relearn_split` entity" in line
    assert make_benchmarks.attack_line("quality", "python bench/quality.py") is None  # not a robust section
    now = {"settings": {"relearn": {"tofu": robustness.RELEARN["tofu"]}}}
    monkeypatch.setattr(make_benchmarks, "provenance_of", lambda name: now)
    assert make_benchmarks.attack_line("robustness", "python bench/robustness.py --benchmarks tofu") is None


def test_a_section_measured_with_other_swept_recipes_is_marked(monkeypatch, tmp_path):
    """A section whose rows train with the swept recipes says so when they changed after it was measured;
    a result that records no hash was measured with the recipes of before the hash was kept."""
    monkeypatch.syspath_prepend(str(REPO / "bench"))
    import make_benchmarks

    (tmp_path / "results").mkdir()
    monkeypatch.setattr(make_benchmarks, "ROOT", tmp_path)

    def write(name: str, provenance: dict) -> None:
        (tmp_path / "results" / f"{name}.json").write_text(json.dumps({"provenance": provenance}))

    write("quality", {"recipes_sha256": "a"})
    assert "other tuned recipes" in make_benchmarks.recipes_line("quality", "python bench/quality.py", "b")
    assert make_benchmarks.recipes_line("quality", "python bench/quality.py", "a") is None
    write("robustness", {"recipes_sha256": "a"})  # trains the shared recipe only
    assert make_benchmarks.recipes_line("robustness", "python bench/robustness.py", "b") is None
    write("audit", {"commit": "x"})
    legacy = make_benchmarks.UNRECORDED_RECIPES
    assert make_benchmarks.recipes_line("audit", "python bench/audit_all.py", legacy) is None
    assert "audit_all.py" in make_benchmarks.recipes_line("audit", "python bench/audit_all.py", "b")
    assert make_benchmarks.recipes_line("speed", "python bench/speed.py", "b") is None  # no results: no line


def test_the_swept_recipes_hash_follows_their_bytes(monkeypatch, tmp_path):
    monkeypatch.syspath_prepend(str(REPO / "bench"))
    import _common

    monkeypatch.setattr(_common, "TUNED_RECIPES", tmp_path)
    empty = _common.recipes_sha256()
    (tmp_path / "npo.yaml").write_text("lr: 1.0e-4\n")
    one = _common.recipes_sha256()
    (tmp_path / "npo.yaml").write_text("lr: 2.0e-4\n")
    assert len({empty, one, _common.recipes_sha256()}) == 3
