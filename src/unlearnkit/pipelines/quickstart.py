"""``unlearnkit quickstart``: the whole story on a miniature with a pretrained base, on a laptop CPU.

world -> base model pretrained on the world's corpus -> target and retain oracle fine-tuned from it
(all cached by content hash, see :mod:`unlearnkit.pipelines.embedded`) -> each method -> the benchmark's
protocol against the oracle -> a printed table, ``metrics.json`` and a self-contained ``report.html``
(table, trade-off plot, generations side by side, token heatmap).

The hyper-parameters below are *tiny-scale* settings: the paper defaults (e.g. lr 1e-5, tau 2.3)
are for 7B models; a 1M-parameter model needs larger steps, and its shallow attention needs a hotter
teacher (see BENCHMARKS.md for the tau sweep).
"""

from __future__ import annotations

import shutil
import time
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from unlearnkit.errors import UserError
from unlearnkit.report.generations import pick_generation_items
from unlearnkit.report.page import DEFAULT_COLUMNS as TABLE_COLUMNS

DEFAULT_METHODS = ("ga", "gd", "npo", "idk", "asu", "asu_kl", "t-npo", "s-npo")

# Shared by every method on the tiny model: 5 epochs over the forget set, batch 8. loss_reduction is
# pinned to sequence, the lab's measured convention (every BENCHMARKS.md row), where the methods'
# default is open-unlearning's token; lab models record it in their card, so `unlearn` on them keeps it.
TINY_UNLEARN = dict(
    lr=5e-4,
    epochs=5.0,
    batch_size=8,
    grad_accum=1,
    warmup_epochs=0.5,
    weight_decay=0.0,
    max_length=128,
    loss_reduction="sequence",
)
TINY_METHOD = {
    # 2 layers of attention are far shallower than Llama-2-7B's 32, so tau 2.3 barely moves the facts
    # here (forget ROUGE 0.90 under the teacher); tau 5 is where the teacher forgets but stays fluent.
    "asu": dict(tau=5.0, forget_weight=1.0),
    "asu_gd": dict(tau=5.0, forget_weight=1.0),
    "asu_kl": dict(tau=5.0, forget_weight=1.0),
    "asu_idk": dict(tau=5.0, forget_weight=1.0),
    "t-asu": dict(tau=5.0, forget_weight=1.0),
    "s-asu": dict(tau=5.0, forget_weight=1.0),
}
# RMU on a 2-layer model steers the output of layer 1 and trains both layers' MLP down projections (the
# paper: layer 7 and the down_proj of layers 5-7 of Zephyr-7B, out of range here); its steering
# coefficient and lr were measured on the WMDP-like miniature and serve every miniature (the model's
# scale, not the data, sets them), the RMU-based TokenUnlearn variants included.
_RMU_TINY = dict(layer=1, train_layers="0,1", steering_coeff=100.0, retain_weight=100.0, lr=1e-2, epochs=10.0)
TINY_METHOD.update({name: _RMU_TINY for name in ("rmu", "t-rmu", "s-rmu")})
TINY_METHOD["asu_rmu"] = {**_RMU_TINY, "tau": 5.0}
# Per miniature: the raw-text ones unlearn passages, not answers.
BENCHMARK_METHOD: dict[str, dict[str, dict]] = {
    # measured on the WMDP-like miniature (hazardous accuracy target 0.83, filtered base 0.30): RMU at
    # the 7B paper's lr / steering barely moved it (0.82); c = 100, lr 1e-2, 10 epochs gave 0.40 with
    # general accuracy 0.98 (c = 200: 0.34 / 0.92). GD and NPO at lr 1e-3: 0.40 / 0.93 and 0.60 / 0.99.
    "wmdp": {
        "rmu": _RMU_TINY,
        "asu_rmu": {**_RMU_TINY, "tau": 5.0},
        "gd": dict(lr=1e-3),
        "npo": dict(lr=1e-3),
    },
    "muse": {"rmu": _RMU_TINY},
}
METHODS_FOR = {
    "tofu": DEFAULT_METHODS,
    "muse": ("ga", "gd", "npo", "asu", "asu_kl"),
    "wmdp": ("rmu", "gd", "npo", "asu"),
}
# The quickstart's robust row: the configuration bench/robustness.py measured best on the TOFU-like
# miniature among the UNDO points (lab version 10, seeds 0-4, the attack halving the forget set by author:
# bench/results/robustness.md): `npo+undo-base0.25`, NPO's model noised 0.25 of the way toward the base and
# distilled back on retain + the general corpus. It reaches 0.95x the oracle's selection-half utility at
# its first checkpoint, 5 of its 30 epochs, on every seed (0.074x the oracle's compute), with test-half
# utility 0.588 (the oracle 0.595) and a fact-recall relearning gap of +0.040 after 250 attack steps: the
# cheapest UNDO point under the bench's bars, and the only configuration meeting its goal. Noise 1 (the row
# before lab version 10's re-run) closes the gap too but stays under the utility bar on 4 of 5 seeds after
# all 30 epochs (0.363x). The row stops the same 30-epoch schedule after those 5 epochs (``stop_epochs``),
# so its learning rate follows the bench's run.
ROBUST_TEACHER = "npo"
ROBUST_NOISE = 0.25
ROBUST_NOISE_TOWARD = "base"
ROBUST_DISTILL = dict(
    lr=5e-4,
    epochs=30.0,
    stop_epochs=5.0,
    retain_nll_weight=3.0,
    distill_on="retain,corpus",
    batch_size=32,
    grad_accum=1,
)
WORLD = dict(
    n_authors=100,
    facts_per_author=10,
    forget_fraction=0.1,
    holdout_fraction=0.1,
    n_general=100,
    n_real_authors=10,
    n_agents=12,
    n_articles=100,
)


