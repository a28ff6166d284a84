"""Where log bytes come from.  Everything downstream sees only a `Source` (base.py).

Nothing is imported here: the console entry point forks the SSH helper (internal/ssh_helper) before anything else, and a package
that pulled in its siblings would delay that.
"""
