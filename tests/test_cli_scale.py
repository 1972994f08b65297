"""Tiny-scale defaults and clean output of finetune / unlearn."""

from __future__ import annotations

import json
import shutil

import pytest

from unlearnkit.cli import main

QUICK = ["--set", "epochs=1"]


@pytest.fixture(scope="module")
def tiny_target(tmp_path_factory, mini_world):
    """``finetune --model tiny`` on the miniature world (one epoch: what is tested is the bookkeeping)."""
    root = tmp_path_factory.mktemp("scale")
    assert main(["finetune", "--data", str(mini_world), "--output", str(root / "target"), *QUICK]) == 0
    return root / "target"


def test_tiny_model_records_the_quickstart_unlearning_recipe(tiny_target):
    from unlearnkit.pipelines.quickstart import TINY_METHOD, TINY_UNLEARN

    recorded = json.loads((tiny_target / "unlearnkit.json").read_text())["unlearn_defaults"]
    assert recorded["train"]["lr"] == TINY_UNLEARN["lr"] and recorded["method"]["asu"] == TINY_METHOD["asu"]
    assert "unlearn_defaults" in (tiny_target / "README.md").read_text()


def test_unlearn_uses_them_says_so_in_one_line_and_set_wins(tiny_target, mini_world, tmp_path, capsys):
    out = tmp_path / "asu"
    argv = ["unlearn", "--model", str(tiny_target), "--data", str(mini_world), "--method", "asu"]
    assert main([*argv, "--output", str(out), "--set", "max_steps=2", "--set", "lr=1e-4"]) == 0
    captured = capsys.readouterr()
    notes = [x for x in captured.err.splitlines() if "tiny-model recipe" in x]
    assert len(notes) == 1
    assert "tau=5.0" in notes[0] and "epochs=5.0" in notes[0] and "--set KEY=VALUE overrides" in notes[0]
    assert "lr=" not in notes[0]  # given on the command line: not a default used
    config = json.loads((out / "unlearnkit.json").read_text())["config"]
    assert config["tau"] == 5.0 and config["lr"] == 1e-4 and config["batch_size"] == 8
    # clean output: one bar with the loss, no Trainer dictionaries, no library warnings or bars
    text = captured.err + captured.out
    assert "unlearning (asu)" in text
    assert "{'loss'" not in text and "train_runtime" not in text
    assert "Warning" not in text and "Writing model shards" not in text and "Loading weights" not in text
    # an unlearned tiny model is still a tiny model; the card says what reference and layers were used
    meta = json.loads((out / "unlearnkit.json").read_text())
    assert "unlearn_defaults" in meta
    assert meta["reference_used"]["strategy"] in ("copy", "cache", "adapter", "none")
    assert meta["layers_used"] == [0, 1]  # layers='' means every layer of the 2-layer model
    assert "reference_used" in (out / "README.md").read_text()


def test_other_models_keep_the_paper_defaults(tiny_target, mini_world, tmp_path, capsys):
    plain = tmp_path / "plain"
    shutil.copytree(tiny_target, plain)
    meta = json.loads((plain / "unlearnkit.json").read_text())
    del meta["unlearn_defaults"]
    (plain / "unlearnkit.json").write_text(json.dumps(meta))
    out = tmp_path / "ga"
    argv = [
        "unlearn",
        "--model",
        str(plain),
        "--data",
        str(mini_world),
        "--method",
        "ga",
        "--output",
        str(out),
    ]
    assert main([*argv, "--set", "max_steps=1"]) == 0
    assert "tiny-model recipe" not in capsys.readouterr().err
    assert json.loads((out / "unlearnkit.json").read_text())["config"]["lr"] == 1e-5


