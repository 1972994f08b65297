"""Benchmark folders of JSON Lines: question-answer data in the TOFU schema, or raw text.

A QA benchmark folder holds ``forget.jsonl`` and ``retain.jsonl`` (required) and optionally
``holdout.jsonl`` (never trained on: non-members for membership inference) and ``general.jsonl``
(unrelated knowledge the model must keep; the role of TOFU's real-authors / world-facts splits).
Every line is a JSON object with ``question`` and ``answer``; evaluation splits add
``paraphrased_answer`` (string) and ``perturbed_answer`` (non-empty list of strings).

Raw-text folders are recognised by :func:`folder_kind` and read by
:func:`unlearnkit.data.sources.load_text_folder`: a ``benchmark.json`` naming the ``kind``
(``muse``: a MUSE-like folder, ``wmdp``: a WMDP-like folder, ``text``: plain passages), or, without
one, a ``forget.jsonl`` whose rows have ``text`` and no ``question``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from unlearnkit.errors import UserError

SPLITS = ("forget", "retain", "holdout", "general")
REQUIRED_SPLITS = ("forget", "retain")
QA_FIELDS = ("question", "answer")
MANIFEST = "benchmark.json"
QA_KINDS = ("qa", "tofu")  # benchmark.json kinds read by the QA loader below
TEXT_KINDS = ("text", "muse", "wmdp")  # read by unlearnkit.data.sources.load_text_folder
EVAL_FIELDS = ("paraphrased_answer", "perturbed_answer")
# TOFU scores real authors / world facts as answer vs perturbed_answer (no paraphrase).
GENERAL_EVAL_FIELDS = ("perturbed_answer",)


def read_jsonl(path: str | Path) -> list[dict]:
    """Read a JSON Lines file; any problem is a one-line ``UserError`` naming the file and line."""
    path = Path(path)
    if not path.is_file():
        raise UserError(f"data file {path} does not exist")
    try:
        text = path.read_text(encoding="utf-8-sig")  # a leading BOM (Windows editors) is fine
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


def validate_qa(
    rows: list[dict],
    path: str | Path,
    eval_fields: bool | tuple[str, ...] = False,
    label: Callable[[int, dict], str] | None = None,
) -> list[dict]:
    """Check every row has non-empty string ``question``/``answer``.

    The evaluation fields are required with ``eval_fields`` (``True``: all of them; a tuple: those
    named, e.g. ``("perturbed_answer",)`` for TOFU's real-authors / world-facts files, which have no
    paraphrase); otherwise they are optional, but a present one must still be well formed
    (``perturbed_answer`` a non-empty list of non-empty strings), so that a malformed file is an error
    wherever it is read, never silently mis-scored. ``label(index, row)`` names a row in the errors
    (default ``path:line``; the Python API: ``forget[3]``).
    """
    wanted = EVAL_FIELDS if eval_fields is True else tuple(eval_fields or ())
    required = QA_FIELDS + wanted
    for i, row in enumerate(rows):
        where = label(i, row) if label is not None else f"{path}:{row.get('_line', '?')}"
        for key in QA_FIELDS + EVAL_FIELDS:
            if key not in row:
                if key in required:
                    raise UserError(f"{where}: missing field '{key}' (required: {', '.join(required)})")
                continue
            value = row[key]
            if key == "perturbed_answer":
                if not isinstance(value, list) or not value:
                    raise UserError(
                        f"{where}: 'perturbed_answer' must be a non-empty list of strings, "
                        f"got {_describe(value)}"
                    )
                if not all(isinstance(v, str) and v.strip() for v in value):
                    raise UserError(f"{where}: 'perturbed_answer' must contain only non-empty strings")
            elif not isinstance(value, str) or not value.strip():
                raise UserError(f"{where}: field '{key}' must be a non-empty string, got {_describe(value)}")
    return rows


def _describe(value: object) -> str:
    if isinstance(value, str):
        return "an empty string" if not value.strip() else "a string"
    if isinstance(value, list):
        return "an empty list" if not value else "a list"
    return "null" if value is None else type(value).__name__


def eval_field_notes(
    bench: Benchmark,
    label: Callable[[str, int, dict], str] | None = None,
    split_label: Callable[[str], str] | None = None,
) -> list[str]:
    """For ``eval``: one note naming the splits without the truth-ratio fields (their truth ratio, and
    for forget the forget quality, are not computed). A split where only some rows have the fields is
    an error naming the first row without them: its metrics would otherwise be silently wrong.
    ``label(split, index, row)`` / ``split_label(split)`` name a row / a split (default: the folder's
    file and line; the Python API: ``data['forget'][3]``).
    """
    lacking = []
    for name in SPLITS:
        rows = bench.split(name)
        fields = GENERAL_EVAL_FIELDS if name == "general" else EVAL_FIELDS
        have = [all(k in r for k in fields) for r in rows]
        if not rows or all(have):
            continue
        if any(have):
            index = have.index(False)
            row = rows[index]
            missing = [k for k in fields if k not in row]
            where = (
                label(name, index, row)
                if label is not None
                else f"{Path(bench.path) / f'{name}.jsonl'}:{row.get('_line', '?')}"
            )
            raise UserError(
                f"{where}: missing field '{missing[0]}' "
                "although other rows of this file have it; truth ratios need paraphrased_answer and "
                "perturbed_answer on every row"
            )
        lacking.append(name)
    if not lacking:
        return []
    quality = " (so no forget quality)" if "forget" in lacking else ""
    them = "it" if len(lacking) == 1 else "them"
    if split_label is not None:
        return [
            f"{', '.join(split_label(n) for n in lacking)} have no paraphrased_answer/perturbed_answer: "
            f"truth ratios are not computed for {them}{quality}"
        ]
    return [
        f"{', '.join(f'{n}.jsonl' for n in lacking)} in {bench.path} have no paraphrased_answer/perturbed_answer: "
        f"truth ratios are not computed for {them}{quality}"
    ]


@dataclass
class Benchmark:
    """The splits of one benchmark folder (``holdout``/``general`` may be empty)."""

    path: Path
    forget: list[dict]
    retain: list[dict]
    holdout: list[dict] = field(default_factory=list)
    general: list[dict] = field(default_factory=list)
    # ``general`` split by its rows' ``source`` (TOFU's real authors / world facts), when every row has one
    general_parts: dict[str, list[dict]] = field(default_factory=dict)

    def split(self, name: str) -> list[dict]:
        return getattr(self, name)

    @property
    def has_eval_fields(self) -> bool:
        return all(k in self.forget[0] for k in EVAL_FIELDS)


def read_manifest(data_dir: str | Path) -> dict | None:
    """``benchmark.json`` of a folder as a dict (its ``kind`` checked), or None when there is none."""
    path = Path(data_dir) / MANIFEST
    if not path.is_file():
        return None
    try:
        manifest = json.loads(path.read_text(encoding="utf-8-sig"))
    except UnicodeDecodeError:
        raise UserError(f"{path} is not UTF-8 text; re-save it as UTF-8") from None
    except json.JSONDecodeError as err:
        raise UserError(
            f"{path}: invalid JSON ({err.msg} at line {err.lineno}, column {err.colno})"
        ) from None
    if not isinstance(manifest, dict):
        raise UserError(f"{path}: expected a JSON object, got {type(manifest).__name__}")
    kind = manifest.get("kind")
    if kind not in QA_KINDS + TEXT_KINDS:
        got = "missing" if kind is None else repr(kind)
        raise UserError(f"{path}: 'kind' is {got}; use one of {', '.join(QA_KINDS + TEXT_KINDS)}")
    return manifest


def folder_kind(data_dir: str | Path) -> str:
    """``qa``, ``text``, ``muse`` or ``wmdp``: ``benchmark.json``'s kind, else ``text`` when the first
    row of ``forget.jsonl`` has ``text`` and no ``question`` (a plain raw-text folder), else ``qa``."""
    manifest = read_manifest(data_dir)
    if manifest is not None:
        return "qa" if manifest["kind"] in QA_KINDS else manifest["kind"]
    forget = Path(data_dir) / "forget.jsonl"
    if forget.is_file():
        rows = read_jsonl(forget)
        if rows and "text" in rows[0] and "question" not in rows[0]:
            return "text"
    return "qa"


def load_benchmark(data_dir: str | Path, eval_fields: bool = False) -> Benchmark:
    """Load and validate a benchmark folder. ``eval_fields`` requires the truth-ratio fields (QA only).

    A raw-text folder (see :func:`folder_kind`) comes back as a
    :class:`unlearnkit.data.sources.SourceBenchmark` of kind ``text``, like ``muse:news`` and
    ``wmdp:cyber``; ``eval_fields`` does not apply to it (raw text has no truth ratios).
    """
    data_dir = Path(data_dir)
    if not data_dir.is_dir():
        raise UserError(f"--data {data_dir} is not a folder (expected forget.jsonl and retain.jsonl inside)")
    kind = folder_kind(data_dir)
    if kind != "qa":
        from unlearnkit.data.sources import load_text_folder  # sources imports this module

        return load_text_folder(data_dir)
    splits: dict[str, list[dict]] = {}
    for name in SPLITS:
        path = data_dir / f"{name}.jsonl"
        if not path.exists():
            if name in REQUIRED_SPLITS:
                raise UserError(f"{path} is missing: a benchmark folder needs forget.jsonl and retain.jsonl")
            splits[name] = []
            continue
        # general knowledge is scored as answer vs perturbed_answer (TOFU): no paraphrase needed there
        wanted = (GENERAL_EVAL_FIELDS if name == "general" else True) if eval_fields else False
        splits[name] = validate_qa(read_jsonl(path), path, eval_fields=wanted)
    if not splits["forget"]:
        raise UserError(f"{data_dir / 'forget.jsonl'} is empty: there is nothing to forget")
    if not splits["retain"]:
        raise UserError(f"{data_dir / 'retain.jsonl'} is empty: a retain set is needed to keep utility")
    return Benchmark(path=data_dir, **splits, general_parts=general_parts(splits["general"]))


def general_parts(rows: list[dict]) -> dict[str, list[dict]]:
    """``general`` rows grouped by ``source`` (``world_facts``, ``real_authors`` in the embedded world, as
    TOFU's two files) when every row names one; ``{}`` otherwise (one pooled general split)."""
    if not rows or not all(isinstance(r.get("source"), str) and r["source"].strip() for r in rows):
        return {}
    parts: dict[str, list[dict]] = {}
    for row in rows:
        parts.setdefault(row["source"], []).append(row)
    return parts


def forget_retain_overlap(bench: Benchmark) -> int:
    """Number of forget questions that also appear verbatim in the retain set (reported, not fatal)."""
    return len(overlapping_questions(bench))


def overlapping_questions(bench: Benchmark) -> list[tuple[int, int]]:
    """``(forget line, retain line)`` of every forget question that is also a retain question."""
    retain_q: dict[str, int] = {}
    for r in bench.retain:
        retain_q.setdefault(" ".join(r["question"].split()).lower(), r.get("_line", 0))
    out = []
    for r in bench.forget:
        key = " ".join(r["question"].split()).lower()
        if key in retain_q:
            out.append((r.get("_line", 0), retain_q[key]))
    return out


def overlap_warning(bench: Benchmark) -> str | None:
    """One warning line about forget/retain overlap, or None."""
    pairs = overlapping_questions(bench)
    if not pairs:
        return None
    f_line, r_line = pairs[0]
    forget, retain = Path(bench.path) / "forget.jsonl", Path(bench.path) / "retain.jsonl"
    return (
        f"{len(pairs)} of {len(bench.forget)} forget questions also appear in {retain} (e.g. {forget}:{f_line} "
        f"= {retain}:{r_line}); the model is asked to forget and to keep the same fact"
    )
