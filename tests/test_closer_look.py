"""Closer-look protocol (FE / MU) on hand-worked inputs, with fake and tiny local models."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest

from unlearnkit.evaluation.closer_look import (
    CloserLookModels,
    closer_look_metrics,
    cosine_scores,
    entailment_scores,
    load_optional_models,
)

OFF = CloserLookModels(embedder_id=None, nli_id=None)  # no optional models at all
MISSING = CloserLookModels(
    embedder_id="unlearnkit-tests/no-such-embedder", nli_id="unlearnkit-tests/no-such-nli"
)

# ------------------------------------------------------------------------------------------- fakes

VOCAB = sorted("paris france lyon london england i do not know the cat sat blue sky sea water fire".split())


def bag_of_words(texts):
    """Word-count vector over VOCAB: cosine = overlap / (|a| |b|) on counts."""
    rows = []
    for t in texts:
        c = Counter(t.lower().split())
        rows.append([c[w] for w in VOCAB])
    return np.asarray(rows, dtype=float)


def last_word_nli(premises, hypotheses):
    """'Entails' when the hypothesis' last word occurs in the premise."""
    return [h.split()[-1] in p.split() for p, h in zip(premises, hypotheses)]


# ---------------------------------------------------------------------- hand-worked metrics/details
# Aggregates given by hand (evaluate() would have computed them; only the per-item lists below are
# read for cosine / entailment):
#   forget : rougeL 0.2, prob 0.5, truth_ratio 0.8, token_entropy 0.4
#   retain : rougeL 0.5, prob 0.5, truth_ratio 0.5, token_entropy 0.5
#   general: rougeL 1.0, prob 0.25, truth_ratio 0.5, token_entropy 1.0
METRICS = {
    "forget_rougeL_recall": 0.2,
    "forget_prob": 0.5,
    "forget_truth_ratio": 0.8,
    "forget_token_entropy": 0.4,
    "retain_rougeL_recall": 0.5,
    "retain_prob": 0.5,
    "retain_truth_ratio": 0.5,
    "retain_token_entropy": 0.5,
    "general_rougeL_recall": 1.0,
    "general_prob": 0.25,
    "general_truth_ratio": 0.5,
    "general_token_entropy": 1.0,
    "model_utility": 0.4,
}


def make_details():
    return {
        # forget, premise = generation, hypothesis = answer:
        #  1. "paris france" vs "france lyon": BoW cos = 1/(sqrt2 sqrt2) = 0.5; answer's last word "france"
        #     is in the generation -> entails (the other direction would say "lyon" not in answer -> 0).
        #  2. "london england" vs "i do not know": cos 0, ROUGE 0 -> entailment 0.
        #  forget_cosine = 0.25, forget_entailment = 0.5
        "forget": {
            "answers": ["paris france", "london england"],
            "generations": ["france lyon", "i do not know"],
            "rougeL_recall": [0.5, 0.0],
        },
        # retain, premise = answer, hypothesis = generation:
        #  1. identical "the cat sat": cos 1, "sat" in answer -> 1.
        #  2. answer "blue sky", generation "sky sea": cos 1/2; generation's last word "sea" not in the
        #     answer -> 0 (the forget direction would say "sky" in generation -> 1).
        #  retain_cosine = 0.75, retain_entailment = 0.5
        "retain": {
            "answers": ["the cat sat", "blue sky"],
            "generations": ["the cat sat", "sky sea"],
            "rougeL_recall": [1.0, 0.5],
        },
        #  general: "paris"/"paris" -> cos 1, ent 1; "water"/"fire" -> cos 0, ROUGE 0 -> ent 0.
        #  general_cosine = 0.5, general_entailment = 0.5
        "general": {
            "answers": ["paris", "water"],
            "generations": ["paris", "fire"],
            "rougeL_recall": [1.0, 0.0],
        },
        "holdout": {"answers": ["x"], "generations": ["y"], "rougeL_recall": [0.0]},
    }


