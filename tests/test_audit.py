"""Tests for unlearnkit.evaluation.audit on a miniature world: a tiny target that memorised the forget set must
fail every check, the retain oracle (never saw it) must pass, and the audit must never touch the
audited model. One target and one oracle are trained for the whole module (~15 s on one CPU thread).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import tempfile
from pathlib import Path

import pytest
import torch

from unlearnkit.commands.audit import add_audit_arguments, audit_command, parse_int_list
from unlearnkit.data import Benchmark, load_benchmark
from unlearnkit.errors import UserError
from unlearnkit.evaluation.audit import AuditSettings, audit_card_html, audit_markdown, run_audit, write_audit
from unlearnkit.evaluation.audit.relearning import relearn_curve, relearn_split, relearned_copy

MIA_KEYS = ("mia_loss_auc", "mia_zlib_auc", "mia_min_k_auc", "mia_min_k_plus_plus_auc")
SETTINGS = dict(relearn_steps=(5, 20), max_new_tokens=32, seed=0)
NUMBER = re.compile(r"\d+\.\d\d|\d+ %")


@pytest.fixture(scope="module", autouse=True)
def _one_thread():
    # Two OpenMP threads on a shared 2-core machine can be 100x slower than one (spin-waiting).
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="module")
def world(tmp_path_factory, _one_thread):
    from unlearnkit.models import load, save_model
    from unlearnkit.train.finetune import default_config, finetune, training_rows
    from unlearnkit.world import write_world
    from unlearnkit.world.tiny import build_tiny

    root = tmp_path_factory.mktemp("audit")
    data = root / "world"
    write_world(
        data, n_authors=12, facts_per_author=4, forget_fraction=0.25, holdout_fraction=0.25, n_general=10
    )
    bench = load_benchmark(data)
    paths = {}
    for name, split in (("target", "all"), ("oracle", "retain")):
        model, tok = build_tiny(bench, seed=0)
        cfg = default_config(True, {"epochs": 60.0, "lr": 3e-3, "seed": 0})
        finetune(
            model, tok, training_rows(bench, split, from_scratch=True), cfg, root / f"{name}.work", quiet=True
        )
        save_model(model, tok, root / name, {"kind": name})
        paths[name] = root / name
    target, tok = load(str(paths["target"]))
    oracle, otok = load(str(paths["oracle"]))
    return {
        "root": root,
        "data": data,
        "bench": bench,
        "paths": paths,
        "target": (target, tok),
        "oracle": (oracle, otok),
    }


def _files_digest(folder: Path) -> dict[str, str]:
    return {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir()) if p.is_file()
    }


def _leftover_relearn_dirs(folder: Path) -> set[str]:
    return {p.name for p in folder.glob("unlearnkit-relearn-*")}


@pytest.fixture(scope="module")
def audited(world, tmp_path_factory):
    """Audit of the target with the oracle and the original (= the target itself, a second object).

    The audit runs with a private temporary folder, so that the check on the Trainer's temp folders
    sees this audit's only (another process auditing at the same time uses the system's)."""
    from unlearnkit.models import load

    target, tok = world["target"]
    before_state = {k: v.clone() for k, v in target.state_dict().items()}
    before_flags = (target.training, [p.requires_grad for p in target.parameters()])
    before_files = _files_digest(world["paths"]["target"])
    private_tmp = tmp_path_factory.mktemp("audit_tmp")
    original = load(str(world["paths"]["target"]))
    made: list[str] = []
    real_mkdtemp = tempfile.mkdtemp

    def recording_mkdtemp(*args, **kwargs):
        made.append(real_mkdtemp(*args, **kwargs))
        return made[-1]

    saved, tempfile.tempdir, tempfile.mkdtemp = tempfile.tempdir, str(private_tmp), recording_mkdtemp
    try:
        audit = run_audit(
            target,
            tok,
            world["bench"],
            oracle=world["oracle"],
            original=original,
            settings=AuditSettings(**SETTINGS),
            names={"audited": "<b>target</b>", "oracle": "oracle", "original": "target"},
            method="target-as-npo",
        )
    finally:
        tempfile.tempdir, tempfile.mkdtemp = saved, real_mkdtemp
    return {
        "audit": audit,
        "before_state": before_state,
        "before_flags": before_flags,
        "before_files": before_files,
        "private_tmp": private_tmp,
        "relearn_dirs_made": [d for d in made if Path(d).name.startswith("unlearnkit-relearn-")],
    }


def test_split_by_item_the_same_attack_damages_the_target(world):
    """The attack of ``audited`` with the forget items halved at random instead of by author: a held
    question now shares its author with trained ones, and the same 20 steps write over the target's
    held facts (measured: fact recall 1.00 -> 0.33 after 20 steps; by author 1.00 -> 1.00). The audit says so."""
    from unlearnkit.models import load

    target, tok = world["target"]
    st = AuditSettings(**{**SETTINGS, "relearn_split": "item"}, quant_bits=(), max_items=12)
    audit = run_audit(
        target, tok, world["bench"], oracle=world["oracle"], original=load(str(world["paths"]["target"])),
        settings=st,
    )  # fmt: skip
    assert audit["data"]["relearn_split"] == "item"
    assert audit["data"]["relearn_train_items"] == 6 and audit["data"]["relearn_held_items"] == 6
    cal = audit["relearn_calibration"]
    assert cal["teaches"] is True and cal["keeps"] is False
    assert [w["code"] for w in audit["warnings"]] == ["relearn_attack_damages"]
    assert (
        "(items split at random, as asked: a held question may share its entity"
        in _check(audit, "relearning")["about"]
    )
    assert "it damages rather than relearns" in _check(audit, "relearning")["verdict"]


def _check(audit: dict, cid: str) -> dict:
    return next(c for c in audit["checks"] if c["id"] == cid)


def test_membership_inference_separates_target_not_oracle(audited):
    m = audited["audit"]["measured"]
    target_aucs = [m["audited"][k] for k in MIA_KEYS]
    oracle_aucs = [m["oracle"][k] for k in MIA_KEYS]
    # Measured: target 1.00 on all four attacks; oracle 0.31-0.41 (12 vs 12 items, chance level).
    assert min(target_aucs) > 0.8, target_aucs
    assert max(oracle_aucs) < 0.7, oracle_aucs
    assert min(t - o for t, o in zip(target_aucs, oracle_aucs)) > 0.3
    assert [m["original"][k] for k in MIA_KEYS] == target_aucs  # same weights, same numbers
    rows = _check(audited["audit"], "mia")["rows"]
    assert [r["label"] for r in rows] == ["AUC LOSS", "AUC zlib", "AUC Min-K%", "AUC Min-K%++"]
    assert rows[0]["audited"] == m["audited"]["mia_loss_auc"]


def test_target_remembers_oracle_does_not(audited):
    m = audited["audit"]["measured"]
    # Measured: target forget ROUGE-L 1.00, prob 0.97; oracle 0.28 (template words only), prob 0.008.
    assert m["audited"]["forget_rougeL_recall"] > 0.9
    assert m["oracle"]["forget_rougeL_recall"] < m["audited"]["forget_rougeL_recall"] - 0.4
    assert m["audited"]["forget_prob"] > 0.5 > 0.1 > m["oracle"]["forget_prob"]


def test_relearning_attack(audited):
    audit = audited["audit"]
    m = audit["measured"]
    # Whole authors on each side (relearn_halves): the 12 forget items are 3 authors' 4 facts, the attack
    # is shown round(0.5 x 3) = 2 of them and asked about the third.
    assert audit["data"]["relearn_train_items"] == 8 and audit["data"]["relearn_held_items"] == 4
    assert audit["data"]["relearn_split"] == "entity"
    for role in ("audited", "oracle", "original"):
        assert set(m[role]["relearn"]) == {"0", "5", "20"}
    # The oracle cannot learn held-out facts from other facts: measured 0.20 -> 0.17 ROUGE-L.
    assert m["oracle"]["relearn"]["20"]["rougeL_recall"] < 0.5
    # The target still knows them after the attack (measured 1.00 -> 0.84).
    assert (
        m["audited"]["relearn"]["20"]["rougeL_recall"] > m["oracle"]["relearn"]["20"]["rougeL_recall"] + 0.3
    )
    # Seeded: the same weights give the same attacked numbers.
    assert m["audited"]["relearn"] == m["original"]["relearn"]
    check = _check(audit, "relearning")
    held = ["ROUGE-L recall", "prob", "fact recall"]
    assert [r["label"] for r in check["rows"]] == [
        *[f"{name} after {k} steps" for name in held for k in (0, 5, 20)],
        *[
            f"trained half: {name} after {k} steps"
            for name in ("ROUGE-L recall", "fact recall")
            for k in (0, 5, 20)
        ],
    ]
    row = next(r for r in check["rows"] if r["label"] == "trained half: fact recall after 20 steps")
    assert row["oracle"] == m["oracle"]["relearn"]["20"]["trained_fact_recall"]
    # The verb follows the curve: ROUGE-L on the held author falls a little (measured 1.00 -> 0.93: the
    # answers' wording drifts), which is no "restoring"; the facts stay, so it is no damage either.
    before, after = (
        m["audited"]["relearn"]["0"]["rougeL_recall"],
        m["audited"]["relearn"]["20"]["rougeL_recall"],
    )
    assert after < before - 0.02 and "restores" not in check["verdict"]
    assert (
        f"lowers forget ROUGE-L on the 4 other forget questions from {before:.2f} to {after:.2f}"
        in check["verdict"]
    )
    oracle = m["oracle"]["relearn"]
    assert (
        f"the oracle goes {oracle['0']['rougeL_recall']:.2f} -> {oracle['20']['rougeL_recall']:.2f}"
        in check["verdict"]
    )
    # Calibrated: the oracle learns the 8 trained items (it can teach) and the target keeps its held
    # author's facts (measured: fact recall 1.00 -> 1.00); nothing to warn about. Split by item, the
    # same attack on the same models damages (test_split_by_item_the_same_attack_damages_the_target).
    # Whether the target keeps its 4 held facts turns on one fact here (4 items: 0.75 is under the 0.9 bar),
    # and that fact on the CPU's float rounding: on the machines of 2026-12-06 it kept all four, on this
    # session's one fell (the base commit too, same packages). So the test reads the reading against the
    # curve it was made from, and the warning against the reading, rather than one machine's outcome.
    cal = audit["relearn_calibration"]
    assert cal["teaches"] is True
    held = [m["original"]["relearn"][k]["fact_recall"] for k in ("0", "5", "20")]
    assert cal["keeps"] is (min(held) / held[0] >= 0.9)
    assert ("damages" in check["verdict"]) is (not cal["keeps"])
    assert (audit["warnings"] == []) is cal["keeps"]
    assert cal["text"] in check["verdict"]
    trained = m["oracle"]["relearn"]["20"]["trained_fact_recall"]
    assert "on the 8 forget items it trains on, fact recall" in check["verdict"]
    assert "(whole entities: 2 of the 3; the held questions are about the others)" in check["about"]
    assert (
        f"the oracle {m['oracle']['relearn']['0']['trained_fact_recall']:.2f} -> {trained:.2f}"
        in check["verdict"]
    )


def test_relearning_curve_and_gap(audited):
    audit = audited["audit"]
    m = audit["measured"]
    curve = audit["relearn_curve"]
    assert list(curve) == ["audited", "oracle", "original"]
    for role, points in curve.items():
        assert list(points) == ["0", "5", "20"]
        assert points == m[role]["relearn"]
        # the world's rows carry fact_value: the fact-level score is measured at every point too, on the
        # held half and on the half the attack trains on
        held = {"rougeL_recall", "prob", "fact_recall"}
        assert all(set(p) == held | {f"trained_{k}" for k in held} for p in points.values())
    # Before the attack the two halves are the forget set cut in two (4 held + 8 trained items): their
    # means, weighted by their sizes, are the audit's own forget ROUGE-L / probability of all 12 items.
    for role in curve:
        zero = curve[role]["0"]
        assert (4 * zero["rougeL_recall"] + 8 * zero["trained_rougeL_recall"]) / 12 == pytest.approx(
            m[role]["forget_rougeL_recall"]
        )
        assert (4 * zero["prob"] + 8 * zero["trained_prob"]) / 12 == pytest.approx(m[role]["forget_prob"])
    gap = m["audited"]["relearn"]["20"]["rougeL_recall"] - m["oracle"]["relearn"]["20"]["rougeL_recall"]
    assert audit["relearn_gap_20"] == pytest.approx(gap) and audit["relearn_gap_20_note"] is None
    assert audit["relearn_gap"]["5"] == pytest.approx(
        m["audited"]["relearn"]["5"]["rougeL_recall"] - m["oracle"]["relearn"]["5"]["rougeL_recall"]
    )
    assert audit["relearn_gap_20"] > 0.3  # the target still knows the held-out facts; the oracle never did
    fact = m["audited"]["relearn"]["20"]["fact_recall"] - m["oracle"]["relearn"]["20"]["fact_recall"]
    assert audit["relearn_gap_fact_20"] == pytest.approx(fact)
    assert audit["relearn_probes"][0]["key"] == "fact_recall"
    # never unlearned: the gap was there before the attack, so it reads "never forgot", not "came back"
    assert audit["relearn_gap_0"] > 0.3 and audit["relearn_reading"]["reading"] == "never_forgot"
    # 20 is the curve's last step here: the headline gap (read where the calibration is) is the same one
    assert audit["relearn_final_step"] == 20 and audit["relearn_headline"]["key"] == "relearn_gap_final"
    assert audit["relearn_gap_final"] == audit["relearn_gap_20"]
    assert audit["relearn_gap_fact_final"] == audit["relearn_gap_fact_20"]
    # the calibration, by hand from the curve: the oracle's trained-half fact recall after 20 steps; the
    # target's lowest held-half fact recall over 5 and 20 steps over its value before the attack
    cal = audit["relearn_calibration"]
    orig = curve["original"]
    lowest = min(orig["5"]["fact_recall"], orig["20"]["fact_recall"])
    assert cal["metric"] == "fact_recall" and cal["step"] == "20"
    assert cal["oracle_trained"] == curve["oracle"]["20"]["trained_fact_recall"]
    assert cal["target_kept"] == pytest.approx(lowest / orig["0"]["fact_recall"])
    assert cal["teaches"] == (cal["oracle_trained"] >= 0.8) and cal["keeps"] == (cal["target_kept"] >= 0.9)


def test_one_relearning_run_equals_separate_runs(world):
    """The curve's checkpoints (one run, measured on the way) give the weights and numbers that
    separate runs of k steps give: measuring consumes none of the run's random state."""
    from unlearnkit.evaluation.audit.run import Auditor

    model, tok = world["target"]
    st = AuditSettings(relearn_steps=(2, 5), max_new_tokens=16, relearn_batch_size=4, seed=3)
    auditor = Auditor(world["bench"], st)
    train = [auditor.forget_qa[i] for i in auditor.train_idx]
    held = [auditor.forget_qa[i] for i in auditor.held_idx]
    seen: dict[int, tuple] = {}

    def measure(k, attacked):
        metrics, _ = auditor.split(attacked, tok, held, "forget")
        state = {n: p.detach().clone() for n, p in attacked.named_parameters()}
        seen[k] = (metrics["forget_rougeL_recall"], metrics["forget_prob"], state)

    relearn_curve(model, tok, train, st.relearn_steps, st, measure)
    assert sorted(seen) == [2, 5]
    for k in (2, 5):
        alone = relearned_copy(model, tok, train, k, st)
        for name, p in alone.named_parameters():
            assert torch.equal(p.detach(), seen[k][2][name]), (k, name)
        metrics, _ = auditor.split(alone, tok, held, "forget")
        assert (metrics["forget_rougeL_recall"], metrics["forget_prob"]) == seen[k][:2]
    assert any(not torch.equal(v, seen[5][2][n]) for n, v in seen[2][2].items())  # the run went on


