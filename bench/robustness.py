"""Robust forgetting on the embedded world: does the forgetting survive the relearning attack, and at
what compute? GD, NPO, ASU and T-NPO, each plain, with SAM on the forget term (Fan et al., arXiv
2502.05374) and with UNDO (unlearn, noise toward a fresh init, distill; Lee et al., arXiv 2506.06278)
at alpha 0.25 / 0.5 / 0.75 / 1.0, plus the retain oracle (retraining without the forget set).

    python bench/robustness.py                                   # the whole grid, 3 seeds
    python bench/robustness.py --seeds 0 --only npo,npo+undo1.0  # a reduced run
    python bench/robustness.py --report                          # only re-assemble from cached runs

Per configuration and seed: the TOFU-protocol evaluation (forget ROUGE-L, forget quality, model
utility), the audit's relearning attack on the held-out half of the forget set, unchanged from
``unlearnkit audit`` (lr 1e-3, batch 8, half of the forget items, seeded split) measured after 5, 10
and 20 steps, its Min-K% membership-inference AUC, and the training compute as a fraction of the retain
oracle's fine-tuning compute (``unlearnkit.train.compute``). ``relearn_gap_20`` = relearned forget ROUGE-L
after 20 steps minus the oracle's, same seed. UNDO distils for 20 x alpha epochs (``distill_epochs``).

The seeds vary the unlearning run, the student's initialisation and data order, and the audit's
relearning split; the world, the target and the oracle are those of ``--seed`` (default 0) for every
seed, so the spread is that of the methods and the attack, not of the world.

Each (configuration, seed) is cached in ``.bench_work/robustness/runs/`` as soon as it finishes (the
plain models too, as the UNDO teachers), so an interrupted run resumes where it stopped, and the results
(``bench/results/robustness.{md,json,png}``) are rewritten after every run. A cached run is reused only
when it was made by this commit with this ``src/`` (hash) and the same settings (``run_settings``;
``_common.RunCache``): a code change re-runs it, and ``--report`` assembles only such runs.
"""

from __future__ import annotations

import math
import sys
import time
import traceback
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import RESULTS, TINY_EXTRA, RunCache, embedded_settings, parser, previous, setup, write_result  # noqa: E402

from unlearnkit.data import Benchmark  # noqa: E402
from unlearnkit.errors import UserError  # noqa: E402
from unlearnkit.evaluation.audit import AuditSettings, run_audit  # noqa: E402

# The best TokenUnlearn variant on this world (BENCHMARKS.md): T-NPO has the highest forget quality of
# the token-level variants in the quickstart table (0.28) and the lowest relearned ROUGE in the audit.
METHODS = ("gd", "npo", "asu", "t-npo")
ALPHAS = (0.25, 0.5, 0.75, 1.0)
SEEDS = (0, 1, 2)
RELEARN_STEPS = (5, 10, 20)  # the audit's attack, measured up to the summary point (20)
WORK = Path(".bench_work") / "robustness"
NAME = "robustness"
WORLD_SEED = 0  # --seed: the world, target and oracle every run starts from (set by main)


def sam_rho_for(method: str) -> float:
    """SAM radius on the tiny model. Fan et al. use rho around 1e-3..1e-2 for 7B models (relative to
    weight norms far smaller per coordinate than here); the tiny model's weights are O(0.1-1) per
    coordinate, so a radius of 0.05 is a comparable, visible perturbation. Set once, not tuned."""
    return 0.05


DISTILL_EPOCHS = 20.0  # at alpha 1; pinned (half the oracle's 40 epochs), whatever distill's default


def distill_epochs(alpha: float) -> float:
    """Distillation length at noise ``alpha``: ``DISTILL_EPOCHS`` (a fresh student at alpha 1) times
    alpha. A less noised student starts closer to the teacher and has less to relearn; that is what
    makes alpha the compute knob of UNDO (arXiv 2506.06278). With a fixed length every alpha would cost
    the same and the frontier would have one compute value."""
    return DISTILL_EPOCHS * float(alpha)


def configs(methods=METHODS, alphas=ALPHAS) -> list[str]:
    out = ["oracle"]
    for m in methods:
        out += [m, f"{m}+sam", *[f"{m}+undo{a:g}" for a in alphas]]
    return out


