"""``--device`` / ``--dtype`` / ``--batch-size``, the training precision and ``optim``: how ``auto``
resolves (on this CPU, and on a GPU simulated by replacing what ``unlearnkit.models`` asks CUDA), the
one-line refusals (exit 2), the record in unlearnkit.json / details.json, and evaluation batches
halved after an out-of-memory error."""

from __future__ import annotations

import json

import pytest
import torch

from unlearnkit import models
from unlearnkit.cli import main
from unlearnkit.errors import UserError


@pytest.fixture
def gpu(monkeypatch):
    """Pretend CUDA is there: ``set_gpu(count, bf16)``; the dtype probe is skipped on 'cuda'."""

    def set_gpu(count: int = 1, bf16: bool = True) -> None:
        monkeypatch.setattr(models, "_cuda_state", lambda: (count, bf16))

    set_gpu()
    return set_gpu


def _checkpoint(tmp_path, dtype: str | None):
    folder = tmp_path / f"ckpt-{dtype}"
    folder.mkdir()
    config = {"model_type": "llama"} | ({"dtype": dtype} if dtype else {})
    (folder / "config.json").write_text(json.dumps(config))
    return str(folder)


def test_auto_on_the_cpu_is_float32_as_before(tiny_model_dir, monkeypatch):
    monkeypatch.setattr(models, "_cuda_state", lambda: (0, False))
    p = models.resolve_placement(str(tiny_model_dir))
    assert (p.device, p.dtype, p.precision) == ("cpu", "float32", None)
    t = models.resolve_placement(str(tiny_model_dir), precision="auto")
    assert (t.device, t.dtype, t.precision) == ("cpu", "float32", "fp32")
    assert (
        models.resolve_placement(str(tiny_model_dir), dtype="bfloat16", precision="auto").precision
        == "bf16-true"
    )


def test_auto_on_a_gpu_follows_the_checkpoint(gpu, tmp_path):
    bf16 = _checkpoint(tmp_path, "bfloat16")
    p = models.resolve_placement(bf16)
    assert (p.device, p.dtype) == ("cuda:0", "bfloat16") and "torch_dtype bfloat16" in p.why
    t = models.resolve_placement(bf16, precision="auto")
    assert (t.dtype, t.precision) == ("bfloat16", "bf16-true")  # open-unlearning's torch_dtype: bfloat16
    f32 = models.resolve_placement(_checkpoint(tmp_path, "float32"), precision="auto")
    assert (f32.dtype, f32.precision) == ("float32", "bf16")  # float32 master weights under autocast
    none = models.resolve_placement(_checkpoint(tmp_path, None))
    assert none.dtype == "float32" and "declares no torch_dtype" in none.why
    fp16 = _checkpoint(tmp_path, "float16")
    assert models.resolve_placement(fp16).dtype == "float16"  # evaluation runs it as it is
    assert models.resolve_placement(fp16, precision="auto").dtype == "bfloat16"  # fp16 weights cannot train
    mixed = models.resolve_placement(bf16, precision="bf16")
    assert (mixed.dtype, mixed.precision) == ("float32", "bf16")
    gpu(1, bf16=False)  # a GPU before Ampere: bf16 checkpoints are evaluated in fp16, trained in fp32
    assert models.resolve_placement(bf16).dtype == "float16"
    assert models.resolve_placement(bf16, precision="auto").precision == "fp32"


def test_torchrun_ranks_take_their_own_gpu(gpu, tmp_path, monkeypatch):
    gpu(2)
    monkeypatch.setenv("LOCAL_RANK", "1")
    assert models.resolve_device("auto") == "cuda:1" and models.resolve_device("cuda") == "cuda:1"
    assert models.resolve_device("cuda:0") == "cuda:0"


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"device": "cuda:2"}, "only 1 CUDA GPU(s) visible"),
        ({"dtype": "bfloat16", "precision": "fp32"}, "use --set precision=bf16-true"),
        ({"dtype": "float32", "precision": "bf16-true"}, "--dtype bfloat16 (or auto)"),
        ({"dtype": "float16", "precision": "auto"}, "--dtype float16 cannot be trained"),
        ({"dtype": "int8"}, "--dtype int8: use auto"),
        ({"device": "tpu"}, "--device tpu: use auto, cpu, cuda or cuda:N"),
    ],
)
def test_contradictions_are_one_line_errors(gpu, tmp_path, kwargs, message):
    with pytest.raises(UserError, match=message.replace("(", r"\(").replace(")", r"\)")):
        models.resolve_placement(_checkpoint(tmp_path, "bfloat16"), **kwargs)


