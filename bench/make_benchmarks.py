"""Assemble BENCHMARKS.md from the sections the bench scripts wrote to bench/results/*.md.

    python bench/make_benchmarks.py

The file opens with what its rows are measured on and the findings (``bench/FINDINGS.md``: one line each,
linking the section it reads), then the sections in order: quality and quality_rawtext (the miniatures
first), NOTES.md, asu, tokenunlearn, audit, robustness (TOFU-like, then WMDP-like), user_folder, sweep,
speed, gpu. A missing section is named on one line under the findings as not yet run, never filled with
numbers by hand. Each section's long provenance line (``_Produced by ..._``) is folded under a
``<details>`` summary; NOTES.md's ``{lab_version}`` is the current ``LAB_VERSION``.
"""

from __future__ import annotations

import html
import json
import re
import struct
from pathlib import Path

from _common import recipes_sha256

from unlearnkit.pipelines.embedded import LAB_VERSION

ROOT = Path(__file__).resolve().parent

SPEED_SMOLLM2 = (
    "--model smollm2-135m-instruct --batch-size 4 --steps 6 --repeats 1 --guard-methods none "
    "--only finetune,ga,'gd (ga + retain nll)','npo / cache',simnpo,idk,rmu,'asu / copy','asu / cache',"
    "'asu_kl / cache','t-npo / cache','s-npo / cache',eval --eval-items 10 --output bench/results/speed_smollm2.md"
)
ORDER = [
    ("quality", "python bench/quality.py"),
    # the same script's raw-text miniatures when measured apart (another process; one cache)
    ("quality_rawtext", "python bench/quality.py --benchmarks muse,wmdp --result-name quality_rawtext"),
    ("real", "python bench/real.py"),  # SmolLM2-135M-Instruct on real TOFU authors (issue 58)
    ("asu", "python bench/asu_sweep.py"),
    ("tokenunlearn", "python bench/token_ablation.py"),
    ("audit", "python bench/audit_all.py"),
    ("robustness", "python bench/robustness.py --benchmarks tofu"),
    ("robustness_wmdp", "python bench/robustness.py --benchmarks wmdp"),
    ("user_folder", "python bench/user_folder.py"),
    ("sweep", "python bench/sweep.py"),
    ("speed", "python bench/speed.py"),
    # every method's step and peak memory on SmolLM2-135M-Instruct (issue 58 item 6)
    ("speed_smollm2", f"python bench/speed.py {SPEED_SMOLLM2}"),
    ("eval_speed", "python bench/eval_speed.py"),  # evaluation, old code vs new, SmolLM2 and the lab
    ("teacher", "python bench/teacher.py"),  # ASU's teacher temperature per model
    ("gpu", "python bench/gpu_check.py"),  # on a CUDA machine only; listed as not yet run until then
]
NOTES = ROOT / "NOTES.md"
REAL_SECTION = "real"  # the lab on a real pretrained model: its rows do not come from the embedded one
# Sections with rows measured on a real pretrained model (SmolLM2-135M-Instruct), by how the opening names them
REAL_MODEL_SECTIONS = {
    REAL_SECTION: "the real lab's section",
    "eval_speed": "the evaluation-speed section's SmolLM2 rows",
    "teacher": "the teacher-temperature section's SmolLM2 rows",
    "speed_smollm2": "the 135M speed section",
}
FINDINGS = ROOT / "FINDINGS.md"
# The lab's base as the package ships it (bench/ship_lab.py): its weights give the model's size.
LAB_BASE = ROOT.parent / "src" / "unlearnkit" / "resources" / "lab" / "base" / "model.safetensors"
OPTIONAL = ("quality_rawtext",)  # absent when quality.py measured every miniature in one run
# Sections measured on the embedded lab: their numbers hold only for the lab version they record.
LAB_SECTIONS = (
    "quality",
    "quality_rawtext",
    "asu",
    "tokenunlearn",
    "audit",
    "robustness",
    "robustness_wmdp",
    "user_folder",
    "sweep",
)