def priority(cfgs: list[str], seeds: list[int]) -> list[tuple[str, int]]:
    """Run order for a time-boxed run (an UNDO run costs 5-20x a plain one): on the first seed the
    oracle and every plain method, then UNDO at alpha 1 and 0.5, then SAM; then the cheap rows (oracle,
    plain, SAM) on the other seeds; then the other seeds of the three UNDO points (alpha 1, 0.5) with the
    smallest first-seed relearn_gap_20; then alpha 0.25 / 0.75 on the first seed; then the rest."""
    first, others = seeds[:1], seeds[1:]
    gap = _first_seed_gaps(first[0]) if first else {}

    def kind(cfg: str) -> str:
        if cfg == "oracle" or "+" not in cfg:
            return "plain"
        if cfg.endswith("+undo1") or cfg.endswith("+undo0.5"):
            return "undo-main"
        return "sam" if cfg.endswith("+sam") else "undo-other"

    def of(k: str, by_gap: bool = False) -> list[str]:
        chosen = [c for c in cfgs if kind(c) == k]
        return sorted(chosen, key=lambda c: gap.get(c, math.inf)) if by_gap else chosen

    main_by_gap = of("undo-main", by_gap=True)
    phases = [
        (first, of("plain")),
        (first, of("undo-main")),
        (first, of("sam")),
        (others, of("plain") + of("sam")),
        (others, main_by_gap[:3]),  # 3 seeds for the best points first
        (first, of("undo-other")),  # then the rest of the frontier on one seed
        (others, main_by_gap[3:]),
        (others, of("undo-other", by_gap=True)),
    ]
    order: list[tuple[str, int]] = []
    for phase_seeds, phase_cfgs in phases:
        if phase_seeds is others:
            order += [(c, s) for c in phase_cfgs for s in phase_seeds]  # a configuration's seeds together
        else:
            order += [(c, s) for s in phase_seeds for c in phase_cfgs]
    return order


def _first_seed_gaps(seed: int) -> dict[str, float]:
    runs = {r["config"]: r for r in load_runs() if r["seed"] == seed}
    if "oracle" not in runs:
        return {}
    base = runs["oracle"]["relearn_rouge_20"]
    return {c: r["relearn_rouge_20"] - base for c, r in runs.items()}


def parse(cfg: str) -> tuple[str, str | None, float | None]:
    """``"npo+undo0.5"`` -> ``("npo", "undo", 0.5)``; ``"npo+sam"`` -> ``("npo", "sam", None)``."""
    if "+" not in cfg:
        return cfg, None, None
    method, extra = cfg.split("+", 1)
    if extra == "sam":
        return method, "sam", None
    if extra.startswith("undo"):
        return method, "undo", float(extra[4:])
    raise UserError(f"unknown configuration {cfg!r}: use METHOD, METHOD+sam or METHOD+undoALPHA")


# ------------------------------------------------------------------------------------------- runs


def _audit_bench(bench) -> Benchmark:
    """The benchmark as the audit sees it, without the paraphrase probes (not part of this table)."""
    forget = [{"question": r["question"], "answer": r["answer"]} for r in bench.forget]
    return Benchmark(path=bench.path, forget=forget, retain=bench.retain, holdout=bench.holdout)


def _audit(model, tok, emb, seed: int) -> dict:
    st = AuditSettings(
        relearn_steps=RELEARN_STEPS, quant_bits=(), max_items=100, max_new_tokens=48, seed=seed
    )
    audit = run_audit(model, tok, _audit_bench(emb.bench), settings=st)
    m = audit["measured"]["audited"]
    return {
        "relearn_curve": m["relearn"],
        "relearn_rouge_20": m["relearn"]["20"]["rougeL_recall"],
        "audit_mia_min_k_auc": m.get("mia_min_k_auc"),
        "audit_mia_loss_auc": m.get("mia_loss_auc"),
    }


