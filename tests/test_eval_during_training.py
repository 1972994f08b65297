"""``unlearn --eval-every`` / ``--keep-best``: evaluation on the selection half during training,
the curve, the best state as the output, resume, and the same under torchrun with 2 processes."""

from __future__ import annotations

import dataclasses
import json
import math
import os
import subprocess
import sys

import pytest
import torch
from tolerances import CURVE_ROUNDING_ATOL

from unlearnkit.errors import UserError
from unlearnkit.train import evaluation_callback as E

RUN = dict(max_steps=4, batch_size=4, grad_accum=1, warmup_epochs=0, lr=1e-2, collapse_guard="off")


def _run(tiny_model_dir, bench, work, method="ga", **kw):
    from unlearnkit.models import load
    from unlearnkit.pipelines.unlearn import unlearn

    model, tok = load(str(tiny_model_dir))
    values = {**RUN, **kw}
    return unlearn(
        model, tok, bench.forget, bench.retain, method, model_path=str(tiny_model_dir), work_dir=work,
        quiet=True, eval_data=bench, **values,
    ), tok  # fmt: skip


# --- the objective ---------------------------------------------------------------------------------


def test_objective_is_a_signed_sum_of_metric_names():
    terms = E.parse_objective("forget_quality+model_utility")
    assert terms == ((1, "forget_quality"), (1, "model_utility"))
    terms = E.parse_objective("model_utility - forget_rougeL_recall")
    assert terms == ((1, "model_utility"), (-1, "forget_rougeL_recall"))
    metrics = {"model_utility": 0.5, "forget_rougeL_recall": 0.2, "forget_quality": 0.01}
    assert E.objective_value(terms, metrics) == pytest.approx(0.5 - 0.2)
    assert E.objective_value(((-1, "forget_quality"),), metrics) == pytest.approx(-0.01)
    assert E.objective_value(terms, {"model_utility": 0.5, "forget_rougeL_recall": float("nan")}) is None
    assert E.objective_value(terms, {"model_utility": 0.5}) is None
    for bad in ("", "forget_quality++model_utility", "fq*2", "forget quality"):
        with pytest.raises(UserError, match="sum of metric names"):
            E.parse_objective(bad)


def test_eval_every_is_steps_or_epoch():
    assert E.parse_every("epoch") == "epoch" and E.parse_every("7") == 7
    for bad in ("0", "-1", "often", "1.5"):
        with pytest.raises(UserError, match="--eval-every"):
            E.parse_every(bad)


def test_keep_best_names_are_checked_against_the_protocol(mini_bench, tiny_model_dir):
    known = E.known_metrics(mini_bench, has_oracle=True)
    expected = {"forget_quality", "model_utility", "forget_rougeL_recall", "real_authors_truth_ratio"}
    assert expected <= set(known)
    assert "forget_quality" not in E.known_metrics(mini_bench, has_oracle=False)
    with pytest.raises(UserError) as err:
        E.plan_evaluation(mini_bench, 0, 2, "forget_qualty+model_utility", str(tiny_model_dir))
    assert "forget_qualty" in str(err.value) and "model_utility" in str(err.value)
    with pytest.raises(UserError, match="needs --retain-model"):
        E.plan_evaluation(mini_bench, 0, 2, "forget_quality+model_utility")


def test_plan_reads_the_selection_half_only(mini_bench):
    from unlearnkit.data.halves import split_halves

    plan = E.plan_evaluation(mini_bench, 3, "epoch", "model_utility")
    selection, test, _ = split_halves(mini_bench, 3)
    for part in ("forget", "retain", "general"):
        assert plan.bench.split(part) == selection.split(part)
        assert not {r["question"] for r in plan.bench.split(part)} & {r["question"] for r in test.split(part)}
    assert plan.bench.holdout == []  # no membership inference during training


def test_raw_text_without_a_protocol_is_refused(mini_world):
    from unlearnkit.data import load_benchmark

    corpus = mini_world / "muse"
    bench = load_benchmark(corpus)
    assert E.protocol_of(bench) == "muse"
    bare = dataclasses.replace(bench, extra={})
    with pytest.raises(UserError, match="raw text without a protocol"):
        E.plan_evaluation(bare, 0, 1)


# --- the callback ----------------------------------------------------------------------------------


