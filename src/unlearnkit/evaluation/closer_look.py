"""The "closer look" evaluation protocol: forget efficacy (FE) and model utility (MU).

Yuan et al., "A Closer Look at Machine Unlearning for Large Language Models", arXiv 2410.08109
(code: sail-sg/closer-look-LLM-unlearning, ``metrics/metrics.py``), as reported by the ASU paper
(Zare Zade et al., arXiv 2603.01285). Six numbers per split:

* ROUGE-L recall, probability (option-normalised on ``general``, unlearnkit's stand-in for real
  authors / world facts), truth-ratio score and token entropy (TE): taken from
  :func:`unlearnkit.evaluation.evaluate.evaluate`'s metrics as they are;
* cosine similarity of sentence embeddings of generation and ground-truth answer, clipped at 0
  (the authors use ``paraphrase-MiniLM-L6-v2``, mean pooling); on real authors / world facts the
  ground truth is the row's full ``original_answer`` when every row has one, as the authors' code
  (:data:`ORIGINAL_ANSWER_SPLITS`), else ``answer``;
* NLI entailment (the authors use ``sileod/deberta-v3-base-tasksource-nli``) against the same ground
  truth: 1 when the classifier's label is "entailment", else 0, and always 0 when the item's ROUGE-L
  recall (against ``answer``) is below 0.1. Direction as
  in the authors' TOFU code: on the forget split the generation is the premise and the answer the
  hypothesis ("does the generation state the fact"); on retain / real authors / world facts the answer
  is the premise and the generation the hypothesis (see :data:`ENTAILMENT_PREMISE`).

Aggregates (all on a 0-1 scale; the papers print them x100):

* ``mu_closer_look``: harmonic mean of the six numbers on ``retain``, ``real_authors`` and
  ``world_facts`` (18 numbers, as the ASU paper) when the benchmark has those parts (real TOFU,
  ``--data tofu:forget10``); on a benchmark folder with one ``general`` split, of the six numbers on
  ``retain`` and ``general`` (12 numbers).
* ``fe`` (the ASU paper's FE): harmonic mean on the forget split of
  ``1 - ROUGE``, ``1 - prob``, ``1 - TR``, ``TE`` and ``1 - entailment``. "TR" there is the closer-look
  code's forget truth-ratio statistic, ``1 - mean(min(R, 1/R))``; so ``1 - TR`` is exactly
  unlearnkit's ``forget_truth_ratio`` (mean of min(TR, 1/TR), higher = more forgotten), used as is.
* ``fe_yuan``: the closer-look authors' own "Forget Efficacy", an arithmetic mean with no TE:
  ``1 - mean(ROUGE, prob, TR, cosine, entailment)`` on the forget split, with TR as above.
* ``avg_closer_look`` = (``fe`` + ``mu_closer_look``) / 2.

Rows and generation (``unlearnkit eval --protocol closer-look``,
:func:`unlearnkit.evaluation.evaluate.closer_look_settings`): the authors' code evaluates the first
``ds_size = 300`` rows of every split in file order, and generates greedily up to 200 tokens in total
(prompt included: ``generation.max_length: 200``, ``max_new_tokens: null``); the TOFU protocol's
defaults (a seeded sample of at most 400 rows, 200 new tokens) are not used there.

The embedding and NLI models are optional. When one cannot be loaded (no network, no cache, the
``--protocol closer-look`` run is offline) its component is left out, FE / MU are harmonic means of the
components that exist, and the second return value of :func:`closer_look_metrics` names the
components used and the reason for each missing one.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from unlearnkit.metrics import scores as S

EmbedFn = Callable[[Sequence[str]], Any]
"""texts -> array-like [n, d] of embeddings (one row per text)."""
NliFn = Callable[[Sequence[str], Sequence[str]], Sequence[Any]]
"""(premises, hypotheses) -> one truthy value per pair when the premise entails the hypothesis."""

ROUGE_FLOOR = 0.1
"""Items with ROUGE-L recall below this count as "not entailed" without asking the NLI model."""

ENTAILMENT_PREMISE = {
    "forget": "generation",
    "retain": "answer",
    "general": "answer",
    "real_authors": "answer",
    "world_facts": "answer",
}
"""Which text is the NLI premise, per split (the authors' TOFU setting, ``get_entailment_results``)."""

ORIGINAL_ANSWER_SPLITS = ("general", "real_authors", "world_facts")
"""Splits whose cosine / entailment read ``original_answer`` (the full sentence) when every row has one:
the authors' ``get_all_evals`` reads it for real authors and world facts (``metrics/metrics.py``),
from their copies of TOFU's files (``data/tofu/*_perturbed.json``), which add the field. TOFU's GitHub
files (and the hub-schema test fixture) have none; then the short ``answer`` is used, as before.
Forget and retain compare with ``answer`` in the authors' code too. ROUGE-L, and the ROUGE < 0.1
floor of entailment, stay on ``answer`` (``rouge_cores`` is computed against it)."""

SPLITS = ("forget", "retain", "general", "real_authors", "world_facts")
MU_SPLITS = ("retain", "general")
# TOFU's general knowledge in its two parts, kept apart as in the ASU paper's MU (18 numbers).
MU_SPLITS_TOFU = ("retain", "real_authors", "world_facts")
MU_METRICS = ("rougeL_recall", "prob", "truth_ratio", "token_entropy", "cosine", "entailment")
# (component name, metric key, transform) of the ASU paper's FE.
FE_COMPONENTS = (
    ("1-forget_rougeL_recall", "forget_rougeL_recall", lambda x: 1.0 - x),
    ("1-forget_prob", "forget_prob", lambda x: 1.0 - x),
    ("forget_truth_ratio", "forget_truth_ratio", lambda x: x),
    ("forget_token_entropy", "forget_token_entropy", lambda x: x),
    ("1-forget_entailment", "forget_entailment", lambda x: 1.0 - x),
)
# The closer-look code's Forget Efficacy: 1 - mean of these (forget TR statistic = 1 - forget_truth_ratio).
FE_YUAN_COMPONENTS = (
    ("forget_rougeL_recall", "forget_rougeL_recall", lambda x: x),
    ("forget_prob", "forget_prob", lambda x: x),
    ("1-forget_truth_ratio", "forget_truth_ratio", lambda x: 1.0 - x),
    ("forget_cosine", "forget_cosine", lambda x: x),
    ("forget_entailment", "forget_entailment", lambda x: x),
)


@dataclass
class CloserLookModels:
    """Which optional models to load; an id of ``None`` switches that component off.

    Defaults are the models of the authors' code. Ids may also be local folders. Weights are loaded
    from safetensors only. ``local_files_only=None`` follows ``HF_HUB_OFFLINE``.
    """

    embedder_id: str | None = "sentence-transformers/paraphrase-MiniLM-L6-v2"
    nli_id: str | None = "sileod/deberta-v3-base-tasksource-nli"
    device: str | None = None  # None: cuda when available, else cpu
    batch_size: int = 32
    embed_max_length: int = 128  # paraphrase-MiniLM-L6-v2's max_seq_length
    nli_max_length: int = 512
    local_files_only: bool | None = None


def _offline() -> bool:
    """HF_HUB_OFFLINE set, or the hub not reachable within 3 s: then only the local cache is tried
    (otherwise huggingface_hub retries each file for about a minute before giving up)."""
    if os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on"):
        return True
    import socket

    try:
        socket.create_connection(("huggingface.co", 443), timeout=3).close()
    except OSError:
        return True
    return False


def _reason(model_id: str, err: BaseException) -> str:
    first = (str(err).strip().splitlines() or [""])[0]
    text = f"could not load {model_id}: {type(err).__name__}: {first}"
    return text if len(text) <= 300 else text[:297] + "..."


def _device(cfg: CloserLookModels) -> str:
    if cfg.device:
        return cfg.device
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def _load_embedder(cfg: CloserLookModels, local_only: bool, device: str) -> EmbedFn:
    import torch
    from transformers import AutoModel, AutoTokenizer

    assert cfg.embedder_id is not None
    tok = AutoTokenizer.from_pretrained(cfg.embedder_id, local_files_only=local_only)
    model = AutoModel.from_pretrained(cfg.embedder_id, local_files_only=local_only, use_safetensors=True)
    model.to(device).eval()

    @torch.no_grad()
    def embed(texts: Sequence[str]) -> np.ndarray:
        rows = []
        for i in range(0, len(texts), cfg.batch_size):
            enc = tok(
                list(texts[i : i + cfg.batch_size]),
                padding=True,
                truncation=True,
                max_length=cfg.embed_max_length,
                return_tensors="pt",
            ).to(device)
            hidden = model(**enc).last_hidden_state
            mask = enc["attention_mask"].unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1e-9)  # mean pooling
            rows.append(pooled.float().cpu().numpy())
        return np.concatenate(rows) if rows else np.zeros((0, 0))

    return embed


