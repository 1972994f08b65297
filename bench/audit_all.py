"""The audit of every method on the embedded world: does the forgetting survive membership inference,
relearning, 4/8-bit quantisation, paraphrased questions, and the facts asked another way (alias, multi-hop)?

    python bench/audit_all.py [--methods ga,gd,npo,...]
    python bench/audit_all.py --calibrate [--lrs 1e-3,3e-4,1e-4,5e-5,2e-5] [--splits 0,1,2,3,4]
    python bench/audit_all.py --calibrate --benchmark wmdp --lrs 1e-3,1e-4,2e-5 --splits 0,1,2

Writes bench/results/audit.md and audit.json; ``--calibrate`` writes bench/results/relearn_calibration.md
and .json instead (``--benchmark wmdp``: relearn_calibration_wmdp.md / .json, in hazardous accuracy;
``--relearn-data passages``: relearn_calibration_wmdp_passages.md; ``--control retain,world_facts``:
relearn_calibration_control.md, the target also fine-tuned as long on known facts instead):
the relearning attack's two calibration numbers
(:func:`unlearnkit.evaluation.audit.relearning.relearn_calibration`: the oracle's fact recall on the half
it is trained on, the target's on the held half) for every learning rate and step count of a grid, on
several attack splits of the lab, and whether the audit settings the quickstart and this script use
(``quickstart_audit_settings``) pass both.
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import (  # noqa: E402
    add_seeds,
    embedded_settings,
    mean_sd,
    measure_seeds,
    parse_seeds,
    parser,
    setup,
    write_result,
)

from unlearnkit.evaluation.audit import AuditSettings, run_audit  # noqa: E402
from unlearnkit.evaluation.audit.relearning import (  # noqa: E402
    KEEP_BAR,
    TEACH_BAR,
    relearn_calibration,
)
from unlearnkit.evaluation.audit.settings import RELEARN_DATA, RELEARN_SPLITS  # noqa: E402
from unlearnkit.models import load  # noqa: E402
from unlearnkit.pipelines.quickstart import quickstart_audit_settings  # noqa: E402

DEFAULT = "gd,npo,simnpo,idk,asu,asu_kl,t-npo,s-npo,rmu"


def _rows(audit: dict) -> dict[str, dict]:
    """Flatten each check's rows to {label: {audited, oracle, original}} (the reached-another-way check
    has its own table, one row per model)."""
    out = {}
    for check in audit["checks"]:
        if check.get("id") == "reached":
            continue
        for row in check.get("rows", []):
            out[f"{check.get('name', check.get('title', ''))}: {row['label']}"] = row
    return out


# --calibrate's grid by default; a result measured on another names it in its command
GRID = {"lrs": "1e-3,3e-4,1e-4,5e-5,2e-5", "steps": "20,50,100,150,200,250,300", "splits": "0,1,2,3,4"}


#: --control: what an equal fine-tune of the target trains on instead of the forget half, and how the
#: calibration section names it. Each is as many rows as the attack's trained half, whole entities, facts
#: the target already knows: what the attack costs its held half is read beside what any fine-tune that
#: long costs it (bench/NOTES.md, "The relearning attack, calibrated").
CONTROLS = {
    "retain": "retain facts (fictitious authors the target was fine-tuned on: the forget facts' relations)",
    "real_authors": "real-author facts of the general set (the same relations, known from pretraining)",
    "world_facts": "world facts of the general set (other relations, known from pretraining)",
}


def control_names(text: str) -> list[str]:
    """``--control``'s comma-separated names, each one of :data:`CONTROLS` (argparse's type: a wrong name
    is a usage error, exit 2, before any model is loaded)."""
    names = [c for c in text.split(",") if c]
    wrong = [c for c in names if c not in CONTROLS]
    if wrong or not names:
        raise argparse.ArgumentTypeError(
            f"{','.join(wrong) or repr(text)}: use some of {', '.join(CONTROLS)}"
        )
    return names


def control_pool(bench, name: str) -> list[dict]:
    """The rows the ``name`` control draws from (:data:`CONTROLS`): the retain split, or a part of the
    general set by its rows' ``source``."""
    rows = bench.retain if name == "retain" else bench.general_parts.get(name, [])
    if not rows:
        raise SystemExit(f"--control {name}: {bench.path} has no such rows")
    return list(rows)


