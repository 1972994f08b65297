"""UNDO: unlearn, noise, distill (Lee et al., NeurIPS 2025, arXiv 2506.06278, "Distillation Robustifies
Unlearning").

Unlearning methods suppress knowledge without removing it: a few fine-tuning steps on part of the
forget set bring it all back (the audit's relearning attack). UNDO (1) takes the unlearned model as a
teacher, (2) *noises* its weights (shrink-and-perturb, Ash & Adams, arXiv 1910.08475):
theta_s = (1 - alpha) * theta_teacher + alpha * theta_0, and (3) *distills* the teacher's output
distributions back into that student, on ordinary data. What the teacher only suppresses is not in its
outputs, so the student never learns it; alpha trades compute (a noisier student has more to relearn)
for robustness (alpha = 1 with a fresh init is the paper's closest match to retraining, at 60-80 % of
its compute).

theta_0, the noise target (``noise_toward``):

* ``init``: a fresh initialisation of the architecture (the paper's setting: knowledge learned in
  pretraining, where nothing older than the init is worth keeping). Its seed is derived from the run's
  seed (:func:`init_seed`) so that it can never be the init the teacher itself grew from (a model built
  under ``torch.manual_seed(seed)`` with the same seed would be; alpha < 1 would then only shrink the
  fine-tuning delta, with no perturbation at all).
* ``base``: the pretrained model the knowledge was fine-tuned into (TOFU / MUSE style): the student
  starts between the teacher and the base, so what fine-tuning added is damped and what the base knew
  is kept. ``unlearnkit.train.distill_inputs.find_base`` finds it through the model cards.

The data (``distill_on``): the benchmark's questions (KL on the answer tokens; default retain +
general) and raw text (KL on every token of a ``{"text": ...}`` row, as UNDO distils on
pretraining-like text): the world's general corpus (``corpus``) or any JSONL (``distill_text``; for a
real model, a slice of a corpus like its pretraining data). The loss is the forward
KL(p_teacher || p_student) of ``unlearnkit.objectives.forward_kl_loss``, plus ``retain_nll_weight`` x NLL
on the true answers (raw text: its tokens) of the non-forget rows (without it the student inherits the
teacher's utility loss and does not finish learning: a probe on the embedded world kept only 0.49-0.59x the
oracle's utility). The teacher's outputs come from the reference machinery: a cache computed once
before training (the teacher's weights then become the student's, so only one model is in memory),
else a frozen copy. Training runs in the same ``UnlearnTrainer`` as ``unlearn`` (checkpoints, resume,
accelerate, compute accounting).
"""

from __future__ import annotations

import copy
import functools
import logging
import time
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from transformers import TrainerCallback

from unlearnkit.config import DistillConfig, build_configs, canonical, config_dict
from unlearnkit.data.encode import PromptFormat, pad_id_of
from unlearnkit.errors import UserError
from unlearnkit.models import is_peft_model
from unlearnkit.objectives import forward_kl_loss, nll_loss
from unlearnkit.train import finetune
from unlearnkit.train.anchor import anchor_callbacks
from unlearnkit.train.compute import ComputeCounter
from unlearnkit.train.methods import Method
from unlearnkit.train.reference import CopyReference, ModelReference
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
# Small models: the recipes bench/robustness.py measured on the TOFU-like / WMDP-like miniatures (a
# pretrained ~0.8M Llama; BENCHMARKS.md "Robust forgetting"). Toward a fresh init the student relearns
# from scratch and needs a from-scratch rate (``finetune.TINY_DEFAULTS``: lr 3e-3, 40 epochs). Toward the
# base it starts from a model that already knows the language, and 3e-3 would wreck it: lr 5e-4, a
# 30-epoch schedule stopped after 15 epochs, where its utility first reached 0.95x the oracle's (NPO
# teacher, alpha 1, seeds 0-2: fact-level relearning gap +0.03, 0.99x the oracle's utility, 0.49x its compute).
TINY_DEFAULTS = dict(finetune.TINY_DEFAULTS)
TINY_BASE_DEFAULTS = {**TINY_DEFAULTS, "lr": 5e-4, "epochs": 30.0, "stop_epochs": 15.0}
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


