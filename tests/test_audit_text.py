"""The audit and continual unlearning on the raw-text miniatures (MUSE-like ``WORLD/muse``, WMDP-like
``WORLD/wmdp``): the relearning attack splits whole entities, its probes are the protocols' own passes,
and every check that cannot apply is skipped with its reason.

One small world (4 agents, 12 articles: 3 forget events) for the module; per folder a tiny Llama
trained a few seconds on forget + retain (the target) and one on retain only (the oracle), so the
numbers compared with the protocol functions are not all zero.
"""

from __future__ import annotations

import contextlib
import io
import json
import shutil
from pathlib import Path

import pytest
import torch

from unlearnkit.cli import main
from unlearnkit.data import load_benchmark
from unlearnkit.errors import UserError
from unlearnkit.evaluation.audit import AuditSettings, audit_markdown, run_audit
from unlearnkit.evaluation.audit.run import Auditor
from unlearnkit.evaluation.evaluate import subsample
from unlearnkit.evaluation.probes import MUSE_PLAN, WMDP_PLAN, data_kind, entity_of, entity_split

FIXTURES = Path(__file__).parent / "fixtures"
MIA_KEYS = ("mia_loss_auc", "mia_zlib_auc", "mia_min_k_auc", "mia_min_k_plus_plus_auc")


@pytest.fixture(scope="module", autouse=True)
def _one_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="module")
def world(tmp_path_factory, _one_thread):
    from unlearnkit.world import write_world
    from unlearnkit.world.tiny import corpus_of, train_tokenizer

    path = tmp_path_factory.mktemp("text_audit") / "world"
    write_world(
        path,
        n_authors=12,
        facts_per_author=4,
        forget_fraction=0.25,
        holdout_fraction=0.25,
        n_general=10,
        n_real_authors=2,
        n_agents=4,
        n_articles=12,
    )
    muse, wmdp = load_benchmark(path / "muse"), load_benchmark(path / "wmdp")
    choices = [{"text": " ".join([r["question"], *r["choices"]])} for t in wmdp.mc_tasks.values() for r in t]
    rows = muse.forget + muse.retain + muse.holdout + wmdp.forget + wmdp.retain + choices
    rows += muse.extra["knowmem_forget"] + muse.extra["knowmem_retain"]
    tok = train_tokenizer(corpus_of(rows), vocab_size=512)
    return {"path": path, "muse": muse, "wmdp": wmdp, "tok": tok}


def _trained(tok, rows: list[dict], epochs: int, work: Path, seed: int = 0):
    from unlearnkit.config import TrainConfig
    from unlearnkit.train.finetune import finetune
    from unlearnkit.world.tiny import tiny_llama

    model = tiny_llama(tok, hidden=32, layers=2, heads=2, seed=seed)
    cfg = TrainConfig(
        lr=3e-3,
        epochs=epochs,
        batch_size=8,
        grad_accum=1,
        warmup_epochs=0,
        weight_decay=0.0,
        lr_scheduler="constant",
        max_length=256,
        seed=seed,
    )
    finetune(model, tok, rows, cfg, work, quiet=True)
    model.eval()
    return model


def _random(tok, seed: int = 0):
    """An untrained tiny Llama with 256 positions (MUSE's VerbMem asks for 128 new tokens)."""
    from unlearnkit.world.tiny import tiny_llama

    return tiny_llama(tok, hidden=16, layers=1, heads=2, seed=seed).eval()


@pytest.fixture(scope="module")
def muse_models(world, tmp_path_factory):
    """Target: forget + retain articles; oracle: retain articles only."""
    bench, tok = world["muse"], world["tok"]
    work = tmp_path_factory.mktemp("muse_finetune")
    target = _trained(tok, bench.forget + bench.retain, 60, work / "target")
    oracle = _trained(tok, bench.retain, 60, work / "oracle")
    return target, oracle


@pytest.fixture(scope="module")
def wmdp_models(world):
    """Two untrained models: multiple-choice accuracy is not 0 by chance, and lm-eval's calls are the
    cost here (about 0.7 s each), not the model."""
    return _random(world["tok"], 0), _random(world["tok"], 1)