def control_rows(pool: list[dict], n: int, seed: int) -> list[dict]:
    """``n`` rows of ``pool`` for a control fine-tune: whole entities in a seeded order, the last one cut
    to fit (the audit's ``relearn_control`` rows, under this bench's own shuffle key, which
    relearn_calibration_control.md was measured with)."""
    from unlearnkit.evaluation.audit.relearning import control_rows as audit_control_rows

    return audit_control_rows(pool, n, seed, order_key=f"bench-audit-control:{seed}")


def fit_suffix(fit: float) -> str:
    """The calibration result's name suffix for an attack capped at ``fit`` that is not the default's."""
    return "_plain" if fit >= 1 else f"_fit{fit:g}"


def calibration_command(options: list[tuple[str, str, str]]) -> str:
    """The command that re-measures a calibration: each option given as (name, value used, default)
    appears only where the value is not the default, so the command names the grid it measured."""
    return "python bench/audit_all.py --calibrate" + "".join(f" --{o} {v}" for o, v, d in options if v != d)


def main() -> None:
    p = parser(__doc__)
    add_seeds(p)
    p.add_argument("--methods", default=DEFAULT)
    p.add_argument(
        "--calibrate",
        action="store_true",
        help="measure the relearning attack's calibration over --lrs x --steps x --splits instead",
    )
    p.add_argument("--lrs", default=GRID["lrs"], help="--calibrate: learning rates")
    p.add_argument("--steps", default=GRID["steps"], help="--calibrate: step counts")
    p.add_argument("--splits", default=GRID["splits"], help="--calibrate: seeds of the attack's split")
    p.add_argument(
        "--benchmark",
        default="tofu",
        choices=("tofu", "wmdp"),
        help="--calibrate: the miniature (wmdp: hazardous accuracy on the relearned / held-out agents)",
    )
    p.add_argument(
        "--relearn-retain",
        type=float,
        default=None,
        metavar="R",
        help="retain rows the attack mixes in per forget row (AuditSettings.relearn_retain; default: the "
        "quickstart's); --calibrate with R > 0 writes relearn_calibration_retain.md",
    )
    p.add_argument(
        "--relearn-split",
        default=None,
        choices=RELEARN_SPLITS,
        help="how the attack halves the forget rows (AuditSettings.relearn_split; default: the "
        "quickstart's); --calibrate with another than the default writes relearn_calibration_<SPLIT>.md",
    )
    p.add_argument(
        "--relearn-data",
        default=None,
        choices=RELEARN_DATA,
        help="what the attack trains on about the relearned entities of raw-text data "
        "(AuditSettings.relearn_data; default: the quickstart's, auto); --calibrate with another than the "
        "default writes relearn_calibration_<benchmark>_<DATA>.md",
    )
    p.add_argument(
        "--relearn-optim",
        default=None,
        metavar="NAME",
        help="the attack's optimiser (AuditSettings.relearn_optim; default: the quickstart's); --calibrate "
        "with another than the default writes relearn_calibration_<NAME>.md",
    )
    p.add_argument(
        "--relearn-fit-prob",
        type=float,
        default=None,
        metavar="P",
        help="the attack trains a token only while the model gives it probability below P "
        "(AuditSettings.relearn_fit_prob; 1: plain cross-entropy; default: the quickstart's); --calibrate "
        "with another than the default writes relearn_calibration_fit<P>.md (relearn_calibration_plain.md "
        "for 1)",
    )
    p.add_argument(
        "--control",
        type=control_names,
        default=[],
        metavar="NAMES",
        help=f"--calibrate (QA miniature): also fine-tune the target as long on known facts instead of the "
        f"forget half (some of {', '.join(CONTROLS)}), to read the attack's damage beside; writes "
        "relearn_calibration_control.md",
    )
    args = p.parse_args()
    if args.control and not (args.calibrate and args.benchmark == "tofu"):
        p.error(
            "--control: with --calibrate on the TOFU-like miniature only (its controls are known QA facts)"
        )
    if args.calibrate:
        calibrate(args)
        return
    seeds = parse_seeds(args.seeds)
    settings = quickstart_audit_settings(seeds[0])
    if args.relearn_retain is not None:
        settings = dataclasses.replace(settings, relearn_retain=args.relearn_retain)
    if args.relearn_optim is not None:
        settings = dataclasses.replace(settings, relearn_optim=args.relearn_optim)
    if args.relearn_split is not None:
        settings = dataclasses.replace(settings, relearn_split=args.relearn_split)
    if args.relearn_data is not None:
        settings = dataclasses.replace(settings, relearn_data=args.relearn_data)
    if args.relearn_fit_prob is not None:
        settings = dataclasses.replace(settings, relearn_fit_prob=args.relearn_fit_prob)
    recorded = dict(
        max_items=settings.max_items,
        methods=args.methods,
        relearn_steps=list(settings.relearn_steps),
        relearn_lr=settings.relearn_lr,
        relearn_retain=settings.relearn_retain,
        relearn_optim=settings.relearn_optim,
        relearn_split=settings.relearn_split,
        relearn_fit_prob=settings.relearn_fit_prob,
        **({"relearn_data": settings.relearn_data} if settings.relearn_data != "auto" else {}),
    )
    measure_seeds(
        "audit",
        args,
        lambda a, seed: audit_seed(a, seed, settings),
        lambda per_seed: render(per_seed, settings.relearn_lr),
        "python bench/audit_all.py",
        **recorded,
    )


