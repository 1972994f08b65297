"""UNDO: unlearn, noise, distill (Lee et al., NeurIPS 2025, arXiv 2506.06278, "Distillation Robustifies
Unlearning").

Unlearning methods suppress knowledge without removing it: a few fine-tuning steps on part of the
forget set bring it all back (the audit's relearning attack). UNDO (1) takes the unlearned model as a
teacher, (2) *noises* its weights toward a fresh initialisation (shrink-and-perturb, Ash & Adams,
arXiv 1910.08475): theta_s = (1 - alpha) * theta_teacher + alpha * theta_init, and (3) *distills* the
teacher's output distributions back into that student, on ordinary data. What the teacher only
suppresses is not in its outputs, so the student never learns it; alpha trades compute (a noisier
student has more to relearn) for robustness (alpha = 1 is a fresh student, the paper's closest match
to retraining, at 60-80 % of its compute).

Here: the target is the teacher's full-vocabulary distribution on the answer tokens of the benchmark's
questions (``distill_on``, default retain + general), the loss the forward KL(p_teacher || p_student)
of ``unlearnkit.objectives.forward_kl_loss``, plus ``retain_nll_weight`` x NLL on the true answers of
those rows (without it the student inherits the teacher's utility loss and does not finish learning:
issue 11's probe kept only 0.49-0.59x the oracle's utility). The teacher's outputs come from the
reference machinery: a cache computed once before training (the teacher's weights then become the
student's, so only one model is in memory), else a frozen copy. Training runs in the same
``UnlearnTrainer`` as ``unlearn`` (checkpoints, resume, accelerate, compute accounting).
"""

from __future__ import annotations

import copy
import functools
import logging
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from unlearnkit.config import DistillConfig, build_configs, config_dict
from unlearnkit.data.encode import PromptFormat, pad_id_of
from unlearnkit.errors import UserError
from unlearnkit.objectives import forward_kl_loss, nll_loss
from unlearnkit.train import finetune
from unlearnkit.train.compute import ComputeCounter
from unlearnkit.train.methods import Method
from unlearnkit.train.reference import CopyReference, ModelReference, is_peft_model
from unlearnkit.train.trainer import (
    FiniteGradientGuard,
    PaddingCollator,
    UnlearnTrainer,
    encode_rows,
    training_arguments,
)

log = logging.getLogger(__name__)

PART = "distill"  # the batch part the teacher's outputs are cached under
TINY_PARAMS = 20_000_000  # below this: the embedded world's from-scratch recipe (tiny models train fast)
# Measured on the embedded world (``unlearnkit world`` defaults, ``finetune --model tiny`` target, NPO
# teacher, alpha = 1): see README "Forgetting that survives fine-tuning". A fresh student needs
# from-scratch learning rates, like ``finetune.TINY_DEFAULTS``. 30 epochs: 0.97x the oracle's utility,
# relearning gap 0.06, 0.79x its compute; 20 epochs: 0.89x, gap 0.04, 0.54x (one seed each).
TINY_DEFAULTS = {**finetune.TINY_DEFAULTS, "epochs": 30.0}
# Pretrained models: the TOFU fine-tuning recipe (arXiv 2401.06121), as for fine-tuning.
HF_DEFAULTS = dict(finetune.HF_DEFAULTS)
CACHE_BUDGET_BYTES = 2 * 2**30  # the teacher's outputs are cached only below this (host memory, per rank)


@dataclass
class DistillResult:
    model: torch.nn.Module
    compute: dict[str, Any]
    steps: int
    settings: dict[str, Any]
    train_loss: float = float("nan")
    log_history: list[dict] = field(default_factory=list)
    reference: dict[str, Any] = field(default_factory=dict)
    is_main_process: bool = True


def n_params(model) -> int:
    seen, total = set(), 0
    for p in model.parameters():
        if id(p) not in seen:
            seen.add(id(p))
            total += p.numel()
    return total


def default_settings(teacher) -> dict[str, Any]:
    """Training defaults by model size: the from-scratch tiny recipe, or TOFU's fine-tuning recipe."""
    return dict(TINY_DEFAULTS if n_params(teacher) < TINY_PARAMS else HF_DEFAULTS)


