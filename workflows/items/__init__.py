"""Item-level checks of a selection: human–machine gaps, DIF, machine calibration and human item
fit."""
