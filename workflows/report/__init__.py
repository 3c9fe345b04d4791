"""The report of a selection: building it, capturing figures, its HTML and its exports (PDF, slides,
images)."""
