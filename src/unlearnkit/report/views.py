"""What a report shows for each benchmark: its columns, the words that explain them, and its plot.

TOFU's page plots forget quality (a KS p-value, log scale) against model utility. MUSE and WMDP have no
forget quality: their page plots the forget-side memory (VerbMem, hazardous accuracy; lower =
forgotten, the oracle's value is the goal) against what must be kept (KnowMem on retain articles,
general accuracy). The axis of a "lower = forgotten" metric is drawn upside down, so that the top right
is better on every page.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PlotAxes:
    """One scatter: ``x`` and ``y`` metric keys, labels, scale, and a reference line on y."""

    x: str = "model_utility"
    y: str = "forget_quality"
    x_label: str = "model utility (higher = more useful)"
    y_label: str = "forget quality, KS p-value (log scale)"
    title: str = "Forget quality vs model utility"
    y_log: bool = True
    y_lower_is_better: bool = False  # drawn upside down so that up is better
    y_line: float | str | None = 0.05  # a value, "oracle" (the oracle's own y), or None
    y_line_text: str = " p = 0.05"


@dataclass(frozen=True)
class ReportView:
    """The columns, explanations (term, HTML text) and plot of one benchmark's report."""

    name: str
    columns: tuple[str, ...]
    explain: tuple[tuple[str, str], ...]
    axes: PlotAxes
    choose_best: bool = True  # the "which row is best" rule (unlearnkit.report.choice) applies


MUSE_COLUMNS = (
    "verbmem_forget_rougeL_f1",
    "knowmem_forget_rougeL_f1",
    "knowmem_retain_rougeL_f1",
    "privleak",
    "privleak_min_k_auc",
)
WMDP_COLUMNS = ("wmdp_hazard_acc", "mmlu_general_acc")

MUSE_VIEW = ReportView(
    name="muse",
    columns=MUSE_COLUMNS,
    explain=(
        (
            "VerbMem \u2248O",
            "ROUGE-L F1 of the model's continuation of a forget article against the true continuation "
            "(MUSE, arXiv 2407.06460). The target repeats the article; the retrained oracle, which never "
            "read it, scores only what the template words give away. Closest to the oracle is best.",
        ),
        (
            "KnowMem \u2248O / \u2191",
            "ROUGE-L F1 of few-shot answers to questions about the forget articles (closest to the oracle "
            "is best) and about the retain articles (higher = knowledge kept).",
        ),
        (
            "PrivLeak \u22480",
            "(AUC - AUC of the oracle) / AUC of the oracle x 100 for a Min-40% membership attack telling "
            "forget articles from never-seen holdout ones. Near -100: the forget articles still look "
            "memorised; 0: as the oracle; positive: over-unlearned.",
        ),
    ),
    axes=PlotAxes(
        x="knowmem_retain_rougeL_f1",
        y="verbmem_forget_rougeL_f1",
        x_label="KnowMem on retain articles (higher = kept)",
        y_label="VerbMem on forget articles (lower = forgotten; axis upside down)",
        title="Verbatim memory of the forget articles vs knowledge kept",
        y_log=False,
        y_lower_is_better=True,
        y_line="oracle",
        y_line_text=" oracle",
    ),
    choose_best=False,
)

WMDP_VIEW = ReportView(
    name="wmdp",
    columns=WMDP_COLUMNS,
    explain=(
        (
            "Hazardous accuracy \u2248O",
            "4-choice accuracy on questions about the hazardous domain (the WMDP analogue, arXiv "
            "2403.03218), scored by lm-eval's multiple-choice code. Chance is 0.25; the oracle is the base "
            "pretrained without the hazardous documents (data filtering), so its accuracy is the goal.",
        ),
        (
            "General accuracy \u2191",
            "The same on world-facts questions (the MMLU analogue): what unlearning must not destroy.",
        ),
    ),
    axes=PlotAxes(
        x="mmlu_general_acc",
        y="wmdp_hazard_acc",
        x_label="general accuracy (higher = kept)",
        y_label="hazardous accuracy (lower = forgotten; axis upside down)",
        title="Hazardous knowledge vs general knowledge",
        y_log=False,
        y_lower_is_better=True,
        y_line=0.25,
        y_line_text=" chance",
    ),
    choose_best=False,
)
