"""bench/real.py's pure parts on hand-made inputs: the authors each seed draws, the benchmark folder it
writes, the time estimate, and the lab's checks and the claims computed from a results dict. No model
is trained here (the bench itself runs the models)."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"
sys.path.insert(0, str(BENCH))

import real  # noqa: E402

from unlearnkit.data.qa import load_benchmark, overlapping_questions  # noqa: E402


def fake_tofu() -> dict[str, list[dict]]:
    """TOFU's files in miniature and by hand: 200 authors x 20 rows, the perturbed files lined up."""
    full = [
        {"question": f"Q{a}-{i}: who is author {a}?", "answer": f"Author {a} fact {i} is v{a}x{i}."}
        for a in range(200)
        for i in range(20)
    ]

    def perturbed(row: dict) -> dict:
        return {
            **row,
            "paraphrased_answer": row["answer"].replace("is", "equals"),
            "perturbed_answer": [row["answer"].replace("fact", "wrong fact")],
            "paraphrased_question": row["question"] + " (again)",
        }

    return {
        "full": full,
        "forget10_perturbed": [perturbed(r) for r in full[3600:]],
        "retain_perturbed": [perturbed(r) for r in full[:400]],
        "real_authors": [
            {"question": "Who wrote Hamlet?", "answer": "Shakespeare", "perturbed_answer": ["Dickens"]}
        ],
        "world_facts": [
            {
                "question": "Capital of France?",
                "answer": "Paris",
                "perturbed_answer": ["Lyon"],
                "original_answer": "x",
            }
        ],
    }


def test_authors_are_deterministic_disjoint_and_from_their_pools():
    a = real.choose_authors(0, 2, 3, 2)
    assert a == real.choose_authors(0, 2, 3, 2)
    assert a != real.choose_authors(1, 2, 3, 2)
    assert set(a["forget"]) <= set(real.FORGET_POOL)
    assert set(a["retain"]) <= set(real.RETAIN_POOL)
    assert set(a["holdout"]) <= set(real.HOLDOUT_POOL)
    every = a["forget"] + a["retain"] + a["holdout"]
    assert len(every) == len(set(every)) == 7
    # a larger size keeps the smaller one's authors (each pool is drawn on its own)
    bigger = real.choose_authors(0, 3, 4, 2)
    assert set(a["forget"]) < set(bigger["forget"]) and set(a["retain"]) < set(bigger["retain"])
    assert bigger["holdout"] == a["holdout"]
    # the seeds draw different subsets: over 10 seeds, more than one forget author
    assert len({tuple(real.choose_authors(s, 1, 2, 1)["forget"]) for s in range(10)}) > 1


@pytest.mark.parametrize("sizes", [(0, 2, 1), (21, 2, 1), (1, 0, 1), (1, 21, 1), (1, 2, -1), (1, 2, 161)])
def test_bad_sizes_exit_2_with_one_line(sizes, capsys):
    with pytest.raises(SystemExit) as err:
        real.choose_authors(0, *sizes)
    assert err.value.code == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1


def test_folder_has_the_schema_and_no_overlap(tmp_path):
    tofu = fake_tofu()
    authors = real.choose_authors(3, 2, 2, 1)
    splits = real.build_splits(tofu, authors)
    folder = real.write_folder(splits, tmp_path / "bench", {"seed": 3, "authors": authors})
    assert sorted(p.name for p in folder.iterdir()) == [
        "benchmark.json",
        "forget.jsonl",
        "general.jsonl",
        "holdout.jsonl",
        "retain.jsonl",
    ]
    assert json.loads((folder / "benchmark.json").read_text())["authors"] == authors
    bench = load_benchmark(folder)  # the project's own loader and checks
    assert len(bench.forget) == 40 and len(bench.retain) == 40 and len(bench.holdout) == 20
    assert sorted(bench.general_parts) == ["real_authors", "world_facts"]
    for row in bench.forget + bench.retain:  # the truth ratio's fields, and the never-trained wording
        assert {"paraphrased_answer", "perturbed_answer", "paraphrased_question"} <= set(row)
    # each row is its author's own (forget rows come from forget10_perturbed, lined up with full.json)
    for name in ("forget", "retain", "holdout"):
        for row in bench.split(name):
            assert row["question"].startswith(f"Q{row['author']}-")
            assert row["author"] in authors[name]
    assert "original_answer" not in bench.general[1]
    assert not overlapping_questions(bench)
    questions = [r["question"] for n in ("forget", "retain", "holdout") for r in bench.split(n)]
    assert len(questions) == len(set(questions))
    # written once: a second call leaves the folder as it is
    before = (folder / "forget.jsonl").stat().st_mtime_ns
    real.write_folder({"forget": [], "retain": []}, folder, {})
    assert (folder / "forget.jsonl").stat().st_mtime_ns == before