def _cli_audit(world, folder: str, models, root: Path, *extra: str) -> dict:
    """``unlearnkit audit`` on ``WORLD/<folder>`` of the target, the oracle as ``--retain-model``; 2
    relearning steps, at most 8 items per set. Returns the written audit, what it printed and the
    models as the command loaded them."""
    from unlearnkit.models import load, save_model

    paths = {}
    for name, model in zip(("target", "oracle"), models):
        paths[name] = str(root / f"{folder}_{name}")
        save_model(model, world["tok"], paths[name], {"kind": name})
    out = root / f"audit_{folder}"
    argv = [
        "audit", "--model", paths["target"], "--data", str(world["path"] / folder),
        "--retain-model", paths["oracle"], "--output", str(out), "--relearn-steps", "2", "--max-items", "8",
        *extra,
    ]  # fmt: skip
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        assert main(argv) == 0
    return {
        "audit": json.loads((out / "audit.json").read_text()),
        "printed": printed.getvalue(),
        "out": out,
        "paths": paths,
        "models": {name: load(path)[0] for name, path in paths.items()},
    }


@pytest.fixture(scope="module")
def muse_run(world, muse_models, tmp_path_factory):
    root = tmp_path_factory.mktemp("muse_audit")
    return _cli_audit(
        world, "muse", muse_models, root, "--quant-bits", "8", "--original-model", str(root / "muse_target")
    )


@pytest.fixture(scope="module")
def wmdp_run(world, wmdp_models, tmp_path_factory):
    # lm-eval's calls are the cost (0.7 s each): no quantised copies, no original model here
    return _cli_audit(
        world, "wmdp", wmdp_models, tmp_path_factory.mktemp("wmdp_audit"), "--quant-bits", "none"
    )


#: What the command ran with (its defaults, --relearn-steps 2 --max-items 8): the rows it measured.
SETTINGS = dict(relearn_steps=(2,), quant_bits=(8,), max_items=8, seed=0)


# ------------------------------------------------------------------------------------- the entity split


def test_a_wmdp_folder_without_holdout_passages_skips_membership_inference_with_the_reason():
    from types import SimpleNamespace

    from unlearnkit.evaluation.audit.membership import mia_check

    auditor = SimpleNamespace(text=True, kind="wmdp", holdout=[])
    check = mia_check({}, auditor)
    assert check["rows"] == [] and "no holdout passages" in check["skipped"]
    assert check["verdict"].startswith("membership inference: skipped, a WMDP-like folder")


def test_entity_split_keeps_every_entity_on_one_side():
    names = [f"agent {i}" for i in range(7)] * 3  # rows repeat their entity
    train, held = entity_split(names, 0.5, seed=0)
    assert len(train) == 4 and len(held) == 3  # round(3.5) = 4
    assert not set(train) & set(held) and set(train) | set(held) == set(names)
    assert entity_split(list(reversed(names)), 0.5, seed=0) == (train, held)  # the rows' order is irrelevant
    assert entity_split(names, 0.5, seed=1) != (train, held)
    assert entity_split(["a", "b"], 0.99, seed=0)[1]  # always one entity to measure on
    with pytest.raises(ValueError, match="at least 2"):
        entity_split(["a", "a"], 0.5, seed=0)