# Tuned recipes written by bench/sweep.py: ``unlearnkit sweep`` on the world of TUNING_WORLD_SEED (its own
# base, target and oracle), chosen on the selection half of its forget authors. No report reads that
# world: the quickstart (seed 0) and the benches (seeds 0-4) score the recipes on worlds they were not
# tuned on, so every item they report is held out from the choice. Package data, read through
# importlib.resources, so a wheel or a non-editable install runs the same recipes as a checkout.
TUNED_DIR = resources.files("unlearnkit") / "resources" / "recipes" / "tiny"
TUNING_WORLD_SEED = 100


def tuned_overrides(name: str) -> dict:
    """The tuned recipe ``resources/recipes/tiny/<name>.yaml`` without its context keys ({} when there is none)."""
    from unlearnkit.config import canonical, load_recipe

    path = TUNED_DIR / f"{name}.yaml"
    if not path.is_file():
        return {}
    values = canonical(load_recipe(path), str(path))  # `lambda` as forget_weight: an override must win
    for key in ("method", "model", "data", "retain_model", "seed"):
        values.pop(key, None)
    return values


def method_overrides(name: str, seed: int, tuned: bool = True, benchmark: str = "tofu") -> dict:
    """Shared tiny-scale recipe, the method's own tiny knobs (per miniature), then (``tuned``, TOFU-like
    only: that is where bench/sweep.py tunes) its swept recipe."""
    return {
        **TINY_UNLEARN,
        "seed": seed,
        **TINY_METHOD.get(name, {}),
        **BENCHMARK_METHOD.get(benchmark, {}).get(name, {}),
        **(tuned_overrides(name) if tuned and benchmark == "tofu" else {}),
    }


def tiny_unlearn_defaults(max_length: int) -> dict:
    """The quickstart's unlearning recipe for the tiny model, recorded in its unlearnkit.json so that
    ``unlearn`` / ``continual`` on it start from settings that work at this scale (the papers' 7B
    defaults barely move a 1M-parameter model)."""
    return {
        "source": "unlearnkit quickstart's tiny-model recipe",
        "train": {**TINY_UNLEARN, "max_length": max(int(TINY_UNLEARN.get("max_length", 0)), max_length)},
        "method": TINY_METHOD,
    }


def cache_root(arg: str | None) -> Path:
    from unlearnkit.pipelines.embedded import cache_root as root

    return root(arg)


