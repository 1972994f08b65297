"""Fine-tuning on a benchmark folder: the target (forget + retain) and the retain oracle (retain), as
TOFU and MUSE make theirs from a pretrained model. Fine-tunes any HF model or the embedded world's base
(``unlearnkit pretrain``), or trains the tiny Llama from scratch (then on ``general`` too).
"""

from __future__ import annotations

import dataclasses
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import torch
from tqdm.auto import tqdm
from transformers import TrainerCallback

from unlearnkit.config import TrainConfig
from unlearnkit.data import Benchmark
from unlearnkit.data.encode import PromptFormat, pad_id_of
from unlearnkit.errors import UserError
from unlearnkit.train.anchor import anchor_callbacks
from unlearnkit.train.checkpoints import last_checkpoint
from unlearnkit.train.compute import ComputeCounter
from unlearnkit.train.pretrain import read_replay
from unlearnkit.train.trainer import (
    PaddingCollator,
    QADataset,
    TiedWeightsTrainer,
    encode_rows,
    training_arguments,
)

SPLITS_FOR = {"all": ("forget", "retain", "general"), "retain": ("retain", "general")}

# From-scratch training of the ~1M-parameter model needs a far larger learning rate than
# fine-tuning a pretrained one; 40 epochs at 3e-3 reaches > 99 % answer-token accuracy.
TINY_DEFAULTS = dict(
    lr=3e-3,
    epochs=40.0,
    batch_size=32,
    grad_accum=1,
    warmup_epochs=1.0,
    weight_decay=0.0,
    lr_scheduler="cosine",
    max_length=128,
)
# TOFU's fine-tuning recipe for pretrained models (arXiv 2401.06121): lr 1e-5, 5 epochs, batch 32.
HF_DEFAULTS = dict(lr=1e-5, epochs=5.0, batch_size=8, grad_accum=4, warmup_epochs=1.0, weight_decay=0.01)


@dataclass
class FinetuneResult:
    model: torch.nn.Module
    tokenizer: object
    train_loss: float
    n_examples: int
    compute: dict = dataclasses.field(
        default_factory=dict
    )  # unlearnkit.train.compute: tokens x passes, seconds
    log_history: list = dataclasses.field(default_factory=list)  # the Trainer's logged steps


def training_rows(bench: Benchmark, split: str, from_scratch: bool = False) -> list[dict]:
    """The rows the target (``all``: forget + retain) or the retain oracle (``retain``) is trained on.

    ``general`` (TOFU's real authors / world facts) is what a pretrained model already knows and must
    keep: it measures utility and is never fine-tuned on (TOFU's published models never saw it), unless
    the model starts from nothing (``from_scratch``), which could not know it otherwise.
    """
    if split not in SPLITS_FOR:
        raise UserError(f"--split {split}: use 'all' (the target) or 'retain' (the retain oracle)")
    names = SPLITS_FOR[split] if from_scratch else tuple(n for n in SPLITS_FOR[split] if n != "general")
    rows = [row for name in names for row in bench.split(name)]
    return rows + read_replay(augmentation_files(bench, split))


AUGMENT_DIR = "augment"


def augmentation_files(bench: Benchmark, split: str) -> list[Path]:
    """``<folder>/augment/<split>.jsonl`` of the splits ``split`` trains on, where the folder has them.

    A benchmark folder may restate its facts in other wordings and orders (QA pairs or ``text`` rows):
    a fine-tune trains on them with their split, evaluation and unlearning never read them. The embedded
    world writes them (:mod:`unlearnkit.world.augment`) so that a tiny model learns facts it can state
    in a wording it was not trained on; a user's folder without ``augment/`` trains on its splits only.
    """
    root = getattr(bench, "path", None)
    if root is None or not Path(root).is_dir():
        return []
    names = [n for n in SPLITS_FOR[split] if n != "general"]
    return [p for n in names if (p := Path(root) / AUGMENT_DIR / f"{n}.jsonl").is_file()]


