"""What UNDO (arXiv 2506.06278) needs besides the teacher: the model to noise toward and raw text to
distill on. Light on purpose (no torch): the ``distill`` command checks these before loading a model.

* The **noise target**. UNDO's setting is knowledge learned in pretraining: the student is shrunk
  toward a fresh initialisation. For knowledge fine-tuned into a pretrained model (TOFU / MUSE) the
  natural target is that pretrained base instead: theta_s = (1 - alpha) theta_teacher + alpha
  theta_base removes what fine-tuning added and keeps what the base knew. :func:`find_base` walks the
  model cards (``unlearnkit.json``) from the teacher through their ``base_model`` links (``unlearn``
  records the model it unlearned, ``finetune`` the model it started from, ``distill`` its teacher)
  to the first folder whose card says ``"kind": "base"`` (what ``unlearnkit pretrain`` writes).
* The **distillation text**. UNDO distils on pretraining-like text, KL on every token. The embedded
  world's general corpus lives at ``WORLD/corpus/general.jsonl`` (rows ``{"text": ...}``); the TOFU-like
  benchmark folder is the world folder itself, the WMDP-like one ``WORLD/wmdp``, so it is looked for in
  ``--data`` and then in its parent (:func:`corpus_file`). For a real model, pass a slice of a corpus
  like its pretraining data with ``--set distill_text=PATH`` (:func:`read_text_rows`).
"""

from __future__ import annotations

import json
from pathlib import Path

from unlearnkit.errors import UserError

CARD = "unlearnkit.json"
BASE_KIND = "base"  # the card kind of a pretrained base (``unlearnkit pretrain``)
CORPUS = Path("corpus") / "general.jsonl"
MAX_HOPS = 32  # model cards followed at most (a cycle of links ends the walk anyway)