def audit_seed(args, seed: int, settings: AuditSettings) -> dict[str, dict]:
    """One lab seed: every method of ``--methods`` run with the quickstart's recipe and audited against
    the seed's oracle and target; the attack's split follows the seed (``quickstart_audit_settings``)."""
    args.seed = seed
    settings = dataclasses.replace(settings, seed=quickstart_audit_settings(seed).seed)
    emb = setup(args, max_items=100)
    work = Path(".bench_work") / "audit" / f"seed{seed}"
    target, tok = emb.load_target()
    oracle, otok = load(str(emb.oracle_dir))
    audits = {}
    for name in args.methods.split(","):
        _, res = emb.run_method(name, work / name, keep_model=True)
        audits[name] = run_audit(
            res.model, tok, emb.bench, oracle=(oracle, otok), original=(target, tok), settings=settings
        )
        for line in audits[name]["verdicts"]:
            print(f"seed {seed} {name}: {line}", flush=True)
    return audits


# ------------------------------------------------------------------------------ --calibrate


#: --calibrate per miniature: (the score the calibration reads, its label, what the attack trains on,
#: the result's name). WMDP-like: the oracle is the base pretrained without the hazardous passages.
CALIBRATED = {
    "tofu": ("fact_recall", "fact recall", "half of the 100 forget items", "relearn_calibration"),
    "wmdp": (
        "hazard_acc",
        "hazardous accuracy",
        "the hazardous passages of half the agents",
        "relearn_calibration_wmdp",
    ),
}


