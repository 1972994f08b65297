"""A sweep's settings (:class:`SweepSettings`, mirroring the CLI flags), their checks, the objectives
it may search, and the loaded :class:`Context` (benchmark, halves, reference numbers) every worker shares."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from unlearnkit.errors import UserError
from unlearnkit.pipelines.sweep.space import SearchSpace, load_space
from unlearnkit.pipelines.sweep.storage import redacted, storage_kind

# Metric -> direction. forget_quality is searched as log10 (see the module docstring).
OBJECTIVES = {
    "forget_quality": "maximize",
    "model_utility": "maximize",
    "forget_rougeL_recall": "minimize",
    "forget_prob": "minimize",
    "forget_truth_ratio": "maximize",
    "forget_exact_memorisation": "minimize",
    "forget_extraction_strength": "minimize",
}
FQ_FLOOR = 1e-300  # log10 of a p-value of exactly 0 would be -inf
# The compass goal of the embedded world: forget quality >= 0.5 with utility >= 0.98 x the oracle's.
GOAL_FORGET_QUALITY = 0.5
GOAL_UTILITY_RATIO = 0.98


@dataclass
class SweepSettings:
    """Everything a sweep (and each of its workers) needs; mirrors the CLI flags."""

    model: str
    data: str
    method: str
    output: str
    retain_model: str | None = None
    trials: int = 20
    space: str | None = None
    objectives: tuple[str, ...] = ()
    jobs: int = 1
    seed: int = 0
    max_items: int = 200
    max_new_tokens: int = 48
    prune_floor: float = 0.5
    utility_ratio: float = GOAL_UTILITY_RATIO
    budget_minutes: float | None = None
    trust_remote_code: bool = False
    storage: str | None = None  # an Optuna storage URL; None = sqlite:///OUTPUT/study.db
    device: str = "auto"  # --device / --dtype: unlearnkit.models.resolve_placement, in every worker
    dtype: str = "auto"

    def resolved_objectives(self) -> tuple[str, ...]:
        if self.objectives:
            return tuple(self.objectives)
        if self.retain_model:
            return ("forget_quality", "model_utility")
        return ("forget_rougeL_recall", "model_utility")

    def fingerprint(self, space: SearchSpace) -> dict[str, Any]:
        """What must match for a rerun to continue the same study (not trials/jobs/budget)."""
        return {
            "model": str(self.model),
            "data": str(self.data),
            "method": self.method,
            "retain_model": str(self.retain_model) if self.retain_model else None,
            "objectives": list(self.resolved_objectives()),
            "seed": self.seed,
            "max_items": self.max_items,
            "max_new_tokens": self.max_new_tokens,
            "space": space.describe()["params"],
            "fixed": space.fixed,
            "storage": redacted(self.storage) if self.storage else None,
        }

    def study_fingerprint(self, space: SearchSpace, split_digest: str) -> dict[str, Any]:
        """What every worker on one study must share, on any machine (paths may differ there)."""
        keep = ("method", "objectives", "seed", "max_items", "max_new_tokens", "space", "fixed")
        fp = self.fingerprint(space)
        return {**{k: fp[k] for k in keep}, "split": split_digest}


def validate_settings(st: SweepSettings) -> None:
    if st.trials < 1:
        raise UserError(f"--trials {st.trials}: must be >= 1")
    if st.jobs < 1:
        raise UserError(f"--jobs {st.jobs}: must be >= 1")
    if st.max_items < 2 or st.max_new_tokens < 1:
        raise UserError("--max-items must be >= 2 and --max-new-tokens >= 1")
    if not 0 <= st.prune_floor < 1:
        raise UserError(f"--prune-floor {st.prune_floor}: must be in [0, 1) (0 = never prune)")
    if st.budget_minutes is not None and st.budget_minutes <= 0:
        raise UserError(f"--budget-minutes {st.budget_minutes}: must be > 0")
    if st.storage is not None:
        storage_kind(st.storage)  # a bad URL fails here, before anything is loaded
    objectives = st.resolved_objectives()
    for name in objectives:
        if name not in OBJECTIVES:
            raise UserError(f"--objective {name}: unknown; use one of {', '.join(OBJECTIVES)}")
    if len(set(objectives)) != len(objectives):
        raise UserError(f"--objective {','.join(objectives)}: names an objective twice")
    if "forget_quality" in objectives and not st.retain_model:
        raise UserError(
            "--objective forget_quality needs --retain-model (the retain oracle); without one use "
            "--objective forget_rougeL_recall,model_utility"
        )


@dataclass
class Context:
    """The loaded benchmark, its halves and the reference numbers every worker shares."""

    settings: SweepSettings
    space: SearchSpace
    bench: Any  # the whole benchmark: every trial trains on all of it
    selection_bench: Any  # every part's selection half (unlearnkit.data.halves.split_halves)
    test_bench: Any  # every part's test half
    split_info: dict[str, dict[str, Any]]
    reference: dict[str, Any] = field(default_factory=dict)

    @property
    def out(self) -> Path:
        return Path(self.settings.output)

    @property
    def selection(self) -> list[int]:
        """Forget-row indices of the selection half."""
        return self.split_info["forget"]["selection_rows"]

    @property
    def test(self) -> list[int]:
        return self.split_info["forget"]["test_rows"]

    @property
    def entity_source(self) -> str:
        return self.split_info["forget"]["by"]

    def split_digest(self) -> str:
        """A hash of which entities fall in which half, part by part (equal on every machine)."""
        blob = {
            part: [info["selection_entities"], info["test_entities"], info["rows"]]
            for part, info in self.split_info.items()
        }
        return hashlib.sha256(json.dumps(blob, sort_keys=True).encode()).hexdigest()[:16]

    def half(self, which: str):
        """One half of every part, for evaluation. The holdout half is dropped: no sweep objective
        reads membership inference, and its generations would double the cost of every trial."""
        bench = self.selection_bench if which == "selection" else self.test_bench
        return dataclasses.replace(bench, holdout=[])

    def eval_settings(self):
        from unlearnkit.evaluation.evaluate import EvalSettings

        st = self.settings
        return EvalSettings(
            max_new_tokens=st.max_new_tokens, max_items=st.max_items, seed=st.seed, progress=False
        )


def load_context(st: SweepSettings) -> Context:
    from unlearnkit.catalog import spec
    from unlearnkit.data.halves import split_halves
    from unlearnkit.data.sources import resolve_data
    from unlearnkit.models import check_model_path

    validate_settings(st)  # flags first, then the method's declaration: neither imports torch
    method = spec(st.method)
    st.method = method.name
    check_model_path(st.model)
    space = load_space(st.space, method, model=st.model)
    if st.retain_model:
        if not (Path(st.retain_model) / "config.json").is_file() and Path(st.retain_model).exists():
            raise UserError(
                f"--retain-model {st.retain_model}: sweep needs the oracle's model folder (its truth "
                "ratios are recomputed on each half), not an eval folder"
            )
        check_model_path(st.retain_model)
    bench = resolve_data(st.data, eval_fields="forget_quality" in st.resolved_objectives())
    if getattr(bench, "kind", "qa") != "qa" or "question" not in bench.forget[0]:
        raise UserError(
            f"--data {st.data}: sweep scores question/answer forget rows; raw-text data is not supported"
        )
    selection, test, info = split_halves(bench, st.seed)
    return Context(st, space, bench, selection, test, info)
