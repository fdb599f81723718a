"""Code that runs inside the sandbox: standard library only, no imports from assay.

The folder is mounted read-only into each sandbox as the package ``harness``; the
trusted parent imports the same modules as ``assay.sandbox.harness``.
"""
