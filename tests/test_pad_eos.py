"""Padding that equals EOS (Llama-3 style) never hides a real EOS / end-of-turn token.

Llama-3 models pad with ``<|eot_id|>``, the token that also ends every chat turn and every answer.
Code that builds masks by comparing ids with the pad id (open-unlearning #128) then drops the
answer's final end-of-turn token from the labels and the prompt's end-of-turn tokens from the
attention. unlearnkit builds masks from lengths (``unlearnkit.data.encode``). Here a tokenizer whose
pad id is its EOS id and whose chat template ends every turn with that token goes through training
batches, the reference cache, TokenUnlearn's attribution and the evaluation metrics; each must keep
the real EOS tokens and ignore only the padding.
"""

from __future__ import annotations

import copy
import math

import pytest
import torch
from tolerances import REORDERED_FORWARD_LOGP_ATOL, REORDERED_FORWARD_RATIO_REL

from unlearnkit.data.encode import IGNORE_INDEX, PromptFormat, encode_qa, pad_id_of

# Every turn ends with EOS, as Llama-3's templates end every turn with <|eot_id|>.
TEMPLATE = (
    "{% for m in messages %}{{ m['role'] }}: {{ m['content'] }}{{ eos_token }}{% endfor %}"
    "{% if add_generation_prompt %}assistant:{% endif %}"
)


@pytest.fixture(scope="module")
def eos_tokenizer(world_tokenizer):
    tok = copy.deepcopy(world_tokenizer)
    tok.pad_token = tok.eos_token
    tok.chat_template = TEMPLATE
    assert tok.pad_token_id == tok.eos_token_id
    return tok


@pytest.fixture
def eos_model(eos_tokenizer):
    from tiny_models import random_llama

    model = random_llama(eos_tokenizer)
    with torch.no_grad():  # peaked predictions, so log p(EOS) is a number of its own, not ~ -log V
        model.lm_head.weight.mul_(10)
    return model


def _fmt(tok) -> PromptFormat:
    fmt = PromptFormat.for_tokenizer(tok)
    assert fmt.kind == "chat" and fmt.system_prompt  # system + user turns: two EOS tokens in the prompt
    return fmt


def _check_row(ids, mask, labels, eos, prompt_len):
    """One padded row: real EOS tokens attended (prompt) / labelled (answer end); padding neither."""
    n = int(mask.sum())
    assert mask[:n].all() and not mask[n:].any()
    assert int(ids[n - 1]) == eos and int(labels[n - 1]) == eos  # the answer's end-of-turn is a target
    prompt_eos = [t for t in range(prompt_len) if int(ids[t]) == eos]
    assert len(prompt_eos) == 2 and all(mask[t] for t in prompt_eos)  # end of system and user turns
    assert (ids[n:] == eos).all() and (labels[n:] == IGNORE_INDEX).all()  # padding: EOS ids, no targets
    answer = [int(x) for x in labels[:n] if int(x) != IGNORE_INDEX]
    return answer


def _eos_logp_by_hand(model, example, eos) -> float:
    """log p(final EOS | everything before it), from the example alone (no padding)."""
    ids = torch.tensor([example["input_ids"]])
    with torch.no_grad():
        logits = model(input_ids=ids).logits[0, -2].float()
    return float(torch.log_softmax(logits, -1)[eos])


def test_training_batches_keep_every_real_eos(eos_tokenizer, eos_model, mini_bench, tmp_path, monkeypatch):
    from unlearnkit.pipelines.unlearn import unlearn
    from unlearnkit.train.trainer import UnlearnTrainer

    seen = []
    stock = UnlearnTrainer.compute_loss

    def recording(self, model, inputs, *args, **kwargs):
        seen.append(
            {part: {k: v.clone() for k, v in inputs[part].items() if torch.is_tensor(v)} for part in inputs}
        )
        return stock(self, model, inputs, *args, **kwargs)

    monkeypatch.setattr(UnlearnTrainer, "compute_loss", recording)
    forget, retain = mini_bench.forget[:4], mini_bench.retain[:4]
    unlearn(
        eos_model,
        eos_tokenizer,
        forget,
        retain,
        "gd",
        work_dir=tmp_path / "w",
        quiet=True,
        batch_size=4,
        max_steps=1,
    )
    assert len(seen) == 1
    fmt = _fmt(eos_tokenizer)
    eos = eos_tokenizer.eos_token_id
    for part, rows in (("forget", forget), ("retain", retain)):
        batch = seen[0][part]
        lengths = batch["attention_mask"].sum(-1)
        assert lengths.min() < lengths.max()  # rows of different length: the batch is padded (with EOS)
        for b, index in enumerate(batch["index"].tolist()):
            row = rows[index]
            enc = encode_qa(eos_tokenizer, fmt, row["question"], row["answer"], 512)
            answer = _check_row(
                batch["input_ids"][b], batch["attention_mask"][b], batch["labels"][b], eos, enc["prompt_len"]
            )
            assert answer == fmt.answer_ids(eos_tokenizer, row["answer"])  # answer tokens + EOS, all targets


