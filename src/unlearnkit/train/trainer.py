"""The unlearning loop: an HF ``Trainer`` subclass whose ``compute_loss`` runs one method step.

Using the stock Trainer means accelerate / DeepSpeed / FSDP, gradient accumulation, mixed
precision, checkpoint + resume and logging come from the ecosystem. What is ours: the paired
forget/retain data, the method step, the divergence guard and the extra loss terms in the logs.
"""

from __future__ import annotations

import logging
import math
import os
import random
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

import torch
from transformers import Trainer, TrainerCallback, TrainingArguments

from unlearnkit.config import TrainConfig
from unlearnkit.data.encode import PromptFormat, encode_qa, encode_text, pad_batch
from unlearnkit.errors import UserError
from unlearnkit.train.methods import Method, StepContext
from unlearnkit.train.sam import check_sam_supported, sam_grads

logger = logging.getLogger(__name__)


class DivergenceError(RuntimeError):
    """A loss or gradient became NaN/inf; raised with the step and the offending term."""


def encode_rows(
    rows: Sequence[dict],
    tokenizer,
    fmt: PromptFormat,
    max_length: int,
    where: str = "",
    answer_key: str = "answer",
    text_eos: bool = False,
) -> list[dict]:
    """Encode QA rows (or raw ``text`` rows) with the prompt masked out of the labels (``text_eos``: raw
    text ends with EOS, see :func:`unlearnkit.data.encode.encode_text`)."""
    out = []
    for i, row in enumerate(rows):
        loc = f"{where}:{row.get('_line', i + 1)}" if where else f"example {i}"
        if "text" in row and "question" not in row:
            out.extend(encode_text(tokenizer, row["text"], max_length, eos=text_eos))
        else:
            out.append(encode_qa(tokenizer, fmt, row["question"], row[answer_key], max_length, where=loc))
    return out


class QADataset(torch.utils.data.Dataset):
    """Encoded examples for plain fine-tuning (the target and the retain oracle)."""

    def __init__(self, encoded: list[dict]) -> None:
        self.encoded = encoded

    def __len__(self) -> int:
        return len(self.encoded)

    def __getitem__(self, i: int) -> dict:
        return self.encoded[i]


class PairedDataset(torch.utils.data.Dataset):
    """Each forget example paired with a random retain example (and their refusal-answer twins).

    The retain partner depends only on (seed, epoch, index), so it is the same on every rank and
    after a resume, and differs between epochs so the whole retain set is used. Every part carries
    ``index``: the example's index in its own set (forget / idk by forget index, retain / retain_idk
    by retain index), which is how ``reference=cache`` looks its outputs up.
    """

    def __init__(
        self,
        forget: list[dict],
        retain: list[dict],
        idk: list[dict] | None = None,
        seed: int = 0,
        retain_idk: list[dict] | None = None,
    ) -> None:
        if not forget:
            raise UserError("the forget set is empty: there is nothing to unlearn")
        if not retain:
            raise UserError("the retain set is empty: a retain example is paired with every forget example")
        self.forget, self.retain, self.idk, self.seed = forget, retain, idk, seed
        self.retain_idk = retain_idk
        self.epoch = 0

    def __len__(self) -> int:
        return len(self.forget)

    def retain_index(self, i: int, epoch: int | None = None) -> int:
        epoch = self.epoch if epoch is None else epoch
        return random.Random(f"{self.seed}/{epoch}/{i}").randrange(len(self.retain))

    def retain_indices(self, epochs: int) -> list[int]:
        """Every retain index paired with some forget example in epochs ``0 .. epochs-1`` (sorted)."""
        return sorted({self.retain_index(i, e) for e in range(max(1, epochs)) for i in range(len(self))})

    def parts(self) -> dict[str, list[dict]]:
        """The encoded examples of each part, indexed like the ``index`` the batches carry."""
        out = {"forget": self.forget, "retain": self.retain}
        if self.idk is not None:
            out["idk"] = self.idk
        if self.retain_idk is not None:
            out["retain_idk"] = self.retain_idk
        return out

    def __getitem__(self, i: int) -> dict:
        j = self.retain_index(i)
        item = {"forget": {**self.forget[i], "index": i}, "retain": {**self.retain[j], "index": j}}
        if self.idk is not None:
            item["idk"] = {**self.idk[i], "index": i}
        if self.retain_idk is not None:
            item["retain_idk"] = {**self.retain_idk[j], "index": j}
        return item


