"""``unlearnkit sweep``: search a method's settings with Optuna, honestly and resumably.

How a sweep runs (``run_sweep``):

1. **Honest split.** The forget set is cut, deterministically (seeded), into a *selection* half and a
   *test* half by entity: rows of one author never straddle the halves (``forget_entities``). Every
   trial unlearns the *whole* forget set (what a user would do), but is scored on the selection half
   only; the chosen settings are then re-run and reported on the test half, which no choice has seen.
   A selection score is never reported as a result.
2. **Study.** One Optuna study in ``DIR/study.db`` (SQLite): multi-objective TPE, or the grid sampler
   when the search space is a finite grid. Objectives default to ``forget_quality`` (KS p-value against
   the retain oracle; searched as ``log10`` because useful values span 30 orders of magnitude) and
   ``model_utility``; without an oracle ``forget_rougeL_recall`` (down) and ``model_utility`` (up).
3. **Workers.** ``--jobs J`` processes claim trials from the same study. A claim (count, ``ask``) runs
   under a file lock, so J workers finish with exactly ``--trials`` trials. A worker records its pid
   and process start time on each trial; a RUNNING trial whose process is gone (killed) is marked
   FAIL and its parameters are enqueued again, so rerunning the same command after a crash continues
   the study without losing or duplicating a trial.
4. **Pruning.** After the first epoch, a cheap probe (mean answer probability on a few retain and
   general rows) is compared with the target's; below ``prune_floor`` x the target the trial is pruned.
5. **Outputs.** ``best.yaml`` (a recipe for ``unlearn --config``), ``trials.jsonl``, ``pareto.png``,
   ``report.html`` and ``summary.json`` (the test-half numbers), each written atomically.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import hashlib
import json
import math
import os
import shutil
import socket
import time
import warnings
import zlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from unlearnkit.errors import UserError
from unlearnkit.selection_noise import all_equal, noise_bands, unmoved

STUDY_NAME = "unlearnkit-sweep"
SPACES_DIR = Path(__file__).parent / "resources" / "spaces"
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
TOFU_QA_PER_AUTHOR = 20  # locuslab/TOFU: 20 consecutive QA pairs per fictitious author (data.halves)
# The compass goal of the embedded world: forget quality >= 0.5 with utility >= 0.98 x the oracle's.
GOAL_FORGET_QUALITY = 0.5
GOAL_UTILITY_RATIO = 0.98
PROBE_ROWS = 32  # rows of retain and of general used by the after-epoch-1 pruning probe


# ---------------------------------------------------------------------------------------------
# Search spaces


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
    """Read and validate a space file for ``method`` (a :class:`unlearnkit.train.methods.Method`).

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


# ---------------------------------------------------------------------------------------------
# The honest split (unlearnkit.data.halves cuts every part; these two keep the forget-only names)


def forget_entities(rows: Sequence[dict], bench_name: str = "") -> tuple[list[str], str]:
    """The entity of every forget row, and how it was found (:func:`unlearnkit.data.halves.entities_of`)."""
    from unlearnkit.data.halves import entities_of

    return entities_of(rows, bench_name, "forget")


def split_forget(entities: Sequence[str], seed: int) -> tuple[list[int], list[int]]:
    """Row indices of the forget set's selection and test halves (whole entities, seeded)."""
    from unlearnkit.data.halves import split_entities

    return split_entities(entities, seed, "forget")


# ---------------------------------------------------------------------------------------------
# Settings and context


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
    from unlearnkit.data.halves import split_halves
    from unlearnkit.data.sources import resolve_data
    from unlearnkit.models import check_model_path
    from unlearnkit.train.methods import get_method

    validate_settings(st)  # flags first: cheap, before the method registry imports torch
    method = get_method(st.method)
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


# ---------------------------------------------------------------------------------------------
# Study storage and claims


STORAGE_KINDS = ("sqlite", "postgresql", "mysql")
HEARTBEAT_SECONDS = 30.0  # a running trial's worker stamps the trial this often
# A RUNNING trial of another machine whose last stamp is older than this lost its worker (killed job,
# dead node): it is run again. Clocks of the machines must agree to well within this (NTP does).
STALE_AFTER_SECONDS = 600.0


def redacted(url: str) -> str:
    """``url`` without its password (it is written to sweep.json and printed)."""
    from sqlalchemy.engine import make_url

    try:
        return make_url(url).render_as_string(hide_password=True)
    except Exception:  # noqa: BLE001 - not a URL at all: storage_kind says so
        return url


