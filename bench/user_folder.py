"""The recipe a tiny base records, tried on a folder shaped like a user's own: does the target learn its
facts, and does the base keep what it knew?

    python bench/user_folder.py                  # lab seeds 0-4
    python bench/user_folder.py --seeds 0

A user's folder has question / answer rows (forget, retain, holdout, general) and a corpus of passages,
but no ``world.json`` and no ``augment/`` (each fact in one wording). Per lab seed this script copies the
lab world's files into two such folders -- **passages**: ``corpus/general.jsonl`` only; **passages + QA**:
also ``corpus/qa.jsonl``, question / answer rows about other entities (countries, real authors; never the
evaluated general questions) -- pretrains a base on each (``unlearnkit.pretrain``, the command's code),
then fine-tunes the target (forget + retain) with ``unlearnkit.finetune`` under several recipes:

* ``recorded``: what the base's card picks for a folder without ``augment/`` (``--replay auto``: the
  corpus once per epoch; 40 epochs, the weights pulled back toward the base: ``anchor_decay``), the
  command's default;
* ``anchor_decay 0``: the same without the pull (the recipe before it);
* ``anchor_decay x0.5`` / ``x2``: a weaker and a stronger pull (the trade-off between the facts learned
  and the general knowledge kept);
* ``lab recipe``: lab version 9's recipe, lr 5e-4 for 10 epochs without the pull, which assumes each fact
  in ~4 wordings (lab 10 runs 13 epochs with a pull of 2.5e-4).

Each row: ``learned``, as the command prints it (fact recall and ROUGE-L on 100 trained questions, the
general questions before and after; kept = after / before). Writes bench/results/user_folder.md / .json.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import (  # noqa: E402
    add_seeds,
    every_seed,
    measure_seeds,
    parser,
    seed_table,
)

from unlearnkit.pipelines.embedded import TINY_FINETUNE_PLAIN  # noqa: E402

FOLDERS = {  # the folder's name: the corpus files the user has
    "passages": ("general.jsonl",),
    "passages + QA": ("general.jsonl", "qa.jsonl"),
}
# the pull the recorded recipe applies (src/unlearnkit/pipelines/embedded.py TINY_FINETUNE_PLAIN)
ANCHOR = TINY_FINETUNE_PLAIN["anchor_decay"]
SPLITS = ("forget.jsonl", "retain.jsonl", "holdout.jsonl", "general.jsonl")
RECIPES = {  # row: (folders it runs on, settings over the recorded recipe, replay repeats)
    "recorded": (tuple(FOLDERS), {}, 1),
    "anchor_decay 0": (tuple(FOLDERS), {"anchor_decay": 0.0}, 1),
    "anchor_decay x0.5": (("passages",), {"anchor_decay": ANCHOR / 2}, 1),
    "anchor_decay x2": (("passages",), {"anchor_decay": ANCHOR * 2}, 1),
    "lab recipe": (("passages",), {"lr": 5e-4, "epochs": 10.0, "anchor_decay": 0.0}, 1),
}
COLUMNS = (
    "fact_recall",
    "rougeL_recall",
    "general_base",
    "general_after",
    "general_kept",
    "general_rougeL_after",
    "lr",
    "epochs",
    "anchor_decay",
)
KEEP_BAR = 0.9  # learned.WARN_BELOW: the line the command warns under


def user_folder(world: Path, out: Path, corpus: tuple[str, ...]) -> Path:
    """``out``: the world's QA splits and the ``corpus`` files, nothing else (no world.json, no augment/)."""
    (out / "corpus").mkdir(parents=True, exist_ok=True)
    for name in SPLITS:
        shutil.copyfile(world / name, out / name)
    for name in corpus:
        shutil.copyfile(world / "corpus" / name, out / "corpus" / name)
    return out


