"""The rules page (/rules/): the original Japanese page with its figures and worked examples."""
