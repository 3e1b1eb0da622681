"""Helpers shared by the table service's casino and poker halves."""
