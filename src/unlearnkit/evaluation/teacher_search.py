"""Where ASU's forget-teacher forgets but still speaks: its temperature, found per model.

ASU (arXiv 2603.01285) distils the model toward itself with every attention softmax at a temperature
``tau > 1`` (:func:`unlearnkit.attention.smoothed_attention`). The paper's range, tau 2-2.3, is for
Llama-2-7B; the useful window is model-specific and can be narrow: on SmolLM2-135M-Instruct tau 1.7
still states the facts, 1.8 drops some while answering fluently, and from 2 on every answer is empty or
garbled (../shared/docs/ENVIRONMENT.md). A student distilled toward a teacher that says nothing learns
to say nothing, so the temperature has to be looked at before it is used.

:func:`search_tau` asks the teacher (the frozen model under smoothing) a seeded sample of forget,
retain and general questions at each setting (a temperature, optionally only some decoder layers) and
measures, per part: the fact-level score (fact recall where rows carry ``fact_value``; on TOFU's own
rows the fact-word recall of :func:`unlearnkit.evaluation.probes.fact_word_recall`; else ROUGE-L
recall), ROUGE-L recall against the true answers, the mean token entropy of the answers (the closer-look
fluency measure) and the share of answers that are empty or degenerate
(:func:`unlearnkit.report.generations.degenerate_share`).

**The rule** (:func:`choose`): the chosen setting is the smallest temperature (all layers before a
layer subset at the same temperature) at which

1. the forget answers' fact-level score falls to at most :data:`FORGET_KEEP` (half) of the unsmoothed
   model's, and
2. every part's answers stay language: the share that is empty or degenerate is at most
   ``max(DEGENERATE_MAX, the unsmoothed model's share + DEGENERATE_SLACK)`` in each of forget, retain
   and general.

When no setting meets both, the fluent setting with the lowest forget score is chosen and the result
says the rule was not met; when no setting above tau 1 is fluent, nothing is chosen.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from unlearnkit.errors import UserError

DEFAULT_TAUS = (1.0, 1.3, 1.5, 1.7, 1.8, 1.9, 2.0, 2.3, 3.0, 5.0)
FORGET_KEEP = 0.5
DEGENERATE_MAX = 0.2
DEGENERATE_SLACK = 0.1
PARTS = ("forget", "retain", "general")
RULE = (
    f"the smallest tau whose forget answers keep at most {FORGET_KEEP:g}x the unsmoothed model's "
    f"fact-level score while at most max({DEGENERATE_MAX:g}, the unsmoothed share + {DEGENERATE_SLACK:g}) "
    "of its forget, retain and general answers are empty or degenerate"
)


@dataclass(frozen=True)
class Setting:
    """One teacher: attention at ``tau`` in ``layers`` (None: every decoder layer)."""

    tau: float
    layers: tuple[int, ...] | None = None

    @property
    def label(self) -> str:
        return f"tau {self.tau:g}" + ("" if self.layers is None else f", layers {_span(self.layers)}")

    @property
    def layers_setting(self) -> str:
        """``layers`` as ASU's ``--set layers=`` takes it ("" = all)."""
        return "" if self.layers is None else ",".join(str(i) for i in self.layers)


def _span(layers: Sequence[int]) -> str:
    ordered = sorted(layers)
    contiguous = ordered == list(range(ordered[0], ordered[-1] + 1))
    return f"{ordered[0]}-{ordered[-1]}" if contiguous and len(ordered) > 2 else ",".join(map(str, ordered))


def parse_taus(text: str) -> tuple[float, ...]:
    """``"1,1.5,2"`` -> (1.0, 1.5, 2.0), with tau 1 (the unsmoothed baseline) always first."""
    try:
        taus = sorted({float(t) for t in str(text).split(",") if t.strip()})
    except ValueError:
        raise UserError(f"--taus {text}: use comma-separated temperatures, e.g. 1.5,1.8,2,2.3") from None
    if not taus or any(t <= 0 for t in taus):
        raise UserError(f"--taus {text}: temperatures must be > 0")
    return tuple(sorted({1.0, *taus}))


def parse_layer_ranges(text: str, n_layers: int) -> list[tuple[int, ...] | None]:
    """``"all,0-14,15-29"`` -> [None, (0..14), (15..29)]; indices checked against the model's depth."""
    found: list[tuple[int, ...] | None] = []
    for part in str(text).split(","):
        part = part.strip()
        if not part:
            continue
        if part == "all":
            found.append(None)
            continue
        try:
            lo, _, hi = part.partition("-")
            layers = tuple(range(int(lo), int(hi or lo) + 1))
        except ValueError:
            raise UserError(f"--layers {text}: use 'all' or ranges such as 0-14,15-29") from None
        if not layers or layers[0] < 0 or layers[-1] >= n_layers:
            raise UserError(f"--layers {text}: {part} is outside the model's layers 0-{n_layers - 1}")
        found.append(layers)
    return found or [None]


