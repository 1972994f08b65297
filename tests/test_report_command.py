"""``unlearnkit report``: the side-by-side report of one's own eval folders (README, "Unlearn your own model")."""

from __future__ import annotations

import json

import pytest

from unlearnkit.cli import main


@pytest.fixture(scope="module")
def eval_folders(tmp_path_factory, mini_world, tiny_model_dir):
    root = tmp_path_factory.mktemp("report")
    for name in ("oracle", "npo"):
        argv = ["eval", "--model", str(tiny_model_dir), "--data", str(mini_world), "--max-new-tokens", "4"]
        if name == "npo":
            argv += ["--retain-model", str(root / "eval_oracle")]
        assert main([*argv, "--output", str(root / f"eval_{name}")]) == 0
    return root


def test_the_report_lays_out_every_eval_folder_in_the_order_given(eval_folders, capsys):
    out = eval_folders / "page"
    argv = [
        "report",
        "--eval",
        f"npo={eval_folders / 'eval_npo'}",
        "--eval",
        f"oracle={eval_folders / 'eval_oracle'}",
    ]
    assert main([*argv, "--output", str(out), "--title", "my rows"]) == 0
    printed = capsys.readouterr().out
    rows = json.loads((out / "metrics.json").read_text())
    assert list(rows) == ["npo", "oracle"]
    for name in rows:
        assert rows[name] == json.loads((eval_folders / f"eval_{name}" / "metrics.json").read_text())
    details = json.loads((eval_folders / "eval_npo" / "details.json").read_text())["forget"]
    shown = json.loads((out / "generations.json").read_text())
    assert 0 < len(shown) <= 5
    for item in shown:  # every row's own answer to the same question
        i = details["questions"].index(item["question"])
        assert item["outputs"]["npo"] == details["generations"][i] and item["answer"] == details["answers"][i]
    page = (out / "report.html").read_text()
    assert "<title>my rows</title>" in page and shown[0]["question"] in page
    assert (out / "tradeoff.png").is_file() and "Verdict" in printed


@pytest.mark.parametrize(
    "evals, needle",
    [
        (["npo"], "--eval 'npo': expected NAME=EVAL_DIR"),
        (["npo=no_such_folder"], "--eval npo=no_such_folder: no such folder"),
        (["a={o}", "a={o}"], "the same row name twice"),
    ],
)
def test_bad_evals_are_one_error_line(eval_folders, tmp_path, capsys, evals, needle):
    argv = ["report"]
    for item in evals:
        argv += ["--eval", item.format(o=eval_folders / "eval_oracle")]
    assert main([*argv, "--output", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and needle in err[0]
    assert not (tmp_path / "out").exists()