def calibrate(args) -> None:
    """Relearn the lab's oracle and target at every learning rate of ``--lrs`` up to the largest of
    ``--steps``, measured at each step on both halves (the audit's own code: ``Auditor.relearn``, or
    ``Auditor.relearn_text`` on the WMDP-like miniature), on each attack split of ``--splits``; write the
    two calibration numbers per (lr, steps) and split."""
    from transformers.utils import logging as hf_logging

    from unlearnkit.data.sources import resolve_data
    from unlearnkit.evaluation.audit.run import Auditor
    from unlearnkit.pipelines.embedded import ensure_lab
    from unlearnkit.pipelines.quickstart import WORLD, cache_root

    hf_logging.disable_progress_bar()
    import torch

    torch.set_num_threads(args.threads)
    lrs = [float(x) for x in args.lrs.split(",")]
    steps = tuple(sorted(int(x) for x in args.steps.split(",")))
    splits = [int(x) for x in args.splits.split(",")]
    default = quickstart_audit_settings(args.seed, args.benchmark)
    mix = default.relearn_retain if args.relearn_retain is None else args.relearn_retain
    benchmark = args.benchmark
    metric, label, _, name = CALIBRATED[benchmark]
    optim = default.relearn_optim if args.relearn_optim is None else args.relearn_optim
    name += "_retain" if mix > 0 else ""
    name += f"_{optim}" if optim != default.relearn_optim else ""
    split_by = default.relearn_split if args.relearn_split is None else args.relearn_split
    name += f"_{split_by}" if split_by != default.relearn_split else ""
    attack_data = default.relearn_data if args.relearn_data is None else args.relearn_data
    name += f"_{attack_data}" if attack_data != default.relearn_data else ""
    fit = default.relearn_fit_prob if args.relearn_fit_prob is None else args.relearn_fit_prob
    name += fit_suffix(fit) if fit != default.relearn_fit_prob else ""
    controls = list(args.control)
    name += "_control" if controls else ""
    world, _, target_dir, oracle_dir = ensure_lab(
        benchmark, cache_root(args.cache_dir), dict(WORLD), args.seed, lambda m: print(m, flush=True)
    )
    tofu = benchmark == "tofu"
    bench = resolve_data(world if tofu else world / benchmark, eval_fields=tofu)
    models = {"oracle": load(str(oracle_dir)), "original": load(str(target_dir))}
    pools = {c: control_pool(bench, c) for c in controls}
    control_curves: dict[str, dict[str, dict[str, dict]]] = {c: {} for c in controls}
    curves: dict[str, dict[str, dict]] = {}
    seconds: dict[str, float] = {}
    relearn_data_used = None  # what the attack trained on ("passages" / "questions": raw text; QA: None)
    for lr in lrs:
        for split in splits:
            st = AuditSettings(
                relearn_steps=steps,
                relearn_lr=lr,
                relearn_batch_size=default.relearn_batch_size,
                relearn_retain=mix,
                relearn_optim=optim,
                relearn_split=split_by,
                relearn_data=attack_data,
                relearn_fit_prob=fit,
                quant_bits=(),
                max_items=default.max_items,
                max_new_tokens=default.max_new_tokens,
                seed=split,
            )
            auditor = Auditor(bench, st)
            relearn_data_used = auditor.relearn_data if auditor.text else None
            run, details = {}, {}
            for role, (model, tok) in models.items():
                t0 = time.time()
                if tofu:
                    _, details[role] = auditor.split(model, tok, auditor.forget_qa, "forget")
                    run[role] = auditor.relearn(role, model, tok, details[role])
                else:
                    run[role] = auditor.relearn_text(role, model, tok)
                seconds[f"{lr:g}/{split}/{role}"] = round(time.time() - t0, 1)
            curves.setdefault(f"{lr:g}", {})[str(split)] = run
            cal = relearn_calibration(run, metric, label)
            print(f"lr {lr:g} split {split}: {cal['text'] if cal else 'n/a'}", flush=True)
            for c in controls:  # the target fine-tuned as long on known facts: what any such update costs
                t0 = time.time()
                model, tok = models["original"]
                # as long on known facts, measured as ever on both forget halves (a --retain mix included)
                shown = control_rows(pools[c], len(auditor.train_idx), split)
                curve = auditor.relearn(f"original ({c} control)", model, tok, details["original"], on=shown)
                control_curves[c].setdefault(f"{lr:g}", {})[str(split)] = curve
                seconds[f"{lr:g}/{split}/control {c}"] = round(time.time() - t0, 1)
                held = relearn_calibration({"original": curve}, metric, label)
                print(f"lr {lr:g} split {split}, {c} control: keeps {_pct(held['target_kept'])}", flush=True)
    rows = calibration_rows(curves, metric, label)
    if controls:
        rows = with_controls(rows, control_curves, metric, label)
    data = {
        "benchmark": benchmark,
        "metric": metric,
        "lrs": lrs,
        "steps": list(steps),
        "splits": splits,
        "teach_bar": TEACH_BAR,
        "keep_bar": KEEP_BAR,
        "relearn_retain": mix,
        "relearn_optim": optim,
        "relearn_split": split_by,
        "relearn_data": attack_data,
        "relearn_data_used": relearn_data_used,
        "relearn_fit_prob": fit,
        "defaults": {
            "relearn_lr": default.relearn_lr,
            "relearn_steps": list(default.relearn_steps),
            "relearn_retain": default.relearn_retain,
            "relearn_optim": default.relearn_optim,
            "relearn_split": default.relearn_split,
            "relearn_data": default.relearn_data,
            "relearn_fit_prob": default.relearn_fit_prob,
        },
        "rows": rows,
        "curves": curves,
        "seconds": seconds,
        **(
            {"controls": {c: {"about": CONTROLS[c], "curves": control_curves[c]} for c in controls}}
            if controls
            else {}
        ),
    }
    write_result(
        name,
        render_calibration(rows, data),
        data,
        calibration_command(
            [
                ("benchmark", benchmark, "tofu"),
                ("relearn-retain", f"{mix:g}", f"{default.relearn_retain:g}"),
                ("relearn-optim", optim, default.relearn_optim),
                ("relearn-split", split_by, default.relearn_split),
                ("relearn-data", attack_data, default.relearn_data),
                ("relearn-fit-prob", f"{fit:g}", f"{default.relearn_fit_prob:g}"),
                *((name, getattr(args, name), GRID[name]) for name in GRID),
                ("control", ",".join(controls), ""),
            ]
        ),
        embedded_settings(
            args,
            max_items=default.max_items,
            max_new_tokens=default.max_new_tokens,
            lrs=lrs,
            steps=list(steps),
            splits=splits,
            batch_size=default.relearn_batch_size,
            relearn_retain=mix,
            relearn_optim=optim,
            relearn_split=split_by,
            relearn_data=attack_data,
            relearn_fit_prob=fit,
            benchmark=benchmark,
            **({"controls": controls} if controls else {}),
        ),
    )