@dataclass
class TeacherSearch:
    """Every setting's numbers and answers, and the choice (``chosen`` None: no fluent teacher)."""

    settings: list[dict[str, Any]]
    chosen: Setting | None
    rule_met: bool
    score_name: str
    questions: dict[str, list[str]] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {
            "rule": RULE,
            "fact_score": self.score_name,
            "chosen_tau": None if self.chosen is None else self.chosen.tau,
            "chosen_layers": None if self.chosen is None else self.chosen.layers_setting,
            "rule_met": self.rule_met,
            "questions": self.questions,
            "settings": self.settings,
        }


def _fact_score(generations: list[str], rows: list[dict]) -> tuple[str, float | None]:
    from unlearnkit.evaluation.probes import fact_recall, fact_word_recall
    from unlearnkit.metrics.scores import rouge_l_recalls

    found = fact_recall(generations, rows)
    if found is not None:
        return "fact recall", found
    found = fact_word_recall(generations, rows)
    if found is not None:
        return "fact-word recall", found
    rouge = rouge_l_recalls(generations, [r["answer"] for r in rows])
    return "ROUGE-L recall", sum(rouge) / len(rouge) if rouge else None


def measure(
    model, tokenizer, fmt, parts: Mapping[str, list[dict]], setting: Setting, max_new_tokens: int, batch_size: int
) -> dict[str, Any]:
    """One setting: each part's greedy answers under the smoothed attention, and their numbers."""
    from unlearnkit.attention import smoothed_attention
    from unlearnkit.metrics.fluency import degenerate_share
    from unlearnkit.metrics.passes import generate_answers
    from unlearnkit.metrics.scores import rouge_l_recalls, token_entropy

    result: dict[str, Any] = {"tau": setting.tau, "layers": setting.layers_setting, "label": setting.label}
    with smoothed_attention(model, setting.tau, list(setting.layers) if setting.layers else None):
        for part, rows in parts.items():
            if not rows:
                continue
            texts, ids = generate_answers(
                model, tokenizer, fmt, [r["question"] for r in rows], max_new_tokens, batch_size
            )
            rouge = rouge_l_recalls(texts, [r["answer"] for r in rows])
            name, score = _fact_score(texts, rows)
            result[part] = {
                "fact_score": score,
                "fact_score_name": name,
                "rougeL_recall": sum(rouge) / len(rouge),
                "token_entropy": sum(token_entropy(t) for t in ids) / len(ids),
                "degenerate": degenerate_share(texts),
                "answers": texts,
            }
    return result


def choose(settings: Sequence[dict[str, Any]]) -> tuple[dict[str, Any] | None, bool]:
    """The setting :data:`RULE` picks from measured ``settings`` (the first being tau 1, all layers),
    and whether the rule was met (False: the fallback, see the module docstring)."""
    base = settings[0]
    base_forget = base["forget"]["fact_score"] or 0.0

    def fluent(s: Mapping[str, Any]) -> bool:
        return all(
            s[p]["degenerate"] <= max(DEGENERATE_MAX, base[p]["degenerate"] + DEGENERATE_SLACK)
            for p in PARTS
            if p in s and p in base
        )

    candidates = sorted((s for s in settings[1:] if s["tau"] > 1.0), key=lambda s: (s["tau"], s["layers"] != ""))
    for s in candidates:
        if fluent(s) and (s["forget"]["fact_score"] or 0.0) <= FORGET_KEEP * base_forget:
            return s, True
    speaking = [s for s in candidates if fluent(s)]
    if not speaking:
        return None, False
    return min(speaking, key=lambda s: (s["forget"]["fact_score"] or 0.0, s["tau"])), False


def search_tau(
    model,
    tokenizer,
    fmt,
    parts: Mapping[str, list[dict]],
    taus: Sequence[float] = DEFAULT_TAUS,
    layer_ranges: Sequence[tuple[int, ...] | None] = (None,),
    max_new_tokens: int = 48,
    batch_size: int = 16,
    log: Callable[[str], None] | None = None,
    baseline: dict[str, Any] | None = None,
) -> TeacherSearch:
    """Measure the teacher at every ``taus`` x ``layer_ranges`` setting on ``parts`` (``forget``,
    ``retain``, ``general`` rows with ``question`` / ``answer``) and choose one by :data:`RULE`.
    ``baseline``: the unsmoothed model's :func:`measure` on the same parts, when the caller has it."""
    if not parts.get("forget"):
        raise UserError("the teacher search needs forget questions (question / answer rows)")
    settings = [Setting(1.0)] + [
        Setting(t, layers) for t in taus if t != 1.0 for layers in layer_ranges
    ]
    measured = [] if baseline is None else [baseline]
    for setting in settings[len(measured):]:
        if log is not None:
            log(f"teacher at {setting.label}")
        measured.append(measure(model, tokenizer, fmt, parts, setting, max_new_tokens, batch_size))
    best, met = choose(measured)
    chosen = None if best is None else Setting(best["tau"], _layers_of(best["layers"]))
    return TeacherSearch(
        settings=measured,
        chosen=chosen,
        rule_met=met,
        score_name=measured[0]["forget"]["fact_score_name"],
        questions={p: [r["question"] for r in rows] for p, rows in parts.items() if rows},
    )