def shrink_perturb(model, alpha: float, seed: int):
    """In place: theta <- (1 - alpha) * theta + alpha * theta_init; returns ``model``.

    theta_init is a fresh initialisation of the same architecture by its own ``_init_weights`` (a new
    model of ``type(model)`` built from ``model.config`` under ``seed``), so any Hugging Face model
    works, tiny or pretrained. alpha = 0 leaves the weights as they are, alpha = 1 gives the fresh
    initialisation itself. Tied weights are one parameter and stay tied; buffers (rotary tables) are
    functions of the config and are left alone. The global RNG state is not disturbed. Memory: the
    fresh model is built whole on the CPU in float32 for the duration (a second set of weights, freed
    on return), which is what makes its init exactly the architecture's own under ``seed``.
    """
    if not 0.0 <= float(alpha) <= 1.0:
        raise UserError(f"--noise {alpha}: must be in [0, 1] (0 = copy of the teacher, 1 = fresh student)")
    if is_peft_model(model):
        raise UserError("shrink-and-perturb needs a plain model, not a PEFT (LoRA) one: merge it first")
    if alpha == 0:
        return model
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(int(seed))
        fresh = type(model)(copy.deepcopy(model.config))
    init = dict(fresh.named_parameters())
    with torch.no_grad():
        for name, param in model.named_parameters():  # shared (tied) tensors are listed once
            target = init[name].to(device=param.device, dtype=param.dtype)
            if alpha == 1:
                param.copy_(target)
            else:
                param.mul_(1.0 - alpha).add_(target, alpha=float(alpha))
    del fresh, init
    return model


class DistillDataset(torch.utils.data.Dataset):
    """Encoded rows as one named part (``distill``) with their index, for the cache lookup."""

    def __init__(self, encoded: list[dict]) -> None:
        if not encoded:
            raise UserError("there is nothing to distill on: the chosen splits (distill_on) are empty")
        self.encoded = encoded

    def __len__(self) -> int:
        return len(self.encoded)

    def __getitem__(self, i: int) -> dict:
        return {PART: {**self.encoded[i], "index": i}}


def step_distill(ctx, batch, cfg: DistillConfig, n_true: int):
    """KL(p_teacher || p_student) on answer tokens + ``retain_nll_weight`` x NLL on the true answers.

    Rows ``index < n_true`` carry true answers (retain / general); forget rows come last and get the
    KL only, since NLL on their answers would teach the student exactly what the teacher forgot.
    """
    part = batch[PART]
    student = ctx.policy(part)
    kl = forward_kl_loss(ctx.ref_logits(part), student.logits, student.mask.float(), cfg.loss_reduction)
    logs = {"distill_kl": kl.detach()}
    if cfg.retain_nll_weight == 0:
        return kl, logs
    true_rows = (part["index"] < n_true).to(student.mask.device).float().unsqueeze(1)
    nll = nll_loss(student.logps, student.mask.float() * true_rows, cfg.loss_reduction)
    logs["retain_nll"] = nll.detach()
    return kl + cfg.retain_nll_weight * nll, logs


def distill_rows(bench, cfg: DistillConfig) -> tuple[list[tuple[str, list[dict]]], int]:
    """``[(split, rows), ...]`` with forget last, and the number of rows before it (true answers).

    Real TOFU's ``general`` (real authors, world facts) only measures utility: the published models
    never trained on it, so the student does not either (as ``finetune.training_rows``).
    """
    names = sorted(cfg.splits(), key=lambda n: n == "forget")
    if getattr(bench, "general_parts", None) and "general" in names:
        log.warning("distill_on: 'general' is left out: this benchmark's general split is evaluation-only")
        names.remove("general")
    parts = [(name, list(bench.split(name))) for name in names]
    return parts, sum(len(rows) for name, rows in parts if name != "forget")


def _autocast(args):
    if args.bf16 or args.fp16:
        dtype = torch.bfloat16 if args.bf16 else torch.float16
        return lambda: torch.autocast(args.device.type, dtype=dtype)
    import contextlib

    return contextlib.nullcontext


