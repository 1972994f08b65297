"""Search spaces of ``unlearnkit sweep``: the searched keys (:class:`Param`), a space read from YAML and
checked against the method's config (:func:`load_space`), and the shipped space for a model's scale."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from unlearnkit.errors import UserError

SPACES_DIR = Path(__file__).parents[2] / "resources" / "spaces"


@dataclass
class Param:
    """One searched key: a float/int range (``log``, ``step``) or a list of ``choices``."""

    name: str
    low: float | None = None
    high: float | None = None
    log: bool = False
    step: float | None = None
    choices: list[Any] | None = None
    is_int: bool = False

    def grid(self) -> list[Any] | None:
        """The finite list of values, or None for a continuous range."""
        if self.choices is not None:
            return list(self.choices)
        if self.step is None:
            return None
        n = int(math.floor((self.high - self.low) / self.step + 1e-9)) + 1
        values = [self.low + i * self.step for i in range(n)]
        return [int(round(v)) for v in values] if self.is_int else [round(v, 12) for v in values]

    def suggest(self, trial) -> Any:
        if self.choices is not None:
            return trial.suggest_categorical(self.name, self.choices)
        if self.is_int:
            return trial.suggest_int(
                self.name, int(self.low), int(self.high), step=int(self.step or 1), log=self.log
            )
        return trial.suggest_float(self.name, self.low, self.high, step=self.step, log=self.log)

    def sample_value(self) -> Any:
        """A value inside the range (to validate the key against the method's config)."""
        if self.choices is not None:
            return self.choices[0]
        return int(self.low) if self.is_int else float(self.low)


@dataclass
class SearchSpace:
    params: dict[str, Param]
    fixed: dict[str, Any]
    source: str
    scale: str = "given by --space"  # which scale the default space was picked for, and why

    @property
    def is_grid(self) -> bool:
        return all(p.grid() is not None for p in self.params.values())

    def grid(self) -> dict[str, list[Any]]:
        return {name: p.grid() for name, p in self.params.items()}  # type: ignore[misc]

    def grid_size(self) -> int:
        return math.prod(len(v) for v in self.grid().values())

    def describe(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "params": {n: dataclasses.asdict(p) for n, p in self.params.items()},
            "fixed": self.fixed,
        }


def space_file(method: str, scale: str = "paper") -> Path:
    """The shipped space of ``method`` at ``scale`` (``default.yaml``, lr and epochs, when it has none).

    ``paper``: ``resources/spaces/<method>.yaml``, the papers' ranges for pretrained 1B-8B models;
    ``tiny``: ``resources/spaces/tiny/<method>.yaml``, ranges around the recorded tiny-model recipe.
    """
    folder = SPACES_DIR / "tiny" if scale == "tiny" else SPACES_DIR
    path = folder / f"{method}.yaml"
    return path if path.is_file() else folder / "default.yaml"


def model_scale(model: str | Path | None) -> tuple[str, str]:
    """``("tiny" | "paper", why)``: the scale of the default search space for ``model``, chosen the way
    ``unlearn`` picks its defaults: a model whose unlearnkit.json records a recipe (made from scratch by
    ``finetune --model tiny``) gets spaces around that recipe, any other (pretrained) model the papers'."""
    from unlearnkit.models import recorded_defaults

    recorded = recorded_defaults(model) if model else {}
    if recorded:
        lr = recorded.get("train", {}).get("lr")
        return "tiny", (
            f"the model records {recorded.get('source', 'a recipe')}"
            + (f" (lr {lr:g})" if isinstance(lr, (int, float)) else "")
            + ": the tiny scale's space"
        )
    return "paper", "no recorded recipe (a pretrained model): the papers' 1B-8B space"


def _number(where: str, key: str, value: Any) -> float:
    # YAML 1.1 reads 1e-5 (no dot) as a string; accept it as the number the user meant.
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise UserError(f"{where}: {key}={value!r} is not a number")
    try:
        return float(value)
    except ValueError:
        raise UserError(f"{where}: {key}={value!r} is not a number (write e.g. 1.0e-5)") from None


def _parse_param(where: str, name: str, spec: Any) -> Param:
    where = f"{where}: params.{name}"
    if isinstance(spec, list):
        spec = {"choices": spec}
    if not isinstance(spec, dict):
        raise UserError(
            f"{where} must be a mapping like {{low: 1.0e-5, high: 1.0e-3, log: true}} or {{choices: [...]}}"
        )
    unknown = set(spec) - {"low", "high", "log", "step", "choices"}
    if unknown:
        raise UserError(
            f"{where}: unknown field '{sorted(unknown)[0]}' (use low, high, log, step or choices)"
        )
    if "choices" in spec:
        if set(spec) != {"choices"}:
            raise UserError(f"{where}: give either choices or low/high, not both")
        choices = spec["choices"]
        if not isinstance(choices, list) or not choices:
            raise UserError(f"{where}: choices must be a non-empty list, e.g. [3, 5, 10]")
        if any(isinstance(c, (dict, list)) for c in choices):
            raise UserError(f"{where}: choices must be plain values (numbers, strings, booleans)")
        if len(set(map(repr, choices))) != len(choices):
            raise UserError(f"{where}: choices {choices} repeat a value")
        return Param(name, choices=list(choices))
    if "low" not in spec or "high" not in spec:
        raise UserError(f"{where}: a range needs both low and high (or give choices: [...])")
    low, high = _number(where, "low", spec["low"]), _number(where, "high", spec["high"])
    log = spec.get("log", False)
    if not isinstance(log, bool):
        raise UserError(f"{where}: log must be true or false")
    step = _number(where, "step", spec["step"]) if spec.get("step") is not None else None
    if not low < high:
        raise UserError(f"{where}: low={low:g} must be < high={high:g}")
    if log and low <= 0:
        raise UserError(f"{where}: a log range needs low > 0 (got {low:g})")
    if step is not None and (step <= 0 or log):
        raise UserError(f"{where}: step must be > 0 and cannot be combined with log: true")
    is_int = all(
        isinstance(spec.get(k), int) and not isinstance(spec.get(k), bool) for k in ("low", "high")
    ) and (step is None or float(step).is_integer())
    return Param(name, low, high, log, step, None, is_int)


def load_space(path: str | Path | None, method, model: str | Path | None = None) -> SearchSpace:
    """Read and validate a space file for ``method`` (its :class:`unlearnkit.catalog.MethodSpec`, or the
    training registry's :class:`unlearnkit.train.methods.Method`: both carry ``name`` and ``config``).

    Without ``path``: the shipped space for ``model``'s scale (:func:`model_scale`). Every key must be
    one ``unlearnkit unlearn --set`` accepts for this method; ranges are checked here, and both ends of
    every range are passed through the method's config validation, so a bad space fails before the
    first trial.
    """
    import yaml

    from unlearnkit.config import build_configs

    scale, why = model_scale(model) if not path else ("given", "given by --space")
    path = Path(path) if path else space_file(method.name, scale)
    where = str(path)
    if not path.is_file():
        raise UserError(f"--space {path} does not exist; pass a YAML file (see {SPACES_DIR / 'README.md'})")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        raise UserError(
            f"{path}{f':{mark.line + 1}' if mark else ''}: invalid YAML ({getattr(err, 'problem', err)})"
        ) from None
    except UnicodeDecodeError:
        raise UserError(f"{path} is not UTF-8 text") from None
    if not isinstance(data, dict) or not isinstance(data.get("params"), dict) or not data["params"]:
        raise UserError(
            f"{where}: a search space needs a non-empty 'params:' mapping (see {SPACES_DIR / 'README.md'})"
        )
    unknown = set(data) - {"params", "fixed"}
    if unknown:
        raise UserError(f"{where}: unknown top-level key '{sorted(unknown)[0]}' (use params and fixed)")
    fixed = data.get("fixed") or {}
    if not isinstance(fixed, dict):
        raise UserError(f"{where}: 'fixed:' must be a mapping of key: value")
    params = {str(name): _parse_param(where, str(name), spec) for name, spec in data["params"].items()}
    clash = set(params) & set(fixed)
    if clash:
        raise UserError(f"{where}: '{sorted(clash)[0]}' is both searched (params) and fixed; keep one")
    for key in ("seed", "method", "model", "data"):
        if key in params or key in fixed:
            raise UserError(f"{where}: '{key}' cannot be in a search space (it is a flag of the sweep)")
    ends = [{n: p.sample_value() for n, p in params.items()}]
    ends.append({n: (p.choices[-1] if p.choices else p.high) for n, p in params.items()})
    for values in ends:
        try:
            build_configs(method.config, {**fixed, **values}, where=where)
        except UserError as err:
            raise UserError(f"{where}: {err} (method {method.name})") from None
        except ValueError as err:
            raise UserError(f"{where}: {err} (method {method.name})") from None
    return SearchSpace(params, dict(fixed), where, why)