@dataclass
class Embedded:
    """One miniature, ready to run methods on: its benchmark, cached target / oracle / base, and the
    oracle's reference numbers (TOFU: per-item forget truth ratios; MUSE: its PrivLeak AUC)."""

    bench: Any
    world_dir: Path
    target_dir: Path
    oracle_dir: Path
    settings: Any
    seed: int
    base_dir: Path | None = None
    benchmark: str = "tofu"
    results: dict[str, dict] = field(default_factory=dict)
    details: dict[str, dict] = field(default_factory=dict)
    reference: dict[str, Any] = field(default_factory=dict)

    @property
    def oracle_trs(self) -> list[float]:
        return self.details["oracle"]["forget"]["truth_ratios"]

    def load_target(self):
        from unlearnkit.models import load

        return load(str(self.target_dir))

    def evaluate(self, model, tokenizer) -> tuple[dict[str, float], dict[str, Any]]:
        """The benchmark's protocol on ``model``, against the oracle (once the oracle's row exists)."""
        if self.benchmark == "tofu":
            from unlearnkit.evaluation.evaluate import evaluate

            trs = self.oracle_trs if "oracle" in self.details else None
            return evaluate(model, tokenizer, self.bench, self.settings, trs)
        if self.benchmark == "muse":
            from unlearnkit.protocols.muse import evaluate_muse, fit_to_model

            return evaluate_muse(
                model, tokenizer, self.bench, fit_to_model(model, self.settings), self.reference.get("auc")
            )
        from unlearnkit.protocols.wmdp import evaluate_local_mc

        return evaluate_local_mc(model, tokenizer, self.bench.mc_tasks, self.bench.mc_style, batch_size=32)

    def add_row(self, row: str, model, tokenizer, extra: dict | None = None) -> dict[str, float]:
        """Evaluate ``model`` as row ``row``; on TOFU also the share of its greedy forget answers that
        are empty or gibberish (``forget_gibberish``: such a row is never called best)."""
        from unlearnkit.report.generations import degenerate_share

        metrics, details = self.evaluate(model, tokenizer)
        if self.benchmark == "tofu" and "forget" in details:
            share = degenerate_share(details["forget"]["generations"])
            if share is not None:
                metrics["forget_gibberish"] = share
        metrics.update(extra or {})
        self.results[row], self.details[row] = metrics, details
        return metrics

    def run_method(
        self,
        name: str,
        work_dir: Path,
        overrides: dict | None = None,
        row: str | None = None,
        keep_model: bool = False,
        tuned: bool = True,
    ):
        """Unlearn ``name`` from a fresh copy of the target, evaluate it; store the row under ``row``.
        ``tuned=False``: the shared recipe even where ``resources/recipes/tiny/`` holds a swept one (ablations)."""
        from unlearnkit.config import canonical
        from unlearnkit.pipelines.unlearn import unlearn

        t0 = time.time()
        model, tok = self.load_target()
        values = {
            **method_overrides(name, self.seed, tuned=tuned, benchmark=self.benchmark),
            **canonical(overrides or {}, "overrides"),
        }
        res = unlearn(
            model,
            tok,
            self.bench.forget,
            self.bench.retain,
            name,
            model_path=str(self.target_dir),
            work_dir=work_dir,
            quiet=True,
            attribution_dir=work_dir / "attribution",
            **values,
        )
        metrics = self.add_row(row or name, res.model, tok, {"train_seconds": round(time.time() - t0, 1)})
        if not keep_model:
            res.model = None
        return metrics, res


def prepare_embedded(
    seed: int = 0,
    cache_dir: str | None = None,
    authors: int | None = None,
    facts: int | None = None,
    log=print,
    max_items: int = 200,
    max_new_tokens: int = 48,
    benchmark: str = "tofu",
) -> Embedded:
    """World -> base -> cached target and oracle -> the rows of the oracle (first: its numbers are the
    reference), the target and the base."""
    from unlearnkit.data.sources import resolve_data
    from unlearnkit.models import load
    from unlearnkit.pipelines.embedded import ensure_lab

    params = dict(WORLD)
    if authors is not None:
        params["n_authors"] = authors
    if facts is not None:
        params["facts_per_author"] = facts
    root = cache_root(cache_dir)
    world_dir, base_dir, target_dir, oracle_dir = ensure_lab(benchmark, root, params, seed, log)
    data_dir = world_dir if benchmark == "tofu" else world_dir / benchmark
    bench = resolve_data(data_dir, eval_fields=benchmark == "tofu")
    log(_describe_bench(benchmark, bench, data_dir))
    if benchmark == "tofu":
        from unlearnkit.evaluation.evaluate import EvalSettings

        settings: Any = EvalSettings(
            max_new_tokens=max_new_tokens, max_items=max_items, seed=seed, progress=False
        )
    else:
        from unlearnkit.protocols.muse import MuseSettings

        settings = MuseSettings(max_items=max_items, batch_size=32)
    emb = Embedded(
        bench, world_dir, target_dir, oracle_dir, settings, seed, base_dir=base_dir, benchmark=benchmark
    )
    rows = (
        {"target": target_dir, "oracle": oracle_dir}
        if benchmark == "wmdp"
        else {
            "target": target_dir,
            "oracle": oracle_dir,
            "base": base_dir,
        }
    )
    log(f"evaluating {', '.join(rows)} ...")
    oracle, otok = load(str(oracle_dir))
    if benchmark == "muse":
        from unlearnkit.protocols.muse import fit_to_model, privleak_auc

        auc, _ = privleak_auc(
            oracle,
            otok,
            [r["text"] for r in bench.extra["privleak_forget"]],
            [r["text"] for r in bench.extra["privleak_holdout"]],
            fit_to_model(oracle, settings),
        )
        emb.reference["auc"] = auc
    metrics = emb.add_row("oracle", oracle, otok)
    if benchmark == "tofu":
        metrics["forget_quality"] = 1.0  # KS test of the oracle's truth ratios against themselves
    for row in ("target", "base"):
        if row in rows:
            model, tok = load(str(rows[row]))
            emb.add_row(row, model, tok)
    emb.results = {row: emb.results[row] for row in rows}  # the table's reference rows first
    emb.details = {row: emb.details[row] for row in rows}
    return emb