def test_misaligned_perturbed_file_is_an_error(capsys):
    tofu = fake_tofu()
    tofu["forget10_perturbed"] = tofu["forget10_perturbed"][1:] + tofu["forget10_perturbed"][:1]
    with pytest.raises(SystemExit):
        real.build_splits(tofu, {"forget": [190], "retain": [0], "holdout": []})
    assert "does not line up" in capsys.readouterr().err


def test_real_tofu_when_present(tmp_path):
    folder = real.DEFAULT_DATA_ROOT / real.TOFU_SUBDIR
    if not (folder / "full.json").is_file():
        pytest.skip("no shared TOFU copy")
    splits = real.build_splits(real.load_tofu(folder), real.choose_authors(0, 1, 2, 1))
    bench = load_benchmark(real.write_folder(splits, tmp_path / "b", {}))
    assert (len(bench.forget), len(bench.retain), len(bench.holdout)) == (20, 40, 20)
    assert not overlapping_questions(bench)


def test_time_estimate_from_recorded_steps(tmp_path, capsys):
    t = real.Timings(tmp_path / "timings.json", threads=1)
    line = t.estimate("target", "finetune", 10, "step")
    assert "no step timed" in line
    t.record("finetune", 120.0, 10)
    again = real.Timings(tmp_path / "timings.json", threads=1)
    assert "12.0 s" in again.estimate("target", "finetune", 10, "step")
    assert "about 2.0 min" in again.estimate("target", "finetune", 10, "step")
    # a method never timed: twice a fine-tune step; another thread count: nothing recorded
    assert "24.0 s" in again.estimate("ga", "unlearn:ga", 5, "step")
    assert "no step timed" in real.Timings(tmp_path / "timings.json", threads=2).estimate(
        "x", "finetune", 1, "step"
    )


def _row(**m):
    return {
        "forget_quality": 0.5,
        "model_utility": 0.5,
        "forget_rougeL_recall": 0.4,
        "forget_token_entropy": 2.0,
        **m,
    }


def results(asu_rouge: float, asu_mu: float, jitter: float = 0.0) -> dict:
    """Three seeds: the target knows (ROUGE-L 0.9, FQ 1e-4), the oracle not (0.4), the null oracle a
    null; ASU per the arguments; GA collapses (utility 0.1); T-NPO beats NPO on both counts."""
    out = {}
    for seed in range(3):
        j = jitter * seed
        out[seed] = {
            "target": _row(
                forget_quality=1e-4, forget_rougeL_recall=0.9, model_utility=0.5, forget_token_entropy=2.0
            ),
            "oracle": _row(forget_quality=1.0, forget_rougeL_recall=0.4, model_utility=0.5),
            real.NULL_ORACLE: _row(forget_quality=0.3 + j),
            "asu": _row(forget_rougeL_recall=asu_rouge + j, model_utility=asu_mu, forget_token_entropy=1.95),
            "ga": _row(forget_rougeL_recall=0.0 + j, model_utility=0.1, forget_token_entropy=0.2),
            "npo": _row(forget_quality=1e-3 * (1 + seed), model_utility=0.30 + j),
            "t-npo": _row(forget_quality=1e-1 * (1 + seed), model_utility=0.40 + 2 * j),
        }
    return out


def test_lab_checks_on_a_hand_made_lab():
    checks = {c["check"].split(":")[0]: c["verdict"] for c in real.lab_checks(results(0.45, 0.48))}
    assert list(checks.values()) == ["holds", "holds", "holds", "holds"]
    bad = results(0.45, 0.48)
    bad[1]["target"]["forget_rougeL_recall"] = 0.6  # one seed's target did not learn its authors
    bad[2]["target"]["forget_quality"] = 0.2
    verdicts = [c["verdict"] for c in real.lab_checks(bad)]
    assert verdicts[0] == "tie (2 of 3 seeds)" and verdicts[1] == "tie (2 of 3 seeds)"
    assert verdicts[2] == "tie (2 of 3 seeds)" and verdicts[3] == "holds"