# FE without models: harmonic mean of 1-0.2=0.8, 1-0.5=0.5, 0.8, 0.4
#   = 4 / (1.25 + 2 + 1.25 + 2.5) = 4/7
FE_4 = 4 / 7
# FE with entailment: add 1 - 0.5 = 0.5 -> 5 / (7 + 2) = 5/9
FE_5 = 5 / 9
# MU without models: retain 1/x = 2,2,2,2 (sum 8); general 1/x = 1,4,2,1 (sum 8) -> 8/16 = 0.5
MU_8 = 0.5
# MU with models: + retain cos 0.75 (4/3), ent 0.5 (2); general cos 0.5 (2), ent 0.5 (2)
#   -> 12 / (16 + 4/3 + 6) = 12 / (70/3) = 36/70 = 18/35
MU_12 = 18 / 35
# fe_yuan = 1 - mean(forget rouge 0.2, prob 0.5, 1-TR 0.2, cosine 0.25, entailment 0.5) = 1 - 1.65/5
FE_YUAN_5 = 1 - 1.65 / 5
FE_YUAN_3 = 1 - (0.2 + 0.5 + 0.2) / 3


def test_fe_mu_with_fake_models():
    flat, info = closer_look_metrics(METRICS, make_details(), embed_fn=bag_of_words, nli_fn=last_word_nli)
    assert flat["forget_cosine"] == pytest.approx(0.25)
    assert flat["forget_entailment"] == pytest.approx(0.5)
    assert flat["retain_cosine"] == pytest.approx(0.75)
    assert flat["retain_entailment"] == pytest.approx(0.5)  # answer is the premise on retain
    assert flat["general_cosine"] == pytest.approx(0.5)
    assert flat["general_entailment"] == pytest.approx(0.5)
    assert "holdout_cosine" not in flat  # not part of the protocol
    assert flat["fe"] == pytest.approx(FE_5)
    assert flat["mu_closer_look"] == pytest.approx(MU_12)
    assert flat["avg_closer_look"] == pytest.approx((FE_5 + MU_12) / 2)
    assert flat["fe_yuan"] == pytest.approx(FE_YUAN_5)
    assert flat["fe_n_components"] == 5 and flat["mu_n_components"] == 12
    assert info["fe_components"] == [
        "1-forget_rougeL_recall",
        "1-forget_prob",
        "forget_truth_ratio",
        "forget_token_entropy",
        "1-forget_entailment",
    ]
    assert len(info["mu_components"]) == 12 and "retain_cosine" in info["mu_components"]
    assert info["missing"] == {}
    assert info["models"] == {"cosine": "injected", "entailment": "injected"}
    assert info["per_item"]["retain"]["entailment"] == [1.0, 0.0]
    # metrics.json must hold numbers only
    assert all(isinstance(v, int | float) and not isinstance(v, bool) for v in flat.values())


def test_mu_keeps_real_authors_and_world_facts_apart():
    """Real TOFU: MU is the harmonic mean of 18 numbers (retain, real authors, world facts), as the ASU paper.

    Parts: real authors = the ``general`` numbers above (1/x: 1, 4, 2, 1; cos 0.5 -> 2, ent 0.5 -> 2),
    world facts = the retain numbers (1/x: 2, 2, 2, 2; cos 0.75 -> 4/3, ent 0.5 -> 2). The pooled
    ``general`` split is not used. Sum of reciprocals = (8 + 4/3 + 2) [retain] + (8 + 2 + 2) [real
    authors] + (8 + 4/3 + 2) [world facts] = 68/3 + 12 = 104/3 -> MU = 18 / (104/3) = 54/104.
    """
    metrics = dict(METRICS)
    details = make_details()
    for part, like in (("real_authors", "general"), ("world_facts", "retain")):
        for m in ("rougeL_recall", "prob", "truth_ratio", "token_entropy"):
            metrics[f"{part}_{m}"] = METRICS[f"{like}_{m}"]
        details[part] = dict(details[like])
    metrics["general_prob"] = 1e-9  # would drag MU towards 0 if the pooled split were used
    flat, info = closer_look_metrics(metrics, details, embed_fn=bag_of_words, nli_fn=last_word_nli)
    assert flat["mu_n_components"] == 18
    assert flat["mu_closer_look"] == pytest.approx(54 / 104)
    assert flat["real_authors_entailment"] == pytest.approx(0.5)  # answer is the premise there too
    assert not any(name.startswith("general_") for name in info["mu_components"])


