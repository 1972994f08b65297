"""How much of what a model was trained on it knows: the line ``finetune`` and ``pretrain`` end with.

The case: a user's own folder, a base pretrained on it, then ``finetune --model base``
with the recipe the base records: the target reached forget ROUGE-L 0.85 but fact recall 0.27, its
general ROUGE-L fell from the base's 0.97 to 0.64, and nothing said so.
"""

from __future__ import annotations

import json

import pytest
import torch

from unlearnkit.evaluation.learned import WARN_BELOW, Learned, LearnedSettings, measure_learned, split_kinds


def test_the_line_and_the_warnings_of_the_issues_case():
    learned = Learned(
        trained={"questions": {"items": 100, "rougeL_recall": 0.85, "fact_recall": 0.27}},
        trained_total={"questions": 900},
        general={"items": 100, "rougeL_recall": 0.64},
        base_general={"items": 100, "rougeL_recall": 0.97},
    )
    assert learned.line() == (
        "learned: fact recall 0.27, ROUGE-L 0.85 on 100 of the 900 trained questions; general questions "
        "(never trained on) ROUGE-L recall 0.64 (the base: 0.97)"
    )
    first, second = learned.warnings()
    # judged on the fact (0.27), not on the template-dominated ROUGE-L (0.85)
    assert first.startswith("the model states only 0.27 (fact recall) of the 100 trained questions asked")
    assert second.startswith("general knowledge fell from the base's 0.97 to 0.64 (ROUGE-L recall on 100")
    assert "66% kept, below 90%" in second
    card = learned.as_dict()
    assert card["general_kept"] == pytest.approx(0.64 / 0.97) and card["warnings"] == [first, second]


def test_the_advice_starts_from_the_pull_the_run_trained_with():
    """The pull toward the base trades the facts learned against the knowledge kept: a run with a pull
    is told to double it when the general knowledge falls and to halve it when the facts do; a run
    without one is told to start with 0.001."""
    both_low = dict(
        trained={"questions": {"items": 100, "rougeL_recall": 0.9, "fact_recall": 0.8}},
        trained_total={"questions": 900},
        general={"items": 100, "fact_recall": 0.85},
        base_general={"items": 100, "fact_recall": 1.0},
    )
    facts, general = Learned(**both_low, anchor_decay=1e-3).warnings()
    assert "or pull less toward the base (--set anchor_decay=0.0005; this run: 0.001)" in facts
    assert "pull harder toward the base (--set anchor_decay=0.002; this run: 0.001;" in general
    facts, general = Learned(**both_low).warnings()
    assert "pull less" not in facts and "anchor_decay" not in facts
    assert general.endswith(
        "pull the weights back toward the base (--set anchor_decay=0.001, more to keep more)"
    )


def test_no_warning_at_or_above_the_line():
    learned = Learned(
        trained={"questions": {"items": 40, "rougeL_recall": 0.95, "fact_recall": WARN_BELOW}},
        trained_total={"questions": 40},
        general={"items": 10, "fact_recall": 0.9},
        base_general={"items": 10, "fact_recall": 1.0},  # 90 % of the base's: kept
    )
    assert learned.warnings() == []
    just_below = Learned({"passages": {"items": 5, "rougeL_recall": 0.89}}, {"passages": 5})
    assert (
        just_below.warnings()
        and "0.89 (ROUGE-L recall) of the 5 trained passages" in just_below.warnings()[0]
    )


def test_question_rows_and_passages_are_told_apart():
    rows = [{"question": "q", "answer": "a"}, {"text": "a passage"}, {"text": "t", "question": "q"}]
    questions, passages = split_kinds(rows)
    assert [r["question"] for r in questions] == ["q"] and [r["text"] for r in passages] == ["a passage"]


def test_a_model_asked_its_own_training_answers_is_scored_as_eval_scores_them(tmp_path):
    """A tiny random model knows nothing: fact recall 0 on the sampled questions, ROUGE-L from the same
    function as the TOFU protocol; the sample is bounded by ``max_items``."""
    from unlearnkit.data import load_benchmark
    from unlearnkit.data.encode import PromptFormat
    from unlearnkit.world import write_world
    from unlearnkit.world.tiny import build_tiny

    torch.set_num_threads(1)
    world = tmp_path / "w"
    write_world(
        world, n_authors=6, facts_per_author=3, forget_fraction=0.34, holdout_fraction=0.17, n_general=5
    )
    bench = load_benchmark(world)
    model, tokenizer = build_tiny(bench, seed=0)
    fmt = PromptFormat.for_tokenizer(tokenizer, "auto")
    rows = bench.forget + bench.retain
    general = [r for r in bench.general if r.get("source") == "world_facts"][:5]
    learned = measure_learned(model, tokenizer, fmt, rows, LearnedSettings(max_items=7), general)
    questions = learned.trained["questions"]
    assert questions["items"] == 7 and learned.trained_total["questions"] == len(rows)
    assert questions["fact_recall"] == 0.0 and 0.0 <= questions["rougeL_recall"] < 0.5
    assert learned.general["items"] == len(general) and learned.base_general is None
    assert f"on 7 of the {len(rows)} trained questions" in learned.line() and learned.warnings()
    json.dumps(learned.as_dict())  # the card entry is JSON
