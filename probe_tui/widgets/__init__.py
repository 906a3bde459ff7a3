"""Reusable widgets of the Probe app."""
