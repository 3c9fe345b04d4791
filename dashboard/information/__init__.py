"""The Test information page (the paper's Fig. 4): where each area's exam measures well, and
where the models' θ fall.

- :mod:`~dashboard.information.intervals`: the three 95% intervals around a model's θ over its
  repetitions (pure pandas/numpy);
- :mod:`~dashboard.information.figure`: each area's information curve read from the store,
  and the figure (information panels above model rows sharing the θ axis) with its caption;
- :mod:`~dashboard.information.verdicts`: the verdict per model and area, as the page's
  table.
"""
