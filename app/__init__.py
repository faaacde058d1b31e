"""gradtrace's web app and command line: everything around the engine."""
