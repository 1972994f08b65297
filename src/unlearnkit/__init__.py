"""unlearnkit: make a language model forget, prove it, keep it useful."""

__version__ = "0.1.0"
