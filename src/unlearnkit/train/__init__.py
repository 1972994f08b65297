"""Training: the unlearning loop (HF Trainer), method steps, reference outputs, SAM, compute accounting,
fine-tuning, distillation (UNDO) and continual unlearning."""