def test_relearn_gap_needs_an_oracle(world):
    model, tok = world["target"]
    st = AuditSettings(relearn_steps=(2,), quant_bits=(), max_items=8, max_new_tokens=8)
    audit = run_audit(model, tok, world["bench"], settings=st)
    assert list(audit["relearn_curve"]) == ["audited"] and list(audit["relearn_curve"]["audited"]) == [
        "0",
        "2",
    ]
    assert audit["relearn_gap_20"] is None and audit["relearn_gap"] == {}
    assert "no retain oracle" in audit["relearn_gap_20_note"]
    md = audit_markdown(audit)
    assert "relearn_gap_final: n/a (no retain oracle" in md
    # no oracle: whether the attack can teach is not read; the target's damage needs the original model
    assert audit["relearn_calibration"] is None and audit["warnings"] == []
    assert "- **audited** (the model under audit)\n" in md  # no name given: the role is not repeated


def test_relearning_never_touches_the_audited_model(world, audited):
    target, _ = world["target"]
    after = target.state_dict()
    assert after.keys() == audited["before_state"].keys()
    for k, v in after.items():
        assert torch.equal(v, audited["before_state"][k]), k
    assert (target.training, [p.requires_grad for p in target.parameters()]) == audited["before_flags"]
    assert _files_digest(world["paths"]["target"]) == audited["before_files"]
    # the Trainer's temp folders (made under the audit's private temp folder) are removed
    made = audited["relearn_dirs_made"]
    assert made and all(Path(d).parent == audited["private_tmp"] for d in made)
    assert _leftover_relearn_dirs(audited["private_tmp"]) == set()


