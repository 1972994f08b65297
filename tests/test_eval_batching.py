"""The batched evaluation passes (issue 58, item 6) against simple one-row-at-a-time computations.

Scoring: prompts batched by length and run once, every answer of a batch of questions scored together
from a copy of the prompts' cache. Generation: rows leave the batch at their EOS, the batch stops when
none is left. Both must give what one unpadded row at a time gives (scoring: to the reordered-forward
tolerance; generation: the same tokens as ``model.generate``).
"""

from __future__ import annotations

import functools
import math

import pytest
import torch
from tolerances import REORDERED_FORWARD_LOGP_ATOL, REORDERED_FORWARD_RATIO_REL

from unlearnkit.data.encode import PromptFormat
from unlearnkit.evaluation.evaluate import EvalSettings, evaluate_split
from unlearnkit.metrics import passes
from unlearnkit.metrics.passes import encode_answer_sets, greedy_token_ids, score_answer_sets


def _one_row(model, prompt: list[int], answer: list[int]) -> dict:
    """Per-token log p, mean / std of log p and argmax hits of ``answer`` after ``prompt``: one unpadded
    row, its full sequence in one forward, in float64 after the logits."""
    ids = torch.tensor([prompt + answer])
    with torch.no_grad():
        logits = model(input_ids=ids).logits[0].double()
    logp = torch.log_softmax(logits, -1)
    at = range(len(prompt) - 1, len(prompt) + len(answer) - 1)  # position j predicts token j + 1
    token_logps = [float(logp[t, answer[k]]) for k, t in enumerate(at)]
    p = logp.exp()
    mu = [(p[t] * logp[t]).sum() for t in at]
    sigma = [math.sqrt(float((p[t] * (logp[t] - m) ** 2).sum())) for t, m in zip(at, mu)]
    match = [int(logits[t].argmax()) == answer[k] for k, t in enumerate(at)]
    return {
        "nll_mean": -sum(token_logps) / len(answer),
        "token_logps": token_logps,
        "mu": [float(m) for m in mu],
        "sigma": sigma,
        "match": match,
    }


def _sets(rows):
    return [[r["answer"], r["paraphrased_answer"], *r["perturbed_answer"]] for r in rows]


@pytest.fixture
def rows(mini_bench):
    # questions and answers of different lengths, so batches pad both prompts and answers
    return mini_bench.forget[:5] + mini_bench.retain[:4]


@pytest.mark.parametrize("batch_size", [1, 3, 32])
def test_answer_sets_equal_one_row_at_a_time(tiny_random_llama, world_tokenizer, rows, batch_size):
    fmt = PromptFormat.for_tokenizer(world_tokenizer)
    prompts, answers = encode_answer_sets(world_tokenizer, fmt, [r["question"] for r in rows], _sets(rows))
    per_token = [[k % 2 == 0 for k in range(len(a))] for a in answers]
    got = score_answer_sets(tiny_random_llama, world_tokenizer, prompts, answers, per_token, batch_size)
    assert len({len(p) for p in prompts}) > 1 and len({len(a) for s in answers for a in s}) > 1
    for q, (prompt, group) in enumerate(zip(prompts, answers)):
        for k, answer in enumerate(group):
            want, have = _one_row(tiny_random_llama, prompt, answer), got[q][k]
            assert have.nll_mean == pytest.approx(want["nll_mean"], abs=REORDERED_FORWARD_LOGP_ATOL)
            if not per_token[q][k]:
                assert have.token_logps is None
                continue
            assert len(have.token_logps) == len(answer)  # EOS included
            for name, values in (("token_logps", have.token_logps), ("mu", have.mu), ("sigma", have.sigma)):
                assert values == pytest.approx(want[name], abs=REORDERED_FORWARD_LOGP_ATOL), name
            assert have.argmax_match == want["match"]


def test_unshared_path_gives_the_same_scores(monkeypatch, tiny_random_llama, world_tokenizer, rows):
    """Models whose cache cannot be copied row by row score prompt + answer rows instead: same numbers."""
    fmt = PromptFormat.for_tokenizer(world_tokenizer)
    prompts, answers = encode_answer_sets(world_tokenizer, fmt, [r["question"] for r in rows], _sets(rows))
    flags = [[True] * len(a) for a in answers]
    shared = score_answer_sets(tiny_random_llama, world_tokenizer, prompts, answers, flags, 4)
    monkeypatch.setattr(passes, "_shareable", lambda cache: False)
    unshared = score_answer_sets(tiny_random_llama, world_tokenizer, prompts, answers, flags, 4)
    for a, b in zip((x for s in shared for x in s), (x for s in unshared for x in s)):
        assert a.nll_mean == pytest.approx(b.nll_mean, abs=REORDERED_FORWARD_LOGP_ATOL)
        assert a.token_logps == pytest.approx(b.token_logps, abs=REORDERED_FORWARD_LOGP_ATOL)
        assert a.argmax_match == b.argmax_match


