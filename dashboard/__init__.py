"""Shared pieces of the Streamlit pages: sidebar filters and URL state, cached data access,
figure helpers, the colour-blind-safe palette, downloads and small pure summaries.

Pages stay thin: they read through :mod:`dashboard.data`, compute psychometrics with
:mod:`analytics`, and draw with the helpers in :mod:`dashboard.figures`.
"""