class PaddingCollator:
    """Right-pads each part of a batch; attention masks and labels come from lengths, not pad ids.

    Paired batches: each part also gets ``index`` (a tensor) and ``part`` (its name).
    """

    def __init__(self, pad_id: int) -> None:
        self.pad_id = pad_id

    def __call__(self, items: list[dict]) -> dict:
        if not all(isinstance(v, dict) for v in items[0].values()):  # plain examples, not named parts
            return pad_batch(items, self.pad_id)
        batch = {}
        for part in items[0]:
            batch[part] = pad_batch(items_part := [it[part] for it in items], self.pad_id)
            if "index" in items_part[0]:
                batch[part]["index"] = torch.tensor([it["index"] for it in items_part])
            batch[part]["part"] = part
        return batch


class EpochCallback(TrainerCallback):
    """Tells the paired dataset which epoch it is in (for fresh retain pairings each epoch)."""

    def __init__(self, dataset: PairedDataset) -> None:
        self.dataset = dataset

    def on_epoch_begin(self, args, state, control, **kwargs):
        self.dataset.epoch = int(state.epoch + 1e-6) if state.epoch else 0


class FiniteGradientGuard(TrainerCallback):
    """Stops before the optimiser applies a NaN/inf gradient (the loss can still be finite then), so no
    checkpoint ever holds weights from a diverged update."""

    def __init__(self, method_name: str) -> None:
        self.method_name = method_name

    def on_pre_optimizer_step(self, args, state, control, model=None, **kwargs):
        named = [(n, p.grad) for n, p in model.named_parameters() if p.grad is not None]
        if not named:
            return
        # One fused norm per tensor and a single device sync per step; names only on the error path.
        norms = torch.stack(torch._foreach_norm([g for _, g in named]))
        if bool(torch.isfinite(norms).all()):
            return
        for name, grad in named:
            if not torch.isfinite(grad).all():
                raise DivergenceError(
                    f"{self.method_name}: the gradient of '{name}' is not finite at step {state.global_step + 1}; "
                    "lower lr or forget_weight (gradient-ascent methods diverge by design when run too long)"
                )


class TrainStepContext(StepContext):
    """``StepContext`` for training: one policy forward per batch part and step, reused by every term.

    A step that asks for the same part twice (or a top-k reference cache that needs the policy's
    logits before the step's own ``policy()`` call) gets the already computed forward pass instead
    of a second one.
    """

    def __init__(self, model, reference=None, terms: str = "all", backward=None, worth_it=None) -> None:
        super().__init__(model, reference, terms)
        self._memo: dict[tuple[int, int | None], object] = {}
        self._backward = backward  # takes the forget part's gradient early (UnlearnTrainer), or None
        # worth_it(bytes the forget passes hold) -> bool: asked once per run, on its first step
        self._worth_it = worth_it
        self._held: dict[int, int] = {}  # storage pointer -> bytes the forget passes keep for backward
        # the weights a pass saves for its backward stay after it: they are not what an early backward frees
        self._weights = {p.untyped_storage().data_ptr() for p in model.parameters()} if worth_it else set()

    def settle_forget(self, forget_part):
        """With a ``backward`` (one process, see ``UnlearnTrainer._early_backward``): the forget part's
        gradient is taken now and a detached copy stands for it, so the forget passes' saved activations
        are freed before the retain pass stores its own. The gradient is the same as one backward pass
        over the sum (gradients add); the step's peak holds one side's activations, not both.

        On a run's first step ``worth_it`` first weighs what that frees (the forget passes' saved
        tensors and logits, counted as they ran) against what it costs (``UnlearnTrainer._split_cost``)."""
        if self._backward is None or not forget_part.requires_grad:
            return forget_part
        if self._worth_it is not None:
            held, worth_it = sum(self._held.values()), self._worth_it
            self._held.clear()
            self._worth_it = None  # the retain passes are not counted
            if not worth_it(held):
                return forget_part
        self._backward(forget_part)
        for _, forward in self._memo.values():  # nothing reads a pass after its backward
            forward.release()
        self._memo.clear()
        return forget_part.detach()

    def policy(self, batch, hidden_layer=None):
        key = (id(batch), hidden_layer)
        if key not in self._memo:
            if self._worth_it is None:
                forward = super().policy(batch, hidden_layer)
            else:  # the run's first step: count what this pass keeps for its backward
                with torch.autograd.graph.saved_tensors_hooks(self._count_saved, lambda t: t):
                    forward = super().policy(batch, hidden_layer)
                self._count_saved(forward._full)
            self._memo[key] = (batch, forward)  # keep batch alive: stable id
        return self._memo[key][1]

    def _count_saved(self, t):
        if isinstance(t, torch.Tensor) and t.device.type != "meta":
            storage = t.untyped_storage()
            if storage.data_ptr() not in self._weights:
                self._held[storage.data_ptr()] = storage.nbytes()
        return t

    def ref_logits(self, batch):
        ref = self._need_reference("reference logits")
        if getattr(ref, "needs_student", False):
            return ref.logits(batch, student=self.policy(batch).logits)[:, :-1]
        return super().ref_logits(batch)

    def teacher_logits(self, batch, tau, layers):
        ref = self._need_reference("the smoothed teacher")
        if getattr(ref, "needs_student", False):
            return ref.teacher_logits(batch, tau, layers, student=self.policy(batch).logits)[:, :-1]
        return super().teacher_logits(batch, tau, layers)


