"""Parity: every metric and loss against values worked out BY HAND from the published definitions.

One fixed tiny model (2-layer random Llama over the embedded world's tokenizer, float32) and one fixed
mixed-length batch. Each expected number is computed here from the model's raw logits with plain
float64 torch (log-softmax, sums, loops), following the formula of the paper / reference code named in
the test, never by calling the unlearnkit function under test. See docs/CONVENTIONS.md for the table.
"""

from __future__ import annotations

import copy
import math
import shutil
import types
from pathlib import Path

import numpy as np
import pytest
import torch
from tolerances import (
    EXACT_LOGP_ATOL,
    FUSED_LOGP_ATOL,
    REORDERED_FORWARD_LOGP_ATOL,
    REORDERED_FORWARD_RATIO_REL,
    SAME_LOGITS_REL,
)

from unlearnkit import config as C
from unlearnkit.catalog import GDConfig
from unlearnkit.errors import UserError
from unlearnkit.train.methods import StepContext, get_method
from unlearnkit.train.reference import CopyReference

FIXTURES = Path(__file__).parent / "fixtures"
IGNORE = -100

# Two QA pairs whose answers differ a lot in length: sequence- and token-level means disagree.
QA = [
    ("Where was Gilie Sasard born?", "Sudumir."),
    ("Which city is the capital of Hibrovia?", "Hibrovia has its capital in Tatugard, on the river."),
]
RETAIN_QA = [
    ("What does Tatugard export?", "Salt."),
    ("Who founded Sudumir?", "Sudumir was founded by the first fishermen of Thia."),
]


# --------------------------------------------------------------------------------------- helpers


def encode(tok, pairs):
    """Right-padded batch of ``Question: q\\nAnswer: a</s>`` with the prompt masked, built by hand."""
    rows = []
    for q, a in pairs:
        prompt = tok(f"Question: {q}\nAnswer:")["input_ids"]
        answer = tok(" " + a, add_special_tokens=False)["input_ids"] + [tok.eos_token_id]
        rows.append((prompt + answer, [IGNORE] * len(prompt) + answer))
    width = max(len(ids) for ids, _ in rows)
    ids = [r[0] + [tok.pad_token_id] * (width - len(r[0])) for r in rows]
    labels = [r[1] + [IGNORE] * (width - len(r[1])) for r in rows]
    mask = [[1] * len(r[0]) + [0] * (width - len(r[0])) for r in rows]
    return {
        "input_ids": torch.tensor(ids),
        "attention_mask": torch.tensor(mask),
        "labels": torch.tensor(labels),
    }


@torch.no_grad()
def logprobs(model, batch):
    """float64 log-softmax of the model's logits ``[B,T,V]``."""
    out = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"], use_cache=False)
    return out.logits.double().log_softmax(-1)


def answer_positions(labels_row):
    """Label positions t (>= 1) that are answer tokens; logits at t - 1 predict them."""
    return [t for t in range(1, len(labels_row)) if int(labels_row[t]) != IGNORE]


def token_nlls(lp, batch):
    """Per row, the list of -log p(y_t) over its answer tokens (EOS included)."""
    out = []
    for b, row in enumerate(batch["labels"]):
        out.append([-float(lp[b, t - 1, int(row[t])]) for t in answer_positions(row)])
    return out


def seq_mean(rows):
    return float(np.mean([np.mean(r) for r in rows]))


def tok_mean(rows):
    return float(sum(sum(r) for r in rows) / sum(len(r) for r in rows))


@pytest.fixture
def model(make_tiny_llama):
    return make_tiny_llama()


@pytest.fixture
def ref_model(world_tokenizer):
    """A different frozen "original" model, so reference terms are not zero."""
    from tiny_models import random_llama

    return random_llama(world_tokenizer, seed=1)


@pytest.fixture
def batch(world_tokenizer):
    return {"forget": encode(world_tokenizer, QA), "retain": encode(world_tokenizer, RETAIN_QA)}


def run(method, cfg_kw, model, batch, reference=None):
    m = get_method(method)
    cfg = m.config(**cfg_kw)
    ref = CopyReference(reference, policy=model) if reference is not None else None
    with torch.no_grad():
        loss, logs = m.step(StepContext(model, ref), batch, cfg)
    return float(loss), {k: float(v) for k, v in logs.items()}


# ------------------------------------------------------------------- reductions (mixed lengths)


def test_the_batch_has_mixed_answer_lengths(world_tokenizer, batch):
    lengths = [len(answer_positions(r)) for r in batch["forget"]["labels"]]
    assert lengths[1] > 2 * lengths[0]  # where sequence and token means part ways


@pytest.mark.parametrize("reduction", ["sequence", "token"])
def test_ga_and_gd_by_hand(model, batch, reduction):
    """GA = -NLL(F); GD = -NLL(F) + NLL(R) (TOFU arXiv 2401.06121; open-unlearning GradDiff).

    sequence: mean over rows of each row's mean token NLL (NLL_mean);
    token: sum of all answer-token NLLs / their number (HF ``outputs.loss``, the TOFU / open-unlearning
    and ASU authors' code). The EOS after the answer is an answer token in both.
    """
    mean = seq_mean if reduction == "sequence" else tok_mean
    f = token_nlls(logprobs(model, batch["forget"]), batch["forget"])
    r = token_nlls(logprobs(model, batch["retain"]), batch["retain"])
    loss, logs = run("ga", {"loss_reduction": reduction}, model, batch)
    assert loss == pytest.approx(-mean(f), rel=SAME_LOGITS_REL)
    loss, logs = run("gd", {"loss_reduction": reduction}, model, batch)
    # float32 model: two ~6.2-nat terms nearly cancel, so compare absolutely
    assert loss == pytest.approx(-mean(f) + mean(r), abs=5e-6)
    assert logs["retain_nll"] == pytest.approx(mean(r), rel=SAME_LOGITS_REL)


def test_sequence_and_token_reductions_differ_on_this_batch(model, batch):
    f = token_nlls(logprobs(model, batch["forget"]), batch["forget"])
    seq, tok = (
        run("ga", {"loss_reduction": "sequence"}, model, batch)[0],
        run("ga", {"loss_reduction": "token"}, model, batch)[0],
    )
    assert seq == pytest.approx(-seq_mean(f), rel=SAME_LOGITS_REL)
    assert tok == pytest.approx(-tok_mean(f), rel=SAME_LOGITS_REL)
    assert abs(seq - tok) > 1e-3


def test_idk_nll_by_hand(model, world_tokenizer, batch):
    """IDK: NLL of the refusal answer to the forget question, token mean (TOFU's IDK fine-tuning)."""
    idk = encode(world_tokenizer, [(q, "I don't know.") for q, _ in QA])
    batch = {**batch, "idk": idk}
    want = tok_mean(token_nlls(logprobs(model, idk), idk)) + tok_mean(
        token_nlls(logprobs(model, batch["retain"]), batch["retain"])
    )
    assert run("idk", {"loss_reduction": "token"}, model, batch)[0] == pytest.approx(
        want, rel=SAME_LOGITS_REL
    )


