"""The Item gaps page: where machines and humans part, item by item."""