def _load_nli(cfg: CloserLookModels, local_only: bool, device: str) -> NliFn:
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    assert cfg.nli_id is not None
    tok = AutoTokenizer.from_pretrained(cfg.nli_id, local_files_only=local_only)
    model = AutoModelForSequenceClassification.from_pretrained(
        cfg.nli_id, local_files_only=local_only, use_safetensors=True
    )
    labels = {int(k): str(v).lower() for k, v in (model.config.id2label or {}).items()}
    entail = [k for k, v in labels.items() if v.startswith("entail")]
    if len(entail) != 1:
        raise ValueError(f"no single 'entailment' label among {sorted(labels.values())}")
    entail_id = entail[0]
    model.to(device).eval()

    @torch.no_grad()
    def nli(premises: Sequence[str], hypotheses: Sequence[str]) -> list[bool]:
        out: list[bool] = []
        for i in range(0, len(premises), cfg.batch_size):
            enc = tok(
                list(premises[i : i + cfg.batch_size]),
                list(hypotheses[i : i + cfg.batch_size]),
                padding=True,
                truncation=True,
                max_length=cfg.nli_max_length,
                return_tensors="pt",
            ).to(device)
            out.extend(bool(p == entail_id) for p in model(**enc).logits.argmax(dim=-1).tolist())
        return out

    return nli


