"""One screen a module: dashboard, search, doctor, setup, memory, libraries, help, the file view, and
the two modals the memory and libraries screens share (``form``, ``confirm``)."""
