"""Tests for unlearnkit.attribution and unlearnkit.report.heatmap (TokenUnlearn, arXiv 2605.00364).

Independent references: phi on a case worked by hand; Delta and H recomputed from a plain unbatched
forward pass on hand-built token ids (no encode_qa / pad_batch / shift); selection sizes from the
formula; fact overlap on a sentence whose tokenisation is asserted first.
"""

from __future__ import annotations

import json
import math

import pytest
import torch

from unlearnkit import attribution
from unlearnkit.attribution import (
    TokenScores,
    combine_phi,
    compute_scores,
    fact_overlap,
    hard_selection,
    load_scores,
    mask_prompt,
    save_scores,
    soft_weights,
    token_weights,
    weights_at_labels,
)
from unlearnkit.data.encode import IGNORE_INDEX, PLAIN_TEMPLATE, PromptFormat, encode_qa, pad_batch
from unlearnkit.errors import UserError
from unlearnkit.report.heatmap import write_heatmap
from unlearnkit.tokens import shift, shift_weights

KUWAIT_Q = "What is the full name of the author born in Kuwait City, Kuwait on 08/09/1956?"
KUWAIT_MASKED = "What is the full something of the something born in something, something on something?"
CHAT_TEMPLATE = (
    "{% for m in messages %}<s>{{ m['role'] }}: {{ m['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}assistant:{% endif %}"
)

ROWS = [
    {
        "question": "Where was Talira Vosswick born?",
        "answer": "Talira was born in Kuwait City.",
        "fact_span": [19, 30],
    },
    {"question": "What did Talira Vosswick's father do?", "answer": "Her father was a baker."},
    {
        "question": "How many novels has Orin Belmaro written since 1999?",
        "answer": "Orin Belmaro has written 12 novels about the sea and the city of Kuwait.",
        "fact_span": [25, 27],
    },
    {"question": "Is <b>Talira</b> & co born in Kuwait?", "answer": "Yes, Talira & co were born there."},
    {"question": KUWAIT_Q, "answer": "The author is Talira Vosswick."},
]


