"""Tune ASU, T-NPO, NPO and GD on the TOFU-like miniature with ``unlearnkit sweep``; compare with the shared recipe.

    python bench/sweep.py                                   # the budgeted run behind BENCHMARKS.md
    python bench/sweep.py --methods asu --trials 2 --seeds 0 --max-items 20   # a smoke run

The target and oracle are the quickstart's (the base fine-tuned on forget + retain / retain authors,
``unlearnkit.pipelines.embedded``). For each method: a sweep (study in ``.bench_work/sweep/<method>/study.db``,
resumable: rerun the same command after an interruption) over ``configs/tiny/spaces/<method>.yaml``,
``--jobs`` workers (one by default: a rerun draws the same trials and makes the same choice,
``tests/test_sweep.py``), at least 40 trials by default so that TPE leaves its random start-up;
trials are scored on the *selection* half of every part (forget, retain, general: whole authors /
countries).
Then the chosen settings and the quickstart's shared recipe are each run with 5 training seeds and
measured on both halves: the table shows selection vs test per seed. The compass goal: forget quality
>= 0.5 with model utility >= 0.98 x the oracle's. The tuned recipe is written to
``src/unlearnkit/resources/recipes/tiny/<method>.yaml`` only where it beats the shared one on the
*selection* half beyond the seeds' spread (``compare``: a tie keeps the shared recipe; the quickstart
uses what is there); the test half only reports, for both recipes, and says whether the choice held
there.

Results are written after every step (``bench/results/sweep.md`` / ``sweep.json``), so an interrupted
run leaves what it measured.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import (  # noqa: E402
    RESULTS,
    code_version,
    matches,
    packages,
    paired,
    provenance,
    unrecorded,
    write_result,
)

from unlearnkit.pipelines.embedded import LAB_VERSION  # noqa: E402
from unlearnkit.pipelines.quickstart import TUNING_WORLD_SEED  # noqa: E402
from unlearnkit.pipelines.sweep import FQ_FLOOR  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = (
    ROOT / "src" / "unlearnkit" / "resources" / "recipes" / "tiny"
)  # package data: the quickstart reads it
SPACES = ROOT / "configs" / "tiny" / "spaces"
COLUMNS = ("forget_quality", "model_utility", "forget_rougeL_recall")


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--methods", default="asu,t-npo,npo,gd")
    p.add_argument(
        "--world-seed",
        type=int,
        default=TUNING_WORLD_SEED,
        help="the world tuned on (its own base, target and oracle); no report reads it",
    )
    p.add_argument("--trials", type=int, default=40, help="trials per method")
    p.add_argument(
        "--jobs",
        type=int,
        default=1,
        help="sweep workers per method (default 1: with more, TPE's next trial depends on which running "
        "trial finishes first, so a rerun may choose another trial; one worker chooses the same)",
    )
    p.add_argument("--budget-minutes", type=float, default=60.0, help="per method sweep")
    p.add_argument("--seeds", default="0,1,2,3,4", help="training seeds of the tuned-vs-shared comparison")
    p.add_argument("--max-items", type=int, default=100)
    p.add_argument("--max-new-tokens", type=int, default=32)
    p.add_argument("--work", default=str(ROOT / ".bench_work" / "sweep"))
    p.add_argument("--cache-dir", default=None, help="target/oracle cache (default: WORK/cache)")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--no-write-configs", action="store_true", help="do not update the packaged tiny recipes")
    p.add_argument("--result-name", default="sweep", help="bench/results/<name>.md / .json")
    p.add_argument(
        "--rewrite-recipes",
        action="store_true",
        help="only rewrite the packaged tiny recipe <method>.yaml from finished sweeps in WORK (no training)",
    )
    p.add_argument(
        "--markdown-only",
        action="store_true",
        help="only rebuild bench/results/<name>.md from its .json (no training)",
    )
    return p.parse_args()


def models(args, log):
    """The tuning world's target and oracle (the quickstart's world at ``--world-seed``, cached,
    ``unlearnkit.pipelines.embedded``)."""
    from unlearnkit.pipelines.embedded import ensure_lab
    from unlearnkit.pipelines.quickstart import WORLD

    root = Path(args.cache_dir or Path(args.work) / "cache")
    world_dir, _, target, oracle = ensure_lab("tofu", root, WORLD, args.world_seed, log)
    return world_dir, target, oracle


def mean_sd(values: list[float]) -> str:
    if not values:
        return "-"
    m = statistics.fmean(values)
    if len(values) == 1:
        return f"{m:.3g}"
    return f"{m:.3g} ± {statistics.stdev(values):.2g}"


def goal_met(metrics: dict, oracle_utility: float) -> bool:
    from unlearnkit.pipelines.sweep import GOAL_FORGET_QUALITY, GOAL_UTILITY_RATIO

    return (
        metrics.get("forget_quality", 0.0) >= GOAL_FORGET_QUALITY
        and metrics.get("model_utility", 0.0) >= GOAL_UTILITY_RATIO * oracle_utility
    )


def _workers(jobs: int) -> str:
    """How the sweep ran its trials: one worker repeats a sweep exactly, several may not."""
    if jobs == 1:
        return "one worker (a rerun draws the same trials)"
    return f"{jobs} workers (TPE's next trial depended on which running trial finished first)"


def markdown(data: dict) -> str:
    lines = [
        "## Tuned vs shared recipe: `unlearnkit sweep` on the TOFU-like miniature",
        "",
        f"The tuning world (the quickstart's world at seed {data.get('world_seed', 0)}: its own base, and the base "
        "fine-tuned on forget + retain / retain authors; "
        + (
            "no report reads this world, so every number the quickstart and the other benches report for a tuned "
            "recipe is on a world it was not tuned on). "
            if data.get("world_seed", 0)
            else "the quickstart's own world). "
        )
        + "Each "
        "method was swept with `unlearnkit sweep` (objectives forget quality + model utility, multi-objective "
        f"TPE, search spaces in `configs/tiny/spaces/`, {data['trials']} trials with "
        f"{_workers(data.get('jobs', 1))}, at most {data['budget_minutes']:g} min per method). Every part (forget, retain, general) is "
        "split into a **selection** half (whole authors / countries), on which trials are scored and one is "
        "chosen, and a **test** half, never seen by the choice. Each row: one training seed, its numbers on "
        f"both halves ({data['max_items']} items per split, {data['max_new_tokens']} generated tokens). "
        "Goal = forget quality >= 0.5 and model utility >= 0.98 x the oracle's (the compass goal), reported "
        "on the test half. `tuned` rows run the recipe the sweep chose on the selection half. "
        + _keep_rule(data),
        "",
        "| method | recipe | seed | FQ sel | FQ test | utility sel | utility test | utility / oracle (test) "
        "| forget ROUGE-L test | goal met (test) |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    ref = next((m["reference"] for m in data["methods"].values() if m.get("reference")), {})
    oracle_u = ref.get("oracle", {}).get("model_utility", float("nan"))
    for row in ("target", "oracle"):
        if row in ref:
            r = ref[row]
            lines.append(
                f"| ({row}) | - | - | - | {r['forget_quality']:.3g} | - | {r['model_utility']:.3f} | "
                f"{r['model_utility'] / oracle_u:.3f} | {r['forget_rougeL_recall']:.3f} | - |"
            )
    for name, m in data["methods"].items():
        for recipe in ("shared", "tuned"):
            for r in m.get(recipe, []):
                sel = r.get("selection", {})
                lines.append(
                    f"| {name} | {RECIPE_LABEL[recipe]} | {r['seed']} | {_g(sel.get('forget_quality'))} | "
                    f"{r['forget_quality']:.3g} | {_f(sel.get('model_utility'))} | {r['model_utility']:.3f} | "
                    f"{r['model_utility'] / oracle_u:.3f} | {r['forget_rougeL_recall']:.3f} | "
                    f"{'yes' if goal_met(r, oracle_u) else 'no'} |"
                )
        if m.get("verdict"):
            how = (
                "kept (selection half)"
                if m.get("decided_on") == "selection"
                else "kept (test half, earlier rule)"
            )
            lines.append(f"| {name} | {how} | | | | | | | | {m['verdict']} |")
        if m.get("test_outcome"):
            lines.append(f"| {name} | on the test half (reported) | | | | | | | | {m['test_outcome']} |")
    lines += ["", "Chosen settings (selection half) and sweep size:", ""]
    for name, m in data["methods"].items():
        if "chosen" in m:
            t = m["trials"]
            lines.append(
                f"- **{name}**: `{json.dumps(m['chosen'])}` — {t.get('COMPLETE', 0)} complete, "
                f"{t.get('PRUNED', 0)} pruned trials {sweep_time(m)}; {m['rule']}."
            )
    if data.get("notes"):
        lines += [""] + [f"{n}" for n in data["notes"]]
    notes = RESULTS / f"{data.get('result_name', 'sweep')}_notes.md"
    if notes.is_file():  # the reading of the numbers, written by a person after the run
        lines += ["", notes.read_text(encoding="utf-8").strip()]
    return "\n".join(lines)


RECIPE_LABEL = {"shared": "shared", "tuned": "tuned (chosen on selection)"}


def _keep_rule(data: dict) -> str:
    """How the kept recipe was decided, as the data records it (results of the earlier rule compared the
    recipes on the test half, and say so)."""
    decided = {m.get("decided_on", "test") for m in data["methods"].values() if m.get("verdict")}
    verdicts = [m["verdict"] for m in data["methods"].values() if m.get("verdict")]
    paired_rule = all("paired over" in v for v in verdicts)
    goal_paired = all("seeds: goal " in v for v in verdicts)
    if (decided == {"selection"} or not decided) and paired_rule:
        goal = (
            "the goal met by the tuned recipe and missed by the shared one on every seed, or, the goal a tie, "
            if goal_paired
            else "more seeds meeting the goal, or "
        )
        return (
            "A tuned recipe is kept in `src/unlearnkit/resources/recipes/tiny/` only where it beats the "
            "shared one on the selection half beyond the training seeds' spread (paired by seed: "
            + goal
            + "one of log10 forget quality and utility higher on every seed by more than one sd of the "
            "differences, the other not lower in the same way (utility: by more than 0.01)); a tie keeps "
            "the shared recipe. The test half only reports."
        )
    if decided == {"selection"}:
        return (
            "These results were kept by the earlier selection-half rule (more seeds meeting the goal, or a "
            "higher mean forget quality without a mean utility lower by more than 0.01, with no regard to "
            "the seeds' spread); the test half only reports."
        )
    return (
        "These results were kept by the earlier rule: a tuned recipe was kept in "
        "`src/unlearnkit/resources/recipes/tiny/` where it beat the shared one on the **test** half "
        "(so the test half chose); rerun `python bench/sweep.py` for the selection-half rule."
    )


def trial_minutes(output: Path) -> float | None:
    """The trials' own time (the sum of their ``seconds`` in the sweep's trials.jsonl), in minutes."""
    path = output / "trials.jsonl"
    if not path.is_file():
        return None
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return sum(r.get("seconds") or 0.0 for r in rows) / 60


def sweep_time(m: dict) -> str:
    """How long a method's trials took. A resumed study's trials ran in an earlier run: the wall time of
    the run that resumed it (seconds, to reload a finished study) is not their time."""
    if m.get("trial_minutes") is not None:
        text = f"in {m['trial_minutes']:.1f} min of trials"
        if m.get("resumed"):
            text += f" (resumed: this run reloaded the study in {60 * m['sweep_minutes']:.0f} s)"
        return text
    earlier = m.get("resumed_from")
    if earlier:
        return (
            f"in {earlier['sweep_minutes']:.1f} min (the run recorded in commit {earlier['commit']}; this run resumed the "
            f"finished study in {60 * m['sweep_minutes']:.0f} s)"
        )
    return f"in {m['sweep_minutes']:.1f} min"


def _g(x) -> str:
    return "-" if not isinstance(x, int | float) else f"{x:.3g}"


def _f(x) -> str:
    return "-" if not isinstance(x, int | float) else f"{x:.3f}"


def compare(tuned: list[dict], shared: list[dict], oracle_u: float) -> tuple[bool, str]:
    """Whether ``tuned`` beats ``shared`` (rows of one half, one per training seed, paired by seed), each
    comparison by ``_common.paired``'s rule (the mean difference over one sd of the differences and of one
    sign on every seed; else a tie): the goal met by tuned and missed by shared on every seed (1 seed of
    5 more is a tie), or, the goal a tie, one objective higher without
    the other lower (forget quality in log10, as the sweep optimises it): a higher forget quality
    without a utility lower by more than 0.01 on the mean, or a higher utility without a lower forget
    quality. Anything else is a tie, and a tie keeps the shared recipe (issue 29: "beats" only beyond
    the seeds' spread)."""
    met_t = sum(goal_met(r, oracle_u) for r in tuned)
    met_s = sum(goal_met(r, oracle_u) for r in shared)
    fq_t = statistics.fmean(r["forget_quality"] for r in tuned)
    fq_s = statistics.fmean(r["forget_quality"] for r in shared)
    mu_t = statistics.fmean(r["model_utility"] for r in tuned)
    mu_s = statistics.fmean(r["model_utility"] for r in shared)
    per_seed = {
        i: {
            name: {
                "log_fq": math.log10(max(float(r["forget_quality"]), FQ_FLOOR)),
                "model_utility": float(r["model_utility"]),
                "goal": float(goal_met(r, oracle_u)),
            }
            for name, r in (("tuned", t), ("shared", s))
        }
        for i, (t, s) in enumerate(zip(_by_seed(tuned), _by_seed(shared), strict=True))
    }
    fq_reading = paired(per_seed, "tuned", "shared", "log_fq")["reading"]
    mu_reading = paired(per_seed, "tuned", "shared", "model_utility")["reading"]
    forgets_more = fq_reading == "higher" and not (mu_reading == "lower" and mu_t < mu_s - 0.01)
    keeps_more = mu_reading == "higher" and fq_reading != "lower"
    goal_reading = paired(per_seed, "tuned", "shared", "goal")["reading"]
    better = goal_reading == "higher" or (goal_reading == "tie" and (forgets_more or keeps_more))
    why = (
        f"tuned: goal {met_t}/{len(tuned)}, FQ {fq_t:.3g}, utility {mu_t:.3f}; "
        f"shared: {met_s}/{len(shared)}, {fq_s:.3g}, {mu_s:.3f}; "
        f"paired over {len(per_seed)} seeds: goal {_reading(goal_reading)}, FQ {_reading(fq_reading)}, "
        f"utility {_reading(mu_reading)}"
    )
    return better, why


def _by_seed(rows: list[dict]) -> list[dict]:
    """Rows in training-seed order (rows without seeds keep theirs): pairs the tuned and shared runs
    that share a seed."""
    return sorted(rows, key=lambda r: r.get("seed") or 0)


def _reading(reading: str) -> str:
    return {"higher": "tuned higher", "lower": "tuned lower"}.get(reading, "a tie")


def tuned_beats_shared(entry: dict, oracle_selection_utility: float) -> tuple[bool, str]:
    """The keep/drop decision: the tuned recipe against the shared one on the *selection* half (each
    row's ``selection`` numbers, the goal against the oracle's selection-half utility). The test half
    (each row's top-level numbers) never enters it: it only reports (:func:`outcome_on_test_half`)."""
    tuned, shared = entry.get("tuned", []), entry.get("shared", [])
    if not tuned or not shared or not all("selection" in r for r in tuned + shared):
        return False, "not compared"
    better, why = compare(
        [{**r["selection"], "seed": r.get("seed")} for r in tuned],
        [{**r["selection"], "seed": r.get("seed")} for r in shared],
        oracle_selection_utility,
    )
    return better, ("tuned kept (" if better else "shared kept (") + "selection half: " + why + ")"


def outcome_on_test_half(entry: dict, oracle_test_utility: float) -> str:
    """The same comparison on the test half, reported beside the decision and never used by it."""
    tuned, shared = entry.get("tuned", []), entry.get("shared", [])
    if not tuned or not shared:
        return ""
    better, why = compare(tuned, shared, oracle_test_utility)
    return ("tuned better" if better else "tuned not better") + " on the test half (" + why + ")"


def decide(entry: dict) -> bool:
    """Keep the tuned recipe or not, on the selection half (against the oracle's selection-half
    utility); records the verdict, that the selection half decided, and the test half's outcome
    beside it (reported, never read by the decision). True: keep the tuned recipe."""
    oracle_sel = entry.get("reference_selection", {}).get("oracle", {}).get("model_utility", float("nan"))
    better, entry["verdict"] = tuned_beats_shared(entry, oracle_sel)
    entry["decided_on"] = "selection"
    oracle_test = entry.get("reference", {}).get("oracle", {}).get("model_utility", float("nan"))
    entry["test_outcome"] = outcome_on_test_half(entry, oracle_test)
    return better


def seed_row(halves: dict[str, dict], seed: int) -> dict:
    """One seed's stored row from the numbers per half: the reported numbers are the test half's, the
    selection half's sit under ``selection`` (what the keep decision reads)."""
    return {k: halves["test"][k] for k in COLUMNS} | {
        "seed": seed,
        "selection": {k: halves["selection"][k] for k in COLUMNS},
    }


def write_recipe(
    method: str, sweep_dir: Path, date: str, verdict: str | None = None, world_seed: int | None = None
) -> None:
    """``resources/recipes/tiny/<method>.yaml`` (package data) from the sweep's ``best.yaml``, with the
    header recipes carry: which half chose it (``verdict``: the keep decision, on the selection half)."""
    from unlearnkit.io import write_text_atomic

    best = (sweep_dir / "best.yaml").read_text(encoding="utf-8")
    body = "\n".join(line for line in best.splitlines() if not line.startswith("#"))
    kept = (
        f"#   Kept over the shared recipe on the selection half: {verdict}.\n"
        if verdict
        else "#   Kept over the shared recipe: no selection-half comparison recorded (written by --rewrite-recipes).\n"
    )
    header = (
        f"# Tuned {method} recipe for the TOFU-like miniature's target (`unlearnkit quickstart` uses it).\n"
        f"# Reproduces: the 'tuned' rows of BENCHMARKS.md (tuned vs shared recipe, reported on the test half);\n"
        f"#   produced by `python bench/sweep.py` on {date}: `unlearnkit sweep` over\n"
        f"#   configs/tiny/spaces/{method}.yaml, the trial chosen on the selection half of every part\n"
        + (
            f"#   of the world of seed {world_seed} (its own base, target and oracle; no report reads it).\n"
            if world_seed is not None
            else "#   (the tuning world was not recorded).\n"
        )
        + kept
        + "#   The test half chose nothing: it only reports.\n"
        "# Hardware: CPU (2 cores); about a minute per run.\n"
        f"# Command: unlearnkit unlearn --model TARGET --data WORLD --method {method} "
        f"--config src/unlearnkit/resources/recipes/tiny/{method}.yaml --output OUT\n"
    )
    CONFIGS.mkdir(parents=True, exist_ok=True)
    write_text_atomic(CONFIGS / f"{method}.yaml", header + body.strip() + "\n")


def _recorded(args, method: str) -> str | None:
    """The selection-half verdict the results file records for ``method`` (None: none recorded, or one
    decided by the earlier test-half rule)."""
    path = RESULTS / f"{args.result_name}.json"
    if not path.is_file():
        return None
    entry = json.loads(path.read_text(encoding="utf-8")).get("methods", {}).get(method, {})
    return entry.get("verdict") if entry.get("decided_on") == "selection" else None


def check_work(folder: Path, settings: dict) -> None:
    """A sweep folder resumes only under the code and packages that started it (commit, src/ hash and
    the numeric packages' versions): trials of two code versions or installs must not mix in one study.
    The provenance is recorded beside the folder when it starts (``<method>.provenance.json``): inside
    it, ``unlearnkit sweep`` would refuse a folder that holds something but no sweep."""
    path = folder.parent / f"{folder.name}.provenance.json"
    if path.is_file():
        stored = json.loads(path.read_text(encoding="utf-8"))
        if not matches(stored, settings):
            now, was = packages(), stored.get("packages") or {}
            moved = [f"{k} {was.get(k, '?')} -> {v}" for k, v in now.items() if was.get(k) != v]
            raise SystemExit(
                f"{folder} was started by commit {stored.get('commit', '?')[:10]} (src sha256 "
                f"{stored.get('src_sha256', '?')[:12]}); this is {code_version()['commit'][:10]} "
                f"({code_version()['src_sha256'][:12]})"
                + (f", with other packages ({', '.join(moved)})" if moved else "")
                + ", or other settings: pass a new --work, or remove the folder to start over"
            )
        return
    folder.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(provenance(settings), indent=1) + "\n", encoding="utf-8")