def test_quantisation_and_paraphrase_checks(audited):
    m = audited["audit"]["measured"]
    # RTN 8/4-bit barely moves a model trained to convergence (measured 1.00 -> 1.00).
    assert m["audited"]["quant8_forget_rougeL_recall"] > 0.9
    assert m["audited"]["quant4_forget_rougeL_recall"] > 0.8
    assert m["oracle"]["quant4_forget_rougeL_recall"] < 0.6
    # Reworded questions: target 0.84, oracle 0.27.
    assert audited["audit"]["data"]["probe_source"] == "paraphrased_question"
    assert m["audited"]["probe_rougeL_recall"] > m["oracle"]["probe_rougeL_recall"] + 0.3


def test_verdicts_have_numbers(audited):
    audit = audited["audit"]
    assert len(audit["verdicts"]) == 5
    for line in audit["verdicts"]:
        assert len(NUMBER.findall(line)) >= 3, line
        assert "pass" not in line.lower() and "fail" not in line.lower()
    mia = audit["verdicts"][0]
    assert "AUC 1.00" in mia and "the oracle 0." in mia and "the original model 1.00" in mia


def test_write_audit(tmp_path, audited):
    audit = audited["audit"]
    out = tmp_path / "card"
    write_audit(out, audit, overwrite=False)
    assert sorted(p.name for p in out.iterdir()) == ["audit.json", "audit.md", "relearn_curve.png"]
    assert (out / "relearn_curve.png").read_bytes().startswith(b"\x89PNG")
    data = json.loads((out / "audit.json").read_text())
    assert data["verdicts"] == audit["verdicts"]
    assert (
        data["measured"]["audited"]["forget_rougeL_recall"]
        == audit["measured"]["audited"]["forget_rougeL_recall"]
    )
    assert data["relearn_gap_20"] == audit["relearn_gap_20"]
    md = (out / "audit.md").read_text()
    assert md.startswith("# Unlearning audit card: target-as-npo\n")
    assert md.count("**Verdict:**") == 5
    assert "| | target-as-npo (audited) | retain oracle | target (original) |" in md
    assert "![relearning curve](relearn_curve.png)" in md
    assert "| 20 | " in md and f"relearn_gap_final = {audit['relearn_gap_final']:+.3f}" in md
    # the trained half's table, the calibration line and its warning
    assert "The same on the 8 trained forget items (what the attack teaches):" in md
    assert audit["relearn_calibration"]["text"] in md
    # a warning where the attack damages the target (test_relearning_attack: machine-dependent here)
    assert ("**Warning:**" in md) is bool(audit["warnings"])
    for line in md.splitlines():
        if line.startswith("**Verdict:**"):
            assert NUMBER.search(line), line
    with pytest.raises(UserError, match="already exists"):
        write_audit(out, audit, overwrite=False)
    write_audit(out, audit, overwrite=True)
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".card")]  # no temp folders left


