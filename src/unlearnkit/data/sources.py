"""``--data`` resolution: a benchmark folder, or a public benchmark by name (TOFU, MUSE, WMDP).

``resolve_data(spec)`` accepts

* a benchmark folder (``forget.jsonl`` + ``retain.jsonl`` ...): delegated to :func:`load_benchmark`;
  a raw-text folder (MUSE-like, WMDP-like or plain passages) is read by :func:`load_text_folder`
  into the same :class:`SourceBenchmark` the named MUSE / WMDP give (layouts below);
* ``tofu:forget01`` / ``tofu:forget05`` / ``tofu:forget10`` (``locuslab/TOFU``, arXiv 2401.06121);
* ``muse:news`` / ``muse:books`` (``muse-bench/MUSE-News`` / ``MUSE-Books``, arXiv 2407.06460);
* ``wmdp:bio`` / ``wmdp:cyber`` (WMDP forget / retain corpora, arXiv 2403.03218).

Every named split is read either from the hub, ``datasets.load_dataset(hub_id, config, split=...)``,
or from a local copy of the same files when a data root is given (``path=`` or the environment
variable ``UNLEARNKIT_DATA_ROOT``). After loading, both go through the same conversion and
validation. A local root mirrors the hub ids; for one ``(hub_id, config, split)`` the first match of

    <root>/<hub_id>/<config>/<split>.jsonl | .json | .parquet
    <root>/<hub_id>/<config>/<split>-*.parquet          (the hub's own parquet layout)
    <root>/<hub_id>/<config>.jsonl | .json | .parquet   (only for split ``train``: TOFU's layout)

is read with ``datasets.load_dataset("json" | "parquet", data_files=...)``. A dataset without configs
(``cais/wmdp-bio-forget-corpus``) uses ``<root>/<hub_id>/<split>...``. With a root set nothing is fetched from the hub: a missing file is an
error naming the paths that were tried.

Schemas (checked against the public dataset cards; ``tests/fixtures/hub`` holds a few made-up rows
in exactly these schemas):

* TOFU, every config has split ``train``: ``question``, ``answer``; the ``*_perturbed`` configs add
  ``paraphrased_answer`` (str) and ``perturbed_answer`` (list of str; 5 for forget/retain). Extra
  columns (``paraphrased_question``, ``option1``..``option4`` of real authors / world facts) are kept.
* MUSE, configs ``raw`` (splits ``forget``, ``retain1``, ``retain2``, ``holdout``; column ``text``),
  ``verbmem`` (split ``forget``: ``prompt``, ``gt``), ``knowmem`` (splits ``forget_qa``,
  ``retain_qa``, ``forget_qa_icl``, ``retain_qa_icl``: ``question``, ``answer``), ``privleak``
  (splits ``forget``, ``retain``, ``holdout``: ``text``).
* WMDP corpora, split ``train``, column ``text``: ``cais/wmdp-corpora`` configs
  ``cyber-forget-corpus``, ``cyber-retain-corpus``, ``bio-retain-corpus``; the bio forget corpus is
  gated (``cais/wmdp-bio-forget-corpus``, access on request; or a local copy). The RMU recipe's retain
  set is WikiText (``Salesforce/wikitext``, ``wikitext-2-raw-v1``, split ``test``).

Raw-text folders (JSON Lines, ``benchmark.json`` names the ``kind``; the embedded world writes them):

* ``kind: muse`` (MUSE-like): ``forget.jsonl``, ``retain.jsonl``, ``holdout.jsonl`` (``text``, and
  optionally ``title``, ``entity``), ``verbmem.jsonl`` (``prompt``, ``gt``), ``knowmem_forget.jsonl``,
  ``knowmem_retain.jsonl`` (``question``, ``answer``) and optionally ``knowmem_forget_icl.jsonl``,
  ``knowmem_retain_icl.jsonl`` (few-shot examples; absent = zero-shot). PrivLeak compares forget with
  holdout, as MUSE's ``privleak`` config (here the same rows as the training splits).
* ``kind: wmdp`` (WMDP-like): ``forget.jsonl``, ``retain.jsonl`` (``text``; ``holdout.jsonl``
  optional) and the multiple-choice
  files named by ``"tasks": {task name: file}`` (``question``, ``choices`` (>= 2 strings), ``answer``
  (index)); ``"mc_style"``: ``letters`` (WMDP's own prompt, default) or ``cloze`` (see
  :func:`unlearnkit.protocols.wmdp.write_mc_task`).
* ``kind: text``, or no ``benchmark.json`` and ``forget.jsonl`` rows with ``text`` but no
  ``question``: plain passages, ``forget.jsonl``, ``retain.jsonl`` and optionally ``holdout.jsonl``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from unlearnkit.data.qa import MANIFEST, Benchmark, load_benchmark, read_jsonl, read_manifest, validate_qa
from unlearnkit.errors import UserError

DATA_ROOT_ENV = "UNLEARNKIT_DATA_ROOT"

TOFU_ID = "locuslab/TOFU"
TOFU_CONFIGS = (
    "full",
    "forget01",
    "forget05",
    "forget10",
    "retain90",
    "retain95",
    "retain99",
    "forget01_perturbed",
    "forget05_perturbed",
    "forget10_perturbed",
    "retain_perturbed",
    "real_authors_perturbed",
    "world_facts_perturbed",
    "holdout01",
    "holdout05",
    "holdout10",
)
# forget split -> (retain split it is paired with, holdout split of the same size)
TOFU_SPLITS = {
    "forget01": ("retain99", "holdout01"),
    "forget05": ("retain95", "holdout05"),
    "forget10": ("retain90", "holdout10"),
}
TOFU_GENERAL = {"real_authors": "real_authors_perturbed", "world_facts": "world_facts_perturbed"}

MUSE_IDS = {"news": "muse-bench/MUSE-News", "books": "muse-bench/MUSE-Books"}

WMDP_CORPORA_ID = "cais/wmdp-corpora"
WMDP_BIO_FORGET_ID = "cais/wmdp-bio-forget-corpus"  # gated: request access from CAIS first
WIKITEXT = ("Salesforce/wikitext", "wikitext-2-raw-v1", "test")
WIKITEXT_MIN_CHARS = 50  # WikiText is one line per row: drop blank lines and bare headings

KNOWN = (
    "tofu:forget01",
    "tofu:forget05",
    "tofu:forget10",
    "muse:news",
    "muse:books",
    "wmdp:bio",
    "wmdp:cyber",
)


@dataclass
class SourceBenchmark(Benchmark):
    """A :class:`Benchmark` resolved from a public benchmark name, with what the protocols need.

    ``forget`` / ``retain`` are the training sets (QA rows or raw ``text`` rows); ``holdout`` the
    non-members for membership inference; ``general`` the utility-only rows (TOFU: real authors and
    world facts, each row tagged with ``source``).

    * ``general_parts``: ``general`` split by ``source`` (TOFU reports real authors and world facts
      separately: model utility is the harmonic mean of 9 numbers, not 6).
    * ``eval_splits``: rows to *evaluate* a split on when they differ from the training rows (TOFU
      trains on ``retain90`` but evaluates truth ratios on ``retain_perturbed``); see :meth:`eval_split`.
    * ``extra``: protocol sets that are neither (MUSE ``verbmem``, ``knowmem_*``, ``privleak_*``).
    * ``provenance``: for every set, where it came from (``hub:`` or ``local:`` + config/split), to be
      written into metrics and model cards.
    * ``mc_tasks``: multiple-choice sets of a WMDP-like folder, task name -> rows (``question``,
      ``choices``, ``answer``), scored with ``mc_style`` (``letters`` or ``cloze``).
    """

    name: str = ""
    kind: str = "qa"  # "qa" (question/answer rows) or "text" (raw passages: MUSE, WMDP)
    eval_splits: dict[str, list[dict]] = field(default_factory=dict)
    extra: dict[str, list[dict]] = field(default_factory=dict)
    provenance: dict[str, str] = field(default_factory=dict)
    mc_tasks: dict[str, list[dict]] = field(default_factory=dict)
    mc_style: str = "letters"

    def eval_split(self, name: str) -> list[dict]:
        """The rows to evaluate ``name`` on (``eval_splits`` wins over the training rows)."""
        return self.eval_splits.get(name) or self.split(name)


def data_root(path: str | Path | None = None) -> Path | None:
    """The local data root: ``path`` if given, else ``$UNLEARNKIT_DATA_ROOT``, else None (the hub)."""
    chosen = path if path is not None else os.environ.get(DATA_ROOT_ENV) or None
    if chosen is None:
        return None
    root = Path(chosen).expanduser().resolve()
    if not root.is_dir():
        origin = "path=" if path is not None else f"${DATA_ROOT_ENV}="
        raise UserError(f"data root {origin}{chosen} is not a folder")
    return root


# ---------------------------------------------------------------------------------------------
# Reading one (hub_id, config, split): the hub or a local mirror, then the same conversion.


def local_files(root: Path, hub_id: str, config: str | None, split: str) -> list[Path]:
    """The local files of one split under ``root`` (the layouts in the module docstring); [] if none."""
    base = root / hub_id
    folder = base / config if config else base
    for ext in (".jsonl", ".json", ".parquet"):
        if (folder / f"{split}{ext}").is_file():
            return [folder / f"{split}{ext}"]
    shards = sorted(folder.glob(f"{split}-*.parquet"))
    if shards:
        return shards
    if config and split == "train":
        for ext in (".jsonl", ".json", ".parquet"):
            if (base / f"{config}{ext}").is_file():
                return [base / f"{config}{ext}"]
    return []


def _tried(root: Path, hub_id: str, config: str | None, split: str) -> str:
    """Every path :func:`local_files` looked at, in the layout the module docstring documents."""
    base = root / hub_id
    folder = base / config if config else base
    paths = [f"{folder}/{split}.jsonl | .json | .parquet", f"{folder}/{split}-*.parquet"]
    if config and split == "train":
        paths.append(f"{base}/{config}.jsonl | .json | .parquet")
    return ", ".join(paths)


def load_rows(hub_id: str, config: str | None, split: str, root: Path | None) -> tuple[list[dict], str]:
    """Rows of one split as plain dicts (``_line`` = 1-based row number) and where they came from."""
    import datasets

    if root is None:
        where = f"hub:{hub_id}/{config or '-'}[{split}]"
        try:
            ds = datasets.load_dataset(hub_id, config, split=split)
        except Exception as err:  # offline, gated, renamed ...: one clear line instead of a traceback
            raise UserError(
                f"could not load {hub_id} (config {config}, split {split}) from the hub: "
                f"{type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''}; without network "
                f"access set ${DATA_ROOT_ENV} to a folder holding a local copy (see unlearnkit.data.sources)"
            ) from None
    else:
        files = local_files(root, hub_id, config, split)
        if not files:
            raise UserError(
                f"no local copy of {hub_id} (config {config}, split {split}) under {root}; "
                f"tried {_tried(root, hub_id, config, split)}"
            )
        where = f"local:{files[0] if len(files) == 1 else files[0].parent}"
        builder = "parquet" if files[0].suffix == ".parquet" else "json"
        bars = datasets.is_progress_bar_enabled()
        counts = datasets.config.HF_UPDATE_DOWNLOAD_COUNTS
        datasets.disable_progress_bars()  # local files load in milliseconds; keep the terminal quiet
        # datasets pings the hub's download counter even for local files (a 3 s timeout offline)
        datasets.config.HF_UPDATE_DOWNLOAD_COUNTS = False
        try:
            ds = datasets.load_dataset(builder, data_files=[str(f) for f in files], split="train")
        except Exception as err:
            raise UserError(f"{files[0]}: could not be read as {builder} ({type(err).__name__})") from None
        finally:
            datasets.config.HF_UPDATE_DOWNLOAD_COUNTS = counts
            if bars:
                datasets.enable_progress_bars()
    rows = []
    for i, row in enumerate(ds):
        row = dict(row)
        row["_line"] = i + 1
        rows.append(row)
    return rows, where


def validate_text(rows: list[dict], where: str, key: str = "text") -> list[dict]:
    """Every row needs a non-empty string ``key`` (raw-text corpora)."""
    for row in rows:
        value = row.get(key)
        if not isinstance(value, str) or not value.strip():
            raise UserError(f"{where}:{row.get('_line', '?')}: field '{key}' must be a non-empty string")
    return rows


def validate_fields(rows: list[dict], where: str, keys: tuple[str, ...]) -> list[dict]:
    for key in keys:
        validate_text(rows, where, key)
    return rows


MC_STYLES = ("letters", "cloze")
MAX_LETTERS = 26  # choices lettered A..Z


def validate_mc(rows: list[dict], where: str, style: str = "letters") -> list[dict]:
    """Multiple-choice rows: ``question`` (non-empty string), ``choices`` (list of >= 2 non-empty
    strings), ``answer`` (index of the right choice). ``letters`` also needs the same number of choices
    on every row (at most 26): the prompt letters them A, B, ... and scores the letters."""
    if style not in MC_STYLES:
        raise UserError(f"{where}: mc_style {style!r}; use one of {', '.join(MC_STYLES)}")
    n_choices = None
    for row in rows:
        at = f"{where}:{row.get('_line', '?')}"
        question, choices, answer = row.get("question"), row.get("choices"), row.get("answer")
        if not isinstance(question, str) or not question.strip():
            raise UserError(f"{at}: field 'question' must be a non-empty string")
        if (
            not isinstance(choices, list)
            or len(choices) < 2
            or not all(isinstance(c, str) and c.strip() for c in choices)
        ):
            raise UserError(f"{at}: field 'choices' must be a list of >= 2 non-empty strings")
        if isinstance(answer, bool) or not isinstance(answer, int) or not 0 <= answer < len(choices):
            raise UserError(
                f"{at}: 'answer' must be the index of the correct choice (0..{len(choices) - 1}), got {answer!r}"
            )
        if style == "letters":
            n_choices = len(choices) if n_choices is None else n_choices
            if len(choices) != n_choices or len(choices) > MAX_LETTERS:
                raise UserError(
                    f"{at}: every row needs the same number of choices (<= {MAX_LETTERS}) with "
                    f"mc_style letters ({n_choices} before, {len(choices)} here)"
                )
    return rows


def _cap(rows: list[dict], max_rows: int | None) -> list[dict]:
    return rows if max_rows is None else rows[:max_rows]


# ---------------------------------------------------------------------------------------------
# The benchmarks.


def resolve_data(
    spec: str | Path,
    *,
    path: str | Path | None = None,
    eval_fields: bool = False,
    max_rows: int | None = None,
    wmdp_retain: str = "wikitext",
) -> Benchmark:
    """A :class:`Benchmark` from a folder or a name (``tofu:forget10``, ``muse:news``, ``wmdp:cyber``).

    ``path``: local data root (overrides ``$UNLEARNKIT_DATA_ROOT``); None and no variable = the hub.
    ``eval_fields``: for folders, require the truth-ratio fields (as :func:`load_benchmark`); for TOFU,
    read the forget split from its ``*_perturbed`` config (the same questions with the evaluation
    fields) and the retain evaluation rows from ``retain_perturbed``.
    ``max_rows``: keep only the first N rows of every set (quick runs; None = all).
    ``wmdp_retain``: ``wikitext`` (the RMU recipe) or ``corpus`` (the matching WMDP retain corpus).
    """
    text = str(spec)
    if Path(text).is_dir() or ":" not in text:
        return load_benchmark(text, eval_fields=eval_fields)
    family, _, name = text.partition(":")
    family, name = family.strip().lower(), name.strip().lower()
    if max_rows is not None and max_rows < 1:
        raise UserError(f"max_rows={max_rows}: must be >= 1")
    root = data_root(path)
    if family == "tofu":
        return _tofu(name, root, eval_fields, max_rows)
    if family == "muse":
        return _muse(name, root, max_rows)
    if family == "wmdp":
        return _wmdp(name, root, max_rows, wmdp_retain)
    raise UserError(f"--data {text}: not a folder and not a known benchmark (known: {', '.join(KNOWN)})")


def _tofu(name: str, root: Path | None, eval_fields: bool, max_rows: int | None) -> SourceBenchmark:
    if name not in TOFU_SPLITS:
        raise UserError(f"--data tofu:{name}: unknown TOFU forget split; use one of {', '.join(TOFU_SPLITS)}")
    retain_cfg, holdout_cfg = TOFU_SPLITS[name]
    provenance: dict[str, str] = {}

    def read(config: str, key: str, with_eval: bool | tuple[str, ...]) -> list[dict]:
        rows, where = load_rows(TOFU_ID, config, "train", root)
        provenance[key] = where
        return _cap(validate_qa(rows, where, eval_fields=with_eval), max_rows)

    forget = read(f"{name}_perturbed" if eval_fields else name, "forget", eval_fields)
    retain = read(retain_cfg, "retain", False)
    holdout = _optional_holdout(read, holdout_cfg, root, provenance)
    parts = {}
    for source, config in TOFU_GENERAL.items():
        # TOFU's own files have question, answer, perturbed_answer only; TR = answer vs perturbed.
        rows = read(config, f"general.{source}", ("perturbed_answer",))
        parts[source] = [{**r, "source": source} for r in rows]
    eval_splits = {"retain": read("retain_perturbed", "eval.retain", True)} if eval_fields else {}
    _check_nonempty(f"tofu:{name}", forget, retain)
    return SourceBenchmark(
        path=Path(root / TOFU_ID) if root else Path(TOFU_ID),
        forget=forget,
        retain=retain,
        holdout=holdout,
        general=[r for rows in parts.values() for r in rows],
        name=f"tofu:{name}",
        kind="qa",
        general_parts=parts,
        eval_splits=eval_splits,
        provenance=provenance,
    )


def _optional_holdout(read, config: str, root: Path | None, provenance: dict[str, str]) -> list[dict]:
    """TOFU's holdout split (authors no model was fine-tuned on: membership inference's non-members).

    The hub added ``holdout01/05/10`` after the first release, and local copies made from that release
    lack them: such a copy loads, with no holdout rows, and the membership numbers (``mia_*_auc``, the
    audit's membership check) say they were skipped for want of non-members instead of being computed.
    """
    if root is None or local_files(root, TOFU_ID, config, "train"):
        return read(config, "holdout", False)
    provenance["holdout"] = (
        f"absent: the local copy under {root / TOFU_ID} has no {config} split (added to the hub after "
        "TOFU's first release); membership inference is skipped"
    )
    return []


MUSE_EXTRA = {
    # key in SourceBenchmark.extra: (config, split, required fields)
    "verbmem": ("verbmem", "forget", ("prompt", "gt")),
    "knowmem_forget": ("knowmem", "forget_qa", ("question", "answer")),
    "knowmem_retain": ("knowmem", "retain_qa", ("question", "answer")),
    "knowmem_forget_icl": ("knowmem", "forget_qa_icl", ("question", "answer")),
    "knowmem_retain_icl": ("knowmem", "retain_qa_icl", ("question", "answer")),
    "privleak_forget": ("privleak", "forget", ("text",)),
    "privleak_retain": ("privleak", "retain", ("text",)),
    "privleak_holdout": ("privleak", "holdout", ("text",)),
}


def _muse(name: str, root: Path | None, max_rows: int | None) -> SourceBenchmark:
    """MUSE: train on ``raw`` forget vs ``raw`` retain1 (retain2 is MUSE's utility corpus, never trained on)."""
    if name not in MUSE_IDS:
        raise UserError(f"--data muse:{name}: unknown MUSE corpus; use muse:news or muse:books")
    hub_id = MUSE_IDS[name]
    provenance: dict[str, str] = {}

    def read(config: str, split: str, key: str, fields: tuple[str, ...], cap: bool = True) -> list[dict]:
        rows, where = load_rows(hub_id, config, split, root)
        provenance[key] = where
        rows = validate_fields(rows, where, fields)
        return _cap(rows, max_rows) if cap else rows

    forget = read("raw", "forget", "forget", ("text",))
    retain = read("raw", "retain1", "retain", ("text",))
    # ICL shots are few and fixed: never capped
    extra = {
        key: read(cfg, split, key, fields, cap=not key.endswith("_icl"))
        for key, (cfg, split, fields) in MUSE_EXTRA.items()
    }
    _check_nonempty(f"muse:{name}", forget, retain)
    return SourceBenchmark(
        path=Path(root / hub_id) if root else Path(hub_id),
        forget=forget,
        retain=retain,
        holdout=extra["privleak_holdout"],
        general=[],
        name=f"muse:{name}",
        kind="text",
        extra=extra,
        provenance=provenance,
    )


def _wmdp(name: str, root: Path | None, max_rows: int | None, retain_choice: str) -> SourceBenchmark:
    """WMDP: forget corpus of the domain + WikiText (RMU's retain set) or the domain's retain corpus."""
    if name not in ("bio", "cyber"):
        raise UserError(f"--data wmdp:{name}: unknown WMDP domain; use wmdp:bio or wmdp:cyber")
    if retain_choice not in ("wikitext", "corpus"):
        raise UserError(f"wmdp_retain={retain_choice!r}: use wikitext or corpus")
    provenance: dict[str, str] = {}
    if name == "bio":
        forget_src = (WMDP_BIO_FORGET_ID, None, "train")
    else:
        forget_src = (WMDP_CORPORA_ID, "cyber-forget-corpus", "train")
    retain_src = (
        WIKITEXT if retain_choice == "wikitext" else (WMDP_CORPORA_ID, f"{name}-retain-corpus", "train")
    )

    rows, where = load_rows(*forget_src, root)
    provenance["forget"] = where
    forget = _cap(validate_text(rows, where), max_rows)
    rows, where = load_rows(*retain_src, root)
    provenance["retain"] = where
    if retain_choice == "wikitext":
        rows = [
            r for r in rows if isinstance(r.get("text"), str) and len(r["text"].strip()) >= WIKITEXT_MIN_CHARS
        ]
    retain = _cap(validate_text(rows, where), max_rows)
    _check_nonempty(f"wmdp:{name}", forget, retain)
    # Texts only: keep the text (and title, where given) so collation sees ``text`` rows.
    return SourceBenchmark(
        path=Path(root / forget_src[0]) if root else Path(forget_src[0]),
        forget=[_text_row(r) for r in forget],
        retain=[_text_row(r) for r in retain],
        name=f"wmdp:{name}",
        kind="text",
        provenance=provenance,
    )


# ---------------------------------------------------------------------------------------------
# Raw-text folders (the embedded world's MUSE-like and WMDP-like benchmarks).

MUSE_FOLDER_EXTRA = {
    # key in SourceBenchmark.extra: (file, required fields, the file is required)
    "verbmem": ("verbmem.jsonl", ("prompt", "gt"), True),
    "knowmem_forget": ("knowmem_forget.jsonl", ("question", "answer"), True),
    "knowmem_retain": ("knowmem_retain.jsonl", ("question", "answer"), True),
    "knowmem_forget_icl": ("knowmem_forget_icl.jsonl", ("question", "answer"), False),
    "knowmem_retain_icl": ("knowmem_retain_icl.jsonl", ("question", "answer"), False),
}


def load_text_folder(data_dir: str | Path) -> SourceBenchmark:
    """A raw-text benchmark folder (layouts in the module docstring) as a :class:`SourceBenchmark` of
    kind ``text``: the same object ``muse:news`` / ``wmdp:cyber`` give, so training and the MUSE /
    WMDP protocols take one code path. Every set's provenance is ``local:<file>``."""
    from unlearnkit.data.qa import folder_kind

    data_dir = Path(data_dir)
    kind = folder_kind(data_dir)
    manifest = read_manifest(data_dir) or {}
    name = manifest.get("name", "")
    if not isinstance(name, str):
        raise UserError(f"{data_dir / MANIFEST}: 'name' must be a string")
    provenance: dict[str, str] = {}
    what = {"muse": "a MUSE-like folder", "wmdp": "a WMDP-like folder"}.get(kind, "a raw-text folder")

    def read(file: str, key: str, fields: tuple[str, ...], required: bool = True) -> list[dict]:
        path = data_dir / file
        if not path.is_file():
            if required:
                raise UserError(f"{path} is missing: {what} needs it (see unlearnkit.data.sources)")
            return []
        rows = validate_fields(read_jsonl(path), str(path), fields)
        if required and not rows:
            raise UserError(f"{path} is empty: {what} needs at least one row")
        provenance[key] = f"local:{path.resolve()}"
        return rows

    forget = read("forget.jsonl", "forget", ("text",))
    retain = read("retain.jsonl", "retain", ("text",))
    common = {"path": data_dir, "forget": forget, "retain": retain, "name": name, "kind": "text"}
    if kind == "muse":
        holdout = read("holdout.jsonl", "holdout", ("text",))
        extra = {key: read(file, key, fields, req) for key, (file, fields, req) in MUSE_FOLDER_EXTRA.items()}
        extra = {k: v for k, v in extra.items() if v or not k.endswith("_icl")}
        extra.update(privleak_forget=forget, privleak_retain=retain, privleak_holdout=holdout)
        for part in ("forget", "retain", "holdout"):
            provenance[f"privleak_{part}"] = provenance[part]
        return SourceBenchmark(**common, holdout=holdout, extra=extra, provenance=provenance)
    if kind == "wmdp":
        style = manifest.get("mc_style", "letters")
        if style not in MC_STYLES:
            raise UserError(
                f"{data_dir / MANIFEST}: 'mc_style' is {style!r}; use one of {', '.join(MC_STYLES)}"
            )
        tasks = _mc_tasks(data_dir, manifest, style, provenance)
        holdout = read("holdout.jsonl", "holdout", ("text",), required=False)
        return SourceBenchmark(
            **common, holdout=holdout, mc_tasks=tasks, mc_style=style, provenance=provenance
        )
    if (data_dir / "general.jsonl").exists():
        raise UserError(
            f"{data_dir / 'general.jsonl'}: a raw-text folder has forget, retain and holdout only "
            "(general.jsonl holds QA utility rows of a QA folder); remove it or move it elsewhere"
        )
    holdout = read("holdout.jsonl", "holdout", ("text",), required=False)
    return SourceBenchmark(**common, holdout=holdout, provenance=provenance)


def _mc_tasks(data_dir: Path, manifest: dict, style: str, provenance: dict) -> dict[str, list[dict]]:
    """The multiple-choice files ``benchmark.json`` names under ``tasks``, validated."""
    where = data_dir / MANIFEST
    tasks = manifest.get("tasks")
    if not isinstance(tasks, dict) or not tasks:
        raise UserError(
            f'{where}: a WMDP-like folder needs "tasks": {{task name: multiple-choice .jsonl file}}, '
            'e.g. {"wmdp_hazard": "mc_hazard.jsonl"}'
        )
    out = {}
    for task, file in tasks.items():
        if not task.replace("_", "").isalnum() or not task.isascii():
            raise UserError(f"{where}: task name {task!r}: use letters, digits and underscores")
        if not isinstance(file, str) or not file:
            raise UserError(f"{where}: task {task}: the file must be a path relative to {data_dir}")
        path = data_dir / file
        if not path.is_file():
            raise UserError(f"{path} is missing: {where} names it for task {task}")
        rows = validate_mc(read_jsonl(path), str(path), style)
        if not rows:
            raise UserError(f"{path} is empty: task {task} needs at least one question")
        provenance[f"mc.{task}"] = f"local:{path.resolve()}"
        out[task] = rows
    return out


MUSE_SETS = ("verbmem", "knowmem_forget", "privleak_forget")


def check_muse_benchmark(bench) -> None:
    """A one-line error unless ``bench`` has MUSE's sets (``muse:news``, ``muse:books``, a MUSE-like folder)."""
    extra = getattr(bench, "extra", {}) or {}
    if not any(k in extra for k in MUSE_SETS):
        raise UserError(
            "--protocol muse needs a MUSE benchmark: --data muse:news, muse:books or a MUSE-like folder "
            "(benchmark.json kind muse)"
        )


def _text_row(row: dict) -> dict:
    return {k: v for k, v in row.items() if k in ("text", "title", "_line")}


def _check_nonempty(name: str, forget: list[dict], retain: list[dict]) -> None:
    if not forget:
        raise UserError(f"{name}: the forget set is empty")
    if not retain:
        raise UserError(f"{name}: the retain set is empty")


def describe(bench: Benchmark) -> dict[str, Any]:
    """What to record next to results: the name, row counts and the provenance of every set."""
    out: dict[str, Any] = {
        "data": getattr(bench, "name", "") or str(bench.path),
        "rows": {k: len(bench.split(k)) for k in ("forget", "retain", "holdout", "general")},
    }
    if isinstance(bench, SourceBenchmark):
        out["kind"] = bench.kind
        out["provenance"] = dict(bench.provenance)
        if bench.general_parts:
            out["rows"].update({f"general.{k}": len(v) for k, v in bench.general_parts.items()})
        out["rows"].update({k: len(v) for k, v in bench.extra.items()})
        out["rows"].update({f"eval.{k}": len(v) for k, v in bench.eval_splits.items()})
        if bench.mc_tasks:
            out["rows"].update({f"mc.{k}": len(v) for k, v in bench.mc_tasks.items()})
            out["mc_style"] = bench.mc_style
    return out


def split_file(bench, name: str) -> str:
    """The file a split's rows came from, for error messages: ``forget.jsonl`` of a folder, the real
    file of a named benchmark (TOFU's ``forget10.json``), or its hub address."""
    where = getattr(bench, "provenance", {}).get(name)
    if where:
        return where.split(":", 1)[1] if where.startswith("local:") else where
    if name.startswith("general."):  # a folder's general parts share its general.jsonl
        name = "general"
    return str(Path(bench.path) / f"{name}.jsonl")


def split_sources(bench, name: str, evaluation: bool = False) -> list[tuple[list[dict], str]]:
    """(rows, file they came from) for one split; row ``_line`` numbers are per file, so a split read
    from several files (TOFU's real authors + world facts) comes back as one pair per file.
    ``evaluation``: the rows evaluation reads (TOFU: ``retain_perturbed`` for retain)."""
    parts = getattr(bench, "general_parts", None)
    if name == "general" and parts:
        return [(rows, split_file(bench, f"general.{source}")) for source, rows in parts.items()]
    if evaluation and name in getattr(bench, "eval_splits", {}):
        return [(bench.eval_splits[name], split_file(bench, f"eval.{name}"))]
    return [(bench.split(name), split_file(bench, name))]
