"""``unlearnkit unlearn`` under ``torchrun --nproc_per_node 2`` (gloo on CPU).

Both ranks must end with identical weights (``UNLEARNKIT_DEBUG_CHECKSUMS`` makes every rank write a
SHA-256 of its parameters), and the run must match a single-process run over the same global batch:
full-batch steps (12 forget examples: 1 process x 12 or 2 ranks x 6) see the same examples and the
same retain partners, so the results differ only by float summation order. Stated tolerance: every
weight within 1e-5 (the update itself is ~1e-3) and forget / retain NLL within 1e-4 relative.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import torch

COMMON = ["--set", "grad_accum=1", "--set", "max_steps=3", "--set", "warmup_epochs=0"]


def _env(checksums=None) -> dict:
    env = dict(os.environ, OMP_NUM_THREADS="1", TOKENIZERS_PARALLELISM="false")
    env.pop("WORLD_SIZE", None)
    if checksums is not None:
        env["UNLEARNKIT_DEBUG_CHECKSUMS"] = str(checksums)
    return env


def _unlearn(model, data, out, extra, nproc: int = 1, checksums=None):
    launcher = [sys.executable]
    if nproc > 1:
        launcher += ["-m", "torch.distributed.run", "--standalone", "--nproc_per_node", str(nproc)]
    cmd = [*launcher, "-m", "unlearnkit.cli", "unlearn", "--model", str(model), "--data", str(data)]
    cmd += ["--output", str(out), *COMMON, *extra]
    proc = subprocess.run(cmd, env=_env(checksums), capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc


def _ranks(folder) -> list[dict]:
    rows = [json.loads(p.read_text()) for p in sorted(folder.glob("rank*.json"))]
    assert [r["rank"] for r in rows] == [0, 1] and all(r["world_size"] == 2 for r in rows), rows
    return rows


def _nll(model_dir, bench) -> dict[str, float]:
    from unlearnkit.data.encode import PromptFormat, pad_batch, pad_id_of
    from unlearnkit.models import load
    from unlearnkit.tokens import nll_per_sequence
    from unlearnkit.train.trainer import encode_rows

    model, tok = load(str(model_dir))
    fmt = PromptFormat.for_tokenizer(tok)
    out = {}
    for split in ("forget", "retain"):
        batch = pad_batch(encode_rows(bench.split(split), tok, fmt, 128), pad_id_of(tok))
        with torch.no_grad():
            logits = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits
        out[split] = float(nll_per_sequence(logits, batch["labels"])[0].mean())
    return out


def _weights(model_dir) -> dict[str, torch.Tensor]:
    from safetensors.torch import load_file

    return load_file(str(model_dir / "model.safetensors"))


def test_torchrun_two_ranks_match_single_process(tiny_model_dir, mini_world, mini_bench, tmp_path):
    assert len(mini_bench.forget) == 12  # 1 x 12 == 2 x 6: the same full batch every step
    # NPO + KL retain with reference=auto: the reference cache is built on every rank.
    extra = ["--method", "npo", "--set", "retain_loss=kl", "--set", "lr=1e-3"]
    _unlearn(tiny_model_dir, mini_world, tmp_path / "single", [*extra, "--set", "batch_size=12"])
    _unlearn(
        tiny_model_dir,
        mini_world,
        tmp_path / "ddp",
        [*extra, "--set", "batch_size=6"],
        nproc=2,
        checksums=tmp_path / "ranks",
    )
    ranks = _ranks(tmp_path / "ranks")
    assert ranks[0]["sha256"] == ranks[1]["sha256"] and ranks[0]["global_step"] == 3

    single, ddp, base = _weights(tmp_path / "single"), _weights(tmp_path / "ddp"), _weights(tiny_model_dir)
    moved = max(float((single[k] - base[k]).abs().max()) for k in base)
    diff = max(float((single[k] - ddp[k]).abs().max()) for k in base)
    assert moved > 1e-4 and diff < 1e-5, (moved, diff)
    m_single, m_ddp = _nll(tmp_path / "single", mini_bench), _nll(tmp_path / "ddp", mini_bench)
    for split, value in m_single.items():
        assert abs(m_ddp[split] - value) <= 1e-4 * abs(value), (split, m_ddp[split], value)


def test_torchrun_lora_adapter_reference(tiny_model_dir, mini_world, tmp_path):
    """LoRA + reference=adapter (the base under DDP with adapters off): identical ranks, merged output."""
    from transformers import AutoModelForCausalLM

    extra = ["--method", "asu_kl", "--set", "lora_r=4", "--set", "lr=1e-2", "--set", "batch_size=6"]
    _unlearn(tiny_model_dir, mini_world, tmp_path / "out", extra, nproc=2, checksums=tmp_path / "ranks")
    ranks = _ranks(tmp_path / "ranks")
    assert ranks[0]["sha256"] == ranks[1]["sha256"]
    model = AutoModelForCausalLM.from_pretrained(str(tmp_path / "out"))
    assert not any("lora" in name for name in model.state_dict())


@pytest.mark.parametrize("module", ["unlearnkit.cli"])
def test_cli_runs_as_module(module):
    proc = subprocess.run(
        [sys.executable, "-m", module, "methods"], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0 and "npo" in proc.stdout