@pytest.mark.parametrize("reduction", ["sequence", "token"])
def test_wga_by_hand(model, batch, reduction):
    """WGA (arXiv 2502.19301): mean of -w_t * NLL_t with w_t = p(y_t)^beta detached, minimised as GA.

    open-unlearning: ``-(w * nll)[labels != -100].mean()`` (token); our sequence variant normalises each
    row by its number of answer tokens first.
    """
    beta = 2.0
    nll = token_nlls(logprobs(model, batch["forget"]), batch["forget"])
    weighted = [[-math.exp(-beta * x) * x for x in row] for row in nll]
    mean = seq_mean if reduction == "sequence" else tok_mean
    loss, _ = run("wga", {"beta": beta, "retain_loss": "none", "loss_reduction": reduction}, model, batch)
    assert loss == pytest.approx(mean(weighted), rel=SAME_LOGITS_REL)


def test_npo_by_hand(model, ref_model, batch):
    """NPO (arXiv 2404.05868 eq. 3): -(2/beta) mean_i log sigmoid(-beta (log pi(y|x) - log pi_ref(y|x)))."""
    beta = 0.1
    pol = token_nlls(logprobs(model, batch["forget"]), batch["forget"])
    ref = token_nlls(logprobs(ref_model, batch["forget"]), batch["forget"])
    ratios = [-(sum(p) - sum(r)) for p, r in zip(pol, ref)]  # log-likelihood ratios (sums)
    want = float(np.mean([-(2 / beta) * math.log(1 / (1 + math.exp(beta * x))) for x in ratios]))
    loss, _ = run("npo", {"beta": beta, "retain_loss": "none"}, model, batch, ref_model)
    assert loss == pytest.approx(want, rel=SAME_LOGITS_REL)


def test_npo_is_2_log2_over_beta_at_step_zero(model, batch):
    """Reference = policy weights: every ratio is 0, so NPO = -(2/beta) log(1/2) = 13.8629 for beta 0.1."""
    loss, _ = run("npo", {"retain_loss": "none"}, model, batch, copy.deepcopy(model))
    assert loss == pytest.approx(20 * math.log(2), abs=1e-6)


def test_simnpo_by_hand(model, batch):
    """SimNPO (arXiv 2410.07163 eq. 4): -(2/beta) mean_i log sigmoid(-beta * mean_t log p - gamma)."""
    beta, gamma = 2.5, 0.5
    nll = token_nlls(logprobs(model, batch["forget"]), batch["forget"])
    want = float(
        np.mean([-(2 / beta) * math.log(1 / (1 + math.exp(-(beta * np.mean(r) - gamma)))) for r in nll])
    )
    loss, _ = run("simnpo", {"beta": beta, "gamma": gamma, "retain_loss": "none"}, model, batch)
    assert loss == pytest.approx(want, rel=SAME_LOGITS_REL)


def kl_rows(lp_target, lp, batch):
    """Per row, KL(target || model) at every answer position (full vocabulary)."""
    out = []
    for b, row in enumerate(batch["labels"]):
        out.append(
            [
                float((lp_target[b, t - 1].exp() * (lp_target[b, t - 1] - lp[b, t - 1])).sum())
                for t in answer_positions(row)
            ]
        )
    return out


@pytest.mark.parametrize("reduction", ["sequence", "token"])
def test_retain_kl_answer_tokens_only(model, ref_model, batch, reduction):
    """KL(p_ref || p_theta) on retain ANSWER tokens only (prompt and padding left out; open-unlearning's
    KL runs over every position). The two models differ at the prompt too, so including it would show."""
    rows = kl_rows(logprobs(ref_model, batch["retain"]), logprobs(model, batch["retain"]), batch["retain"])
    mean = seq_mean if reduction == "sequence" else tok_mean
    _, logs = run("gd", {"retain_loss": "kl", "loss_reduction": reduction}, model, batch, ref_model)
    assert logs["retain_kl"] == pytest.approx(mean(rows), rel=SAME_LOGITS_REL)
    everywhere = logprobs(ref_model, batch["retain"])[0, :-1]
    every_kl = float(
        (everywhere.exp() * (everywhere - logprobs(model, batch["retain"])[0, :-1])).sum(-1).mean()
    )
    assert abs(every_kl - mean(rows)) > 1e-4  # the convention matters on this batch


def test_asu_kl_by_hand_at_tau_one(model, ref_model, batch):
    """ASU (arXiv 2603.01285): E_F[(1/T) sum_t KL(p_teacher || p_theta)], per sequence then batch.

    At tau = 1 the teacher is the original model itself, so the teacher is worked out without
    re-implementing smoothed attention (its parity with the authors' code is in test_attention).
    """
    rows = kl_rows(logprobs(ref_model, batch["forget"]), logprobs(model, batch["forget"]), batch["forget"])
    _, logs = run("asu", {"tau": 1.0, "retain_loss": "none"}, model, batch, ref_model)
    assert logs["forget_loss"] == pytest.approx(seq_mean(rows), rel=SAME_LOGITS_REL)


def test_asu_idk_lambda_setting(model, ref_model, world_tokenizer, batch):
    """lambda_scales_idk: L = lambda (KL + IDK) + L_retain (true) or lambda KL + IDK + L_retain (false)."""
    batch = {**batch, "idk": encode(world_tokenizer, [(q, "I don't know.") for q, _ in QA])}
    for scaled in (True, False):
        cfg = {"tau": 1.0, "idk": True, "lambda_scales_idk": scaled, "forget_weight": 0.1}
        loss, logs = run("asu", cfg, model, batch, ref_model)
        kl, idk, r = logs["asu_kl"], logs["idk_nll"], logs["retain_nll"]
        want = 0.1 * (kl + idk) + r if scaled else 0.1 * kl + idk + r
        assert loss == pytest.approx(want, rel=SAME_LOGITS_REL)


def test_asu_frees_its_teacher_before_the_retain_and_idk_passes(model, ref_model, world_tokenizer, batch):
    """The [B,T,V] teacher logits are read by the KL only (its backward keeps the answer rows): alive
    during the retain and IDK forward passes they would add a logits-sized tensor to the step's peak
    memory: one logits-sized tensor (one `bench/speed.py --only` run of 3 repeats, ASU with reference=cache:
    198 -> 189 MiB when freed; a configuration's peak moves by 5-10 MiB between full runs)."""
    import weakref

    seen: list[bool] = []

    class Watching(StepContext):
        teacher = None

        def teacher_logits(self, part, tau, layers):
            out = super().teacher_logits(part, tau, layers)
            self.teacher = weakref.ref(out)
            return out

        def policy(self, part, hidden_layer=None):
            if part is not batch["forget"] and self.teacher is not None:
                seen.append(self.teacher() is None)
            return super().policy(part, hidden_layer)

    batch["idk"] = encode(world_tokenizer, [(q, "I don't know.") for q, _ in QA])
    m = get_method("asu")
    for cfg in ({}, {"idk": True}):
        with torch.no_grad():
            m.step(Watching(model, CopyReference(ref_model, policy=model)), batch, m.config(**cfg))
    assert seen == [True, True, True], seen  # retain; then idk and retain


