"""``unlearnkit audit``: evidence that the forget set's knowledge is gone, not just hidden.

Five checks, each measured on the audited model and, side by side, on the retain oracle (a model
never trained on the forget set: what "gone" looks like) and on the original model (what "known"
looks like) when they are given:

1. **Membership inference** (MUSE's PrivLeak setting, arXiv 2407.06460): ROC AUC of the LOSS,
   zlib, Min-K% and Min-K%++ scores separating forget items (members) from holdout items
   (non-members, never trained on). About 0.5 = no membership signal, which is what the oracle
   gets; far above 0.5 = the forget set is still recognisably "seen"; far below 0.5 = it was
   pushed below never-seen data, which is itself detectable.
2. **Relearning attack** (Lynch et al., arXiv 2402.16835; Hu et al., arXiv 2406.13356): a deep copy
   of the model is fine-tuned for k optimiser steps on part of the forget set, then asked the
   *other* forget questions. Knowledge that was only suppressed comes back in a few steps; a model
   that never knew the facts (the oracle) cannot recover held-out facts from the ones it is shown.
   The audited model itself is never modified and nothing is written to disk.
3. **Quantisation attack** (Zhang et al., arXiv 2410.16454): 8-bit and 4-bit round-to-nearest
   copies (:mod:`unlearnkit.evaluation.quantize`) are asked the forget questions again.
4. **Paraphrase probes**: the forget questions reworded (``paraphrased_question`` of the embedded
   world, or a probes file) are asked again; forgetting that only covers the exact wording fails.
5. **Reached another way** (the "Unlearning Mirage", arXiv 2603.11266): fact recall on the forget facts
   asked directly, paraphrased, by the author's other name (alias) and through another entity
   (multi-hop), from the folder's ``probes/`` files (the embedded world writes them); the verdict calls
   out a model whose direct recall is low while another way still reaches the fact. A folder without
   probe files skips it with the reason.

Each check ends with a verdict line with numbers next to the oracle's (and original's) values;
there is deliberately no bare pass/fail: what is "close enough to the oracle" depends on the use.

Costs: per model, two scoring passes for MIA (the holdout split is scored but generated for only
one token), one fine-tuning of a copy for ``max(relearn_steps)`` steps measured on the held-out half at
every listed step count (memory: the model, its copy and the optimiser state), ``len(quant_bits)``
quantised copies, one paraphrase pass and one generation pass per probe file of check 5, each with greedy
generation of at most ``max_new_tokens`` on at most ``max_items`` items.

The relearning curve (forget ROUGE-L, probability and, on QA rows with ``fact_value``, fact recall on
the held-out half after 0, 5, 10, 20, 50 steps by default; the per-data-kind probes are in
:mod:`unlearnkit.evaluation.probes`) also measures the half the attack trains on (``trained_*``), and is
summarised by ``relearn_gap_final``: audited minus oracle forget ROUGE-L after the curve's last step, and
``relearn_gap_fact_final``, the same in fact recall (ROUGE-L on templated answers is dominated by the name
and template words); ``relearn_gap_20`` / ``relearn_gap_fact_20`` are the same after 20 steps. Each is set
beside the gap before the attack (``relearn_gap_0``): high both times = the model never forgot; at the
oracle's level before and high after = the knowledge came back (:func:`relearn_reading`). The verdict's
verb follows the direction of the change (raises / lowers / leaves). A gap means something only if the
attack can teach and does not damage: ``relearn_calibration`` reads the oracle's fact recall on the
trained half (>= 0.8: it can teach) and the target's on the held half (>= 0.9 of its own: no damage), and
the audit warns when either fails (``warnings``), saying what to change.

Raw-text data (a MUSE-like or WMDP-like folder, ``kind`` ``text``) has no forget questions: the attack
fine-tunes on the forget passages of half the *entities* (events, agents; every token a target, each
document ended with EOS as fine-tuning does) and measures the data kind's protocol passes on the other
half (:mod:`unlearnkit.evaluation.probes`: KnowMem, VerbMem; hazardous accuracy), plus a utility pass
on every question (KnowMem retain; general accuracy) that shows damage done by the attack itself, and the
forget-side passes on the relearned entities too (``trained_*``). The summary gap is
``relearn_gap_verbmem_final`` / ``relearn_gap_hazard_final`` (``relearn_headline`` names it;
``relearn_gap_20`` is None with the reason). Membership inference scores the forget vs holdout texts
whole (:func:`text_membership_scores`); a folder without holdout texts (WMDP-like) skips it with the
reason. Quantisation re-runs the forget-side passes on every forget entity's rows; paraphrase probes do
not apply to passages and are skipped with the reason.

Where each part lives: :mod:`~unlearnkit.evaluation.audit.settings` (how hard to attack),
:mod:`~unlearnkit.evaluation.audit.run` (``run_audit``: measure every model, then the checks), one module
per check (:mod:`~unlearnkit.evaluation.audit.membership`, :mod:`~unlearnkit.evaluation.audit.relearning`,
:mod:`~unlearnkit.evaluation.audit.quantization`, :mod:`~unlearnkit.evaluation.audit.paraphrase`,
:mod:`~unlearnkit.evaluation.audit.reached`, each with its verdict), :mod:`~unlearnkit.evaluation.audit.card` (audit.json, audit.md, the HTML card) and
:mod:`~unlearnkit.evaluation.audit.common` (what the checks share). The command is
:mod:`unlearnkit.commands.audit`.
"""

from unlearnkit.evaluation.audit.card import audit_card_html, audit_markdown, write_audit
from unlearnkit.evaluation.audit.run import run_audit
from unlearnkit.evaluation.audit.settings import AuditSettings

__all__ = ["AuditSettings", "audit_card_html", "audit_markdown", "run_audit", "write_audit"]