def test_html_card_is_escaped(audited):
    page = audit_card_html(audited["audit"])
    assert "<b>target</b>" not in page and "&lt;b&gt;target&lt;/b&gt;" in page
    assert page.startswith("<section") and page.rstrip().endswith("</section>")
    assert page.count("class='verdict'") == 5
    assert "<script" not in page and "http" not in page  # self-contained
    assert page.count("src='data:image/png;base64,") == 1  # the relearning curve, inline


def _table_rows(page: str) -> list[list[str]]:
    return [re.findall(r"<t[dh][^>]*>(.*?)</t[dh]>", t) for t in re.findall(r"<tr>(.*?)</tr>", page)]


def test_card_names_each_role_once_and_has_one_heading(audited):
    audit = audited["audit"]
    md = audit_markdown(audit)
    assert md.count("\n# ") + md.startswith("# ") == 1
    for title in ("target-as-npo (audited)", "retain oracle", "target (original)"):
        assert sum(line.startswith(f"- **{title}**") for line in md.splitlines()) == 1, title
    page = audit_card_html(audit)
    assert page.count("<h2>") == 1 and "Unlearning audit card: target-as-npo" in page
    embedded = audit_card_html(audit, heading=False)
    assert "<h2>" not in embedded and "<h1>" not in embedded  # the page that embeds it has the heading
    assert embedded.count("<li><b>retain oracle</b>") == 1
    # No table repeats a row: every check's labels are distinct, and no two rows carry the same numbers
    # under different labels (the old 'restored after k' rows did, whenever the original was at 1.0).
    for check in audit["checks"]:
        labels = [r["label"] for r in check.get("rows", [])]
        assert len(labels) == len(set(labels)), labels
    all_rows = [tuple(c) for c in _table_rows(page) if c and c[0] and not c[0].startswith("<")]
    label_sets = {}
    for row in all_rows:
        label_sets.setdefault(row[0], []).append(row)
    assert all(len(rows) == 1 for label, rows in label_sets.items() if not label.isdigit()), label_sets
    # The relearning numbers appear once: as the curve table (steps x models), not also as check rows.
    assert "ROUGE-L recall after 20 steps" not in page and "ROUGE-L recall after 20 steps" not in md
    assert "<tr><td class='num'>20</td>" in page
    # A compared (plain) model's curve sits next to the audited one's, in the table and the plot.
    with_plain = audit_card_html(audit, heading=False, compare={"npo (plain)": audit})
    header = next(r for r in _table_rows(with_plain) if r and r[0] == "steps")
    assert header == ["steps", "target-as-npo (audited)", "npo (plain)", "retain oracle", "target (original)"]
    # Fits a 1400 px page: the card never grows past its container and numbers do not wrap.
    assert "max-width:100%" in page and "white-space:nowrap" in page