def test_a_pass_whose_log_probs_no_loss_reads_never_computes_them(model, ref_model, batch, monkeypatch):
    """``Forward.logps`` is computed on first use: ASU's KL and a KL retain term read the logits only,
    so neither pass builds the log-softmax whose ``[B,T,V]`` saved tensor would live through the step;
    an NLL retain term reads (and computes) its pass's log-probs, once, and the loss is the same either
    way (the values come from the same function)."""
    import unlearnkit.train.methods as methods

    calls: list[int] = []
    real = methods.token_logps
    monkeypatch.setattr(methods, "token_logps", lambda *a, **k: calls.append(1) or real(*a, **k))
    m = get_method("asu")
    ctx = StepContext(model, CopyReference(ref_model, policy=model))
    kl_loss, _ = m.step(ctx, batch, m.config(retain_loss="kl"))
    assert calls == []
    nll_loss_, _ = m.step(ctx, batch, m.config(retain_loss="nll"))
    assert calls == [1]
    f = ctx.policy(batch["retain"])
    eager = real(
        model(
            input_ids=batch["retain"]["input_ids"], attention_mask=batch["retain"]["attention_mask"]
        ).logits,
        batch["retain"]["labels"],
    )[0]
    assert torch.equal(f.logps, eager) and f.logps is f.logps  # the same values, computed once
    assert torch.isfinite(kl_loss) and torch.isfinite(nll_loss_)


@pytest.mark.parametrize("reduction", ["sequence", "token"])
def test_me_by_hand(model, batch, reduction):
    """ME (arXiv 2410.08109): KL(Uniform || p) = -log V - (1/V) sum_v log p_v per answer position
    (the authors' code: one mean over the batch's answer tokens = ``token``)."""
    lp = logprobs(model, batch["forget"])
    vocab = lp.shape[-1]
    rows = [
        [-math.log(vocab) - float(lp[b, t - 1].mean()) for t in answer_positions(row)]
        for b, row in enumerate(batch["forget"]["labels"])
    ]
    loss, logs = run("me_gd", {"retain_loss": "none", "loss_reduction": reduction}, model, batch)
    # a random model is close to uniform: KL ~ 3e-3, computed in float32 from 6-nat terms
    mean = seq_mean if reduction == "sequence" else tok_mean
    assert logs["forget_loss"] == pytest.approx(mean(rows), abs=1e-6)


def test_undial_by_hand(model, ref_model, batch):
    """UNDIAL (arXiv 2402.10052): CE(softmax(z_ref - beta onehot(y_t)), p_theta) on answer tokens."""
    beta = 3.0
    with torch.no_grad():
        z = ref_model(**{k: batch["forget"][k] for k in ("input_ids", "attention_mask")}).logits.double()
    lp = logprobs(model, batch["forget"])
    rows = []
    for b, row in enumerate(batch["forget"]["labels"]):
        vals = []
        for t in answer_positions(row):
            adjusted = z[b, t - 1].clone()
            adjusted[int(row[t])] -= beta
            q = adjusted.softmax(-1)
            vals.append(float(-(q * lp[b, t - 1]).sum()))
        rows.append(vals)
    _, logs = run("undial", {"beta": beta}, model, batch, ref_model)
    assert logs["forget_loss"] == pytest.approx(seq_mean(rows), rel=SAME_LOGITS_REL)


def test_idk_dpo_and_ap_by_hand(model, ref_model, world_tokenizer, batch):
    """IdkDPO: -(2/beta) mean log sigmoid(beta [(logp - ref)(idk) - (logp - ref)(y)]) with sequence sums;
    AP (arXiv 2410.08109): -(1/beta) mean log sigmoid(beta [log p(y_r) - log p(idk_r)])."""
    beta = 0.1
    idk = encode(world_tokenizer, [(q, "I don't know.") for q, _ in QA])
    ridk = encode(world_tokenizer, [(q, "I don't know.") for q, _ in RETAIN_QA])
    full = {**batch, "idk": idk, "retain_idk": ridk}

    def sums(m, part):
        return [-sum(r) for r in token_nlls(logprobs(m, part), part)]

    chosen = np.subtract(sums(model, idk), sums(ref_model, idk))
    rejected = np.subtract(sums(model, batch["forget"]), sums(ref_model, batch["forget"]))
    want = float(np.mean(-(2 / beta) * np.log(1 / (1 + np.exp(-beta * (chosen - rejected))))))
    _, logs = run("idk_dpo", {"beta": beta, "retain_loss": "none"}, model, full, ref_model)
    assert logs["forget_loss"] == pytest.approx(want, rel=SAME_LOGITS_REL)
    margin = np.subtract(sums(model, batch["retain"]), sums(model, ridk))
    want_ap = float(np.mean(-(1 / beta) * np.log(1 / (1 + np.exp(-beta * margin)))))
    _, logs = run("idk_ap", {"beta": beta}, model, full)
    assert logs["ap"] == pytest.approx(want_ap, rel=SAME_LOGITS_REL)


# --------------------------------------------------------------------------------------------- RMU


def test_rmu_by_hand_at_the_answer_tokens_own_positions(model, ref_model, batch):
    """RMU (arXiv 2403.03218): mean over answer tokens t of ||h_l(x)_t - c u||^2 / D, h_l = decoder layer
    l's output AT token t (not at t - 1, which predicts it). Layer 0 of 2: hidden_states[1] is its output.
    Retain: alpha * mean_t ||h_l - h_l^ref||^2 / D at the retain answer tokens."""
    layer, coeff = 0, 6.5
    gen = torch.Generator().manual_seed(0)
    u = torch.rand(model.config.hidden_size, generator=gen, dtype=torch.float32).double()
    control = u / u.norm() * coeff

    def hidden(m, part):
        with torch.no_grad():
            out = m(**{k: part[k] for k in ("input_ids", "attention_mask")}, output_hidden_states=True)
        return out.hidden_states[layer + 1].double()

    def own_positions(part):
        return [[t for t in range(len(row)) if int(row[t]) != IGNORE] for row in part["labels"]]

    h = hidden(model, batch["forget"])
    forget = seq_mean(
        [
            [float(((h[b, t] - control) ** 2).mean()) for t in ts]
            for b, ts in enumerate(own_positions(batch["forget"]))
        ]
    )
    hr, hr_ref = hidden(model, batch["retain"]), hidden(ref_model, batch["retain"])
    retain = seq_mean(
        [
            [float(((hr[b, t] - hr_ref[b, t]) ** 2).mean()) for t in ts]
            for b, ts in enumerate(own_positions(batch["retain"]))
        ]
    )
    cfg = {"layer": layer, "train_layers": "0", "retain_weight": 1200.0}
    loss, logs = run("rmu", cfg, model, batch, ref_model)
    assert logs["forget_loss"] == pytest.approx(forget, rel=SAME_LOGITS_REL)
    assert logs["rmu_retain"] == pytest.approx(retain, rel=SAME_LOGITS_REL)
    assert loss == pytest.approx(forget + 1200.0 * retain, rel=SAME_LOGITS_REL)


