"""The Populations view: models placed among real human populations (groups, their θ distributions,
tables)."""