def _describe_bench(benchmark: str, bench, data_dir: Path) -> str:
    if benchmark == "tofu":
        return (
            f"world: {len(bench.forget)} forget / {len(bench.retain)} retain / {len(bench.holdout)} holdout QA; "
            f"{len(bench.general)} general QA known from pretraining ({data_dir})"
        )
    if benchmark == "muse":
        return (
            f"MUSE-like: {len(bench.forget)} forget / {len(bench.retain)} retain / {len(bench.holdout)} holdout "
            f"articles, {len(bench.extra.get('knowmem_forget', []))} forget knowledge questions ({data_dir})"
        )
    tasks = ", ".join(f"{name} {len(rows)}" for name, rows in bench.mc_tasks.items())
    return (
        f"WMDP-like: {len(bench.forget)} hazardous / {len(bench.retain)} general passages; 4-choice questions: "
        f"{tasks} ({data_dir})"
    )


def best_method(results: dict[str, dict], methods: list[str]) -> str:
    """The method the report calls best (:func:`unlearnkit.report.choice.choose_best`: closest to the
    oracle on the forget side among those keeping 90 % of its utility and answering in language; of a
    tie, the first named); when none keeps it, the eligible one keeping the most utility."""
    from unlearnkit.report.choice import choose_best

    choice = choose_best(results, candidates=methods)
    return choice.row or choice.fallback or methods[0]


def audited_rows(results: dict[str, dict], teacher: str, robust_row: str) -> list[str]:
    """The rows the quickstart audits: the robust row, its plain teacher and, when it is neither, the
    row the report's verdict calls best (:func:`unlearnkit.report.choice.choose_best` over the whole
    table, as the report reads it), so the verdict never names a row the audit did not look at."""
    from unlearnkit.report.choice import choose_best

    chosen = choose_best(results).row
    return [robust_row, teacher, *([chosen] if chosen not in (None, teacher, robust_row) else [])]


HEADLINE = {
    "tofu": (("forget ROUGE", "forget_rougeL_recall"), ("fact recall", "forget_fact_recall"),
             ("utility", "model_utility"), ("forget quality", "forget_quality")),
    "muse": (("VerbMem", "verbmem_forget_rougeL_f1"), ("KnowMem forget", "knowmem_forget_rougeL_f1"),
             ("KnowMem retain", "knowmem_retain_rougeL_f1"), ("PrivLeak", "privleak")),
    "wmdp": (("hazardous acc", "wmdp_hazard_acc"), ("general acc", "mmlu_general_acc")),
}  # fmt: skip
TITLES = {
    "tofu": "unlearnkit quickstart: forgetting fictitious authors (TOFU in miniature)",
    "muse": "unlearnkit quickstart: forgetting news articles (MUSE in miniature)",
    "wmdp": "unlearnkit quickstart: forgetting a hazardous domain (WMDP in miniature)",
}


def headline(benchmark: str, metrics: dict) -> str:
    parts = []
    for label, key in HEADLINE[benchmark]:
        value = metrics.get(key)
        if isinstance(value, int | float):
            parts.append(f"{label} {value:.2g}" if key == "forget_quality" else f"{label} {value:.3f}")
    return ", ".join(parts)