def test_inputs_are_not_modified():
    metrics, details = dict(METRICS), make_details()
    closer_look_metrics(metrics, details, embed_fn=bag_of_words, nli_fn=last_word_nli)
    assert metrics == METRICS and details == make_details()


def test_models_unavailable_uses_four_fe_components(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    flat, info = closer_look_metrics(METRICS, make_details(), models=MISSING)
    assert flat["fe"] == pytest.approx(FE_4)
    assert flat["mu_closer_look"] == pytest.approx(MU_8)
    assert flat["avg_closer_look"] == pytest.approx((FE_4 + MU_8) / 2)
    assert flat["fe_yuan"] == pytest.approx(FE_YUAN_3)
    assert flat["fe_n_components"] == 4 and flat["mu_n_components"] == 8
    assert info["fe_components"] == [
        "1-forget_rougeL_recall",
        "1-forget_prob",
        "forget_truth_ratio",
        "forget_token_entropy",
    ]
    assert not any(k.endswith(("_cosine", "_entailment")) for k in flat)
    assert set(info["missing"]) == {"cosine", "entailment"}
    assert "no-such-embedder" in info["missing"]["cosine"]
    assert "no-such-nli" in info["missing"]["entailment"]


def test_disabled_models_are_reported():
    flat, info = closer_look_metrics(METRICS, make_details(), models=OFF)
    assert flat["fe_n_components"] == 4
    assert "disabled" in info["missing"]["cosine"] and "disabled" in info["missing"]["entailment"]


def test_only_cosine_injected():
    # cosine is not an FE component (ASU) but is one of MU and of fe_yuan.
    flat, info = closer_look_metrics(METRICS, make_details(), models=OFF, embed_fn=bag_of_words)
    assert flat["fe"] == pytest.approx(FE_4)
    # MU: 8 base (sum of reciprocals 16) + retain cos 4/3 + general cos 2 -> 10 / (58/3) = 30/58
    assert flat["mu_closer_look"] == pytest.approx(30 / 58)
    assert flat["fe_yuan"] == pytest.approx(1 - (0.2 + 0.5 + 0.2 + 0.25) / 4)
    assert set(info["missing"]) == {"entailment"}
    assert info["models"] == {"cosine": "injected"}


def test_missing_metric_is_left_out_and_named():
    metrics = {k: v for k, v in METRICS.items() if k != "general_truth_ratio"}
    metrics["retain_prob"] = float("nan")
    flat, info = closer_look_metrics(metrics, make_details(), models=OFF)
    # MU over retain rouge/TR/TE (2,2,2) and general rouge/prob/TE (1,4,1): 6 / 12 = 0.5
    assert flat["mu_n_components"] == 6
    assert flat["mu_closer_look"] == pytest.approx(0.5)
    assert "general_truth_ratio" in info["missing"] and "retain_prob" in info["missing"]


def test_zero_component_zeroes_fe():
    metrics = dict(METRICS, forget_token_entropy=0.0)  # gibberish-free but silent model: TE 0
    flat, _ = closer_look_metrics(metrics, make_details(), models=OFF)
    assert flat["fe"] == 0.0


def test_entailment_computes_rouge_when_details_lack_it():
    details = make_details()
    for split in ("forget", "retain", "general"):
        del details[split]["rougeL_recall"]
    flat, _ = closer_look_metrics(METRICS, details, models=OFF, nli_fn=last_word_nli)
    # ROUGE recomputed: "france lyon" vs "paris france" = 0.5 >= 0.1, so the same labels as above.
    assert flat["forget_entailment"] == pytest.approx(0.5)
    assert flat["retain_entailment"] == pytest.approx(0.5)


# ----------------------------------------------------------------------------------- per-item parts


def test_cosine_clipped_at_zero():
    vectors = {"a": [1.0, 0.0], "b": [-1.0, 0.0], "c": [0.0, 1.0], "d": [1.0, 1.0], "z": [0.0, 0.0]}

    def embed(texts):
        return np.asarray([vectors[t] for t in texts])

    got = cosine_scores(embed, ["a", "a", "a", "a", "z"], ["b", "c", "a", "d", "a"])
    assert got == pytest.approx([0.0, 0.0, 1.0, 1 / math.sqrt(2), 0.0])


def test_cosine_length_mismatch():
    with pytest.raises(ValueError, match="same length"):
        cosine_scores(bag_of_words, ["a"], ["a", "b"])


def test_entailment_forced_to_zero_below_rouge_floor():
    asked = []

    def nli(premises, hypotheses):
        asked.extend(zip(premises, hypotheses))
        return [True] * len(premises)

    gens = ["paris france", "paris france", "paris france"]
    answers = ["paris france"] * 3
    got = entailment_scores(nli, gens, answers, [1.0, 0.05, 0.1])
    assert got == [1.0, 0.0, 1.0]  # 0.05 < 0.1 -> 0 although the NLI model would say yes
    assert len(asked) == 2  # the low-ROUGE item is never sent to the model


def test_entailment_direction():
    # answer "blue sky", generation "sky sea"
    assert entailment_scores(last_word_nli, ["sky sea"], ["blue sky"], [0.5], premise="generation") == [1.0]
    assert entailment_scores(last_word_nli, ["sky sea"], ["blue sky"], [0.5], premise="answer") == [0.0]
    with pytest.raises(ValueError, match="premise"):
        entailment_scores(last_word_nli, ["a"], ["a"], [1.0], premise="both")


# ------------------------------------------------------------------------------------------ loading


def test_load_optional_models_offline_never_raises(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    embed, nli, reasons = load_optional_models(MISSING)
    assert embed is None and nli is None
    assert set(reasons) == {"cosine", "entailment"} and all(reasons.values())
    # the defaults (real hub ids) either load from a local cache or come back with a reason
    embed, nli, reasons = load_optional_models(CloserLookModels())
    assert (embed is None) == ("cosine" in reasons)
    assert (nli is None) == ("entailment" in reasons)


def _tiny_bert(path, labels=None):
    from transformers import BertConfig, BertForSequenceClassification, BertModel, BertTokenizer

    words = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *VOCAB]
    cfg = BertConfig(
        vocab_size=len(words),
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
    )
    if labels is None:
        model = BertModel(cfg)
    else:
        cfg.id2label = dict(enumerate(labels))
        cfg.label2id = {v: k for k, v in cfg.id2label.items()}
        model = BertForSequenceClassification(cfg)
    model.save_pretrained(path)
    BertTokenizer(vocab={w: i for i, w in enumerate(words)}).save_pretrained(path)
    return str(path)


def test_load_tiny_local_models(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    emb = _tiny_bert(tmp_path / "emb")
    nli_dir = _tiny_bert(tmp_path / "nli", ["entailment", "neutral", "contradiction"])
    embed, nli, reasons = load_optional_models(
        CloserLookModels(embedder_id=emb, nli_id=nli_dir, device="cpu")
    )
    assert reasons == {}
    vecs = embed(["the cat sat", "blue sky sea"])
    assert vecs.shape == (2, 16)
    assert cosine_scores(embed, ["the cat sat"], ["the cat sat"]) == pytest.approx([1.0])
    labels = nli(["the cat sat", "blue sky"], ["the cat", "sea"])
    assert len(labels) == 2 and all(isinstance(x, bool) for x in labels)
    flat, info = closer_look_metrics(
        METRICS, make_details(), models=CloserLookModels(embedder_id=emb, nli_id=nli_dir, device="cpu")
    )
    assert flat["fe_n_components"] == 5 and flat["mu_n_components"] == 12
    assert info["models"] == {"cosine": emb, "entailment": nli_dir}


def test_nli_without_entailment_label_is_unavailable(tmp_path):
    bad = _tiny_bert(tmp_path / "bad", ["positive", "negative"])
    embed, nli, reasons = load_optional_models(CloserLookModels(embedder_id=None, nli_id=bad, device="cpu"))
    assert nli is None and "entailment" in reasons["entailment"]