def test_each_prompt_runs_once_and_repeated_answers_are_scored_once(tiny_random_llama, world_tokenizer, rows):
    fmt = PromptFormat.for_tokenizer(world_tokenizer)
    sets = [[r["answer"], r["answer"], r["paraphrased_answer"]] for r in rows]
    prompts, answers = encode_answer_sets(world_tokenizer, fmt, [r["question"] for r in rows], sets)
    seen: list[tuple[int, int, int]] = []  # rows, width, real tokens fed
    forward = tiny_random_llama.forward

    def counting(*args, **kwargs):
        ids, mask = kwargs["input_ids"], kwargs.get("attention_mask")
        fed = int(mask[:, -ids.shape[1] :].sum()) if mask is not None else ids.numel()
        seen.append((*ids.shape, fed))
        return forward(*args, **kwargs)

    tiny_random_llama.forward = counting
    got = score_answer_sets(tiny_random_llama, world_tokenizer, prompts, answers, batch_size=len(rows))
    prefill, *continued = seen
    assert prefill[0] == len(rows)  # every prompt once, in one batch
    # each distinct answer's tokens fed once (its last token, the EOS, never): the repeated answer adds
    # nothing, and no prompt token is fed again
    distinct = sum(len(s[0]) - 1 + len(s[2]) - 1 for s in answers)
    assert sum(fed for _, _, fed in continued) == distinct
    assert max(w for _, w, _ in continued) < max(len(a) for s in answers for a in s)
    assert all(s[0].nll_mean == s[1].nll_mean for s in got)


def test_evaluate_split_numbers_equal_one_row_at_a_time(tiny_random_llama, world_tokenizer, rows):
    """The split's per-item probability, truth ratio and membership loss from the simple computation."""
    fmt = PromptFormat.for_tokenizer(world_tokenizer)
    st = EvalSettings(max_new_tokens=4, batch_size=3, progress=False)
    _, details = evaluate_split(tiny_random_llama, world_tokenizer, fmt, rows, "forget", st)
    for i, row in enumerate(rows):
        prompt = fmt.prompt_ids(world_tokenizer, row["question"])

        def nll(text, prompt=prompt):
            return _one_row(tiny_random_llama, prompt, fmt.answer_ids(world_tokenizer, text))["nll_mean"]

        answer = nll(row["answer"])
        assert details["nll_mean"][i] == pytest.approx(answer, abs=REORDERED_FORWARD_LOGP_ATOL)
        assert details["mia"]["loss"][i] == pytest.approx(-answer, abs=REORDERED_FORWARD_LOGP_ATOL)
        pert = [nll(p) for p in row["perturbed_answer"]]
        tr = math.exp(nll(row["paraphrased_answer"]) - sum(pert) / len(pert))
        assert details["truth_ratios"][i] == pytest.approx(tr, rel=REORDERED_FORWARD_RATIO_REL)


# ------------------------------------------------------------------------------------ generation


def _eos_every(model, eos: int, period: int, calls: list):
    """``model`` made to emit EOS at every absolute position p with p % period == period - 1 (rows with
    prompts of other lengths finish after other numbers of tokens); each forward's shape is recorded."""
    forward = model.forward

    @functools.wraps(forward)  # generate reads the signature: it passes positions as to the model
    def scripted(*args, **kwargs):
        out = forward(*args, **kwargs)
        ids = kwargs["input_ids"]
        calls.append(tuple(ids.shape))
        width = out.logits.shape[1]
        where = kwargs.get("position_ids")
        assert where is not None
        hit = where[:, -width:] % period == period - 1
        logits = out.logits.clone()
        logits[..., eos] += 1e4 * hit
        out.logits = logits
        return out

    model.forward = scripted
    return model