def provenance_of(name: str) -> dict | None:
    """The provenance a section's results record (None without results)."""
    path = ROOT / "results" / f"{name}.json"
    if not path.is_file():
        return None
    return json.loads(path.read_text(encoding="utf-8")).get("provenance", {})


def lab_version_of(name: str) -> int | None:
    """The ``lab_version`` a section's results record (None when they record none)."""
    settings = (provenance_of(name) or {}).get("settings") or {}
    return settings.get("lab_version") if isinstance(settings, dict) else None


# What changed after each lab version: why a section measured on it no longer holds.
CHANGES = {
    2: "before world format 5 the perturbed answers were worded like the trained answer, so forget quality "
    "and every truth-ratio number below could not tell the target from the oracle, and the lab's target "
    "and oracle were trained differently",
    3: "before lab version 4 the WMDP-like choices carried a surface cue (a knowledge-free rule such as "
    '"the fewest tokens" scored up to 0.375 on 4 choices) and the world\'s tokenizer was trained on them, '
    "so every base, target and oracle below differs from today's",
    4: "before lab version 5 the authors had no pen names and no books in the fine-tuning data (the audit's "
    "alias and multi-hop probes, world format 7), so every target and oracle below was trained on less data",
    5: "before lab version 6 the MUSE-like articles were trained once, in one wording, with no questions "
    "(KnowMem could not separate the target from its oracle) and KnowMem's answers were whole sentences "
    "(world format 8)",
    6: "before lab version 7 the target and the oracle were fine-tuned one after the other on every thread "
    "(now side by side, half the threads each: the same recipe, other floating-point rounding)",
    7: "before lab version 8 the world's tokenizer did not read the pen names and book titles (world format "
    "9) and the lab's fine-tunes trained their replay once per epoch (now 3 times), so every base, target "
    "and oracle below differs from today's",
    8: "before lab version 9 the MUSE-like questions were trained alone only, while KnowMem asks after three "
    "in-context examples (the target's KnowMem 0.20, its own trained questions 0.25 with the examples, 1.00 "
    "without: world format 10), the world's tokenizer read other text, and the lab's fine-tunes ran 12 epochs "
    "with the replay 3 times (now 10 and 6: the oracle's world facts 0.78 -> 0.83 on seed 0), so every base, "
    "target and oracle below differs from today's",
    9: "before lab version 10 the TOFU-like target and oracle were fine-tuned 10 epochs without a pull toward "
    "the base (now 13 epochs with anchor_decay 2.5e-4: the oracle's world facts 0.771 -> 0.847 on seed 4, the "
    "target's reworded recall 0.81 -> 0.87 on seed 3), so every TOFU-like target and oracle below differs "
    "from today's",
}

# The sections a lab change leaves as they were: lab 10 changed only the TOFU-like fine-tuning recipe;
# the MUSE- and WMDP-like miniatures and the user-folder bench (its own base and recipes) train the same.
UNAFFECTED = {9: ("quality_rawtext", "user_folder")}


# The sections whose TOFU-like rows train with the swept recipes (src/unlearnkit/resources/recipes/tiny/,
# written by bench/sweep.py): their numbers hold only for the recipes they record.
TUNED_SECTIONS = ("quality", "audit", "speed")
# The recipes a result that records none was measured with: every such result was measured after the
# recipes last changed (96d639f) and before their hash was recorded.
UNRECORDED_RECIPES = "dbff05c944e64adad9abe8e0951e72de69fabe131d223d9a82a00ccee2e507ea"


def recipes_of(name: str) -> str | None:
    """The swept recipes' hash a section's results record (None without results)."""
    made = provenance_of(name)
    return None if made is None else made.get("recipes_sha256", UNRECORDED_RECIPES)