def calibration_rows(
    curves: dict[str, dict[str, dict]], metric: str | None = None, label: str | None = None
) -> list[dict]:
    """One row per (lr, k): the calibration read as if the curve ended at k (the oracle's trained-half
    ``metric``, default fact recall, after k steps, the target's lowest held-half one up to k and its
    share of the value before), per split, with the mean and the worst split; ``passes``: splits passing
    both bars."""
    rows = []
    for lr, by_split in curves.items():
        ks = sorted({int(k) for run in by_split.values() for k in run["oracle"] if int(k) > 0})
        for k in ks:
            per = {}
            for split, run in by_split.items():
                cut = {role: {s: p for s, p in pts.items() if int(s) <= k} for role, pts in run.items()}
                cal = relearn_calibration(cut, metric, label)
                per[split] = {
                    "oracle_trained": cal["oracle_trained"],
                    "target_held": cal["target_held"],
                    "target_held_lowest": cal["target_held_lowest"],
                    "target_kept": cal["target_kept"],
                    "teaches": cal["teaches"],
                    "keeps": cal["keeps"],
                }
            rows.append(
                {
                    "lr": float(lr),
                    "steps": k,
                    "splits": per,
                    "oracle_trained_mean": _mean(v["oracle_trained"] for v in per.values()),
                    "oracle_trained_min": _min(v["oracle_trained"] for v in per.values()),
                    "target_held_mean": _mean(v["target_held"] for v in per.values()),
                    "target_held_min": _min(v["target_held_lowest"] for v in per.values()),
                    "target_kept_min": _min(v["target_kept"] for v in per.values()),
                    "passes": sum(bool(v["teaches"] and v["keeps"]) for v in per.values()),
                }
            )
    return rows


def with_controls(
    rows: list[dict],
    control_curves: dict[str, dict[str, dict[str, dict]]],
    metric: str | None = None,
    label: str | None = None,
) -> list[dict]:
    """Each calibration row (:func:`calibration_rows`) with ``controls``: per control fine-tune (``{name:
    {lr: {split: the target's curve}}}``) the target's lowest held-half ``metric`` up to the row's k and
    its share of the value before (read as the attack's "keeps" reads it), per split and at worst, and on
    how many splits the attack's lowest is at least the control's (``attack_not_lower``)."""
    for row in rows:
        row["controls"] = {}
        for name, by_lr in control_curves.items():
            per = {}
            for split, curve in by_lr.get(f"{row['lr']:g}", {}).items():
                cut = {s: point for s, point in curve.items() if int(s) <= row["steps"]}
                cal = relearn_calibration({"original": cut}, metric, label) or {}
                low, attack = (
                    cal.get("target_held_lowest"),
                    row["splits"].get(split, {}).get("target_held_lowest"),
                )
                per[split] = {
                    "held_lowest": low,
                    "kept": cal.get("target_kept"),
                    "attack_not_lower": None if low is None or attack is None else bool(attack >= low - 1e-9),
                }
            row["controls"][name] = {
                "splits": per,
                "kept_min": _min(v["kept"] for v in per.values()),
                "held_lowest_min": _min(v["held_lowest"] for v in per.values()),
                "attack_not_lower": sum(bool(v["attack_not_lower"]) for v in per.values()),
            }
    return rows


def _mean(values) -> float | None:
    xs = [x for x in values if x is not None]
    return statistics.fmean(xs) if xs else None


def _min(values) -> float | None:
    xs = [x for x in values if x is not None]
    return min(xs) if xs else None


