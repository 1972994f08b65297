"""The whole CLI on a miniature world: world -> finetune target/oracle -> unlearn -> eval -> quickstart."""

from __future__ import annotations

import json

import pytest
import torch

from unlearnkit.cli import main


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    root = tmp_path_factory.mktemp("e2e")
    world = root / "world"
    assert (
        main(
            [
                "world",
                "--output",
                str(world),
                "--authors",
                "12",
                "--facts",
                "4",
                "--forget-fraction",
                "0.25",
                "--holdout-fraction",
                "0.25",
                "--general",
                "10",
            ]
        )
        == 0
    )
    for split, name in (("all", "target"), ("retain", "oracle")):
        assert (
            main(
                [
                    "finetune",
                    "--data",
                    str(world),
                    "--output",
                    str(root / name),
                    "--split",
                    split,
                    "--set",
                    "epochs=25",  # each fact is also trained in its augment/ rewordings: 5 sightings an epoch
                    "--set",
                    "batch_size=16",
                ]
            )
            == 0
        )
    return root


def test_target_knows_and_oracle_does_not(trained, capsys):
    root = trained
    assert (
        main(
            [
                "eval",
                "--model",
                str(root / "oracle"),
                "--data",
                str(root / "world"),
                "--output",
                str(root / "eval_oracle"),
                "--max-new-tokens",
                "24",
            ]
        )
        == 0
    )
    assert (
        main(
            [
                "eval",
                "--model",
                str(root / "target"),
                "--data",
                str(root / "world"),
                "--retain-model",
                str(root / "eval_oracle"),
                "--output",
                str(root / "eval_target"),
                "--max-new-tokens",
                "24",
            ]
        )
        == 0
    )
    target = json.loads((root / "eval_target" / "metrics.json").read_text())
    oracle = json.loads((root / "eval_oracle" / "metrics.json").read_text())
    assert target["forget_rougeL_recall"] >= 0.9
    assert oracle["forget_rougeL_recall"] < target["forget_rougeL_recall"] - 0.3
    assert target["forget_prob"] > 0.9 and oracle["forget_prob"] < 0.3
    # Forget quality tells the model that knows the forget set from the one that never saw it, even on 12
    # items (two fully separated samples of 12: p ~ 1e-6). Perturbed answers worded like the trained
    # answer (world format < 5) left the target above 0.05 here: the trained wording cancelled the fact.
    assert target["forget_quality"] < 1e-3, target["forget_quality"]
    assert target["forget_para_fact_recall"] >= 0.5 > oracle["forget_para_fact_recall"]
    assert "forget_quality" in capsys.readouterr().out


def test_unlearn_then_eval_against_oracle_model(trained):
    root = trained
    out = root / "asu"
    assert (
        main(
            [
                "unlearn",
                "--model",
                str(root / "target"),
                "--data",
                str(root / "world"),
                "--method",
                "asu",
                "--output",
                str(out),
                "--set",
                "lr=5e-4",
                "--set",
                "epochs=3",
                "--set",
                "batch_size=4",
                "--set",
                "grad_accum=1",
                "--set",
                "tau=5",
                "--set",
                "lambda=1",
            ]
        )
        == 0
    )
    card = json.loads((out / "unlearnkit.json").read_text())
    assert card["method"] == "asu" and card["config"]["tau"] == 5.0
    assert (out / "model.safetensors").is_file()
    assert not any(p.name.startswith(".asu") for p in root.iterdir())  # no work/temp folders left
    assert (
        main(
            [
                "eval",
                "--model",
                str(out),
                "--data",
                str(root / "world"),
                "--retain-model",
                str(root / "oracle"),
                "--output",
                str(root / "eval_asu"),
                "--max-new-tokens",
                "24",
            ]
        )
        == 0
    )
    metrics = json.loads((root / "eval_asu" / "metrics.json").read_text())
    assert 0.0 <= metrics["forget_quality"] <= 1.0 and metrics["model_utility"] > 0