def load_optional_models(cfg: CloserLookModels) -> tuple[EmbedFn | None, NliFn | None, dict[str, str]]:
    """Load the embedding and NLI models with transformers; never raises.

    Returns ``(embed_fn, nli_fn, reasons)``: a function is ``None`` when its id is ``None`` or it could
    not be loaded, and ``reasons`` then maps ``"cosine"`` / ``"entailment"`` to why.
    """
    local_only = _offline() if cfg.local_files_only is None else bool(cfg.local_files_only)
    reasons: dict[str, str] = {}
    try:
        device = _device(cfg)
    except Exception as err:  # a broken torch install must not crash an eval
        return None, None, {"cosine": f"no device: {err}", "entailment": f"no device: {err}"}
    embed_fn: EmbedFn | None = None
    nli_fn: NliFn | None = None
    if cfg.embedder_id is None:
        reasons["cosine"] = "disabled (embedder_id is None)"
    else:
        try:
            embed_fn = _load_embedder(cfg, local_only, device)
        except Exception as err:  # offline / missing / incompatible model: report it
            reasons["cosine"] = _reason(cfg.embedder_id, err)
    if cfg.nli_id is None:
        reasons["entailment"] = "disabled (nli_id is None)"
    else:
        try:
            nli_fn = _load_nli(cfg, local_only, device)
        except Exception as err:
            reasons["entailment"] = _reason(cfg.nli_id, err)
    return embed_fn, nli_fn, reasons


def _check_lengths(generations: Sequence[str], answers: Sequence[str], *more: Sequence[Any]) -> None:
    sizes = {len(generations), len(answers), *(len(m) for m in more)}
    if len(sizes) != 1:
        raise ValueError(f"per-item lists must have the same length, got lengths {sorted(sizes)}")