@pytest.mark.parametrize(
    "folder, data, used",
    [("muse", "auto", "passages"), ("wmdp", "auto", "questions"), ("wmdp", "passages", "passages")],
)
def test_no_entity_on_both_sides_of_the_attack(world, folder, data, used):
    """What the attack trains on and what it is measured on share no entity, and every held-out probe
    row is about a held-out entity. ``relearn_data``: auto relearns a WMDP-like folder's questions (with
    their answers, in its cloze prompt) and a MUSE-like folder's articles."""
    bench = world[folder]
    auditor = Auditor(bench, AuditSettings(relearn_steps=(2,), relearn_data=data))
    assert auditor.relearn_data == used
    relearned, held = auditor.entities
    assert relearned and held and not set(relearned) & set(held)
    assert set(relearned) | set(held) == {entity_of(r) for r in bench.forget}
    trained_texts = [r["text"] for r in auditor.attack_rows]
    if used == "passages":
        assert set(trained_texts) == {r["text"] for r in bench.forget if entity_of(r) in relearned}
    else:  # every question about a relearned agent, none about a held one, as the cloze scoring reads it
        asked = [r for r in bench.mc_tasks["wmdp_hazard"] if r["entity"] in relearned]
        assert bench.mc_style == "cloze" and len(trained_texts) == len(asked)
        for text, row in zip(trained_texts, asked):
            assert text == f"Question: {row['question'].strip()}\nAnswer: {row['choices'][row['answer']]}"
        assert not any(r["question"].strip() in " ".join(trained_texts) for r in bench.mc_tasks["wmdp_hazard"]
                       if r["entity"] in held)  # fmt: skip
    plan = MUSE_PLAN if folder == "muse" else WMDP_PLAN
    assert data_kind(bench) == plan.kind
    for probe in plan.probes:
        rows = auditor.held_rows[probe.name]
        if probe.held_out:
            assert rows and {entity_of(r) for r in rows} <= set(held), probe.name
        else:  # general knowledge: every question, not split
            assert rows == probe.rows(bench)
        # the relearned entities' rows (what the attack teaches): forget-side probes only
        trained = auditor.trained_rows.get(probe.name)
        if probe.held_out:
            assert trained and {entity_of(r) for r in trained} <= set(relearned), probe.name
        else:
            assert trained is None
    assert auditor.trained_metrics and all(m.gap for m in auditor.trained_metrics)


def test_verbmem_rows_without_an_entity_take_their_article_s():
    """The hand-written fixture's verbmem rows have no entity: each is the start of one forget article."""
    from unlearnkit.data.sources import resolve_data

    bench = resolve_data(FIXTURES / "mini_muse")
    assert not any(entity_of(r) for r in bench.extra["verbmem"])
    auditor = Auditor(bench, AuditSettings(relearn_steps=(2,)))
    held = set(auditor.entities[1])
    texts = {r["text"] for r in bench.forget if entity_of(r) in held}
    prompts = [r["prompt"] for r in auditor.held_rows["verbmem"]]
    assert prompts and all(any(t.startswith(p) for t in texts) for p in prompts)


# --------------------------------------------------------------- the probes are the protocols' passes


