"""What every layer reads: the parameter table, value checks and small shared rules.

The one table of parameters (constraints, defaults, documentation), the
checks of a value or a list of candidates, a parameter's value as a fit
reads it, scikit-learn's private API behind one compatibility module, data
validation, classification and regression targets, the MLP's fitted
attributes, the torch version check and the version string.
"""