def test_curve_is_the_protocol_on_the_selection_half_and_keep_best_returns_that_state(
    tiny_model_dir, mini_bench, tmp_path, monkeypatch
):
    """The output is the best evaluated state (weights recorded at every step by an extra callback), and
    the curve's numbers are what the TOFU protocol gives on the selection half for those weights."""
    import transformers.trainer as hf_trainer
    from transformers import TrainerCallback

    from unlearnkit.data.halves import split_halves
    from unlearnkit.evaluation.evaluate import evaluate
    from unlearnkit.models import load
    from unlearnkit.train.callback_state import trainable_state

    states, copies = {}, []

    class Recorder(TrainerCallback):
        def on_step_end(self, args, state, control, model=None, **kwargs):
            states[state.global_step] = trainable_state(model)
            copies.append(len(list((tmp_path / "w" / E.BEST_DIR).glob("*.safetensors"))))

    monkeypatch.setattr(hf_trainer, "DEFAULT_CALLBACKS", [*hf_trainer.DEFAULT_CALLBACKS, Recorder()])
    objective = "forget_quality+model_utility"
    res, tok = _run(
        tiny_model_dir, mini_bench, tmp_path / "w", eval_every=1, keep_best=objective,
        retain_model=str(tiny_model_dir), eval_max_items=8, eval_max_new_tokens=8,
    )  # fmt: skip
    steps = [e["step"] for e in res.eval_curve]
    assert steps == [0, 1, 2, 3, 4]
    candidates = [e for e in res.eval_curve if e["step"] > 0]
    best = max(candidates, key=lambda e: (e["objective"], -e["step"]))
    assert res.best["step"] == best["step"] and res.best["chosen"]
    assert max(copies) == 1  # without checkpoints one copy of the best weights is kept on disk
    assert not (tmp_path / "w" / E.BEST_DIR).exists()  # and removed at the end
    out = dict(res.model.named_parameters())
    for name, tensor in states[best["step"]].items():
        assert torch.equal(out[name].detach(), tensor), name

    # independent: the oracle's truth ratios and the protocol on the selection half, recomputed
    selection = dataclasses.replace(split_halves(mini_bench, 0)[0], holdout=[])
    st = E.plan_evaluation(mini_bench, 0, 1, max_items=8, max_new_tokens=8).tofu_settings()
    oracle, otok = load(str(tiny_model_dir))
    _, oracle_details = evaluate(oracle, otok, selection, st)
    metrics, _ = evaluate(res.model, tok, selection, st, oracle_details["forget"]["truth_ratios"])
    for name in ("forget_quality", "model_utility", "forget_rougeL_recall", "forget_truth_ratio"):
        assert best["metrics"][name] == pytest.approx(metrics[name], abs=CURVE_ROUNDING_ATOL), name
    assert best["objective"] == pytest.approx(
        metrics["forget_quality"] + metrics["model_utility"], abs=2 * CURVE_ROUNDING_ATOL
    )


def test_evaluating_changes_nothing_in_the_run(tiny_model_dir, mini_bench, tmp_path):
    """Same weights and the same compute count with and without --eval-every (RNG, mode, counter restored)."""
    plain, _ = _run(tiny_model_dir, mini_bench, tmp_path / "a", method="npo")
    watched, _ = _run(
        tiny_model_dir, mini_bench, tmp_path / "b", method="npo", eval_every=2, eval_max_items=4,
        eval_max_new_tokens=4,
    )  # fmt: skip
    assert [e["step"] for e in watched.eval_curve] == [0, 2, 4]
    a, b = dict(plain.model.named_parameters()), dict(watched.model.named_parameters())
    assert all(torch.equal(a[k], b[k]) for k in a)
    for key in ("forward_tokens", "backward_tokens"):
        assert plain.compute[key] == watched.compute[key]


def test_eval_every_epoch_evaluates_each_epochs_last_step(tiny_model_dir, mini_bench, tmp_path):
    # 12 forget rows, batch 4: 3 steps per epoch; 2.5 epochs = 8 steps (the last epoch cut short)
    res, _ = _run(
        tiny_model_dir, mini_bench, tmp_path / "w", max_steps=-1, epochs=2.5, eval_every="epoch",
        eval_max_items=4, eval_max_new_tokens=4,
    )  # fmt: skip
    assert [e["step"] for e in res.eval_curve] == [0, 3, 6, 8]
    assert [e["epoch"] for e in res.eval_curve][:3] == [0.0, 1.0, 2.0]


