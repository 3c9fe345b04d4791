"""Item-level checks: human–machine gaps, DIF, calibration, item fit."""
