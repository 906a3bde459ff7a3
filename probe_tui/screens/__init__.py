"""One screen a module: dashboard, search, doctor, setup, help, and the file view."""