@pytest.mark.parametrize(
    "bad",
    [
        {"relearn_steps": (0,)},
        {"relearn_steps": (5, 5)},
        {"relearn_steps": ("x",)},
        {"relearn_fraction": 1.0},
        {"relearn_fraction": 0},
        {"relearn_lr": 0.0},
        {"relearn_lr": float("nan")},
        {"quant_bits": (16,)},
        {"quant_bits": (1,)},
        {"group_size": 0},
        {"max_new_tokens": 0},
        {"max_items": 0},
        {"seed": 1.5},
        {"probes_path": "/nonexistent/probes.jsonl"},
        {"prompt_format": "xml"},
    ],
)
def test_bad_settings(bad):
    with pytest.raises(UserError):
        AuditSettings(**bad)


def test_settings_normalised():
    st = AuditSettings(relearn_steps=[50, 5], quant_bits=[4])
    assert st.relearn_steps == (5, 50) and st.quant_bits == (4,)
    assert AuditSettings(relearn_steps=(), quant_bits=()).relearn_steps == ()
    assert parse_int_list("5,20,50", "--x") == (5, 20, 50)
    assert parse_int_list("none", "--x") == ()
    with pytest.raises(UserError, match="--relearn-steps"):
        parse_int_list("5;20", "--relearn-steps")


