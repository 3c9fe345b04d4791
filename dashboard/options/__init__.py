"""The Options and traps view: which option each model and each human group chooses, key positions,
pairs of models."""
