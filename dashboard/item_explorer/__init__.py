"""The Item explorer page: one item in full — its text, parameters, curve, who picks which
option.

- :mod:`~dashboard.item_explorer.picker`: which item the page opens (the link's ``?item=&area=``,
  else the first answered item of the opening booklet) and the picker's labels;
- :mod:`~dashboard.item_explorer.details`: the item's facts (key, a, b, c, skill, p-value, DI), its
  texts in each prompt language and INEP's reason when it was abandoned;
- :mod:`~dashboard.item_explorer.fit`: the humans' item fit (S-X²) of the item on its booklet
  form, marked when the 3PL curve misfits the candidates;
- :mod:`~dashboard.item_explorer.curves`: the characteristic curve and information figure, with the
  humans' share correct per θ bin and each model's mean θ and share right;
- :mod:`~dashboard.item_explorer.options`: the share of humans and of each model choosing each
  option.
"""