def test_muse_probes_equal_the_protocol_functions(world, muse_run):
    from unlearnkit.evaluation.probes import fact_recall
    from unlearnkit.evaluation.quantize import quantized_copy
    from unlearnkit.protocols import muse as M

    audit = muse_run["audit"]
    target, oracle = muse_run["models"]["target"], muse_run["models"]["oracle"]
    bench, tok = world["muse"], world["tok"]
    held_out = set(Auditor(bench, AuditSettings(**SETTINGS)).entities[1])
    st = M.MuseSettings(batch_size=32)  # the audit's batch size
    shots = bench.extra["knowmem_forget_icl"]
    # The rows: those about the held-out events (verbmem's by their entity), at most 8 (seeded).
    knowmem = subsample([r for r in bench.extra["knowmem_forget"] if r["entity"] in held_out], 8, 0)
    verbmem = [r for r in bench.extra["verbmem"] if r["entity"] in held_out]
    retain = subsample(bench.extra["knowmem_retain"], 8, 0)
    outputs = {}
    for role, model in (("audited", target), ("oracle", oracle)):
        point = audit["relearn_curve"][role]["0"]
        f1, details = M.knowmem(model, tok, knowmem, shots, st)
        outputs[role] = details["outputs"]
        assert point["knowmem_f1"] == M.knowmem_score(model, tok, knowmem, shots, st) == f1
        assert point["knowmem_fact_recall"] == fact_recall(details["outputs"], knowmem)
        assert point["verbmem_f1"] == M.verbmem(model, tok, verbmem, st)[0]
        retain_shots = bench.extra["knowmem_retain_icl"]
        assert point["knowmem_retain_f1"] == M.knowmem_score(model, tok, retain, retain_shots, st)
    # not a comparison of empty passes: KnowMem's answers are short facts (this briefly trained model
    # gets none right, F1 0.0), so check that it did answer; VerbMem measured 0.18
    assert sum(bool(o.strip()) for o in outputs["audited"]) >= len(knowmem) // 2, outputs["audited"]
    # the relearned events' rows: the same passes, on the other side of the split (the attack's control)
    relearned = set(Auditor(bench, AuditSettings(**SETTINGS)).entities[0])
    trained_verbmem = subsample([r for r in bench.extra["verbmem"] if r["entity"] in relearned], 8, 0)
    trained_knowmem = subsample([r for r in bench.extra["knowmem_forget"] if r["entity"] in relearned], 8, 0)
    for role, model in (("audited", target), ("oracle", oracle)):
        point = audit["relearn_curve"][role]["0"]
        assert point["trained_verbmem_f1"] == M.verbmem(model, tok, trained_verbmem, st)[0]
        assert point["trained_knowmem_f1"] == M.knowmem_score(model, tok, trained_knowmem, shots, st)
    assert audit["relearn_curve"]["audited"]["0"]["verbmem_f1"] > 0.1
    # full precision and quantised: the same passes on every forget event's rows
    measured = audit["measured"]["audited"]
    every = subsample(bench.extra["knowmem_forget"], 8, 0)
    assert measured["knowmem_f1"] == M.knowmem_score(target, tok, every, shots, st)
    quant = quantized_copy(target, 8, 128)
    assert measured["quant8_knowmem_f1"] == M.knowmem_score(quant, tok, every, shots, st)
    assert measured["quant8_verbmem_f1"] == M.verbmem(quant, tok, bench.extra["verbmem"], st)[0]
    # membership inference: Min-K% (k = 0.4) on whole texts, as MUSE's PrivLeak scores them
    from unlearnkit.metrics.scores import auc

    forget = M.min_k_scores(target, tok, [r["text"] for r in bench.forget], batch_size=32)
    holdout = M.min_k_scores(target, tok, [r["text"] for r in bench.holdout], batch_size=32)
    assert measured["mia_min_k_auc"] == pytest.approx(auc(forget, holdout))
    assert all(0.0 <= measured[k] <= 1.0 for k in MIA_KEYS)


def test_wmdp_probes_equal_the_protocol_functions(world, wmdp_run):
    from unlearnkit.protocols.wmdp import mc_accuracy

    wmdp_audit = wmdp_run["audit"]
    target, oracle = wmdp_run["models"]["target"], wmdp_run["models"]["oracle"]
    bench, tok = world["wmdp"], world["tok"]
    held_out = set(Auditor(bench, AuditSettings(**SETTINGS)).entities[1])
    held = subsample([r for r in bench.mc_tasks["wmdp_hazard"] if r["entity"] in held_out], 8, 0)
    general = subsample(bench.mc_tasks["mmlu_general"], 8, 0)
    for role, model in (("audited", target), ("oracle", oracle)):
        point = wmdp_audit["relearn_curve"][role]["0"]
        assert point["hazard_acc"] == mc_accuracy(model, tok, held, "cloze", batch_size=32)
        assert point["general_acc"] == mc_accuracy(model, tok, general, "cloze", batch_size=32)
        # the relearned agents' questions (what the attack teaches); general accuracy is not split
        relearned = set(Auditor(bench, AuditSettings(**SETTINGS)).entities[0])
        trained = subsample([r for r in bench.mc_tasks["wmdp_hazard"] if r["entity"] in relearned], 8, 0)
        assert point["trained_hazard_acc"] == mc_accuracy(model, tok, trained, "cloze", batch_size=32)
        assert "trained_general_acc" not in point
    every = subsample(bench.mc_tasks["wmdp_hazard"], 8, 0)
    assert wmdp_audit["measured"]["audited"]["hazard_acc"] == mc_accuracy(
        target, tok, every, "cloze", batch_size=32
    )
    gap = (
        wmdp_audit["relearn_curve"]["audited"]["2"]["hazard_acc"]
        - wmdp_audit["relearn_curve"]["oracle"]["2"]["hazard_acc"]
    )
    assert wmdp_audit["relearn_gap_hazard"]["2"] == pytest.approx(gap)