def run_quickstart(args) -> int:
    import torch
    from rich.console import Console
    from transformers.utils import logging as hf_logging

    from unlearnkit.io import atomic_dir, check_output_dir, write_json
    from unlearnkit.pipelines.unlearn import resolve_configs
    from unlearnkit.report.page import print_table, write_report
    from unlearnkit.report.views import MUSE_VIEW, WMDP_VIEW
    from unlearnkit.train.methods import get_method

    hf_logging.disable_progress_bar()  # weight-loading and shard-writing bars of a 1M model are noise here
    console = Console(stderr=False)
    log = console.print
    benchmark = getattr(args, "benchmark", "tofu")
    out = check_output_dir(args.output, args.overwrite)
    names = args.methods.split(",") if args.methods else METHODS_FOR[benchmark]
    methods = [get_method(m).name for m in names if m.strip()]
    if not methods:
        raise UserError("--methods is empty; name at least one method, e.g. --methods asu,npo")
    for name in methods:  # validate every method's settings before minutes of training
        resolve_configs(name, method_overrides(name, args.seed, benchmark=benchmark))
    if (args.authors is not None and args.authors < 3) or (args.facts is not None and args.facts < 1):
        raise UserError("--authors must be >= 3 and --facts >= 1")
    torch.set_num_threads(max(1, min(torch.get_num_threads(), 8)))
    t_start = time.time()
    emb = prepare_embedded(args.seed, args.cache_dir, args.authors, args.facts, log=log, benchmark=benchmark)
    t_lab = time.time() - t_start
    for row in emb.results:
        log(f"  {row:8s} {headline(benchmark, emb.results[row])}")

    extra_sections: list[tuple[str, str]] = []
    work_root = out.parent / f".{out.name}.work"
    used: dict[str, dict] = {}
    unlearned: dict[str, Any] = {}  # tiny models, kept for the audit (the robust row's teacher, the best)
    t_audit = 0.0
    audit_on = not args.no_audit and benchmark == "tofu"
    robust_on = bool(getattr(args, "robust", False)) and benchmark == "tofu"

    def record(name: str, metrics: dict, res, model) -> None:
        unlearned[name] = model if benchmark == "tofu" else None
        used[name] = res.config
        log(f"  {name:8s} unlearned in {metrics['train_seconds']:5.1f}s: {headline(benchmark, metrics)}")
        heatmap = work_root / name / "attribution" / "heatmap.html"
        if (
            res.attribution
            and heatmap.is_file()
            and not any(h == "Token attribution" for h, _ in extra_sections)
        ):
            extra_sections.append(("Token attribution", _heatmap_fragment(heatmap, name, res.attribution)))

    threads = torch.get_num_threads()
    side_by_side = threads >= 2 and len(methods) >= 2
    early_teacher = ROBUST_TEACHER if robust_on and ROBUST_TEACHER in methods else None
    robust_done = None
    try:
        if side_by_side:
            from unlearnkit.pipelines.side_by_side import WORKERS, run_side_by_side

            log(f"unlearning {WORKERS} methods at a time ({max(1, threads // WORKERS)} thread each) ...")
            robust_done = run_side_by_side(
                emb,
                methods,
                work_root,
                early_teacher,
                log,
                lambda name, r, model: record(name, r.metrics, r.unlearn, model),
                threads=max(1, threads // WORKERS),
            )
        else:
            for name in methods:
                metrics, res = emb.run_method(name, work_root / name, keep_model=benchmark == "tofu")
                record(name, metrics, res, res.model)
        t_methods = time.time() - t_start - t_lab
        t0 = time.time()
        if robust_on:
            # the measured configuration's teacher when it ran, else the report's best method
            teacher = ROBUST_TEACHER if ROBUST_TEACHER in methods else best_method(emb.results, methods)
            if robust_done is None:
                robust_done = run_robust_row(emb, teacher, unlearned[teacher], work_root, log)
            robust_row, robust = robust_done
            if audit_on:
                also = {row: unlearned[row] for row in audited_rows(emb.results, teacher, robust_row)[2:]}
                extra_sections.append(
                    _audit_section(emb, teacher, unlearned[teacher], robust_row, robust, log, also=also)
                )
            del robust, robust_done
        elif audit_on:
            best = best_method(emb.results, methods)
            extra_sections.append(_best_audit_section(emb, best, unlearned[best], log))
        t_audit = time.time() - t0
    finally:
        unlearned.clear()
        shutil.rmtree(work_root, ignore_errors=True)

    results = emb.results
    generations = _generations(emb)
    notes = _notes(emb, args, methods, used, t_lab, time.time() - t_start, torch.get_num_threads())
    view = {"tofu": None, "muse": MUSE_VIEW, "wmdp": WMDP_VIEW}[benchmark]
    with atomic_dir(out, overwrite=args.overwrite) as tmp:
        write_json(tmp / "metrics.json", results)
        write_json(tmp / "generations.json", generations)
        write_report(
            tmp,
            results,
            generations,
            title=TITLES[benchmark],
            extra_sections=extra_sections,
            notes=notes,
            view=view,
        )
    print_table(
        results,
        columns=view.columns if view else TABLE_COLUMNS,
        title=f"Quickstart ({benchmark.upper()} in miniature, tiny Llama pretrained on the world)",
        console=console,  # print_table picks the columns that fit this terminal
    )
    log(f"wrote {out / 'report.html'} and {out / 'metrics.json'}")
    if side_by_side and early_teacher:
        t_methods_text = f"the methods and the robust row (side by side) {t_methods:.0f}s"
        audit_time = f", the audit {t_audit:.0f}s" if audit_on else ""
    else:
        t_methods_text = f"the methods {t_methods:.0f}s"
        what = " and ".join(w for w, on in (("the robust row", robust_on), ("the audit", audit_on)) if on)
        audit_time = f", {t_audit:.0f}s for {what}" if what else ""
    log(
        f"time: {time.time() - t_start:.0f}s wall in all on {torch.get_num_threads()} threads; the lab (the "
        f"world, the base, the target and the oracle, with their evaluation) {t_lab:.0f}s (see above what came "
        f"from the cache), {t_methods_text}{audit_time}",
        soft_wrap=True,
    )
    for line in verdict_lines(results, benchmark):
        log(line, markup=False, highlight=False, soft_wrap=True)  # one line each, whatever the width
    return 0


def verdict_lines(results: dict[str, dict], benchmark: str) -> list[str]:
    """What the terminal ends with: the report's verdict (which row is best, a tie, the rows that could
    not be chosen) and every warning of the table (a degenerate number, forget quality that cannot tell
    the target from the oracle), one line each."""
    from unlearnkit.evaluation.diagnostics import results_warnings
    from unlearnkit.report.choice import choose_best, verdict

    if benchmark == "tofu":
        lines = [verdict(choose_best(results))]
    else:
        lines = [
            f"Verdict: none is called best on the {benchmark.upper()}-like miniature (the rule reads TOFU's "
            "forget-side numbers); read each row against the oracle's in the table."
        ]
    for d in results_warnings(results):
        who = f"{d.row}: " if d.row and d.row != "every row" else ""
        lines.append(f"warning: {who}{d.message}")
    return lines


def _generations(emb: Embedded) -> list[dict]:
    """Five forget items with every row's answer: TOFU forget questions, MUSE forget-article
    continuations; WMDP has none (its metric is a choice among four, not a generation)."""
    if emb.benchmark == "tofu":
        fd = emb.details["target"]["forget"]
        # The world's fact span and wrong answers let the report score the fact itself, not template words.
        rows_by_question = {r["question"]: r for r in emb.bench.forget}
        return [
            {
                "question": fd["questions"][i],
                "answer": fd["answers"][i],
                "fact": rows_by_question.get(fd["questions"][i], {}).get("fact_value"),
                "perturbed_answer": rows_by_question.get(fd["questions"][i], {}).get("perturbed_answer", []),
                "outputs": {row: emb.details[row]["forget"]["generations"][i] for row in emb.results},
            }
            for i in pick_generation_items(len(fd["questions"]))
        ]
    if emb.benchmark == "muse":
        rows = emb.bench.extra["verbmem"]
        return [
            {
                "question": rows[i]["prompt"],
                "answer": emb.details["target"]["verbmem"]["references"][i],
                "outputs": {row: emb.details[row]["verbmem"]["outputs"][i] for row in emb.results},
            }
            for i in pick_generation_items(len(rows))
        ]
    return []


def _notes(emb: Embedded, args, methods, used: dict, t_lab: float, t_total: float, threads: int) -> list[str]:
    """What the numbers are, written from the settings actually used (never typed by hand)."""
    from unlearnkit.pipelines.embedded import TINY_FINETUNE
    from unlearnkit.train.pretrain import PRETRAIN_DEFAULTS, TINY_BASE

    bench = emb.bench
    notes = [
        f"World seed {args.seed} ({emb.world_dir.name}); total time {t_total:.0f}s on {threads} threads, "
        f"{t_lab:.0f}s of it for the world, the base and the target / oracle (cached after the first run).",
        f"Base: a tiny Llama (hidden {TINY_BASE['hidden']}, {TINY_BASE['layers']} layers) pretrained for "
        f"{PRETRAIN_DEFAULTS['epochs']:g} epochs on the world's corpus (general passages, hazardous passages, "
        "general-knowledge QA).",
    ]
    if emb.benchmark == "tofu":
        notes += [
            f"Target = the base fine-tuned on {len(bench.forget)} forget + {len(bench.retain)} retain QA; oracle = "
            f"the base fine-tuned on the retain QA only (lr {TINY_FINETUNE['lr']:g}, {TINY_FINETUNE['epochs']:g} "
            f"epochs, the weights pulled back toward the base by {TINY_FINETUNE.get('anchor_decay', 0.0):g} after "
            "every step, with the replay of the base's general passages and other-entity QA that a 1M-parameter "
            "model needs to keep what it knew). The general-knowledge questions are in no fine-tuning data.",
            "Forget quality = KS-test p-value of per-item forget truth ratios vs the retain oracle (TOFU).",
            "Model utility = harmonic mean of prob, ROUGE-L recall and truth ratio on retain, real authors and "
            "world facts (TOFU's 9 numbers)."
            if getattr(bench, "general_parts", None)
            else "Model utility = harmonic mean of prob, ROUGE-L recall and truth ratio on retain and general.",
        ]
    elif emb.benchmark == "muse":
        notes += [
            f"Target = the base fine-tuned on {len(bench.forget)} forget + {len(bench.retain)} retain articles as "
            "raw text; oracle = the base fine-tuned on the retain articles (MUSE-News in miniature).",
            f"PrivLeak is measured against the oracle's Min-40% AUC ({emb.reference.get('auc', float('nan')):.3f}).",
        ]
    else:
        notes += [
            "Target = the base itself (it learned the hazardous domain in pretraining); oracle = the base "
            "pretrained without the hazardous passages (data filtering). Accuracy by lm-eval's multiple-choice "
            "code, each choice's log-likelihood after the question (cloze); chance is 0.25.",
        ]
    for name in methods:
        cfg = used.get(name) or {}
        keys = ("lr", "epochs", "batch_size", "tau", "forget_weight", "beta", "layer", "steering_coeff")
        shown = ", ".join(
            f"{k} {cfg[k]:g}" if isinstance(cfg.get(k), float) else f"{k} {cfg[k]}" for k in keys if k in cfg
        )
        notes.append(f"{name}: {shown}.")
    notes += [
        f"{row}: the robust row. UNDO (arXiv 2506.06278): {row.split('+')[0]}'s model noised toward the "
        f"{ROBUST_NOISE_TOWARD} by alpha {ROBUST_NOISE:g}, then distilled from it; its train_seconds include the "
        "unlearning run. The audit card shows whether it survives the relearning attack."
        for row in emb.results
        if "+undo" in row
    ]
    return notes


def run_robust_row(emb: Embedded, method: str, teacher_model, work_root: Path, log, distill_settings=None):
    """``method`` made robust to relearning with UNDO (Lee et al., arXiv 2506.06278): its unlearned model
    ``teacher_model`` (the method's row, not modified) is noised toward ``ROBUST_NOISE_TOWARD`` (the base)
    by ``ROBUST_NOISE`` and distilled back (:func:`unlearnkit.train.distill.distill`) with
    ``distill_settings`` (``ROBUST_DISTILL``: a worker process is given its parent's).
    Returns ``(row name, robust model)``; the row joins the table."""
    import copy

    from unlearnkit.models import load_model
    from unlearnkit.train.distill import distill

    row = f"{method}+undo{ROBUST_NOISE:g}"
    log(
        f"making {method} robust to relearning: UNDO at alpha {ROBUST_NOISE:g} toward the {ROBUST_NOISE_TOWARD} "
        "(noise, then distill) ..."
    )
    t0 = time.time()
    _, tok = emb.load_target()
    work = work_root / f"{row}.work"
    teacher = copy.deepcopy(teacher_model)  # distill consumes its teacher; the plain model is audited too
    overrides = {**(distill_settings or ROBUST_DISTILL), "seed": emb.seed}
    base = (lambda: load_model(str(emb.base_dir))) if ROBUST_NOISE_TOWARD == "base" else None
    run = distill(
        teacher,
        tok,
        emb.bench,
        noise=ROBUST_NOISE,
        noise_toward=ROBUST_NOISE_TOWARD,
        base=base,
        overrides=overrides,
        work_dir=work,
        quiet=True,
    )
    student = run.model
    seconds = round(emb.results[method].get("train_seconds", 0.0) + time.time() - t0, 1)
    metrics = emb.add_row(row, student, tok, {"train_seconds": seconds})
    log(
        f"  {row} in {time.time() - t0:5.1f}s: forget ROUGE {metrics['forget_rougeL_recall']:.3f}, "
        f"utility {metrics['model_utility']:.3f}, forget quality {metrics['forget_quality']:.2g}"
    )
    return row, student


def _audit_section(
    emb: Embedded, method: str, plain, robust_row: str, robust, log, also: dict | None = None
) -> tuple[str, str]:
    """Audit card of the robust row (MIA, relearning, quantisation, paraphrases vs the oracle and the
    target), its relearning curve drawn next to the plain method's and, ``also`` (row -> model), next to
    those rows' (the verdict's best row when it is neither of the two)."""
    import dataclasses

    from unlearnkit.evaluation.audit import audit_card_html, run_audit
    from unlearnkit.models import load

    also = also or {}
    log(f"auditing {', '.join([robust_row, method, *also])} ...")
    target, tok = emb.load_target()
    oracle, otok = load(str(emb.oracle_dir))
    settings = quickstart_audit_settings(emb.seed, emb.benchmark)
    roles = dict(oracle=(oracle, otok), original=(target, tok))
    audit = command_advice(run_audit(robust, tok, emb.bench, **roles, settings=settings, method=robust_row))
    # The plain method and the best row: only their own checks are new (the oracle's and the target's
    # are in the card), quantisation left to the robust row.
    plain_settings = dataclasses.replace(settings, quant_bits=())
    others = {method: ("plain", plain), **{row: ("the verdict's best", model) for row, model in also.items()}}
    audits = {
        row: run_audit(model, tok, emb.bench, settings=plain_settings, method=row)
        for row, (_, model) in others.items()
    }
    for verdict in audit.get("verdicts", []):
        log(f"  {verdict}")
    for row in also:
        for verdict in audits[row].get("verdicts", []):
            log(f"  {row}: {verdict}")
    # the headline gap, read at the curve's last step (where the calibrated attack teaches the oracle)
    gaps = {robust_row: audit.get("relearn_gap_final")}
    last = str(audit.get("relearn_final_step", ""))
    oracle_last = audit["relearn_curve"]["oracle"].get(last, {}).get("rougeL_recall")
    for row, other in audits.items():
        other_last = other["relearn_curve"]["audited"].get(last, {}).get("rougeL_recall")
        gaps[row] = None if oracle_last is None or other_last is None else other_last - oracle_last
    log(
        f"  relearn_gap_final (step {last}): "
        + ", ".join(f"{k} {v:+.2f}" for k, v in gaps.items() if v is not None)
    )
    compare = {f"{row} ({label})": audits[row] for row, (label, _) in others.items()}
    card = audit_card_html(audit, heading=False, compare=compare)
    best = f" and {', '.join(also)} (the verdict's best)" if also else ""
    return (f"Audit card: {robust_row} (robust) next to {method}{best}", card)


def _best_audit_section(emb: Embedded, row: str, model, log) -> tuple[str, str]:
    """Audit card of the verdict's best row (``--robust`` not given): MIA, relearning, quantisation,
    paraphrases and the probes, each next to the oracle and the target, with the settings of
    :func:`_audit_section`."""
    from unlearnkit.evaluation.audit import audit_card_html, run_audit
    from unlearnkit.models import load

    log(f"auditing {row} ...")
    target, tok = emb.load_target()
    oracle, otok = load(str(emb.oracle_dir))
    roles = dict(oracle=(oracle, otok), original=(target, tok))
    settings = quickstart_audit_settings(emb.seed, emb.benchmark)
    audit = command_advice(run_audit(model, tok, emb.bench, **roles, settings=settings, method=row))
    for verdict in audit.get("verdicts", []):
        log(f"  {verdict}")
    gap = audit.get("relearn_gap_final")
    if gap is not None:
        log(f"  relearn_gap_final (step {audit.get('relearn_final_step')}): {row} {gap:+.2f}")
    return (f"Audit card: {row} (the verdict's best)", audit_card_html(audit, heading=False))


def command_advice(audit: dict[str, Any]) -> dict[str, Any]:
    """``audit`` with each warning that advises a flag (``--relearn-lr`` ...) saying whose flag it is:
    the quickstart's audit settings are fixed (:func:`quickstart_audit_settings`), the advice is for
    ``unlearnkit audit`` run on models of one's own."""
    said = (
        " (these are flags of `unlearnkit audit`; the quickstart's audit is fixed, "
        "unlearnkit.pipelines.quickstart.quickstart_audit_settings)"
    )
    warnings = [
        {**w, "message": w["message"] + said} if "--" in w["message"] else w
        for w in audit.get("warnings") or []
    ]
    return {**audit, "warnings": warnings} if "warnings" in audit else audit


def quickstart_audit_settings(seed: int, benchmark: str = "tofu"):
    """The audit the quickstart runs, calibrated (``python bench/audit_all.py --calibrate``,
    bench/results/relearn_calibration.md: the attack halves the forget set by author). On the TOFU-like
    lab (version 10) lr 5e-5 for 250 steps, a token trained only while the model gives it probability
    under 0.5 (``relearn_fit_prob``), passes both bars on every one of 5 attack splits: the oracle learns
    1.00 of its trained half, the target keeps 96 % of its held-half fact recall on the worst. With plain
    cross-entropy no rate did (relearn_calibration_plain.md: 2e-5 x 250 passed on 4 of 5, the target
    keeping 86 % on the worst); 1e-3 destroys the target (halved by item: held-half fact recall about 0.96
    -> 0.16 in 20 steps, relearn_calibration_item.md). The 20-step point keeps ``relearn_gap_20``; the
    headline gap is read at 250. ``benchmark="wmdp"``: the attack relearns the agents' questions at 1e-4
    (``RELEARN_DATA_DEFAULTS``, bench/results/relearn_calibration_wmdp.md)."""
    from unlearnkit.evaluation.audit import AuditSettings
    from unlearnkit.evaluation.audit.lineage import default_row

    # what `unlearnkit audit` picks for a lab model too (the WMDP-like miniature: its own row)
    row = default_row("tiny base", benchmark)
    return AuditSettings(
        relearn_steps=row.steps,
        relearn_lr=row.lr,
        relearn_fit_prob=row.fit_prob,
        max_items=100,
        max_new_tokens=48,
        seed=seed,
    )


def _heatmap_fragment(heatmap: Path, method: str, info: dict) -> str:
    """The attribution heatmap as an inline frame (srcdoc keeps the report self-contained)."""
    import html

    page = heatmap.read_text(encoding="utf-8")
    overlap = info.get("fact_overlap")
    summary = (
        f"<p>Method <code>{html.escape(method)}</code>, tagger <code>{html.escape(str(info.get('tagger_used')))}</code>; "
        f"selected tokens inside the fact value: {overlap:.0%}.</p>"
        if isinstance(overlap, float) and overlap == overlap
        else f"<p>Method <code>{html.escape(method)}</code>.</p>"
    )
    return (
        summary
        + f'<iframe style="width:100%;height:600px;border:1px solid #ddd" srcdoc="{html.escape(page, quote=True)}"></iframe>'
    )