def test_a_resumed_run_continues_the_curve(tiny_model_dir, mini_bench, tmp_path, monkeypatch):
    import transformers.trainer as hf_trainer
    from transformers import TrainerCallback

    kw = dict(
        eval_every=1, keep_best="-forget_prob", eval_max_items=4, eval_max_new_tokens=4, save_every=2,
        save_total_limit=1,
    )  # fmt: skip
    whole, _ = _run(tiny_model_dir, mini_bench, tmp_path / "whole", **kw)

    class Crash(TrainerCallback):
        def on_step_end(self, args, state, control, **kwargs):
            if state.global_step == 3:
                raise KeyboardInterrupt  # killed between checkpoint-2 and the end

    with monkeypatch.context() as patch:
        patch.setattr(hf_trainer, "DEFAULT_CALLBACKS", [*hf_trainer.DEFAULT_CALLBACKS, Crash()])
        with pytest.raises(KeyboardInterrupt):
            _run(tiny_model_dir, mini_bench, tmp_path / "cut", **kw)
    assert (tmp_path / "cut" / "checkpoint-2").is_dir()
    with pytest.raises(UserError, match="evaluation settings changed"):  # the curve would change meaning
        _run(
            tiny_model_dir, mini_bench, tmp_path / "cut", resume=True, **{**kw, "keep_best": "model_utility"}
        )
    warned: list[str] = []
    with monkeypatch.context() as patch:
        patch.setattr(hf_trainer.logger, "warning", lambda msg, *a, **k: warned.append(str(msg)))
        resumed, _ = _run(tiny_model_dir, mini_bench, tmp_path / "cut", resume=True, **kw)
    # the tiny model ties its embeddings: the checkpoint stores the shared tensor once, nothing is missing
    assert not [w for w in warned if "missing keys" in w], warned
    assert resumed.model.lm_head.weight.data_ptr() == resumed.model.get_input_embeddings().weight.data_ptr()
    assert resumed.eval_curve == whole.eval_curve
    assert resumed.best == whole.best
    a, b = dict(whole.model.named_parameters()), dict(resumed.model.named_parameters())
    assert all(torch.equal(a[k], b[k]) for k in a)


def test_muse_like_data_is_evaluated_with_the_muse_protocol(tiny_model_dir, mini_world, tmp_path):
    from unlearnkit.data import load_benchmark

    bench = load_benchmark(mini_world / "muse")
    plan = E.plan_evaluation(bench, 0, 2, "-verbmem_forget_rougeL_f1", max_items=4, max_new_tokens=4)
    assert plan.protocol == "muse"
    for key, rows in bench.extra.items():
        if key.endswith("_icl"):
            assert plan.bench.extra[key] == rows  # few-shot prompts stay whole
        elif rows:
            assert 0 < len(plan.bench.extra[key]) < len(rows)
    res, _ = _run(tiny_model_dir, bench, tmp_path / "w", eval_every=plan, max_steps=2)
    assert [e["step"] for e in res.eval_curve] == [0, 2]
    assert {"verbmem_forget_rougeL_f1", "knowmem_retain_rougeL_f1"} <= set(res.eval_curve[-1]["metrics"])
    assert res.best["step"] == 2


def test_wmdp_like_tasks_are_cut_by_whole_entities(mini_world):
    from unlearnkit.data import load_benchmark

    bench = load_benchmark(mini_world / "wmdp")
    plan = E.plan_evaluation(bench, 0, 1, "-wmdp_hazard_acc")
    assert plan.protocol == "wmdp"
    for task, rows in bench.mc_tasks.items():
        chosen = plan.mc_tasks[task]
        assert 0 < len(chosen) < len(rows)
        inside = {r["entity"] for r in chosen}
        assert all(r in chosen for r in rows if r["entity"] in inside)  # no entity on both sides


# --- the command -----------------------------------------------------------------------------------


def test_cli_writes_the_curve_and_says_which_step_it_kept(tiny_model_dir, mini_world, tmp_path, capsys):
    from unlearnkit.cli import main

    out = tmp_path / "out"
    argv = ["unlearn", "--model", str(tiny_model_dir), "--data", str(mini_world), "--method", "ga"]
    argv += ["--output", str(out), "--eval-every", "2", "--keep-best", "forget_quality+model_utility"]
    argv += ["--retain-model", str(tiny_model_dir), "--eval-max-items", "4", "--eval-max-new-tokens", "4"]
    for key, value in {**RUN, "collapse_guard": "warn"}.items():
        argv += ["--set", f"{key}={value}"]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    card = json.loads((out / "unlearnkit.json").read_text())
    best = card["keep_best"]
    assert f"the output is the state of step {best['step']}" in printed
    assert [p["step"] for p in card["eval_curve"]] == [0, 2, 4]
    assert card["evaluation_during_training"]["half"].startswith("selection")
    curve = json.loads((out / "curve.json").read_text())
    assert [e["step"] for e in curve["curve"]] == [0, 2, 4]
    assert "model_utility" in curve["curve"][0]["metrics"]
    assert (out / "curve.png").read_bytes()[:4] == b"\x89PNG"
    assert card["collapse_guard"]["action"] == "warn" and card["collapse_guard"]["checks"]

    from unlearnkit.report.curve import curve_section  # the report's section (wired by the report)

    html = "\n".join(curve_section(out))
    assert f"<td>{best['step']} (kept)</td>" in html and "selection half" in html
    assert html.count("<tr") == 1 + 3 and 'src="data:image/png;base64,' in html


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--keep-best", "model_utility"], "--keep-best needs --eval-every"),
        (["--eval-every", "2", "--keep-best", "forget_qualty"], "unknown metric forget_qualty"),
        (["--eval-every", "sometimes"], "--eval-every sometimes"),
        (["--eval-max-items", "10"], "add --eval-every"),
    ],
)
def test_cli_refuses_bad_evaluation_flags_in_one_line(
    tiny_model_dir, mini_world, tmp_path, capsys, extra, message
):
    from unlearnkit.cli import main

    out = tmp_path / "out"
    argv = ["unlearn", "--model", str(tiny_model_dir), "--data", str(mini_world), "--method", "ga"]
    assert main([*argv, "--output", str(out), *extra]) == 2
    err = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert len(err) == 1 and message in err[0], err
    assert not out.exists() and not (tmp_path / ".out.checkpoints").exists()