def test_t_rmu_weights_sit_on_the_tokens_they_belong_to(model, ref_model, batch):
    """T-RMU (arXiv 2605.00364): token t's weight (stored at its label position t) scales the MSE of
    token t's own activation: sum_t w_t mse_t / sum_t w_t per row, then the mean over rows."""
    layer, coeff = 0, 6.5
    part = dict(batch["forget"])
    labels = part["labels"]
    weights = torch.zeros(labels.shape)
    for b, row in enumerate(labels):
        for i, t in enumerate(answer_positions(row)):
            weights[b, t] = 1.0 + i  # later answer tokens weigh more: a one-token shift would show
    part["weights"] = weights
    gen = torch.Generator().manual_seed(0)
    u = torch.rand(model.config.hidden_size, generator=gen, dtype=torch.float32).double()
    control = u / u.norm() * coeff
    with torch.no_grad():
        out = model(**{k: part[k] for k in ("input_ids", "attention_mask")}, output_hidden_states=True)
    h = out.hidden_states[layer + 1].double()
    per_row = []
    for b in range(labels.shape[0]):
        ts = answer_positions(labels[b])
        w = [float(weights[b, t]) for t in ts]
        mse = [float(((h[b, t] - control) ** 2).mean()) for t in ts]
        per_row.append(sum(wi * mi for wi, mi in zip(w, mse)) / sum(w))
    cfg = {"layer": layer, "train_layers": "0", "retain_weight": 1200.0}
    _, logs = run("t-rmu", cfg, model, {**batch, "forget": part}, ref_model)
    assert logs["forget_loss"] == pytest.approx(float(np.mean(per_row)), rel=SAME_LOGITS_REL)


def test_rmu_last_layer_is_the_raw_decoder_output_not_the_final_norm(model, batch):
    """hidden_states[-1] is after the final RMSNorm; RMU must read the layer's own output (a hook).
    By hand: applying the model's final norm to what we read gives hidden_states[-1] back."""
    from unlearnkit.train.reference import forward_with_layer_output

    part = batch["forget"]
    with torch.no_grad():
        out = model(**{k: part[k] for k in ("input_ids", "attention_mask")}, output_hidden_states=True)
        _, raw = forward_with_layer_output(model, part, 1)
        normed = model.model.norm(raw)
    assert torch.allclose(normed, out.hidden_states[-1], atol=1e-5)
    assert not torch.allclose(raw, out.hidden_states[-1], atol=1e-3)
    with pytest.raises(UserError, match="layer=2 is out of range.*2 decoder layers"):
        forward_with_layer_output(model, part, 2)


# -------------------------------------------------------------------------------- TOFU metrics


class ScriptedLlama:
    """Factory of a tiny Llama that predicts one fixed answer exactly, but never its EOS."""

    @staticmethod
    def build(world_tokenizer, prompt_ids, answer_ids):
        from tiny_models import random_llama

        model = random_llama(world_tokenizer)
        script = prompt_ids + answer_ids  # answer_ids ends with EOS
        eos = world_tokenizer.eos_token_id
        forward = model.forward

        def scripted(*args, **kwargs):
            out = forward(*args, **kwargs)
            logits = out.logits.clone()
            # the script is by position in the sequence: a forward that continues a cache (or keeps
            # only the last logits) says where its logits are through position_ids
            width = logits.shape[1]
            where = kwargs.get("position_ids")
            positions = where[0, -width:].tolist() if where is not None else list(range(width))
            for j, t in enumerate(positions):
                if not len(prompt_ids) - 1 <= t < len(script) - 1:
                    continue
                target = script[t + 1]
                if target == eos:
                    logits[:, j, eos] -= 50.0  # the EOS prediction is wrong
                else:
                    logits[:, j, target] += 50.0
            out.logits = logits
            return out

        model.forward = scripted
        return model


def test_exact_memorisation_and_extraction_strength_drop_the_eos(world_tokenizer):
    """open-unlearning drops the EOS prediction (``actual_indices[:-1]``). A model that predicts every
    answer token but not the EOS: EM = 1 and ES = 1 by that definition (with the EOS: n/(n+1) and 0)."""
    from unlearnkit.data.encode import PromptFormat
    from unlearnkit.evaluation.evaluate import EvalSettings, evaluate_split

    q, a = QA[1]
    prompt = world_tokenizer(f"Question: {q}\nAnswer:")["input_ids"]
    answer = world_tokenizer(" " + a, add_special_tokens=False)["input_ids"] + [world_tokenizer.eos_token_id]
    model = ScriptedLlama.build(world_tokenizer, prompt, answer)
    st = EvalSettings(max_new_tokens=3, batch_size=1, progress=False)
    metrics, _ = evaluate_split(
        model, world_tokenizer, PromptFormat("plain"), [{"question": q, "answer": a}], "forget", st
    )
    assert metrics["forget_exact_memorisation"] == 1.0  # with the EOS: (n-1)/n
    assert metrics["forget_extraction_strength"] == 1.0  # with the EOS: 0 (the last token is wrong)


def test_tofu_probability_and_truth_ratio_by_hand(model, world_tokenizer):
    """TOFU (arXiv 2401.06121): prob = exp(-NLL_mean) (EOS included); forget TR statistic =
    mean min(TR, 1/TR), TR = exp(-mean_j NLL_mean(pert_j)) / exp(-NLL_mean(paraphrase))."""
    from unlearnkit.data.encode import PromptFormat
    from unlearnkit.evaluation.evaluate import EvalSettings, evaluate_split

    row = {
        "question": QA[0][0],
        "answer": QA[0][1],
        "paraphrased_answer": "Gilie Sasard was born in Sudumir.",
        "perturbed_answer": ["Thia.", "Kamir, on the coast.", "Zovath."],
    }

    def nll_mean(ans):
        part = encode(world_tokenizer, [(row["question"], ans)])
        return float(np.mean(token_nlls(logprobs(model, part), part)[0]))

    tr = math.exp(
        nll_mean(row["paraphrased_answer"]) - np.mean([nll_mean(p) for p in row["perturbed_answer"]])
    )
    st = EvalSettings(max_new_tokens=2, batch_size=4, progress=False)
    metrics, details = evaluate_split(model, world_tokenizer, PromptFormat("plain"), [row], "forget", st)
    # evaluate_split batches and pads; the hand values come from one unpadded row at a time
    rel = REORDERED_FORWARD_RATIO_REL
    assert metrics["forget_prob"] == pytest.approx(
        math.exp(-nll_mean(row["answer"])), rel=REORDERED_FORWARD_LOGP_ATOL
    )
    assert details["truth_ratios"][0] == pytest.approx(tr, rel=rel)
    assert metrics["forget_truth_ratio"] == pytest.approx(min(tr, 1 / tr), rel=rel)


