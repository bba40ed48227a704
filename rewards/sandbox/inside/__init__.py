"""Code that runs inside the sandbox (stdlib only), loaded there from source by isolation.bootstrap.

MODULES and PACKAGES are the one list of what the sandbox receives: these modules, in dependency order, and
every module of these subpackages (formats/: one module per label format).
"""

MODULES = ("framing", "codec", "setorder", "codecs_builtin", "codecs_std", "codecs_class", "wire", "protocol",
           "channel", "landlock", "seccomp", "jobns", "containment", "mirrors", "ops", "candidate", "clock", "jobcg",
           "zygote", "proxy", "guards", "verdicts", "stdlib_patches", "session", "judge", "hygiene", "processes", "packages",
           "worker")
PACKAGES = ("formats",)