@pytest.mark.parametrize("original", ["target", "oracle", "eval folder"])
def test_eval_says_when_forget_quality_cannot_resolve_forgetting(trained, original, capsys):
    """``--original-model``: the untouched model's forget quality against the oracle is the KS test's
    resolution on this data. The oracle as its own original (p = 1: the two cannot differ) must get the
    warning; the target gets it exactly when its p-value is >= 0.05; an eval folder of the original is
    read instead of evaluated."""
    root = trained
    source = {
        "target": root / "target",
        "oracle": root / "oracle",
        "eval folder": root / "eval_oracle_as_original",
    }[original]
    if original == "eval folder":  # an eval of the oracle against itself: forget_quality 1
        argv = ["eval", "--model", str(root / "oracle"), "--data", str(root / "world")]
        argv += ["--retain-model", str(root / "oracle"), "--output", str(source), "--max-new-tokens", "4"]
        assert main(argv) == 0
        capsys.readouterr()
    out = root / f"eval_resolution_{original.replace(' ', '_')}"
    argv = ["eval", "--model", str(root / "target"), "--data", str(root / "world"), "--output", str(out)]
    argv += ["--retain-model", str(root / "oracle"), "--original-model", str(source), "--max-new-tokens", "4"]
    assert main(argv) == 0
    captured = capsys.readouterr()
    metrics = json.loads((out / "metrics.json").read_text())
    details = json.loads((out / "details.json").read_text())
    fq = metrics["original_forget_quality"]
    assert details["forget_quality_resolution"]["resolves"] == (fq < 0.05)
    assert "original_forget_quality" in captured.out
    said = "forget quality cannot resolve forgetting here" in captured.err
    codes = [w["code"] for w in details["warnings"]]
    assert said == (fq >= 0.05) == ("forget_quality_target_not_separated" in codes)
    if original != "target":
        assert fq == pytest.approx(1.0) and said
        assert (
            f"the original model ({source}) has forget_quality 1 >= 0.05 against the oracle" in captured.err
        )
    else:  # the original here is the evaluated model itself: the two forget qualities are one test
        assert fq == pytest.approx(metrics["forget_quality"])


SMALL_WORLD = dict(
    n_authors=12,
    facts_per_author=4,
    forget_fraction=0.25,
    holdout_fraction=0.25,
    n_general=10,
    n_real_authors=2,
    n_agents=3,
    n_articles=12,
)


@pytest.fixture
def small_lab(monkeypatch, tmp_path):
    """The quickstart's pipeline on a small world with short recipes: the same code, seconds not minutes."""
    from unlearnkit.pipelines import embedded, quickstart
    from unlearnkit.train import pretrain

    monkeypatch.setattr(quickstart, "WORLD", SMALL_WORLD)
    monkeypatch.setattr(pretrain, "PRETRAIN_DEFAULTS", {**pretrain.PRETRAIN_DEFAULTS, "epochs": 4.0})
    monkeypatch.setattr(embedded, "TINY_FINETUNE", {**embedded.TINY_FINETUNE, "epochs": 4.0})
    monkeypatch.setattr(embedded, "MUSE_FINETUNE", {**embedded.MUSE_FINETUNE, "epochs": 8.0})
    robust = {**quickstart.ROBUST_DISTILL, "epochs": 2.0, "stop_epochs": 1.0}
    monkeypatch.setattr(quickstart, "ROBUST_DISTILL", robust)
    return tmp_path / "cache"


def quickstart_argv(out, cache, *extra):
    return ["quickstart", "--output", str(out), "--cache-dir", str(cache), *extra]


def test_quickstart_tofu_like_on_the_base(small_lab, tmp_path, capsys):
    out = tmp_path / "qs"
    assert main(quickstart_argv(out, small_lab, "--methods", "ga,asu,t-npo", "--no-audit")) == 0
    printed = capsys.readouterr().out
    assert "base (pretraining on" in printed and "training ..." in printed
    # the terminal ends with the timing, then the verdict and the warnings, one line each
    lines = printed.rstrip("\n").splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("Verdict: "))
    assert (
        lines[at - 1].startswith("time: ")
        and " wall in all " in lines[at - 1]
        and "the lab " in lines[at - 1]
    )
    assert all(line.startswith("warning: ") for line in lines[at + 1 :])
    metrics = json.loads((out / "metrics.json").read_text())
    assert list(metrics) == ["target", "oracle", "base", "ga", "asu", "t-npo"]
    for row in metrics.values():
        for key in (
            "forget_quality",
            "model_utility",
            "forget_rougeL_recall",
            "forget_fact_recall",
            "forget_prob",
            "forget_truth_ratio",
            "world_facts_rougeL_recall",
            "real_authors_rougeL_recall",
            "retain_rougeL_recall",
        ):
            assert key in row, key
    html = (out / "report.html").read_text()
    assert "data:image/png;base64," in html and "t-npo" in html
    # the notes are written from the settings used, not typed by hand
    from unlearnkit.pipelines.quickstart import method_overrides

    asu = method_overrides("asu", 0)  # the shared recipe, or the packaged swept one (recipes/tiny/)
    assert (
        "ga: lr 0.0005, epochs 5" in html
        and f"asu: lr {asu['lr']:g}" in html
        and f"tau {asu['tau']:g}" in html
    )
    cards = {
        name: json.loads(next(small_lab.glob(f"models/*/{name}/unlearnkit.json")).read_text())
        for name in ("base", "target", "oracle")
    }
    assert cards["base"]["kind"] == "base" and cards["target"]["base_model"].endswith("/base")
    assert cards["oracle"]["trained_on"] == ["retain"] and cards["target"]["trained_on"] == [
        "forget",
        "retain",
    ]
    # a second run takes the world, the base, the target and the oracle from the cache
    assert main(quickstart_argv(out, small_lab, "--methods", "ga", "--overwrite", "--no-audit")) == 0
    printed = capsys.readouterr().out
    assert printed.count("from the cache") == 3 and "training ..." not in printed