def storage_kind(url: str) -> str:
    """``sqlite`` / ``postgresql`` / ``mysql`` for an Optuna RDB storage URL, else one clear error."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    hint = "use sqlite:///PATH, postgresql://USER:PASSWORD@HOST:PORT/DB or mysql+pymysql://USER@HOST/DB"
    try:
        parsed = make_url(url)
    except ArgumentError:
        raise UserError(f"--storage {url!r} is not a database URL; {hint}") from None
    kind = parsed.get_backend_name()
    if kind not in STORAGE_KINDS:
        raise UserError(f"--storage {redacted(url)}: unsupported database '{kind}'; {hint}")
    if kind == "sqlite" and not parsed.database:
        raise UserError(f"--storage {url}: an in-memory SQLite study cannot be shared or resumed; {hint}")
    return kind


def storage_url(st: SweepSettings) -> str:
    return st.storage or f"sqlite:///{(Path(st.output) / 'study.db').resolve()}"


def study_location(st: SweepSettings) -> str:
    """Where the study lives, for messages (the password hidden)."""
    return redacted(st.storage) if st.storage else str(Path(st.output) / "study.db")


def study_name(ctx: Context) -> str:
    """``unlearnkit-sweep`` in the folder's own SQLite file; in a shared storage one name per sweep
    (method and a hash of what the workers must share), so that every machine running the same
    command joins the same study and different sweeps never mix."""
    if not ctx.settings.storage:
        return STUDY_NAME
    fp = ctx.settings.study_fingerprint(ctx.space, ctx.split_digest())
    digest = hashlib.sha256(json.dumps(fp, sort_keys=True).encode()).hexdigest()[:10]
    return f"{STUDY_NAME}-{ctx.settings.method}-{digest}"


_ENGINES: dict[str, Any] = {}


def _lock_engine(url: str):
    from sqlalchemy import create_engine
    from sqlalchemy.pool import NullPool

    if url not in _ENGINES:
        _ENGINES[url] = create_engine(url, poolclass=NullPool)
    return _ENGINES[url]


@contextlib.contextmanager
def _flock(path: Path) -> Iterator[None]:
    with open(path, "a+") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


@contextlib.contextmanager
def claim_lock(ctx: Context) -> Iterator[None]:
    """The lock every worker of the study takes to claim a trial, on any machine.

    SQLite: an exclusive ``flock`` on ``<db>.lock`` beside the database file (one machine, or a
    shared file system that honours flock). PostgreSQL: a session-level ``pg_advisory_lock``;
    MySQL: ``GET_LOCK``. Each is released when its holder dies (the OS closes the file, the server
    the connection), so a killed worker never blocks the others.
    """
    from sqlalchemy import text
    from sqlalchemy.engine import make_url

    url = storage_url(ctx.settings)
    kind = storage_kind(url)
    name = study_name(ctx)
    if kind == "sqlite":
        db = Path(make_url(url).database).expanduser()
        if not db.parent.is_dir():
            raise UserError(f"--storage {url}: folder {db.parent} does not exist")
        with _flock(db.with_name(db.name + ".lock")):
            yield
        return
    try:
        conn = _lock_engine(url).connect()
    except ModuleNotFoundError as err:
        raise UserError(
            f"--storage {redacted(url)}: the database driver is not installed ({err.name}); "
            "pip install 'unlearnkit[sweep-postgres]' (PostgreSQL) or a MySQL driver such as pymysql"
        ) from None
    except Exception as err:  # noqa: BLE001 - any connection failure is the user's URL or server
        raise UserError(
            f"--storage {redacted(url)}: cannot connect ({type(err).__name__}: {str(err).splitlines()[0]})"
        ) from None
    try:
        if kind == "postgresql":
            key = zlib.crc32(name.encode())  # fits pg's bigint key
            conn.execute(text("SELECT pg_advisory_lock(:k)"), {"k": key})
            try:
                yield
            finally:
                conn.execute(text("SELECT pg_advisory_unlock(:k)"), {"k": key})
        else:
            got = conn.execute(text("SELECT GET_LOCK(:n, 3600)"), {"n": name[:64]}).scalar()
            if got != 1:
                raise UserError(f"--storage {redacted(url)}: could not take the study's lock in an hour")
            try:
                yield
            finally:
                conn.execute(text("SELECT RELEASE_LOCK(:n)"), {"n": name[:64]})
    finally:
        conn.close()


def open_study(ctx: Context, sampler=None):
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    directions = [OBJECTIVES[o] for o in ctx.settings.resolved_objectives()]
    url = storage_url(ctx.settings)
    kind = storage_kind(url)
    # Under the lock: two processes creating the tables of a new database at once would collide.
    with claim_lock(ctx):
        try:
            storage = optuna.storages.RDBStorage(
                url,
                # Several worker processes write one SQLite file: wait for its lock instead of failing.
                engine_kwargs={"connect_args": {"timeout": 120}}
                if kind == "sqlite"
                else {"pool_pre_ping": True},
            )
        except ModuleNotFoundError as err:  # claim_lock checked the driver; this is optuna's own import
            raise UserError(f"--storage {redacted(url)}: {err}") from None
        study = optuna.create_study(
            storage=storage,
            study_name=study_name(ctx),
            directions=directions,
            sampler=sampler,
            load_if_exists=True,
        )
        if "fingerprint" not in study.user_attrs:
            study.set_user_attr("fingerprint", ctx.settings.study_fingerprint(ctx.space, ctx.split_digest()))
        return study


@contextlib.contextmanager
def study_lock(out: Path) -> Iterator[None]:
    """An exclusive lock on ``DIR/.sweep.lock``: this folder's files (sweep.json, reference.json).

    Released by the OS if the holder is killed. Claims of trials take :func:`claim_lock` instead.
    """
    with _flock(out / ".sweep.lock"):
        yield


def _process_start(pid: int) -> float | None:
    import psutil

    try:
        return psutil.Process(pid).create_time()
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return None


def _worker_tag() -> dict[str, Any]:
    return {
        "pid": os.getpid(),
        "start": _process_start(os.getpid()),
        "host": socket.gethostname(),
        "claimed": time.time(),
    }


def _is_stale(trial, now: float | None = None) -> bool:
    """A RUNNING trial whose worker is gone.

    This machine's workers: the process (pid and start time) no longer exists. Another machine's:
    its heartbeat (``HEARTBEAT_SECONDS``) stopped more than ``STALE_AFTER_SECONDS`` ago.
    """
    tag = trial.user_attrs.get("worker")
    if not tag:
        # Claims tag the trial under the lock we hold now: an untagged RUNNING trial lost its worker.
        return True
    if tag.get("host") != socket.gethostname():
        last = max(float(trial.user_attrs.get("heartbeat") or 0), float(tag.get("claimed") or 0))
        return last > 0 and (now or time.time()) - last > STALE_AFTER_SECONDS
    start = _process_start(int(tag["pid"]))
    return start is None or abs(start - float(tag.get("start") or 0)) > 1e-3


@contextlib.contextmanager
def heartbeat(study, trial_id: int, every: float = HEARTBEAT_SECONDS) -> Iterator[None]:
    """Stamp the running trial every ``every`` seconds, so that other machines can tell it is alive."""
    import threading

    stop = threading.Event()

    def beat() -> None:
        while not stop.wait(every):
            with contextlib.suppress(Exception):  # a missed beat is harmless; the next one comes
                study._storage.set_trial_user_attr(trial_id, "heartbeat", time.time())

    thread = threading.Thread(target=beat, name="sweep-heartbeat", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


def recover_stale(study) -> list[int]:
    """Mark trials of killed workers FAIL and enqueue their parameters again; call under the lock."""
    from optuna.trial import TrialState

    recovered = []
    for t in study.get_trials(deepcopy=False, states=(TrialState.RUNNING,)):
        if not _is_stale(t):
            continue
        study.tell(t.number, state=TrialState.FAIL)
        study.set_user_attr(f"killed_trial_{t.number}", True)
        if t.params:  # parameters were drawn before the kill: run exactly them again
            study.enqueue_trial(t.params, user_attrs={"retry_of": t.number}, skip_if_exists=False)
        recovered.append(t.number)
    return recovered


def counted(study) -> int:
    """Trials that count towards ``--trials``: finished (complete or pruned) or being run."""
    from optuna.trial import TrialState

    return len(
        study.get_trials(deepcopy=False, states=(TrialState.COMPLETE, TrialState.PRUNED, TrialState.RUNNING))
    )


def _grid_sampler_class():
    import optuna

    class AskTellGrid(optuna.samplers.GridSampler):
        """GridSampler whose ``after_trial`` does not call ``study.stop()``.

        That call only works inside ``study.optimize`` (ask/tell raises, and the trial's result is then
        never stored); here ``trial_limit`` already caps the trials at the grid's size.
        """

        def after_trial(self, study, trial, state, values) -> None:
            return None

    return AskTellGrid


def _AskTellGrid(search_space, seed):  # noqa: N802 - stands for the class, built lazily (optuna import)
    return _grid_sampler_class()(search_space, seed=seed)


def _sampler(ctx: Context, n_existing: int, worker: int):
    import optuna

    space, st = ctx.space, ctx.settings
    # Re-seeded per claim from the study's size: a resumed or parallel run does not replay the
    # random start-up draws of an earlier run (which would duplicate trials), yet stays seeded.
    # The method name too: sweeps of different methods with one --seed should not draw the same
    # learning rates in the same order.
    method_salt = zlib.crc32(st.method.encode())
    seed = (st.seed * 1_000_003 + n_existing * 7919 + worker * 104_729 + method_salt) % (2**31)
    if space.is_grid:
        # The grid sampler shuffles its grid with the seed and indexes it by trial number: one seed
        # for every claim and worker, or two claims could pick the same point.
        return _AskTellGrid(space.grid(), seed=st.seed)
    startup = min(10, max(3, st.trials // 3))
    return optuna.samplers.TPESampler(seed=seed, n_startup_trials=startup, multivariate=True)


def claim(ctx: Context, study, worker: int, limit: int):
    """Recover stale trials and start one new trial if the study still needs one (else None)."""
    with claim_lock(ctx):
        recover_stale(study)
        if counted(study) >= limit:
            return None
        study.sampler = _sampler(ctx, len(study.get_trials(deepcopy=False)), worker)
        trial = study.ask()
        trial.set_user_attr("worker", _worker_tag())
        # Suggest every parameter now: a trial killed later is re-enqueued with exactly these.
        params = {name: p.suggest(trial) for name, p in ctx.space.params.items()}
    return trial, params


def trial_limit(ctx: Context) -> int:
    space = ctx.space
    return min(ctx.settings.trials, space.grid_size()) if space.is_grid else ctx.settings.trials


# ---------------------------------------------------------------------------------------------
# One trial


def recipe_values(ctx: Context, params: dict[str, Any], seed: int | None = None) -> dict[str, Any]:
    """A trial's settings: the model's recorded scale defaults, the space's fixed keys, the params.

    A model made by ``finetune --model tiny`` records its scale's defaults, which ``unlearn`` applies
    under a recipe; trials apply them the same way, so ``unlearn --config best.yaml`` runs exactly the
    chosen trial (and best.yaml spells them out, so it does on any model).
    """
    from unlearnkit.config import ALIASES
    from unlearnkit.models import recorded_defaults

    values = {**ctx.space.fixed, **params}
    recorded = recorded_defaults(ctx.settings.model)
    defaults = {**recorded.get("train", {}), **recorded.get("method", {}).get(ctx.settings.method, {})}
    given = {ALIASES.get(k, k) for k in values}
    used = {k: v for k, v in defaults.items() if k not in given and k != "seed"}
    return {**used, **values, "seed": ctx.settings.seed if seed is None else seed}


class _UtilityProbe:
    """Mean answer probability on a few retain and general rows (a cheap, monotone utility proxy)."""

    def __init__(self, bench, seed: int) -> None:
        from unlearnkit.evaluation.evaluate import subsample

        rows = subsample(bench.retain, PROBE_ROWS, seed) + subsample(bench.general, PROBE_ROWS, seed)
        self.questions = [r["question"] for r in rows]
        self.answers = [r["answer"] for r in rows]

    def __call__(self, model, tokenizer) -> float:
        from unlearnkit.data.encode import PromptFormat
        from unlearnkit.metrics.passes import score_answers

        fmt = PromptFormat.for_tokenizer(tokenizer, "auto")
        nll = score_answers(model, tokenizer, fmt, self.questions, self.answers, batch_size=16).nll_mean
        return float(sum(math.exp(-x) for x in nll) / len(nll))


def _pruning_callback(probe: _UtilityProbe, tokenizer, floor_value: float):
    import optuna
    from transformers import TrainerCallback

    class UtilityFloor(TrainerCallback):
        """After the first epoch: prune when the probe fell below the floor (the trial cannot recover)."""

        checked = False

        def on_epoch_end(self, args, state, control, model=None, **kwargs):
            if self.checked or not state.epoch or state.epoch < 1 - 1e-6:
                return
            self.checked = True
            was_training = model.training
            model.eval()
            value = probe(model, tokenizer)
            model.train(was_training)
            if value < floor_value:
                raise optuna.TrialPruned(
                    f"utility probe {value:.4g} < floor {floor_value:.4g} after epoch {state.epoch:.0f}"
                )

    return UtilityFloor()


@contextlib.contextmanager
def _extra_callback(callback) -> Iterator[None]:
    """Add ``callback`` to every Trainer built inside the block.

    ``unlearn()`` builds its Trainer with a fixed callback list; the HF Trainer prepends the
    module-level ``DEFAULT_CALLBACKS`` to it, so the sweep adds its pruning callback there for the
    duration of one trial (a worker runs one trial at a time).
    """
    import transformers.trainer as hf_trainer

    before = hf_trainer.DEFAULT_CALLBACKS
    hf_trainer.DEFAULT_CALLBACKS = [*before, callback]
    try:
        yield
    finally:
        hf_trainer.DEFAULT_CALLBACKS = before


def run_settings(
    ctx: Context,
    values: dict[str, Any],
    work_dir: Path,
    halves: Sequence[str] = ("selection",),
    prune_below: float | None = None,
    probe: _UtilityProbe | None = None,
) -> dict[str, dict[str, float]]:
    """Unlearn the whole forget set with ``values``, evaluate on the named halves; metrics per half."""
    from unlearnkit.evaluation.evaluate import evaluate
    from unlearnkit.models import load
    from unlearnkit.pipelines.unlearn import unlearn

    st = ctx.settings
    model, tok = load(st.model, st.trust_remote_code)
    callback = (
        _pruning_callback(probe, tok, prune_below) if prune_below is not None and probe is not None else None
    )
    shutil.rmtree(work_dir, ignore_errors=True)
    try:
        with _extra_callback(callback) if callback else contextlib.nullcontext():
            res = unlearn(
                model,
                tok,
                ctx.bench.forget,
                ctx.bench.retain,
                st.method,
                model_path=st.model,
                work_dir=work_dir / "train",
                quiet=True,
                attribution_dir=work_dir / "attribution",
                **values,
            )
        out = {}
        for half in halves:
            oracle_trs = ctx.reference.get(f"oracle_{half}_trs")
            metrics, _ = evaluate(res.model, tok, ctx.half(half), ctx.eval_settings(), oracle_trs)
            out[half] = metrics
        return out
    finally:
        shutil.rmtree(work_dir, ignore_errors=True)


def objective_values(ctx: Context, metrics: dict[str, float]) -> list[float]:
    values = []
    for name in ctx.settings.resolved_objectives():
        v = float(metrics.get(name, float("nan")))
        if name == "forget_quality" and not math.isnan(v):
            v = math.log10(max(v, FQ_FLOOR))
        values.append(v)
    return values


HEADLINE = (
    "forget_quality",
    "model_utility",
    "forget_rougeL_recall",
    "forget_prob",
    "forget_truth_ratio",
    "forget_exact_memorisation",
    "forget_extraction_strength",
    # the components of model utility: a refusal names the one that is degenerate
    *(f"{part}_{m}" for part in ("retain", "general") for m in ("prob", "rougeL_recall", "truth_ratio")),
    *(
        f"{part}_{m}"
        for part in ("real_authors", "world_facts")
        for m in ("prob", "rougeL_recall", "truth_ratio")
    ),
)


def headline(metrics: dict[str, float]) -> dict[str, float]:
    return {k: metrics[k] for k in HEADLINE if k in metrics}


def run_worker(ctx: Context, worker: int = 0, log: Callable[[str], None] = print) -> int:
    """Claim and run trials until the study has ``--trials`` of them (or the budget is spent)."""
    import optuna
    from optuna.trial import TrialState

    from unlearnkit.train.trainer import DivergenceError

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    warnings.filterwarnings("ignore", category=optuna.exceptions.ExperimentalWarning)
    study = open_study(ctx)
    limit = trial_limit(ctx)
    deadline = time.time() + 60 * ctx.settings.budget_minutes if ctx.settings.budget_minutes else None
    probe = _UtilityProbe(ctx.selection_bench, ctx.settings.seed)  # pruning is a choice: selection rows
    floor_value = ctx.settings.prune_floor * ctx.reference["target_probe"]
    ran = 0
    while deadline is None or time.time() < deadline:
        claimed = claim(ctx, study, worker, limit)
        if claimed is None:
            break
        trial, params = claimed
        t0 = time.time()
        work = ctx.out / ".work" / f"trial-{trial.number}"
        try:
            with heartbeat(study, trial._trial_id):
                metrics = run_settings(
                    ctx,
                    recipe_values(ctx, params),
                    work,
                    prune_below=floor_value if ctx.settings.prune_floor > 0 else None,
                    probe=probe,
                )["selection"]
        except optuna.TrialPruned as why:
            trial.set_user_attr("pruned", str(why))
            trial.set_user_attr("seconds", round(time.time() - t0, 1))
            study.tell(trial, state=TrialState.PRUNED)
            log(f"  trial {trial.number}: pruned ({why})")
            ran += 1
            continue
        except DivergenceError as err:
            trial.set_user_attr("pruned", f"diverged: {err}")
            trial.set_user_attr("seconds", round(time.time() - t0, 1))
            study.tell(trial, state=TrialState.PRUNED)
            log(f"  trial {trial.number}: pruned (diverged)")
            ran += 1
            continue
        except KeyboardInterrupt:
            # Interrupted, not wrong: like a killed worker, its parameters run again on the next start.
            with contextlib.suppress(Exception), claim_lock(ctx):
                study.tell(trial, state=TrialState.FAIL)
                study.enqueue_trial(params, user_attrs={"retry_of": trial.number}, skip_if_exists=False)
            raise
        except BaseException as err:
            # A genuine error: recorded, not retried (it would fail again); the user sees it.
            with contextlib.suppress(Exception):
                trial.set_user_attr("error", f"{type(err).__name__}: {err}"[:500])
                study.tell(trial, state=TrialState.FAIL)
            raise
        trial.set_user_attr("selection_metrics", headline(metrics))
        trial.set_user_attr("seconds", round(time.time() - t0, 1))
        values = objective_values(ctx, metrics)
        if any(math.isnan(v) for v in values):
            trial.set_user_attr("pruned", "an objective is NaN")
            study.tell(trial, state=TrialState.PRUNED)
        else:
            study.tell(trial, values)
        ran += 1
        log(
            f"  trial {trial.number} ({time.time() - t0:.0f}s): "
            + ", ".join(
                f"{k} {v:.4g}"
                for k, v in headline(metrics).items()
                if k in ctx.settings.resolved_objectives()
            )
            + " [selection half]"
        )
    return ran


# ---------------------------------------------------------------------------------------------
# Reference numbers (target and oracle on each half), computed once per sweep folder


def _reference_key(ctx: Context) -> str:
    """The reference numbers' inputs by CONTENT (weights, rows), not only by path: a target retrained in
    place or an edited data file must not bring back the old numbers (tests/test_no_stale_results.py)."""
    from unlearnkit.fingerprint import data_digest, model_digest

    st = ctx.settings
    content = {
        "model": model_digest(st.model),
        "oracle": model_digest(st.retain_model),
        "data": data_digest(ctx.bench),
    }
    blob = json.dumps(
        {"fp": st.fingerprint(ctx.space), "split": ctx.split_digest(), **content}, sort_keys=True
    )
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def ensure_reference(ctx: Context, log: Callable[[str], None] = print) -> dict[str, Any]:
    """Target and oracle metrics on both halves, the oracle's truth ratios, the target's probe value
    and the noise bands of the target's selection-half scores (:mod:`unlearnkit.selection_noise`)."""
    from unlearnkit.io import read_json, write_json

    path = ctx.out / "reference.json"
    key = _reference_key(ctx)
    # Under the lock: a second process started on the same folder waits and reads the file.
    with study_lock(ctx.out):
        if path.is_file():
            ref = read_json(path, "sweep reference")
            if ref.get("key") == key:
                ctx.reference = ref
                return ref
        ref = _compute_reference(ctx, key, log)
        write_json(path, ref)
    ctx.reference = ref
    return ref