def _oracle_cost(emb) -> dict:
    """The retain oracle's fine-tuning compute: as recorded in its folder (``unlearnkit.json``) when this
    version trained it; for an oracle cached before compute was counted, counted from its recipe the way
    :class:`unlearnkit.train.compute.ComputeCounter` counts a fine-tuning run: every epoch passes each training
    row's tokens once forward and once backward (``cost = forward + 2 * backward``)."""
    from unlearnkit.train.compute import cost_of, model_compute

    try:
        return {**model_compute(emb.oracle_dir), "source": "recorded"}
    except UserError:
        pass
    from unlearnkit.data.encode import PromptFormat
    from unlearnkit.train.finetune import default_config, training_rows
    from unlearnkit.train.trainer import encode_rows

    _, tok = emb.load_target()
    cfg = default_config(True, {"seed": emb.seed})
    rows = training_rows(emb.bench, "retain")
    encoded = encode_rows(rows, tok, PromptFormat.for_tokenizer(tok, cfg.prompt_format), cfg.max_length)
    per_epoch = sum(len(e["input_ids"]) for e in encoded)
    if cfg.max_steps > 0 or float(cfg.epochs) != int(cfg.epochs):
        raise UserError("the oracle recipe is not a whole number of epochs: cannot count its compute")
    tokens = per_epoch * int(cfg.epochs)
    return {
        "forward_tokens": tokens,
        "backward_tokens": tokens,
        "cost": cost_of(tokens, tokens),
        "source": f"counted from the recipe ({int(cfg.epochs)} epochs x {per_epoch} tokens)",
    }


def _cost(compute_dict) -> float | None:
    if not compute_dict:
        return None
    value = compute_dict.get("cost")
    return float(value) if value is not None else None


def run_one(cfg: str, seed: int, emb, oracle_cost: float | None) -> dict:
    from unlearnkit.evaluation.evaluate import evaluate
    from unlearnkit.models import load, save_model
    from unlearnkit.quickstart import method_overrides

    t0 = time.time()
    tok = emb.load_target()[1]
    out: dict = {"config": cfg, "seed": seed}
    if cfg == "oracle":
        model, tok = load(str(emb.oracle_dir))
        metrics = dict(emb.results["oracle"])
        out["compute"] = {"cost": oracle_cost}
    else:
        method, extra, alpha = parse(cfg)
        # The shared tiny recipe (the quality table's), never a swept one from configs/tiny/: the grid
        # must not change under a run when a sweep writes a new recipe.
        overrides = {
            **method_overrides(method, seed, tuned=False),
            **TINY_EXTRA.get(method, {}),
            "seed": seed,
        }
        if extra == "undo":
            from unlearnkit.train.distill import distill

            teacher_dir = WORK / "models" / f"{method}__s{seed}"
            # The plain run saves its model; its cache entry says whether that model is this code's.
            plain = run_cached(method, seed, emb, oracle_cost)
            if not (teacher_dir / "config.json").is_file():  # cached run, model deleted: make both again
                _cache().path(f"{method}__s{seed}").unlink()
                plain = run_cached(method, seed, emb, oracle_cost)
            teacher, tok = load(str(teacher_dir))
            res = distill(
                teacher,
                tok,
                emb.bench,
                noise=alpha,
                overrides={"seed": seed, "epochs": distill_epochs(alpha), "retain_nll_weight": DISTILL_NLL},
                work_dir=WORK / "tmp" / cfg,
                quiet=True,
            )
            model = res.model
            metrics, _ = evaluate(model, tok, emb.bench, emb.settings, emb.oracle_trs)
            teacher_cost, distill_cost = _cost(plain.get("compute")), _cost(res.compute)
            out["compute"] = {
                "cost": None if teacher_cost is None or distill_cost is None else teacher_cost + distill_cost,
                "teacher_cost": teacher_cost,
                "distill": res.compute,
                "distill_steps": res.steps,
            }
            out["distill_settings"] = res.settings
            del teacher
        else:
            if extra == "sam":
                overrides["sam_rho"] = sam_rho_for(method)
            metrics, res = emb.run_method(method, WORK / "tmp" / cfg, overrides, row=cfg, keep_model=True)
            model = res.model
            out["compute"] = getattr(res, "compute", None)
            out["unlearn_settings"] = overrides
            if extra is None:
                save_model(model, tok, WORK / "models" / f"{method}__s{seed}", {"kind": cfg}, overwrite=True)
    out["metrics"] = {k: v for k, v in metrics.items() if isinstance(v, (int, float)) or v is None}
    out.update(_audit(model, tok, emb, seed))
    cost = _cost(out.get("compute"))
    out["compute_fraction"] = None if cost is None or not oracle_cost else cost / oracle_cost
    out["wall_seconds"] = round(time.time() - t0, 1)
    del model
    return out