class ChecksumCallback(TrainerCallback):
    """Debug aid for multi-process runs: at the end of training every rank writes a digest of its weights.

    Enabled by ``UNLEARNKIT_DEBUG_CHECKSUMS=<folder>``; writes ``<folder>/rank<R>.json`` with the SHA-256
    of all parameters (identical weights on every rank <=> identical digests).
    """

    ENV = "UNLEARNKIT_DEBUG_CHECKSUMS"

    def __init__(self, folder: str) -> None:
        self.folder = folder

    def on_train_end(self, args, state, control, model=None, **kwargs):
        import hashlib
        import json
        from pathlib import Path

        digest = hashlib.sha256()
        total = 0.0
        for name, param in sorted(model.named_parameters()):
            data = param.detach().float().cpu().contiguous()
            digest.update(name.encode())
            digest.update(data.numpy().tobytes())
            total += float(data.double().sum())
        rank = int(os.environ.get("RANK", "0"))
        Path(self.folder).mkdir(parents=True, exist_ok=True)
        out = {
            "rank": rank,
            "world_size": world_size(),
            "sha256": digest.hexdigest(),
            "sum": total,
            "global_step": state.global_step,
        }
        (Path(self.folder) / f"rank{rank}.json").write_text(json.dumps(out) + "\n", encoding="utf-8")


def tied_parameter_names(model: torch.nn.Module) -> set[str]:
    """Names of the parameters that share their storage with another one (``tie_word_embeddings``:
    ``lm_head.weight`` and the input embedding)."""
    by_storage: dict[int, list[str]] = defaultdict(list)
    for name, param in model.named_parameters(remove_duplicate=False):
        # empty or meta storage (a sharded / not yet materialised parameter) has pointer 0 for every
        # parameter: it says nothing about tying, and grouping them would hide keys really missing
        if param.numel() and param.data_ptr():
            by_storage[param.data_ptr()].append(name)
    return {name for names in by_storage.values() if len(names) > 1 for name in names}


class TiedWeightsTrainer(Trainer):
    """The HF Trainer, quiet about tied weights when it resumes from a checkpoint.

    safetensors stores a tensor shared by two parameters once, so a checkpoint of a model with tied
    input and output embeddings has no ``lm_head.weight``, and the Trainer warns "There were missing keys
    in the checkpoint model loaded: ['lm_head.weight']" although nothing is missing. Keys tied to a
    loaded parameter are taken off that warning (and the weights re-tied); any other missing key is
    still reported.
    """

    def _issue_warnings_after_load(self, load_result) -> None:
        missing = list(getattr(load_result, "missing_keys", None) or [])
        model = self.accelerator.unwrap_model(self.model)
        real = [k for k in missing if k not in tied_parameter_names(model)] if missing else missing
        if len(real) < len(missing) and hasattr(load_result, "_replace"):
            model.tie_weights()
            load_result = load_result._replace(missing_keys=real)
        super()._issue_warnings_after_load(load_result)