def recipes_line(name: str, command: str, current: str) -> str | None:
    """A warning above a section measured with other swept recipes than the ones that ship now."""
    measured = recipes_of(name)
    if name not in TUNED_SECTIONS or measured is None or measured == current:
        return None
    return (
        "> **Measured with other tuned recipes**: `src/unlearnkit/resources/recipes/tiny/` changed since "
        "(`python bench/sweep.py` re-tuned it), so the rows of the swept methods below are not what they "
        f"train today. Not yet re-run: `{command}`."
    )


def stale_line(name: str, command: str, current: int) -> str | None:
    """A warning above a lab section measured on another lab version than the current one."""
    measured = lab_version_of(name)
    if name not in LAB_SECTIONS or measured == current:
        return None
    since = [
        CHANGES[v]
        for v in sorted(CHANGES)
        if (measured or 0) <= v < current and not (measured and name in UNAFFECTED.get(v, ()))
    ]
    if measured and not since:  # every change since leaves what this section trains and reads as it was
        return None
    reason = "; ".join(since) or "the lab's recipes or data changed since"
    return (
        f"> **Measured on an earlier lab** (lab version {measured or 'unrecorded'}, the current one is "
        f"{current}): {reason}. Not yet re-run: `{command}`."
    )


def attack_line(name: str, command: str) -> str | None:
    """A warning above a robust-forgetting section measured with another relearning attack than
    bench/robustness.py runs now (its settings record the attack per miniature)."""
    import robustness  # bench/ is on sys.path: the attack's record and words live there

    benchmark = {section: b for b, section in robustness.NAMES.items()}.get(name)
    made = provenance_of(name)
    if benchmark is None or made is None:
        return None
    measured = robustness.attack_of(made.get("settings") or {}, benchmark)
    now = robustness.RELEARN[benchmark]
    if measured == now:
        return None
    return (
        f"> **Measured with another relearning attack** ({robustness.attack_words(benchmark, measured)}); "
        f"`bench/robustness.py` now attacks with {robustness.attack_words(benchmark, now)}, so the "
        f"relearning columns below are not what it measures today. Not yet re-run: `{command}`."
    )


def lab_parameters(path: Path = LAB_BASE) -> int | None:
    """The parameters of the lab's base (every tensor its safetensors file stores; tied weights once),
    read from the file's header; None when the package ships no lab."""
    if not path.is_file():
        return None
    with path.open("rb") as f:
        (size,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(size))
    total = 0
    for name, tensor in header.items():
        if name != "__metadata__":
            count = 1
            for dim in tensor["shape"]:
                count *= dim
            total += count
    return total