DISTILL_NLL = 3.0  # retain_nll_weight, pinned: the cache must not mix runs made under different defaults


def run_settings(cfg: str, seed: int) -> dict:
    """Everything a run of ``cfg`` at ``seed`` depends on besides the code (the cache key's settings)."""
    from unlearnkit.quickstart import method_overrides

    method, extra, alpha = parse(cfg)
    out = {
        "config": cfg,
        "seed": seed,
        "embedded": embedded_settings(SimpleNamespace(seed=WORLD_SEED), max_items=100),
        "audit": {"relearn_steps": list(RELEARN_STEPS), "max_items": 100, "max_new_tokens": 48},
    }
    if cfg != "oracle":
        out["unlearn"] = {
            **method_overrides(method, seed, tuned=False),
            **TINY_EXTRA.get(method, {}),
            "seed": seed,
        }
    if extra == "sam":
        out["sam_rho"] = sam_rho_for(method)
    if extra == "undo":
        out["distill"] = {"noise": alpha, "epochs": distill_epochs(alpha), "retain_nll_weight": DISTILL_NLL}
    return out


def _cache() -> RunCache:
    return RunCache(WORK / "runs")


def cached(cfg: str, seed: int) -> dict | None:
    """The finished run of ``cfg`` at ``seed``, or None: missing, or made by other code (commit or
    ``src/`` hash) or with other settings than this script asks for now."""
    return _cache().get(f"{cfg}__s{seed}", run_settings(cfg, seed))


def run_cached(cfg: str, seed: int, emb, oracle_cost: float | None) -> dict:
    done = cached(cfg, seed)
    if done is not None:
        return done
    print(f"[{time.strftime('%H:%M:%S')}] {cfg} seed {seed} ...", flush=True)
    result = run_one(cfg, seed, emb, oracle_cost)
    _cache().put(f"{cfg}__s{seed}", run_settings(cfg, seed), result)  # a run counts only once complete
    m = result["metrics"]
    print(
        f"  {cfg} s{seed}: forget ROUGE {m.get('forget_rougeL_recall'):.3f}, utility "
        f"{m.get('model_utility'):.3f}, relearned@20 {result['relearn_rouge_20']:.3f}, compute "
        f"{_fmt(result.get('compute_fraction'))} of the oracle's, {result['wall_seconds']:.0f}s",
        flush=True,
    )
    return result


# ------------------------------------------------------------------------------------ aggregation


COLUMNS = (
    ("compute_fraction", "compute / oracle"),
    ("relearn_gap_20", "relearn_gap_20"),
    ("relearn_rouge_20", "relearned forget ROUGE @20"),
    ("forget_rougeL_recall", "forget ROUGE"),
    ("forget_quality", "forget quality"),
    ("model_utility", "model utility"),
    ("mia_min_k_auc", "MIA AUC (Min-K%)"),
)


def load_runs() -> list[dict]:
    """Every cached run that this code, with these settings, would reuse."""
    runs = []
    for path in sorted((WORK / "runs").glob("*__s*.json")):
        cfg, _, seed = path.stem.rpartition("__s")
        try:
            parse(cfg)
            done = cached(cfg, int(seed))
        except (UserError, ValueError):
            continue
        if done is not None:
            runs.append(done)
    return runs


