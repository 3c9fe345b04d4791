"""The Runs view's pieces: the launch form of a model run and the run picker."""