def _layers_of(text: str) -> tuple[int, ...] | None:
    return tuple(int(x) for x in text.split(",")) if text else None


def sample_parts(bench, max_items: int, seed: int) -> dict[str, list[dict]]:
    """A seeded sample of ``max_items`` forget, retain and general questions of a benchmark."""
    forget = bench.eval_split("forget") if hasattr(bench, "eval_split") else bench.forget
    return {
        "forget": subsample_rows(forget, max_items, seed),
        "retain": subsample_rows(bench.retain, max_items, seed),
        "general": subsample_rows(bench.general, max_items, seed),
    }


def table(search: TeacherSearch) -> str:
    """The settings side by side, one line each, then the choice and its rule."""
    head = f"{'setting':<22} {'forget ' + search.score_name:>28} {'ROUGE-L f/r/g':>16} {'entropy f/r/g':>16} {'degenerate f/r/g':>18}"
    lines = [head]
    for s in search.settings:
        def three(key: str, s=s) -> str:
            return "/".join(f"{s[p][key]:.2f}" if p in s and s[p][key] is not None else "-" for p in PARTS)

        forget = s["forget"]["fact_score"]
        lines.append(
            f"{s['label']:<22} {'-' if forget is None else f'{forget:.3f}':>28} {three('rougeL_recall'):>16} "
            f"{three('token_entropy'):>16} {three('degenerate'):>18}"
        )
    if search.chosen is None:
        lines.append("chosen: none (no smoothed teacher answered in language; ASU needs a lower tau)")
    else:
        how = "by the rule" if search.rule_met else "the rule was not met: the fluent setting that forgot most"
        lines.append(f"chosen: {search.chosen.label} ({how}; rule: {RULE})")
    return "\n".join(lines)


# ------------------------------------------------------------------ `--set tau=auto` (unlearn, API)

AUTO = "auto"


def is_auto_tau(values: Mapping[str, Any]) -> bool:
    """``tau=auto`` among a run's settings (``--set tau=auto``, ``unlearn(..., tau="auto")``)."""
    return isinstance(values.get("tau"), str) and values["tau"].strip().lower() == AUTO


def for_validation(values: Mapping[str, Any]) -> dict[str, Any]:
    """``values`` with ``tau=auto`` left out, so that the settings can be checked before the search has
    run (the method's default stands in until then)."""
    return {k: v for k, v in values.items() if not (k == "tau" and is_auto_tau(values))}


def resolve_auto_tau(
    model, tokenizer, fmt, values: Mapping[str, Any], parts: Mapping[str, list[dict]], seed: int, log=None
) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """``values`` with ``tau=auto`` replaced by the searched temperature (and the chosen layers, unless
    ``layers`` was given), and the search's record for the card; unchanged and None without ``auto``.
    No fluent teacher: one clear error naming the command that shows why."""
    if not is_auto_tau(values):
        return dict(values), None
    sample = {p: subsample_rows(rows, AUTO_ITEMS, seed) for p, rows in parts.items()}
    search = search_tau(model, tokenizer, fmt, sample, DEFAULT_TAUS, (None,), AUTO_NEW_TOKENS, log=log)
    if search.chosen is None:
        raise UserError(
            "tau=auto: no temperature above 1 left the teacher answering in language on the forget, "
            "retain and general questions; see `unlearnkit teacher` for its answers, and set tau yourself"
        )
    found = {**values, "tau": search.chosen.tau}
    if search.chosen.layers is not None and not values.get("layers"):
        found["layers"] = search.chosen.layers_setting
    if log is not None:
        log(f"tau=auto: {search.chosen.label}" + ("" if search.rule_met else " (the rule was not met; the fluent setting that forgot most)"))
    record = search.as_dict()
    for setting in record["settings"]:  # the card keeps the numbers; teacher.json keeps the answers
        for part in PARTS:
            setting.get(part, {}).pop("answers", None)
    return found, record


AUTO_ITEMS = 8
AUTO_NEW_TOKENS = 48


def subsample_rows(rows: Sequence[Mapping[str, Any]], n: int, seed: int) -> list[dict]:
    from unlearnkit.evaluation.evaluate import subsample

    return subsample([dict(r) for r in rows if r.get("question") and r.get("answer")], n, seed)