def test_quickstart_muse_and_wmdp_like(small_lab, tmp_path, capsys):
    out = tmp_path / "muse"
    assert main(quickstart_argv(out, small_lab, "--benchmark", "muse", "--methods", "ga,npo")) == 0
    metrics = json.loads((out / "metrics.json").read_text())
    assert list(metrics) == ["target", "oracle", "base", "ga", "npo"]
    for key in (
        "verbmem_forget_rougeL_f1",
        "knowmem_forget_rougeL_f1",
        "knowmem_retain_rougeL_f1",
        "privleak",
    ):
        assert all(key in row for row in metrics.values()), key
    assert metrics["oracle"]["privleak"] == pytest.approx(0.0)  # measured against itself
    assert "VerbMem" in (out / "report.html").read_text()
    out = tmp_path / "wmdp"
    assert main(quickstart_argv(out, small_lab, "--benchmark", "wmdp", "--methods", "rmu")) == 0
    metrics = json.loads((out / "metrics.json").read_text())
    assert list(metrics) == ["target", "oracle", "rmu"]
    assert all("wmdp_hazard_acc" in r and "mmlu_general_acc" in r for r in metrics.values())
    assert "Hazardous accuracy" in (out / "report.html").read_text()
    oracle = json.loads(next(small_lab.glob("models/*/filtered_base/unlearnkit.json")).read_text())
    assert oracle["filtered"] == ["hazard"]


def test_an_interrupted_lab_training_resumes_to_the_same_weights(tmp_path, monkeypatch):
    """The quickstart's target / oracle / base training checkpoints next to its cache entry; after an
    interrupt the next run resumes there and ends with the weights of an uninterrupted run."""
    import transformers
    from safetensors.torch import load_file

    from unlearnkit.pipelines import embedded
    from unlearnkit.world.tiny import tiny_llama, train_tokenizer

    rows = [{"question": f"What is item {i}?", "answer": f"Item {i} is number {i}."} for i in range(20)]
    tok = train_tokenizer([r["question"] for r in rows] + [r["answer"] for r in rows], vocab_size=300)
    cfg = dict(lr=1e-3, epochs=8.0, batch_size=32, grad_accum=1, warmup_epochs=0.0, weight_decay=0.0)
    build = lambda: (tiny_llama(tok, hidden=16, layers=1, heads=2), tok)  # noqa: E731
    logs: list[str] = []
    whole = embedded.train_cached(tmp_path / "whole", "whole", build, rows, cfg, {}, logs.append)

    real = transformers.Trainer.training_step
    steps = {"n": 0}

    def interrupted(self, *args, **kwargs):
        steps["n"] += 1
        if steps["n"] == 5:
            raise KeyboardInterrupt
        return real(self, *args, **kwargs)

    monkeypatch.setattr(transformers.Trainer, "training_step", interrupted)
    with pytest.raises(KeyboardInterrupt):
        embedded.train_cached(tmp_path / "cut", "cut", build, rows, cfg, {}, logs.append)
    assert not (tmp_path / "cut").exists() and (tmp_path / ".cut.checkpoints").is_dir()
    monkeypatch.setattr(transformers.Trainer, "training_step", real)
    embedded.train_cached(tmp_path / "cut", "cut", build, rows, cfg, {}, logs.append)
    assert any("resuming from checkpoint-4" in line for line in logs), logs
    assert not (tmp_path / ".cut.checkpoints").exists()
    a, b = load_file(whole / "model.safetensors"), load_file(tmp_path / "cut" / "model.safetensors")
    assert all(torch.equal(a[k], b[k]) for k in a)