def cosine_scores(embed_fn: EmbedFn, generations: Sequence[str], answers: Sequence[str]) -> list[float]:
    """Per item, max(0, cos(embed(generation), embed(answer))); 0 when either embedding is all zeros."""
    _check_lengths(generations, answers)
    if not generations:
        return []
    g = np.asarray(embed_fn(list(generations)), dtype=np.float64).reshape(len(generations), -1)
    a = np.asarray(embed_fn(list(answers)), dtype=np.float64).reshape(len(answers), -1)
    norms = np.linalg.norm(g, axis=1) * np.linalg.norm(a, axis=1)
    dots = np.sum(g * a, axis=1)
    cos = np.divide(dots, norms, out=np.zeros_like(dots), where=norms > 0)
    return [float(max(0.0, min(1.0, c))) for c in cos]


def entailment_scores(
    nli_fn: NliFn,
    generations: Sequence[str],
    answers: Sequence[str],
    rouge_recalls: Sequence[float],
    premise: str = "generation",
) -> list[float]:
    """Per item 1.0 when the NLI model says "entailment", else 0.0; 0.0 without asking when ROUGE < 0.1.

    ``premise="generation"``: does the generation entail the answer (the authors' forget-split setting);
    ``premise="answer"``: does the answer entail the generation (their retain / real-world setting).
    """
    if premise not in ("generation", "answer"):
        raise ValueError(f"premise must be 'generation' or 'answer', got {premise!r}")
    _check_lengths(generations, answers, rouge_recalls)
    out = [0.0] * len(generations)
    ask = [i for i, r in enumerate(rouge_recalls) if float(r) >= ROUGE_FLOOR]
    if not ask:
        return out
    gens = [generations[i] for i in ask]
    refs = [answers[i] for i in ask]
    labels = list(nli_fn(gens, refs) if premise == "generation" else nli_fn(refs, gens))
    if len(labels) != len(ask):
        raise ValueError(f"nli_fn returned {len(labels)} labels for {len(ask)} pairs")
    for i, label in zip(ask, labels):
        out[i] = 1.0 if label else 0.0
    return out


def _usable(metrics: dict[str, Any], key: str) -> float | None:
    value = metrics.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return None if math.isnan(float(value)) else float(value)