def aggregate(runs: list[dict], order: list[str]) -> dict[str, dict]:
    """Per configuration: mean, sample standard deviation and n over the seeds that finished."""
    oracle_20 = {r["seed"]: r["relearn_rouge_20"] for r in runs if r["config"] == "oracle"}
    per: dict[str, dict[str, list[float]]] = {}
    seeds: dict[str, list[int]] = {}
    for r in runs:
        if r["seed"] not in oracle_20:
            continue  # the gap needs the same seed's oracle
        values = {
            "compute_fraction": r.get("compute_fraction"),
            "relearn_gap_20": r["relearn_rouge_20"] - oracle_20[r["seed"]],
            "relearn_rouge_20": r["relearn_rouge_20"],
            "forget_rougeL_recall": r["metrics"].get("forget_rougeL_recall"),
            "forget_quality": r["metrics"].get("forget_quality"),
            "model_utility": r["metrics"].get("model_utility"),
            "mia_min_k_auc": r.get("audit_mia_min_k_auc"),
        }
        if r["config"] == "oracle":
            values["compute_fraction"] = 1.0
        seeds.setdefault(r["config"], []).append(r["seed"])
        for k, v in values.items():
            if v is not None and math.isfinite(v):
                per.setdefault(r["config"], {}).setdefault(k, []).append(float(v))
    out = {}
    for cfg in [c for c in order if c in per] + sorted(set(per) - set(order)):
        row = {"seeds": sorted(seeds[cfg])}
        for key, _ in COLUMNS:
            xs = per[cfg].get(key, [])
            row[key] = sum(xs) / len(xs) if xs else None
            row[f"{key}_sd"] = _sd(xs)
        out[cfg] = row
    return out


def _sd(xs: list[float]) -> float | None:
    if len(xs) < 2:
        return None
    mu = sum(xs) / len(xs)
    return math.sqrt(sum((x - mu) ** 2 for x in xs) / (len(xs) - 1))


def pareto(table: dict[str, dict]) -> list[str]:
    """Configurations no other one beats on both compute fraction and relearn_gap_20 (lower is better)."""
    pts = {
        c: (r["compute_fraction"], r["relearn_gap_20"])
        for c, r in table.items()
        if r.get("compute_fraction") is not None and r.get("relearn_gap_20") is not None
    }
    front = []
    for c, (x, y) in pts.items():
        dominated = any(
            (x2 <= x and y2 <= y) and (x2 < x or y2 < y) for c2, (x2, y2) in pts.items() if c2 != c
        )
        if not dominated:
            front.append(c)
    return sorted(front, key=lambda c: pts[c][0])


def claims(table: dict[str, dict]) -> list[str]:
    """The two targets of issue 11, stated from the table's means (never edited by hand)."""
    lines = []
    oracle = table.get("oracle")
    plains = {c: r for c, r in table.items() if c in METHODS and r.get("relearn_gap_20") is not None}
    if not oracle or oracle.get("model_utility") is None:
        return ["- The oracle has not been run yet: no target can be judged."]
    floor = 0.95 * oracle["model_utility"]
    ok = [
        c
        for c, r in table.items()
        if c != "oracle"
        and r.get("relearn_gap_20") is not None
        and r["relearn_gap_20"] <= 0.10
        and (r.get("model_utility") or 0.0) >= floor
    ]
    if ok:
        best = min(ok, key=lambda c: table[c].get("compute_fraction") or math.inf)
        lines.append(
            f"- **Target 1 met** (relearn_gap_20 <= 0.10 with model utility >= 0.95x the oracle's "
            f"{oracle['model_utility']:.3f}, i.e. >= {floor:.3f}): "
            + ", ".join(_describe(c, table[c]) for c in ok)
            + f". Cheapest: `{best}` at {_fmt(table[best].get('compute_fraction'), 2)} of the oracle's compute."
            + _margin(table[best], floor)
            + _firm(table, ok, floor)
        )
    else:
        robust = [c for c, r in table.items() if c != "oracle" and r.get("relearn_gap_20") is not None]
        closest = min(robust, key=lambda c: table[c]["relearn_gap_20"]) if robust else None
        useful = [c for c in robust if (table[c].get("model_utility") or 0.0) >= floor]
        best_useful = min(useful, key=lambda c: table[c]["relearn_gap_20"]) if useful else None
        bits = [
            f"- **Target 1 missed**: no configuration has relearn_gap_20 <= 0.10 and model utility >= {floor:.3f}"
        ]
        bits.append(f" (0.95x the oracle's {oracle['model_utility']:.3f}).")
        if closest:
            bits.append(f" Smallest gap: {_describe(closest, table[closest])}.")
        if best_useful:
            bits.append(
                f" Smallest gap among those keeping the utility: {_describe(best_useful, table[best_useful])}."
            )
        lines.append("".join(bits))
    if plains:
        best_plain = min(plains, key=lambda c: plains[c]["relearn_gap_20"])
        half = plains[best_plain]["relearn_gap_20"] / 2
        halving = [
            c
            for c, r in table.items()
            if c not in ("oracle", best_plain)
            and r.get("relearn_gap_20") is not None
            and r["relearn_gap_20"] <= half
            and r.get("compute_fraction") is not None
        ]
        if halving:
            cheapest = min(halving, key=lambda c: table[c]["compute_fraction"])
            lines.append(
                f"- **Target 2 met**: the best plain method is `{best_plain}` (relearn_gap_20 "
                f"{plains[best_plain]['relearn_gap_20']:.3f}); the cheapest configuration at or below half of "
                f"it ({half:.3f}) is {_describe(cheapest, table[cheapest])}."
            )
        else:
            lines.append(
                f"- **Target 2 missed**: the best plain method is `{best_plain}` (relearn_gap_20 "
                f"{plains[best_plain]['relearn_gap_20']:.3f}); no configuration run so far reaches half of it "
                f"({half:.3f})."
            )
    else:
        lines.append("- No plain method has been run yet: target 2 cannot be judged.")
    return lines