def _compute_reference(ctx: Context, key: str, log: Callable[[str], None]) -> dict[str, Any]:
    from unlearnkit.evaluation.evaluate import evaluate
    from unlearnkit.models import load

    st = ctx.settings
    ref: dict[str, Any] = {"key": key}
    log("evaluating the target (and the oracle) on the selection and test halves ...")
    if st.retain_model:
        oracle, otok = load(st.retain_model, st.trust_remote_code)
        for half in ("selection", "test"):
            metrics, details = evaluate(oracle, otok, ctx.half(half), ctx.eval_settings())
            trs = details["forget"].get("truth_ratios")
            if trs:
                metrics["forget_quality"] = 1.0  # KS test of the oracle against itself
                ref[f"oracle_{half}_trs"] = trs
            ref[f"oracle_{half}"] = headline(metrics)
        del oracle
    target, tok = load(st.model, st.trust_remote_code)
    for half in ("selection", "test"):
        oracle_trs = ref.get(f"oracle_{half}_trs")
        metrics, details = evaluate(target, tok, ctx.half(half), ctx.eval_settings(), oracle_trs)
        ref[f"target_{half}"] = headline(metrics)
        if half == "selection":
            ref["noise"] = noise_bands(metrics, details, len(oracle_trs) if oracle_trs else None)
    ref["target_probe"] = _UtilityProbe(ctx.selection_bench, st.seed)(target, tok)
    return ref