def closer_look_metrics(
    metrics: dict[str, Any],
    details: dict[str, Any],
    models: CloserLookModels | None = None,
    embed_fn: EmbedFn | None = None,
    nli_fn: NliFn | None = None,
) -> tuple[dict[str, float], dict[str, Any]]:
    """Closer-look metrics from :func:`unlearnkit.evaluation.evaluate.evaluate`'s ``(metrics, details)``.

    ``embed_fn`` / ``nli_fn`` replace the models of ``models`` (default :class:`CloserLookModels`);
    only the ones not given are loaded. Returns ``(flat, info)``:

    * ``flat``: numbers only, for metrics.json: ``{split}_cosine`` and ``{split}_entailment`` (forget,
      retain, general, and real_authors / world_facts on real TOFU) when computable, ``fe``, ``fe_yuan``, ``mu_closer_look``, ``avg_closer_look``
      and ``fe_n_components`` / ``mu_n_components`` (0-1 scale; the papers print x100);
    * ``info``: for details.json: ``fe_components`` / ``fe_yuan_components`` / ``mu_components``
      (names of what went into each aggregate), ``missing`` (component or metric -> reason),
      ``models`` (what produced cosine / entailment) and ``per_item`` (per-split score lists).
    """
    present = [
        s for s in SPLITS if isinstance(details.get(s), dict) and details[s].get("generations") is not None
    ]
    missing: dict[str, str] = {}
    used_models: dict[str, str] = {}
    if embed_fn is not None:
        used_models["cosine"] = "injected"
    if nli_fn is not None:
        used_models["entailment"] = "injected"
    if present and (embed_fn is None or nli_fn is None):
        cfg = models or CloserLookModels()
        cfg = replace(
            cfg,
            embedder_id=None if embed_fn is not None else cfg.embedder_id,
            nli_id=None if nli_fn is not None else cfg.nli_id,
        )
        loaded_embed, loaded_nli, reasons = load_optional_models(cfg)
        if embed_fn is None:
            embed_fn = loaded_embed
            if loaded_embed is not None:
                used_models["cosine"] = str(cfg.embedder_id)
            else:
                missing["cosine"] = reasons.get("cosine", "not loaded")
        if nli_fn is None:
            nli_fn = loaded_nli
            if loaded_nli is not None:
                used_models["entailment"] = str(cfg.nli_id)
            else:
                missing["entailment"] = reasons.get("entailment", "not loaded")
    elif not present:
        for name in ("cosine", "entailment"):
            if name not in used_models:
                missing[name] = "no split with generations in details"

    flat: dict[str, float] = {}
    per_item: dict[str, dict[str, list[float]]] = {}
    references: dict[str, str] = {}
    for split in present:
        d = details[split]
        gens = [str(g) for g in d["generations"]]
        answers = [str(a) for a in d.get("answers", [])]
        per_item[split] = {}
        if not gens or len(answers) != len(gens):
            missing.setdefault(
                f"{split}_generations", f"{len(gens)} generations for {len(answers)} answers in details"
            )
            continue
        targets, references[split] = answers, "answer"
        originals = d.get("original_answers")
        if split in ORIGINAL_ANSWER_SPLITS and originals is not None and len(originals) == len(gens):
            targets, references[split] = [str(a) for a in originals], "original_answer"
        if embed_fn is not None:
            cos = cosine_scores(embed_fn, gens, targets)
            per_item[split]["cosine"] = cos
            flat[f"{split}_cosine"] = float(np.mean(cos))
        if nli_fn is not None:
            rouge = d.get("rougeL_recall")
            if rouge is None or len(rouge) != len(gens):
                rouge = S.rouge_l_recalls(gens, answers)
            ent = entailment_scores(nli_fn, gens, targets, rouge, premise=ENTAILMENT_PREMISE[split])
            per_item[split]["entailment"] = ent
            flat[f"{split}_entailment"] = float(np.mean(ent))

    merged = {**metrics, **flat}

    def collect(spec) -> tuple[list[str], list[float]]:
        names, values = [], []
        for name, key, fn in spec:
            value = _usable(merged, key)
            if value is None:
                if key.endswith(("_cosine", "_entailment")) and key.rsplit("_", 1)[1] in missing:
                    continue  # the model's reason is already recorded
                missing.setdefault(key, "not in metrics (or NaN)")
                continue
            names.append(name)
            values.append(fn(value))
        return names, values

    fe_names, fe_values = collect(FE_COMPONENTS)
    yuan_names, yuan_values = collect(FE_YUAN_COMPONENTS)
    mu_splits = MU_SPLITS_TOFU if all(p in present for p in MU_SPLITS_TOFU[1:]) else MU_SPLITS
    mu_spec = [(f"{s}_{m}", f"{s}_{m}", lambda x: x) for s in mu_splits for m in MU_METRICS]
    mu_names, mu_values = collect(mu_spec)

    if fe_values:
        flat["fe"] = S.harmonic_mean(fe_values)
    if yuan_values:
        flat["fe_yuan"] = 1.0 - float(np.mean(yuan_values))
    if mu_values:
        flat["mu_closer_look"] = S.harmonic_mean(mu_values)
    if "fe" in flat and "mu_closer_look" in flat:
        flat["avg_closer_look"] = (flat["fe"] + flat["mu_closer_look"]) / 2.0
    flat["fe_n_components"] = len(fe_values)
    flat["mu_n_components"] = len(mu_values)
    info: dict[str, Any] = {
        "fe_components": fe_names,
        "fe_yuan_components": yuan_names,
        "mu_components": mu_names,
        "missing": missing,
        "models": used_models,
        "references": references,  # per split: what cosine / entailment compared with
        "per_item": per_item,
        "scale": "0-1 (papers report x100)",
    }
    return flat, info
