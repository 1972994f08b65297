"""Evaluation: the TOFU / closer-look core, the audit (MIA, relearning, quantisation, paraphrases)."""