def test_bf16_on_a_gpu_without_it_is_refused(gpu, tmp_path):
    gpu(1, bf16=False)
    with pytest.raises(UserError, match="does not support bfloat16"):
        models.resolve_placement(_checkpoint(tmp_path, None), dtype="bfloat16")


def _one_error_line(capsys) -> str:
    err = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert len(err) == 1, err
    return err[0]


def test_cli_cuda_where_there_is_none_exits_2_in_one_line(tiny_model_dir, mini_world, tmp_path, capsys):
    if torch.cuda.is_available():
        pytest.skip("a GPU is visible: the refusal is for machines without one")
    out = tmp_path / "eval"
    argv = ["eval", "--model", str(tiny_model_dir), "--data", str(mini_world), "--output", str(out)]
    assert main([*argv, "--device", "cuda"]) == 2
    assert "--device cuda: no CUDA GPU is visible" in _one_error_line(capsys)
    assert not out.exists()
    for cmd in (
        ["unlearn", "--model", str(tiny_model_dir), "--data", str(mini_world), "--method", "npo"],
        ["finetune", "--model", str(tiny_model_dir), "--data", str(mini_world)],
    ):
        assert main([*cmd, "--output", str(out), "--device", "cuda:0"]) == 2
        assert "no CUDA GPU is visible" in _one_error_line(capsys)
        assert not out.exists()


def test_cli_rejects_a_bad_batch_size_and_device_before_loading(tiny_model_dir, mini_world, tmp_path, capsys):
    argv = [
        "eval",
        "--model",
        str(tiny_model_dir),
        "--data",
        str(mini_world),
        "--output",
        str(tmp_path / "e"),
    ]
    assert main([*argv, "--batch-size", "0"]) == 2
    assert "--batch-size 0: must be >= 1" in _one_error_line(capsys)
    assert main([*argv, "--device", "gpu"]) == 2
    assert "--device gpu: use auto, cpu, cuda or cuda:N" in _one_error_line(capsys)


def test_optimiser_names_match_transformers():
    from transformers.training_args import OptimizerNames

    from unlearnkit.config import OPTIMIZERS

    assert set(OPTIMIZERS) == {o.value for o in OptimizerNames}


def test_optim_is_checked_and_passed_to_the_trainer(tmp_path):
    import importlib.util

    from unlearnkit.config import TrainConfig
    from unlearnkit.train.trainer import training_arguments

    args = training_arguments(TrainConfig(optim="adamw_torch", report_to="none"), str(tmp_path), 8)
    assert str(getattr(args.optim, "value", args.optim)) == "adamw_torch"
    with pytest.raises(UserError, match="did you mean adamw_torch_fused"):
        TrainConfig(optim="adamw_torch_fusd")
    if importlib.util.find_spec("bitsandbytes") is None:
        with pytest.raises(UserError, match=r"needs bitsandbytes.*unlearnkit\[bnb\]"):
            TrainConfig(optim="paged_adamw_32bit")


def test_cli_missing_optimiser_package_names_the_extra(tiny_model_dir, mini_world, tmp_path, capsys):
    import importlib.util

    if importlib.util.find_spec("bitsandbytes") is not None:
        pytest.skip("bitsandbytes is installed here")
    out = tmp_path / "u"
    argv = ["unlearn", "--model", str(tiny_model_dir), "--data", str(mini_world), "--method", "npo"]
    assert main([*argv, "--output", str(out), "--set", "optim=paged_adamw_8bit"]) == 2
    line = _one_error_line(capsys)
    assert "needs bitsandbytes" in line and "unlearnkit[bnb]" in line
    assert not out.exists()