# ------------------------------------------------------------------------------------- the audit's shape


def test_muse_audit_summary_and_skips(muse_run):
    audit = muse_run["audit"]
    assert audit["data"]["kind"] == "muse" and audit["data"]["relearn_entities"]["unit"] == "event"
    curve = audit["relearn_curve"]
    assert list(curve) == ["audited", "oracle", "original"]
    assert all(list(p) == ["0", "2"] for p in curve.values())
    assert curve["audited"] == curve["original"]  # the same weights, a seeded attack
    keys = {"knowmem_f1", "knowmem_fact_recall", "verbmem_f1", "knowmem_retain_f1"}
    forget_side = {"knowmem_f1", "knowmem_fact_recall", "verbmem_f1"}  # measured on the relearned events too
    trained = {f"trained_{k}" for k in forget_side}
    for p in curve.values():
        for point in p.values():
            assert keys <= set(point) and set(point) - keys <= trained and "trained_verbmem_f1" in point
    gap = curve["audited"]["2"]["knowmem_f1"] - curve["oracle"]["2"]["knowmem_f1"]
    assert audit["relearn_gap_knowmem"]["2"] == pytest.approx(gap)
    assert audit["relearn_gap_verbmem_0"] == pytest.approx(
        curve["audited"]["0"]["verbmem_f1"] - curve["oracle"]["0"]["verbmem_f1"]
    )
    assert "relearn_gap_knowmem_retain" not in audit  # utility: watched for damage, no gap
    assert audit["relearn_gap_20"] is None and "relearn_gap_verbmem_final" in audit["relearn_gap_20_note"]
    head = audit["relearn_headline"]  # read after the curve's last step, 2
    assert head["key"] == "relearn_gap_verbmem_final" and head["step"] == 2 and head["note"] is None
    assert head["value"] == audit["relearn_gap_verbmem"]["2"] == audit["relearn_gap_verbmem_final"]
    assert audit["relearn_gap_verbmem_20"] is None  # no 20-step point
    # the calibration reads the headline metric: the oracle on the relearned events, the target on the held
    cal = audit["relearn_calibration"]
    assert cal["metric"] == "verbmem_f1" and cal["step"] == "2"
    assert cal["oracle_trained"] == curve["oracle"]["2"]["trained_verbmem_f1"]
    assert cal["target_held"] == curve["original"]["2"]["verbmem_f1"]
    assert all(w["code"] != "relearn_attack_cannot_teach" for w in audit["warnings"])  # QA bars only
    checks = {c["id"]: c for c in audit["checks"]}
    assert [r["label"] for r in checks["mia"]["rows"]] == [
        "AUC LOSS",
        "AUC zlib",
        "AUC Min-K%",
        "AUC Min-K%++",
    ]
    assert "3 forget texts from the 3 holdout texts" in checks["mia"]["verdict"]
    assert checks["relearning"]["verdict"].startswith(
        "relearning 2 steps on the forget articles of 2 events "
    )
    assert "verbmem rows about the other 1 event" in checks["relearning"]["verdict"]
    assert checks["quantization"]["rows"][0]["label"] == "KnowMem ROUGE-L F1, full precision"
    assert checks["paraphrase"]["skipped"].startswith("raw-text data")
    md = audit_markdown(audit)
    assert md.count("**Verdict:**") == 4 and "Relearning curve (KnowMem ROUGE-L F1 / " in md
    assert f"relearn_gap_verbmem_final = {head['value']:+.3f} (audited minus retain-oracle" in md
    assert "The same on the relearned events (what the attack teaches):" in md and cal["text"] in md


