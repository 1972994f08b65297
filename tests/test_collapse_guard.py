"""The collapse guard: a cheap utility probe during unlearning that warns (default) or stops
when the model collapses, on by default, off with --no-collapse-guard."""

from __future__ import annotations

import json

import pytest
import torch
from safetensors.torch import load_file

from unlearnkit.train import collapse_guard as G

GENTLE = ["--set", "lr=1e-6"]
VIOLENT = ["--set", "lr=5e-2"]  # GA far too fast for a tiny model: it repeats one word within 2 steps
STEPS = [
    x for kv in ("max_steps=10", "batch_size=4", "grad_accum=1", "warmup_epochs=0") for x in ("--set", kv)
]


@pytest.fixture(scope="module")
def target(mini_world, tmp_path_factory):
    """The tiny model fine-tuned on the mini world until it answers its retain questions."""
    from unlearnkit.cli import main

    torch.set_num_threads(1)
    out = tmp_path_factory.mktemp("guard") / "target"
    assert main(["finetune", "--data", str(mini_world), "--output", str(out), "--set", "epochs=20"]) == 0
    return out


def _unlearn(target, mini_world, out, *extra):
    from unlearnkit.cli import main

    argv = ["unlearn", "--model", str(target), "--data", str(mini_world), "--method", "ga"]
    assert main([*argv, "--output", str(out), *STEPS, *extra]) == 0
    return json.loads((out / "unlearnkit.json").read_text())


# --- the pure parts ----------------------------------------------------------------------------------


def test_repetition_is_the_share_of_repeated_trigrams():
    assert G.repetition([1, 2, 3, 4, 5]) == 0.0
    assert G.repetition([7, 7, 7, 7, 7]) == pytest.approx(1 - 1 / 3)  # 3 trigrams, all (7, 7, 7)
    assert G.repetition([1, 2, 3, 1, 2, 3]) == pytest.approx(1 - 3 / 4)  # 123 231 312 123
    assert G.repetition([1, 2]) == 0.0


def test_the_token_cap_reads_short_loops_and_lets_a_world_answer_end(mini_bench):
    """The probe's cap (PROBE_NEW_TOKENS) is short to be cheap: a collapsed model never stops early, so
    every probe of one pays the whole cap (GA's guard share was 5.4 % of its training at 24 tokens). It
    still reads a loop of up to 6 tokens as a repetition above REPEAT_LIMIT, and a healthy answer of the
    world (its tokens and EOS) ends before it, so a healthy probe is not cut."""
    cap = G.PROBE_NEW_TOKENS
    for period in range(1, 7):
        loop = [(i % period) + 1 for i in range(cap)]
        assert G.repetition(loop) > G.REPEAT_LIMIT, period
    assert G.repetition([(i % 7) + 1 for i in range(cap)]) <= G.REPEAT_LIMIT  # the first loop it misses
    from unlearnkit.world.tiny import corpus_of, train_tokenizer

    rows = mini_bench.forget + mini_bench.retain + mini_bench.holdout + mini_bench.general
    tokenizer = train_tokenizer(corpus_of(rows))  # the lab's tokenizer (vocab 2048), on this world
    answers = [r["answer"] for r in mini_bench.forget + mini_bench.retain if "answer" in r]
    longest = max(len(tokenizer(a, add_special_tokens=False)["input_ids"]) for a in answers)
    assert longest + 1 <= cap, longest


def test_verdict_names_each_kind_of_collapse():
    start = {"rougeL_recall": 0.6, "token_entropy": 0.9, "repetition": 0.1}
    assert G.verdict(start, dict(start), 0.5) == []
    assert G.verdict(start, {**start, "rougeL_recall": 0.31}, 0.5) == []
    low = G.verdict(start, {**start, "rougeL_recall": 0.29}, 0.5)
    assert len(low) == 1 and "ROUGE-L fell to 0.290" in low[0]
    loop = G.verdict(start, {**start, "repetition": 0.8}, 0.5)
    assert len(loop) == 1 and "repeat" in loop[0]
    flat = G.verdict(start, {**start, "token_entropy": 0.3}, 0.5)
    assert len(flat) == 1 and "entropy" in flat[0]
    # a model that never answered (step-0 ROUGE below the floor) cannot lose its utility
    assert G.verdict({**start, "rougeL_recall": 0.01}, {**start, "rougeL_recall": 0.0}, 0.5) == []
    # a model that already repeats at step 0 is judged against that
    assert G.verdict({**start, "repetition": 0.6}, {**start, "repetition": 0.8}, 0.5) == []