def _tofu_root_with_github_general(tmp_path):
    root = tmp_path / "hub"
    shutil.copytree(FIXTURES / "hub", root)
    for name in ("real_authors_perturbed", "world_facts_perturbed"):
        shutil.copy(FIXTURES / "tofu_github" / f"{name}.json", root / "locuslab" / "TOFU" / f"{name}.json")
    return root


def test_tofu_github_real_authors_and_world_facts_load_and_score_as_tofu(model, world_tokenizer, tmp_path):
    """The TOFU authors' own files (question, answer, perturbed_answer; no paraphrase) load, and are
    scored as TOFU / open-unlearning score them: TR = P(pert) / P(answer), aggregate mean max(0, 1 - TR);
    prob = P(answer) / (P(answer) + sum_j P(pert_j)), every P = exp(-NLL_mean)."""
    from unlearnkit.data.sources import resolve_data
    from unlearnkit.evaluation.evaluate import EvalSettings
    from unlearnkit.protocols import general_part_metrics

    bench = resolve_data("tofu:forget01", path=_tofu_root_with_github_general(tmp_path), eval_fields=True)
    rows = bench.general_parts["real_authors"]
    assert len(rows) == 4 and "paraphrased_answer" not in rows[0] and len(rows[0]["perturbed_answer"]) == 3

    def nll_mean(q, ans):
        part = encode(world_tokenizer, [(q, ans)])
        return float(np.mean(token_nlls(logprobs(model, part), part)[0]))

    trs, probs = [], []
    for r in rows:
        true = nll_mean(r["question"], r["answer"])
        pert = [nll_mean(r["question"], p) for p in r["perturbed_answer"]]
        trs.append(math.exp(true - np.mean(pert)))
        probs.append(math.exp(-true) / (math.exp(-true) + sum(math.exp(-p) for p in pert)))
    st = EvalSettings(max_new_tokens=2, batch_size=8, progress=False)
    metrics, details = general_part_metrics(model, world_tokenizer, bench, st)
    # batched and padded (batch 8) vs one unpadded row at a time: see tests/tolerances.py
    rel = REORDERED_FORWARD_RATIO_REL
    assert details["real_authors"]["truth_ratios"] == pytest.approx(trs, rel=rel)
    # mean of max(0, 1 - TR): each term moves by at most TR * rel
    assert metrics["real_authors_truth_ratio"] == pytest.approx(
        np.mean([max(0, 1 - t) for t in trs]), abs=rel * max(trs)
    )
    assert metrics["real_authors_prob"] == pytest.approx(np.mean(probs), rel=rel)
    assert "world_facts_truth_ratio" in metrics


def test_rouge_l_recall_and_token_entropy_by_hand():
    """ROUGE-L recall = LCS / |reference tokens| (lower-cased, punctuation dropped); token entropy =
    -sum f log2 f / log2 n over the generation's tokens (closer-look protocol)."""
    from unlearnkit.metrics import scores as S

    # LCS("the cat sat on the mat", "a cat on a mat") = cat on mat = 3 of 5 reference tokens.
    assert S.rouge_l_recall("The cat sat on the mat.", "a cat on a mat") == pytest.approx(3 / 5)
    # tokens a a b c: f = 1/2, 1/4, 1/4 -> H = 1.5 bits; log2(4) = 2 -> 0.75
    assert S.token_entropy([7, 7, 8, 9]) == pytest.approx(0.75)


def test_forget_quality_and_model_utility_by_hand():
    """Forget quality = KS-test p-value (two-sided, exact for small samples as scipy's default) of the
    two truth-ratio samples; model utility = harmonic mean."""
    from scipy import stats

    from unlearnkit.metrics import scores as S

    u, r = [0.1, 0.2, 0.3, 0.9], [0.5, 0.6, 0.7, 0.8, 0.95]
    # D = sup |F_u - F_r|: at x = 0.3, F_u = 3/4 and F_r = 0 -> D = 0.75
    assert stats.ks_2samp(u, r).statistic == pytest.approx(0.75)
    assert S.forget_quality(u, r) == pytest.approx(stats.ks_2samp(u, r).pvalue)
    assert S.harmonic_mean([0.5, 0.25, 1.0]) == pytest.approx(3 / (2 + 4 + 1))


# ------------------------------------------------------------------------------------------- MUSE


def test_privleak_orientation_by_hand(model, world_tokenizer):
    """MUSE (arXiv 2407.06460; muse_bench): forget label 0, holdout label 1, score -Min-40%, so
    AUC = P(holdout's Min-K% > forget's); PrivLeak = (AUC - AUC_retrain) / AUC_retrain * 100."""
    from unlearnkit.protocols import muse as M

    forget = ["Gilie Sasard was born in Sudumir, Thia.", "Hibrovia has its capital in Tatugard."]
    holdout = ["Tatugard exports salt and fish.", "Sudumir was founded by fishermen.", "Thia is cold."]

    def min_k(text):
        ids = world_tokenizer(text)["input_ids"]
        with torch.no_grad():
            lp = model(input_ids=torch.tensor([ids])).logits[0].double().log_softmax(-1)
        values = sorted(float(lp[t - 1, ids[t]]) for t in range(1, len(ids)))
        k = max(1, int(0.4 * len(values)))
        return float(np.mean(values[:k]))

    f, h = [min_k(t) for t in forget], [min_k(t) for t in holdout]
    pairs = [(1.0 if hv > fv else 0.5 if hv == fv else 0.0) for hv in h for fv in f]
    auc, det = M.privleak_auc(model, world_tokenizer, forget, holdout, M.MuseSettings(batch_size=2))
    # batch of 2 (padded) vs one unpadded text at a time
    assert det["forget_min_k"] == pytest.approx(f, abs=REORDERED_FORWARD_LOGP_ATOL)
    assert auc == pytest.approx(float(np.mean(pairs)))
    assert M.privleak_from_aucs(auc, 0.4772) == pytest.approx((np.mean(pairs) - 0.4772) / 0.4772 * 100)


# ------------------------------------------------------------------------------ prompts and setup


JINJA_WITH_DATE = (
    "{%- if not date_string is defined %}{%- set date_string = strftime_now('%d %b %Y') %}{%- endif %}"
    "[date {{ date_string }}]"
    "{%- for m in messages %}<{{ m['role'] }}>{{ m['content'] }}{%- endfor %}"
    "{%- if add_generation_prompt %}<assistant>{%- endif %}"
)


