"""Question-answer data in the TOFU schema, read from a benchmark folder of JSON Lines.

A benchmark folder holds ``forget.jsonl`` and ``retain.jsonl`` (required) and optionally
``holdout.jsonl`` (never trained on: non-members for membership inference) and ``general.jsonl``
(unrelated knowledge the model must keep; the role of TOFU's real-authors / world-facts splits).
Every line is a JSON object with ``question`` and ``answer``; evaluation splits add
``paraphrased_answer`` (string) and ``perturbed_answer`` (non-empty list of strings).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from unlearnkit.errors import UserError

SPLITS = ("forget", "retain", "holdout", "general")
REQUIRED_SPLITS = ("forget", "retain")
QA_FIELDS = ("question", "answer")
EVAL_FIELDS = ("paraphrased_answer", "perturbed_answer")


def read_jsonl(path: str | Path) -> list[dict]:
    """Read a JSON Lines file; any problem is a one-line ``UserError`` naming the file and line."""
    path = Path(path)
    if not path.is_file():
        raise UserError(f"data file {path} does not exist")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as err:
        raise UserError(
            f"{path} is not UTF-8 text (bad byte at offset {err.start}); re-save it as UTF-8"
        ) from None
    rows = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as err:
            raise UserError(f"{path}:{lineno}: invalid JSON ({err.msg} at column {err.colno})") from None
        if not isinstance(row, dict):
            raise UserError(f"{path}:{lineno}: expected a JSON object per line, got {type(row).__name__}")
        row["_line"] = lineno
        rows.append(row)
    return rows


def validate_qa(rows: list[dict], path: str | Path, eval_fields: bool = False) -> list[dict]:
    """Check every row has non-empty string ``question``/``answer`` (and the evaluation fields)."""
    required = QA_FIELDS + (EVAL_FIELDS if eval_fields else ())
    for row in rows:
        where = f"{path}:{row.get('_line', '?')}"
        for key in required:
            if key not in row:
                raise UserError(f"{where}: missing field '{key}' (required: {', '.join(required)})")
            value = row[key]
            if key == "perturbed_answer":
                if not isinstance(value, list) or not value:
                    raise UserError(f"{where}: 'perturbed_answer' must be a non-empty list of strings")
                if not all(isinstance(v, str) and v.strip() for v in value):
                    raise UserError(f"{where}: 'perturbed_answer' must contain only non-empty strings")
            elif not isinstance(value, str) or not value.strip():
                raise UserError(f"{where}: field '{key}' must be a non-empty string")
    return rows


@dataclass
class Benchmark:
    """The splits of one benchmark folder (``holdout``/``general`` may be empty)."""

    path: Path
    forget: list[dict]
    retain: list[dict]
    holdout: list[dict] = field(default_factory=list)
    general: list[dict] = field(default_factory=list)

    def split(self, name: str) -> list[dict]:
        return getattr(self, name)

    @property
    def has_eval_fields(self) -> bool:
        return all(k in self.forget[0] for k in EVAL_FIELDS)


def load_benchmark(data_dir: str | Path, eval_fields: bool = False) -> Benchmark:
    """Load and validate a benchmark folder. ``eval_fields`` requires the truth-ratio fields."""
    data_dir = Path(data_dir)
    if not data_dir.is_dir():
        raise UserError(f"--data {data_dir} is not a folder (expected forget.jsonl and retain.jsonl inside)")
    splits: dict[str, list[dict]] = {}
    for name in SPLITS:
        path = data_dir / f"{name}.jsonl"
        if not path.exists():
            if name in REQUIRED_SPLITS:
                raise UserError(f"{path} is missing: a benchmark folder needs forget.jsonl and retain.jsonl")
            splits[name] = []
            continue
        splits[name] = validate_qa(read_jsonl(path), path, eval_fields=eval_fields)
    if not splits["forget"]:
        raise UserError(f"{data_dir / 'forget.jsonl'} is empty: there is nothing to forget")
    if not splits["retain"]:
        raise UserError(f"{data_dir / 'retain.jsonl'} is empty: a retain set is needed to keep utility")
    return Benchmark(path=data_dir, **splits)


def forget_retain_overlap(bench: Benchmark) -> int:
    """Number of forget questions that also appear verbatim in the retain set (reported, not fatal)."""
    retain_q = {r["question"].strip() for r in bench.retain}
    return sum(1 for r in bench.forget if r["question"].strip() in retain_q)