def test_claims_computed_from_the_numbers():
    good = {c["claim"].split(" (")[0]: c for c in real.claims(results(0.45, 0.48, jitter=0.01))}
    asu = next(v for k, v in good.items() if k.startswith("ASU forgets"))
    assert asu["verdict"] == "holds"
    assert "utility share 0.960" in asu["numbers"]
    assert good["ASU beats GA there"]["verdict"] == "holds"
    assert good["T-NPO beats NPO on forget"]["verdict"] == "holds"
    # NPO and IDK absent from ASU's comparisons where a row is missing: IDK is not in the results
    assert not any("IDK" in k for k in good)
    # ASU that did not forget (ROUGE-L at the target's) and lost utility: fails on every seed
    bad = {c["claim"].split(" (")[0]: c for c in real.claims(results(0.9, 0.2, jitter=0.01))}
    assert next(v for k, v in bad.items() if k.startswith("ASU forgets"))["verdict"] == "fails"
    # ASU worse than GA on the ROUGE-L gap, better on utility and fluency: a tie, not a win
    assert bad["ASU beats GA there"]["verdict"] == "tie"


def test_compare_readings_need_one_sign_on_every_seed():
    per_seed = {
        0: {"a": {"x": 1.0}, "b": {"x": 0.0}},
        1: {"a": {"x": 0.0}, "b": {"x": 0.5}},
        2: {"a": {"x": 1.0}, "b": {"x": 0.0}},
    }
    assert real._compare(per_seed, "a", "b", [("x", 1)], need_all=True)["verdict"] == "tie"
    per_seed[1]["a"]["x"] = 0.9
    assert real._compare(per_seed, "a", "b", [("x", 1)], need_all=True)["verdict"] == "holds"
    assert real._compare(per_seed, "a", "b", [("x", -1)], need_all=True)["verdict"] == "fails"
    assert real._compare(per_seed, "a", "b", [("y", 1)], need_all=True)["verdict"] == "not measured"


def test_derived_columns_and_reproduce_command():
    rows = real.with_derived(results(0.45, 0.48))[0]
    assert math.isclose(rows["asu"]["forget_rouge_gap"], 0.05)
    assert math.isclose(rows["asu"]["utility_share"], 0.96)
    assert math.isclose(rows["target"]["log10_forget_quality"], -4.0)
    cmd = real.reproduce(["--seeds", "0", "--output-dir", "/tmp/x", "--cache-dir=/c", "--methods", "ga"])
    assert cmd == "python bench/real.py --seeds 0 --methods ga"


def test_steps_and_the_whole_run_estimate(tmp_path):
    assert real.finetune_steps(60, {"batch_size": 8, "epochs": 5}) == 40
    assert real.finetune_steps(60, {"max_steps": 3}) == 3
    assert real.unlearn_steps(20, {"batch_size": 4, "grad_accum": 1, "epochs": 5}) == 25
    assert real.unlearn_steps(20, {}) == 5  # the method defaults: 8 x 4 a step
    base = tmp_path / "base"
    base.mkdir()
    card = {
        "finetune_defaults": {"train": {"batch_size": 8, "epochs": 5}},
        "unlearn_defaults": {"train": {"batch_size": 4, "grad_accum": 1}},
    }
    (base / "unlearnkit.json").write_text(json.dumps(card))
    args = real.argparse.Namespace(
        forget_authors=1,
        retain_authors=2,
        holdout_authors=1,
        ft_set=[],
        unlearn_set=[],
        max_items=40,
        general_items=20,
        threads=1,
    )
    timings = real.Timings(tmp_path / "t.json", threads=1)
    head, *lines = real.plan_estimate(args, str(base), ["ga"], timings, 3)
    assert "not timed yet (fine-tunes, ga, evaluations)" in head
    timings.record("finetune", 10.0, 1)
    timings.record("eval", 2.0, 1)
    head, *lines = real.plan_estimate(args, str(base), ["ga"], timings, 3)
    # fine-tunes 40 + 2 x 25 steps x 10 s; ga 25 steps x 20 s; 4 evaluations x (20 + 40 + 20 + 2 x 20) items x 2 s
    total = 3 * (90 * 10 + 25 * 20 + 4 * 120 * 2)
    assert f"about {total / 3600:.1f} h" in head and "not timed" not in head
    assert lines[0].startswith("  fine-tunes: 90 steps")