def test_in_batches_halves_after_out_of_memory(capsys):
    from unlearnkit.metrics.passes import OUT_OF_MEMORY, in_batches

    seen: list[list[int]] = []

    def run(idx):
        if len(idx) > 3:
            raise OUT_OF_MEMORY("CUDA out of memory")
        seen.append(idx)

    assert in_batches(list(range(10)), 8, run) == 2  # 8 -> 4 -> 2, then kept
    assert [i for idx in seen for i in idx] == list(range(10))  # every item once, in order
    assert "out of memory at batch size 8; retrying at 4" in capsys.readouterr().err

    def never(idx):
        raise OUT_OF_MEMORY("CUDA out of memory")

    with pytest.raises(OUT_OF_MEMORY):
        in_batches([0, 1], 2, never)


def test_scores_after_halving_equal_a_smaller_batch(make_tiny_llama, world_tokenizer, mini_bench):
    """A model that runs out of memory on batches of more than 2 scores exactly as batch size 2 does."""
    from unlearnkit.data.encode import PromptFormat
    from unlearnkit.metrics.passes import OUT_OF_MEMORY, score_answers

    model = make_tiny_llama().eval()
    fmt = PromptFormat.for_tokenizer(world_tokenizer, "plain")
    rows = mini_bench.forget[:7]
    qs, ans = [r["question"] for r in rows], [r["answer"] for r in rows]
    want = score_answers(model, world_tokenizer, fmt, qs, ans, batch_size=2, per_token=True)
    forward = model.forward

    def small_batches_only(*args, **kwargs):
        if kwargs["input_ids"].shape[0] > 2:
            raise OUT_OF_MEMORY("CUDA out of memory")
        return forward(*args, **kwargs)

    model.forward = small_batches_only
    got = score_answers(model, world_tokenizer, fmt, qs, ans, batch_size=32, per_token=True)
    assert got.nll_mean == want.nll_mean and got.token_logps == want.token_logps


def test_eval_records_and_prints_its_placement(tiny_model_dir, mini_world, tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)  # --device cpu sets it: undone after
    out = tmp_path / "eval"
    argv = ["eval", "--model", str(tiny_model_dir), "--data", str(mini_world), "--output", str(out)]
    assert (
        main([*argv, "--max-items", "4", "--max-new-tokens", "2", "--batch-size", "3", "--device", "cpu"])
        == 0
    )
    placement = json.loads((out / "details.json").read_text())["placement"]
    assert placement["device"] == "cpu" and placement["dtype"] == "float32" and placement["batch_size"] == 3
    assert placement["asked"] == {"device": "cpu", "dtype": "auto"}
    lines = [x for x in capsys.readouterr().err.splitlines() if x.startswith("unlearnkit: device ")]
    assert lines == ["unlearnkit: device cpu, dtype float32, batch size 3 (dtype auto: float32 on the CPU)"]


def test_training_records_its_choices_and_log_history(tiny_model_dir, mini_world, tmp_path, capsys):
    out = tmp_path / "npo"
    argv = ["unlearn", "--model", str(tiny_model_dir), "--data", str(mini_world), "--method", "npo"]
    sets = ["--set", "max_steps=2", "--set", "batch_size=4", "--set", "grad_accum=1", "--no-collapse-guard"]
    assert main([*argv, "--output", str(out), *sets, "--set", "optim=adamw_torch"]) == 0
    card = json.loads((out / "unlearnkit.json").read_text())
    assert card["placement"]["device"] == "cpu" and card["placement"]["dtype"] == "float32"
    assert card["placement"]["precision"] == "fp32" and card["placement"]["optim"] == "adamw_torch"
    assert card["placement"]["gradient_checkpointing"] is False and card["placement"]["report_to"] == "none"
    history = json.loads((out / "log_history.json").read_text())
    assert any("loss" in entry for entry in history)
    assert (out / "loss.png").read_bytes()[:4] == b"\x89PNG"
    line = [x for x in capsys.readouterr().err.splitlines() if x.startswith("unlearnkit: device ")]
    assert line == [
        "unlearnkit: device cpu, dtype float32, precision fp32, optim adamw_torch, gradient checkpointing off "
        "(dtype auto: float32 on the CPU)"
    ]
