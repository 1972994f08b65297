"""The whole CLI on a miniature world: world -> finetune target/oracle -> unlearn -> eval -> quickstart."""

from __future__ import annotations

import json

import pytest

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
                    "epochs=60",
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
    # 12 forget items give the KS test little power; the full-size world shows the gap (BENCHMARKS.md)
    assert 0.0 <= target["forget_quality"] <= 1.0
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


def test_quickstart_on_a_miniature_world(tmp_path, capsys):
    out = tmp_path / "qs"
    code = main(
        [
            "quickstart",
            "--output",
            str(out),
            "--authors",
            "12",
            "--facts",
            "4",
            "--methods",
            "ga,asu,t-npo",
            "--cache-dir",
            str(tmp_path / "cache"),
            "--no-audit",
        ]
    )
    assert code == 0
    metrics = json.loads((out / "metrics.json").read_text())
    assert list(metrics) == ["target", "oracle", "ga", "asu", "t-npo"]
    for row in metrics.values():
        for key in (
            "forget_quality",
            "model_utility",
            "forget_rougeL_recall",
            "forget_prob",
            "forget_truth_ratio",
            "forget_token_entropy",
            "retain_rougeL_recall",
        ):
            assert key in row
    html = (out / "report.html").read_text()
    assert "data:image/png;base64," in html and "t-npo" in html
    # a second run reuses the cached target and oracle
    capsys.readouterr()
    assert (
        main(
            [
                "quickstart",
                "--output",
                str(out),
                "--authors",
                "12",
                "--facts",
                "4",
                "--methods",
                "ga",
                "--cache-dir",
                str(tmp_path / "cache"),
                "--overwrite",
                "--no-audit",
            ]
        )
        == 0
    )
    assert "reusing cached target" in capsys.readouterr().out