def test_the_evaluation_folder_keeps_the_lab_rows_and_samples_the_general_parts(tmp_path):
    """Every forget, retain and holdout row is evaluated (forget quality is a test over the whole forget
    set); of each general source, the rows the evaluator's own seeded sample of that many takes."""
    from unlearnkit.evaluation.evaluate import subsample

    data = tmp_path / "seed0-abc"
    splits = {
        "forget": [{"question": f"f{i}", "answer": "a"} for i in range(40)],
        "retain": [{"question": f"r{i}", "answer": "a"} for i in range(40)],
        "holdout": [{"question": f"h{i}", "answer": "a"} for i in range(40)],
        "general": [
            {"question": f"{src}{i}", "answer": "a", "source": src} for src in ("ra", "wf") for i in range(30)
        ],
    }
    real.write_folder(splits, data, {"seed": 0, "authors": {"forget": [180, 181]}})
    before = {f.name: f.read_bytes() for f in data.iterdir()}
    folder = real.ensure_eval_data(data, 20)
    assert folder.name == "seed0-abc-eval20" and folder.parent == data.parent
    for name in ("forget", "retain", "holdout"):
        assert real._jsonl_rows(folder / f"{name}.jsonl") == splits[name]
    general = real._jsonl_rows(folder / "general.jsonl")
    for src in ("ra", "wf"):
        rows = [r for r in splits["general"] if r["source"] == src]
        assert [r for r in general if r["source"] == src] == subsample(rows, 20, 0)
    meta = json.loads((folder / "benchmark.json").read_text())
    assert meta["general_items"] == 20 and meta["authors"] == {"forget": [180, 181]} and meta["kind"] == "qa"
    assert {f.name: f.read_bytes() for f in data.iterdir()} == before  # the training folder is untouched
    assert real.ensure_eval_data(data, 20) == folder  # written once
    assert real.eval_items(folder, 40) == 40 * 3 + 2 * 20


def test_the_report_states_the_computed_verdicts():
    per_seed = results(0.45, 0.48, jitter=0.01)
    per_seed[0]["asu"]["tau"] = 1.8
    meta = {
        "model": "m",
        "sizes": {"forget": 1, "retain": 2, "holdout": 1},
        "recipe": {"epochs": 5},
        "unlearn_set": {},
        "max_items": 40,
        "max_new_tokens": 80,
        "learned": {0: {"target": "learned: ROUGE-L recall 0.95"}},
        "failed": {"seed 1 rmu": "boom"},
    }
    md = real.render(per_seed, meta)
    assert md.startswith("## A real model")
    assert "| row | forget_quality | model_utility |" in md
    assert "- seed 0 target: learned: ROUGE-L recall 0.95" in md
    assert "- seed 0 asu: tau 1.8 (searched: tau=auto)" in md
    assert "- seed 1 rmu: not run (boom)" in md
    for c in real.claims(per_seed) + real.lab_checks(per_seed):
        assert f"**{c['verdict']}**" in md


@pytest.mark.parametrize(
    "argv, says",
    [
        (["--forget-authors", "30"], "--forget-authors 30: must be 1..20"),
        (["--seeds", "x"], "--seeds x: expected comma-separated integers"),
        (["--ft-set", "lr=-1"], "--ft-set: "),
        (["--max-items", "0"], "--max-items 0: must be >= 1"),
        (["--general-items", "0"], "--general-items 0: must be >= 1"),
        (["--data-root", "/nonexistent"], "no TOFU copy at /nonexistent"),
    ],
)
def test_bad_input_is_one_line_and_exit_2_before_any_work(argv, says, capsys, tmp_path):
    with pytest.raises(SystemExit) as err:
        real.main([*argv, "--estimate", "--cache-dir", str(tmp_path)])
    assert err.value.code == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and says in lines[0]
    assert not any(tmp_path.iterdir())  # nothing written


def test_fluency_of_counts_empty_and_degenerate_forget_answers(tmp_path):
    """Two of four forget answers are not language (one empty, one a loop): a share of 0.5; a folder
    without generations gives nothing rather than a made-up number."""
    answers = [
        "She was born in Lisbon to a family of painters.",
        "",
        "the the the the the the the the the the the the",
        "His books are about the sea and the people who live by it.",
    ]
    (tmp_path / "details.json").write_text(json.dumps({"forget": {"generations": answers}}), encoding="utf-8")
    assert real.fluency_of(tmp_path) == {"forget_degenerate_share": 0.5}
    empty = tmp_path / "none"
    empty.mkdir()
    assert real.fluency_of(empty) == {}