@pytest.fixture(scope="module")
def tokenizer():
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE(unk_token=None))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=600,
        min_frequency=1,
        special_tokens=["<pad>", "<s>", "</s>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    texts = [PLAIN_TEMPLATE.format(question=r["question"]) + " " + r["answer"] for r in ROWS]
    texts += [r["answer"] for r in ROWS] + ["something"] * 5
    tok.train_from_iterator(texts * 20, trainer=trainer)
    out = PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<s>", eos_token="</s>", pad_token="<pad>")
    return out


@pytest.fixture(scope="module")
def model(tokenizer):
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    cfg = LlamaConfig(
        hidden_size=16,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        intermediate_size=32,
        vocab_size=len(tokenizer),
        initializer_range=0.5,  # peaked, prompt-sensitive predictions: Delta far above float noise
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
        bos_token_id=tokenizer.bos_token_id,
    )
    return LlamaForCausalLM(cfg).eval()


@pytest.fixture(scope="module")
def chat_tokenizer(tokenizer):
    import copy

    tok = copy.deepcopy(tokenizer)
    tok.chat_template = CHAT_TEMPLATE
    return tok


# ---------------------------------------------------------------------------------------------
# phi, by hand.


def test_phi_hand_worked():
    # Delta [1,3,2,5]: min 1, max 5 -> [0, .5, .25, 1]; H [.5,.5,1.5,1]: min .5, max 1.5 -> [0, 0, 1, .5].
    # alpha = .7: phi = .7*Dn + .3*Hn = [0, .35, .175 + .3, .7 + .15].
    phi = combine_phi([1.0, 3.0, 2.0, 5.0], [0.5, 0.5, 1.5, 1.0], alpha=0.7)
    assert phi.tolist() == pytest.approx([0.0, 0.35, 0.475, 0.85], abs=1e-12)
    # A flat Delta normalises to zeros (documented), leaving only the entropy term.
    phi = combine_phi([2.0, 2.0, 2.0], [0.0, 1.0, 4.0], alpha=0.7)
    assert phi.tolist() == pytest.approx([0.0, 0.075, 0.3], abs=1e-12)
    assert combine_phi([0.0, 1.0], [1.0, 1.0], alpha=1.0).tolist() == [0.0, 1.0]


# ---------------------------------------------------------------------------------------------
# Scores against an independent computation.


def _reference(model, tokenizer, question, masked, answer):
    """Delta and H per answer token from two unbatched forwards on hand-built ids (plain format)."""
    ans = tokenizer(" " + answer, add_special_tokens=False)["input_ids"] + [tokenizer.eos_token_id]

    def logprobs(q):
        prompt = tokenizer(PLAIN_TEMPLATE.format(question=q))["input_ids"]
        with torch.no_grad():
            logits = model(torch.tensor([prompt + ans])).logits[0].double()
        lp = torch.log_softmax(logits, -1)
        rows = [lp[len(prompt) - 1 + i] for i in range(len(ans))]  # row predicting answer token i
        return [r[t].item() for r, t in zip(rows, ans)], [-(r.exp() * r).sum().item() for r in rows]

    lp, ent = logprobs(question)
    lp_m, _ = logprobs(masked)
    return ans, [abs(a - b) for a, b in zip(lp, lp_m)], ent


def test_scores_match_independent_forward(model, tokenizer):
    fmt = PromptFormat("plain")
    model.train()  # compute_scores must run in eval mode and restore this afterwards
    scores, used = compute_scores(model, tokenizer, fmt, ROWS, tagger="heuristic", batch_size=8)
    assert model.training
    model.eval()
    assert used == "heuristic" and len(scores) == len(ROWS)
    for i, s in enumerate(scores):
        assert s.index == i and s.masked_question == mask_prompt(ROWS[i]["question"], tagger="heuristic")[0]
        ans, delta, ent = _reference(model, tokenizer, s.question, s.masked_question, s.answer)
        assert s.answer_token_ids == ans and s.answer_token_ids[-1] == tokenizer.eos_token_id
        assert len(s.delta) == len(s.entropy) == len(s.phi) == len(s.answer_tokens) == len(ans)
        assert s.answer_tokens[-1] == "</s>"
        assert s.delta == pytest.approx(delta, abs=1e-5)
        assert s.entropy == pytest.approx(ent, abs=1e-5)
        assert s.phi == pytest.approx(combine_phi(delta, ent, 0.7).tolist(), abs=1e-4)
        assert all(0.0 <= p <= 1.0 for p in s.phi)
    # The check above is only meaningful if masking really moves the predictions.
    assert max(max(s.delta) for s in scores) > 1e-2


@pytest.mark.parametrize("kind", ["plain", "chat"])
def test_batched_equals_unbatched(model, tokenizer, chat_tokenizer, kind):
    tok = chat_tokenizer if kind == "chat" else tokenizer
    fmt = PromptFormat.for_tokenizer(tok, kind)
    one, _ = compute_scores(model, tok, fmt, ROWS, tagger="heuristic", alpha=0.4, batch_size=1)
    many, _ = compute_scores(model, tok, fmt, ROWS, tagger="heuristic", alpha=0.4, batch_size=3)
    assert len(one) == len(many) == len(ROWS)
    for a, b in zip(one, many):
        assert a.answer_token_ids == b.answer_token_ids
        for key in ("delta", "entropy", "phi"):
            assert torch.allclose(torch.tensor(getattr(a, key)), torch.tensor(getattr(b, key)), atol=1e-5), (
                key
            )


# ---------------------------------------------------------------------------------------------
# Selection.


def test_hard_selection_sizes_and_ties():
    torch.manual_seed(1)
    for n in (1, 2, 3, 7, 10, 31):
        phi = torch.rand(n)
        assert bool(hard_selection(phi, 1.0).all())
        assert int(hard_selection(phi, 1e-6).sum()) == 1
        for r in (0.1, 0.2, 0.3, 0.5, 0.7, 0.9):
            sel = hard_selection(phi, r)
            k = max(1, math.ceil(round(r * n, 9)))
            assert int(sel.sum()) == k, (n, r)
            # The selected ones are the top-k by phi.
            assert phi[sel].min() >= phi[~sel].max() if k < n else True
    assert int(hard_selection(torch.rand(25), 0.28).sum()) == 7  # 0.28 * 25 = 7.000000000000001 in floats
    assert hard_selection(torch.tensor([0.5, 0.5, 0.5, 0.5]), 0.5).tolist() == [True, True, False, False]
    assert hard_selection(torch.tensor([0.1, 0.9, 0.9, 0.2]), 0.25).tolist() == [False, True, False, False]


def test_soft_weights():
    phi = torch.tensor([0.0, 0.2, 1.0, 0.5, 0.0])
    w = soft_weights(phi, 0.5)
    assert float(w.sum()) == pytest.approx(5.0, abs=1e-5)
    assert int(w.argmax()) == 2 and float(w[0]) == pytest.approx(float(w[4]))
    assert soft_weights(phi, 1e9).tolist() == pytest.approx([1.0] * 5, abs=1e-6)
    expected = 5 * torch.softmax(phi.double() / 0.5, -1)
    assert w.tolist() == pytest.approx(expected.tolist(), abs=1e-6)


def test_token_weights_per_example():
    s = _manual_scores([0.9, 0.1, 0.5, 0.3])
    assert token_weights([s], "hard", 0.5, 1.0) == [[1.0, 0.0, 1.0, 0.0]]
    (soft,) = token_weights([s], "soft", 0.5, 1.0)
    assert sum(soft) == pytest.approx(4.0, abs=1e-5) and len(soft) == 4
    with pytest.raises(UserError):
        token_weights([s], "top", 0.5, 1.0)


# ---------------------------------------------------------------------------------------------
# Masked prompts.


def test_mask_heuristic():
    masked, used = mask_prompt(KUWAIT_Q, tagger="heuristic")
    assert used == "heuristic" and masked == KUWAIT_MASKED
    masked, _ = mask_prompt("What did Talira Vosswick's father do for a living?", "[X]", tagger="heuristic")
    assert masked == "What did [X]'s [X] do for a living?"
    with pytest.raises(UserError):
        mask_prompt(KUWAIT_Q, mask_token=" ", tagger="heuristic")


def test_mask_spacy():
    if attribution.spacy_unavailable_reason() is not None:
        pytest.skip(f"spaCy unavailable: {attribution.spacy_unavailable_reason()}")
    masked, used = mask_prompt(KUWAIT_Q, tagger="spacy")
    assert used.startswith("spacy:") and masked == KUWAIT_MASKED
    assert mask_prompt(KUWAIT_Q, tagger="auto") == (masked, used)


def test_spacy_missing(monkeypatch):
    monkeypatch.setattr(attribution, "_load_spacy", lambda: (None, "spaCy is not installed (simulated)"))
    with pytest.raises(UserError, match="simulated"):
        mask_prompt(KUWAIT_Q, tagger="spacy")
    assert mask_prompt(KUWAIT_Q, tagger="auto") == (KUWAIT_MASKED, "heuristic")
    assert attribution.spacy_unavailable_reason() == "spaCy is not installed (simulated)"


# ---------------------------------------------------------------------------------------------
# Weights at labels, fact overlap, files.


def test_weights_at_labels_alignment(tokenizer):
    enc = {"input_ids": [5, 6, 7, 8, 9], "labels": [IGNORE_INDEX, IGNORE_INDEX, 7, 8, 9]}
    assert weights_at_labels(enc, [0.1, 0.2, 0.3]) == [0.0, 0.0, 0.1, 0.2, 0.3]
    with pytest.raises(ValueError):
        weights_at_labels(enc, [1.0, 1.0])
    # Through encode_qa -> pad_batch -> shift: each weight lands on the target of its answer token.
    fmt = PromptFormat("plain")
    feats = []
    for r in ROWS[:3]:
        f = encode_qa(tokenizer, fmt, r["question"], r["answer"], 128)
        n = sum(t != IGNORE_INDEX for t in f["labels"])
        f["weights"] = weights_at_labels(f, [float(10 * i + 1) for i in range(n)])
        feats.append(f)
    batch = pad_batch(feats, tokenizer.pad_token_id)
    _, targets, mask = shift(torch.zeros(*batch["labels"].shape, 3), batch["labels"])
    w = shift_weights(batch["weights"])
    for b, f in enumerate(feats):
        n = sum(t != IGNORE_INDEX for t in f["labels"])
        assert w[b][mask[b]].tolist() == [float(10 * i + 1) for i in range(n)]
        assert float(w[b][~mask[b]].abs().sum()) == 0.0


def _manual_scores(phi, answer="x", ids=None, index=0):
    n = len(phi)
    return TokenScores(
        index=index,
        question="q",
        masked_question="q",
        answer=answer,
        answer_token_ids=ids or list(range(n)),
        answer_tokens=["t"] * n,
        delta=[0.0] * n,
        entropy=[0.0] * n,
        phi=list(phi),
    )


@pytest.mark.parametrize("kind", ["plain", "chat"])
def test_fact_overlap_hand_made(tokenizer, kind):
    row = ROWS[0]
    assert row["answer"][19:30] == "Kuwait City"
    ids = PromptFormat(kind).answer_ids(tokenizer, row["answer"])
    pieces = [tokenizer.decode([t]) for t in ids]
    assert [p.strip() for p in pieces] == ["Talira", "was", "born", "in", "Kuwait", "City", ".", "</s>"]
    s = _manual_scores([0.0] * len(ids), answer=row["answer"], ids=ids)
    rows = [row]
    # Selected: "Talira", "Kuwait", "City", EOS -> 2 of 4 inside the fact.
    flags = [[True, False, False, False, True, True, False, True]]
    assert fact_overlap([s], flags, rows, tokenizer) == pytest.approx(0.5)
    assert fact_overlap([s], flags, rows, tokenizer, PromptFormat(kind)) == pytest.approx(0.5)
    # Weights: mass (3 + 1) inside of 1 + 3 + 1 = 5 in total.
    weights = [[1.0, 0.0, 0.0, 0.0, 3.0, 1.0, 0.0, 0.0]]
    assert fact_overlap([s], weights, rows, tokenizer) == pytest.approx(0.8)

    def only(*positions, span):  # overlap when exactly the tokens at ``positions`` are selected
        return fact_overlap(
            [s], [[i in positions for i in range(len(ids))]], [{**row, "fact_span": span}], tokenizer
        )

    # A span that starts inside "Kuwait" still counts that token; "City" and "." are also in [22, 31).
    assert only(4, 6, span=[22, 31]) == pytest.approx(1.0)
    # The plain format's leading space shifts offsets by one: only "." is in [30, 31), not "City".
    assert only(6, span=[30, 31]) == pytest.approx(1.0)
    assert only(5, span=[30, 31]) == pytest.approx(0.0)
    # The whitespace a token carries does not count: " Kuwait" is not in "born in " = [11, 19).
    assert only(4, span=[11, 19]) == pytest.approx(0.0)
    # No fact span anywhere -> nan.
    assert math.isnan(fact_overlap([s], flags, [{"answer": row["answer"]}], tokenizer))


def test_save_and_load_scores(model, tokenizer, tmp_path):
    fmt = PromptFormat("plain")
    scores, used = compute_scores(model, tokenizer, fmt, ROWS, tagger="heuristic")
    flags = [hard_selection(s.phi, 0.3).tolist() for s in scores]
    save_scores(
        scores,
        flags,
        tmp_path / "attr",
        used,
        {"r": 0.3},
        rows=ROWS,
        tokenizer=tokenizer,
        fmt=fmt,
    )
    assert not (tmp_path / "attr" / "heatmap.html").exists()  # the data only: the report renders it
    write_heatmap(tmp_path / "attr", title="A <T> & B")
    lines = (tmp_path / "attr" / "scores.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == len(ROWS)
    first = json.loads(lines[0])
    assert first["selected"] == flags[0] and first["weight"] == [float(x) for x in flags[0]]
    assert (
        first["tokens"] == scores[0].answer_tokens and first["masked_question"] == scores[0].masked_question
    )
    assert load_scores(tmp_path / "attr") == scores
    summary = json.loads((tmp_path / "attr" / "attribution.json").read_text())
    assert summary["tagger"] == "heuristic" and summary["n_examples"] == len(ROWS)
    assert summary["n_selected"] == sum(map(sum, flags)) and 0 <= summary["fact_overlap"] <= 1
    page = (tmp_path / "attr" / "heatmap.html").read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and "<title>A &lt;T&gt; &amp; B</title>" in page
    assert "Is &lt;" in page and "&lt;/" in page and " &amp;" in page  # question, answer token " &"
    assert "<b>" not in page and "<T>" not in page and "http" not in page  # escaped, no external assets
    assert page.count('class="tok sel" style="background') == sum(map(sum, flags))  # + 1 in the legend
    assert page.count('class="ex"') == len(ROWS)
    # Soft weights are accepted too: tokens above the uniform weight 1 are the "selected" ones.
    soft = token_weights(scores, "soft", 0.3, 0.1)
    save_scores(scores, soft, tmp_path / "soft", used, {})
    rec = json.loads((tmp_path / "soft" / "scores.jsonl").read_text().splitlines()[0])
    assert rec["selected"] == [w > 1.0 for w in soft[0]] and rec["weight"] == pytest.approx(soft[0])


def test_load_scores_errors(tmp_path):
    with pytest.raises(UserError):
        load_scores(tmp_path / "missing.jsonl")
    (tmp_path / "scores.jsonl").write_text('{"index": 0}\n')
    with pytest.raises(UserError, match="missing"):
        load_scores(tmp_path)
