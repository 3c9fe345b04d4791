"""The Paper tables view: the paper's tables from the stored runs and the published results."""