# ---------------------------------------------------------------------------------------------
# Choosing, reporting


def trial_rows(study) -> list[dict[str, Any]]:
    rows = []
    for t in study.get_trials(deepcopy=False):
        rows.append(
            {
                "number": t.number,
                "state": t.state.name,
                "params": t.params,
                "values": t.values,
                "selection_metrics": t.user_attrs.get("selection_metrics"),
                "retry_of": t.user_attrs.get("retry_of"),
                "pruned": t.user_attrs.get("pruned"),
                "error": t.user_attrs.get("error"),
                "seconds": t.user_attrs.get("seconds"),
            }
        )
    return rows


def pareto_numbers(rows: Sequence[dict], objectives: Sequence[str]) -> set[int]:
    """Trial numbers on the Pareto front of the complete trials (objective values as searched)."""
    signs = [1.0 if OBJECTIVES[o] == "maximize" else -1.0 for o in objectives]
    done = [r for r in rows if r["state"] == "COMPLETE" and r["values"]]
    front = set()
    for r in done:
        v = [s * x for s, x in zip(signs, r["values"])]
        dominated = False
        for other in done:
            w = [s * x for s, x in zip(signs, other["values"])]
            if all(b >= a for a, b in zip(v, w)) and any(b > a for a, b in zip(v, w)):
                dominated = True
                break
        if not dominated:
            front.add(r["number"])
    return front


UTILITY_PARTS = ("retain", "general", "real_authors", "world_facts")
_LABEL = {
    "forget_quality": "forget quality",
    "model_utility": "model utility",
    "forget_rougeL_recall": "forget ROUGE-L",
    "forget_prob": "forget probability",
    "forget_truth_ratio": "forget truth ratio",
}


def _spread(noise: dict, metric: str, base: float | None, values: Sequence[float]) -> str:
    band = noise.get("bands", {}).get(metric)
    lo, hi = min(values), max(values)
    where = f"{lo:.4g}" if lo == hi else f"{lo:.4g} to {hi:.4g}"
    scale = " (as KS distance)" if metric == "forget_quality" else ""
    text = f"{_LABEL.get(metric, metric)} {where}"
    if base is not None:
        text += f" vs the target's {base:.4g}"
    return text + (f", noise band ±{band:.3g}{scale}" if band is not None else "")