def distill(
    teacher,
    tokenizer,
    bench,
    *,
    noise: float = 1.0,
    overrides: dict[str, Any] | None = None,
    work_dir: str | Path | None = None,
    resume_from: str | Path | None = None,
    quiet: bool = False,
) -> DistillResult:
    """Distill ``teacher`` (an unlearned model) into a shrink-and-perturbed copy of itself (UNDO).

    ``noise`` is alpha (0 = start from the teacher, 1 = fresh initialisation). ``overrides`` are
    ``--set`` keys: training settings (lr, epochs, batch_size, ..., reference, cache_topk) and the
    ``DistillConfig`` fields (distill_on, retain_nll_weight, loss_reduction); defaults by model size
    (``default_settings``). ``bench`` is a benchmark (``unlearnkit.data.Benchmark``). ``work_dir``
    holds the Trainer's checkpoints; ``resume_from`` a checkpoint in it to continue from.
    The teacher object is consumed: with a cache its weights become the student's.
    """
    values = {**default_settings(teacher), **dict(overrides or {})}
    train_cfg, cfg = build_configs(DistillConfig, values)
    if not 0.0 <= float(noise) <= 1.0:
        raise UserError(f"--noise {noise}: must be in [0, 1] (0 = copy of the teacher, 1 = fresh student)")
    if train_cfg.lora_r > 0:
        raise UserError("distill trains the whole student (a noised copy of the teacher): remove lora_r")
    if train_cfg.reference == "adapter":
        raise UserError("--set reference=adapter does not apply to distill: use auto, cache or copy")
    fmt = PromptFormat.for_settings(tokenizer, train_cfg)
    parts, n_true = distill_rows(bench, cfg)
    encoded = [
        ex
        for name, rows in parts
        for ex in encode_rows(rows, tokenizer, fmt, train_cfg.max_length, where=name)
    ]
    dataset = DistillDataset(encoded)
    collator = PaddingCollator(pad_id_of(tokenizer))
    work_dir = Path(work_dir) if work_dir is not None else Path("unlearnkit_distill")
    args = training_arguments(train_cfg, str(work_dir), len(dataset), quiet=quiet)

    counter = ComputeCounter().attach(teacher)  # the cache build is the teacher's share of the cost
    reference, info = _teacher_reference(teacher, train_cfg, dataset, collator, args)
    if info["strategy"] == "cache":
        student = shrink_perturb(
            teacher, noise, train_cfg.seed
        )  # one model in memory: the cache holds the rest
    else:
        student = shrink_perturb(copy.deepcopy(teacher), noise, train_cfg.seed)
        reference = CopyReference(teacher.to(args.device), policy=student)
        counter.attach(student)
    student.train()
    if train_cfg.gradient_checkpointing and hasattr(student, "config"):
        student.config.use_cache = False
    method = Method(
        "distill",
        DistillConfig,
        functools.partial(step_distill, n_true=n_true),
        "distill the teacher's outputs into a noised copy (UNDO)",
        "arXiv 2506.06278",
        uses_reference=True,
    )
    trainer = UnlearnTrainer(
        model=student,
        args=args,
        train_dataset=dataset,
        data_collator=collator,
        method=method,
        method_config=cfg,
        reference=reference,
        callbacks=[FiniteGradientGuard("distill"), counter],
    )
    if quiet:
        from transformers.trainer_callback import PrinterCallback, ProgressCallback

        trainer.remove_callback(ProgressCallback)
        trainer.remove_callback(PrinterCallback)
    counter.restore(resume_from)
    out = trainer.train(resume_from_checkpoint=str(resume_from) if resume_from else None)
    compute = counter.totals()  # a collective in multi-process runs
    counter.detach()
    model = trainer.model
    model.eval()
    settings = {
        "noise": float(noise),
        **config_dict(train_cfg, cfg),
        "distilled_examples": {name: len(rows) for name, rows in parts},
    }
    return DistillResult(
        model=model,
        compute=compute,
        steps=int(trainer.state.global_step),
        settings=settings,
        train_loss=float(out.training_loss),
        log_history=list(trainer.state.log_history),
        reference=info,
        is_main_process=bool(trainer.is_world_process_zero()),
    )


def _teacher_reference(teacher, train_cfg, dataset: DistillDataset, collator, args):
    """``(cache or None, info)``: the teacher's logits cached when they fit (``reference`` auto / cache)."""
    from unlearnkit.train.cache import Need, ReferenceCache, estimate_bytes

    strategy, topk = train_cfg.reference, train_cfg.cache_topk
    if strategy == "copy":
        return None, {"strategy": "copy"}
    need = Need("logits", PART)
    examples, indices = {PART: dataset.encoded}, {PART: range(len(dataset))}
    head = teacher.get_output_embeddings()
    vocab = head.weight.shape[0] if head is not None else teacher.config.get_text_config().vocab_size
    exact = estimate_bytes([need], examples, indices, vocab=vocab, hidden_size=0)
    approx = estimate_bytes([need], examples, indices, vocab=vocab, hidden_size=0, topk=topk)
    if strategy == "auto":
        if exact <= CACHE_BUDGET_BYTES:
            topk = 0
        elif not (topk > 0 and approx <= CACHE_BUDGET_BYTES):
            return None, {"strategy": "copy", "auto": f"an exact cache needs {exact / 2**30:.2f} GiB"}
    elif (exact if topk == 0 else approx) > CACHE_BUDGET_BYTES:
        log.warning(
            "reference=cache will hold %.2f GiB per process", (exact if topk == 0 else approx) / 2**30
        )
    teacher.to(args.device)
    t0 = time.perf_counter()
    cache = ReferenceCache(topk).build(
        ModelReference(teacher, "teacher"),
        [need],
        examples,
        indices,
        collator,
        batch_size=max(train_cfg.batch_size, 8),
        device=args.device,
        autocast=_autocast(args),
    )
    return cache, {
        "strategy": "cache",
        "cache_topk": topk,
        "cache_mib": round(cache.nbytes / 2**20, 3),
        "cache_seconds": round(time.perf_counter() - t0, 3),
    }