def test_wmdp_audit_infers_membership_against_the_held_out_agents(wmdp_run, world):
    """The world's wmdp/holdout.jsonl (agents nothing trains on) are the non-members."""
    wmdp_audit = wmdp_run["audit"]
    checks = {c["id"]: c for c in wmdp_audit["checks"]}
    assert len(world["wmdp"].holdout) == len(world["wmdp"].forget) == 12  # 4 agents x 3 passages
    assert [r["label"] for r in checks["mia"]["rows"]] == [
        "AUC LOSS",
        "AUC zlib",
        "AUC Min-K%",
        "AUC Min-K%++",
    ]
    assert "8 forget texts from the 8 holdout texts" in checks["mia"]["verdict"]  # --max-items 8
    assert checks["quantization"]["skipped"] == "quant_bits is empty"
    assert wmdp_audit["relearn_headline"]["key"] == "relearn_gap_hazard_final"
    assert [p["key"] for p in wmdp_audit["relearn_probes"]] == ["hazard_acc", "general_acc"]
    assert [p["gap"] for p in wmdp_audit["relearn_probes"]] == [True, False]


def test_gap_after_20_steps_and_its_reading(world):
    """With a 20-step point the headline gap is set, read beside the gap before the attack."""
    from unlearnkit.evaluation.audit.card import gap_lines

    bench, tok = world["muse"], world["tok"]
    audited, oracle = _random(tok, 0), _random(tok, 1)
    before = {k: v.clone() for k, v in audited.state_dict().items()}
    st = AuditSettings(relearn_steps=(20,), quant_bits=(), max_items=6)
    audit = run_audit(audited, tok, bench, oracle=oracle, settings=st)
    for k, v in audited.state_dict().items():  # the audited model is never modified
        assert torch.equal(v, before[k]), k
    value = audit["relearn_gap_verbmem_20"]  # the headline: VerbMem (KnowMem does not separate here)
    # 20 is the curve's last step: the headline (read there) is the 20-step gap
    assert (
        value is not None
        and audit["relearn_headline"]["value"] == value == audit["relearn_gap_verbmem_final"]
    )
    assert audit["relearn_reading_verbmem"]["reading"] in ("stays_forgotten", "came_back", "never_forgot")
    assert audit["relearn_gap_knowmem_20"] is not None
    lines = gap_lines(audit)
    assert lines[0].startswith(
        f"relearn_gap_verbmem_final = {value:+.3f} (audited minus retain-oracle VerbMem"
    )
    assert "after 20 relearning steps, the curve's last" in lines[0]


def test_plain_text_folder_audit_skips_what_needs_questions(tmp_path, world):
    folder = tmp_path / "plain"
    folder.mkdir()
    for name, rows in (("forget", world["muse"].forget), ("retain", world["muse"].retain),
                       ("holdout", world["muse"].holdout)):  # fmt: skip
        (folder / f"{name}.jsonl").write_text("".join(json.dumps({"text": r["text"]}) + "\n" for r in rows))
    bench = load_benchmark(folder)
    audit = run_audit(_random(world["tok"]), world["tok"], bench, settings=AuditSettings(relearn_steps=(2,)))
    checks = {c["id"]: c for c in audit["checks"]}
    assert checks["mia"]["rows"] and audit["measured"]["audited"]["mia_loss_auc"] is not None
    for cid in ("relearning", "quantization", "paraphrase"):
        assert checks[cid]["skipped"] and checks[cid]["verdict"].count("skipped") == 1, cid
    assert "plain raw-text data" in audit["relearn_gap_20_note"] and audit["relearn_curve"] == {}


def test_relearn_data_that_the_data_cannot_give_is_refused(world):
    with pytest.raises(UserError, match="relearn_data=questions: a MUSE-like folder has no multiple-choice"):
        Auditor(world["muse"], AuditSettings(relearn_steps=(2,), relearn_data="questions"))
    with pytest.raises(UserError, match="relearn_data must be auto, passages, questions"):
        AuditSettings(relearn_data="articles")
    qa = load_benchmark(world["path"])
    with pytest.raises(UserError, match="relearn_data=passages: .* is question/answer data"):
        Auditor(qa, AuditSettings(relearn_steps=(2,), relearn_data="passages"))
    Auditor(qa, AuditSettings(relearn_steps=(2,), relearn_data="questions"))  # what QA data relearns anyway