class StepProgress(TrainerCallback):
    """One compact progress bar (refreshed at most once a second) instead of the Trainer's chatty one."""

    # A run whose estimate exceeds this many seconds says so once, after its first step (a 135M model on
    # a CPU takes tens of seconds a step: the user should learn that the run is an hour before it is).
    ESTIMATE_AFTER_S = 120.0

    def __init__(self, desc: str) -> None:
        self.desc, self.bar, self.started = desc, None, None

    def on_train_begin(self, args, state, control, **kwargs):
        self.bar = tqdm(total=state.max_steps, desc=self.desc, mininterval=1.0, leave=False, unit="step")
        self.started = (time.monotonic(), state.global_step)

    def on_step_end(self, args, state, control, **kwargs):
        self.bar.update(state.global_step - self.bar.n)
        begun, first = self.started or (None, 0)
        if begun is not None and state.global_step == first + 1:
            self.started = None
            line = estimate_line(self.desc, time.monotonic() - begun, state.max_steps - first, self.ESTIMATE_AFTER_S)
            if line:
                tqdm.write(line, file=sys.stderr)

    def on_log(self, args, state, control, logs=None, **kwargs):
        if logs and "loss" in logs and self.bar is not None:
            self.bar.set_postfix(loss=f"{float(logs['loss']):.3f}", refresh=False)

    def on_train_end(self, args, state, control, **kwargs):
        if self.bar is not None:
            self.bar.close()


def estimate_line(desc: str, first_step_s: float, steps: int, threshold_s: float) -> str | None:
    """``"desc: N steps, the first took X s: about M minutes in all"`` when that is over ``threshold_s``."""
    total = first_step_s * steps
    if steps <= 1 or total <= threshold_s:
        return None
    return (
        f"unlearnkit: {desc}: {steps} steps, the first took {first_step_s:.0f} s: about "
        f"{total / 60:.0f} minutes in all on this machine"
    )


def finetune(
    model,
    tokenizer,
    rows: list[dict],
    cfg: TrainConfig,
    work_dir: str | Path,
    quiet: bool = False,
    progress: str | None = None,
    resume: bool = False,
) -> FinetuneResult:
    """Standard causal-LM fine-tuning on QA rows with the question masked out of the loss (raw ``text``
    rows: every token is a target, as in pretraining).

    ``quiet`` drops the Trainer's own progress/printing; ``progress`` then shows one compact bar.
    ``cfg.save_every`` > 0 checkpoints into ``work_dir``; ``resume`` continues from its last complete
    checkpoint (the Trainer restores optimiser, scheduler, RNG and data order, so a killed and resumed
    run ends with the weights of an uninterrupted one) and adds the compute counted before the kill.
    """
    fmt = PromptFormat.for_settings(tokenizer, cfg)  # system_prompt / date_string as --set gives them
    # documents end with EOS, as in any pretraining / fine-tuning corpus: the model learns where they end
    encoded = encode_rows(rows, tokenizer, fmt, cfg.max_length, where="train", text_eos=True)
    args = training_arguments(cfg, str(work_dir), len(encoded), quiet=quiet, group_by_length=True)
    counter = ComputeCounter().attach(model)  # the oracle's count is the denominator of compute_fraction
    trainer = TiedWeightsTrainer(
        model=model,
        args=args,
        train_dataset=QADataset(encoded),
        data_collator=PaddingCollator(pad_id_of(tokenizer)),
        callbacks=[counter, *anchor_callbacks(model, cfg.anchor_decay)],
    )
    if quiet or progress:
        from transformers.trainer_callback import PrinterCallback, ProgressCallback

        trainer.remove_callback(ProgressCallback)
        trainer.remove_callback(PrinterCallback)
    if progress:
        trainer.add_callback(StepProgress(progress))
    checkpoint = last_checkpoint(work_dir) if resume else None
    counter.restore(checkpoint)
    out = trainer.train(resume_from_checkpoint=checkpoint)
    compute = counter.totals()
    counter.detach()
    model.eval()
    history = list(trainer.state.log_history)
    return FinetuneResult(model, tokenizer, float(out.training_loss), len(encoded), compute, history)


def default_config(tiny: bool, overrides: dict | None = None) -> TrainConfig:
    base = dict(TINY_DEFAULTS if tiny else HF_DEFAULTS)
    base.update(overrides or {})
    return TrainConfig(**base)


def describe(cfg: TrainConfig) -> dict:
    return {k: v for k, v in dataclasses.asdict(cfg).items() if not k.startswith("lora")}