def zero_utility_components(rows: Sequence[dict]) -> list[str]:
    """The utility components that are 0 when model utility is 0 in every row (one zero makes the
    harmonic mean 0), those 0 in the most rows first; [] when some row has utility above 0."""
    if not rows or not all(float(r.get("model_utility", 1.0)) <= 0 for r in rows):
        return []
    keys = [f"{p}_{m}" for p in UTILITY_PARTS for m in ("prob", "rougeL_recall", "truth_ratio")]
    count = {k: sum(1 for r in rows if k in r and r[k] <= 0) for k in keys}
    return sorted((k for k in keys if count[k]), key=lambda k: -count[k])


def _zero_list(rows: Sequence[dict], zeros: Sequence[str]) -> str:
    if all(all(k in r and r[k] <= 0 for r in rows) for k in zeros):
        return f"{', '.join(zeros)} {'is' if len(zeros) == 1 else 'are'} 0"
    n = len(rows)
    return ", ".join(f"{k} is 0 in {sum(1 for r in rows if k in r and r[k] <= 0)} of {n}" for k in zeros)


def _zero_cause(component: str) -> str:
    if component.endswith("truth_ratio"):
        return (
            f"{component} = 0 means the model prefers the perturbed (wrong) answers to the right one on "
            "every item; typical when paraphrased_answer is worded unlike anything the model was trained on "
            "while the perturbed answers share the trained wording: write the paraphrases (and perturbed "
            "answers) in one wording, the one the model was trained on"
        )
    return f"{component} = 0: the model never produces (or never assigns probability to) those answers"


def _widen_advice(ctx: Context) -> str:
    space = ctx.space
    lr = space.params.get("lr")
    where = f"the space {space.source}"
    if lr is not None and lr.choices is None:
        text = (
            f"widen lr: {where} searches lr {lr.low:g} to {lr.high:g}; raise its upper end "
            f"(e.g. to {lr.high * 10:g}) in a --space file"
        )
    elif lr is not None:
        text = f"widen lr: {where} tries lr {lr.choices}; add larger values in a --space file"
    elif "lr" in space.fixed:
        text = f"lr is fixed at {space.fixed['lr']} in {space.source}: search it (params: lr: {{low, high, log: true}})"
    else:
        text = f"search lr in a --space file ({where} leaves it at the model's default)"
    if "epochs" in space.params or "epochs" not in space.fixed:
        text += ", or more epochs"
    return text + f" (format: {SPACES_DIR / 'README.md'})"


def _more_items_advice(ctx: Context) -> str:
    n, cap = len(ctx.selection), ctx.settings.max_items
    if n < cap:
        return (
            f"more forget rows (the selection half has only {n}; the noise band narrows as "
            f"1/sqrt(rows), and --max-items {cap} cannot add rows that are not there)"
        )
    return f"more evaluation items (--max-items, now {cap}, of the selection half's {n} forget rows)"


def refusal(rows: Sequence[dict], ctx: Context) -> str | None:
    """Why no trial may be chosen (or None): the rule of :mod:`unlearnkit.selection_noise`.

    * every complete trial left the model where it was (forget metrics within noise of the
      target's): the space does not reach this model's scale; the message names the setting to widen;
    * every complete trial scores equal within noise on every objective: a choice would pick noise;
      the message says what to change (more items, a wider space, a degenerate utility component);
    * model utility is an objective and 0 in every trial (one of its components is 0 everywhere):
      the utility floor then protects nothing, and "the most forgotten" would be chosen blind (issue
      22: the tuned model ended worse than the target); the message names the component and its
      likely cause.
    """
    done = [r for r in rows if r["state"] == "COMPLETE" and r.get("selection_metrics")]
    ref = ctx.reference
    noise = ref.get("noise") or {}
    target = ref.get("target_selection") or {}
    if not done:
        return None
    metrics = [r["selection_metrics"] for r in done]
    objectives = ctx.settings.resolved_objectives()
    zeros = zero_utility_components(metrics) if "model_utility" in objectives else []
    cause = next((k for k in zeros if k.endswith("truth_ratio")), zeros[0] if zeros else "")
    zero_note = (
        f" Model utility is 0 in every trial because {_zero_list(metrics, zeros)} (one zero makes the "
        f"harmonic mean 0): {_zero_cause(cause)}."
        if zeros
        else ""
    )
    if target and all(unmoved(noise, target, m) for m in metrics):
        shown = [
            _spread(noise, k, target[k], [m[k] for m in metrics])
            for k in ("forget_rougeL_recall", "forget_prob", "forget_truth_ratio", "forget_quality")
            if k in target and all(k in m for m in metrics)
        ]
        return (
            f"all {len(done)} complete trials left the model where it was: their forget metrics are within "
            f"noise of the target's on the selection half ({'; '.join(shown)}). No trial is chosen. To change: "
            f"{_widen_advice(ctx)}.{zero_note}"
        )
    if len(done) >= 2 and all_equal(noise, metrics, objectives):
        shown = [_spread(noise, k, None, [m.get(k, float("nan")) for m in metrics]) for k in objectives]
        return (
            f"all {len(done)} complete trials score equal within noise on every objective on the selection "
            f"half ({'; '.join(shown)}): choosing among them would choose noise. No trial is chosen. To "
            f"change: {_more_items_advice(ctx)}, or {_widen_advice(ctx)}." + zero_note
        )
    if zeros:
        others = ",".join(o for o in objectives if o != "model_utility") or "forget_rougeL_recall"
        return (
            f"model utility is 0 in every one of the {len(done)} complete trials because "
            f"{_zero_list(metrics, zeros)} (one zero makes the harmonic mean 0), so no trial can be held to "
            f"a utility floor and the most forgotten would be chosen blind. No trial is chosen. To change: "
            f"{_zero_cause(cause)}; "
            f"or choose on forgetting alone, knowingly: --objective {others}."
        )
    return None


def choose(rows: Sequence[dict], ctx: Context) -> tuple[dict | None, str]:
    """The chosen trial among the Pareto front, and the rule that chose it (selection half only).

    Rule: keep utility >= ``utility_ratio`` x the oracle's (the target's without an oracle); among
    those, the most forgotten (highest forget quality / lowest forget ROUGE). If no trial keeps that
    much utility: the best sum of forgetting progress (0 = the target's value, 1 = the oracle's;
    forget quality on a log scale) and utility ratio.
    """
    objectives = ctx.settings.resolved_objectives()
    front = pareto_numbers(rows, objectives)
    cands = [r for r in rows if r["number"] in front]
    if not cands:
        return None, "no complete trial"
    ref = ctx.reference
    anchor = "oracle" if "oracle_selection" in ref else "target"
    base_util = ref[f"{anchor}_selection"].get("model_utility", float("nan"))
    floor = ctx.settings.utility_ratio * base_util
    forget_key = next((o for o in objectives if o != "model_utility"), objectives[0])
    maximize = OBJECTIVES[forget_key] == "maximize"

    def value(metrics: dict) -> float:
        v = float(metrics.get(forget_key, float("nan")))
        return math.log10(max(v, FQ_FLOOR)) if forget_key == "forget_quality" else v

    def progress(r) -> float:
        start = value(ref["target_selection"])
        goal = value(ref["oracle_selection"]) if "oracle_selection" in ref else (1.0 if maximize else 0.0)
        if goal == start:
            return 0.0
        return min(1.0, max(0.0, (value(r["selection_metrics"]) - start) / (goal - start)))

    def util(r) -> float:
        return float(r["selection_metrics"].get("model_utility", float("nan")))

    if "model_utility" not in objectives:
        best = max(cands, key=progress)
        return best, f"the best {forget_key} on the selection half"
    keep = [r for r in cands if util(r) >= floor]
    if keep:
        best = max(keep, key=lambda r: (value(r["selection_metrics"]) * (1 if maximize else -1), util(r)))
        return best, (
            f"Pareto trial with the best {forget_key} among those keeping model_utility >= "
            f"{ctx.settings.utility_ratio:g} x the {anchor}'s ({floor:.4f}) on the selection half"
        )
    best = max(cands, key=lambda r: progress(r) + util(r) / max(base_util, 1e-9))
    return best, (
        f"no Pareto trial keeps model_utility >= {ctx.settings.utility_ratio:g} x the {anchor}'s "
        f"({floor:.4f}) on the selection half; chosen: the best sum of forgetting progress (target 0, "
        f"{'oracle' if anchor == 'oracle' else 'ideal'} 1) and utility ratio"
    )