def render_calibration(rows: list[dict], data: dict) -> str:
    """The section: per (lr, steps) both calibration numbers (mean over the splits, the worst split in
    brackets) and how many splits pass both bars; the settings that pass on every split; the defaults'
    row."""
    n = len(data["splits"])
    _, label, trains_on, _ = CALIBRATED[data.get("benchmark", "tofu")]
    title = "" if data.get("benchmark", "tofu") == "tofu" else " (WMDP-like)"
    mix = data.get("relearn_retain", 0.0)
    title += f", {mix:g} retain row{'' if mix == 1 else 's'} mixed in per forget row" if mix else ""
    tofu = data.get("benchmark", "tofu") == "tofu"
    # A result written before relearn_split existed halved by item (the default then).
    split_by = data.get("relearn_split", "item")
    if tofu:
        trains_on = (
            "the forget items of half the authors (whole authors on each side, `relearn_split` entity)"
            if split_by == "entity"
            else f"{trains_on} (split at random: a held item may share its author with trained ones, "
            "`relearn_split` item)"
        )
        title += ", items split at random" if split_by == "item" and "relearn_split" in data else ""
    # A WMDP-like result written before relearn_data existed relearned the passages.
    used = data.get("relearn_data_used", "passages") if not tofu else None
    if used == "questions":
        trains_on = (
            "the hazardous multiple-choice questions of half the agents, each with its correct answer as "
            "the scoring reads it (`relearn_data` questions; the held agents' questions are measured)"
        )
    elif used == "passages":
        trains_on += " (`relearn_data` passages)"
    title += f", {used}" if used else ""
    trains_on += (
        f" and {mix:g} retain item{'' if mix == 1 else 's'} per forget item (`relearn_retain`)" if mix else ""
    )
    optim = data.get("relearn_optim", "auto")
    title += f", optimiser {optim}" if optim != "auto" else ""
    # A result written before relearn_fit_prob existed trained with plain cross-entropy.
    fit = data.get("relearn_fit_prob", 1.0)
    title += "" if fit >= 1 else f", loss capped at p {fit:g}"
    loss = (
        "plain cross-entropy"
        if fit >= 1
        else f"a token's loss dropped once the model gives it probability >= {fit:g}, `relearn_fit_prob`"
    )
    title += ", beside control fine-tunes" if data.get("controls") else ""
    lines = [
        f"## Relearning attack calibration{title}",
        "",
        "Can the audit's relearning attack teach, and does it leave the target intact? The lab's oracle "
        f"(never trained on the forget set) and target are relearned on {trains_on} (batch 8, constant "
        f"lr, {'AdamW' if optim == 'auto' else optim}; {loss}) and measured on both halves; each row reads the curve as if it ended at that step. "
        f"**Teaches**: the oracle's {label} on the half it is trained on >= {TEACH_BAR:g}. **Keeps**: the "
        f"target's lowest {label} on the held half, up to that step, >= {KEEP_BAR:g} x its value before "
        f"the attack. Mean over the {n} attack splits (seeds {', '.join(map(str, data['splits']))}), the "
        "worst split in brackets.",
        "",
        "| lr | steps | oracle, trained half | target, held half after k (worst split: its lowest up to k) "
        "| target keeps (worst) | splits passing both |",
        "|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['lr']:g} | {r['steps']} | {_f(r['oracle_trained_mean'])} ({_f(r['oracle_trained_min'])}) "
            f"| {_f(r['target_held_mean'])} ({_f(r['target_held_min'])}) | {_pct(r['target_kept_min'])} "
            f"| {r['passes']} / {n} |"
        )
    every = [r for r in rows if r["passes"] == n]
    cheapest = sorted(every, key=lambda r: (r["steps"], -r["lr"]))
    lines += [
        "",
        "Passing both bars on every split: "
        + (", ".join(f"lr {r['lr']:g} x {r['steps']} steps" for r in cheapest) or "none")
        + ".",
    ]
    d = data["defaults"]
    last = max(d["relearn_steps"])
    same_mix = d.get("relearn_retain", 0.0) == data.get("relearn_retain", 0.0)
    same_fit = d.get("relearn_fit_prob", 1.0) == data.get("relearn_fit_prob", 1.0)
    mine = next((r for r in rows if r["lr"] == d["relearn_lr"] and r["steps"] == last), None)
    mine = mine if same_mix and same_fit else None
    said = (
        f"{mine['passes']} / {n} splits pass at {last} steps (oracle {_f(mine['oracle_trained_mean'])}, "
        f"worst {_f(mine['oracle_trained_min'])}; target keeps at worst {_pct(mine['target_kept_min'])})"
        if mine
        else "not in the grid (add its lr and last step to --lrs / --steps)"
        if same_mix and same_fit
        else f"they mix {d.get('relearn_retain', 0.0):g} retain rows per forget row, not this grid's"
        if not same_mix
        else f"their loss is capped at {d.get('relearn_fit_prob', 1.0):g}, this grid's at "
        f"{data.get('relearn_fit_prob', 1.0):g}"
    )
    lines += [
        "",
        f"The defaults (`quickstart_audit_settings`, also this script's audit): lr {d['relearn_lr']:g}"
        f"{'' if d.get('relearn_fit_prob', 1.0) >= 1 else ', loss capped at ' + format(d['relearn_fit_prob'], 'g')}, "
        f"curve at {', '.join(map(str, d['relearn_steps']))} steps: {said}.",
    ]
    if data.get("controls"):
        lines += render_controls(rows, data, mine, label)
    return "\n".join(lines)