def slug(heading: str) -> str:
    """GitHub's anchor for a Markdown heading's text: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(markdown: str) -> dict[str, int]:
    """``{anchor: line index}`` of every heading of ``markdown`` (a repeated one gets -1, -2 ...)."""
    found: dict[str, int] = {}
    for i, line in enumerate(markdown.splitlines()):
        m = re.match(r"#{1,6} (.*)", line)
        if m:
            base = slug(m.group(1))
            name, n = base, 0
            while name in found:
                n += 1
                name = f"{base}-{n}"
            found[name] = i
    return found


def findings() -> list[str]:
    """The lines of bench/FINDINGS.md the file opens with (each ``- ...``)."""
    if not FINDINGS.is_file():
        return []
    return [line for line in FINDINGS.read_text(encoding="utf-8").splitlines() if line.startswith("- ")]


PRODUCED = re.compile(r"_Produced by (`[^`]*`)(?: on (\d{4}-\d{2}-\d{2}))?")


def folded(body: list[str]) -> list[str]:
    """``body`` with its provenance line (``_Produced by ...``) folded: a ``<details>`` whose summary
    names the command and the date, the line itself inside."""
    out = []
    for line in body:
        m = PRODUCED.match(line)
        if m:
            command = html.escape(m.group(1).strip("`"))
            summary = f"Produced by <code>{command}</code>" + (f" on {m.group(2)}" if m.group(2) else "")
            out += [
                f"<details><summary>{summary} (code, settings, machine)</summary>",
                "",
                line,
                "",
                "</details>",
            ]
        else:
            out.append(line)
    return out


def opening(missing: list[str]) -> list[str]:
    """What the file opens with: what every row is measured on, the findings, the sections not yet run."""
    params = lab_parameters()
    model = (
        f"the {params / 1e6:.1f}M-parameter embedded model" if params else "the embedded model"
    ) + " (the lab's tiny Llama, 2 layers, pretrained on a generated fictitious world)"
    real = [
        label for name, label in REAL_MODEL_SECTIONS.items() if (ROOT / "results" / f"{name}.md").is_file()
    ]
    if real:
        first = (
            f"**Every row but {', '.join(real)} (SmolLM2-135M-Instruct) comes from {model}** (the speed "
            "section times a random tiny Llama of its own): read those numbers as behaviour, not as paper "
            "results."
        )
    else:
        first = (
            f"**Every row so far comes from {model}**, until the lab on a real pretrained model lands (the "
            "speed section times a random tiny Llama of its own): read the numbers as behaviour, not as "
            "paper results."
        )
    lines = [first, ""]
    found = findings()
    if found:
        lines += ["## Findings", "", *found, ""]
    if missing:
        lines += ["Not yet run: " + "; ".join(missing) + ".", ""]
    return lines


def render() -> str:
    """BENCHMARKS.md as the sections in bench/results make it (a test checks the file is exactly this)."""
    parts = [
        "## How this file is made",
        "",
        "Every number below is printed by a script in `bench/` (the command is in the comment above each "
        "section); `python bench/make_benchmarks.py` assembles this file. Each section says under its title "
        "what it is: its seeds, items and world, the machine, and the code that produced it (commit and a "
        "hash of `src/`; `bench/results/<name>.json` keeps the same as `provenance`, with a hash of the swept "
        "recipes the quickstart's methods train with and, since 2026-12-06, the versions of the numeric "
        "packages: the same code gave other numbers under other versions, so rerun a section in the "
        "versions it records to compare). A section without that line predates the record; one "
        "measured on another lab, with other swept recipes than ship now, or with another relearning attack than its bench runs now says so under its title. The "
        "embedded world is tiny.",
        "",
    ]
    missing = []
    for i, (name, command) in enumerate(ORDER):
        if i == 2 and NOTES.is_file():  # the miniatures' tables first, then what the numbers say
            notes = NOTES.read_text(encoding="utf-8").rstrip().replace("{lab_version}", str(LAB_VERSION))
            parts += [notes, ""]
        path = ROOT / "results" / f"{name}.md"
        if path.is_file():
            body = folded(path.read_text(encoding="utf-8").rstrip().splitlines())
            warnings = [
                stale_line(name, command, LAB_VERSION),
                recipes_line(name, command, recipes_sha256()),
                attack_line(name, command),
            ]
            for warning in reversed([w for w in warnings if w]):  # under the section's title
                at = next((i + 1 for i, x in enumerate(body) if x.startswith("#")), 0)
                body = [*body[:at], "", warning, *body[at:]]
            parts += ["\n".join(body), ""]
        elif name not in OPTIONAL:
            missing.append(f"{name} (`{command}`)")
    text = "\n".join(["# Benchmarks", "", *opening(missing), *parts])
    dangling = [line for line in findings() if not any(f"(#{a})" in line for a in anchors(text))]
    if dangling:
        raise SystemExit(f"bench/FINDINGS.md links no section of BENCHMARKS.md: {dangling[0]}")
    return text


def main() -> None:
    (ROOT.parent / "BENCHMARKS.md").write_text(render(), encoding="utf-8")
    print(f"wrote {ROOT.parent / 'BENCHMARKS.md'}")
    import sync_docs  # bench/ is on sys.path when run as a script

    sync_docs.main()  # docs/SCALING.md quotes the same speed section


if __name__ == "__main__":
    main()