def default_settings(teacher, noise_toward: str = "init") -> dict[str, Any]:
    """Training defaults by model size and noise target: a small model's measured recipe
    (``TINY_DEFAULTS`` toward a fresh init, ``TINY_BASE_DEFAULTS`` toward the base), or TOFU's
    fine-tuning recipe for a pretrained model."""
    if n_params(teacher) >= TINY_PARAMS:
        return dict(HF_DEFAULTS)
    return dict(TINY_BASE_DEFAULTS if noise_toward == "base" else TINY_DEFAULTS)


def settings_for(teacher, noise_toward: str, overrides: dict[str, Any] | None) -> dict[str, Any]:
    """:func:`default_settings` under the user's ``overrides``. A default ``stop_epochs`` belongs to the
    default schedule: with ``epochs`` or ``max_steps`` of the user's own it goes (that schedule runs whole)."""
    defaults = default_settings(teacher, noise_toward)
    given = set(canonical(dict(overrides or {})))
    if "stop_epochs" not in given and given & {"epochs", "max_steps"}:
        defaults.pop("stop_epochs", None)
    return {**defaults, **dict(overrides or {})}


INIT_SEED_BASE = 2**32  # derived init seeds lie in [2**32, 2**33): never a seed in [0, 2**32) itself
NOISE_TARGETS = ("init", "base")


def init_seed(seed: int) -> int:
    """The seed theta_init is drawn under: ``2**32 + crc32(b"undo-init:<seed>")``.

    Deterministic (same run seed, same init), different for every run seed, and never equal to a seed
    in [0, 2**32), the range every seed a model is built with falls in (``finetune --seed``,
    ``torch.manual_seed`` in user code, numpy's limit): a target built under ``torch.manual_seed(s)``
    and a student noised with run seed ``s`` never share their init, whatever ``s`` is.
    """
    return INIT_SEED_BASE + zlib.crc32(b"undo-init:%d" % int(seed))


def check_base(model, base) -> None:
    """``base`` can be a noise target for ``model``: the same class and the same parameters (names and
    shapes); else one line naming the first difference."""
    where = "--base: the base model"
    if type(base) is not type(model):
        raise UserError(
            f"{where} is a {type(base).__name__}, the teacher a {type(model).__name__}: noising toward a base "
            "needs the same architecture (use --noise-toward init)"
        )
    theirs = {name: tuple(p.shape) for name, p in base.named_parameters()}
    ours = {name: tuple(p.shape) for name, p in model.named_parameters()}
    for name in sorted(set(ours) | set(theirs)):
        if ours.get(name) != theirs.get(name):
            raise UserError(
                f"{where} does not match the teacher's architecture: {name} is {theirs.get(name, 'missing')} "
                f"in the base, {ours.get(name, 'missing')} in the teacher (use --noise-toward init, or the "
                "base this teacher was fine-tuned from)"
            )


