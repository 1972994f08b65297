"""The study every worker shares: its name, the locks (claims of trials, the folder's files), opening
it, the heartbeats of running trials, recovery of trials whose worker was killed, the samplers, and the
claim of one new trial."""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import socket
import time
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from unlearnkit.errors import UserError
from unlearnkit.pipelines.sweep.settings import OBJECTIVES, Context
from unlearnkit.pipelines.sweep.storage import redacted, storage_kind, storage_url

STUDY_NAME = "unlearnkit-sweep"
HEARTBEAT_SECONDS = 30.0  # a running trial's worker stamps the trial this often
# A RUNNING trial of another machine whose last stamp is older than this lost its worker (killed job,
# dead node): it is run again. Clocks of the machines must agree to well within this (NTP does).
STALE_AFTER_SECONDS = 600.0


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


def is_stale(trial, now: float | None = None) -> bool:
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
        if not is_stale(t):
            continue
        study.tell(t.number, state=TrialState.FAIL)
        study.set_user_attr(f"killed_trial_{t.number}", True)
        # Only a trial that drew its whole set (``params_drawn``, set by :func:`claim`) is run again with
        # exactly those; one killed half-way through drawing is a plain failure, and a fresh trial draws.
        if t.params and t.user_attrs.get("params_drawn"):
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
        trial.set_user_attr("params_drawn", True)
    return trial, params


def trial_limit(ctx: Context) -> int:
    space = ctx.space
    return min(ctx.settings.trials, space.grid_size()) if space.is_grid else ctx.settings.trials
