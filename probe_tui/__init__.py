"""Probe's terminal app (Textual). ``probe`` with no arguments runs ``probe_tui.app.run_app``."""
