"""The Conditions page: one model under two or more conditions (prompt language, shots, kind of
repetition, temperature, answer method, year), side by side with honest intervals.

- :mod:`dashboard.conditions.queries`: the cached store query;
- :mod:`dashboard.conditions.data`: the dimensions, levels, means and differences (the
  statistics themselves are :mod:`analytics.conditions`);
- :mod:`dashboard.conditions.figure`: the means and the differences, one panel per area.
"""
