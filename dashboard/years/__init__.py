"""The Years page: models and humans across every ingested exam year, overall and by
difficulty band (Khayyam Challenge's accuracy by difficulty, year by year).

- :mod:`dashboard.years.queries`: the cached store queries (``store.trend_queries``);
- :mod:`dashboard.years.data`: the band rule, the means and their intervals;
- :mod:`dashboard.years.figure`: the year figure and the band figure;
- :mod:`dashboard.years.captions`: what each figure shows, in words.
"""
