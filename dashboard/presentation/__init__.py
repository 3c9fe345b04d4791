"""Presentation mode: the slide deck of the selection's figures (deck) and the process that captures
it (slides)."""
