"""Code that runs inside the sandbox (stdlib only), loaded there from source by isolation.bootstrap.

MODULES and PACKAGES are the one list of what the sandbox receives: these modules, in dependency order, and
every module of these subpackages (formats/: one module per label format).
"""

MODULES = ("framing", "wire", "channel", "landlock", "seccomp", "jobns", "containment", "candidate", "zygote", "judge", "worker")
PACKAGES = ("formats",)