def repeated(files: list[Path], times: int, out: Path) -> Path:
    """One JSONL file holding every row of ``files`` ``times`` times (the replay's weight per epoch)."""
    rows = [line for path in files for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    out.write_text("\n".join(rows * times) + "\n", encoding="utf-8")
    return out


def row_of(result, recipe: dict) -> dict:
    from unlearnkit.evaluation.learned import headline

    learned = result.learned
    q = learned.trained["questions"]
    general, base = learned.general or {}, learned.base_general or {}
    kept = learned.kept()  # after / before of the general questions' headline (fact recall), as the card
    return {
        "fact_recall": q.get("fact_recall"),
        "rougeL_recall": q.get("rougeL_recall"),
        "general_base": (headline(base) or (None, None))[1],
        "general_after": (headline(general) or (None, None))[1],
        "general_kept": kept[1] if kept else None,
        "general_rougeL_after": general.get("rougeL_recall"),
        "lr": result.settings.get("lr", recipe.get("lr")),
        "epochs": result.settings.get("epochs", recipe.get("epochs")),
        "anchor_decay": result.settings.get("anchor_decay", recipe.get("anchor_decay")),
        "warnings": learned.warnings(),
    }


def run_seed(args, seed: int) -> dict:
    import torch
    from transformers.utils import logging as hf_logging

    from unlearnkit import finetune, pretrain
    from unlearnkit.pipelines.embedded import cache_root, ensure_world
    from unlearnkit.pipelines.quickstart import WORLD

    hf_logging.disable_progress_bar()
    torch.set_num_threads(args.threads)
    world = ensure_world(cache_root(args.cache_dir), {**WORLD, "seed": seed})
    work = Path(".bench_work") / "user_folder" / f"seed{seed}"
    shutil.rmtree(work, ignore_errors=True)
    rows: dict[str, dict] = {}
    for folder, corpus in FOLDERS.items():
        data = user_folder(world, work / folder.replace(" ", "_").replace("+", "and"), corpus)
        base = pretrain(data, seed=seed, quiet=True)
        base_dir = base.save(work / f"base-{folder.replace(' ', '_').replace('+', 'and')}")
        replay_files = [data / "corpus" / name for name in corpus]
        for name, (folders, settings, times) in RECIPES.items():
            if folder not in folders:
                continue
            replay = (
                "auto" if times == 1 else [str(repeated(replay_files, times, work / f"replay{times}.jsonl"))]
            )
            result = finetune(str(base_dir), str(data), replay=replay, seed=seed, quiet=True, **settings)
            row = f"{folder}: {name}"
            rows[row] = row_of(result, settings)
            print(f"seed {seed} {row}: " + json.dumps({k: rows[row][k] for k in COLUMNS}), flush=True)
    return rows


def main() -> None:
    p = parser(__doc__)
    add_seeds(p, default="0,1,2,3,4")
    measure_seeds(
        "user_folder", p.parse_args(), run_seed, render, "python bench/user_folder.py", max_items=100
    )


def render(per_seed: dict[int, dict]) -> str:
    seeds = ", ".join(map(str, per_seed))
    first = next(iter(per_seed.values()))
    kept = [
        f"- {row}: general kept >= {KEEP_BAR:g} on "
        f"{sum((r.get(row) or {}).get('general_kept') is not None and r[row]['general_kept'] >= KEEP_BAR for r in per_seed.values())}"
        f" of {len(per_seed)} seeds; trained facts (fact recall) >= {KEEP_BAR:g} on "
        f"{sum((r.get(row) or {}).get('fact_recall') is not None and r[row]['fact_recall'] >= KEEP_BAR for r in per_seed.values())}"
        f" of {len(per_seed)}"
        for row in first
    ]
    return "\n".join(
        [
            "## The recipe a tiny base records, on a folder of one's own",
            "",
            "The lab world's question / answer splits as a user's folder (no world.json, no augment/: each "
            "fact in one wording), with a corpus of passages (`passages`) or of passages and question / "
            "answer rows about other entities (`passages + QA`); `unlearnkit.pretrain` on the corpus, then "
            "`unlearnkit.finetune` of the target (forget + retain) from that base, replaying its corpus. "
            "`fact_recall` / `rougeL_recall`: on 100 trained questions; `general_base` / `general_after`: fact "
            "recall on 100 general questions (never trained on) for the base and after fine-tuning, "
            "`general_kept` = after / base (what the `learned` line and its warning read), "
            "`general_rougeL_after`: their ROUGE-L after. "
            f"Each cell: mean \u00b1 sd over lab seeds {seeds}; every seed's rows are in "
            "bench/results/user_folder.json.",
            "",
            seed_table(per_seed, list(COLUMNS), head="folder: recipe"),
            "",
            "Every seed:",
            "",
            every_seed(per_seed, list(first), ["fact_recall", "general_kept"]),
            "",
            *kept,
        ]
    )


if __name__ == "__main__":
    main()
