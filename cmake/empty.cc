// Placeholder translation unit for modules whose sources are in progress.
