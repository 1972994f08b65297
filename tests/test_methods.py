"""Every registered method runs through the real trainer for a few steps on a tiny random Llama."""

from __future__ import annotations

import copy
import math

import pytest
import torch

from unlearnkit.errors import UserError
from unlearnkit.train.methods import METHODS, get_method

FAST = dict(max_steps=2, batch_size=4, grad_accum=1, lr=1e-2, max_length=128, warmup_epochs=0.0)
RMU_TINY = dict(layer=1, train_layers="0,1")


def _overrides(name: str) -> dict:
    extra = RMU_TINY if "rmu" in name else {}
    if "asu" in name:
        extra = {**extra, "tau": 3.0}
    return {**FAST, **extra}


@pytest.mark.parametrize("name", sorted(METHODS))
def test_method_runs_and_changes_weights(name, tiny_random_llama, world_tokenizer, mini_bench, tmp_path):
    from unlearnkit.pipelines.unlearn import unlearn

    model = tiny_random_llama
    before = {k: v.detach().clone() for k, v in model.state_dict().items()}
    result = unlearn(
        model,
        world_tokenizer,
        mini_bench.forget,
        mini_bench.retain,
        name,
        work_dir=tmp_path / "run",
        quiet=True,
        **_overrides(name),
    )
    losses = [h["loss"] for h in result.log_history if "loss" in h]
    assert losses and all(math.isfinite(x) for x in losses)
    after = result.model.state_dict()
    changed = [k for k in before if not torch.equal(before[k], after[k])]
    assert changed, f"{name}: no parameter changed"
    if "rmu" in name:
        # RMU trains only the MLP down-projections of the listed layers
        assert all("mlp.down_proj" in k for k in changed), changed


@pytest.mark.parametrize("reference", ["copy", "cache"])
def test_adaptive_rmu_scales_its_target_with_the_activation_norm(
    reference, tiny_random_llama, world_tokenizer, mini_bench, tmp_path
):
    """Adaptive RMU (arXiv 2408.06223): ``c`` = steering_scale x the frozen model's mean layer-output norm
    on the forget batch, logged as ``rmu_coeff``. One batch holds every forget row, so ``c / scale`` is the
    mean over rows of each row's mean answer-token norm, computed here with a forward hook; the cached
    reference gives what the copy gives."""
    from unlearnkit.pipelines.unlearn import unlearn

    n = len(mini_bench.forget)
    coeffs = {}
    for scale in (2.5, 5.0):
        result = unlearn(
            copy.deepcopy(tiny_random_llama),  # each run starts from the same frozen model
            world_tokenizer,
            mini_bench.forget,
            mini_bench.retain,
            "rmu",
            work_dir=tmp_path / f"run{scale}",
            quiet=True,
            steering_scale=scale,
            reference=reference,
            **{**_overrides("rmu"), "batch_size": n, "max_steps": 1},
        )
        coeffs[scale] = [h["rmu_coeff"] for h in result.log_history if "rmu_coeff" in h]
    assert len(coeffs[5.0]) == 1
    per_row = _answer_norms(tiny_random_llama, world_tokenizer, mini_bench.forget, layer=1)
    expected = sum(per_row) / len(per_row)
    assert coeffs[5.0][0] == pytest.approx(5.0 * expected, rel=1e-3)
    assert coeffs[2.5][0] == pytest.approx(2.5 * expected, rel=1e-3)
    # another layer's norm is not what is used (the check can tell layers apart)
    other = _answer_norms(tiny_random_llama, world_tokenizer, mini_bench.forget, layer=0)
    assert sum(other) / len(other) != pytest.approx(expected, rel=1e-3)


def _answer_norms(model, tokenizer, rows, layer: int) -> list[float]:
    """Per row: the mean L2 norm of decoder layer ``layer``'s output at the answer tokens (EOS included)."""
    from unlearnkit.data.encode import PromptFormat, encode_qa

    fmt = PromptFormat.for_tokenizer(tokenizer, "auto")
    seen = {}
    hook = model.model.layers[layer].register_forward_hook(
        lambda _m, _i, out: seen.__setitem__("h", out[0] if isinstance(out, tuple) else out)
    )
    norms = []
    try:
        with torch.no_grad():
            for row in rows:
                enc = encode_qa(tokenizer, fmt, row["question"], row["answer"], 128)
                model(input_ids=torch.tensor([enc["input_ids"]]))
                norms.append(float(seen["h"][0, enc["prompt_len"] :].norm(dim=-1).mean()))
    finally:
        hook.remove()
    return norms


def test_token_variant_records_attribution(tiny_random_llama, world_tokenizer, mini_bench, tmp_path):
    from unlearnkit.pipelines.unlearn import unlearn

    result = unlearn(
        tiny_random_llama,
        world_tokenizer,
        mini_bench.forget,
        mini_bench.retain,
        "t-npo",
        work_dir=tmp_path / "run",
        attribution_dir=tmp_path / "attr",
        quiet=True,
        r=0.5,
        **FAST,
    )
    info = result.attribution
    assert info["selection"] == "hard"
    assert 0.5 <= info["mean_selected_fraction"] <= 0.75  # ceil(r*T) of short answers
    assert (tmp_path / "attr" / "scores.jsonl").is_file() and (tmp_path / "attr" / "heatmap.html").is_file()


