"""The quickstart's methods and its robust row, two at a time in worker processes of one thread each.

A ~1M-parameter model keeps two CPU threads busy only 1.5x as well as one (measured on a 2-core
machine, a batch of 32 x 48 tokens: 199 ms a step on one thread, 134 ms on two, 185-210 ms each for two
one-thread processes at once), so two jobs of one thread each finish a list of methods in about 3/4 of
the time one process with both threads needs. The robust row (UNDO on the plain method's unlearned
model) is the longest job and can start only once its teacher is unlearned: the teacher goes first, and
the robust row takes the next free worker while the other one works through the remaining methods.

A worker gets the whole :class:`~unlearnkit.pipelines.quickstart.Embedded` (benchmark, paths, the
oracle's reference numbers, the settings) and returns numbers, details, log lines and the unlearned
weights; this process records them in the order the methods were named, so the table, ``metrics.json``
and the report are laid out as in a run of one process. Each job runs what that run runs
(``Embedded.run_method``, ``quickstart.run_robust_row``) on one thread: a run of one process on one thread
gives the same numbers (tested).
"""

from __future__ import annotations

import json
import multiprocessing
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

WORKERS = 2


@dataclass
class JobResult:
    """What a worker sends back: the row's numbers and details, its log lines, the unlearned weights."""

    row: str
    metrics: dict[str, Any]
    details: dict[str, Any]
    lines: list[str] = field(default_factory=list)
    state: dict[str, Any] | None = None
    unlearn: Any = None  # what the quickstart reads of the method's UnlearnResult: config, attribution


def _start_worker(threads: int) -> None:
    import torch
    from transformers.utils import logging as hf_logging

    torch.set_num_threads(threads)
    hf_logging.disable_progress_bar()


def _state_of(model) -> dict[str, Any]:
    return {k: v.detach().clone() for k, v in model.state_dict().items()}


def _model_from(emb, state: dict[str, Any]):
    model, _ = emb.load_target()
    model.load_state_dict(state)
    model.eval()
    return model


def method_job(emb, name: str, work_dir: Path) -> JobResult:
    """``emb.run_method(name)`` in a worker: the unlearned weights come back as a state dict."""
    metrics, res = emb.run_method(name, work_dir, keep_model=True)
    # as its unlearnkit.json records them: plain JSON (the result itself holds config objects of
    # classes made at run time, which do not pickle)
    kept = json.loads(json.dumps({"config": res.config, "attribution": res.attribution}, default=str))
    return JobResult(
        name, metrics, emb.details[name], state=_state_of(res.model), unlearn=SimpleNamespace(**kept)
    )


def robust_job(
    emb, teacher: str, teacher_metrics: dict, teacher_state: dict, work_root: Path, settings: dict
) -> JobResult:
    """The robust row of ``teacher`` (:func:`unlearnkit.pipelines.quickstart.run_robust_row`) in a worker,
    distilled with ``settings`` (the parent's ``ROBUST_DISTILL``)."""
    from unlearnkit.pipelines.quickstart import run_robust_row

    emb.results[teacher] = teacher_metrics  # its unlearning time counts in the row's compute
    lines: list[str] = []
    teacher_model = _model_from(emb, teacher_state)
    row, student = run_robust_row(emb, teacher, teacher_model, work_root, lines.append, settings)
    return JobResult(row, emb.results[row], emb.details[row], lines=lines, state=_state_of(student))


def run_side_by_side(
    emb,
    methods: list[str],
    work_root: Path,
    robust_teacher: str | None,
    log: Callable[[str], None],
    on_method: Callable[[str, JobResult, Any], None],
    threads: int = 1,
) -> tuple[str, Any] | None:
    """Every method of ``methods`` and, when ``robust_teacher`` is one of them, its robust row, on
    :data:`WORKERS` workers. ``on_method(name, result, model)`` is called in the order of ``methods``
    (after ``emb`` holds the row); returns ``(robust row, its model)`` or None."""
    from unlearnkit.pipelines import quickstart

    order = sorted(
        methods, key=lambda m: m != robust_teacher
    )  # the teacher first: the robust row waits on it
    pending: list[tuple[str, Callable, tuple]] = [
        (name, method_job, (emb, name, work_root / name)) for name in order
    ]
    done: dict[str, JobResult] = {}
    robust: JobResult | None = None
    reported = 0
    context = multiprocessing.get_context("spawn")  # a fresh interpreter: no forked torch thread pools
    with ProcessPoolExecutor(
        WORKERS, mp_context=context, initializer=_start_worker, initargs=(threads,)
    ) as pool:
        running: dict[Future, str] = {}
        while pending or running:
            while pending and len(running) < WORKERS:
                key, job, args = pending.pop(0)
                running[pool.submit(job, *args)] = key
            finished, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in finished:
                key = running.pop(future)
                result = future.result()
                if key == "robust":
                    robust = result
                    continue
                done[key] = result
                if key == robust_teacher:  # the longest job: before every method still waiting
                    args = (emb, key, result.metrics, result.state, work_root, quickstart.ROBUST_DISTILL)
                    pending.insert(0, ("robust", robust_job, args))
            while reported < len(methods) and methods[reported] in done:  # the order they were named in
                name = methods[reported]
                result = done[name]
                emb.results[name], emb.details[name] = result.metrics, result.details
                on_method(name, result, _model_from(emb, result.state))
                result.state = None
                reported += 1
    if robust is None:
        return None
    for line in robust.lines:
        log(line)
    emb.results[robust.row], emb.details[robust.row] = robust.metrics, robust.details
    return robust.row, _model_from(emb, robust.state)