def render_controls(rows: list[dict], data: dict, defaults_row: dict | None, label: str) -> list[str]:
    """The control fine-tunes' part of the calibration section (``--control``): per (lr, steps) each
    control's keeps beside the attack's, and at the defaults' row the numbers of every split."""
    names, n = list(data["controls"]), len(data["splits"])
    lines = [
        "",
        "**Controls** (`--control`): the target fine-tuned the same way (lr, steps, batch 8) on as many facts "
        "it already knows instead of the forget half, whole entities drawn per split: "
        + "; ".join(f"`{c}`: {data['controls'][c]['about']}" for c in names)
        + f". Nothing new is taught; what the target loses of the held half is what an update that long "
        f"costs it anyway. Each control: the target's keeps on the held half (worst split), and on how many "
        f"splits the attack leaves a lowest held-half {label} at least the control's.",
        "",
        "| lr | steps | target keeps, attack (worst) | "
        + " | ".join(f"keeps, `{c}` control (worst); attack not lower" for c in names)
        + " |",
        "|---:|---:|---:|" + "---:|" * len(names),
    ]
    for r in rows:
        cells = [
            f"{_pct(r['controls'][c]['kept_min'])}; {r['controls'][c]['attack_not_lower']} / {n}"
            for c in names
        ]
        lines.append(
            f"| {r['lr']:g} | {r['steps']} | {_pct(r['target_kept_min'])} | " + " | ".join(cells) + " |"
        )
    if defaults_row is None:
        return lines
    r = defaults_row
    lines += [
        "",
        f"At the defaults (lr {r['lr']:g}, {r['steps']} steps), by split: the oracle's {label} on the half it "
        f"is trained on, and the target's lowest held-half {label} up to {r['steps']} steps under the attack "
        "and under each control (its share of the value before the attack in brackets).",
        "",
        "| split | oracle, trained half | target, attack | "
        + " | ".join(f"target, `{c}` control" for c in names)
        + " |",
        "|---:|---:|---:|" + "---:|" * len(names),
    ]
    for split, v in r["splits"].items():
        cells = [
            f"{_f(r['controls'][c]['splits'].get(split, {}).get('held_lowest'))} "
            f"({_pct(r['controls'][c]['splits'].get(split, {}).get('kept'))})"
            for c in names
        ]
        lines.append(
            f"| {split} | {_f(v['oracle_trained'])} | {_f(v['target_held_lowest'])} ({_pct(v['target_kept'])}) | "
            + " | ".join(cells)
            + " |"
        )
    lines += [
        "",
        "At the defaults the attack leaves the target's held half no lower than "
        + ", ".join(
            f"the `{c}` control does on {r['controls'][c]['attack_not_lower']} of {n} splits" for c in names
        )
        + f"; it passes both bars on {r['passes']} of {n}.",
    ]
    return lines


def _f(x) -> str:
    return "–" if x is None else f"{x:.2f}"


def _pct(x) -> str:
    return "–" if x is None else f"{100 * x:.0f} %"


def render(per_seed: dict[int, dict[str, dict]], relearn_lr: float) -> str:
    """The section: every check's rows (methods, then the oracle and the target, as columns), the forget
    facts reached another way (one row per model: direct / paraphrase / alias / multi-hop fact recall and
    the controls), and every method's verdicts. ``per_seed``: ``{lab seed: {method: audit}}``; with more
    than one seed each cell is the mean \u00b1 sd over the seeds, and the verdicts are the first seed's."""
    tables: dict[str, dict[str, list]] = {}
    order: list[str] = []
    for audits in per_seed.values():
        ref = _rows(next(iter(audits.values())))
        order += [label for label in ref if label not in order]
        columns = {name: _rows(a) for name, a in audits.items()}
        for name, rows in columns.items():
            for label, row in rows.items():
                tables.setdefault(name, {}).setdefault(label, []).append(row.get("audited"))
        for role, col in (("oracle", "oracle"), ("original", "target")):
            for label, row in ref.items():
                tables.setdefault(col, {}).setdefault(label, []).append(row.get(role))
    lines = ["| check | " + " | ".join(tables) + " |", "|---|" + "---|" * len(tables)]
    for label in order:
        cells = [_agg(tables[m].get(label, [])) for m in tables]
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    first_seed, first = next(iter(per_seed.items()))
    several = len(per_seed) > 1
    seeds = ", ".join(map(str, per_seed))
    verdicts = [f"- **{m}**: " + "; ".join(a["verdicts"]) for m, a in first.items()]
    md = [
        "## Audit: is the knowledge really gone?",
        "",
        "Every method's model audited against the retain oracle and the original target (100 forget items, "
        f"100 holdout; relearning on half the forget items with lr {relearn_lr:g}, measured on the other "
        "half, and on the trained half: `trained half:` rows)."
        + (
            f" Each cell: mean \u00b1 sd over lab seeds {seeds} (each its own world, base, target, oracle "
            "and attack split); every seed's audits are in bench/results/audit.json."
            if several
            else ""
        ),
        "",
        "\n".join(lines),
        "",
        *calibration_line(per_seed),
        *reached_table(per_seed),
        "### Verdicts" + (f" (lab seed {first_seed}; every seed's in audit.json)" if several else ""),
        "",
        "\n".join(verdicts),
    ]
    return "\n".join(md)