def best_recipe_text(ctx: Context, chosen: dict, rule: str, test: dict | None) -> str:
    import yaml

    st = ctx.settings
    values = recipe_values(ctx, chosen["params"])
    sel = chosen["selection_metrics"] or {}
    lines = [
        f"# Chosen by `unlearnkit sweep` (trial {chosen['number']}, study {study_location(st)}).",
        f"# Rule: {rule}.",
        "# Scores used for the choice are on the SELECTION halves (forget, retain, general; not results):",
        "#   "
        + ", ".join(
            f"{k} {v:.4g}"
            for k, v in sel.items()
            if k in ("forget_quality", "model_utility", "forget_rougeL_recall")
        ),
    ]
    if test:
        lines.append(
            "# Held-out TEST halves (the result): "
            + ", ".join(
                f"{k} {v:.4g}"
                for k, v in test.items()
                if k in ("forget_quality", "model_utility", "forget_rougeL_recall")
            )
        )
    lines += [
        f"# Use: unlearnkit unlearn --model {st.model} --data {st.data} --config {Path(st.output) / 'best.yaml'} --output OUT",
        "",
    ]
    body = yaml.safe_dump({"method": st.method, **values}, sort_keys=False, default_flow_style=False)
    return "\n".join(lines) + body


def plot_pareto(rows: Sequence[dict], ctx: Context, chosen: dict | None, path: Path) -> None:
    """Utility vs forget quality (or forget ROUGE): all trials, Pareto points, chosen, target, oracle."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    objectives = ctx.settings.resolved_objectives()
    forget_key = next((o for o in objectives if o != "model_utility"), objectives[0])
    front = pareto_numbers(rows, objectives)
    ref = ctx.reference
    log_x = forget_key == "forget_quality"

    def xy(m):
        x = m.get(forget_key, float("nan"))
        return (max(x, 1e-30) if log_x else x), m.get("model_utility", float("nan"))

    fig, ax = plt.subplots(figsize=(7.5, 5))
    done = [r for r in rows if r["state"] == "COMPLETE" and r["selection_metrics"]]
    other = [xy(r["selection_metrics"]) for r in done if r["number"] not in front]
    pareto = sorted(xy(r["selection_metrics"]) for r in done if r["number"] in front)
    if other:
        ax.scatter(*zip(*other), s=22, color="#9aa5b1", label="trial")
    if pareto:
        ax.plot(*zip(*pareto), color="#1f77b4", lw=1, alpha=0.6)
        ax.scatter(*zip(*pareto), s=40, color="#1f77b4", label="Pareto front", zorder=3)
    if chosen is not None and chosen.get("selection_metrics"):
        cx, cy = xy(chosen["selection_metrics"])
        ax.scatter([cx], [cy], s=260, facecolors="none", edgecolors="#d62728", lw=2, label="chosen", zorder=4)
    for name, marker, color in (("target", "s", "black"), ("oracle", "*", "#2ca02c")):
        m = ref.get(f"{name}_selection")
        if m:
            ax.scatter(*xy(m), marker=marker, s=110, color=color, label=name, zorder=4)
    if "oracle_selection" in ref:
        goal_util = ctx.settings.utility_ratio * ref["oracle_selection"].get("model_utility", float("nan"))
        ax.axhline(
            goal_util,
            color="#2ca02c",
            ls="--",
            lw=1,
            label=f"{ctx.settings.utility_ratio:g} x oracle utility",
        )
        if forget_key == "forget_quality":
            ax.axvline(
                GOAL_FORGET_QUALITY,
                color="#ff7f0e",
                ls="--",
                lw=1,
                label=f"forget quality {GOAL_FORGET_QUALITY}",
            )
    if log_x:
        ax.set_xscale("log")
    ax.set_xlabel(
        f"{forget_key} ({'higher' if OBJECTIVES[forget_key] == 'maximize' else 'lower'} = more forgotten)"
    )
    ax.set_ylabel("model_utility")
    ax.set_title(f"sweep {ctx.settings.method}: selection half ({len(done)} complete trials)")
    ax.legend(loc="center left", bbox_to_anchor=(1.02, 0.5), fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def render_report(
    ctx: Context, rows: Sequence[dict], chosen: dict | None, rule: str, summary: dict, png: bytes
) -> str:
    import base64
    import html

    st = ctx.settings
    e = html.escape
    objectives = st.resolved_objectives()
    cols = [
        "forget_quality",
        "model_utility",
        "forget_rougeL_recall",
        "forget_truth_ratio",
        "retain_rougeL_recall",
    ]

    def fmt(v):
        return "" if v is None else (f"{v:.3g}" if isinstance(v, float) else e(str(v)))

    test_rows = "".join(
        f"<tr><td>{e(name)}</td>" + "".join(f"<td>{fmt(m.get(c))}</td>" for c in cols) + "</tr>"
        for name, m in summary.get("test", {}).items()
    )
    retried = {r["retry_of"]: r["number"] for r in rows if r.get("retry_of") is not None}

    def note(r) -> str:
        parts = [r.get("pruned") or "", r.get("error") or ""]
        if r.get("retry_of") is not None:
            parts.append(f"re-run of trial {r['retry_of']}")
        if r["number"] in retried:
            parts.append(f"interrupted; re-run as trial {retried[r['number']]}")
        return "; ".join(p for p in parts if p)

    trial_html = "".join(
        f"<tr><td>{r['number']}</td><td>{e(r['state'])}</td><td><code>{e(json.dumps(r['params']))}</code></td>"
        + "".join(
            f"<td>{fmt((r['selection_metrics'] or {}).get(c))}</td>"
            for c in ("forget_quality", "model_utility", "forget_rougeL_recall")
        )
        + f"<td>{fmt(r['seconds'])}</td><td>{e(note(r))}</td></tr>"
        for r in rows
    )
    parts = "".join(
        f"<tr><td>{e(part)}</td><td>{e(info['by'])}</td><td>{len(info['selection_rows'])}</td>"
        f"<td>{len(info['test_rows'])}</td></tr>"
        for part, info in ctx.split_info.items()
    )
    choice = (
        f'<p class="note"><b>No trial chosen.</b> {e(summary["refused"])}</p>'
        if summary.get("refused")
        else f"<p>Chosen: trial {chosen['number'] if chosen else '-'}; {e(rule)}. Recipe: <code>best.yaml</code>.</p>"
    ) + "".join(f'<p class="note"><b>Warning.</b> {e(w)}</p>' for w in summary.get("warnings", []))
    return f"""<!doctype html><html><head><meta charset="utf-8"><title>unlearnkit sweep: {e(st.method)}</title>
