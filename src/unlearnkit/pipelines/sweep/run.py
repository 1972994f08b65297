"""The sweep command: the output folder checked and created, the extra ``--jobs`` worker processes
(started with ``python -m unlearnkit.pipelines.sweep``, dying with their parent), and :func:`run_sweep`."""

from __future__ import annotations

import dataclasses
import json
import os
import time
from collections.abc import Callable
from typing import Any

from unlearnkit.errors import UserError
from unlearnkit.pipelines.sweep.outputs import finalize, finalize_blocker
from unlearnkit.pipelines.sweep.reference import ensure_reference
from unlearnkit.pipelines.sweep.settings import Context, SweepSettings, load_context, validate_settings
from unlearnkit.pipelines.sweep.storage import study_location
from unlearnkit.pipelines.sweep.study import (
    claim_lock,
    counted,
    open_study,
    study_lock,
    study_name,
    trial_limit,
)
from unlearnkit.pipelines.sweep.worker import run_worker


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

    return [
        sys.executable,
        "-m",
        "unlearnkit.pipelines.sweep",
        "--worker",
        str(worker),
        "--parent",
        str(os.getpid()),
    ]


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


def worker_main(argv: list[str] | None = None) -> int:
    """Entry point of the extra ``--jobs`` worker processes (not a user command; ``__main__.py``)."""
    import argparse

    p = argparse.ArgumentParser(prog="unlearnkit.pipelines.sweep")
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