def main() -> int:
    from transformers.utils import logging as hf_logging

    from unlearnkit.pipelines.quickstart import method_overrides
    from unlearnkit.pipelines.sweep import (
        SweepSettings,
        ensure_reference,
        load_context,
        recipe_values,
        run_settings,
        run_sweep,
    )

    args = parse_args()
    hf_logging.disable_progress_bar()
    torch.set_num_threads(args.threads)

    def log(msg: str) -> None:
        print(msg, flush=True)

    if args.markdown_only:
        data = json.loads((RESULTS / f"{args.result_name}.json").read_text(encoding="utf-8"))
        made = data.pop("provenance", None) or unrecorded(data.get("date", "?"))
        # Rebuilt from its own numbers: the run's provenance is kept, not replaced by this code's.
        write_result(args.result_name, markdown(data), data, data["command"], made=made)
        return 0
    if args.rewrite_recipes:
        for method in [m.strip() for m in args.methods.split(",") if m.strip()]:
            if (Path(args.work) / method / "best.yaml").is_file():
                write_recipe(
                    method,
                    Path(args.work) / method,
                    time.strftime("%Y-%m-%d"),
                    _recorded(args, method),
                    args.world_seed,
                )
                log(f"wrote {CONFIGS / f'{method}.yaml'}")
        return 0
    seeds = [int(s) for s in args.seeds.split(",") if s.strip()]
    command = "python bench/sweep.py " + " ".join(sys.argv[1:])
    world_dir, target, oracle = models(args, log)
    data: dict = {
        "date": time.strftime("%Y-%m-%d"),
        "command": command,
        "trials": args.trials,
        "budget_minutes": args.budget_minutes,
        "seeds": seeds,
        "world_seed": args.world_seed,
        "max_items": args.max_items,
        "max_new_tokens": args.max_new_tokens,
        "jobs": args.jobs,
        "result_name": args.result_name,
        "methods": {},
    }

    described = {
        "split_seed": 0,
        "world_seed": args.world_seed,
        "seeds": seeds,
        "trials": args.trials,
        "jobs": args.jobs,
        "budget_minutes": args.budget_minutes,
        "max_items": args.max_items,
        "max_new_tokens": args.max_new_tokens,
        "lab_version": LAB_VERSION,  # the recipes of the tuning world's base, target and oracle
    }

    def save() -> None:
        write_result(args.result_name, markdown(data), data, command, described)

    for method in [m.strip() for m in args.methods.split(",") if m.strip()]:
        entry: dict = {}
        data["methods"][method] = entry
        settings = SweepSettings(
            model=str(target),
            data=str(world_dir),
            method=method,
            output=str(Path(args.work) / method),
            retain_model=str(oracle),
            trials=args.trials,
            jobs=args.jobs,
            space=str(SPACES / f"{method}.yaml"),
            seed=0,
            max_items=args.max_items,
            max_new_tokens=args.max_new_tokens,
            budget_minutes=args.budget_minutes,
        )
        check_work(
            Path(settings.output),
            {"method": method, "max_items": args.max_items, "max_new_tokens": args.max_new_tokens},
        )
        resumed = (Path(settings.output) / "sweep.json").is_file()  # as run_sweep tells a resumed study
        t0 = time.time()
        log(f"== sweep {method}")
        summary = run_sweep(settings, log)
        entry["sweep_minutes"] = (time.time() - t0) / 60  # this run's wall time, not the trials'
        entry["trial_minutes"] = trial_minutes(Path(settings.output))
        entry["resumed"] = resumed
        entry["trials"] = summary["trials"]
        entry["rule"] = summary["rule"]
        entry["reference"] = {k: summary["test"][k] for k in ("target", "oracle") if k in summary["test"]}
        if summary.get("chosen_trial") is None:
            save()
            continue
        entry["chosen"] = summary["chosen_params"]
        entry["chosen_selection"] = summary["chosen_selection_metrics"]
        save()

        ctx = load_context(settings)
        ensure_reference(ctx, log)
        entry["reference_selection"] = {
            k: ctx.reference[f"{k}_selection"]
            for k in ("target", "oracle")
            if f"{k}_selection" in ctx.reference
        }
        entry["tuned"], entry["shared"] = [], []
        for seed in seeds:
            for recipe in ("tuned", "shared"):
                values = (
                    recipe_values(ctx, summary["chosen_params"], seed)
                    if recipe == "tuned"
                    else method_overrides(method, seed, tuned=False)
                )
                t1 = time.time()
                halves = run_settings(
                    ctx, values, Path(args.work) / f".{method}-{recipe}-{seed}", ("selection", "test")
                )
                metrics = halves["test"]
                log(
                    f"  {method} {recipe} seed {seed} ({time.time() - t1:.0f}s): "
                    + ", ".join(f"{k} {metrics[k]:.4g}" for k in COLUMNS)
                    + " [test half]"
                )
                entry[recipe].append(seed_row(halves, seed))
                save()
        better = decide(entry)
        recipe_file = CONFIGS / f"{method}.yaml"
        if not args.no_write_configs:
            if better:
                write_recipe(method, Path(settings.output), data["date"], entry["verdict"], args.world_seed)
            elif recipe_file.is_file():
                recipe_file.unlink()  # a recipe that does not beat the shared one is not used
        save()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
