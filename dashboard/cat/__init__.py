"""The Adaptive testing view: CAT paths, the launch form of a live CAT, the skill report, its
tables."""