def test_relearn_halves_keep_whole_entities_apart_and_fall_back_to_items():
    from unlearnkit.errors import UserError
    from unlearnkit.evaluation.audit.relearning import relearn_halves

    rows = [{"question": f"q{i}", "author": f"a{i % 4}"} for i in range(12)]  # 4 authors, interleaved
    train, held, how = relearn_halves(rows, 0.5, seed=0)
    assert how == "entity" and sorted(train + held) == list(range(12)) and train == sorted(train)
    shown, asked = {rows[i]["author"] for i in train}, {rows[i]["author"] for i in held}
    assert len(shown) == 2 and len(asked) == 2 and not shown & asked  # no author on both sides
    assert relearn_halves(rows, 0.5, seed=0) == (train, held, how)  # seeded
    assert any(relearn_halves(rows, 0.5, seed=s)[0] != train for s in range(1, 6))
    # "entity" wins over "author"; one row without either, or a single entity, halves the items
    named = [{**r, "entity": "e" + r["author"]} for r in rows]
    assert relearn_halves(named, 0.5, seed=0)[2] == "entity"
    assert relearn_halves([*rows[:-1], {"question": "q"}], 0.5, seed=0)[2] == "item"
    assert relearn_halves([{**r, "author": "same"} for r in rows], 0.5, seed=0)[2] == "item"
    assert relearn_halves(rows, 0.5, seed=0, by="item") == (*relearn_split(12, 0.5, seed=0), "item")
    with pytest.raises(UserError, match="relearn_split must be entity or item"):
        relearn_halves(rows, 0.5, seed=0, by="author")
    with pytest.raises(UserError, match="relearn_split must be entity or item"):
        AuditSettings(relearn_split="authors")


def test_relearn_split():
    train, held = relearn_split(12, 0.5, seed=0)
    assert len(train) == 6 and len(held) == 6 and not set(train) & set(held)
    assert sorted(train + held) == list(range(12))
    assert relearn_split(12, 0.5, seed=0) == (train, held)
    assert relearn_split(12, 0.5, seed=1) != (train, held)
    assert relearn_split(2, 0.9, seed=0)[1]  # always keeps a held item
    with pytest.raises(UserError, match="at least 2"):
        relearn_split(1, 0.5, seed=0)


def test_probes_file_and_missing_holdout(world, tmp_path):
    bench = world["bench"]
    probes = tmp_path / "probes.jsonl"
    rows = [{"question": r["paraphrased_question"], "answer": r["answer"]} for r in bench.forget[:4]]
    probes.write_text("".join(json.dumps(r) + "\n" for r in rows))
    no_holdout = Benchmark(path=bench.path, forget=bench.forget, retain=bench.retain)
    model, tok = world["target"]
    settings = AuditSettings(relearn_steps=(), quant_bits=(), max_new_tokens=32, probes_path=str(probes))
    audit = run_audit(model, tok, no_holdout, settings=settings)
    assert audit["data"]["probe_source"] == str(probes) and audit["data"]["probe_items"] == 4
    assert list(audit["models"]) == ["audited"]
    mia = _check(audit, "mia")
    assert mia["skipped"] and "no holdout" in mia["verdict"]
    assert _check(audit, "relearning")["skipped"]
    assert audit["measured"]["audited"]["probe_rougeL_recall"] > 0.5
    md = audit_markdown(audit)
    assert "| | audited |" in md and "oracle |" not in md


def _parse(argv):
    parser = argparse.ArgumentParser()
    add_audit_arguments(parser)
    return parser.parse_args(argv)