def test_unknown_method_suggests_nearest():
    with pytest.raises(UserError, match="did you mean 'npo'"):
        get_method("nppo")


def test_t_and_s_aliases_with_underscores():
    assert get_method("T_NPO").name == "t-npo"
    assert get_method("s_asu").config().selection == "soft"


def test_asu_raw_text_mode_targets_every_token(world_tokenizer, mini_bench):
    from unlearnkit.data.encode import PromptFormat
    from unlearnkit.train.trainer import encode_rows

    fmt = PromptFormat.for_tokenizer(world_tokenizer)
    row = mini_bench.forget[0]
    enc = encode_rows([{"text": f"{row['question']} {row['answer']}"}], world_tokenizer, fmt, 128)[0]
    assert all(label != -100 for label in enc["labels"])  # every token, prompt included, is a target


def test_asu_raw_text_runs_on_qa_rows(tiny_random_llama, world_tokenizer, mini_bench, tmp_path):
    from unlearnkit.pipelines.unlearn import unlearn

    result = unlearn(
        tiny_random_llama,
        world_tokenizer,
        mini_bench.forget,
        mini_bench.retain,
        "asu",
        work_dir=tmp_path / "run",
        quiet=True,
        raw_text=True,
        tau=3.0,
        **FAST,
    )
    assert all(math.isfinite(h["loss"]) for h in result.log_history if "loss" in h)


@pytest.mark.parametrize(
    ("token_method", "base", "extra"),
    [
        ("t-npo", "npo", {"r": 1.0}),
        ("s-npo", "npo", {"tau_w": 1e9}),
        ("t-ga", "ga", {"r": 1.0}),
    ],
)
def test_token_variants_reduce_to_their_base(
    token_method, base, extra, make_tiny_llama, world_tokenizer, mini_bench, tmp_path
):
    """r = 1 (hard) and tau_w -> infinity (soft) give uniform weights: the sequence-level objective exactly."""
    from unlearnkit.pipelines.unlearn import unlearn

    model = make_tiny_llama

    common = {**FAST, "max_steps": 3, "retain_loss": "nll", "reference": "copy"}
    if base == "ga":
        common["retain_loss"] = "none"
    a = unlearn(
        model(),
        world_tokenizer,
        mini_bench.forget,
        mini_bench.retain,
        base,
        work_dir=tmp_path / "a",
        quiet=True,
        **common,
    )
    b = unlearn(
        model(),
        world_tokenizer,
        mini_bench.forget,
        mini_bench.retain,
        token_method,
        work_dir=tmp_path / "b",
        quiet=True,
        **common,
        **extra,
    )
    la = [h["forget_loss"] for h in a.log_history if "forget_loss" in h]
    lb = [h["forget_loss"] for h in b.log_history if "forget_loss" in h]
    assert la and la == pytest.approx(lb, rel=1e-5)
    for (name, p), q in zip(a.model.named_parameters(), b.model.parameters()):
        assert torch.allclose(p, q, atol=1e-6), name


def test_long_raw_text_is_cut_into_windows(world_tokenizer):
    from unlearnkit.data.encode import encode_text

    text = " ".join(["Velmir is the capital of Pesh."] * 40)
    windows = encode_text(world_tokenizer, text, max_length=32)
    whole = world_tokenizer(text, add_special_tokens=True)["input_ids"]
    assert len(windows) > 1 and all(len(w["input_ids"]) <= 32 for w in windows)
    assert all(w["input_ids"][0] == world_tokenizer.bos_token_id for w in windows)
    # every token of the passage is a target exactly once, in order
    assert [t for w in windows for t in w["labels"][1:]] == whole[1:]


def test_idk_methods_refuse_raw_text(tiny_random_llama, world_tokenizer, mini_bench, tmp_path):
    from unlearnkit.pipelines.unlearn import unlearn

    with pytest.raises(UserError, match="needs question/answer rows"):
        unlearn(
            tiny_random_llama,
            world_tokenizer,
            [{"text": "Velmir is the capital of Pesh."}],
            mini_bench.retain,
            "idk",
            work_dir=tmp_path / "run",
            quiet=True,
            **FAST,
        )


def test_gradient_guard_stops_before_a_non_finite_update(tiny_random_llama):
    from types import SimpleNamespace

    from unlearnkit.train.trainer import DivergenceError, FiniteGradientGuard

    guard = FiniteGradientGuard("ga")
    state = SimpleNamespace(global_step=3)
    for p in tiny_random_llama.parameters():
        p.grad = torch.ones_like(p)
    guard.on_pre_optimizer_step(None, state, None, model=tiny_random_llama)  # finite: no error
    name, param = next((n, p) for n, p in tiny_random_llama.named_parameters() if "down_proj" in n)
    param.grad[0, 0] = float("nan")
    with pytest.raises(DivergenceError, match=rf"gradient of '{name}' is not finite at step 4"):
        guard.on_pre_optimizer_step(None, state, None, model=tiny_random_llama)