def test_the_probe_schedule_is_bounded_and_stop_keeps_every_tenth():
    """Default (warn): step 0, halfway and the last step, at most PROBES + 2 probes however long the
    run (bench/speed.py measured 8-19 % of a quickstart run's training time with a probe every ~10 %,
    4.5-8.3 % with one every ~25 %);
    stop keeps a probe every ~10 %: those are the states it can go back to."""
    assert G.PROBES == 2 and G.STOP_PROBES == 10
    assert G.probe_steps(65) == [0, 33, 65]  # the quickstart's 5 epochs of 100 forget rows
    assert G.probe_steps(10, "stop") == list(range(11))
    assert G.probe_steps(1) == [0, 1]
    for steps in range(1, 400):
        for action, most in (("warn", G.PROBES), ("stop", G.STOP_PROBES)):
            probed = G.probe_steps(steps, action)
            assert probed[0] == 0 and probed[-1] == steps and len(probed) <= most + 2
            interval = G.probe_interval(steps, action)
            assert all(s % interval == 0 or s == steps for s in probed)


def test_the_probe_rouge_is_rouge_scores_without_the_stemmer():
    from rouge_score import rouge_scorer

    scorer = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=False)
    pairs = [
        ("The author was born in Paris.", "She was born in Paris, France"),
        ("paris paris paris", "Paris"),
        ("", "anything"),
        ("Écrit en 1990: x-ray!", "ecrit en 1990 x ray"),
        ("Writes novels", "wrote novels"),  # the stemmer would not match these either
        ("a b c d a b c d", "d c b a"),
        ("?!", "?!"),
    ]
    for prediction, reference in pairs:
        want = scorer.score(reference, prediction)["rougeL"].recall
        got = G.rouge_l_recall(prediction, reference)
        assert got == pytest.approx(want, abs=1e-12), (prediction, reference)


def test_a_probe_imports_neither_rouge_score_nor_nltk():
    """Importing nltk (rouge_score's stemmer) cost the first probe 0.3-1.2 s and 167 MiB: a probe must
    not bring it in (measured in a fresh interpreter: this one's tests may have imported it already)."""
    import subprocess
    import sys
    import textwrap

    code = textwrap.dedent(
        """
        import sys, torch
        from tiny_models import random_llama
        from unlearnkit.data.encode import PromptFormat
        from unlearnkit.train import collapse_guard as G
        from unlearnkit.world.tiny import train_tokenizer
        tok = train_tokenizer(["the author was born in paris", "she wrote three novels"] * 20)
        probe = G.UtilityProbe.from_rows(tok, PromptFormat.for_tokenizer(tok), [
            {"question": "Where was she born?", "answer": "in paris"}])
        with torch.no_grad():
            probe.measure(random_llama(tok), tok)
        print(sorted(m for m in ("nltk", "rouge_score") if m in sys.modules))
        """
    )
    from pathlib import Path

    tests = str(Path(__file__).resolve().parent)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tests, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().splitlines()[-1] == "[]"


def test_text_rows_get_a_continuation_probe(world_tokenizer):
    from unlearnkit.data.encode import PromptFormat

    fmt = PromptFormat.for_tokenizer(world_tokenizer, "plain")
    text = "The author was born in a small town by the sea and wrote about storms all her life. " * 3
    probe = G.UtilityProbe.from_rows(world_tokenizer, fmt, [{"text": text}, {"text": "too short"}])
    assert probe.kind == "text" and len(probe.items) == 1
    item = probe.items[0]
    ids = world_tokenizer(text)["input_ids"]
    assert item.prompt_ids == ids[: G.TEXT_PROMPT_TOKENS]
    assert item.reference == world_tokenizer.decode(
        ids[G.TEXT_PROMPT_TOKENS : G.TEXT_PROMPT_TOKENS + G.PROBE_NEW_TOKENS], skip_special_tokens=True
    )
    assert G.UtilityProbe.from_rows(world_tokenizer, fmt, [{"text": "too short"}]) is None