def calibration_line(per_seed: dict[int, dict[str, dict]]) -> list[str]:
    """The attack's calibration per seed (the oracle's and the target's: the same in every method's audit)."""
    lines = []
    for seed, audits in per_seed.items():
        cal = next(iter(audits.values())).get("relearn_calibration")
        if cal and cal.get("text"):
            lines.append(
                f"Relearning {cal['text']}."
                if len(per_seed) == 1
                else f"- Seed {seed}: relearning {cal['text']}."
            )
    return [*lines, ""] if lines else []


def reached_table(per_seed: dict[int, dict[str, dict]]) -> list[str]:
    """The "reached another way" table (fact recall per model and probe family, mean \u00b1 sd over the
    seeds; the last column names a model that blocks one wording only, and on how many seeds), or the one
    line saying why it was skipped."""
    first = next(iter(next(iter(per_seed.values())).values())).get("reached") or {}
    if not first.get("families"):
        why = first.get("skipped") or "this audit predates the check"
        return ["### Reached another way", "", f"Skipped: {why}.", ""]
    families = [(f["key"], f["label"]) for f in first["families"]]
    values: dict[str, dict[str, list]] = {}
    blocked: dict[str, int] = {}
    for audits in per_seed.values():
        for name, audit in audits.items():
            reached = audit.get("reached") or {}
            recall = (reached.get("recall") or {}).get("audited") or {}
            for key, _ in families:
                values.setdefault(name, {}).setdefault(key, []).append(recall.get(key))
            blocked[name] = blocked.get(name, 0) + bool(
                (reached.get("reading") or {}).get("blocked_one_wording")
            )
        recall = (next(iter(audits.values())).get("reached") or {}).get("recall") or {}
        for role, label in (("oracle", "oracle"), ("original", "target")):
            if role in recall:
                for key, _ in families:
                    values.setdefault(label, {}).setdefault(key, []).append(recall[role].get(key))
    n = len(per_seed)

    def flag(name: str) -> str:
        hits = blocked.get(name, 0)
        if not hits:
            return ""
        return "blocks one wording" + (f" ({hits} of {n} seeds)" if n > 1 else "")

    lines = [
        "### Reached another way",
        "",
        "Fact recall on the forget facts asked directly, in the paraphrased question, by the author's pen name "
        "(alias) and as 'the author of <book>' (multi-hop; book -> author is retain knowledge), with the "
        "controls (the link itself; retain facts by alias and multi-hop). `blocks one wording`: direct recall "
        "near the oracle's while another way keeps at least half of the target's lead.",
        "",
        "| model | " + " | ".join(label for _, label in families) + " | reading |",
        "|---|" + "---|" * (len(families) + 1),
    ]
    for name, per_key in values.items():
        lines.append(
            f"| {name} | "
            + " | ".join(_agg(per_key.get(key, [])) for key, _ in families)
            + f" | {flag(name)} |"
        )
    return [*lines, ""]


def _agg(values: list) -> str:
    """One cell: the value itself for one seed, else the mean \u00b1 sd of the numbers (seeds without one
    dropped; a dash when none has one)."""
    if len(values) == 1:
        return _fmt(values[0])
    nums = [v for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]
    if not nums:
        return _fmt(next((v for v in values if v is not None), None))
    mean, sd = mean_sd(nums)
    return f"{mean:.3f} \u00b1 {sd:.3f}"


def _fmt(x) -> str:
    return "–" if x is None else f"{x:.3f}" if isinstance(x, float) else str(x)


if __name__ == "__main__":
    main()
