"""Full-batch L-BFGS runs: every model minimised by its own L-BFGS, fused.

The torch reference (``_fused``), the native kernel's version
(``_native``), the settings and stop reasons they share (``_rules``), the
Moré-Thuente line search (``_linesearch``) and the task a training call
drives round by round (``_task``).
"""