def _margin(r: dict, floor: float) -> str:
    """How firm a 'met' is: one seed, or a spread that reaches across a threshold, is said so."""
    if len(r["seeds"]) < 2:
        return " One seed only: no spread, so this is not yet a claim."
    bits = []
    if r.get("model_utility_sd") is not None and r["model_utility"] - r["model_utility_sd"] < floor:
        bits.append(f"its utility's spread reaches below {floor:.3f}")
    if r.get("relearn_gap_20_sd") is not None and r["relearn_gap_20"] + r["relearn_gap_20_sd"] > 0.10:
        bits.append("its gap's spread reaches above 0.10")
    return (" Marginal: " + " and ".join(bits) + ".") if bits else " Mean ± sd clear both thresholds."


def _firm(table: dict[str, dict], ok: list[str], floor: float) -> str:
    firm = [c for c in ok if _margin(table[c], floor).endswith("clear both thresholds.")]
    if not firm:
        return " None of them clears both thresholds by a standard deviation."
    return " Clear by mean ± sd on both: " + ", ".join(f"`{c}`" for c in firm) + "."


def _describe(cfg: str, r: dict) -> str:
    return (
        f"`{cfg}` (gap {_pm(r, 'relearn_gap_20')}, utility {_pm(r, 'model_utility')}, "
        f"compute {_pm(r, 'compute_fraction', 2)}x the oracle's, n={len(r['seeds'])})"
    )


def _fmt(x, digits: int = 3) -> str:
    return "–" if x is None else f"{x:.{digits}f}"


def _pm(r: dict, key: str, digits: int = 3) -> str:
    mean, sd = r.get(key), r.get(f"{key}_sd")
    if mean is None:
        return "–"
    if key == "forget_quality":
        return f"{mean:.1e}" + (f" ± {sd:.1e}" if sd is not None else "")
    return f"{mean:.{digits}f}" + (f" ± {sd:.{digits}f}" if sd is not None else "")