<style>body{{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em}}
table{{border-collapse:collapse;font-size:13px}}td,th{{border:1px solid #ddd;padding:3px 7px;text-align:right}}
td:first-child,th:first-child{{text-align:left}}.scroll{{overflow-x:auto}}.note{{background:#f6f8fa;padding:.6em 1em}}</style></head><body>
<h1>Sweep: <code>{e(st.method)}</code></h1>
<p class="note"><b>Honest selection.</b> Every part a score reads (forget, retain, general; holdout too) was
split by whole entities, with seed {st.seed}, into a <b>selection half</b> and a <b>test half</b> (table below).
Every trial trained on the whole benchmark; trials were <i>scored and chosen</i> on the selection halves only.
The numbers in the first table are the chosen settings re-run and measured on the <b>test halves</b>, which no
choice has seen: forgetting and model utility alike. Trial scores below are selection scores, not results.</p>
<div class="scroll"><table><tr><th>part</th><th>entities by</th><th>selection rows</th><th>test rows</th></tr>{parts}</table></div>
<h2>Result on the test half</h2>
<div class="scroll"><table><tr><th>model</th>{"".join(f"<th>{c}</th>" for c in cols)}</tr>{test_rows}</table></div>
<p>Objectives: {e(", ".join(f"{o} ({OBJECTIVES[o]})" for o in objectives))}.</p>
{choice}
<h2>Trade-off (selection half)</h2>
<img alt="Pareto plot" style="max-width:100%" src="data:image/png;base64,{base64.b64encode(png).decode()}">
<h2>Trials</h2>
<div class="scroll"><table><tr><th>#</th><th>state</th><th>params</th><th>FQ (sel.)</th><th>utility (sel.)</th>
<th>forget ROUGE (sel.)</th><th>seconds</th><th>note</th></tr>{trial_html}</table></div>
<p>Study: <code>{e(study_location(st))}</code>; search space: <code>{e(ctx.space.source)}</code>
({e(ctx.space.scale)}; {"grid" if ctx.space.is_grid else "multi-objective TPE"}).</p></body></html>
"""


def finalize_blocker(ctx: Context, study) -> str | None:
    """Why this process must not write the outputs now (None: it may, and it is recorded as doing so).

    One study, one report: outputs are written when no trial is running on any worker, by one
    folder per study state (the first to get there); a worker that finishes while others still run
    trials leaves it to the last one.
    """
    from optuna.trial import TrialState

    with claim_lock(ctx):
        recover_stale(study)
        running = study.get_trials(deepcopy=False, states=(TrialState.RUNNING,))
        if running:
            hosts = sorted({str((t.user_attrs.get("worker") or {}).get("host", "?")) for t in running})
            return (
                f"{len(running)} trial(s) still running on other workers ({', '.join(hosts)}): the worker "
                "that finishes last writes best.yaml and the report (or rerun this command later)"
            )
        me = {"host": socket.gethostname(), "output": str(ctx.out.resolve())}
        n = len(study.get_trials(deepcopy=False))
        done = study.user_attrs.get("finalized") or {}
        if done.get("trials") == n and {k: done.get(k) for k in me} != me:
            return (
                f"the study's {n} trials were already reported in {done['host']}:{done['output']} "
                "(best.yaml, report.html and summary.json there)"
            )
        study.set_user_attr("finalized", {**me, "trials": n})
    return None


def split_summary(ctx: Context) -> dict[str, Any]:
    """The split, part by part (the forget part's fields also at the top, as before)."""
    forget = ctx.split_info["forget"]
    return {
        "by": forget["by"],
        "seed": ctx.settings.seed,
        "selection_rows": forget["selection_rows"],
        "test_rows": forget["test_rows"],
        "selection_entities": forget["selection_entities"],
        "test_entities": forget["test_entities"],
        "parts": {
            part: {
                "by": info["by"],
                "rows": info["rows"],
                "selection_rows": len(info["selection_rows"]),
                "test_rows": len(info["test_rows"]),
                "selection_entities": info["selection_entities"],
                "test_entities": info["test_entities"],
            }
            for part, info in ctx.split_info.items()
        },
    }


def finalize(ctx: Context, log: Callable[[str], None] = print) -> dict[str, Any]:
    """Choose (or refuse), re-run the chosen settings on the test half, write every output file."""
    from unlearnkit.io import write_json, write_text_atomic

    study = open_study(ctx)
    rows = trial_rows(study)
    refused = refusal(rows, ctx)
    chosen, rule = (None, f"refused: {refused}") if refused else choose(rows, ctx)
    notes: list[str] = []  # warnings beside a choice (a degenerate number is a refusal, not a note)
    summary: dict[str, Any] = {
        "method": ctx.settings.method,
        "objectives": list(ctx.settings.resolved_objectives()),
        "study": {"storage": study_location(ctx.settings), "name": study_name(ctx)},
        "space": {"source": ctx.space.source, "scale": ctx.space.scale},
        "split": split_summary(ctx),
        "trials": {s: sum(r["state"] == s for r in rows) for s in ("COMPLETE", "PRUNED", "FAIL", "RUNNING")},
        "chosen_trial": chosen["number"] if chosen else None,
        "rule": rule,
        "refused": refused,
        "warnings": notes,
        "noise": ctx.reference.get("noise"),
        "note": "test = measured on the held-out test halves (forget, retain, general); selection scores "
        "are not results",
        "test": {},
    }
    ref = ctx.reference
    for name in ("target", "oracle"):
        if f"{name}_test" in ref:
            summary["test"][name] = ref[f"{name}_test"]
    test_metrics = None
    if chosen is not None:
        cached = study.user_attrs.get("chosen_test")
        if cached and cached.get("trial") == chosen["number"]:
            test_metrics = cached["metrics"]
        else:
            log(f"re-running trial {chosen['number']} and measuring it on the test half ...")
            test_metrics = headline(
                run_settings(
                    ctx, recipe_values(ctx, chosen["params"]), ctx.out / ".work" / "final", ("test",)
                )["test"]
            )
            study.set_user_attr("chosen_test", {"trial": chosen["number"], "metrics": test_metrics})
        summary["test"][f"{ctx.settings.method} (tuned)"] = test_metrics
        summary["chosen_params"] = chosen["params"]
        summary["chosen_selection_metrics"] = chosen["selection_metrics"]
        write_text_atomic(ctx.out / "best.yaml", best_recipe_text(ctx, chosen, rule, test_metrics))
    elif (ctx.out / "best.yaml").is_file():
        (ctx.out / "best.yaml").unlink()  # an earlier state's choice would contradict this summary
    write_text_atomic(ctx.out / "trials.jsonl", "".join(json.dumps(r) + "\n" for r in rows))
    png_path = ctx.out / "pareto.png"
    tmp_png = ctx.out / f".pareto.{os.getpid()}.png"
    plot_pareto(rows, ctx, chosen, tmp_png)
    os.replace(tmp_png, png_path)
    write_text_atomic(
        ctx.out / "report.html", render_report(ctx, rows, chosen, rule, summary, png_path.read_bytes())
    )
    write_json(ctx.out / "summary.json", summary)
    shutil.rmtree(ctx.out / ".work", ignore_errors=True)
    return summary


# ---------------------------------------------------------------------------------------------
# The command


def check_output(ctx: Context) -> None:
    """A new folder, or one holding a study of the same sweep (resume); anything else is refused."""
    out = ctx.out
    if out.exists() and not out.is_dir():
        raise UserError(f"--output {out} is a file; pass a folder")
    fp_path = out / "sweep.json"
    fingerprint = json.loads(json.dumps(ctx.settings.fingerprint(ctx.space)))  # as stored (lists, not tuples)
    if out.is_dir() and any(out.iterdir()):
        if not fp_path.is_file():
            if (out / ".sweep.lock").exists():
                return  # another process is creating this sweep right now; start() re-checks under the lock
            raise UserError(f"--output {out} exists and holds no sweep (no sweep.json); pass a new folder")
        stored = json.loads(fp_path.read_text(encoding="utf-8"))
        if stored != fingerprint:
            diff = sorted(k for k in set(stored) | set(fingerprint) if stored.get(k) != fingerprint.get(k))
            raise UserError(
                f"--output {out} holds a sweep with different settings ({', '.join(diff)}); rerun with the "
                "same flags to resume it, or pass a new --output"
            )


def start(ctx: Context) -> bool:
    """Create the folder and its fingerprint; True when this folder resumes an earlier run."""
    from unlearnkit.io import write_json

    out = ctx.out
    resumed = (out / "sweep.json").is_file()
    out.mkdir(parents=True, exist_ok=True)
    with study_lock(out):
        if (out / "sweep.json").is_file():
            check_output(ctx)
        else:
            write_json(out / "sweep.json", ctx.settings.fingerprint(ctx.space))
    return resumed


# ---------------------------------------------------------------------------------------------
# Worker processes die with their parent


PR_SET_PDEATHSIG = 1  # linux/prctl.h


def die_with_parent(parent_pid: int) -> str:
    """Make this process end when ``parent_pid`` (the main sweep process) ends, however it ends.

    Linux: ``prctl(PR_SET_PDEATHSIG, SIGKILL)``: the kernel kills this process when its parent dies,
    even by ``kill -9`` (the parent has no chance to clean up). The parent may have died before the
    call: then ``getppid()`` is no longer ``parent_pid`` and this process exits at once. Elsewhere
    (macOS): a daemon thread polls the parent every second and exits the process when it is gone.
    Returns the mechanism used (``pdeathsig`` or ``watchdog``).
    """
    import signal
    import sys
    import threading

    mechanism = "watchdog"
    if sys.platform.startswith("linux"):
        import ctypes
        import ctypes.util

        try:
            libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
            if libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0) == 0:
                mechanism = "pdeathsig"
        except OSError:
            pass
    if os.getppid() != parent_pid:
        os._exit(1)  # the parent died before the death signal was armed
    if mechanism == "watchdog":

        def watch() -> None:
            while True:
                time.sleep(1.0)
                if os.getppid() != parent_pid:
                    os._exit(1)

        threading.Thread(target=watch, name="sweep-parent-watchdog", daemon=True).start()
    return mechanism


SETTINGS_ENV = "UNLEARNKIT_SWEEP_SETTINGS"  # workers' settings: the environment, not argv (a
# --storage URL may hold a password, and any user can read a process's argv; its environment only
# its owner)


def worker_command(st: SweepSettings, worker: int) -> list[str]:
    import sys

    return [sys.executable, "-m", "unlearnkit.sweep", "--worker", str(worker), "--parent", str(os.getpid())]


def run_sweep(st: SweepSettings, log: Callable[[str], None] = print) -> dict[str, Any]:
    """The whole sweep: validate, reference numbers, J workers, choice, test-half report, outputs.

    Returns the summary; when another worker of a shared study still runs trials, a summary with
    ``finalized: False`` and the reason in ``note`` (that worker writes the outputs).
    """
    import subprocess

    validate_settings(st)  # bad flags fail before torch is imported
    import torch
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # weight-loading bars of every trial are noise here
    ctx = load_context(st)
    check_output(ctx)
    if st.storage:
        with claim_lock(ctx):  # a wrong URL, a missing driver, a server down: fail before writing
            pass
    resumed = start(ctx)
    study = open_study(ctx)
    limit = trial_limit(ctx)
    so_far = counted(study)
    log(
        f"sweep {st.method}: study {study_location(st)}"
        + (f" ({study_name(ctx)})" if st.storage else "")
        + f" ({'resumed' if resumed else 'new folder'}, {so_far} trials so far), target {limit} trials, "
        f"{'grid' if ctx.space.is_grid else 'multi-objective TPE'} over {', '.join(ctx.space.params)} "
        f"from {ctx.space.source} ({ctx.space.scale}); "
        + "; ".join(
            f"{part} split by {info['by']}: {len(info['selection_rows'])} selection / "
            f"{len(info['test_rows'])} test rows"
            for part, info in ctx.split_info.items()
            if part != "holdout"
        )
    )
    ensure_reference(ctx, log)
    threads = max(1, (os.cpu_count() or 1) // st.jobs)
    torch.set_num_threads(max(1, min(torch.get_num_threads(), threads)))
    procs = []
    env = {
        **os.environ,
        "OMP_NUM_THREADS": str(threads),
        "TOKENIZERS_PARALLELISM": "false",
        SETTINGS_ENV: json.dumps(dataclasses.asdict(st)),
    }
    for worker in range(1, st.jobs):
        procs.append(subprocess.Popen(worker_command(st, worker), env=env))
    try:
        run_worker(ctx, 0, log)
    finally:
        codes = [p.wait() for p in procs]
    if any(codes):
        raise UserError(
            f"{sum(1 for c in codes if c)} of {st.jobs - 1} extra worker processes failed (see above)"
        )
    study = open_study(ctx)
    if counted(study) < limit:
        log(f"budget spent: {counted(study)} of {limit} trials; rerun the same command to continue")
    blocker = finalize_blocker(ctx, study)
    if blocker:
        log(blocker)
        return {"method": st.method, "finalized": False, "note": blocker, "test": {}}
    summary = finalize(ctx, log)
    summary["finalized"] = True
    return summary


def _worker_main(argv: list[str] | None = None) -> int:
    """Entry point of the extra ``--jobs`` worker processes (not a user command)."""
    import argparse

    p = argparse.ArgumentParser(prog="unlearnkit.sweep")
    p.add_argument("--worker", type=int, required=True)
    p.add_argument("--parent", type=int, required=True, help="pid of the main sweep process")
    args = p.parse_args(argv)
    die_with_parent(args.parent)  # first: a worker must never outlive a killed sweep

    import torch
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    st = SweepSettings(**json.loads(os.environ[SETTINGS_ENV]))
    st.objectives = tuple(st.objectives)
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
    ctx = load_context(st)
    ensure_reference(ctx, lambda _m: None)
    run_worker(ctx, args.worker, lambda m: print(f"[worker {args.worker}]{m}", flush=True))
    return 0


if __name__ == "__main__":
    raise SystemExit(_worker_main())