def test_cli_defaults_match_the_library():
    from unlearnkit.commands import unlearn as command

    assert command.DEFAULT_MAX_ITEMS == E.DEFAULT_MAX_ITEMS
    assert command.DEFAULT_MAX_NEW_TOKENS == E.DEFAULT_MAX_NEW_TOKENS


def test_torchrun_two_processes_evaluate_on_the_main_one(tiny_model_dir, mini_world, mini_bench, tmp_path):
    """One launch: 2 gloo ranks, evaluation on rank 0 while rank 1 waits; both ranks end identical, the
    card holds the curve and the output is the state of the best step, which evaluates as the curve says."""
    from unlearnkit.evaluation.evaluate import evaluate
    from unlearnkit.models import load

    out, ranks = tmp_path / "ddp", tmp_path / "ranks"
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2"]
    cmd += ["-m", "unlearnkit.cli", "unlearn", "--model", str(tiny_model_dir), "--data", str(mini_world)]
    cmd += ["--method", "npo", "--output", str(out), "--eval-every", "1", "--keep-best", "model_utility"]
    cmd += ["--eval-max-items", "4", "--eval-max-new-tokens", "4"]
    for key, value in {**RUN, "max_steps": 3, "batch_size": 6, "lr": 1e-2, "collapse_guard": "warn"}.items():
        cmd += ["--set", f"{key}={value}"]
    env = dict(os.environ, OMP_NUM_THREADS="1", TOKENIZERS_PARALLELISM="false")
    env["UNLEARNKIT_DEBUG_CHECKSUMS"] = str(ranks)
    env.pop("WORLD_SIZE", None)
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    digests = [json.loads((ranks / f"rank{r}.json").read_text()) for r in (0, 1)]
    assert digests[0]["sha256"] == digests[1]["sha256"] and digests[0]["world_size"] == 2
    card = json.loads((out / "unlearnkit.json").read_text())
    assert [p["step"] for p in card["eval_curve"]] == [0, 1, 2, 3]
    step = card["keep_best"]["step"]
    assert f"the output is the state of step {step}" in proc.stdout
    assert proc.stdout.count("evaluation during training") == 1  # one process reports
    plan = E.plan_evaluation(mini_bench, 0, 1, "model_utility", max_items=4, max_new_tokens=4)
    model, tok = load(str(out))
    metrics, _ = evaluate(model, tok, plan.bench, plan.tofu_settings())
    kept = next(p for p in card["eval_curve"] if p["step"] == step)
    assert kept["model_utility"] == pytest.approx(metrics["model_utility"], abs=CURVE_ROUNDING_ATOL)
    assert not math.isnan(metrics["model_utility"])


def test_a_resume_still_reports_keys_that_are_really_missing(tiny_model_dir, monkeypatch, tmp_path):
    """TiedWeightsTrainer drops only tied keys from the Trainer's warning: a missing key of its own
    (here a layer norm) is still reported."""
    import transformers.trainer as hf_trainer
    from torch.nn.modules.module import _IncompatibleKeys
    from transformers import TrainingArguments

    from unlearnkit.models import load
    from unlearnkit.train.trainer import TiedWeightsTrainer, tied_parameter_names

    model, _ = load(str(tiny_model_dir))
    assert {"lm_head.weight", "model.embed_tokens.weight"} <= tied_parameter_names(model)
    with torch.device("meta"):  # parameters without storage are never taken for tied ones
        assert (
            tied_parameter_names(torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.Linear(2, 2))) == set()
        )
    trainer = TiedWeightsTrainer(model=model, args=TrainingArguments(str(tmp_path), report_to="none"))
    warned: list[str] = []
    monkeypatch.setattr(hf_trainer.logger, "warning", lambda msg, *a, **k: warned.append(str(msg)))
    trainer._issue_warnings_after_load(_IncompatibleKeys(["lm_head.weight"], []))
    assert warned == []
    trainer._issue_warnings_after_load(_IncompatibleKeys(["lm_head.weight", "model.norm.weight"], []))
    assert len(warned) == 1 and "model.norm.weight" in warned[0] and "lm_head" not in warned[0]