def test_reference_cache_holds_the_eos_prediction(eos_tokenizer, eos_model, mini_bench):
    from unlearnkit.train.cache import Need, ReferenceCache
    from unlearnkit.train.reference import original_reference
    from unlearnkit.train.trainer import PaddingCollator, PairedDataset, encode_rows

    fmt = _fmt(eos_tokenizer)
    eos = eos_tokenizer.eos_token_id
    forget = encode_rows(mini_bench.forget[:6], eos_tokenizer, fmt, 512)
    retain = encode_rows(mini_bench.retain[:6], eos_tokenizer, fmt, 512)
    data = PairedDataset(forget, retain, seed=0)
    collate = PaddingCollator(pad_id_of(eos_tokenizer))
    cache = ReferenceCache(0).build(
        original_reference(eos_model),
        {Need("logps", "forget")},
        data.parts(),
        {"forget": range(len(forget))},
        collate,
        batch_size=3,
    )
    batch = collate([data[i] for i in range(len(forget))])["forget"]
    cached = cache.token_logps(batch)
    for b, example in enumerate(forget):
        n = int(batch["attention_mask"][b].sum())
        # aligned position n - 2 predicts the token at n - 1: the answer's final EOS
        assert int(batch["labels"][b, n - 1]) == eos
        got, want = float(cached[b, n - 2]), _eos_logp_by_hand(eos_model, example, eos)
        assert got != 0.0 and abs(got - want) <= REORDERED_FORWARD_LOGP_ATOL, (b, got, want)
        assert (cached[b, n - 1 :] == 0).all()  # padding (EOS ids) is not cached


def test_attribution_scores_the_final_eos(eos_tokenizer, eos_model, mini_bench):
    from unlearnkit.attribution import compute_scores, token_weights, weights_at_labels

    fmt = _fmt(eos_tokenizer)
    eos = eos_tokenizer.eos_token_id
    rows = mini_bench.forget[:5]
    scores, _ = compute_scores(eos_model, eos_tokenizer, fmt, rows, tagger="heuristic", batch_size=5)
    weights = token_weights(scores, "soft", 0.5, 1.0)
    for s, row, w in zip(scores, rows, weights):
        assert (
            s.answer_token_ids == fmt.answer_ids(eos_tokenizer, row["answer"])
            and s.answer_token_ids[-1] == eos
        )
        assert len(s.phi) == len(s.delta) == len(s.entropy) == len(s.answer_token_ids)
        assert all(math.isfinite(x) for x in s.entropy) and s.entropy[-1] > 0  # H at the EOS position
        enc = encode_qa(eos_tokenizer, fmt, row["question"], row["answer"], 512)
        at_labels = weights_at_labels(enc, w)
        assert at_labels[-1] == w[-1] > 0  # the EOS carries its own soft weight in training


def test_evaluation_metrics_include_the_eos(eos_tokenizer, eos_model, mini_bench):
    from unlearnkit.evaluation.evaluate import EvalSettings, evaluate
    from unlearnkit.metrics.passes import score_answers

    fmt = _fmt(eos_tokenizer)
    eos = eos_tokenizer.eos_token_id
    rows = mini_bench.forget
    questions, answers = [r["question"] for r in rows], [r["answer"] for r in rows]
    scored = score_answers(eos_model, eos_tokenizer, fmt, questions, answers, batch_size=5, per_token=True)
    hand_nll = []
    for i, (q, a) in enumerate(zip(questions, answers)):
        enc = encode_qa(eos_tokenizer, fmt, q, a, 512)
        n_answer = len(fmt.answer_ids(eos_tokenizer, a))
        assert len(scored.token_logps[i]) == n_answer  # EOS included
        # the last per-token value is log p(EOS), equal to the unpadded row's own
        assert (
            abs(scored.token_logps[i][-1] - _eos_logp_by_hand(eos_model, enc, eos))
            <= REORDERED_FORWARD_LOGP_ATOL
        )
        ids = torch.tensor([enc["input_ids"]])
        with torch.no_grad():
            logp = torch.log_softmax(eos_model(input_ids=ids).logits[0, :-1].float(), -1)
        targets = torch.tensor(enc["input_ids"][1:])
        per_token = logp.gather(-1, targets[:, None])[:, 0][enc["prompt_len"] - 1 :]
        assert len(per_token) == n_answer
        hand_nll.append(float(-per_token.mean()))
        assert abs(scored.nll_mean[i] - hand_nll[i]) <= REORDERED_FORWARD_LOGP_ATOL
    settings = EvalSettings(max_new_tokens=4, max_items=len(rows), batch_size=5, progress=False)
    metrics, _ = evaluate(eos_model, eos_tokenizer, mini_bench, settings)
    want = sum(math.exp(-x) for x in hand_nll) / len(hand_nll)  # TOFU's probability, EOS included
    assert metrics["forget_prob"] == pytest.approx(want, rel=REORDERED_FORWARD_RATIO_REL)