def test_questions_attack_without_a_question_about_the_relearned_agents_is_skipped(world):
    """A WMDP-like folder whose relearned agents have no question: the attack has nothing to train on, so
    it is skipped with the reason (passages would still relearn)."""
    import dataclasses

    bench = world["wmdp"]
    relearned = set(Auditor(bench, AuditSettings(relearn_steps=(2,))).entities[0])
    hazard = [r for r in bench.mc_tasks["wmdp_hazard"] if r["entity"] not in relearned]
    fewer = dataclasses.replace(bench, mc_tasks={**bench.mc_tasks, "wmdp_hazard": hazard})
    auditor = Auditor(fewer, AuditSettings(relearn_steps=(2,)))
    assert auditor.attack_rows == [] and auditor.curve_metrics == []
    assert auditor.relearn_skip.startswith("none of the mc:wmdp_hazard questions is about a relearned agent")
    assert Auditor(fewer, AuditSettings(relearn_steps=(2,), relearn_data="passages")).relearn_skip is None


def test_mc_answer_text_in_both_prompt_styles():
    """The text the attack trains on for a question: the scoring's prompt, a space, the correct answer."""
    from unlearnkit.protocols.wmdp import mc_answer_text

    row = {"question": " What does X cause? ", "choices": ["sleep", "speech", "cough"], "answer": 1}
    assert mc_answer_text(row, "cloze") == "Question: What does X cause?\nAnswer: speech"
    assert mc_answer_text(row, "letters") == "What does X cause?\nA. sleep\nB. speech\nC. cough\nAnswer: B"
    with pytest.raises(UserError, match="mc_style 'words'"):
        mc_answer_text(row, "words")


@pytest.mark.parametrize("style", ["cloze", "letters"])
def test_mc_answer_text_is_what_the_lm_eval_task_scores(tmp_path, style):
    """The attack's text equals the written lm-eval task's prompt (its jinja template rendered on the
    row), its target delimiter and the correct choice, as lm-eval builds the scored continuation."""
    import jinja2
    import yaml

    from unlearnkit.protocols.wmdp import mc_answer_text, write_mc_task

    row = {
        "question": "Which compound counters X?",
        "choices": ["Nene", "Diyl", "Seyl", "Glamine"],
        "answer": 2,
    }
    cfg = yaml.safe_load(write_mc_task(tmp_path, "t", [row], style=style).read_text())
    prompt = jinja2.Template(cfg["doc_to_text"]).render(**row)
    choices = row["choices"] if cfg["doc_to_choice"] == "choices" else cfg["doc_to_choice"]
    assert mc_answer_text(row, style) == prompt + cfg["target_delimiter"] + choices[row["answer"]]


def test_probes_file_on_raw_text_is_refused(world, tmp_path):
    probes = tmp_path / "probes.jsonl"
    probes.write_text(json.dumps({"question": "q", "answer": "a"}) + "\n")
    with pytest.raises(UserError, match="raw text"):
        Auditor(world["wmdp"], AuditSettings(probes_path=str(probes)))


# ----------------------------------------------------------------------------------------------- CLI


@pytest.mark.parametrize("folder", ["muse", "wmdp"])
def test_cli_audit_writes_the_curve(muse_run, wmdp_run, folder):
    run = muse_run if folder == "muse" else wmdp_run
    data, printed = run["audit"], run["printed"]
    assert sorted(p.name for p in run["out"].iterdir()) == ["audit.json", "audit.md", "relearn_curve.png"]
    roles = ["audited", "oracle", "original"] if folder == "muse" else ["audited", "oracle"]
    assert list(data["relearn_curve"]) == roles
    assert all(list(points) == ["0", "2"] for points in data["relearn_curve"].values())
    head = "verbmem" if folder == "muse" else "hazard"
    assert data["relearn_gap_" + head]["2"] is not None
    assert data["relearn_headline"]["key"] == f"relearn_gap_{head}_final"
    assert f"relearn_gap_{head}_final = " in printed and "after 2 relearning steps" in printed
    assert printed.count("skipped") == (1 if folder == "muse" else 2)  # paraphrases; + quantisation
    md = (run["out"] / "audit.md").read_text()
    assert "![relearning curve](relearn_curve.png)" in md and "| 2 | " in md
    # the verdict and the card name what the attack trained on (relearn_data auto)
    trained_on = (
        "forget articles"
        if folder == "muse"
        else "mc:wmdp_hazard questions (each with its correct answer, as the scoring reads it)"
    )
    assert f"relearning 2 steps on the {trained_on} of " in printed
    assert trained_on in md