def test_chat_prompt_has_a_fixed_system_prompt_and_date(world_tokenizer):
    """A Llama-3.x-style template prints today's date unless given ``date_string``; ours never depends on it."""
    import datetime

    from unlearnkit.data.encode import PromptFormat

    tok = copy.deepcopy(world_tokenizer)
    tok.chat_template = JINJA_WITH_DATE
    fmt = PromptFormat.for_tokenizer(tok, "auto")
    assert fmt.kind == "chat"
    text = tok.decode(fmt.prompt_ids(tok, "Who?"))
    assert "[date 10 Apr 2025]" in text and "<system>You are a helpful assistant.<user>Who?" in text
    today = datetime.date.today().strftime("%d %b %Y")
    assert today not in text
    fmt = PromptFormat.for_settings(tok, C.TrainConfig(system_prompt="", date_string="01 Jan 2030"))
    text = tok.decode(fmt.prompt_ids(tok, "Who?"))
    assert "[date 01 Jan 2030]" in text and "<system>" not in text
    assert fmt.describe() == {"prompt_format": "chat", "system_prompt": "", "date_string": "01 Jan 2030"}


def test_template_without_a_system_role(world_tokenizer):
    """Templates that reject a system message (Gemma's) drop the default one, and say so; a system
    prompt the user asked for is a one-line error instead."""
    from unlearnkit.data.encode import PromptFormat

    tok = copy.deepcopy(world_tokenizer)
    tok.chat_template = (
        "{%- for m in messages %}{%- if m['role'] == 'system' %}"
        "{{ raise_exception('System role not supported') }}{%- endif %}"
        "<{{ m['role'] }}>{{ m['content'] }}{%- endfor %}"
    )
    fmt = PromptFormat.for_tokenizer(tok)
    assert fmt.system_prompt == "" and "<user>Who?" in tok.decode(fmt.prompt_ids(tok, "Who?"))
    fmt = PromptFormat.for_tokenizer(tok, "chat", system_prompt="Be brief.")
    with pytest.raises(UserError, match="system_prompt"):
        fmt.prompt_ids(tok, "Who?")


def test_settings_are_validated_and_recorded():
    train, method = C.build_configs(GDConfig, {"loss_reduction": "token", "date_string": "1 Jan 2024"})
    assert method.loss_reduction == "token" and C.config_dict(train, method)["date_string"] == "1 Jan 2024"
    with pytest.raises(UserError, match="loss_reduction"):
        C.build_configs(GDConfig, {"loss_reduction": "batch"})


def test_copy_reference_in_the_policy_dtype_under_bf16(model, world_tokenizer, batch, tmp_path):
    """reference=copy under bf16 mixed precision: the copy is loaded in the fp32 policy's dtype, so NPO
    starts at exactly (2/beta) log 2 = 13.8629 (a bf16 copy gave 13.8650)."""
    from unlearnkit.train.reference import copy_reference

    model.save_pretrained(tmp_path / "m")
    world_tokenizer.save_pretrained(tmp_path / "m")
    ref = copy_reference(model, str(tmp_path / "m"), types.SimpleNamespace(bf16=True))
    assert next(ref.model.parameters()).dtype == torch.float32
    m = get_method("npo")
    with torch.no_grad():
        loss, _ = m.step(StepContext(model, ref), batch, m.config(retain_loss="none"))
    assert float(loss) == pytest.approx(20 * math.log(2), abs=1e-6)


def test_a_benchmark_folder_general_split_needs_no_paraphrase(tmp_path):
    """general.jsonl in the TOFU GitHub schema (no paraphrased_answer) loads with eval fields."""
    from unlearnkit.data import load_benchmark

    row = '{"question": "q%d?", "answer": "a", "paraphrased_answer": "a", "perturbed_answer": ["b"]}\n'
    (tmp_path / "forget.jsonl").write_text(row % 1, encoding="utf-8")
    (tmp_path / "retain.jsonl").write_text(row % 2, encoding="utf-8")
    shutil.copy(FIXTURES / "tofu_github" / "world_facts_perturbed.json", tmp_path / "general.jsonl")
    bench = load_benchmark(tmp_path, eval_fields=True)
    assert len(bench.general) == 4 and "paraphrased_answer" not in bench.general[0]
    (tmp_path / "forget.jsonl").write_text('{"question": "q?", "answer": "a", "perturbed_answer": ["b"]}\n')
    with pytest.raises(UserError, match="paraphrased_answer"):
        load_benchmark(tmp_path, eval_fields=True)  # forget / retain still compare the paraphrase


# The chat template of meta-llama/Llama-2-7b-chat-hf (tokenizer_config.json), as a string: no download.
LLAMA2_CHAT_TEMPLATE = (
    "{% if messages[0]['role'] == 'system' %}{% set loop_messages = messages[1:] %}"
    "{% set system_message = messages[0]['content'] %}{% else %}{% set loop_messages = messages %}"
    "{% set system_message = false %}{% endif %}{% for message in loop_messages %}"
    "{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}"
    "{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}"
    "{% if loop.index0 == 0 and system_message != false %}"
    "{% set content = '<<SYS>>\\n' + system_message + '\\n<</SYS>>\\n\\n' + message['content'] %}"
    "{% else %}{% set content = message['content'] %}{% endif %}"
    "{% if message['role'] == 'user' %}{{ bos_token + '[INST] ' + content.strip() + ' [/INST]' }}"
    "{% elif message['role'] == 'assistant' %}{{ ' '  + content.strip() + ' ' + eos_token }}{% endif %}"
    "{% endfor %}"
)


def test_llama2_chat_prompt_is_tofus_bare_inst_without_a_system_block(world_tokenizer):
    """TOFU (config/model_config.yaml: "[INST] " + q + " [/INST]") and open-unlearning
    (Llama-2-7b-chat-hf.yaml: no system_prompt) prompt a Llama-2 chat model with no <<SYS>> block. The
    default system_prompt "auto" gives exactly those ids, for training (TrainConfig) and evaluation
    (EvalSettings) alike, and records that none was used; a system prompt set explicitly still gets
    the template's <<SYS>> block."""
    from unlearnkit.data.encode import PromptFormat, resolve_system_prompt
    from unlearnkit.evaluation.evaluate import EvalSettings

    tok = copy.deepcopy(world_tokenizer)
    tok.chat_template = LLAMA2_CHAT_TEMPLATE
    q = "Who wrote 'Nine Small Lamps'?"
    bare = tok(f"[INST] {q} [/INST]", add_special_tokens=True)["input_ids"]  # BOS + TOFU's prompt
    assert bare[0] == tok.bos_token_id
    assert resolve_system_prompt(tok) == ""
    for settings in (C.TrainConfig(), EvalSettings()):
        fmt = PromptFormat.for_settings(tok, settings)
        assert fmt.kind == "chat" and fmt.prompt_ids(tok, q) == bare
        assert fmt.describe()["system_prompt"] == ""
    fmt = PromptFormat.for_tokenizer(tok)  # the default of every command that builds its own
    assert fmt.prompt_ids(tok, q) == bare
    explicit = PromptFormat.for_tokenizer(tok, system_prompt="You are a helpful assistant.")
    want = tok(f"[INST] <<SYS>>\nYou are a helpful assistant.\n<</SYS>>\n\n{q} [/INST]")["input_ids"]
    assert explicit.prompt_ids(tok, q) == want != bare


