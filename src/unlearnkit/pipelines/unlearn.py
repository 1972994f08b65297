"""``unlearn()``: the library entry point behind ``unlearnkit unlearn``, the Python API and the quickstart.

It reads as its steps, each a short function below: :func:`validate` the settings against the model,
:func:`encode` the data (fails before any training on a bad row), :func:`attribute` TokenUnlearn's
token scores with the original model when the method is token-level, :func:`prepare` the model (LoRA,
or the layers the method trains), set up the :func:`reference` / teacher (``reference``: copy | adapter
| cache | auto; see ``unlearnkit.train.reference.setup_reference`` and ``docs/SCALING.md``),
:func:`train` the ``UnlearnTrainer``, and :func:`collect` the trained model with its record.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from unlearnkit.config import build_configs, config_dict
from unlearnkit.data.encode import PromptFormat, pad_id_of
from unlearnkit.errors import UserError
from unlearnkit.models import check_supported
from unlearnkit.objectives.idk import idk_answer
from unlearnkit.train.anchor import anchor_callbacks
from unlearnkit.train.checkpoints import last_checkpoint
from unlearnkit.train.compute import ComputeCounter
from unlearnkit.train.evaluation_callback import DEFAULT_MAX_ITEMS as DEFAULT_EVAL_MAX_ITEMS
from unlearnkit.train.evaluation_callback import DEFAULT_MAX_NEW_TOKENS as DEFAULT_EVAL_MAX_NEW_TOKENS
from unlearnkit.train.methods import Method, get_method
from unlearnkit.train.reference import setup_reference
from unlearnkit.train.trainer import (
    EpochCallback,
    FiniteGradientGuard,
    PaddingCollator,
    PairedDataset,
    UnlearnTrainer,
    encode_rows,
    training_arguments,
)

log = logging.getLogger(__name__)


@dataclass
class UnlearnResult:
    """What :func:`unlearn` returns: the unlearned model and everything its folder records.

    ``save(path)`` writes the model, ``unlearnkit.json`` and the model card as ``unlearnkit unlearn``
    does (:mod:`unlearnkit.pipelines.model_outputs`). ``source`` says where the model and the data came
    from and where it ran (``model``, ``data``, ``placement``, ``resumed_from``, and ``defaults_from``: the
    folder whose recorded recipe applied, when not ``model``; set by the command line and by
    :func:`unlearnkit.unlearn`; a bare call of this function leaves them empty).
    """

    model: torch.nn.Module
    method: str
    config: dict[str, Any]
    train_loss: float
    log_history: list[dict] = field(default_factory=list)
    attribution: dict[str, Any] | None = None
    reference: dict[str, Any] = field(default_factory=dict)  # strategy used, cache size / build time
    is_main_process: bool = True  # multi-process runs: only this rank should save the model
    compute: dict[str, Any] = field(
        default_factory=dict
    )  # unlearnkit.train.compute: tokens x passes, seconds
    # --eval-every (unlearnkit.train.evaluation_callback): what was evaluated, the curve, the best step
    evaluation: dict[str, Any] | None = None
    eval_curve: list[dict] = field(default_factory=list)
    best: dict[str, Any] | None = None
    collapse_guard: dict[str, Any] | None = None  # unlearnkit.train.collapse_guard: its probes, any trigger
    # UnlearnTrainer.backward_record: did the forget part's backward run before the retain pass?
    backward: dict[str, Any] | None = None
    # what saving needs: the tokenizer, the resolved settings, the evaluation plan, extra files
    tokenizer: Any = field(default=None, repr=False)
    train_config: Any = field(default=None, repr=False)
    method_config: Any = field(default=None, repr=False)
    eval_plan: Any = field(default=None, repr=False)
    source: dict[str, Any] = field(default_factory=dict)
    attribution_files: dict[str, bytes] = field(default_factory=dict, repr=False)

    def save(self, path: str | Path, overwrite: bool = False) -> Path:
        """Write the model folder: weights, tokenizer, ``unlearnkit.json``, model card, training log and
        loss plot (plus the evaluation curve and TokenUnlearn's attribution when the run had them), as
        ``unlearnkit unlearn`` does. Atomic; an existing non-empty ``path`` is refused unless ``overwrite``."""
        from unlearnkit.api.errors import SAVE_FLAGS, python_errors
        from unlearnkit.pipelines.model_outputs import save_unlearned

        with python_errors(SAVE_FLAGS):
            return save_unlearned(self, path, overwrite=overwrite)


def resolve_configs(method: str | Method, overrides: dict[str, Any] | None = None):
    m = get_method(method) if isinstance(method, str) else method
    train_cfg, method_cfg = build_configs(m.config, dict(overrides or {}))
    return m, train_cfg, method_cfg


def apply_lora(model, cfg):
    """``model`` with LoRA adapters of ``cfg`` (``lora_r``, ``lora_alpha``, ``lora_target`` ...); a target
    the model lacks is one error line naming its linear layers."""
    import warnings

    from peft import LoraConfig, get_peft_model

    target = (
        cfg.lora_target
        if cfg.lora_target == "all-linear"
        else [t.strip() for t in cfg.lora_target.split(",")]
    )
    if cfg.gradient_checkpointing:
        # open-unlearning #178: with checkpointing, frozen embeddings give outputs that do not require
        # grad, so a reentrant checkpoint passes no gradient back to the adapters inside it and every
        # lora_B stays 0. transformers 5's Trainer does this too when it enables checkpointing; done
        # here as well so LoRA trains whatever enables checkpointing (tests/test_lora.py, reentrant case).
        model.enable_input_require_grads()
    lora = LoraConfig(
        r=cfg.lora_r,
        lora_alpha=cfg.lora_alpha,
        lora_dropout=cfg.lora_dropout,
        target_modules=target,
        task_type="CAUSAL_LM",
    )
    with warnings.catch_warnings():  # peft 0.21 reads transformers' deprecated alias; not the user's doing
        warnings.filterwarnings("ignore", message=".*is_gradient_checkpointing.*", category=FutureWarning)
        try:
            return get_peft_model(model, lora)
        except ValueError as err:  # e.g. "Target modules {'q_proj'} not found in the base model"
            if "target" not in str(err).lower():
                raise
            linear = sorted(
                {n.rsplit(".", 1)[-1] for n, mod in model.named_modules() if _is_lora_target(mod)}
            )
            raise UserError(
                f"--set lora_target={cfg.lora_target}: {type(model).__name__} has no such modules; its "
                f"linear layers are {', '.join(linear) or 'none'} (or use lora_target=all-linear)"
            ) from None


def _is_lora_target(module) -> bool:
    from transformers.pytorch_utils import Conv1D  # GPT-2's fused projections are Conv1D, not Linear

    return isinstance(module, (torch.nn.Linear, Conv1D))


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
    progress: str | None = None,
    attribution_dir: str | Path | None = None,
    general: Sequence[dict] = (),
    probe_retain: Sequence[dict] | None = None,
    eval_every: int | str | None = None,
    keep_best: str | None = None,
    eval_data=None,
    retain_model: str | None = None,
    eval_max_items: int = DEFAULT_EVAL_MAX_ITEMS,
    eval_max_new_tokens: int = DEFAULT_EVAL_MAX_NEW_TOKENS,
    **overrides: Any,
) -> UnlearnResult:
    """Unlearn ``forget`` from ``model`` while keeping ``retain``; returns the updated model.

    ``overrides`` are config keys (``lr=1e-5``, ``tau=2.3``, ``lambda=0.1`` ...), validated like ``--set``.
    ``progress``: one compact progress bar with the loss, labelled so, instead of the Trainer's output.
    The collapse guard (settings ``collapse_guard``, ``collapse_fraction``;
    :mod:`unlearnkit.train.collapse_guard`) asks a few ``probe_retain`` rows (default: ``retain``) and
    ``general`` rows (utility rows never trained on).
    ``eval_every`` (steps or ``"epoch"``): evaluate the selection half of ``eval_data`` (a benchmark)
    during training; ``keep_best`` (``"forget_quality+model_utility"``): return the best evaluated
    state; ``retain_model``: the oracle's folder, for forget quality (see
    :mod:`unlearnkit.train.evaluation_callback`). ``eval_every`` may also be a ready
    :class:`~unlearnkit.train.evaluation_callback.EvalPlan` (``plan_evaluation``; the other
    evaluation arguments are then ignored).

    The steps, in order: :func:`validate` the settings against the model, :func:`encode` the rows (a bad
    row fails before any training), :func:`attribute` TokenUnlearn's token scores with the original model,
    :func:`prepare` the model (LoRA, or the layers a method trains), set up the :func:`reference` /
    teacher, :func:`train`, and :func:`collect` the trained model and its record.
    """
    m, train_cfg, method_cfg = resolve_configs(method, overrides)
    evaluation = (eval_every, keep_best, eval_data, retain_model, eval_max_items, eval_max_new_tokens)
    plan = validate(m, train_cfg, model, *evaluation)
    work_existed = Path(work_dir).exists()
    counter = ComputeCounter().attach(model)  # from here on: token scores, cache build, training
    data = encode(m, method_cfg, train_cfg, tokenizer, forget, retain)
    attribution = attribute(m, model, tokenizer, data, method_cfg, train_cfg, attribution_dir, quiet)
    model = prepare(m, model, method_cfg, train_cfg)
    dataset = PairedDataset(
        data.forget, data.retain, data.idk, seed=train_cfg.seed, retain_idk=data.retain_idk
    )
    collator = PaddingCollator(pad_id_of(tokenizer))
    args = training_arguments(train_cfg, str(work_dir), len(dataset), quiet=quiet)
    counter.attach(model)  # LoRA / RMU may have wrapped it; a no-op when the decoder is the same
    ref, reference_info = reference(
        m, method_cfg, train_cfg, model, model_path, dataset, collator, args, quiet
    )
    watchers = _watchers(
        plan,
        train_cfg,
        method_cfg,
        tokenizer,
        data.fmt,
        retain if probe_retain is None else probe_retain,
        general,
        work_dir,
        len(dataset),
        args,
        counter,
        quiet,
    )
    trainer = UnlearnTrainer(
        model=model,
        args=args,
        train_dataset=dataset,
        data_collator=collator,
        method=m,
        method_config=method_cfg,
        reference=ref,
        callbacks=[
            EpochCallback(dataset),
            FiniteGradientGuard(m.name),
            counter,
            *anchor_callbacks(model, train_cfg.anchor_decay),
            *watchers.callbacks(),
        ],
    )
    out, best = train(trainer, watchers, plan, ref, counter, work_dir, resume, quiet, progress)
    if not work_existed:  # the Trainer creates its output_dir even with nothing to save in it
        with contextlib.suppress(OSError):
            Path(work_dir).rmdir()  # only succeeds when empty (no checkpoints)
    record = dict(best=best, attribution=attribution, reference=reference_info, tokenizer=tokenizer)
    return collect(
        trainer, out, m, train_cfg, method_cfg, counter, watchers, plan, model_path, work_dir, **record
    )


def validate(
    m: Method,
    train_cfg,
    model,
    eval_every=None,
    keep_best: str | None = None,
    eval_data=None,
    retain_model: str | None = None,
    eval_max_items: int = DEFAULT_EVAL_MAX_ITEMS,
    eval_max_new_tokens: int = DEFAULT_EVAL_MAX_NEW_TOKENS,
):
    """Refuse what cannot run before any work: ``keep_best`` without ``eval_every``, a model the method
    cannot read (``check_supported``). Returns the evaluation plan (None without ``eval_every``)."""
    plan = None
    if keep_best and eval_every is None:
        raise UserError("--keep-best needs --eval-every N (or epoch): the best of which evaluations?")
    if eval_every is not None:
        from unlearnkit.train.evaluation_callback import EvalPlan, plan_evaluation

        if isinstance(eval_every, EvalPlan):
            plan = eval_every
        elif eval_data is None:
            raise UserError("eval_every needs eval_data: the benchmark to evaluate the selection half of")
        else:
            plan = plan_evaluation(
                eval_data,
                train_cfg.seed,
                eval_every,
                keep_best,
                retain_model,
                eval_max_items,
                eval_max_new_tokens,
            )
    check_supported(
        model,
        m.name,
        teacher=m.uses_teacher,
        layer_activations=m.layer_activations,
        gradient_checkpointing=train_cfg.gradient_checkpointing,
    )
    return plan


@dataclass
class Encoded:
    """The rows as token ids: forget, retain and, for refusal-based methods, the refusals."""

    fmt: PromptFormat
    rows: Sequence[dict]  # the forget rows as encoded (raw-text mode: as passages)
    forget: list
    retain: list
    idk: list | None = None  # forget question, refusal answer
    retain_idk: list | None = None  # retain question, refusal answer (IDK+AP)


def encode(
    m: Method, method_cfg, train_cfg, tokenizer, forget: Sequence[dict], retain: Sequence[dict]
) -> Encoded:
    """Tokenise every row the method trains on; a row too long or of the wrong kind fails here."""
    if not forget:
        raise UserError("the forget set is empty: there is nothing to unlearn")
    fmt = PromptFormat.for_settings(tokenizer, train_cfg)  # chat: system prompt and date from the config
    if getattr(method_cfg, "raw_text", False):
        # Raw-text mode (MUSE-style): every token of the passage is a target, so the ASU KL covers all
        # of them; QA rows become "question answer" passages.
        forget = [r if "text" in r else {"text": f"{r['question']} {r['answer']}"} for r in forget]
    forget_enc = encode_rows(forget, tokenizer, fmt, train_cfg.max_length, where="forget")
    retain_enc = encode_rows(retain, tokenizer, fmt, train_cfg.max_length, where="retain")
    idk_enc = None
    raw = [r for r in list(forget) + list(retain) if "question" not in r]
    if raw and (m.needs_idk(method_cfg) or m.token_level):
        raise UserError(
            f"{m.name} needs question/answer rows (a refusal or token scores per answer); "
            "the data has raw 'text' rows: use e.g. ga, npo, asu or rmu"
        )
    if m.needs_idk(method_cfg):
        refusals = [{**r, "answer": idk_answer(train_cfg.seed, i)} for i, r in enumerate(forget)]
        idk_enc = encode_rows(refusals, tokenizer, fmt, train_cfg.max_length, where="forget")
    retain_idk_enc = None
    if getattr(m, "uses_retain_idk", False):
        refusals = [{**r, "answer": idk_answer(train_cfg.seed, i)} for i, r in enumerate(retain)]
        retain_idk_enc = encode_rows(refusals, tokenizer, fmt, train_cfg.max_length, where="retain")
    return Encoded(fmt, forget, forget_enc, retain_enc, idk_enc, retain_idk_enc)


def attribute(
    m: Method, model, tokenizer, data: Encoded, method_cfg, train_cfg, attribution_dir, quiet: bool
):
    """TokenUnlearn methods: score every forget answer token with the original model and attach the
    weights to the encoded forget rows (saved, with their heatmap, to ``attribution_dir``); None for
    any other method."""
    if not m.token_level:
        return None
    from unlearnkit.train.tokenweights import attach_token_weights

    attribution = attach_token_weights(
        model,
        tokenizer,
        data.fmt,
        data.rows,
        data.forget,
        method_cfg,
        train_cfg,
        attribution_dir,
        quiet=quiet,
    )
    if attribution_dir is not None:
        from unlearnkit.report.heatmap import write_heatmap

        write_heatmap(attribution_dir)  # the page that shows the scores just saved (or reused)
    return attribution


def prepare(m: Method, model, method_cfg, train_cfg):
    """Seed, then make the model trainable as the settings say: LoRA adapters, or the method's own
    restriction (RMU trains some layers only). Returns the model to train (LoRA wraps it)."""
    torch.manual_seed(train_cfg.seed)
    if train_cfg.gradient_checkpointing and hasattr(model, "config"):
        model.config.use_cache = False  # the Trainer enables (non-reentrant) activation checkpointing
    if train_cfg.lora_r > 0:
        return apply_lora(model, train_cfg)
    if getattr(m, "prepare", None) is not None:
        m.prepare(model, method_cfg)  # e.g. RMU trains only some layers (LoRA already restricts training)
    return model


def reference(m: Method, method_cfg, train_cfg, model, model_path, dataset, collator, args, quiet: bool):
    """The original model's outputs the method needs (``reference``: copy | adapter | cache | auto; see
    :func:`unlearnkit.train.reference.setup_reference` and ``docs/SCALING.md``), with what it cost."""
    ref, info = setup_reference(m, method_cfg, train_cfg, model, model_path, dataset, collator, args)
    if info.get("strategy") not in (None, "none") and not quiet:
        log.info("reference: %s", info)
    return ref, info


def train(trainer, watchers, plan, ref, counter, work_dir, resume: bool, quiet: bool, progress: str | None):
    """Run the Trainer (from the last complete checkpoint of ``work_dir`` when ``resume``); returns its
    output and, with ``keep_best``, the best evaluated state."""
    _check_watchable(trainer, watchers, plan)
    if watchers.evaluation is not None:
        watchers.evaluation.log_to = _eval_logger(trainer)  # eval/<metric> in log_history and the tracker
    if quiet or progress:
        from transformers.trainer_callback import PrinterCallback, ProgressCallback

        trainer.remove_callback(ProgressCallback)
        trainer.remove_callback(PrinterCallback)
    if progress:
        from unlearnkit.train.finetune import StepProgress

        trainer.add_callback(StepProgress(progress))
    counter.attach(getattr(ref, "model", None))  # a frozen copy runs its own forwards
    checkpoint = last_checkpoint(work_dir) if resume else None
    counter.restore(checkpoint)
    for watcher in watchers.callbacks():
        watcher.restore(checkpoint)  # a resumed run continues the curve and the guard's record
    out = trainer.train(resume_from_checkpoint=checkpoint)
    evaluator = watchers.evaluation
    best = (
        evaluator.finish(trainer.model) if evaluator is not None and trainer.is_world_process_zero() else None
    )
    return out, best


def collect(
    trainer,
    out,
    m: Method,
    train_cfg,
    method_cfg,
    counter,
    watchers,
    plan,
    model_path,
    work_dir,
    **record: Any,
):
    """The trained model as one loads it (sharded weights gathered, LoRA merged unless
    ``lora_save=adapter``) and what its folder records of the run (``record``: what the earlier steps
    found: the best state, the attribution, the reference's cost, the tokenizer)."""
    compute = counter.totals()  # a collective in multi-process runs: every rank gets here
    counter.detach()
    model = trainer.model
    is_peft = train_cfg.lora_r > 0
    is_main = bool(trainer.is_world_process_zero())
    sharded = _sharded(trainer)
    if sharded:  # FSDP / ZeRO-3: the live weights are shards; gather them into a real model
        model = _gathered_model(trainer, model, is_peft, model_path, Path(work_dir) / "final")
    if is_peft and train_cfg.lora_save == "merged" and (is_main or not sharded):
        model = model.merge_and_unload()  # a plain transformers model (loads with AutoModelForCausalLM)
    # lora_save=adapter: the PEFT model, unmerged; its save_pretrained writes the adapter alone.
    model.eval()
    evaluator = watchers.evaluation
    return UnlearnResult(
        model,
        m.name,
        {"method": m.name, **config_dict(train_cfg, method_cfg)},
        float(out.training_loss),
        list(trainer.state.log_history),
        is_main_process=is_main,
        compute=compute,
        evaluation=plan.describe() if plan is not None else None,
        eval_curve=list(evaluator.curve) if evaluator is not None else [],
        collapse_guard=_guard_record(train_cfg, watchers),
        backward=trainer.backward_record(),
        train_config=train_cfg,
        method_config=method_cfg,
        eval_plan=plan,
        **record,
    )


@dataclass
class _Watchers:
    """The callbacks that look at the model while it trains: the collapse guard and evaluation."""

    guard: Any = None
    evaluation: Any = None
    guard_off: str = ""  # why the guard is off although the settings ask for it

    def callbacks(self) -> list:
        return [cb for cb in (self.guard, self.evaluation) if cb is not None]


def _watchers(
    plan, train_cfg, method_cfg, tokenizer, fmt, retain, general, work_dir, n, args, counter, quiet
):
    from unlearnkit.train.trainer import hf_steps_per_epoch

    out = _Watchers()
    if train_cfg.collapse_guard != "off":
        from unlearnkit.train.collapse_guard import CollapseGuard, UtilityProbe

        probe = UtilityProbe.from_rows(tokenizer, fmt, retain, general, train_cfg.seed)
        if probe is not None:
            hint = {"lr": train_cfg.lr, "forget_weight": method_cfg.forget_weight}
            if train_cfg.max_steps > 0:
                hint["max_steps"] = train_cfg.max_steps
            else:
                hint["epochs"] = train_cfg.epochs
            out.guard = CollapseGuard(
                probe, tokenizer, train_cfg.collapse_guard, train_cfg.collapse_fraction, hint, counter, quiet
            )
        else:
            out.guard_off = "no retain question, nor a retain passage of 8+ tokens, to probe"
    if plan is not None:
        from unlearnkit.train.evaluation_callback import EvalDuringTraining

        if args.process_index == 0:
            plan.prepare_references(args.device)  # the oracle's numbers, once, before training
        steps = hf_steps_per_epoch(train_cfg, n)
        out.evaluation = EvalDuringTraining(plan, tokenizer, work_dir, steps, counter, quiet)
    return out


def _eval_logger(trainer):
    """``Trainer.log`` for the evaluations during training. Trainer.log's ``on_log`` clears
    ``control.should_log``; called from a step-end callback that would drop the training log due at the
    same step, so the flag is put back."""

    def log(logs: dict[str, float]) -> None:
        should_log = trainer.control.should_log
        trainer.log(logs)
        trainer.control.should_log = should_log

    return log


def _check_watchable(trainer, watchers: _Watchers, plan) -> None:
    """FSDP / ZeRO-3 shard the weights: one process cannot generate with them alone."""
    if not _sharded(trainer):
        return
    if plan is not None:
        raise UserError(
            "--eval-every with FSDP / ZeRO-3: the main process cannot evaluate sharded weights alone; "
            "use DDP (torchrun) or evaluate the saved model afterwards"
        )
    if watchers.guard is not None:
        trainer.remove_callback(watchers.guard)
        watchers.guard, watchers.guard_off = None, "FSDP / ZeRO-3 shard the weights"


def _guard_record(train_cfg, watchers: _Watchers) -> dict[str, Any]:
    if watchers.guard is not None:
        return watchers.guard.record()
    if train_cfg.collapse_guard == "off":
        return {"action": "off"}
    return {"action": "off", "why": watchers.guard_off}


def _sharded(trainer) -> bool:
    if getattr(trainer, "is_fsdp_enabled", False):
        return True
    if getattr(trainer, "is_deepspeed_enabled", False):
        from transformers.integrations.deepspeed import is_deepspeed_zero3_enabled

        return bool(is_deepspeed_zero3_enabled())
    return False


def _gathered_model(trainer, model, is_peft: bool, model_path: str | None, final: Path):
    """Let the Trainer gather and write the full weights (rank 0), then load them back on rank 0.

    Other ranks return their (sharded) model: only the main process saves (``is_main_process``).
    """
    trainer.save_model(str(final))  # collective: FULL_STATE_DICT (FSDP) / 16-bit gather (ZeRO-3)
    trainer.accelerator.wait_for_everyone()
    if not trainer.is_world_process_zero():
        return model
    from unlearnkit.models import load_model

    if not is_peft:
        return load_model(str(final))
    from peft import PeftModel

    if not model_path:
        raise UserError("LoRA under FSDP / ZeRO-3 needs model_path to rebuild the model from its adapters")
    return PeftModel.from_pretrained(load_model(model_path), str(final))