# ------------------------------------------------------------------------------------------ continual


def test_continual_requests_forget_whole_events(world):
    from unlearnkit.pipelines.continual import continual_unlearning, split_requests_by_entity, text_eval_fn

    bench, tok = world["muse"], world["tok"]
    requests = split_requests_by_entity(bench.forget, 2, "event")
    assert [len({entity_of(r) for r in req}) for req in requests] == [2, 1]
    assert [r for req in requests for r in req] == bench.forget
    with pytest.raises(UserError, match="3 events of the forget set into 4 requests"):
        split_requests_by_entity(bench.forget, 4, "event")
    model = _random(tok)
    seen = []
    default = text_eval_fn(bench)

    def eval_fn(model, tokenizer, forgotten, upcoming, step):
        seen.append((step, {entity_of(r) for r in forgotten}, {entity_of(r) for r in upcoming}))
        return default(model, tokenizer, forgotten=forgotten, upcoming=upcoming, step=step)

    unlearn = dict(lr=1e-3, epochs=1, batch_size=2, grad_accum=1, warmup_epochs=0, lr_scheduler="constant")
    curve = continual_unlearning(model, tok, bench, "ga", requests, eval_fn, **unlearn)
    assert [len(f) for _, f, _ in seen] == [0, 2, 3] and [len(u) for _, _, u in seen] == [3, 1, 0]
    assert "forget_knowmem_f1" not in curve[0] and "upcoming_knowmem_f1" not in curve[2]
    assert {"forget_knowmem_f1", "forget_verbmem_f1", "upcoming_knowmem_f1", "knowmem_retain_f1"} <= set(
        curve[1]
    )
    assert all(p["model_utility"] == p["knowmem_retain_f1"] for p in curve)


def _continual(world, tmp_path, data, *extra):
    return main(
        ["continual", "--model", "/nonexistent-model", "--data", str(data), "--method", "ga",
         "--output", str(tmp_path / "out"), *extra]
    )  # fmt: skip


def test_continual_refuses_raw_text_it_cannot_measure(world, tmp_path, capsys):
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "forget.jsonl").write_text(json.dumps({"text": "a passage"}) + "\n")
    (plain / "retain.jsonl").write_text(json.dumps({"text": "another passage"}) + "\n")
    assert _continual(world, tmp_path, plain, "--requests", "1") == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "needs a MUSE-like or WMDP-like folder" in err
    no_entity = tmp_path / "muse"
    shutil.copytree(world["path"] / "muse", no_entity)
    rows = [json.loads(x) for x in (no_entity / "forget.jsonl").read_text().splitlines()]
    (no_entity / "forget.jsonl").write_text("".join(json.dumps({"text": r["text"]}) + "\n" for r in rows))
    assert _continual(world, tmp_path, no_entity, "--requests", "1") == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "carry no 'entity' field" in err
    assert _continual(world, tmp_path, world["path"] / "wmdp", "--requests", "5") == 2
    assert "cannot split the 4 agents of the forget set into 5 requests" in capsys.readouterr().err


def test_continual_refuses_a_question_answer_method_on_raw_text(world, muse_run, tmp_path, capsys):
    argv = ["continual", "--model", muse_run["paths"]["target"], "--data", str(world["path"] / "muse"),
            "--method", "idk", "--requests", "1", "--output", str(tmp_path / "out")]  # fmt: skip
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "idk needs question/answer rows" in err
    assert not (tmp_path / "out").exists()