def shrink_perturb(model, alpha: float, seed: int, base=None):
    """In place: theta <- (1 - alpha) * theta + alpha * theta_0; returns ``model``.

    theta_0 is ``base``'s weights when given (a model of the same architecture: noise toward the
    pretrained base), else a fresh initialisation of the same architecture by its own
    ``_init_weights`` (a new model of ``type(model)`` built from ``model.config`` under
    ``init_seed(seed)``), so any Hugging Face model works, tiny or pretrained. alpha = 0 leaves the
    weights as they are, alpha = 1 gives theta_0 itself. Tied weights are one parameter and stay tied;
    buffers (rotary tables) are functions of the config and are left alone. The global RNG state is
    not disturbed. Memory: the fresh model is built whole on the CPU in float32 for the duration (a
    second set of weights, freed on return), which is what makes its init exactly the architecture's
    own; ``base`` is read where it is, cast parameter by parameter.
    """
    if not 0.0 <= float(alpha) <= 1.0:
        raise UserError(
            f"--noise {alpha}: must be in [0, 1] (0 = copy of the teacher, 1 = the noise target itself)"
        )
    if is_peft_model(model):
        raise UserError("shrink-and-perturb needs a plain model, not a PEFT (LoRA) one: merge it first")
    if base is not None:
        check_base(model, base)
    if alpha == 0:
        return model
    if base is None:
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(init_seed(seed))
            fresh = type(model)(copy.deepcopy(model.config))
    else:
        fresh = base
    init = dict(fresh.named_parameters())
    with torch.no_grad():
        for name, param in model.named_parameters():  # shared (tied) tensors are listed once
            target = init[name].detach().to(device=param.device, dtype=param.dtype)
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

    Examples ``index < n_true`` carry true answers (retain / general questions; raw text, every token
    of which is a target); forget rows come last and get the KL only, since NLL on their answers would
    teach the student exactly what the teacher forgot.
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
    """``[(part, rows), ...]`` with forget last, and the number of rows before it (true answers).

    Benchmark splits give QA rows; ``corpus`` (the world's ``corpus/general.jsonl``, found from
    ``bench.path``) and ``text`` (``distill_text``) give raw ``{"text": ...}`` rows. Real TOFU's
    ``general`` (real authors, world facts) only measures utility: the published models never trained
    on it, so the student does not either (as ``finetune.training_rows``).
    """
    from unlearnkit.train.distill_inputs import corpus_file, missing_corpus, read_text_rows

    names = sorted(cfg.splits(), key=lambda n: n == "forget")
    if getattr(bench, "general_parts", None) and "general" in names:
        log.warning("distill_on: 'general' is left out: this benchmark's general split is evaluation-only")
        names.remove("general")
    parts = []
    for name in names:
        if name == "corpus":
            path = corpus_file(getattr(bench, "path", ""))
            if path is None:
                raise missing_corpus(getattr(bench, "path", ""))
            rows = read_text_rows(path, "distill_on=corpus")
        elif name == "text":
            rows = read_text_rows(cfg.distill_text)
        else:
            rows = list(bench.split(name))
        parts.append((name, rows))
    return parts, sum(len(rows) for name, rows in parts if name != "forget")


def encode_parts(parts, tokenizer, fmt, max_length: int) -> tuple[list[dict], int]:
    """The examples of ``distill_rows``' parts, in order, and how many come before the forget ones.

    A QA row is one example (labels on its answer); a raw-text row is one per ``max_length`` window
    (``unlearnkit.data.encode.encode_text``: every token a target), so ``n_true`` counts examples.
    """
    encoded, n_true = [], 0
    for name, rows in parts:
        examples = encode_rows(rows, tokenizer, fmt, max_length, where=name)
        encoded.extend(examples)
        n_true += len(examples) if name != "forget" else 0
    return encoded, n_true


def text_sources(bench, cfg: DistillConfig) -> dict[str, str]:
    """The files the raw-text parts are read from (recorded in the model card)."""
    from unlearnkit.train.distill_inputs import corpus_file

    out = {}
    if "corpus" in cfg.splits():
        out["corpus"] = str(corpus_file(getattr(bench, "path", "")))
    if "text" in cfg.splits():
        out["text"] = str(Path(cfg.distill_text).expanduser())
    return out


