"""The reference numbers of a sweep folder: target and oracle on each half, the oracle's truth ratios,
the target's probe value and the noise bands, computed once and keyed by the content of their inputs."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Any

from unlearnkit.evaluation.selection_noise import noise_bands
from unlearnkit.pipelines.sweep.settings import Context
from unlearnkit.pipelines.sweep.study import study_lock
from unlearnkit.pipelines.sweep.worker import UtilityProxy, headline


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
    and the noise bands of the target's selection-half scores (:mod:`unlearnkit.evaluation.selection_noise`)."""
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
    from unlearnkit.models import load, resolve_placement

    st = ctx.settings

    def load_here(path):  # evaluation: where --device says, in the dtype --dtype gives the checkpoint
        return load(path, st.trust_remote_code, **resolve_placement(path, st.device, st.dtype).load_kwargs())

    ref: dict[str, Any] = {"key": key}
    log("evaluating the target (and the oracle) on the selection and test halves ...")
    if st.retain_model:
        oracle, otok = load_here(st.retain_model)
        for half in ("selection", "test"):
            metrics, details = evaluate(oracle, otok, ctx.half(half), ctx.eval_settings())
            trs = details["forget"].get("truth_ratios")
            if trs:
                metrics["forget_quality"] = 1.0  # KS test of the oracle against itself
                ref[f"oracle_{half}_trs"] = trs
            ref[f"oracle_{half}"] = headline(metrics)
        del oracle
    target, tok = load_here(st.model)
    for half in ("selection", "test"):
        oracle_trs = ref.get(f"oracle_{half}_trs")
        metrics, details = evaluate(target, tok, ctx.half(half), ctx.eval_settings(), oracle_trs)
        ref[f"target_{half}"] = headline(metrics)
        if half == "selection":
            ref["noise"] = noise_bands(metrics, details, len(oracle_trs) if oracle_trs else None)
    ref["target_probe"] = UtilityProxy(ctx.selection_bench, st.seed)(target, tok)
    return ref