def test_best_row_is_the_reports_choice_and_skips_degenerate_rows():
    """The audited row is the report's best (closest to the oracle on the forget side, 90 % of its
    utility kept); a row whose forget answers are mostly degenerate is not eligible, however close."""
    rows = {
        "target": {
            "forget_rougeL_recall": 1.0,
            "forget_prob": 0.95,
            "forget_truth_ratio": 0.3,
            "model_utility": 0.40,
        },
        "oracle": {
            "forget_rougeL_recall": 0.35,
            "forget_prob": 0.1,
            "forget_truth_ratio": 0.6,
            "model_utility": 0.40,
        },
        "oracle, another seed": {
            "forget_rougeL_recall": 0.36,
            "forget_prob": 0.11,
            "forget_truth_ratio": 0.6,
            "model_utility": 0.4,
        },
        "ga": {
            "forget_rougeL_recall": 0.34,
            "forget_prob": 0.09,
            "forget_truth_ratio": 0.6,
            "model_utility": 0.39,
            "forget_degenerate_share": 0.9,
        },
        "npo": {
            "forget_rougeL_recall": 0.1,
            "forget_prob": 0.02,
            "forget_truth_ratio": 0.7,
            "model_utility": 0.38,
            "forget_degenerate_share": 0.0,
        },
        "asu": {
            "forget_rougeL_recall": 0.45,
            "forget_prob": 0.2,
            "forget_truth_ratio": 0.55,
            "model_utility": 0.39,
            "forget_degenerate_share": 0.05,
        },
    }
    row, why = real.best_row(rows, ["ga", "npo", "asu"])
    assert row == "asu" and "best" in why
    # nobody keeps 90 %: the most utility among rows that moved at least half way to the oracle, not an
    # unchanged copy of the target (which keeps the most utility by forgetting nothing)
    rows["asu"]["model_utility"], rows["npo"]["model_utility"] = 0.30, 0.20
    rows["rmu"] = {**rows["target"], "model_utility": 0.35, "forget_degenerate_share": 0.0}
    row, why = real.best_row(rows, ["ga", "npo", "asu", "rmu"])
    assert row == "asu" and "no row is called best" in why and "closed at least 50%" in why


def test_audit_lines_name_the_row_and_quote_the_verdicts():
    lines = real.audit_lines(
        [{"seed": 0, "row": "asu", "why": "the report's best row", "verdicts": ["MIA: ok"]}]
    )
    assert lines[0].startswith("The audit of seed 0's asu") and "- MIA: ok" in lines


def test_audit_seeds_must_be_integers(capsys):
    with pytest.raises(SystemExit) as exc:
        real.main(["--audit-seeds", "zero", "--estimate"])
    assert exc.value.code == 2 and "--audit-seeds zero" in capsys.readouterr().err


def test_teacher_at_reads_the_searched_teachers_forget_numbers(tmp_path):
    """The card's tau_search, at the tau the student used: the teacher's forget ROUGE-L and fact score;
    another tau or no search gives nothing."""
    card = {
        "config": {
            "tau_search": {
                "chosen_tau": 1.7,
                "settings": [
                    {"tau": 1.5, "forget": {"rougeL_recall": 0.76, "fact_score": 0.92}},
                    {"tau": 1.7, "forget": {"rougeL_recall": 0.45, "fact_score": 0.08}},
                ],
            }
        }
    }
    (tmp_path / "unlearnkit.json").write_text(json.dumps(card), encoding="utf-8")
    assert real.teacher_at(tmp_path, 1.7) == {
        "teacher_forget_rougeL_recall": 0.45,
        "teacher_forget_fact_score": 0.08,
    }
    assert real.teacher_at(tmp_path, 2.0) == {}
    assert real.teacher_at(tmp_path / "missing", 1.7) == {}
    res = {
        "asu": {"tau": 1.7, "forget_rougeL_recall": 0.58, "teacher_forget_rougeL_recall": 0.45},
        "oracle": {"forget_rougeL_recall": 0.395},
    }
    assert real._teacher_note(res, "asu") == (
        "; the teacher's own forget ROUGE-L there 0.450, the student's 0.580, the oracle's 0.395"
    )