def plot(table: dict[str, dict], front: list[str], path: Path) -> None:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(9.5, 5.5), dpi=120, layout="constrained")
    ax = fig.add_subplot()
    colours = {"gd": "#1f77b4", "npo": "#ff7f0e", "asu": "#2ca02c", "t-npo": "#9467bd", "oracle": "#1e8449"}
    markers = {None: "o", "sam": "^", "undo": "s"}
    for cfg, r in table.items():
        x, y = r.get("compute_fraction"), r.get("relearn_gap_20")
        if x is None or y is None:
            continue
        method, extra, alpha = parse(cfg) if cfg != "oracle" else ("oracle", None, None)
        style = dict(color=colours.get(method, "#555555"), marker="*" if cfg == "oracle" else markers[extra])
        ax.errorbar(
            x,
            y,
            xerr=r.get("compute_fraction_sd") or 0.0,
            yerr=r.get("relearn_gap_20_sd") or 0.0,
            ms=14 if cfg == "oracle" else 7,
            linestyle="none",
            capsize=2,
            elinewidth=0.8,
            markeredgecolor="black",
            markeredgewidth=0.5,
            **style,
        )
        if cfg in front:
            ax.scatter([x], [y], s=260, facecolors="none", edgecolors="#d62728", linewidths=1.6, zorder=4)
        # Same-alpha points of the four methods sit together: each method labels toward its own corner.
        dx, dy = {"gd": (6, 7), "npo": (6, -11), "asu": (-6, 7), "t-npo": (-6, -11)}.get(method, (6, 4))
        ha = "left" if dx > 0 else "right"
        ax.annotate(cfg, (x, y), xytext=(dx, dy), textcoords="offset points", fontsize=7, ha=ha)
    pts = sorted((table[c]["compute_fraction"], table[c]["relearn_gap_20"]) for c in front)
    if len(pts) > 1:
        ax.step(
            [p[0] for p in pts], [p[1] for p in pts], where="post", color="#d62728", linewidth=1, alpha=0.7
        )
    ax.axhline(0.10, color="#888888", linestyle="--", linewidth=0.8)
    ax.text(0.01, 0.10, " target gap 0.10", transform=ax.get_yaxis_transform(), fontsize=8, va="bottom")
    ax.axhline(0.0, color="#1e8449", linewidth=0.6)
    ax.set_xscale("log")
    ax.set_xlabel("training compute as a fraction of the retain oracle's (log scale)")
    ax.set_ylabel("relearn_gap_20 (forget ROUGE-L @20 steps - oracle)")
    ax.set_title("Robustness vs compute (mean ± sd over seeds; red rings: Pareto-optimal)")
    ax.grid(True, which="both", alpha=0.25)
    from matplotlib.lines import Line2D

    handles = [
        Line2D([], [], color=c, marker="o", linestyle="none", label=m)
        for m, c in colours.items()
        if m != "oracle"
    ]
    handles += [
        Line2D([], [], color="#555555", marker=mk, linestyle="none", label=lab)
        for mk, lab in (("o", "plain"), ("^", "+sam"), ("s", "+undo (alpha in the label)"))
    ]
    handles.append(Line2D([], [], color="#1e8449", marker="*", ms=12, linestyle="none", label="oracle"))
    handles.append(
        Line2D([], [], marker="o", ms=12, markerfacecolor="none", markeredgecolor="#d62728", linestyle="none",
               label="Pareto-optimal")
    )  # fmt: skip
    ax.legend(handles=handles, loc="center left", bbox_to_anchor=(1.01, 0.5), fontsize=8)
    tmp = path.with_suffix(".tmp.png")
    fig.savefig(tmp, format="png")
    tmp.replace(path)