def test_finetune_sizes_max_length_from_the_data_unless_set(mini_world, tmp_path, capsys):
    data = tmp_path / "long"
    shutil.copytree(mini_world, data)
    rows = [json.loads(x) for x in (data / "retain.jsonl").read_text().splitlines()]
    rows[0]["answer"] = " ".join(["The author wrote many more novels about the sea."] * 16)
    (data / "retain.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert main(["finetune", "--data", str(data), "--output", str(tmp_path / "m"), *QUICK]) == 0
    err = capsys.readouterr().err
    sized = json.loads((tmp_path / "m" / "unlearnkit.json").read_text())["config"]["max_length"]
    assert 128 < sized <= 256 and sized % 8 == 0 and f"max_length {sized}" in err
    assert (
        main(["finetune", "--data", str(data), "--output", str(tmp_path / "m2"), "--set", "max_length=128"])
        == 2
    )
    err = capsys.readouterr().err
    assert "retain.jsonl:1: question + answer is" in err and "longer than max_length=128" in err


def test_tiny_model_on_tofu_trains_on_the_general_parts_too(tmp_path, monkeypatch, capsys):
    from pathlib import Path

    monkeypatch.setenv("UNLEARNKIT_DATA_ROOT", str(Path(__file__).parent / "fixtures" / "hub"))
    out = tmp_path / "tofu_tiny"
    assert main(["finetune", "--data", "tofu:forget01", "--output", str(out), *QUICK]) == 0
    captured = capsys.readouterr()
    assert "real_authors and world_facts too" in captured.err
    meta = json.loads((out / "unlearnkit.json").read_text())
    assert meta["trained_on_general_parts"] == ["real_authors", "world_facts"]
    # forget (2) + retain (6) + real authors (2) + world facts (2)
    assert "12 examples" in captured.out


def test_closer_look_without_models_says_what_was_left_out(tiny_target, mini_world, tmp_path, capsys):
    argv = ["eval", "--model", str(tiny_target), "--data", str(mini_world), "--output", str(tmp_path / "cl")]
    argv += [
        "--protocol",
        "closer-look",
        "--embedder",
        "none",
        "--nli-model",
        "none",
        "--max-new-tokens",
        "4",
    ]
    assert main(argv) == 0
    captured = capsys.readouterr()
    notes = [x for x in captured.err.splitlines() if "left out of FE / MU" in x]
    assert len(notes) == 1 and "cosine" in notes[0] and "entailment" in notes[0]
    assert "FE uses 4 of 5 components, fe_yuan 3 of 5" in notes[0]
    out = captured.out
    assert "fe_yuan" in out and "the closer-look authors' own FE" in out and "harmonic mean of 1-ROUGE" in out


def test_outputs_are_readable_like_every_other_file(tiny_target):
    import os
    import stat

    mask = os.umask(0)
    os.umask(mask)
    for name in ("model.safetensors", "config.json", "unlearnkit.json"):
        assert stat.S_IMODE((tiny_target / name).stat().st_mode) == 0o666 & ~mask, name


def test_python_api_leaves_no_empty_work_folder(
    tiny_random_llama, world_tokenizer, mini_bench, tmp_path, monkeypatch
):
    from unlearnkit.pipelines.unlearn import unlearn

    monkeypatch.chdir(tmp_path)
    unlearn(
        tiny_random_llama,
        world_tokenizer,
        mini_bench.forget,
        mini_bench.retain,
        "ga",
        max_steps=1,
        quiet=True,
    )
    assert list(tmp_path.iterdir()) == []


def test_continual_prints_no_nan_before_the_first_request():
    from unlearnkit.commands.continual import curve_line

    start = {"step": 0, "n_forgotten": 0, "train_loss": float("nan"), "upcoming_rougeL_recall": 0.9}
    start["model_utility"] = 0.5
    line = curve_line(start)
    assert "nan" not in line and "upcoming ROUGE 0.900" in line and "before the first request" in line
    assert "forget ROUGE 0.100" in curve_line({"step": 1, "n_forgotten": 3, "forget_rougeL_recall": 0.1})


def test_world_warns_when_the_forget_set_is_too_small_for_forget_quality(tmp_path, capsys):
    assert main(["world", "--output", str(tmp_path / "small"), "--authors", "12", "--facts", "4"]) == 0
    assert "the forget set has 4 items" in capsys.readouterr().err
    assert main(["world", "--output", str(tmp_path / "ok"), "--authors", "20", "--facts", "10"]) == 0
    out = capsys.readouterr()
    assert "warning" not in out.err
    assert "; 36 held-out hazardous passages (membership inference's non-members)" in out.out  # 12 agents x 3


def test_tradeoff_png_is_readable_like_every_other_file(tmp_path):
    import os
    import stat

    from unlearnkit.report.page import plot_tradeoff

    results = {
        "oracle": {"forget_quality": 1.0, "model_utility": 0.5},
        "target": {"forget_quality": 1e-5, "model_utility": 0.6},
        "ga": {"forget_quality": 0.1, "model_utility": 0.2},
    }
    path = tmp_path / "tradeoff.png"
    plot_tradeoff(results, path)
    mask = os.umask(0)
    os.umask(mask)
    assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~mask


def test_a_bad_setting_on_a_tiny_model_is_one_error_line_without_the_defaults_note(
    tiny_target, mini_world, tmp_path, capsys
):
    argv = ["unlearn", "--model", str(tiny_target), "--data", str(mini_world), "--method", "asu"]
    assert main([*argv, "--output", str(tmp_path / "x"), "--set", "tua=2"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "unknown key 'tua'" in err[0]
