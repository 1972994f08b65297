"""``unlearn()``: the library entry point behind ``unlearnkit unlearn`` and the quickstart.

Order of work: validate the config, encode the data (fails before any training on a bad row),
compute TokenUnlearn scores with the original model when the method is token-level, set up the
reference / teacher, then run the ``UnlearnTrainer``.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from unlearnkit.config import build_configs, config_dict
from unlearnkit.data.encode import PromptFormat, pad_id_of
from unlearnkit.errors import UserError
from unlearnkit.methods import Method, get_method
from unlearnkit.objectives.idk import idk_answer
from unlearnkit.reference import AdapterReference, CopyReference
from unlearnkit.trainer import (
    EpochCallback,
    PaddingCollator,
    PairedDataset,
    UnlearnTrainer,
    encode_rows,
    training_arguments,
)

log = logging.getLogger(__name__)


@dataclass
class UnlearnResult:
    model: torch.nn.Module
    method: str
    config: dict[str, Any]
    train_loss: float
    log_history: list[dict] = field(default_factory=list)
    attribution: dict[str, Any] | None = None


def resolve_configs(method: str | Method, overrides: dict[str, Any] | None = None):
    m = get_method(method) if isinstance(method, str) else method
    train_cfg, method_cfg = build_configs(m.config, dict(overrides or {}))
    return m, train_cfg, method_cfg


def _apply_lora(model, cfg):
    from peft import LoraConfig, get_peft_model

    target = (
        cfg.lora_target
        if cfg.lora_target == "all-linear"
        else [t.strip() for t in cfg.lora_target.split(",")]
    )
    lora = LoraConfig(
        r=cfg.lora_r,
        lora_alpha=cfg.lora_alpha,
        lora_dropout=cfg.lora_dropout,
        target_modules=target,
        task_type="CAUSAL_LM",
    )
    return get_peft_model(model, lora)


def _reference(strategy: str, model, model_path: str | None, is_peft: bool):
    if strategy == "auto":
        strategy = "adapter" if is_peft else "copy"
    if strategy == "adapter":
        if not is_peft:
            raise UserError("--set reference=adapter needs LoRA: add --set lora_r=8 (or use reference=copy)")
        return AdapterReference(model)
    if strategy == "copy":
        from unlearnkit.models import load_model

        # A frozen copy loaded from the original checkpoint; an in-memory model without a path is
        # snapshotted instead (documented cost: a second set of weights either way).
        frozen = load_model(model_path) if model_path else copy.deepcopy(model)
        frozen.to(next(model.parameters()).device)
        return CopyReference(frozen, policy=model)
    raise UserError(f"--set reference={strategy}: not available here yet; use copy or adapter")


def unlearn(
    model,
    tokenizer,
    forget: Sequence[dict],
    retain: Sequence[dict],
    method: str = "asu",
    *,
    model_path: str | None = None,
    work_dir: str | Path = "unlearnkit_run",
    resume: bool = False,
    quiet: bool = False,
    attribution_dir: str | Path | None = None,
    **overrides: Any,
) -> UnlearnResult:
    """Unlearn ``forget`` from ``model`` while keeping ``retain``; returns the updated model.

    ``overrides`` are config keys (``lr=1e-5``, ``tau=2.3``, ``lambda=0.1`` ...), validated like ``--set``.
    """
    m, train_cfg, method_cfg = resolve_configs(method, overrides)
    if not forget:
        raise UserError("the forget set is empty: there is nothing to unlearn")
    fmt = PromptFormat.for_tokenizer(tokenizer, train_cfg.prompt_format)
    forget_enc = encode_rows(forget, tokenizer, fmt, train_cfg.max_length, where="forget")
    retain_enc = encode_rows(retain, tokenizer, fmt, train_cfg.max_length, where="retain")
    idk_enc = None
    if m.needs_idk(method_cfg):
        refusals = [{**r, "answer": idk_answer(train_cfg.seed, i)} for i, r in enumerate(forget)]
        idk_enc = encode_rows(refusals, tokenizer, fmt, train_cfg.max_length, where="forget")

    attribution = None
    if m.token_level:
        from unlearnkit.tokenweights import attach_token_weights

        attribution = attach_token_weights(
            model, tokenizer, fmt, forget, forget_enc, method_cfg, train_cfg, attribution_dir, quiet=quiet
        )

    torch.manual_seed(train_cfg.seed)
    if train_cfg.gradient_checkpointing and hasattr(model, "gradient_checkpointing_enable"):
        model.config.use_cache = False
    is_peft = train_cfg.lora_r > 0
    if is_peft:
        model = _apply_lora(model, train_cfg)
    reference = (
        _reference(train_cfg.reference, model, model_path, is_peft) if m.needs_reference(method_cfg) else None
    )

    dataset = PairedDataset(forget_enc, retain_enc, idk_enc, seed=train_cfg.seed)
    args = training_arguments(train_cfg, str(work_dir), len(dataset), quiet=quiet)
    trainer = UnlearnTrainer(
        model=model,
        args=args,
        train_dataset=dataset,
        data_collator=PaddingCollator(pad_id_of(tokenizer)),
        method=m,
        method_config=method_cfg,
        reference=reference,
        callbacks=[EpochCallback(dataset)],
    )
    if quiet:
        from transformers.trainer_callback import PrinterCallback, ProgressCallback

        trainer.remove_callback(ProgressCallback)
        trainer.remove_callback(PrinterCallback)
    out = trainer.train(resume_from_checkpoint=_last_checkpoint(work_dir) if resume else None)
    model = trainer.model
    if is_peft and train_cfg.lora_save == "merged":
        model = model.merge_and_unload()
    model.eval()
    cfg = {"method": m.name, **config_dict(train_cfg, method_cfg)}
    return UnlearnResult(
        model, m.name, cfg, float(out.training_loss), list(trainer.state.log_history), attribution
    )


def _last_checkpoint(work_dir: str | Path) -> str | None:
    from transformers.trainer_utils import get_last_checkpoint

    work_dir = Path(work_dir)
    if not work_dir.is_dir():
        return None
    return get_last_checkpoint(str(work_dir))
