"""The sweep's default space follows the model's scale, and a sweep that moves nothing says so.

The model is one ``unlearnkit finetune`` made on the mini world (tests/sweep_helpers.py): it records the
tiny recipe, as the quickstart's target does.
"""

from __future__ import annotations

import json

import pytest
from sweep_helpers import sweep_argv, trained_pair

from unlearnkit.cli import main


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    return trained_pair(tmp_path_factory)


def test_a_finetuned_tiny_model_gets_the_tiny_space_and_a_pretrained_one_the_papers(inputs, tiny_model_dir):
    from unlearnkit.pipelines.sweep import SPACES_DIR, load_space, model_scale
    from unlearnkit.train.methods import get_method

    scale, why = model_scale(inputs / "target")
    assert scale == "tiny" and "lr 0.0005" in why
    space = load_space(None, get_method("npo"), model=inputs / "target")
    assert space.source == str(SPACES_DIR / "tiny" / "npo.yaml")
    lr = space.params["lr"]
    assert lr.low <= 5e-4 <= lr.high  # the recorded recipe's lr lies inside the searched range
    assert load_space(None, get_method("ga"), model=inputs / "target").source.endswith("tiny/ga.yaml")
    assert load_space(None, get_method("me_gd"), model=inputs / "target").source.endswith("tiny/default.yaml")
    # a model without a recorded recipe (as a pretrained one): the papers' 1B-8B ranges
    assert model_scale(tiny_model_dir)[0] == "paper"
    paper = load_space(None, get_method("npo"), model=tiny_model_dir)
    assert paper.source == str(SPACES_DIR / "npo.yaml") and paper.params["lr"].high <= 1e-4


def test_every_tiny_space_loads_for_its_method():
    from unlearnkit.pipelines.sweep import SPACES_DIR, load_space
    from unlearnkit.train.methods import get_method

    files = sorted((SPACES_DIR / "tiny").glob("*.yaml"))
    assert {p.name for p in files} == {p.name for p in SPACES_DIR.glob("*.yaml")}  # one per paper space
    for path in files:
        space = load_space(path, get_method("gd" if path.stem == "default" else path.stem))
        assert "lr" in space.params


PAPER_LR = """
params:
  lr: {low: 2.0e-6, high: 5.0e-5, log: true}   # the papers' range (spaces/npo.yaml): the 7B scale
fixed:
  epochs: 1
  batch_size: 4
  grad_accum: 1
  max_length: 64
  warmup_epochs: 0
"""


def test_a_sweep_whose_trials_leave_the_model_where_it_was_says_so_and_chooses_nothing(
    tmp_path, inputs, capsys
):
    space = tmp_path / "paper.yaml"
    space.write_text(PAPER_LR, encoding="utf-8")
    out = tmp_path / "sweep"
    args = sweep_argv(inputs, inputs / "world", out, 2, "--prune-floor", "0")
    args[args.index("--space") + 1] = str(space)
    args[args.index("--method") + 1] = "npo"
    i = args.index("--retain-model")
    del args[i : i + 2]  # objectives forget ROUGE-L + utility: no oracle needed
    assert main(args) == 4
    err = capsys.readouterr().err
    assert "left the model where it was" in err and "within noise of the target's" in err
    assert "widen lr" in err and "2e-06 to 5e-05" in err
    assert not (out / "best.yaml").exists()
    summary = json.loads((out / "summary.json").read_text())
    assert summary["chosen_trial"] is None and "left the model where it was" in summary["refused"]
    assert summary["trials"]["COMPLETE"] == 2
    assert "No trial chosen" in (out / "report.html").read_text()


def test_on_paraphrases_in_unseen_wording_the_sweep_refuses_and_names_the_zero_component(
    tmp_path, mini_world, capsys
):
    """A user's case: 10 forget items, paraphrased answers worded unlike anything the model was trained
    on. The trained model prefers the wrong answers in trained wording, retain truth ratio is 0, model
    utility is 0 for every trial: the sweep must refuse to choose, and say which component and why."""
    from sweep_helpers import CHOICE_SPACE, TRAIN

    from unlearnkit.data import read_jsonl

    data = tmp_path / "own"
    data.mkdir()
    for split, keep in (("forget", 10), ("retain", None), ("holdout", 10), ("general", None)):
        rows = read_jsonl(mini_world / f"{split}.jsonl")[:keep]
        for r in rows:
            r.pop("_line", None)  # the reader's bookkeeping, not a field
            r["paraphrased_answer"] = f"Going by the records kept on this, one finds {r['fact_value']} noted."
        (data / f"{split}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    assert main(["finetune", "--data", str(data), "--output", str(tmp_path / "target"), *TRAIN]) == 0
    (tmp_path / "choice.yaml").write_text(CHOICE_SPACE, encoding="utf-8")
    out = tmp_path / "sweep"
    args = ["sweep", "--model", str(tmp_path / "target"), "--data", str(data), "--method", "gd"]
    args += ["--output", str(out), "--trials", "2", "--space", str(tmp_path / "choice.yaml")]
    args += ["--max-items", "10", "--max-new-tokens", "6", "--prune-floor", "0"]
    capsys.readouterr()
    assert main(args) == 4
    err = capsys.readouterr().err
    assert "sweep refused to choose" in err and "No trial is chosen" in err
    assert "retain_truth_ratio" in err and "is 0" in err and "paraphrased_answer" in err and "wording" in err
    assert not (out / "best.yaml").exists()
