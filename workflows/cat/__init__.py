"""Adaptive testing work: simulations, post-hoc CATs over stored runs, live CATs of a model, their
launch, comparisons and the skill report."""
