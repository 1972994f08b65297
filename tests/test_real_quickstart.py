"""``unlearnkit quickstart --model``: the real-model story's code path, run on a tiny random model (the
real run on SmolLM2-135M-Instruct takes minutes: README shows its output; tests/test_real_models.py
loads the real model)."""

from __future__ import annotations

import json

from unlearnkit.cli import main
from unlearnkit.pipelines.real_quickstart import PARTS, facts


def test_packaged_facts():
    parts = facts()
    assert [len(parts[p]) for p in PARTS] == [8, 8, 8]
    questions = [r["question"] for p in PARTS for r in parts[p]]
    assert len(set(questions)) == len(questions)
    # each answer states its fact: what fact recall looks for
    for rows in parts.values():
        for r in rows:
            assert r["fact_value"] in r["answer"]


def test_quickstart_with_a_model(tiny_model_dir, tmp_path, capsys, monkeypatch):
    from unlearnkit.pipelines import real_quickstart

    monkeypatch.setattr(real_quickstart, "REAL_RECIPE", {**real_quickstart.REAL_RECIPE, "epochs": 1.0})
    monkeypatch.setattr(real_quickstart, "TEACHER_TAUS", (1.0, 2.0))
    monkeypatch.setattr(real_quickstart, "NEW_TOKENS", 4)
    out = tmp_path / "qs"
    code = main(["quickstart", "--model", str(tiny_model_dir), "--methods", "asu,npo", "--output", str(out)])
    printed = capsys.readouterr()
    assert code == 0, printed.err
    record = json.loads((out / "metrics.json").read_text())
    assert list(record["rows"])[0] == "original" and "npo" in record["rows"]
    for row in record["rows"].values():
        for part in PARTS:
            assert 0.0 <= row["metrics"][f"{part}_fact_recall"] <= 1.0
    assert [s["tau"] for s in record["teacher_search"]["settings"]] == [1.0, 2.0]
    assert len(record["answers"]["npo"]["forget"]) == 8
    assert (out / "recall.png").read_bytes()[:4] == b"\x89PNG"
    page = (out / "report.html").read_text()
    assert "What is the chemical symbol for gold?" in page
    assert "forget" in printed.out and "retain" in printed.out


def test_quickstart_model_refuses_lab_flags(tiny_model_dir, tmp_path, capsys):
    out = tmp_path / "qs"
    assert main(["quickstart", "--model", str(tiny_model_dir), "--robust", "--output", str(out)]) == 2
    assert "--robust: a setting of the embedded lab" in capsys.readouterr().err
    assert main(["quickstart", "--model", str(tiny_model_dir), "--methods", "nope", "--output", str(out)]) == 2
    assert not out.exists()


def test_time_estimate_line():
    from unlearnkit.train.finetune import estimate_line

    line = estimate_line("fine-tuning", 30.0, 100, 120.0)
    assert line is not None and "100 steps, the first took 30 s: about 50 minutes" in line
    assert estimate_line("fine-tuning", 1.0, 100, 120.0) is None  # 100 s: no line
    assert estimate_line("fine-tuning", 500.0, 1, 120.0) is None  # one step: nothing left to estimate