def report(order: list[str], emb_info: dict, command: str) -> None:
    runs = load_runs()
    table = aggregate(runs, order)
    if not table:
        print("no finished runs yet")
        return
    front = pareto(table)
    RESULTS.mkdir(exist_ok=True)
    plot(table, front, RESULTS / f"{NAME}.png")
    head = "| configuration | n | " + " | ".join(label for _, label in COLUMNS) + " | Pareto |"
    lines = [head, "|---|---:|" + "---:|" * len(COLUMNS) + "---|"]
    for cfg, r in table.items():
        cells = [_pm(r, key, 2 if key == "compute_fraction" else 3) for key, _ in COLUMNS]
        lines.append(
            f"| {cfg} | {len(r['seeds'])} | " + " | ".join(cells) + f" | {'yes' if cfg in front else ''} |"
        )
    missing = [c for c in order if c not in table]
    run_seeds = sorted({s for r in table.values() for s in r["seeds"]})
    md = [
        "## Robust forgetting: the relearning attack against compute",
        "",
        "Does the forgetting survive fine-tuning? Each configuration unlearns the embedded world's 100 forget "
        "items from the tiny target with the quality table's shared tiny recipe (lr 5e-4, 5 epochs, batch 8; "
        "ASU tau 5, lambda 1; not the swept configs/tiny/ recipes); the audit's relearning attack (unchanged: lr 1e-3, batch 8, constant "
        "schedule, 50 of the forget items, seeded split) then fine-tunes a copy for 20 steps and asks the "
        "other 50 forget questions. `relearn_gap_20` = its forget ROUGE-L minus the retain oracle's under "
        "the same attack (0 = as robust as never having seen the data). Compute = forward + backward tokens "
        "of every training pass (UNDO: the unlearning run plus the distillation) as a fraction of the "
        "oracle's fine-tuning. `+sam`: SAM on the forget term (arXiv 2502.05374), rho "
        f"{sam_rho_for('npo'):g}. `+undoA`: the plain model distilled into a student noised toward a fresh "
        "init by alpha A (arXiv 2506.06278) for 20 x A epochs of the retain + general questions (KL to the "
        f"teacher + {DISTILL_NLL:g} x retain NLL; `unlearnkit distill` defaults otherwise). Mean ± sample sd over the seeds in column n "
        f"(run seeds: {', '.join(map(str, run_seeds))}; world, target and oracle: seed "
        f"{emb_info.get('world_seed', 0)}). MIA AUC: Min-K% on forget vs holdout (0.5 = no signal).",
        "",
        "\n".join(lines),
        "",
        f"![robustness frontier](bench/results/{NAME}.png)",
        "",
        "### What the numbers say",
        "",
        *claims(table),
        "",
    ]
    if missing:
        md += [f"Not run (time-boxed): {', '.join(f'`{c}`' for c in missing)}.", ""]
    data = {"table": table, "pareto": front, "runs": runs, "missing": missing, **emb_info}
    write_result(
        NAME,
        "\n".join(md),
        data,
        command,
        {"world_seed": emb_info.get("world_seed", 0), "seeds": run_seeds, "configurations": len(table)},
    )


def main() -> None:
    global WORK, WORLD_SEED
    p = parser(__doc__)
    p.add_argument("--seeds", default=",".join(map(str, SEEDS)), help="run seeds (default: %(default)s)")
    p.add_argument("--methods", default=",".join(METHODS))
    p.add_argument("--alphas", default=",".join(f"{a:g}" for a in ALPHAS))
    p.add_argument("--only", default=None, help="comma-separated configurations, e.g. npo,npo+undo1")
    p.add_argument("--report", action="store_true", help="only re-assemble the results from cached runs")
    p.add_argument("--work", default=str(WORK), help="cache of finished runs (default: %(default)s)")
    args = p.parse_args()
    WORK = Path(args.work)
    WORLD_SEED = args.seed
    methods = [m for m in args.methods.split(",") if m]
    alphas = [float(a) for a in args.alphas.split(",") if a]
    order = configs(methods, alphas)
    wanted = order if not args.only else ["oracle", *[c for c in args.only.split(",") if c and c != "oracle"]]
    for cfg in wanted:
        parse(cfg)
    seeds = [int(s) for s in args.seeds.split(",")]
    command = "python bench/robustness.py " + " ".join(sys.argv[1:])
    info = {"world_seed": args.seed, "relearn_steps": list(RELEARN_STEPS)}
    if args.report:
        info["oracle_compute"] = previous(NAME, {"world_seed": args.seed}, keys=("world_seed",)).get(
            "oracle_compute"
        )
        report(order, info, command.strip())
        return
    emb = setup(args, max_items=100)
    oracle_compute = _oracle_cost(emb)
    oracle_cost = _cost(oracle_compute)
    info["oracle_compute"] = oracle_compute
    done: set[tuple[str, int]] = set()
    while True:
        todo = [job for job in priority(wanted, seeds) if job not in done]
        if not todo:
            break
        cfg, seed = todo[0]
        done.add((cfg, seed))
        if cached(cfg, seed) is not None:
            continue
        try:
            run_cached(cfg, seed, emb, oracle_cost)
        except Exception:  # noqa: BLE001 - one failed configuration must not lose the others
            traceback.print_exc()
            print(f"  {cfg} seed {seed}: FAILED (see above); continuing", flush=True)
            continue
        report(order, info, command.strip())


if __name__ == "__main__":
    main()
