"""The sweep's default space follows the model's scale, and a sweep that moves nothing says so (issue 19.3).

The model is one ``unlearnkit finetune`` made on the mini world (tests/sweep_helpers.py): it records the
tiny recipe, as the quickstart's target does.
"""

from __future__ import annotations

import json

import pytest
from sweep_helpers import sweep_argv, trained_pair

from unlearnkit.cli import main


@pytest.fixture(scope="module")
def inputs(tmp_path_factory, mini_world):
    return trained_pair(tmp_path_factory, mini_world)


def test_a_finetuned_tiny_model_gets_the_tiny_space_and_a_pretrained_one_the_papers(inputs, tiny_model_dir):
    from unlearnkit.sweep import SPACES_DIR, load_space, model_scale
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
    from unlearnkit.sweep import SPACES_DIR, load_space
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
    tmp_path, inputs, mini_world, capsys
):
    space = tmp_path / "paper.yaml"
    space.write_text(PAPER_LR, encoding="utf-8")
    out = tmp_path / "sweep"
    args = sweep_argv(inputs, mini_world, out, 2, "--prune-floor", "0")
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