# --- runs ----------------------------------------------------------------------------------------------


def test_ga_at_a_high_lr_triggers_the_warning(target, mini_world, tmp_path, capsys):
    card = _unlearn(target, mini_world, tmp_path / "ga", *VIOLENT)
    err = capsys.readouterr().err
    lines = [x for x in err.splitlines() if "collapse guard" in x]
    assert len(lines) == 1, err[-2000:]
    assert "lower lr (now 0.05), forget_weight (now 1) or max_steps (now 10)" in lines[0]
    assert "collapse_guard=stop" in lines[0] and "--no-collapse-guard" in lines[0]
    record = card["collapse_guard"]
    assert record["action"] == "warn" and record["triggered"]["step"] < 10
    assert record["step_0"]["rougeL_recall"] > 0.3  # the target did answer at step 0
    assert "kept_step" not in record["triggered"]  # warn: trains on to the end


def test_a_gentle_run_does_not_trigger_it(target, mini_world, tmp_path, capsys):
    card = _unlearn(target, mini_world, tmp_path / "gentle", *GENTLE)
    assert "collapse guard" not in capsys.readouterr().err
    record = card["collapse_guard"]
    assert record["triggered"] is None
    # warn probes at step 0, every ceil(10 / PROBES) = 5 steps and the last: bounded by PROBES + 2 probes
    assert [c["step"] for c in record["checks"]] == G.probe_steps(10) == [0, 5, 10]
    assert record["probe"]["items"] == 2 * G.PROBE_ROWS


def test_stop_ends_training_and_keeps_the_last_good_state(target, mini_world, tmp_path, capsys, monkeypatch):
    import transformers.trainer as hf_trainer
    from transformers import TrainerCallback

    weights = {0: load_file(str(target / "model.safetensors"))}

    class Recorder(TrainerCallback):  # runs before the guard: the weights each step ended with
        def on_step_end(self, args, state, control, model=None, **kwargs):
            weights[state.global_step] = {k: v.detach().clone() for k, v in model.state_dict().items()}

    monkeypatch.setattr(hf_trainer, "DEFAULT_CALLBACKS", [*hf_trainer.DEFAULT_CALLBACKS, Recorder()])
    card = _unlearn(target, mini_world, tmp_path / "stop", *VIOLENT, "--set", "collapse_guard=stop")
    err = capsys.readouterr().err
    record = card["collapse_guard"]["triggered"]
    assert "training stopped" in err and record["step"] < 10
    assert max(weights) == record["step"]  # no step after the trigger
    good = record["kept_step"]
    assert good < record["step"] and good == max(c["step"] for c in card["collapse_guard"]["checks"][:-1])
    out = load_file(str(tmp_path / "stop" / "model.safetensors"))
    assert all(torch.equal(out[k], weights[good][k]) for k in out)


def test_off_runs_no_probe_and_costs_nothing(target, mini_world, tmp_path):
    off = _unlearn(target, mini_world, tmp_path / "off", *GENTLE, "--no-collapse-guard")
    on = _unlearn(target, mini_world, tmp_path / "on", *GENTLE)
    assert off["collapse_guard"] == {"action": "off"}
    assert off["compute"]["forward_tokens"] == on["compute"]["forward_tokens"]  # probes are not counted
    a, b = (load_file(str(tmp_path / name / "model.safetensors")) for name in ("off", "on"))
    assert all(torch.equal(a[k], b[k]) for k in a)  # probing changes nothing in the run


def test_raw_text_runs_probe_continuations(target, mini_world, tmp_path):
    card = _unlearn(target, mini_world / "muse", tmp_path / "muse", *GENTLE)
    record = card["collapse_guard"]
    assert record["probe"]["kind"] == "retain passage continuations" and record["checks"]