def read_card(folder: str | Path) -> dict:
    """A model folder's ``unlearnkit.json`` ({} when there is none or it is not a JSON object)."""
    try:
        data = json.loads((Path(folder).expanduser() / CARD).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _locate(link: str, card_folder: Path) -> Path | None:
    """The folder a recorded model name points to: as given (relative to the working directory, as
    the command that recorded it saw it), else beside the folder whose card records it."""
    path = Path(str(link)).expanduser()
    if path.is_dir():
        return path
    if not path.is_absolute() and (card_folder.parent / path).is_dir():
        return card_folder.parent / path
    return None


def base_chain(teacher: str | Path) -> list[Path]:
    """The existing folders reached from ``teacher`` through ``base_model`` (or a student's ``teacher``)
    links, nearest first; stops at a link that is no folder ("tiny", a hub id) or a cycle."""
    here, chain, seen = Path(teacher).expanduser(), [], set()
    seen.add(here.resolve())
    for _ in range(MAX_HOPS):
        card = read_card(here)
        link = card.get("base_model") or card.get("teacher")
        if not isinstance(link, str) or not link:
            break
        nxt = _locate(link, here)
        if nxt is None or nxt.resolve() in seen:
            break
        seen.add(nxt.resolve())
        chain.append(nxt)
        here = nxt
    return chain


def describe_chain(teacher: str | Path, upto: Path | None = None) -> str:
    """``teacher -> target -> base`` (up to ``upto`` when given), else ending with why the walk stopped
    (a link that is no folder, such as ``'tiny'``; a folder without a card, such as a downloaded model)."""
    chain = [Path(teacher).expanduser(), *base_chain(teacher)]
    if upto is not None and upto in chain:
        return " -> ".join(str(folder) for folder in chain[: chain.index(upto) + 1])
    text = " -> ".join(str(folder) for folder in chain)
    card = read_card(chain[-1])
    link = card.get("base_model") or card.get("teacher")
    if not card:
        text += " (no unlearnkit.json: if it is the pretrained base, pass it as --base)"
    elif isinstance(link, str) and link and _locate(link, chain[-1]) is None:
        text += f" -> {link!r} (no such folder)"
    elif not link:
        text += " (its card names no base_model)"
    return text


def find_base(teacher: str | Path) -> Path | None:
    """The pretrained base the teacher's knowledge was fine-tuned into: the first folder on
    :func:`base_chain` whose card has ``"kind": "base"``; None when the cards name none that exists."""
    for folder in base_chain(teacher):
        if read_card(folder).get("kind") == BASE_KIND:
            return folder
    return None


def corpus_file(data: str | Path) -> Path | None:
    """``corpus/general.jsonl`` of the world ``data`` belongs to: in ``data`` itself (the TOFU-like
    benchmark folder is the world folder) or in its parent (the WMDP-like ``WORLD/wmdp``)."""
    folder = Path(str(data)).expanduser()
    if not folder.is_dir():
        return None
    for candidate in (folder / CORPUS, folder.parent / CORPUS):
        if candidate.is_file():
            return candidate
    return None


def missing_corpus(data: str | Path) -> UserError:
    folder = Path(str(data)).expanduser().absolute()
    where = (
        f"neither {folder / CORPUS} nor {folder.parent / CORPUS} exists"
        if folder.is_dir()
        else f"--data {data} is not a world folder"
    )
    return UserError(
        f"distill_on=corpus: {where}; write a world with its corpus (`unlearnkit world`), or pass a JSONL of "
        '{"text": ...} rows with --set distill_text=PATH and leave corpus out of distill_on'
    )


def read_text_rows(path: str | Path, setting: str = "distill_text") -> list[dict]:
    """Rows ``{"text": ...}`` of a JSON Lines file (a non-empty string each), checked line by line."""
    from unlearnkit.data.qa import read_jsonl

    path = Path(str(path)).expanduser()
    if not path.is_file():
        raise UserError(f'{setting}={path}: no such file (a JSON Lines file of {{"text": ...}} rows)')
    rows = read_jsonl(path)
    for row in rows:
        text = row.get("text")
        if not isinstance(text, str) or not text.strip():
            raise UserError(
                f"{path}:{row['_line']}: expected a non-empty string 'text' (rows of raw text to distill on)"
            )
    if not rows:
        raise UserError(f"{setting}={path}: the file has no rows")
    return [{"text": row["text"], "_line": row["_line"]} for row in rows]


# config.json fields that fix the parameters' names and shapes (Llama-style, GPT-2-style names)
ARCHITECTURE_KEYS = (
    "model_type",
    "architectures",
    "vocab_size",
    "hidden_size",
    "intermediate_size",
    "num_hidden_layers",
    "num_attention_heads",
    "num_key_value_heads",
    "head_dim",
    "tie_word_embeddings",
    "n_embd",
    "n_layer",
    "n_head",
)


def architecture_difference(teacher: str | Path, base: str | Path) -> str | None:
    """The first config.json field (of :data:`ARCHITECTURE_KEYS`) on which two local model folders
    differ, as ``"name: base X, teacher Y"``; None when they agree or a config cannot be read (the
    parameter-by-parameter check of ``unlearnkit.train.distill.check_base`` still runs on the models)."""
    configs = []
    for folder in (teacher, base):
        try:
            data = json.loads((Path(str(folder)).expanduser() / "config.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        configs.append(data if isinstance(data, dict) else {})
    ours, theirs = configs
    for key in ARCHITECTURE_KEYS:
        if (key in ours or key in theirs) and ours.get(key) != theirs.get(key):
            return f"{key}: base {theirs.get(key, 'unset')}, teacher {ours.get(key, 'unset')}"
    return None


def tokenizer_difference(teacher_tok, base_tok) -> str | None:
    """Why two tokenizers would not give the same ids to the same text (None: they would): the
    vocabularies (token -> id) and the special tokens must agree."""
    for name in ("bos_token_id", "eos_token_id", "unk_token_id"):
        ours, theirs = getattr(teacher_tok, name, None), getattr(base_tok, name, None)
        if ours != theirs:
            return f"{name}: base {theirs}, teacher {ours}"
    ours, theirs = teacher_tok.get_vocab(), base_tok.get_vocab()
    if ours != theirs:
        if len(ours) != len(theirs):
            return f"vocabulary size: base {len(theirs)}, teacher {len(ours)}"
        token = next(t for t in sorted(ours) if ours[t] != theirs.get(t))
        return f"token {token!r}: id {theirs.get(token, 'missing')} in the base, {ours[token]} in the teacher"
    return None


def noise_target(teacher: str, noise_toward: str | None, base: str | None) -> tuple[str, str | None, str]:
    """``(init | base, the base model or None, the line that says so)`` for ``distill --teacher T
    [--noise-toward init|base] [--base MODEL]``: the base named, a fresh init asked for, else the base the
    teacher's model cards lead to (:func:`find_base`), else a fresh init."""
    from unlearnkit.models import check_model_path

    if base is not None:
        if noise_toward == "init":
            raise UserError(
                "--base applies to --noise-toward base only: drop --base, or use --noise-toward base"
            )
        check_model_path(base, "--base")
        return "base", str(base), f"noise toward the base {base} (--base)"
    if noise_toward == "init":
        return "init", None, "noise toward a fresh initialisation (--noise-toward init)"
    found = find_base(teacher)
    chain = describe_chain(teacher, upto=found)
    if found is not None:
        check_model_path(str(found), "--base (found through the model cards)")
        how = "--noise-toward base" if noise_toward == "base" else "default: the teacher's cards name it"
        return (
            "base",
            str(found),
            f"noise toward the base {found} ({how}: {chain}); --noise-toward init for a fresh init",
        )
    if noise_toward == "base":
        raise UserError(
            f"--noise-toward base: no base model found: the model cards from --teacher ({chain}) lead to no "
            'folder whose unlearnkit.json says "kind": "base"; pass --base MODEL, or use --noise-toward init'
        )
    return (
        "init",
        None,
        f"noise toward a fresh initialisation (default: the teacher's model cards name no base folder: "
        f"{chain}; --base MODEL to noise toward a pretrained base)",
    )


def check_base_folder(teacher: str, base: str, tokenizer, trust_remote_code: bool = False) -> None:
    """The base has the teacher's architecture (config.json) and tokenizer, before any weight is read."""
    from unlearnkit.models import load_tokenizer

    wrong = architecture_difference(teacher, base)
    if wrong is not None:
        raise UserError(
            f"--base {base}: not the teacher's architecture ({wrong}); noising toward a base needs the model "
            "the teacher was fine-tuned from (or use --noise-toward init)"
        )
    wrong = tokenizer_difference(tokenizer, load_tokenizer(base, trust_remote_code))
    if wrong is not None:
        raise UserError(
            f"--base {base}: its tokenizer is not the teacher's ({wrong}); noising toward a base needs the "
            "model the teacher was fine-tuned from (or use --noise-toward init)"
        )


def text_files(data: str | Path, cfg) -> dict[str, Path]:
    """The raw-text files ``distill_on`` names, each checked (exists, rows of non-empty text)."""
    files = {}
    if "corpus" in cfg.splits():
        path = corpus_file(data)
        if path is None:
            raise missing_corpus(data)
        read_text_rows(path, "distill_on=corpus")
        files["corpus"] = path
    if "text" in cfg.splits():
        read_text_rows(cfg.distill_text)
        files["text"] = Path(cfg.distill_text).expanduser()
    return files