def test_cli(world, tmp_path, capsys):
    out = tmp_path / "audit_out"
    argv = [
        "--model", str(world["paths"]["target"]),
        "--data", str(world["data"]),
        "--retain-model", str(world["paths"]["oracle"]),
        "--output", str(out),
        "--relearn-steps", "3",
        "--quant-bits", "4",
        "--max-items", "8",
        "--max-new-tokens", "24",
    ]  # fmt: skip
    args = _parse(argv)
    assert args.relearn_steps == "3" and args.trust_remote_code is False
    assert audit_command(args) == 0
    printed = capsys.readouterr().out
    assert "membership inference" in printed and "relearning 3 steps" in printed
    # the headline gap is read after the curve's last step, 3; relearn_gap_20 says why it is missing
    assert "relearn_gap_final = " in printed and "after 3 relearning steps" in printed
    data = json.loads((out / "audit.json").read_text())
    assert data["data"]["forget_items"] == 8 and data["settings"]["quant_bits"] == [4]
    assert data["models"]["oracle"] == str(world["paths"]["oracle"])
    assert list(data["relearn_curve"]["audited"]) == ["0", "3"]  # --relearn-steps sets the curve's points
    assert data["relearn_gap_20"] is None and "20 is not among" in data["relearn_gap_20_note"]
    assert data["relearn_final_step"] == 3 and data["relearn_gap_final"] == data["relearn_gap"]["3"]
    assert data["relearn_gap"]["3"] is not None and (out / "relearn_curve.png").is_file()
    # An existing output is refused before any model is loaded (the model path is bogus here).
    argv[1] = str(tmp_path / "no_such_model")
    with pytest.raises(UserError, match="already exists"):
        audit_command(_parse(argv))
    with pytest.raises(UserError, match="--relearn-steps"):
        audit_command(_parse([*argv, "--overwrite", "--relearn-steps", "a,b"]))
    with pytest.raises(UserError, match="does not exist"):
        audit_command(_parse([*argv, "--overwrite"]))


def test_add_audit_arguments_keeps_an_existing_trust_flag():
    parser = argparse.ArgumentParser()
    parser.add_argument("--trust-remote-code", action="store_true")
    add_audit_arguments(parser)  # no "conflicting option string" error
    args = parser.parse_args(["--model", "m", "--data", "d", "--output", "o", "--trust-remote-code"])
    assert (
        args.trust_remote_code
        and args.relearn_steps is None
        and args.relearn_lr is None
        and args.max_items == 200
    )
    assert AuditSettings().relearn_steps == (5, 10, 20, 50)


# ------------------------------------------------------------------- relearning wording, crafted curves


def _measured(curves: dict[str, list[tuple[float, float]]]) -> dict:
    """{role: [(ROUGE-L, fact recall) at 0 and 20 steps]} -> what Auditor.measure records."""
    return {
        role: {
            "relearn": {
                k: {"rougeL_recall": r, "fact_recall": f, "prob": r / 2}
                for k, (r, f) in zip(("0", "20"), pts)
            }
        }
        for role, pts in curves.items()
    }


def _crafted_auditor():
    from types import SimpleNamespace

    from unlearnkit.evaluation.probes import FACT_RECALL

    st = AuditSettings(relearn_steps=(20,), quant_bits=())
    return SimpleNamespace(
        st=st,
        train_idx=list(range(5)),
        held_idx=list(range(5)),
        relearn_probes=(FACT_RECALL,),
        split_by="item",
        forget=[{"question": f"q{i}"} for i in range(10)],
        control=[],  # no control fine-tune (relearn_control none)
    )


def _verdict(curves) -> dict:
    from unlearnkit.evaluation.audit.relearning import relearn_check

    return relearn_check(_measured(curves), _crafted_auditor())


def test_relearning_verdict_says_which_way_the_curve_went():
    """A reported case: at lr 1e-3 the attack lowered every model (target 1.00 -> 0.67) and the card
    said "restores 57 % ... (0.97 -> 0.57)"."""
    fall = _verdict({"audited": [(0.97, 0.8), (0.57, 0.4)], "oracle": [(0.39, 0.0), (0.35, 0.0)],
                     "original": [(1.00, 1.0), (0.67, 0.6)]})  # fmt: skip
    assert fall["direction"] == "down" and "restores" not in fall["verdict"]
    assert fall["verdict"].startswith(
        "relearning 20 steps on 5 forget items lowers forget ROUGE-L on the 5 other forget questions from "
        "0.97 to 0.57; the oracle goes 0.39 -> 0.35, the original model goes 1.00 -> 0.67; fact recall "
        "0.80 -> 0.40 (the oracle 0.00 -> 0.00, the original model 1.00 -> 0.60)"
    )
    assert fall["verdict"].endswith(
        "the attack lowers the original model too: it damages rather than relearns (see the warning); "
        # the calibration: the target's held-half fact recall 1.0 -> 0.6 keeps 0.6 / 1.0 = 60 % (< 90 %);
        # these curves carry no trained-half numbers, so whether the attack can teach is not read
        "attack calibration: the attack damages the target: the target keeps only 60 % of its held-half "
        "fact recall (1.00 -> 0.60; bar 90 %)"
    )
    rise = _verdict({"audited": [(0.40, 0.0), (0.84, 0.6)], "oracle": [(0.39, 0.0), (0.41, 0.0)],
                     "original": [(1.00, 1.0), (1.00, 1.0)]})  # fmt: skip
    assert rise["verdict"].startswith(
        "relearning 20 steps on 5 forget items raises forget ROUGE-L on the 5 other forget questions from "
        "0.40 to 0.84, 84 % of the original model's 1.00;"
    )
    assert "damages" not in rise["verdict"]
    flat = _verdict({"audited": [(0.90, 0.8), (0.91, 0.8)], "oracle": [(0.39, 0.0), (0.39, 0.0)]})
    assert "leaves forget ROUGE-L on the 5 other forget questions at 0.90 (0.91 after)" in flat["verdict"]
    alone = _verdict({"audited": [(0.90, 0.8), (0.50, 0.2)]})  # no original: the fall is still named
    assert (
        "lowers" in alone["verdict"]
        and "the attack damages the model (pass the original model" in alone["verdict"]
    )


