"""The architecture matrix: every method family trains on every architecture transformers has
of Llama, Mistral, Qwen2, Qwen3, Gemma 3, Phi-3, OLMo-2 and GPT-2; unsupported ones are refused in one line.

The runs are bench/architectures.py's (the script that prints the matrix into docs/SCALING.md), here
with assertions. The teacher-attention check of every architecture against the hand-written softmax
lives in tests/test_attention.py (``test_teacher_attention_is_a_hand_written_softmax_at_tau``).
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pytest
from tiny_models import ARCHITECTURES, REFUSED_FOR_ASU, random_causal_lm
from tolerances import SAME_QK_PROBS_ATOL

from unlearnkit.errors import UserError

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "bench"))
import architectures as matrix  # noqa: E402

sys.path.remove(str(REPO / "bench"))


@pytest.mark.parametrize("family", list(matrix.FAMILIES))
@pytest.mark.parametrize("arch", list(ARCHITECTURES))
def test_every_family_trains_on_every_architecture(arch, family, world_tokenizer, mini_bench, tmp_path):
    run = matrix.run_family(arch, family, world_tokenizer, mini_bench, tmp_path)
    assert run["steps"] == matrix.RUN["max_steps"] and len(run["losses"]) == matrix.RUN["max_steps"]
    assert all(math.isfinite(x) for x in run["losses"]), run
    if family == "lora":  # adapters start at B = 0: they trained; the base weights did not move at all
        assert run["lora_b_moved"] > 0 and run["base_changed"] == 0.0, run
    else:
        assert run["moved"] > 0, run
    if family in ("npo", "asu_kl", "rmu"):  # the reference / teacher was set up on this architecture
        assert run["reference"] in ("cache", "copy"), run
    if family == "t-npo":  # TokenUnlearn's attribution scored every forget example
        assert run["attribution_rows"] == matrix.N_ROWS and 0 < run["selected_fraction"] <= 1, run


@pytest.mark.parametrize("arch", list(ARCHITECTURES))
def test_unlearn_output_loads_in_plain_transformers(arch, world_tokenizer, mini_world, tmp_path, capsys):
    out = matrix.save_and_reload(arch, world_tokenizer, mini_world, tmp_path)
    assert out["exit_code"] == 0, capsys.readouterr().err
    assert out["class"] == type(random_causal_lm(arch, world_tokenizer)).__name__
    assert out["same_keys"] and out["finite"] and out["changed"] > 0, out


def test_rmu_layers_are_the_decoder_blocks_whatever_their_name(world_tokenizer):
    """train_layers=1 means the second decoder block: model.layers.1 (Llama) or transformer.h.1 (GPT-2)."""
    from unlearnkit.catalog import RMUConfig
    from unlearnkit.objectives.rmu import freeze_except_rmu_params

    for arch, module in (("llama", "mlp.down_proj"), ("gpt2", "mlp.c_proj")):
        model = random_causal_lm(arch, world_tokenizer)
        freeze_except_rmu_params(model, RMUConfig(layer=1, train_layers="1", train_modules=module))
        trainable = sorted(n for n, p in model.named_parameters() if p.requires_grad)
        prefix = "model.layers.1." if arch == "llama" else "transformer.h.1."
        assert trainable and all(n.startswith(prefix + module) for n in trainable), trainable


@pytest.mark.parametrize("arch", list(REFUSED_FOR_ASU))
def test_asu_refused_in_one_line_where_attention_cannot_be_smoothed(
    arch, world_tokenizer, mini_bench, tmp_path
):
    message = matrix.refusal(arch, world_tokenizer, mini_bench, tmp_path)
    assert message is not None and "\n" not in message
    assert message.startswith("--method asu_kl needs the attention-smoothed teacher, but ")
    assert type(random_causal_lm(arch, world_tokenizer)).__name__ in message
    reason = {"bloom": "outside transformers' AttentionInterface", "mamba": "no attention function to smooth"}
    assert reason[arch] in message and "use a method without a smoothed teacher" in message
    assert not (tmp_path / "run").exists()  # refused before any work: no work folder
    run = matrix.run_family(arch, "npo", world_tokenizer, mini_bench, tmp_path / "npo")  # the rest runs
    assert run["steps"] == 2 and run["moved"] > 0


def test_model_without_attention_calls_refused_by_the_forward_probe(world_tokenizer, monkeypatch):
    """set_attn_implementation accepts the new name, but no layer calls the attention function: without
    the probe forward the teacher would silently be the original model."""
    from unlearnkit.attention import check_smoothable

    model = random_causal_lm("llama", world_tokenizer)
    for layer in model.model.layers:  # attention output replaced by zeros: never calls the interface
        monkeypatch.setattr(
            layer.self_attn, "forward", lambda hidden_states, *a, **k: (hidden_states * 0, None)
        )
    with pytest.raises(
        UserError, match="LlamaForCausalLM ran a forward pass without any self-attention call"
    ):
        check_smoothable(model)
    assert check_smoothable(random_causal_lm("gemma3", world_tokenizer)) == 2  # one call per layer


def test_rmu_refused_when_no_decoder_layers_are_found(world_tokenizer, mini_bench, tmp_path):
    from torch import nn

    from unlearnkit.pipelines.unlearn import unlearn

    model = random_causal_lm("llama", world_tokenizer)
    model.model.layers = nn.Sequential(*model.model.layers)  # not a ModuleList: RMU cannot hook "layer 0"
    with pytest.raises(UserError) as err:
        unlearn(
            model,
            world_tokenizer,
            mini_bench.forget[:2],
            mini_bench.retain[:2],
            "rmu",
            work_dir=tmp_path / "w",
        )
    assert str(err.value).startswith(
        "--method rmu reads a decoder layer's activations, but unlearnkit cannot find"
    )
    assert "LlamaForCausalLM" in str(err.value) and not (tmp_path / "w").exists()


def test_gradient_checkpointing_refused_where_transformers_has_none(world_tokenizer, mini_bench, tmp_path):
    from transformers import AutoModelForCausalLM, CTRLConfig

    from unlearnkit.pipelines.unlearn import unlearn

    cfg = CTRLConfig(vocab_size=len(world_tokenizer), n_embd=16, n_layer=2, n_head=4, dff=32)
    model = AutoModelForCausalLM.from_config(cfg)
    assert not model.supports_gradient_checkpointing
    with pytest.raises(UserError, match="gradient_checkpointing=true: CTRLLMHeadModel does not implement"):
        unlearn(
            model,
            world_tokenizer,
            mini_bench.forget[:2],
            mini_bench.retain[:2],
            "ga",
            work_dir=tmp_path / "w",
            gradient_checkpointing=True,
        )


def test_lora_target_that_does_not_exist_names_the_linear_layers(world_tokenizer, mini_bench, tmp_path):
    from unlearnkit.pipelines.unlearn import unlearn

    model = random_causal_lm("gpt2", world_tokenizer)
    with pytest.raises(UserError) as err:
        unlearn(
            model,
            world_tokenizer,
            mini_bench.forget[:2],
            mini_bench.retain[:2],
            "ga",
            work_dir=tmp_path / "w",
            lora_r=4,
            lora_target="q_proj,v_proj",
        )
    message = str(err.value)
    assert message.startswith("--set lora_target=q_proj,v_proj: GPT2LMHeadModel has no such modules")
    assert "c_attn" in message and "lora_target=all-linear" in message


def test_scaling_md_holds_this_scripts_matrix():
    """docs/SCALING.md's table is bench/architectures.py's rendering of its results, for every architecture
    and family these tests run (re-run the script after changing either)."""
    import json

    results = json.loads((matrix.RESULTS / "architectures.json").read_text(encoding="utf-8"))
    assert list(results["architectures"]) == list(ARCHITECTURES)
    assert list(results["refused"]) == list(REFUSED_FOR_ASU)
    assert results["families"] == list(matrix.FAMILIES)
    scaling = matrix.SCALING.read_text(encoding="utf-8")
    assert matrix.synced(scaling, matrix.render(results)) == scaling, "run python bench/architectures.py"
    assert "FAILED" not in scaling and "NOT REFUSED" not in scaling and "B stayed 0" not in scaling
    for row in results["architectures"].values():
        assert row["teacher_max_diff"] < SAME_QK_PROBS_ATOL and row["reload"]["same_keys"]