def test_rows_stop_at_their_eos_and_match_generate_one_at_a_time(
    make_tiny_llama, world_tokenizer, mini_bench
):
    fmt = PromptFormat.for_tokenizer(world_tokenizer)
    questions = [r["question"] for r in mini_bench.retain[:6]]
    prompts = [fmt.prompt_ids(world_tokenizer, q) for q in questions]
    eos = world_tokenizer.eos_token_id
    calls: list = []
    model = _eos_every(make_tiny_llama(), eos, 5, calls)
    got = greedy_token_ids(model, world_tokenizer, prompts, 12, batch_size=len(prompts))
    # every row stopped at its first EOS, at a position set by its prompt's length
    # token k is predicted at position len(prompt) - 1 + k: EOS first where that is 4 mod 5
    assert all(len(g) == -len(p) % 5 for g, p in zip(got, prompts))
    assert len({len(g) for g in got}) > 1
    prefill, *steps = calls
    assert prefill[0] == len(prompts) and all(w == 1 for _, w in steps)
    # a row leaves the batch after its EOS: rows per step = rows still generating; no step after the last
    lengths = [len(g) for g in got]
    assert [n for n, _ in steps] == [sum(n > s for n in lengths) for s in range(max(lengths))]
    for prompt, toks in zip(prompts, got):  # generate, one unpadded row at a time
        assert toks == _generate(model, world_tokenizer, prompt, 12)


def _generate(model, tokenizer, prompt: list[int], new: int) -> list[int]:
    """``model.generate``'s greedy tokens for one unpadded prompt, cut before the first EOS."""
    eos = tokenizer.eos_token_id
    out = model.generate(
        input_ids=torch.tensor([prompt]),
        max_new_tokens=new,
        do_sample=False,
        eos_token_id=eos,
        pad_token_id=tokenizer.pad_token_id,
    )[0, len(prompt) :].tolist()
    return out[: out.index(eos)] if eos in out else out


def test_greedy_loop_equals_generate_and_budgets_cut_rows(tiny_random_llama, world_tokenizer, mini_bench):
    """Without EOS: the own loop's tokens are generate's, batched or not; a total cap cuts each row."""
    fmt = PromptFormat.for_tokenizer(world_tokenizer)
    prompts = [fmt.prompt_ids(world_tokenizer, r["question"]) for r in mini_bench.forget[:5]]
    got = greedy_token_ids(tiny_random_llama, world_tokenizer, prompts, 9, batch_size=3)
    for prompt, toks in zip(prompts, got):
        alone = greedy_token_ids(tiny_random_llama, world_tokenizer, [prompt], 9, batch_size=1)[0]
        assert len(toks) == 9 and toks == alone == _generate(tiny_random_llama, world_tokenizer, prompt, 9)
    cap = min(len(p) for p in prompts) + 4
    capped = greedy_token_ids(tiny_random_llama, world_tokenizer, prompts, 9, 3, max_total_tokens=cap)
    for prompt, full, short in zip(prompts, got, capped):
        assert short == full[: max(0, min(9, cap - len(prompt)))]


def test_a_generation_config_with_processors_goes_through_generate(
    tiny_random_llama, world_tokenizer, mini_bench
):
    """A repetition penalty changes greedy decoding: such a model is generated by model.generate."""
    fmt = PromptFormat.for_tokenizer(world_tokenizer)
    prompts = [fmt.prompt_ids(world_tokenizer, r["question"]) for r in mini_bench.forget[:3]]
    assert passes.plain_greedy(tiny_random_llama)
    tiny_random_llama.generation_config.repetition_penalty = 5.0
    assert not passes.plain_greedy(tiny_random_llama)
    calls: list = []
    forward = tiny_random_llama.forward
    tiny_random_llama.forward = lambda *a, **kw: calls.append(kw.get("logits_to_keep")) or forward(*a, **kw)
    got = greedy_token_ids(tiny_random_llama, world_tokenizer, prompts, 8, batch_size=1)
    assert calls and 1 not in calls  # generate's forwards, not the own loop's prefill
    tiny_random_llama.forward = forward
    for prompt, toks in zip(prompts, got):
        assert toks == _generate(tiny_random_llama, world_tokenizer, prompt, 8)


def test_a_split_runs_each_prompt_once_for_scores_and_generation(make_tiny_llama, world_tokenizer, rows):
    """Scoring and generation continue one run of each prompt: the forwards that start sequences (no
    cache given) hold every question once."""
    model = make_tiny_llama()
    starts: list[int] = []
    forward = model.forward

    @functools.wraps(forward)
    def counting(*args, **kwargs):
        if kwargs.get("cache") is None and kwargs.get("past_key_values") is None:
            starts.append(kwargs["input_ids"].shape[0])
        return forward(*args, **kwargs)

    model.forward = counting
    fmt = PromptFormat.for_tokenizer(world_tokenizer)
    st = EvalSettings(max_new_tokens=5, batch_size=4, progress=False)
    _, details = evaluate_split(model, world_tokenizer, fmt, rows + rows[:2], "forget", st)
    assert sum(starts) == len(rows)  # the 2 repeated rows' questions are not run again
    assert details["generations"][-2:] == details["generations"][:2]