class UnlearnTrainer(TiedWeightsTrainer):
    """``compute_loss`` = one method step on a paired batch; extra loss terms are logged.

    ``sam_rho > 0`` in the method config replaces the training step by SAM on the forget term
    (``unlearnkit.train.sam``); at 0 the step is the Trainer's own, untouched.
    """

    def __init__(self, *args, method: Method, method_config, reference=None, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.method = method
        self.method_config = method_config
        self.reference = reference
        self.sam_rho = float(getattr(method_config, "sam_rho", 0.0) or 0.0)
        check_sam_supported(self, self.sam_rho)
        self._split: bool | None = None  # take the forget part's gradient early (decided on step 1)
        self._split_bytes: tuple[int, int] | None = None  # (forget passes' saved bytes, extra buffer)
        self._term_sums: dict[str, float] = defaultdict(float)
        self._term_counts: dict[str, int] = defaultdict(int)
        if os.environ.get(ChecksumCallback.ENV):
            self.add_callback(ChecksumCallback(os.environ[ChecksumCallback.ENV]))

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        backward = worth_it = None
        if (
            self._split is not False
            and self._early_backward_ok()
            and model.training
            and torch.is_grad_enabled()
        ):
            backward = lambda part: self._early_backward(model, part, num_items_in_batch)  # noqa: E731
            if self._split is None:
                worth_it = lambda held: self._decide_split(model, held)  # noqa: E731
        ctx = TrainStepContext(model, self.reference, backward=backward, worth_it=worth_it)
        loss, terms = self.method.step(ctx, inputs, self.method_config)
        if worth_it is not None and self._split is None:
            # no retain pass ran after the forget part (GA): nothing to free, nothing more to weigh
            self._split = False
        self._record_terms(terms, loss)
        return (loss, None) if return_outputs else loss

    def _decide_split(self, model, held: int) -> bool:
        """Whether to take the forget part's gradient early, decided on the run's first step: it frees
        ``held`` bytes (the forget passes' saved activations and logits) before the retain pass, and costs
        one extra gradient-sized buffer per tied trainable weight (``_split_cost``). At Llama-3.2-1B's
        widths with 2 layers and 2 x 128-token sequences the tied 128k x 2048 embedding outweighs the
        activations (bench/results/scale-bf16-true.md), at its 16 layers and 4 x 512 tokens the
        activations are several times the embedding (docs/SCALING.md, "Memory accounting")."""
        cost = self._split_cost(model)
        self._split = held > cost
        self._split_bytes = (held, cost)
        logger.info(
            "unlearn: the forget part's backward runs %s the retain pass (the forget passes hold %.1f MiB, "
            "tied weights' extra gradient buffer %.1f MiB)",
            "before" if self._split else "with",
            held / 2**20,
            cost / 2**20,
        )
        return self._split

    @staticmethod
    def _split_cost(model) -> int:
        """Bytes an early backward adds at its peak: a weight used twice in each pass (tied input and output
        embeddings) has its first pass's gradient in ``.grad`` while the second pass's contributions are
        summed in a buffer of their own; every other weight's ``.grad`` takes the place of the buffer the
        single backward would have summed the two sides' gradients in."""
        tied = tied_parameter_names(model)
        seen: set[int] = set()
        total = 0
        for name, param in model.named_parameters(remove_duplicate=False):
            if name in tied and param.requires_grad and param.data_ptr() not in seen:
                seen.add(param.data_ptr())
                total += param.numel() * param.element_size()
        return total

    def backward_record(self) -> dict[str, Any]:
        """How the run's steps took their gradients, for its card: ``forget_part_first`` (the forget part's
        backward ran before the retain pass, so a step held one side's activations at a time) and why,
        with the two sizes the first step weighed (MiB) where it weighed them."""
        if not self._early_backward_ok():
            why = "one backward per step: several processes, DataParallel or LOMO"
        elif self._split_bytes is not None:
            held, cost = (round(b / 2**20, 3) for b in self._split_bytes)
            why = "the forget passes held more than a tied weight's extra gradient buffer"
            if not self._split:
                why = "a tied weight's extra gradient buffer outweighs what the forget passes held"
            return {
                "forget_part_first": bool(self._split),
                "why": why,
                "forget_passes_mib": held,
                "tied_gradient_buffer_mib": cost,
            }
        elif self._split is False:
            why = "no retain pass follows the forget part"
        else:
            why = "no training step ran"
        return {"forget_part_first": False, "why": why}

    def _early_backward_ok(self) -> bool:
        """The forget part's backward may run inside the step (``TrainStepContext.settle_forget``) where the
        Trainer's one backward per step is not assumed: one process (DDP / FSDP / DeepSpeed hook into the
        backward and expect one per forward), no ``torch.nn.DataParallel`` and no LOMO (its optimiser
        updates the weights inside the backward)."""
        from accelerate.utils import DistributedType

        return (
            self.accelerator.distributed_type == DistributedType.NO
            and self.args.n_gpu <= 1
            and "lomo" not in str(self.args.optim).lower()
        )

    def _ga_divisor(self, num_items_in_batch) -> int:
        """What the Trainer's ``training_step`` divides a step's loss by for gradient accumulation."""
        scaled = getattr(self, "loss_is_scaled_for_ga", None)
        if scaled is None:
            scaled = (
                self.model_accepts_loss_kwargs and num_items_in_batch is not None
            ) or self.compute_loss_func is not None
        return (
            1
            if scaled
            else getattr(self, "current_gradient_accumulation_steps", self.args.gradient_accumulation_steps)
        )

    def _early_backward(self, model, part: torch.Tensor, num_items_in_batch) -> None:
        """The forget part's gradient, scaled as the Trainer scales the step's loss (gradient accumulation,
        fp16 loss scaling through ``accelerator.backward``); autocast off, as for the Trainer's own backward."""
        if not torch.isfinite(part):
            return  # left in the loss: the divergence guard reports it after the step
        with torch.autocast(part.device.type, enabled=False):
            self.accelerator.backward(part / self._ga_divisor(num_items_in_batch))

    def _record_terms(self, terms: dict, loss: torch.Tensor) -> None:
        for name, value in terms.items():
            value = float(value)
            if not math.isfinite(value) or not torch.isfinite(loss):
                raise DivergenceError(
                    f"{self.method.name}: loss term '{name}' is {value} at step {self.state.global_step + 1}; "
                    "lower lr or forget_weight (gradient-ascent methods diverge by design when run too long)"
                )
            self._term_sums[name] += value
            self._term_counts[name] += 1

    def training_step(self, model, inputs, num_items_in_batch=None):
        if self.sam_rho > 0:
            loss = self._sam_training_step(model, inputs, num_items_in_batch)
        else:
            loss = super().training_step(model, inputs, num_items_in_batch)
        if not torch.isfinite(loss):
            raise DivergenceError(
                f"{self.method.name}: loss is {float(loss)} at step {self.state.global_step + 1}"
            )
        return loss

    def _sam_training_step(self, model, inputs, num_items_in_batch=None) -> torch.Tensor:
        """The Trainer's ``training_step`` with SAM's gradient (see ``unlearnkit.train.sam``) accumulated instead."""
        model.train()
        inputs = self._prepare_inputs(inputs)

        def step(net, terms):
            ctx = TrainStepContext(net, self.reference, terms=terms)
            loss, logs = self.method.step(ctx, inputs, self.method_config)
            return loss, logs, ctx

        net = self.accelerator.unwrap_model(model)
        loss, terms, grads = sam_grads(step, net, self.sam_rho, self.compute_loss_context_manager)
        self._record_terms(terms, loss)
        # Scaled for gradient accumulation exactly when the Trainer's own step would scale the loss.
        divide = self._ga_divisor(num_items_in_batch)
        with torch.no_grad():
            for param, grad in grads:
                grad = (grad / divide).to(param.dtype)
                if param.grad is None:
                    param.grad = grad
                else:
                    param.grad.add_(grad)
        return loss.detach() / divide

    def log(self, logs: dict[str, float], start_time: float | None = None) -> None:
        # --eval-every metrics (``eval/...``, unlearnkit.train.evaluation_callback) go through here so a
        # tracker shows them; they leave the loss terms accumulating for the next training log.
        if not any(str(key).startswith(EVAL_LOG_PREFIX) for key in logs):
            for name, total in self._term_sums.items():
                logs[name] = round(total / max(1, self._term_counts[name]), 5)
            self._term_sums.clear()
            self._term_counts.clear()
        super().log(logs, start_time)


EVAL_LOG_PREFIX = "eval/"  # the Trainer-log keys of evaluations during training: eval/forget_quality ...


def world_size() -> int:
    return int(os.environ.get("WORLD_SIZE", "1"))


def hf_steps_per_epoch(cfg: TrainConfig, n_examples: int, ws: int | None = None) -> int:
    """Optimiser steps per epoch as the HF Trainer counts them (DistributedSampler pads to ``ws``)."""
    ws = world_size() if ws is None else ws
    batches = math.ceil(math.ceil(n_examples / ws) / cfg.batch_size)
    return max(1, math.ceil(batches / cfg.grad_accum))


def epochs_to_run(cfg: TrainConfig, n_examples: int, ws: int | None = None) -> int:
    """How many (possibly partial) epochs a run starts: the epochs whose retain pairings it can see."""
    if cfg.max_steps > 0:
        return math.ceil(cfg.max_steps / hf_steps_per_epoch(cfg, n_examples, ws))
    return math.ceil(cfg.epochs)


def training_arguments(
    cfg: TrainConfig, output_dir: str, n_examples: int, quiet: bool = False, group_by_length: bool = False
) -> TrainingArguments:
    """Map our flat TrainConfig onto HF TrainingArguments (one place, so all commands agree).

    ``group_by_length``: batches of similar lengths (HF's LengthGroupedSampler) for plain fine-tuning on
    mixed data (100-token passages beside 30-token QA would otherwise pad most batches threefold).
    """
    ws = world_size()
    per_step = cfg.batch_size * cfg.grad_accum * ws
    steps_per_epoch = max(1, math.ceil(n_examples / per_step))
    total = cfg.max_steps if cfg.max_steps > 0 else math.ceil(steps_per_epoch * cfg.epochs)
    warmup = min(total - 1, round(cfg.warmup_epochs * steps_per_epoch)) if total > 1 else 0
    use_cuda = torch.cuda.is_available()
    # bf16-true: the weights were loaded in bfloat16 (unlearnkit.models.resolve_placement), so the
    # optimiser states are bfloat16 too; autocast on top keeps softmax / norms in float32 as
    # open-unlearning's bf16 runs do. Mixed bf16 / fp16: float32 master weights under autocast.
    bf16 = cfg.precision in ("bf16", "bf16-true") or (
        cfg.precision == "auto" and use_cuda and torch.cuda.is_bf16_supported()
    )
    kwargs = dict(
        output_dir=output_dir,
        per_device_train_batch_size=cfg.batch_size,
        gradient_accumulation_steps=cfg.grad_accum,
        learning_rate=cfg.lr,
        num_train_epochs=cfg.epochs,
        max_steps=cfg.max_steps,
        weight_decay=cfg.weight_decay,
        warmup_steps=max(0, warmup),
        lr_scheduler_type=cfg.lr_scheduler,
        max_grad_norm=cfg.max_grad_norm,
        seed=cfg.seed,
        data_seed=cfg.seed,
        bf16=bf16,
        fp16=cfg.precision == "fp16",
        # HF 5 name (``gradient_checkpointing`` is a deprecated alias that warns); non-reentrant.
        activation_checkpointing=cfg.gradient_checkpointing,
        logging_steps=max(1, total // 10),
        save_strategy="steps" if cfg.save_every > 0 else "no",
        save_steps=cfg.save_every if cfg.save_every > 0 else 500,
        save_total_limit=cfg.save_total_limit,
        report_to=cfg.report_to,
        remove_unused_columns=False,
        dataloader_num_workers=0,
        disable_tqdm=quiet,
        log_level="warning",
        use_cpu=not use_cuda,
    )
    if cfg.optim != "auto":  # auto: transformers' own default (adamw_torch_fused)
        kwargs["optim"] = cfg.optim
    if group_by_length:
        kwargs["train_sampling_strategy"] = "group_by_length"
    if ws > 1 and not use_cuda:
        kwargs["ddp_backend"] = "gloo"  # only when distributed: gloo in a single process crashes
    args = TrainingArguments(**kwargs)
    if ws == 1 and use_cuda and args.n_gpu > 1:
        # One process trains on one GPU (the first visible; --device cuda:N pins it): the Trainer's
        # nn.DataParallel over every visible GPU would split our paired forget / retain batches and
        # run the reference passes outside it. Several GPUs: torchrun / accelerate launch.
        args._n_gpu = 1
    return args
