"""Project memory: identity and behavioral rules."""
