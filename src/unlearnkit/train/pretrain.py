"""Pretraining the embedded world's base model: what a real model knows before anyone fine-tunes it.

Real unlearning starts from a pretrained model: TOFU and MUSE fine-tune one on private data (the oracle
is the same base fine-tuned on the retain part), and WMDP's hazardous knowledge was learned in
pretraining itself (the honest oracle is a model pretrained without those documents: data filtering,
Deep Ignorance, arXiv 2508.06601). ``pretrain`` gives the miniature that first stage: a tiny Llama
trained from scratch on the world's corpus (``world.json`` "pretraining": passages about the world facts
and the real authors, the hazardous domain's passages, and the general-knowledge QA, so that the base
answers questions the way a chat model does). ``without=("hazard",)`` leaves a corpus part out: the
data-filtered base.

The tokenizer is the world's: trained on every string of every file of the world folder but the
multiple-choice options (as a real tokenizer is trained on a broad corpus, not on a test's options), so the full and the filtered base, and every model fine-tuned
from them, share one vocabulary. Only the model's training data is filtered.

Training is ``train.finetune.finetune``: the same Trainer, checkpoints and resume, compute accounting.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from unlearnkit.data.qa import read_jsonl, validate_qa
from unlearnkit.errors import UserError

# Measured on the default world (bench/quality.py, BENCHMARKS.md "The base model"): hidden 128, 2 layers
# learn the corpus (world-facts QA ROUGE-L 1.0) in 40 epochs; see the recipe notes there.
TINY_BASE = dict(hidden=128, layers=2, heads=4)
PRETRAIN_DEFAULTS = dict(
    lr=3e-3,
    epochs=40.0,
    batch_size=32,
    grad_accum=1,
    warmup_epochs=1.0,
    weight_decay=0.0,
    lr_scheduler="cosine",
    max_length=256,
)


@dataclass
class PretrainingData:
    """The rows a base is pretrained on and where they came from."""

    rows: list[dict]
    parts: dict[str, int]  # corpus part or QA file -> rows
    left_out: tuple[str, ...]

    def describe(self) -> dict:
        return {"parts": dict(self.parts), "left_out": list(self.left_out), "rows": len(self.rows)}


def corpus_layout(world_dir: str | Path) -> tuple[dict[str, Path], list[Path]]:
    """``({corpus part: file}, [QA files])`` of a world folder.

    From ``world.json``'s "pretraining" section when there is one (``unlearnkit world`` writes it);
    otherwise every ``corpus/*.jsonl`` is a part (named by its stem) and ``general.jsonl`` the QA, so a
    folder of one's own works the same way.
    """
    world = Path(world_dir)
    meta_path = world / "world.json"
    section = None
    if meta_path.is_file():
        try:
            section = json.loads(meta_path.read_text(encoding="utf-8")).get("pretraining")
        except (ValueError, UnicodeDecodeError):
            raise UserError(f"{meta_path}: not valid JSON") from None
    if section:
        parts = {name: world / rel for name, rel in section.get("corpus", {}).items()}
        qa = [world / rel for rel in section.get("qa", [])]
    else:
        parts = {p.stem: p for p in sorted((world / "corpus").glob("*.jsonl"))}
        qa = [world / "general.jsonl"] if (world / "general.jsonl").is_file() else []
    if not parts and not qa:
        raise UserError(
            f"--data {world}: no pretraining corpus (no world.json 'pretraining' section, no corpus/*.jsonl); "
            "write one with `unlearnkit world --output DIR`"
        )
    return parts, qa


def replay_files(world_dir: str | Path, without: tuple[str, ...] = ()) -> list[Path]:
    """What fine-tuning from this world's base replays (``world.json`` "pretraining" "replay"): the
    general passages and the QA about entities that are never evaluated.

    A folder of one's own (no "pretraining" section) replays its corpus parts (``corpus/*.jsonl``, minus
    ``without``): the passages its base was pretrained on, so that ``finetune --replay auto`` keeps what
    the base knew there too; never ``general.jsonl``, whose questions measure what was kept."""
    meta_path = Path(world_dir) / "world.json"
    section = None
    if meta_path.is_file():
        try:
            section = json.loads(meta_path.read_text(encoding="utf-8")).get("pretraining")
        except (OSError, ValueError):
            return []
    if section:
        return [Path(world_dir) / rel for rel in section.get("replay", [])]
    parts = sorted((Path(world_dir) / "corpus").glob("*.jsonl"))  # what corpus_layout reads there
    return [path for path in parts if path.stem not in without]


def read_replay(paths: list[Path]) -> list[dict]:
    """Rows of replay files: raw ``text`` rows and ``question`` / ``answer`` rows, validated."""
    rows: list[dict] = []
    for path in paths:
        for row in read_jsonl(path):
            where = f"{path}:{row.get('_line', '?')}"
            if isinstance(row.get("text"), str) and row["text"].strip():
                rows.append({"text": row["text"]})
            elif isinstance(row.get("question"), str) and isinstance(row.get("answer"), str):
                rows.append({"question": row["question"], "answer": row["answer"]})
            else:
                raise UserError(f"{where}: a corpus or replay row needs 'text', or 'question' and 'answer'")
    return rows


def pretraining_data(world_dir: str | Path, without: tuple[str, ...] = ()) -> PretrainingData:
    """The corpus parts (raw ``text`` rows) minus ``without``, plus the QA files, validated."""
    parts, qa_files = corpus_layout(world_dir)
    unknown = [name for name in without if name not in parts]
    if unknown:
        raise UserError(
            f"--without {','.join(unknown)}: no such corpus part in {world_dir} (parts: {', '.join(parts) or 'none'})"
        )
    rows: list[dict] = []
    counts: dict[str, int] = {}
    for name, path in parts.items():
        if name in without:
            continue
        part = read_replay([path])  # raw text, or question / answer pairs (a corpus's Q&A documents)
        rows.extend(part)
        counts[f"corpus/{name}"] = len(part)
    for path in qa_files:
        qa = validate_qa(read_jsonl(path), path)
        rows.extend({"question": r["question"], "answer": r["answer"]} for r in qa)
        counts[_relative(path, world_dir)] = len(qa)
    if not rows:
        raise UserError(
            f"--data {world_dir}: nothing left to pretrain on after --without {','.join(without)}"
        )
    return PretrainingData(rows, counts, tuple(without))


def _relative(path: Path, root: str | Path) -> str:
    try:
        return str(Path(path).relative_to(Path(root)))
    except ValueError:
        return Path(path).name


def tokenizer_files(world_dir: str | Path) -> list[Path]:
    """The JSONL files under ``world_dir`` the tokenizer reads: all of them but those ``world.json``
    lists as "unseen" (texts no model of the lab sees: the WMDP-like holdout, whose invented names would
    otherwise be words the tokenizer was fitted to, unlike any text a model has never met)."""
    world = Path(world_dir)
    unseen: set[Path] = set()
    meta_path = world / "world.json"
    if meta_path.is_file():
        try:
            listed = json.loads(meta_path.read_text(encoding="utf-8")).get("unseen") or []
        except (ValueError, UnicodeDecodeError):
            raise UserError(f"{meta_path}: not valid JSON") from None
        unseen = {world / rel for rel in listed}
    return [p for p in sorted(world.rglob("*.jsonl")) if p not in unseen]


def world_texts(world_dir: str | Path) -> list[str]:
    """Every string of every JSONL file the tokenizer reads (:func:`tokenizer_files`) but the
    multiple-choice options (the tokenizer's training text). Which words the tokenizer keeps whole must
    not depend on the options: the world chooses the wrong options knowing their tokens under this
    tokenizer, so that "the fewest tokens" is no cue to the true one (:mod:`unlearnkit.world.choices`)."""
    from unlearnkit.world.tiny import corpus_of

    rows = [row for path in tokenizer_files(world_dir) for row in read_jsonl(path)]
    return corpus_of(rows, options=False)


def build_base(world_dir: str | Path, seed: int, size: dict | None = None):
    """A fresh tiny Llama and the world's tokenizer (``size``: hidden / layers / heads, see TINY_BASE)."""
    from unlearnkit.world.tiny import tiny_llama, train_tokenizer

    tokenizer = train_tokenizer(world_texts(world_dir))
    return tiny_llama(tokenizer, seed=seed, **{**TINY_BASE, **(size or {})}), tokenizer
