"""One small pure function per unlearning objective, and beside it the step of each method that uses it.

A loss takes aligned per-token tensors (log-probs, logits or hidden states), token weights and
hyper-parameters, and returns a scalar loss; none holds a model, a trainer or a device. A step
(``step_npo`` in ``npo.py``) is the few lines that say which forward passes the method runs on one
paired batch and how they feed the loss: it asks its context (``unlearnkit.train.methods.StepContext``)
for the passes and ends in :func:`unlearnkit.objectives.combine.combine`, which adds the retain term.
Which method uses which step is declared in :mod:`unlearnkit.catalog`.
"""

from unlearnkit.objectives.asu import asu_loss, drop_first_answer_token
from unlearnkit.objectives.dpo import ap_loss, dpo_loss
from unlearnkit.objectives.ga import ga_loss
from unlearnkit.objectives.idk import IDK_ANSWERS, idk_answer
from unlearnkit.objectives.kl import forward_kl_loss, token_kl
from unlearnkit.objectives.me import me_loss
from unlearnkit.objectives.nll import nll_loss
from unlearnkit.objectives.npo import npo_loss
from unlearnkit.objectives.rmu import rmu_adaptive_coeff, rmu_control_vector, rmu_forget_loss, rmu_retain_loss
from unlearnkit.objectives.simnpo import simnpo_loss
from unlearnkit.objectives.undial import undial_loss
from unlearnkit.objectives.wga import wga_loss

__all__ = [
    "ap_loss",
    "dpo_loss",
    "me_loss",
    "rmu_adaptive_coeff",
    "rmu_control_vector",
    "rmu_forget_loss",
    "rmu_retain_loss",
    "simnpo_loss",
    "undial_loss",
    "IDK_ANSWERS",
    "asu_loss",
    "drop_first_answer_token",
    "forward_kl_loss",
    "ga_loss",
    "idk_answer",
    "nll_loss",
    "npo_loss",
    "token_kl",
    "wga_loss",
]
