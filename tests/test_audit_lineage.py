"""The relearning attack's defaults follow the model's cards (:mod:`unlearnkit.evaluation.audit.lineage`):
a tiny model from scratch, one fine-tuned from a tiny pretrained base (the lab's calibrated attack), a
downloaded checkpoint, and a model whose cards say nothing. Cards only: no model is loaded."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from unlearnkit.evaluation.audit.lineage import (
    RELEARN_DATA_DEFAULTS,
    RELEARN_DEFAULTS,
    lineage,
    relearn_defaults,
)


def folder(root: Path, name: str, card: dict | None) -> Path:
    path = root / name
    path.mkdir()
    (path / "config.json").write_text("{}")
    if card is not None:
        (path / "unlearnkit.json").write_text(json.dumps(card))
    return path


def test_each_lineage_gets_its_row(tmp_path):
    base = folder(
        tmp_path, "base", {"kind": "base", "base_model": "tiny", "finetune_defaults": {"train": {}}}
    )
    target = folder(tmp_path, "target", {"kind": "target", "base_model": str(base)})
    npo = folder(tmp_path, "npo", {"kind": "unlearned", "base_model": str(target)})
    scratch = folder(tmp_path, "scratch", {"kind": "target", "base_model": "tiny"})
    scratch_npo = folder(tmp_path, "scratch_npo", {"kind": "unlearned", "base_model": str(scratch)})
    downloaded = folder(tmp_path, "llama", None)
    tuned = folder(tmp_path, "tuned", {"kind": "target", "base_model": str(downloaded)})
    hub_tuned = folder(tmp_path, "hub_tuned", {"kind": "target", "base_model": "meta-llama/Llama-3.2-1B"})
    silent = folder(tmp_path, "silent", {"kind": "test model"})
    expect = {
        npo: "tiny base",
        target: "tiny base",
        base: "tiny base",
        scratch_npo: "scratch",
        downloaded: "pretrained",
        tuned: "pretrained",
        hub_tuned: "pretrained",
        silent: "unknown",
    }
    for path, kind in expect.items():
        assert lineage(path)[0] == kind, (path.name, lineage(path))
    assert lineage("meta-llama/Llama-3.2-1B")[0] == "pretrained" and lineage(None)[0] == "unknown"
    lr, steps, fit, why = relearn_defaults(npo)
    assert (lr, steps, fit) == (5e-5, (20, 100, 250), 0.5) and str(base) in why and str(npo) in why
    assert relearn_defaults(scratch_npo)[:2] == (1e-3, (5, 10, 20, 50))
    assert relearn_defaults(tuned)[0] == 1e-5
    # the cap was calibrated on the tiny base's lab only: every other lineage attacks plainly
    assert relearn_defaults(tuned).fit_prob == relearn_defaults(scratch_npo).fit_prob == 1.0
    # a WMDP-like folder's questions need a higher rate on a tiny base (relearn_calibration_wmdp.md)
    lr, steps, fit, why = relearn_defaults(npo, "wmdp")
    assert (lr, steps, fit) == (1e-4, (20, 100, 250), 0.5) and "WMDP-like" in why and str(npo) in why
    assert relearn_defaults(npo, "qa")[:2] == relearn_defaults(npo, "muse")[:2] == (5e-5, (20, 100, 250))
    assert relearn_defaults(scratch_npo, "wmdp")[:2] == (1e-3, (5, 10, 20, 50))  # no row for the pair


def test_the_quickstart_audits_with_the_tiny_base_row():
    from unlearnkit.pipelines.quickstart import quickstart_audit_settings

    st = quickstart_audit_settings(0)
    assert (st.relearn_lr, st.relearn_steps, st.relearn_fit_prob) == RELEARN_DEFAULTS["tiny base"][:3]
    st = quickstart_audit_settings(0, "wmdp")
    row = RELEARN_DATA_DEFAULTS[("tiny base", "wmdp")]
    assert (st.relearn_lr, st.relearn_steps, st.relearn_fit_prob) == row[:3]
    assert quickstart_audit_settings(0, "muse").relearn_lr == RELEARN_DEFAULTS["tiny base"][0]


@pytest.mark.parametrize("given, lr, steps, fit", [([], 5e-5, (20, 100, 250), 0.5),
                                                   (["--relearn-lr", "1e-4"], 1e-4, (20, 100, 250), 0.5),
                                                   (["--relearn-steps", "5"], 5e-5, (5,), 0.5),
                                                   (["--relearn-fit-prob", "1"], 5e-5, (20, 100, 250), 1.0)])  # fmt: skip
def test_the_command_fills_only_what_was_not_given_and_says_so(tmp_path, capsys, given, lr, steps, fit):
    import argparse

    from unlearnkit.commands.audit import add_audit_arguments, settings_from_args

    base = folder(
        tmp_path, "base", {"kind": "base", "base_model": "tiny", "finetune_defaults": {"train": {}}}
    )
    target = folder(tmp_path, "target", {"kind": "target", "base_model": str(base)})
    parser = argparse.ArgumentParser()
    add_audit_arguments(parser)
    args = parser.parse_args(["--model", str(target), "--data", "d", "--output", "o", *given])
    st = settings_from_args(args)
    assert (st.relearn_lr, st.relearn_steps, st.relearn_fit_prob) == (lr, steps, fit)
    err = capsys.readouterr().err
    assert "relearning attack" in err and "tiny pretrained base" in err
    assert ("lr 5e-05" in err) == ("--relearn-lr" not in given)
    assert ("fit prob 0.5" in err) == ("--relearn-fit-prob" not in given)
    wmdp = settings_from_args(args, "wmdp")  # the data's kind picks its row
    assert wmdp.relearn_lr == (1e-4 if "--relearn-lr" not in given else lr)
    assert wmdp.relearn_steps == steps and "WMDP-like" in capsys.readouterr().err
    assert wmdp.relearn_fit_prob == fit  # the WMDP-like row caps too