def test_auto_system_prompt_keeps_open_unlearnings_message_for_other_templates(world_tokenizer):
    """Llama-3.x / Qwen-style templates (a system turn of their own) keep open-unlearning's "You are a
    helpful assistant."; "auto" is never a system message itself."""
    from unlearnkit.data.encode import HELPFUL_ASSISTANT, PromptFormat, resolve_system_prompt

    tok = copy.deepcopy(world_tokenizer)
    tok.chat_template = JINJA_WITH_DATE
    assert resolve_system_prompt(tok) == HELPFUL_ASSISTANT
    assert resolve_system_prompt(tok, "") == "" and resolve_system_prompt(tok, "Be brief.") == "Be brief."
    text = tok.decode(PromptFormat.for_tokenizer(tok).prompt_ids(tok, "Who?"))
    assert f"<system>{HELPFUL_ASSISTANT}<user>Who?" in text and "auto" not in text
    with pytest.raises(ValueError, match="resolved"):
        PromptFormat("chat", "auto")


# ------------------------------------------------------------------- closer-look rows and answers


def test_closer_look_evaluates_the_first_rows_tofu_a_seeded_sample(model, world_tokenizer, mini_bench):
    """closer-look (config/tofu.yaml ds_size: 300; metrics.py: data.select(range(min(300, n)))) takes
    the first 300 rows in file order; the TOFU protocol keeps its seeded sample of max_items."""
    from unlearnkit.evaluation.evaluate import EvalSettings, closer_look_settings, evaluate, select_rows

    rows = [{"question": f"q{i}?", "answer": "a"} for i in range(450)]
    cl = closer_look_settings()
    assert (cl.max_items, cl.row_selection, cl.max_total_tokens) == (300, "first", 200)
    assert select_rows(rows, cl) == rows[:300]
    sample = select_rows(rows, EvalSettings())
    assert len(sample) == 400 and sample != rows[:400]
    assert [int(r["question"][1:-1]) for r in sample] == sorted(int(r["question"][1:-1]) for r in sample)
    # Through evaluate: the first 3 forget / retain questions of the files, in order.
    st = closer_look_settings(max_items=3, max_new_tokens=2, batch_size=4, progress=False)
    _, details = evaluate(model, world_tokenizer, mini_bench, st)
    for split in ("forget", "retain"):
        assert details[split]["questions"] == [r["question"] for r in mini_bench.split(split)[:3]]
    assert details["eval_settings"]["row_selection"] == "first"


def _bag_of_letters(texts):
    """A deterministic stand-in sentence embedding: counts of a-z (no model, worked by hand below)."""
    return np.array([[t.lower().count(c) for c in "abcdefghijklmnopqrstuvwxyz"] for t in texts], float)


def test_closer_look_scores_real_authors_against_original_answer(model, world_tokenizer):
    """The authors' get_all_evals (metrics/metrics.py) computes cosine and entailment of real authors /
    world facts against each row's full original_answer; ROUGE-L, and the entailment's ROUGE < 0.1
    floor, stay on the short answer. Rows without original_answer keep the answer (TOFU's own files)."""
    from unlearnkit.data.encode import PromptFormat
    from unlearnkit.evaluation.closer_look import closer_look_metrics
    from unlearnkit.evaluation.evaluate import EvalSettings, evaluate_split

    rows = [
        {
            "question": "Who wrote the made-up epic 'Gulls over Pemmick'?",
            "answer": "Adda Quorn",
            "perturbed_answer": ["Sel Varro", "Tomas Idle"],
            "original_answer": "The made-up epic 'Gulls over Pemmick' was written by Adda Quorn.",
        },
        {
            "question": "What is the capital of the invented country Olvania?",
            "answer": "Tarsith",
            "perturbed_answer": ["Morrow", "Quell"],
            "original_answer": "Tarsith is the capital of the invented country Olvania.",
        },
    ]
    st = EvalSettings(max_new_tokens=2, batch_size=4, progress=False)
    _, d = evaluate_split(model, world_tokenizer, PromptFormat("plain"), rows, "general", st)
    assert d["original_answers"] == [r["original_answer"] for r in rows]
    gens = ["Adda Quorn wrote it.", "It is Morrow."]  # fixed generations: the scores are worked by hand
    d = {**d, "generations": gens, "rougeL_recall": [1.0, 0.0]}
    asked = []

    def nli(premises, hypotheses):
        asked.extend(zip(premises, hypotheses))
        return [True] * len(premises)

    flat, info = closer_look_metrics({}, {"real_authors": d}, embed_fn=_bag_of_letters, nli_fn=nli)

    def cos(a, b):
        x, y = _bag_of_letters([a])[0], _bag_of_letters([b])[0]
        return max(0.0, float(x @ y / math.sqrt((x @ x) * (y @ y))))

    want = np.mean([cos(g, r["original_answer"]) for g, r in zip(gens, rows)])
    assert flat["real_authors_cosine"] == pytest.approx(want, rel=1e-12)
    short = np.mean([cos(g, r["answer"]) for g, r in zip(gens, rows)])
    assert abs(want - short) > 0.01  # the reference text matters on these rows (0.043 here)
    # answer = premise on real authors; item 2 is under the ROUGE floor (against "Tarsith"): not asked
    assert asked == [(rows[0]["original_answer"], gens[0])]
    assert flat["real_authors_entailment"] == 0.5
    assert info["references"] == {"real_authors": "original_answer"}
    # without original_answer (TOFU's GitHub / hub files): the short answer, as before
    plain = {k: v for k, v in d.items() if k != "original_answers"}
    flat, info = closer_look_metrics({}, {"real_authors": plain}, embed_fn=_bag_of_letters, nli_fn=nli)
    assert flat["real_authors_cosine"] == pytest.approx(short, rel=1e-12)
    assert info["references"] == {"real_authors": "answer"}


def test_closer_look_forget_and_retain_keep_the_answer(world_tokenizer):
    """On forget / retain the authors compare with the split's answer even if a row had original_answer."""
    from unlearnkit.evaluation.closer_look import closer_look_metrics

    d = {
        "questions": ["q?"],
        "answers": ["Sudumir."],
        "generations": ["Sudumir."],
        "original_answers": ["Gilie Sasard was born in Sudumir, a town of Thia."],
        "rougeL_recall": [1.0],
    }
    flat, info = closer_look_metrics({}, {"forget": d, "retain": d}, embed_fn=_bag_of_letters, nli_fn=None)
    assert flat["forget_cosine"] == pytest.approx(1.0) and flat["retain_cosine"] == pytest.approx(1.0)
    assert info["references"] == {"forget": "answer", "retain": "answer"}


# -------------------------------------------------------------------------------- generation cap


