"""Hand evaluator (placeholder)."""