class StopAtEpoch(TrainerCallback):
    """End training once ``epochs`` epochs are done, whatever the schedule's length (``stop_epochs``)."""

    def __init__(self, epochs: float) -> None:
        self.epochs = float(epochs)

    def on_step_end(self, args, state, control, **kwargs):
        if state.epoch is not None and state.epoch >= self.epochs - 1e-9:
            control.should_training_stop = True
        return control


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
    noise_toward: str = "init",
    base=None,
    overrides: dict[str, Any] | None = None,
    work_dir: str | Path | None = None,
    resume_from: str | Path | None = None,
    quiet: bool = False,
    progress: str | None = None,
) -> DistillResult:
    """Distill ``teacher`` (an unlearned model) into a shrink-and-perturbed copy of itself (UNDO).

    ``noise`` is alpha (0 = start from the teacher, 1 = the noise target itself). ``noise_toward``:
    ``init`` (a fresh initialisation under :func:`init_seed` of the run's seed) or ``base`` (the
    weights of ``base``, the pretrained model the teacher's knowledge was fine-tuned into: a model of
    the teacher's architecture over the same tokenizer, or a function that loads one, called after the
    teacher's outputs are cached so that the base is in memory only for the noise step). ``overrides`` are
    ``--set`` keys: training settings (lr, epochs, batch_size, ..., reference, cache_topk) and the
    ``DistillConfig`` fields (distill_on, distill_text, retain_nll_weight, loss_reduction, stop_epochs); defaults by
    model size and noise target (``default_settings``). ``bench`` is a benchmark (``unlearnkit.data.Benchmark``; its
    ``path`` locates the world's corpus for ``distill_on=corpus``). ``work_dir`` holds the Trainer's
    checkpoints; ``resume_from`` a checkpoint in it to continue from. ``quiet`` drops the Trainer's
    output; ``progress`` shows one compact progress bar with that label instead.
    The teacher object is consumed: with a cache its weights become the student's.
    """
    values = settings_for(teacher, noise_toward, overrides)
    train_cfg, cfg = build_configs(DistillConfig, values)
    if not 0.0 <= float(noise) <= 1.0:
        raise UserError(
            f"--noise {noise}: must be in [0, 1] (0 = copy of the teacher, 1 = the noise target itself)"
        )
    if noise_toward not in NOISE_TARGETS:
        raise UserError(f"--noise-toward {noise_toward}: use init or base")
    if noise_toward == "base" and base is None:
        raise UserError("--noise-toward base needs the base model (--base MODEL)")
    if noise_toward == "init" and base is not None:
        raise UserError("a base model was given with --noise-toward init: use --noise-toward base")
    if cfg.stop_epochs and train_cfg.max_steps <= 0 and cfg.stop_epochs > train_cfg.epochs:
        raise UserError(
            f"--set stop_epochs={cfg.stop_epochs:g} is past the schedule's end (epochs={train_cfg.epochs:g}): "
            "use stop_epochs <= epochs, or 0 for the whole schedule"
        )
    if train_cfg.lora_r > 0:
        raise UserError("distill trains the whole student (a noised copy of the teacher): remove lora_r")
    if train_cfg.reference == "adapter":
        raise UserError("--set reference=adapter does not apply to distill: use auto, cache or copy")
    if isinstance(base, torch.nn.Module):
        check_base(teacher, base)  # before the (possibly long) cache build
    fmt = PromptFormat.for_settings(tokenizer, train_cfg)
    parts, _ = distill_rows(bench, cfg)
    encoded, n_true = encode_parts(parts, tokenizer, fmt, train_cfg.max_length)
    dataset = DistillDataset(encoded)
    collator = PaddingCollator(pad_id_of(tokenizer))
    work_dir = Path(work_dir) if work_dir is not None else Path("unlearnkit_distill")
    args = training_arguments(train_cfg, str(work_dir), len(dataset), quiet=quiet or bool(progress))

    counter = ComputeCounter().attach(teacher)  # the cache build is the teacher's share of the cost
    reference, info = teacher_reference(teacher, train_cfg, dataset, collator, args)
    target = base if base is None or isinstance(base, torch.nn.Module) else base()  # a loader: load it now
    if info["strategy"] == "cache":  # one model in memory: the cache holds the teacher's outputs
        student = shrink_perturb(teacher, noise, train_cfg.seed, target)
    else:
        student = shrink_perturb(copy.deepcopy(teacher), noise, train_cfg.seed, target)
        reference = CopyReference(teacher.to(args.device), policy=student)
        counter.attach(student)
    del target  # a base loaded here is freed before training
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
        callbacks=[
            FiniteGradientGuard("distill"),
            counter,
            *anchor_callbacks(student, train_cfg.anchor_decay),
        ]
        + ([StopAtEpoch(cfg.stop_epochs)] if cfg.stop_epochs else []),
    )
    if quiet or progress:
        from transformers.trainer_callback import PrinterCallback, ProgressCallback

        trainer.remove_callback(ProgressCallback)
        trainer.remove_callback(PrinterCallback)
    if progress:
        from unlearnkit.train.finetune import StepProgress

        trainer.add_callback(StepProgress(progress))
    counter.restore(resume_from)
    out = trainer.train(resume_from_checkpoint=str(resume_from) if resume_from else None)
    compute = counter.totals()  # a collective in multi-process runs
    counter.detach()
    model = trainer.model
    model.eval()
    settings = {
        "noise": float(noise),
        "noise_toward": noise_toward,
        **({"init_seed": init_seed(train_cfg.seed)} if noise_toward == "init" else {}),
        **config_dict(train_cfg, cfg),
        "distilled_examples": {name: len(rows) for name, rows in parts},
        **({"text_files": text_sources(bench, cfg)} if text_sources(bench, cfg) else {}),
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


def teacher_reference(teacher, train_cfg, dataset: DistillDataset, collator, args):
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