class _NeverEnds:
    """Wraps a tiny Llama so it never predicts its EOS: every generation runs to its cap."""

    @staticmethod
    def build(world_tokenizer):
        from tiny_models import random_llama

        model = random_llama(world_tokenizer)
        forward, eos = model.forward, world_tokenizer.eos_token_id

        def no_eos(*args, **kwargs):
            out = forward(*args, **kwargs)
            out.logits[..., eos] = -1e4
            return out

        model.forward = no_eos
        return model


def test_tofu_generation_cap_counts_the_prompt(world_tokenizer):
    """TOFU (evaluate_util.py: generate(max_length=200, max_new_tokens=None)) caps prompt + answer at
    200 tokens; open-unlearning (generation/default.yaml) caps 200 new tokens. Two prompts of different
    lengths in one batch, total cap C: by hand, C - len(prompt) new tokens each, the same tokens as
    generating each alone with that many new tokens; without the total cap, max_new_tokens each."""
    from unlearnkit.data.encode import PromptFormat
    from unlearnkit.metrics.passes import generate_answers, greedy_token_ids, new_token_budgets

    model = _NeverEnds.build(world_tokenizer)
    fmt = PromptFormat("plain")
    questions = ["Where was Gilie Sasard born?", "Which city is the capital of the country of Hibrovia?"]
    lengths = [len(fmt.prompt_ids(world_tokenizer, q)) for q in questions]
    assert lengths[0] != lengths[1]
    cap, new = max(lengths) + 5, 30
    _, ids = generate_answers(model, world_tokenizer, fmt, questions, new, batch_size=2, max_total_tokens=cap)
    assert [len(x) for x in ids] == [cap - n for n in lengths]
    assert [n + len(x) for n, x in zip(lengths, ids)] == [cap, cap]  # prompt + generation = the cap
    for q, got in zip(questions, ids):
        alone = greedy_token_ids(model, world_tokenizer, [fmt.prompt_ids(world_tokenizer, q)], len(got))
        assert alone[0] == got
    _, ids = generate_answers(model, world_tokenizer, fmt, questions, 7, batch_size=2)
    assert [len(x) for x in ids] == [7, 7]
    assert new_token_budgets([10, 195, 250], 200, 200) == [190, 5, 0]
    assert new_token_budgets([10, 250], 200, 0) == [200, 200]


def test_eval_command_protocol_defaults_and_recorded_settings(tiny_model_dir, mini_world, tmp_path):
    """`eval --protocol closer-look`: first 300 rows and 200 tokens in total unless flags say otherwise;
    the TOFU protocol: a seeded sample and new tokens only, TOFU's total cap on request. details.json
    records what was used."""
    import json

    from unlearnkit.cli import main

    common = ["--model", str(tiny_model_dir), "--data", str(mini_world), "--max-new-tokens", "2"]
    out = tmp_path / "cl"
    args = ["eval", *common, "--protocol", "closer-look", "--embedder", "none", "--nli-model", "none"]
    assert main([*args, "--max-items", "2", "--output", str(out)]) == 0
    recorded = json.loads((out / "details.json").read_text())["eval_settings"]
    assert recorded == {
        "max_items": 2,
        "row_selection": "first",
        "max_new_tokens": 2,
        "max_total_tokens": 200,
        "seed": 0,
    }
    out = tmp_path / "tofu"
    assert main(["eval", *common, "--max-total-tokens", "200", "--output", str(out)]) == 0
    recorded = json.loads((out / "details.json").read_text())["eval_settings"]
    assert recorded["row_selection"] == "sample" and recorded["max_items"] == 400
    assert recorded["max_total_tokens"] == 200


# ------------------------------------------------------------------ log-probability arithmetic


def _float64_logps(logits, labels):
    """log p(label) by hand: float64 log-softmax of the fp32 logits, picked at t - 1 for label t."""
    lp = logits.double().log_softmax(-1)
    return [[float(lp[b, t - 1, int(row[t])]) for t in answer_positions(row)] for b, row in enumerate(labels)]


@pytest.mark.parametrize("vocab", [512, 32000, 128256])
def test_token_logps_against_float64_at_real_vocabularies(vocab):
    """Both paths of unlearnkit/tokens.token_logps vs float64 on peaked fp32 logits (std 4, like a trained
    LM's): the evaluation path within EXACT_LOGP_ATOL at every vocabulary, the fused training path
    within FUSED_LOGP_ATOL (tests/tolerances.py has both derivations and the measurements)."""
    from unlearnkit.tokens import token_logps

    gen = torch.Generator().manual_seed(vocab)
    logits = torch.randn(2, 12, vocab, generator=gen) * 4.0
    labels = torch.randint(0, vocab, (2, 12), generator=gen)
    labels[:, :4] = IGNORE  # a prompt
    labels[1, 9:] = IGNORE  # a shorter answer, then padding
    want = _float64_logps(logits, labels)
    for exact, atol in ((True, EXACT_LOGP_ATOL), (False, FUSED_LOGP_ATOL)):
        logps, mask = token_logps(logits, labels, exact=exact)
        got = [logps[b][mask[b]].tolist() for b in range(2)]
        assert [len(r) for r in got] == [len(r) for r in want] == [8, 5]
        for g, w in zip(got, want):
            assert g == pytest.approx(w, abs=atol, rel=0)
        assert float(logps[~mask].abs().max()) == 0.0  # masked positions are 0


def test_reported_answer_log_probs_take_the_exact_path(world_tokenizer):
    """score_answers (every reported probability, truth ratio and MIA score) at a Llama-3-sized
    vocabulary with peaked logits: each answer token's log-prob within EXACT_LOGP_ATOL of float64 from
    the same forward pass (one unpadded row, so the forward is identical). The fused kernel misses
    this bound here on CPU (measured 1.6e-5), so the test fails if evaluation goes back to it."""
    from transformers import LlamaConfig, LlamaForCausalLM

    from unlearnkit.data.encode import PromptFormat
    from unlearnkit.metrics.passes import score_answers

    torch.manual_seed(0)
    vocab = 128256
    cfg = LlamaConfig(
        vocab_size=vocab,
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=128,
        pad_token_id=world_tokenizer.pad_token_id,
        bos_token_id=world_tokenizer.bos_token_id,
        eos_token_id=world_tokenizer.eos_token_id,
    )
    model = LlamaForCausalLM(cfg).eval()
    q, a = QA[1]
    part = encode(world_tokenizer, [(q, a)])
    with torch.no_grad():
        scale = 4.0 / float(model(input_ids=part["input_ids"]).logits.std())
        model.lm_head.weight.mul_(scale)  # logits of std 4, as a trained model's
        logits = model(input_ids=part["input_ids"], attention_mask=part["attention_mask"]).logits
    want = _float64_logps(logits, part["labels"])[0]
    got = score_answers(model, world_tokenizer, PromptFormat("plain"), [q], [a], per_token=True)
    assert got.token_logps[0] == pytest.approx(want, abs=EXACT_LOGP_ATOL, rel=0)
    assert got.nll_mean[0] == pytest.approx(-np.mean(want), abs=EXACT_LOGP_ATOL, rel=0)
