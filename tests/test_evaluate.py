"""Model-facing metric passes and the TOFU protocol on a tiny random model."""

from __future__ import annotations

import math

import pytest
import torch
from tolerances import REORDERED_FORWARD_LOGP_ATOL, SAME_LOGITS_REL

from unlearnkit.data.encode import PromptFormat
from unlearnkit.evaluation.evaluate import EvalSettings, evaluate
from unlearnkit.metrics.passes import generate_answers, score_answers


def test_batched_scoring_equals_one_at_a_time(tiny_random_llama, world_tokenizer, mini_bench):
    fmt = PromptFormat.for_tokenizer(world_tokenizer)
    rows = mini_bench.forget[:6]
    q, a = [r["question"] for r in rows], [r["answer"] for r in rows]
    batched = score_answers(tiny_random_llama, world_tokenizer, fmt, q, a, batch_size=4).nll_mean
    single = [
        score_answers(tiny_random_llama, world_tokenizer, fmt, [x], [y]).nll_mean[0] for x, y in zip(q, a)
    ]
    assert batched == pytest.approx(single, abs=REORDERED_FORWARD_LOGP_ATOL)  # padded batch vs one row


def test_score_is_the_answer_nll_by_hand(tiny_random_llama, world_tokenizer, mini_bench):
    fmt = PromptFormat.for_tokenizer(world_tokenizer)
    row = mini_bench.forget[0]
    prompt = fmt.prompt_ids(world_tokenizer, row["question"])
    answer = fmt.answer_ids(world_tokenizer, row["answer"])
    ids = torch.tensor([prompt + answer])
    with torch.no_grad():
        logp = tiny_random_llama(ids).logits.log_softmax(-1)[0]
    # token at position j is predicted by the logits at j-1; the EOS counts as an answer token
    nll = -sum(logp[len(prompt) + i - 1, tok].item() for i, tok in enumerate(answer)) / len(answer)
    got = score_answers(tiny_random_llama, world_tokenizer, fmt, [row["question"]], [row["answer"]]).nll_mean[
        0
    ]
    assert got == pytest.approx(nll, rel=SAME_LOGITS_REL)  # one unpadded row both ways


def test_left_padded_generation_equals_unbatched(tiny_random_llama, world_tokenizer, mini_bench):
    fmt = PromptFormat.for_tokenizer(world_tokenizer)
    questions = [r["question"] for r in mini_bench.retain[:5]] + [mini_bench.general[0]["question"]]
    batched, _ = generate_answers(
        tiny_random_llama, world_tokenizer, fmt, questions, max_new_tokens=8, batch_size=6
    )
    single = [
        generate_answers(tiny_random_llama, world_tokenizer, fmt, [q], max_new_tokens=8)[0][0]
        for q in questions
    ]
    assert batched == single


def test_tofu_protocol_keys_and_ranges(tiny_random_llama, world_tokenizer, mini_bench):
    settings = EvalSettings(max_new_tokens=6, progress=False)
    metrics, details = evaluate(tiny_random_llama, world_tokenizer, mini_bench, settings)
    for key in (
        "forget_prob",
        "forget_rougeL_recall",
        "forget_truth_ratio",
        "forget_token_entropy",
        "retain_prob",
        "retain_truth_ratio",
        "general_prob",
        "general_truth_ratio",
        "model_utility",
        "mia_loss_auc",
        "mia_zlib_auc",
        "mia_min_k_auc",
        "mia_min_k_plus_plus_auc",
    ):
        assert key in metrics and 0.0 <= metrics[key] <= 1.0 and not math.isnan(metrics[key]), key
    assert len(details["forget"]["truth_ratios"]) == len(mini_bench.forget)
    # forget quality of a model against its own truth ratios is a KS test of identical samples
    trs = details["forget"]["truth_ratios"]
    again, _ = evaluate(tiny_random_llama, world_tokenizer, mini_bench, settings, oracle_forget_trs=trs)
    assert again["forget_quality"] == pytest.approx(1.0)


def test_reworded_fact_recall_is_the_share_of_paraphrased_questions_answered(
    tiny_random_llama, world_tokenizer, mini_bench
):
    """forget_para_fact_recall: the greedy answers to the paraphrased questions, counted by hand."""
    settings = EvalSettings(max_new_tokens=6, progress=False)
    metrics, details = evaluate(tiny_random_llama, world_tokenizer, mini_bench, settings)
    rows = mini_bench.forget
    fmt = PromptFormat.for_settings(world_tokenizer, settings)
    gens, _ = generate_answers(
        tiny_random_llama, world_tokenizer, fmt, [r["paraphrased_question"] for r in rows], 6, 8
    )
    assert details["forget"]["paraphrased_generations"] == gens
    by_hand = sum(r["fact_value"].lower() in g.lower() for r, g in zip(rows, gens)) / len(rows)
    assert metrics["forget_para_fact_recall"] == pytest.approx(by_hand)


def test_reworded_fact_recall_reads_the_fact_in_the_answer(
    monkeypatch, tiny_random_llama, world_tokenizer, mini_bench
):
    """A model that states every fact when asked in the new wording scores 1, one that states none 0."""
    import unlearnkit.evaluation.evaluate as E

    rows = mini_bench.forget
    for says, expected in ((lambda r: f"It is {r['fact_value']}.", 1.0), (lambda r: "I do not know.", 0.0)):
        answers = {r["paraphrased_question"]: says(r) for r in rows}

        def fake(model, tok, fmt, questions, *args, answers=answers, **kwargs):
            return [answers.get(q, "") for q in questions], [[1] for _ in questions]

        monkeypatch.setattr(E, "generate_answers", fake)
        metrics, _ = evaluate(tiny_random_llama, world_tokenizer, mini_bench, EvalSettings(progress=False))
        assert metrics["forget_para_fact_recall"] == expected


def test_general_truth_ratio_weighs_the_paraphrase_where_rows_carry_one():
    from unlearnkit.evaluation.evaluate import truth_ratio_key

    sentences = [{"answer": "a", "paraphrased_answer": "b", "perturbed_answer": ["c"]}]
    short = [{"answer": "Paris", "perturbed_answer": ["Rome"]}]  # TOFU's world facts: no paraphrase
    assert truth_ratio_key(sentences, "general") == "paraphrased_answer"
    assert truth_ratio_key(short, "general") == "answer"
    assert truth_ratio_key(sentences, "forget") == "paraphrased_answer"
