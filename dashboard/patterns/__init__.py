"""The Response patterns figure (the paper's Fig. 2, *Beyond accuracy*): data, figure, caption.

Per area, one heatmap whose rows are run series × prompt language (or, expanded, one row per
repetition: a shuffle or seed of one run) and whose columns are the items sorted by IRT
difficulty b, easiest left; a cell is the share of the row's repetitions that answered the item
correctly (0–1, a fixed colour scale). Above it, the b of each item as a curve on the same x;
at the right of each row its mean l_z (SD) over the row's repetitions; on top, when the year
has candidates, the humans' share correct per item (``item_stats.p_value``); under the item
axis, a mark under each item whose 3PL curve misfits the candidates of the booklet (the human
item fit of the Item gaps page, ``dashboard.item_fit``).

Booklet rule (every page): booklets of an area hold the same items in another order, so a
model's answers are placed on any booklet of its area and year through the item ids. The
columns are the items of the sidebar's booklet when it belongs to the area, else of the booklet
the models took (most response patterns); hover positions are that booklet's question numbers.

The modules:

- :mod:`~dashboard.patterns.data`: the data, read through cached wrappers of
  :mod:`store.pattern_queries` (:func:`~dashboard.patterns.data.load_panel`);
  :func:`~dashboard.patterns.data.build_panel` is pure (frames in,
  :class:`~dashboard.patterns.data.PatternPanel` out) so tests can check it on frames they
  query themselves; :func:`~dashboard.patterns.data.panel_table` is the figure's CSV;
- :mod:`~dashboard.patterns.figure`: the figure of one panel, built in named steps;
- :mod:`~dashboard.patterns.captions`: the caption under it.
"""