def test_the_target_and_oracle_trained_side_by_side_equal_those_trained_one_after_the_other(
    tmp_path, monkeypatch
):
    """Two threads: the pair trains in two worker processes of one thread each; one thread: one after
    the other in this process, on one thread each too. Same weights, byte for byte: the workers get the
    whole recipe, and the cache entries are where the parent looks for them."""
    from unlearnkit.pipelines import embedded
    from unlearnkit.train import pretrain

    monkeypatch.setattr(pretrain, "PRETRAIN_DEFAULTS", {**pretrain.PRETRAIN_DEFAULTS, "epochs": 1.0})
    world = embedded.ensure_world(tmp_path / "cache", {**SMALL_WORLD, "seed": 0})
    base = embedded.ensure_base(tmp_path / "cache", world, 0, lambda line: None)
    recipe = {**embedded.TINY_FINETUNE, "epochs": 1.0}  # not the module's: a worker must be given it
    paths, logs = {}, {}
    for layout, threads in (("side_by_side", 2), ("one_after_the_other", 1)):
        specs = [
            dict(root=tmp_path / layout, base_dir=base, bench_dir=world, split=split, seed=0, recipe=recipe)
            for split in ("all", "retain")
        ]
        torch.set_num_threads(threads)
        try:
            logs[layout] = []
            paths[layout] = embedded.ensure_pair(specs, logs[layout].append)
        finally:
            torch.set_num_threads(1)
    assert any("side by side (1 thread each)" in line for line in logs["side_by_side"])
    assert not any("side by side" in line for line in logs["one_after_the_other"])
    for log in logs.values():
        assert sum("trained in" in line for line in log) == 2, log
    for a, b in zip(paths["side_by_side"], paths["one_after_the_other"], strict=True):
        assert a.name == b.name and a.parent.name == b.parent.name  # same role, same cache key
        assert (a / "model.safetensors").read_bytes() == (b / "model.safetensors").read_bytes()
    # a second call finds both in the cache and trains nothing
    again: list[str] = []
    torch.set_num_threads(2)
    try:
        embedded.ensure_pair(specs, again.append)
    finally:
        torch.set_num_threads(1)
    assert sum("from the cache" in line for line in again) == 2 and not any("training" in x for x in again)


def test_a_lab_fine_tune_replays_each_replay_row_replay_repeats_times(tmp_path, monkeypatch):
    """The target and the oracle train on their split plus REPLAY_REPEATS copies of every replay row
    (the replay keeps its share of the fine-tune); the count is part of the cache key."""
    from pathlib import Path

    from unlearnkit.data.sources import resolve_data
    from unlearnkit.pipelines import embedded
    from unlearnkit.train import pretrain
    from unlearnkit.train.finetune import training_rows

    monkeypatch.setattr(pretrain, "PRETRAIN_DEFAULTS", {**pretrain.PRETRAIN_DEFAULTS, "epochs": 1.0})
    world = embedded.ensure_world(tmp_path / "cache", {**SMALL_WORLD, "seed": 0})
    base = embedded.ensure_base(tmp_path / "cache", world, 0, lambda line: None)
    seen = {}

    def capture(path, label, build, rows, cfg, provenance, log, progress=True):
        seen["rows"], seen["provenance"] = rows, provenance
        return path

    monkeypatch.setattr(embedded, "train_cached", capture)
    spec = dict(root=tmp_path / "cache", base_dir=base, bench_dir=world, split="retain", seed=0, log=print)
    embedded.ensure_finetuned(**spec)
    replay = pretrain.read_replay([Path(p) for p in seen["provenance"]["replay"]])
    own = training_rows(resolve_data(world), "retain")
    assert replay and embedded.REPLAY_REPEATS == 6 == seen["provenance"]["replay_repeats"]
    assert seen["rows"] == own + replay * 6
    once = embedded.ensure_finetuned(**spec, replay_repeats=1, dry_run=True)
    assert once != embedded.ensure_finetuned(**spec, dry_run=True)


def test_methods_side_by_side_give_the_rows_of_one_process(small_lab, tmp_path, capsys):
    """Two threads: the methods and the robust row run two at a time in workers of one thread each
    (the teacher first, its robust row on the next free worker); one thread: one after the other in
    this process. Same rows in the same order with the same numbers (the lab comes from one cache, so
    both runs start from the same target; the audit runs in this process on its threads and is left out)."""
    runs = {}
    for layout, threads in (("side_by_side", 2), ("one_process", 1)):
        out = tmp_path / layout
        torch.set_num_threads(threads)
        try:
            assert main(quickstart_argv(out, small_lab, "--methods", "ga,npo,t-npo", "--robust")) == 0
        finally:
            torch.set_num_threads(1)
        runs[layout] = (json.loads((out / "metrics.json").read_text()), capsys.readouterr().out)
    (side, printed), (one, _) = runs["side_by_side"], runs["one_process"]
    assert "unlearning 2 methods at a time (1 thread each)" in printed
    assert "the methods and the robust row (side by side)" in printed
    assert list(side) == list(one) == ["target", "oracle", "base", "ga", "npo", "t-npo", "npo+undo0.25"]
    audit_keys = {k for row in one.values() for k in row if k.startswith("relearn")}
    for row in one:
        a = {k: v for k, v in side[row].items() if k != "train_seconds" and k not in audit_keys}
        b = {k: v for k, v in one[row].items() if k != "train_seconds" and k not in audit_keys}
        assert a == b, row
    assert (
        printed.index("  ga ")
        < printed.index("  npo ")
        < printed.index("  t-npo ")
        < printed.index("npo+undo0.25 in")
    )