def test_relearning_warns_when_the_attack_lowers_the_target():
    from unlearnkit.evaluation.audit.relearning import relearn_warnings

    st = AuditSettings(relearn_steps=(20,), quant_bits=())
    (w,) = relearn_warnings(_measured({"original": [(1.00, 1.0), (0.67, 0.6)]}), st)
    assert w["code"] == "relearn_attack_damages"
    # fact recall 1.0 -> 0.6: kept 0.6 / 1.0 = 60 % of what it knew, under the 90 % bar
    assert w["message"].startswith(
        "the relearning attack damages the original (target) model: its held-half fact recall falls "
        "1.00 -> 0.60 (after 20 steps at lr 0.001: it keeps 60 %, bar 90 %), so falls on the curves are "
        "damage, not forgetting"
    )
    assert "lower --relearn-lr (e.g. 0.0005) and relearn for more steps" in w["message"]
    # fact recall kept (ROUGE-L 1.00 -> 0.99 is the template, not the facts): no warning
    assert relearn_warnings(_measured({"original": [(1.00, 1.0), (0.99, 1.0)]}), st) == []
    assert relearn_warnings(_measured({"audited": [(1.00, 1.0), (0.5, 0.5)]}), st) == []  # no target given


def test_gap_beside_step_zero_tells_never_forgot_from_came_back():
    from unlearnkit.evaluation.audit.card import gap_lines
    from unlearnkit.evaluation.audit.relearning import relearn_gaps, relearn_reading

    oracle = [(0.39, 0.0), (0.40, 0.1)]
    cases = {
        "never_forgot": [(0.57, 0.6), (0.58, 0.6)],  # the reported ASU: barely moved, +0.18 both times
        "came_back": [(0.40, 0.0), (0.80, 0.8)],
        "stays_forgotten": [(0.40, 0.0), (0.43, 0.1)],
        "lowered_by_attack": [(0.90, 0.8), (0.45, 0.1)],  # above before, not after: damage
    }
    for expected, audited in cases.items():
        curve = {r: p["relearn"] for r, p in _measured({"audited": audited, "oracle": oracle}).items()}
        gaps = relearn_gaps(curve)
        reading = relearn_reading(gaps)
        assert reading["reading"] == expected, (expected, gaps)
        assert reading["before"] == pytest.approx(audited[0][0] - oracle[0][0])
    curve = {
        r: p["relearn"] for r, p in _measured({"audited": cases["never_forgot"], "oracle": oracle}).items()
    }
    assert relearn_reading(relearn_gaps(curve))["text"] == (
        "never forgot: +0.18 above the oracle before the attack, so the +0.18 after 20 steps is knowledge "
        "that was never removed, not knowledge that came back"
    )
    back = {r: p["relearn"] for r, p in _measured({"audited": cases["came_back"], "oracle": oracle}).items()}
    audit = {
        "relearn_curve": back,
        "relearn_gap_20": relearn_gaps(back)["20"],
        "relearn_reading": relearn_reading(relearn_gaps(back)),
        "relearn_probes": [{"key": "fact_recall", "short": "fact", "label": "fact recall"}],
        "relearn_gap_fact_20": relearn_gaps(back, "fact_recall")["20"],
        "relearn_reading_fact": relearn_reading(relearn_gaps(back, "fact_recall")),
    }
    plain = {"relearn_curve": {"audited": {k: p for k, p in curve["audited"].items()}}}
    lines = gap_lines(audit, compare={"asu (plain)": plain})
    assert lines[0].startswith("relearn_gap_20 = +0.400 (audited minus retain-oracle forget ROUGE-L")
    assert lines[0].endswith(
        "; came back: at the oracle's level before the attack (+0.01), +0.40 above it after 20 steps"
    )
    assert lines[1].startswith("relearn_gap_fact_20 = +0.700 (the same gap in fact recall); came back")
    # the plain method's flat curve is "never forgot", not a robustness failure
    assert lines[2].startswith(
        "asu (plain): relearn_gap_20 = +0.180 (forget ROUGE-L, against the same oracle); never forgot"
    )
